"""The paper's two guarantees as claims, each stated so that neither simple rival passes it.

Source: Müller, Schneider, Skoulakis, Viano, Cevher, "Best of Both Worlds: Regret
Minimization versus Minimax Play", ICML 2025 (arXiv 2502.11673); only its abstract could be
read: under bandit feedback and a comparator supporting every action, "O(1) regret compared
to a given comparator strategy, and O~(sqrt T) regret compared to any fixed strategy", and in
zero-sum games of value 0, normal and extensive form, "risk at most O(1) loss while being able
to gain Omega(T) from exploitable opponents". Games, horizons, constants and margins are this
plugin's reconstruction (docs/papers/bandit-safe-regret.md §2.2-2.3).

Each claim is an intersection-union test: one-sided t tests over seeds, each scaled to hold
below 1; the claim's sample is the test with the largest p-value (:func:`worst`). Margins,
fixed before the suite ran, with a pilot on seeds 1000-1002 (never in a suite; c0 = 1):

- safety: regret to mu_c below 2 payoff units in each (opponent, T) cell, the reconstruction's
  bound (1 loss unit); a seed below -2 counts as -2 (the mean only rises: conservative).
  Pilot, largest at T = 1e4: phased aggression 0.394 (RPS), 0.241 (Kuhn); EXP3-IX alone 70.2,
  IXOMD alone 609; mu_c alone 0.
- gain over mu_c per round against the fixed opponent above a quarter of the best fixed
  strategy's (RPS 1: 0.25; Kuhn 0.132: 0.033), Omega(T). Pilot at T = 1e4 / 1e5: phased
  aggression 0.45 / 0.79 (RPS), 0.000 / 0.000 (Kuhn); EXP3-IX 0.97 / 0.99, IXOMD 0.05 / 0.11.
- per-seed slope of log Reg(best) from T = 1e4 to 1e5 against the fixed opponent below 0.75,
  between sqrt T (0.5) and linear (1). Pilot: phased aggression 0.58-0.59 (RPS), 1.00 (Kuhn);
  EXP3-IX 0.43-0.49, IXOMD 0.44-0.52; mu_c alone 1.00.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from harness import Cells, Claim, Less, Rival, Select, Source
from harness.claims import Statistic, Swap, Transform, TSample

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CLAIMS", "ExploitationNormalForm", "ExploitationSequenceForm", "SafetyNormalForm",
           "SafetySequenceForm", "worst"]  # fmt: skip

TASK = "bandit-safe-regret"
PAPER = Source("Mueller et al., Best of Both Worlds: Regret Minimization versus Minimax Play,"
               " ICML 2025", "2502.11673", "abstract (read; theorems not read)")  # fmt: skip
OPPONENTS = ("minimax", "fixed", "random-fixed", "best-response", "fictitious-play",
             "no-regret", "bait-and-switch")  # fmt: skip
WORST = ("best-response", "fixed")  # the clairvoyant worst case and the exploitable one
SHORT, LONG = 10_000, 100_000
GRID = ((SHORT, OPPONENTS), (LONG, WORST))  # the (T, opponents) the claims read
SAFETY, SLOPE, SEEDS = 2.0, 0.75, {SHORT: 12, LONG: 8}
REG_C, REG_BEST = "regret-vs-comparator", "regret-vs-best"
SEQUENCE = "phased-aggression-sequence-form"
DIGITS = 9  # payoff units rounded to 1e-9: sums of 1e5 terms carry 1e-13 of round-off


def _cells(rows: pd.DataFrame, subject: Select, metric: str) -> dict:
    """``{(opponent, T): (seeds, per-seed metric rounded to DIGITS)}`` of the subject's rows."""
    mine = rows[subject.mask(rows).to_numpy()]
    opponents, horizons = mine["dataset.opponent"].to_numpy(), mine["dataset.T"].to_numpy(float)
    seeds, values, out = mine["seed"].to_numpy(), mine[metric].to_numpy(float), {}
    for opponent, T in {*zip(opponents, horizons, strict=True)}:
        here = (opponents == opponent) & (horizons == T)
        units, codes = np.unique(seeds[here], return_inverse=True)
        means = np.bincount(codes, values[here]) / np.bincount(codes)
        out[(opponent, int(T))] = (units, np.round(means, DIGITS))
    return out


