"""The paper's claims as pre-registered hypotheses: safety, exploitation, and both at once.

Source: Müller, Schneider, Skoulakis, Viano, Cevher, "Best of Both Worlds: Regret
Minimization versus Minimax Play", ICML 2025 (arXiv 2502.11673), abstract and main theorems
(bandit feedback, comparator with full support), as reconstructed in
docs/papers/bandit-safe-regret.md §2.2-2.3 and §6.

Protocol, fixed before any evaluation (none of it tuned on the cells below):

- Configuration: the paper's reconstruction with its constant c0 = 1 (normal form:
  ``phased-aggression``, EXP3-IX learner; sequence form: ``phased-aggression-sequence-form``
  with ``test: paper``, IXOMD learner, no guard, eta_scale 1). Comparators: RPS's minimax
  (uniform, delta = 1/3); Kuhn's Nash perturbed at its zero-probability actions
  (epsilon = 0.1, delta_EFG = 0.0125). Nothing is tuned.
- Unit of replication: the seed (one cell = one seed; cells at different T or against
  different opponents are independent runs).
- Safety margin: 2 payoff units (= 1 loss unit, the phased-aggression bound of
  docs/papers/bandit-safe-regret.md §2.1 on the regret to mu_c), the same at every T and
  against every opponent; the claim holds when the upper 95% bound of the mean regret to
  mu_c is below it in *every* (opponent, T) cell (intersection-union test: p is the largest
  one-sided p-value).
- Exploitation margin: a log-log slope of the mean regret to the best fixed strategy over T
  below 0.75, midway between sqrt T (0.5; the bound is O(sqrt T log T)) and linear growth
  (1, what mu_c alone pays against an exploitable opponent). The slope is fitted on the
  per-T means; its interval is a seed-level bootstrap (seeds resampled within each T).
- Negative controls: the learner alone (EXP3 / IXOMD, alpha = 1) in the method's place for
  safety; the comparator alone (``minimax``: alpha = 0, feedback ignored) for exploitation.

:func:`tails_markdown` gives the per-seed tails (p95, maximum, running maximum) beside the
means, from the same results.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from harness import Cells, Claim, Less, Source
from harness.stats import Estimate, minimum_detectable_effect

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BothNormalForm",
    "BothSequenceForm",
    "ExploitationNormalForm",
    "ExploitationSequenceForm",
    "SafetyNormalForm",
    "SafetySequenceForm",
    "tails_markdown",
]

TASK = "bandit-safe-regret"
PAPER = Source(
    "Mueller et al., Best of Both Worlds: Regret Minimization versus Minimax Play, ICML 2025",
    "2502.11673",
    "abstract and main theorem (bandit feedback, full-support comparator); notes §2.2-2.3",
)
SAFETY_MARGIN = 2.0  # payoff units = 1 loss unit
SLOPE_MARGIN = 0.75
OPPONENTS = (
    "minimax",
    "fixed",
    "random-fixed",
    "best-response",
    "fictitious-play",
    "no-regret",
    "bait-and-switch",
)
HORIZONS = (10_000, 100_000, 1_000_000)
REG_C, REG_BEST, PEAK = "regret-vs-comparator", "regret-vs-best", "regret-vs-comparator-peak"
RESAMPLES = 2000


def _defaults(method: str) -> dict:
    """The method's params at their defaults (every param is logged, defaults included)."""
    import dataclasses

    from harness_bandit_safe_regret import methods

    for cls in (methods.PhasedAggressionBandit, methods.PhasedAggressionSequenceForm):
        if cls.name == method:
            return {f.name: getattr(cls.Params(), f.name) for f in dataclasses.fields(cls.Params)}
    return {}


def _subject_rows(rows: pd.DataFrame, method: str, params: dict) -> pd.DataFrame:
    """The rows of ``method`` run with ``params`` and every other param at its default (an
    ablation that changes another param is not the claim's configuration)."""
    keep = rows["method"].eq(method)
    wanted = {**_defaults(method), **params}
    for column in [c for c in rows.columns if c.startswith("method.")]:
        key = column[len("method.") :]
        unset = rows[column].map(_unset)
        if key in wanted:
            keep &= unset | rows[column].map(lambda v, w=wanted[key]: _same(v, w))
        else:
            keep &= unset
    return rows[keep]


