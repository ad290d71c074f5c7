"""Metrics: regret to the comparator and to the best fixed strategy, payoff, risk, alpha.

Source: docs/papers/bandit-safe-regret.md §5. All values are in payoff units (Alice's
payoff in [-1, 1] per round; one loss unit of the paper's reconstruction is two payoff units).
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field
from pydantic.dataclasses import dataclass

from harness import Curve, Metric
from harness_bandit_safe_regret._data import GameData, PlayOutput

__all__ = [
    "CumulativePayoff",
    "ExploitationSlope",
    "FinalAlpha",
    "MaxPrefixLoss",
    "RegretVsBest",
    "RegretVsComparator",
    "RegretVsComparatorPeak",
    "thin_curve",
]

TASK = "bandit-safe-regret"


def thin_curve(values: np.ndarray, max_points: int) -> Curve:
    """Curve over rounds 1..T, at most ``max_points`` evenly spaced rounds (0 keeps all).

    The first and last rounds are always kept, so ``Curve.final`` is the value at T.
    """
    T = values.size
    if max_points <= 0 or max_points >= T:
        return Curve(values)
    index = np.unique(np.linspace(0, T - 1, max_points).round().astype(np.int64))
    return Curve(values[index], steps=index + 1)


def _alice_payoffs(output: PlayOutput, values: str) -> np.ndarray:
    """Alice's per-round payoffs, expected V(p_t, nu_t) or realised, shape (T,)."""
    return output.expected_payoff if values == "expected" else output.realised_payoff


def _regret_value(regret: np.ndarray, params: RegretParams) -> Curve | float:
    """The regret curve (thinned to ``params.max_points``) or, without a curve, its final value."""
    return thin_curve(regret, params.max_points) if params.curve else float(regret[-1])


@dataclass
class RegretParams:
    """Which per-round values a regret uses and how its curve is returned."""

    values: Literal["expected", "realised"] = "expected"
    curve: bool = True
    max_points: Annotated[int, Field(ge=0)] = 1000  # 0 keeps every round


class RegretVsComparator(Metric):
    """Reg_t(mu_c) = sum_{s <= t} [V(mu_c, nu_s) - V(p_s, nu_s)], over rounds t.

    Source: docs/papers/bandit-safe-regret.md §5; Müller et al., ICML 2025 (regret to the
    comparator, O(1) for phased aggression).

    Parameters
    ----------
    values : {"expected", "realised"}, default="expected"
        ``expected``: V against the opponent's mixed strategy nu_s (known in this simulator).
        ``realised``: the comparator's payoff against the sampled b_s minus Alice's realised
        payoff (noisier, what an observer without nu_s would compute).
    curve : bool, default=True
        Return the curve over t (its final value is the regret at T); False returns the
        regret at T only.
    max_points : int, default=1000
        Rounds kept in the curve, evenly spaced (0 keeps all T).

    Returns
    -------
    Curve or float
        Payoff units, unbounded; lower is better, 0 is the comparator's own performance.
    """

    name = "regret-vs-comparator"
    task = TASK
    higher_is_better = False
    Params = RegretParams

    def compute(self, data: GameData, output: PlayOutput) -> Curve | float:
        comparator = (
            output.comparator_payoff
            if self.params.values == "expected"
            else output.comparator_realised
        )
        gaps = comparator - _alice_payoffs(output, self.params.values)
        return _regret_value(np.cumsum(gaps), self.params)


class RegretVsBest(Metric):
    """Reg_t(best) = max_a sum_{s <= t} V(a, nu_s) - sum_{s <= t} V(p_s, nu_s), over t.

    Source: docs/papers/bandit-safe-regret.md §5 (regret to the best fixed strategy in
    hindsight; O~(sqrt T) for no-regret learners and phased aggression).

    Parameters
    ----------
    values : {"expected", "realised"}, default="expected"
        As for ``regret-vs-comparator``; ``realised`` uses the sampled b_s and Alice's
        realised payoffs.
    curve : bool, default=True
        Return the curve over t; False returns the regret at T only.
    max_points : int, default=1000
        Rounds kept in the curve (0 keeps all T).

    Returns
    -------
    Curve or float
        Payoff units; lower is better. With several seats the best fixed strategy is the
        best action of every seat.
    """

    name = "regret-vs-best"
    task = TASK
    higher_is_better = False
    Params = RegretParams

    def compute(self, data: GameData, output: PlayOutput) -> Curve | float:
        best = (
            output.best_cumulative
            if self.params.values == "expected"
            else output.best_cumulative_realised
        )
        regret = best - np.cumsum(_alice_payoffs(output, self.params.values))
        return _regret_value(regret, self.params)


@dataclass
class ValuesParams:
    """Which per-round payoffs a metric sums."""

    values: Literal["expected", "realised"] = "expected"