def _of(cells: dict, subject: Select, opponent: str, T: int) -> tuple[np.ndarray, np.ndarray]:
    if (opponent, T) not in cells:  # a control's change of the rows may leave a cell out
        raise ValueError(f"no rows of {subject} against {opponent} at T = {T:,}")
    return cells[(opponent, T)]


def _safety(regret: dict, subject: Select):
    for T, opponents in GRID:
        for opponent in opponents:
            clipped = np.maximum(_of(regret, subject, opponent, T)[1], -SAFETY)
            yield f"Reg(mu_c) / {SAFETY:g} against {opponent} at T = {T:,}", clipped / SAFETY


def _gain(regret: dict, subject: Select, margin: float):
    for T in (SHORT, LONG):
        gain = -_of(regret, subject, "fixed", T)[1] / T
        yield f"2 - gain per round / {margin:g} against fixed at T = {T:,}", 2 - gain / margin


def _slope(best: dict, subject: Select):
    (a, short), (b, long) = (_of(best, subject, "fixed", T) for T in (SHORT, LONG))
    _, i, j = np.intersect1d(a, b, return_indices=True)  # the seeds run at both T
    short, long = short[i], long[j]
    if np.any(short <= 0) or np.any(long <= 0):
        raise ValueError("a log-log slope needs a positive regret to the best at both T")
    slope = np.log(long / short) / math.log(LONG / SHORT)
    yield f"slope of log Reg(best) against fixed / {SLOPE:g}", slope / SLOPE


def worst(parts) -> TSample:
    """The t sample, among ``(label, per-seed values)`` parts each holding below 1, with the
    largest p-value of "below 1" (ties: the one most clearly above 1): the intersection-union
    test, reproduced only when every part is, not reproduced when one part fails."""
    samples = [TSample.of(np.asarray(values, float), label) for label, values in parts]
    chosen = max(samples, key=lambda s: (s.p_less(1.0), -s.p_greater(1.0)))
    return dataclasses.replace(chosen, test=f"worst of {len(samples)} tests: {chosen.test}")