def _unset(value) -> bool:
    """A param a row does not have (NaN, or its text after a round trip through strings)."""
    return (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or (str(value) in ("nan", "None", "<NA>", ""))
    )


def _cells(rows: pd.DataFrame, metric: str):
    """(opponent, T) -> per-seed values of ``metric`` (one value per seed: averaged if a
    seed appears twice)."""
    out = {}
    for (opponent, T), group in rows.groupby(["dataset.opponent", "dataset.T"]):
        out[(str(opponent), int(float(T)))] = group.groupby("seed")[metric].mean().to_numpy()
    return out


@functools.lru_cache(maxsize=512)
def _t_quantiles(df: int) -> tuple[float, float]:
    """Student t's 0.975 and 0.8 quantiles (the interval and the power of the MDE)."""
    from scipy import stats

    return float(stats.t.ppf(0.975, df)), float(stats.t.ppf(0.8, df))


def _below(values: np.ndarray, margin: float) -> Estimate:
    """Mean with its 95% t interval and the one-sided t test of mean < ``margin`` (as
    ``harness.stats.one_sample(values, margin, "less")``, without its per-call overhead)."""
    from scipy import stats

    n = values.size
    mean, se = float(values.mean()), float(values.std(ddof=1) / math.sqrt(n))
    q975, q80 = _t_quantiles(n - 1)
    if se == 0:
        p = 0.0 if mean < margin else 1.0
    else:
        p = float(stats.t.cdf((mean - margin) / se, n - 1))
    half = q975 * se
    return Estimate(mean, mean - half, mean + half, p, n, (q975 + q80) * se, f"t over {n} units")


def safety_estimate(rows: pd.DataFrame, margin: float = SAFETY_MARGIN) -> Estimate:
    """Intersection-union test that the mean regret to mu_c is below ``margin`` in every
    (opponent, T) cell: the estimate and upper bound are the largest cell mean and t bound,
    the lower bound the largest lower bound, p the largest one-sided p-value.

    :raises ValueError: no cell with two seeds.
    """
    cells = {k: v for k, v in _cells(rows, REG_C).items() if v.size >= 2}
    if not cells:
        raise ValueError("safety needs at least one (opponent, T) cell with two seeds")
    fits = {k: _below(v, margin) for k, v in cells.items()}
    worst = max(fits, key=lambda k: fits[k].high)
    e = fits[worst]
    return Estimate(
        max(f.estimate for f in fits.values()),
        max(f.low for f in fits.values()),
        e.high,
        max(f.p_value for f in fits.values()),
        int(sum(v.size for v in cells.values())),
        e.mde,
        f"intersection-union of one-sided t tests over {len(cells)} (opponent, T) cells;"
        f" worst {worst[0]} at T = {worst[1]:g}",
        extra={"worst_T": float(worst[1]), "cells": float(len(cells))},
    )


def slope_estimate(rows: pd.DataFrame, margin: float = SLOPE_MARGIN, seed: int = 0) -> Estimate:
    """Log-log OLS slope of the per-T mean regret to the best strategy, with a seed-level
    bootstrap interval (seeds resampled within each T) and the bootstrap p-value of
    slope >= ``margin``. Rows must hold a single opponent or be pooled by the caller.

    :raises ValueError: fewer than two T with two seeds, or a non-positive mean.
    """
    by_T: dict[int, list[np.ndarray]] = {}
    for (_opponent, T), values in _cells(rows, REG_BEST).items():
        by_T.setdefault(T, []).append(values)
    levels = sorted(T for T, v in by_T.items() if all(x.size >= 2 for x in v))
    if len(levels) < 2:
        raise ValueError(f"the slope needs two horizons with two seeds each, got {levels}")
    values = [np.concatenate(by_T[T]) for T in levels]
    slope, boot = slope_of_means(levels, values, seed)
    low, high = np.quantile(boot, [0.025, 0.975])
    p = float((1 + np.sum(boot >= margin)) / (1 + boot.size))
    return Estimate(
        slope,
        float(low),
        float(high),
        p,
        int(sum(v.size for v in values)),
        minimum_detectable_effect(float(boot.std(ddof=1))),
        f"log-log slope of per-T means at T = {', '.join(f'{T:g}' for T in levels)},"
        f" seed bootstrap within T ({RESAMPLES} resamples)",
    )