class CumulativePayoff(Metric):
    """C_T = sum_t V(p_t, nu_t): Alice's total expected (or realised) payoff.

    Source: docs/papers/bandit-safe-regret.md §5 (cumulative cost, sign flipped to payoff).

    Parameters
    ----------
    values : {"expected", "realised"}, default="expected"

    Returns
    -------
    float
        Payoff units, in [-T, T]; higher is better. Exploiting a weak opponent makes it grow
        linearly in T with the per-round gap as slope.
    """

    name = "cumulative-payoff"
    task = TASK
    higher_is_better = True
    Params = ValuesParams

    def compute(self, data: GameData, output: PlayOutput) -> float:
        return float(_alice_payoffs(output, self.params.values).sum())


class MaxPrefixLoss(Metric):
    """Risk: max(0, max_t -sum_{s <= t} V(p_s, nu_s)), the deepest loss at any time.

    Source: docs/papers/bandit-safe-regret.md §5 ("max-prefix loss max_t C_t").

    Parameters
    ----------
    values : {"expected", "realised"}, default="expected"

    Returns
    -------
    float
        Payoff units, >= 0; lower is safer. O(1) for phased aggression in games of value 0
        with a minimax comparator of value 0 per round.
    """

    name = "max-prefix-loss"
    task = TASK
    higher_is_better = False
    Params = ValuesParams

    def compute(self, data: GameData, output: PlayOutput) -> float:
        payoffs = _alice_payoffs(output, self.params.values)
        return float(max(0.0, -np.cumsum(payoffs).min()))


class RegretVsComparatorPeak(Metric):
    """The running maximum max(0, max_t Reg_t(mu_c)): the worst regret to the comparator at
    any round, not only at T (a per-seed tail the mean at T hides).

    Source: docs/papers/bandit-safe-regret.md §5 (risk as a maximum over prefixes);
    Müller et al., ICML 2025 (regret to the comparator).

    Parameters
    ----------
    values : {"expected", "realised"}, default="expected"

    Returns
    -------
    float
        Payoff units, >= 0; lower is safer.
    """

    name = "regret-vs-comparator-peak"
    task = TASK
    higher_is_better = False
    Params = ValuesParams

    def compute(self, data: GameData, output: PlayOutput) -> float:
        comparator = (
            output.comparator_payoff
            if self.params.values == "expected"
            else output.comparator_realised
        )
        gaps = comparator - _alice_payoffs(output, self.params.values)
        return float(max(0.0, np.cumsum(gaps).max()))


class FinalAlpha(Metric):
    """The learner's weight alpha_T in the played mixture at the horizon, and phase count.

    Source: Müller et al., ICML 2025 (phased aggression: alpha_k = min(1, 2^(k-1) / R));
    docs/papers/bandit-safe-regret.md §5 (alpha_k(t) and phase-switch times).

    Returns
    -------
    dict
        ``alpha``: alpha_T in [0, 1] (1 for pure learners, 0 for ``minimax``, s_T for
        (A,B)-Prod); ``n_switches``: number of phase switches (>= 0);
        ``first_switch``: the round of the first switch, T + 1 if none (censored).
    """

    name = "final-alpha"
    task = TASK

    def compute(self, data: GameData, output: PlayOutput) -> dict[str, float]:
        switches = output.phase_switches
        return {
            "alpha": float(output.alpha[-1]),
            "n_switches": float(switches.size),
            "first_switch": float(switches[0]) if switches.size else float(output.T + 1),
        }


@dataclass
class SlopeParams:
    """The final window of rounds over which the exploitation slope is averaged."""

    fraction: Annotated[float, Field(gt=0, le=1)] = 0.1


class ExploitationSlope(Metric):
    """Final exploitation slope: per-round gain over mu_c in the last rounds, and the best's.

    Source: docs/papers/bandit-safe-regret.md §5 ("final exploitation slope"); Müller et
    al., ICML 2025 (against an exploitable opponent phased aggression's slope tends to the
    best response's gain g).

    Parameters
    ----------
    fraction : float, default=0.1
        The window is the last ceil(fraction T) rounds, in (0, 1].

    Returns
    -------
    dict
        ``gain``: mean over the window of V(p_t, nu_t) - V(mu_c, nu_t), payoff units per
        round (expected values). ``best_gain``: the same for the best fixed strategy in
        hindsight, (best_cumulative[T] - best_cumulative[T - w]) / w minus the comparator's
        mean payoff over the window; against a stationary opponent it is the best
        response's gain g exactly (Kuhn, always-bet/call, epsilon = 0.1: 1/6 - 0.03438).
    """

    name = "exploitation-slope"
    task = TASK
    higher_is_better = True
    Params = SlopeParams

    def compute(self, data: GameData, output: PlayOutput) -> dict[str, float]:
        T = output.T
        w = max(1, int(np.ceil(self.params.fraction * T)))
        comparator = float(output.comparator_payoff[-w:].mean())
        start = output.best_cumulative[T - w - 1] if w < T else 0.0
        best = float((output.best_cumulative[-1] - start) / w)
        return {
            "gain": float(output.expected_payoff[-w:].mean()) - comparator,
            "best_gain": best - comparator,
        }