def _no_gain(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The comparator's regret to the best (Reg(best) - Reg(mu_c)) in the method's place."""
    return rows.assign(**{REG_BEST: rows[REG_BEST] - rows[REG_C]})


NOTHING_TO_EXPLOIT = Swap(
    Select(dataset_params={"opponent": "minimax", "T": SHORT}),
    Select(dataset_params={"opponent": "fixed", "T": SHORT}),
    "the minimax opponent's cells in the fixed opponent's place at T = 10,000 (nothing to gain)",
)
LINEAR = Transform(_no_gain, "the comparator's own regret to the best in the method's place")


class _Claim(Claim):
    task, source, unit, hypothesis = TASK, PAPER, "seed", Less(1.0)


def _required(game: str, game_params: dict, subject: Select) -> tuple[Cells, ...]:
    """The subject's cells: every (opponent, T) of :data:`GRID`, each with its own seeds."""
    return tuple(
        Cells(game, (subject.method,), {**game_params, "opponent": list(opponents), "T": T},
              dict(subject.method_params), SEEDS[T])
        for T, opponents in GRID
    )  # fmt: skip


class _Normal(_Claim):
    gain_margin = 0.25
    subject = Select("phased-aggression", {"c0": 1.0, "fixed_alpha": -1.0})
    requires = _required("rock-paper-scissors", {}, subject)
    rivals = (
        Rival("exp3-ix", why="the learner alone: no comparator, plain no-regret"),
        Rival("minimax", why="the comparator alone: mu_c every round, feedback ignored"),
    )


class _Sequence(_Claim):
    gain_margin = 0.033
    subject = Select(SEQUENCE, {"c0": 1.0, "test": "paper", "fixed_alpha": -1.0})
    requires = _required("kuhn-poker", {"comparator_form": "behavioural"}, subject)
    rivals = (
        Rival("ixomd", why="the learner alone: no comparator, plain no-regret"),
        Rival(SEQUENCE, {"fixed_alpha": 0.0}, why="alpha fixed at 0: mu_c, feedback unused"),
    )


def _safety_and_gain(margin: float) -> Statistic:
    return Statistic(
        lambda rows, metric, unit, subject: worst(
            [*_safety(c := _cells(rows, subject, REG_C), subject), *_gain(c, subject, margin)]
        ),
        f"worst of the safety tests (Reg(mu_c) / {SAFETY:g}) and the gain tests"
        f" (2 - gain per round / {margin:g}); each holds below 1",
    )


def _exploiting(rows: pd.DataFrame, metric: str, unit: str, subject: Select) -> TSample:
    safety = _safety(_cells(rows, subject, REG_C), subject)
    return worst([*safety, *_slope(_cells(rows, subject, REG_BEST), subject)])


EXPLOITATION = Statistic(
    _exploiting,
    f"worst of the safety tests (Reg(mu_c) / {SAFETY:g}) and the slope test (slope of log"
    f" Reg(best) / {SLOPE:g}); each holds below 1",
)


class SafetyNormalForm(_Normal):
    """Safe and gaining at once on rock-paper-scissors (mu_c uniform, delta = 1/3).

    Source: the abstract, "risk at most O(1) loss while being able to gain Omega(T) from
    exploitable opponents". mu_c alone is safe, gains nothing; the learner alone is unsafe."""

    name = "safety-normal-form"
    statement = (
        "Bandit phased aggression (c0 = 1, EXP3-IX) on rock-paper-scissors keeps its expected"
        " regret to the minimax comparator below 2 payoff units against each of seven"
        " opponents at T = 1e4 and against the best response and always-Rock at T = 1e5,"
        " while gaining more than 0.25 payoff units per round over it from always-Rock at both."
    )
    metric, kind = REG_C, _safety_and_gain(_Normal.gain_margin)
    control = NOTHING_TO_EXPLOIT


class ExploitationNormalForm(_Normal):
    """O~(sqrt T) regret to the best fixed action with O(1) regret to mu_c.

    Source: the abstract, "simultaneously guarantee O(1) regret compared to a given
    comparator strategy, and O~(sqrt T) regret compared to any fixed strategy"."""

    name = "exploitation-normal-form"
    statement = (
        "Against always-Rock, bandit phased aggression's (c0 = 1) regret to the best action"
        " grows like sqrt T up to logs (log-log slope from T = 1e4 to 1e5 below 0.75), while"
        " its regret to the minimax comparator stays below 2 payoff units against each of"
        " seven opponents at T = 1e4 and against the best response and always-Rock at 1e5."
    )
    metric, kind = REG_BEST, EXPLOITATION
    control = LINEAR


class SafetySequenceForm(_Sequence):
    """Safe and gaining at once in sequence form (Kuhn poker, seats alternated, mu_c = Nash
    perturbed at its zero-probability actions, epsilon = 0.1, delta_EFG = 0.0125).

    Source: the abstract ("both in normal- and extensive form")."""

    name = "safety-sequence-form"
    statement = (
        "Sequence-form phased aggression (paper's test, c0 = 1, IXOMD) on Kuhn poker keeps its"
        " expected regret to the perturbed Nash comparator below 2 payoff units against each"
        " of seven opponents at T = 1e4 and against the best response and always-bet/call at"
        " T = 1e5, while gaining more than 0.033 payoff units per round over it (a quarter of"
        " the best response's gain) from always-bet/call at both."
    )
    metric, kind = REG_C, _safety_and_gain(_Sequence.gain_margin)
    control = NOTHING_TO_EXPLOIT


class ExploitationSequenceForm(_Sequence):
    """O~(sqrt T) regret to the best pure plan with O(1) regret to mu_c, in sequence form.

    Source: the abstract ("both in normal- and extensive form")."""

    name = "exploitation-sequence-form"
    statement = (
        "Against always-bet/always-call, sequence-form phased aggression's (c0 = 1) regret to"
        " the best pure plan grows like sqrt T up to logs (log-log slope from T = 1e4 to 1e5"
        " below 0.75), while its regret to the perturbed Nash comparator stays below 2 payoff"
        " units against each of seven opponents at T = 1e4 and two at 1e5."
    )
    metric, kind = REG_BEST, EXPLOITATION
    control = LINEAR


CLAIMS: tuple[type[Claim], ...] = (
    SafetyNormalForm,
    ExploitationNormalForm,
    SafetySequenceForm,
    ExploitationSequenceForm,
)