def slope_of_means(levels, values, seed: int = 0) -> tuple[float, np.ndarray]:
    """OLS slope of log(mean of ``values[i]``) on log(``levels[i]``), and its bootstrap
    replicates with each level's values (one per seed) resampled within the level.

    :raises ValueError: a non-positive mean.
    """
    x = np.log(np.asarray(levels, dtype=float))
    x = x - x.mean()
    means = np.asarray([v.mean() for v in values])
    if np.any(means <= 0):
        raise ValueError("a log-log slope needs a positive mean at every T")
    slope = float(x @ np.log(means) / (x @ x))
    rng = np.random.default_rng(seed)
    boot_means = np.stack(
        [v[rng.integers(0, v.size, (RESAMPLES, v.size))].mean(axis=1) for v in values], axis=1
    )  # (RESAMPLES, n_levels)
    positive = np.all(boot_means > 0, axis=1)
    return slope, np.log(boot_means[positive]) @ x / (x @ x)


def _swap(rows: pd.DataFrame, subject: str, params: dict, control: str) -> pd.DataFrame:
    """The subject's rows replaced by the control method's, relabelled as the subject."""
    others = rows[rows["method"].ne(subject) & rows["method"].ne(control)]
    swapped = rows[rows["method"].eq(control)].assign(method=subject)
    for key, value in params.items():
        swapped[f"method.{key}"] = str(value)
    import pandas as pd

    return pd.concat([others, swapped])


class _Form(Claim):
    """Shared declarations of one form (normal or sequence) of the claims."""

    task = TASK
    source = PAPER
    unit = "seed"
    game: ClassVar[str]
    game_params: ClassVar[dict]
    subject: ClassVar[str]
    subject_params: ClassVar[dict]
    learner: ClassVar[str]  # the safety control: the learner alone (alpha = 1)

    @classmethod
    def _subject(cls, opponents, horizons=HORIZONS, min_seeds=10) -> Cells:
        return Cells(
            cls.game,
            (cls.subject,),
            {**cls.game_params, "opponent": list(opponents), "T": list(horizons)},
            cls.subject_params,
            min_seeds,
        )

    @classmethod
    def _other(cls, method, opponents, horizons=HORIZONS, min_seeds=2) -> Cells:
        return Cells(
            cls.game,
            (method,),
            {**cls.game_params, "opponent": list(opponents), "T": list(horizons)},
            {},
            min_seeds,
        )

    def _mine(self, rows: pd.DataFrame, opponents) -> pd.DataFrame:
        mine = _subject_rows(rows, self.subject, self.subject_params)
        return mine[mine["dataset.opponent"].isin(opponents)]


class _Safety(_Form):
    hypothesis = Less(SAFETY_MARGIN)
    control_description = "the learner alone (alpha = 1, no comparator) in the method's place"

    def statistic(self, results: pd.DataFrame) -> Estimate:
        return safety_estimate(self._mine(results, OPPONENTS))

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        return _swap(results, self.subject, self.subject_params, self.learner)


class _Exploitation(_Form):
    hypothesis = Less(SLOPE_MARGIN)
    control_description = "the comparator alone (minimax: alpha = 0, feedback ignored)"

    def statistic(self, results: pd.DataFrame) -> Estimate:
        return slope_estimate(self._mine(results, ("fixed",)))

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        return _swap(results, self.subject, self.subject_params, "minimax")


class _Both(_Form):
    hypothesis = Less(1.0)
    control_description = "the learner alone (alpha = 1, no comparator) in the method's place"

    def statistic(self, results: pd.DataFrame) -> Estimate:
        safe = safety_estimate(self._mine(results, OPPONENTS))
        slope = slope_estimate(self._mine(results, ("fixed",)))
        scaled = [
            (safe.estimate / SAFETY_MARGIN, safe.low / SAFETY_MARGIN, safe.high / SAFETY_MARGIN),
            (slope.estimate / SLOPE_MARGIN, slope.low / SLOPE_MARGIN, slope.high / SLOPE_MARGIN),
        ]
        return Estimate(
            max(s[0] for s in scaled),
            max(s[1] for s in scaled),
            max(s[2] for s in scaled),
            max(safe.p_value, slope.p_value),
            safe.n,
            math.nan,
            "intersection-union of the safety test (regret to mu_c / 2) and the exploitation"
            " test (slope / 0.75): below 1 when both hold",
            extra={
                "safety": safe.estimate,
                "safety_high": safe.high,
                "slope": slope.estimate,
                "slope_high": slope.high,
            },
        )

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        return _swap(results, self.subject, self.subject_params, self.learner)


class _NormalForm(_Form):
    game = "rock-paper-scissors"
    game_params: ClassVar[dict] = {}
    subject = "phased-aggression"
    subject_params: ClassVar[dict] = {"c0": 1.0}
    learner = "exp3"


class _SequenceForm(_Form):
    game = "kuhn-poker"
    game_params: ClassVar[dict] = {"comparator_form": "behavioural"}
    subject = "phased-aggression-sequence-form"
    subject_params: ClassVar[dict] = {"c0": 1.0, "test": "paper"}
    learner = "ixomd"


class SafetyNormalForm(_NormalForm, _Safety):
    """Safety in normal form (RPS): the regret to mu_c stays below 2 payoff units at every
    T and against every opponent, the clairvoyant best response included.

    Source: Müller et al., ICML 2025 (arXiv 2502.11673), O(1) regret to the comparator
    under bandit feedback; docs/papers/bandit-safe-regret.md §2.2.
    """

    name = "safety-normal-form"
    statement = (
        "Bandit phased aggression (c0 = 1) on rock-paper-scissors keeps its expected regret to"
        " the minimax comparator below 2 payoff units (O(1), flat in T) against every"
        " opponent at T = 1e4 and 1e5 and against the best response and always-Rock at 1e6."
    )
    requires = (
        _NormalForm._subject(OPPONENTS),
        _NormalForm._other("exp3", OPPONENTS),
    )


class ExploitationNormalForm(_NormalForm, _Exploitation):
    """Exploitation in normal form: the regret to the best action against always-Rock grows
    sublinearly (log-log slope below 0.75).

    Source: Müller et al., ICML 2025 (arXiv 2502.11673), O~(sqrt T) regret to the best
    fixed action; docs/papers/bandit-safe-regret.md §2.2.
    """

    name = "exploitation-normal-form"
    statement = (
        "Against always-Rock, bandit phased aggression's (c0 = 1) regret to the best action"
        " grows like sqrt T up to logs: log-log slope over T = 1e4..1e6 below 0.75."
    )
    requires = (
        _NormalForm._subject(("fixed",)),
        _NormalForm._other("minimax", ("fixed",)),
    )


class BothNormalForm(_NormalForm, _Both):
    """Both halves for the one configuration (c0 = 1) in normal form.

    Source: Müller et al., ICML 2025 (arXiv 2502.11673), abstract (both guarantees at once);
    docs/papers/bandit-safe-regret.md §2.2.
    """

    name = "both-normal-form"
    statement = (
        "One configuration (c0 = 1) is both safe (regret to mu_c < 2 against every opponent)"
        " and exploiting (slope of the regret to the best < 0.75 against always-Rock)."
    )
    requires = (
        _NormalForm._subject(OPPONENTS),
        _NormalForm._other("exp3", OPPONENTS),
    )


class SafetySequenceForm(_SequenceForm, _Safety):
    """Safety in sequence form (Kuhn poker, seats alternated).

    Source: Müller et al., ICML 2025 (arXiv 2502.11673), extensive-form extension (O(1)
    regret to the comparator); docs/papers/bandit-safe-regret.md §2.3.
    """

    name = "safety-sequence-form"
    statement = (
        "Sequence-form phased aggression (paper's test, c0 = 1, IXOMD) on Kuhn poker keeps its"
        " expected regret to the perturbed Nash comparator below 2 payoff units against every"
        " opponent at T = 1e4 and 1e5 and against the best response and always-bet/call at 1e6."
    )
    requires = (
        _SequenceForm._subject(OPPONENTS),
        _SequenceForm._other("ixomd", OPPONENTS),
    )


class ExploitationSequenceForm(_SequenceForm, _Exploitation):
    """Exploitation in sequence form against always-bet/always-call.

    Source: Müller et al., ICML 2025 (arXiv 2502.11673), extensive-form extension
    (O~(sqrt T) regret to the best); docs/papers/bandit-safe-regret.md §2.3.
    """

    name = "exploitation-sequence-form"
    statement = (
        "Against always-bet/always-call, sequence-form phased aggression's (c0 = 1) regret to"
        " the best pure plan grows like sqrt T up to logs: log-log slope over T = 1e4..1e6"
        " below 0.75."
    )
    requires = (
        _SequenceForm._subject(("fixed",)),
        _SequenceForm._other("minimax", ("fixed",)),
    )


class BothSequenceForm(_SequenceForm, _Both):
    """Both halves for the one configuration (c0 = 1) in sequence form.

    Source: Müller et al., ICML 2025 (arXiv 2502.11673), extensive-form extension;
    docs/papers/bandit-safe-regret.md §2.3.
    """

    name = "both-sequence-form"
    statement = (
        "One configuration (paper's test, c0 = 1) is both safe (regret to mu_c < 2 against every"
        " opponent) and exploiting (slope < 0.75 against always-bet/call) on Kuhn poker."
    )
    requires = (
        _SequenceForm._subject(OPPONENTS),
        _SequenceForm._other("ixomd", OPPONENTS),
    )


CLAIMS = [
    SafetyNormalForm,
    ExploitationNormalForm,
    BothNormalForm,
    SafetySequenceForm,
    ExploitationSequenceForm,
    BothSequenceForm,
]


def tails_markdown(results: pd.DataFrame) -> str:
    """Per-seed tails of every claim's subject and control methods, per (game, opponent, T):
    seeds, mean [95% t CI] of Reg(mu_c), its p95 and maximum over seeds, the largest running
    maximum max_t Reg_t(mu_c), and the mean Reg(best). Payoff units."""
    ok = results[results["status"].eq("ok")] if "status" in results else results
    lines = [
        "| game | method | opponent | T | seeds | Reg(μc) mean [95% CI] | p95 | max"
        " | running max | Reg(best) mean |",
        "|" + " --- |" * 10,
    ]
    specs = [
        (_NormalForm, _NormalForm.subject, _NormalForm.subject_params),
        (_NormalForm, "exp3", {}),
        (_NormalForm, "minimax", {}),
        (_SequenceForm, _SequenceForm.subject, _SequenceForm.subject_params),
        (_SequenceForm, "ixomd", {}),
        (_SequenceForm, "minimax", {}),
    ]
    for form, method, params in specs:
        rows = ok[ok["dataset"].eq(form.game)]
        for key, value in form.game_params.items():
            rows = rows[rows.get(f"dataset.{key}", "").astype(str).eq(str(value))]
        rows = _subject_rows(rows, method, params)
        if rows.empty:
            continue
        order = {o: i for i, o in enumerate(OPPONENTS)}
        keys = sorted(
            rows.groupby(["dataset.opponent", "dataset.T"]).groups,
            key=lambda k: (order.get(k[0], 99), float(k[1])),
        )
        for opponent, T in keys:
            group = rows[rows["dataset.opponent"].eq(opponent) & rows["dataset.T"].eq(T)]
            reg = group.groupby("seed")[REG_C].mean().to_numpy()
            peak = group.groupby("seed")[PEAK].mean().to_numpy() if PEAK in group else reg
            best = group.groupby("seed")[REG_BEST].mean().to_numpy()
            if reg.size >= 2:
                e = _below(reg, 0.0)
                mean = f"{_n(e.estimate)} [{_n(e.low)}, {_n(e.high)}]"
            else:
                mean = _n(reg.mean())
            label = method + "".join(f", {k} = {v:g}" for k, v in params.items() if k == "c0")
            lines.append(
                f"| {form.game} | {label} | {opponent} | {int(float(T)):,} | {reg.size}"
                f" | {mean} | {_n(np.quantile(reg, 0.95))} | {_n(reg.max())}"
                f" | {_n(peak.max())} | {_n(best.mean())} |"
            )
    return "\n".join(lines) + "\n"


def _same(value, wanted) -> bool:
    """A logged param (a string) equals ``wanted``: numbers as numbers, booleans by name."""
    if isinstance(wanted, bool):
        return str(value).lower() == str(wanted).lower()
    try:
        return math.isclose(float(value), float(wanted))
    except (TypeError, ValueError):
        return str(value) == str(wanted)


def _n(x: float) -> str:
    """Three significant digits, thousands separated."""
    if not math.isfinite(x):
        return "nan"
    if abs(x) < 1e-9:
        return "0"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.3g}"
