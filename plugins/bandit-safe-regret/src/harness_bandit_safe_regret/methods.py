"""Methods: Alice's algorithms, each simulated against the dataset's opponent for T rounds.

Source: Müller et al., ICML 2025 (arXiv 2502.11673); Even-Dar et al., MLJ 2008; Sani et al.,
NeurIPS 2014; Auer et al. 2002; Neu 2015; Zimmert & Seldin 2021 (see the class docstrings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness import Method
from harness_bandit_safe_regret.agents import ABProd, Comparator, PhasedAggression
from harness_bandit_safe_regret.data import GameData, PlayOutput
from harness_bandit_safe_regret.simulate import simulate

__all__ = [
    "AbProd",
    "Exp3IxMethod",
    "Exp3Method",
    "HedgeMethod",
    "MinimaxMethod",
    "PhasedAggressionBandit",
    "PhasedAggressionFull",
    "TsallisInfMethod",
]

TASK = "bandit-safe-regret"


@dataclass
class PhasedParams:
    """Phase-threshold scale and base learner of phased aggression."""

    c0: float = 1.0
    learner: Literal["exp3", "exp3-ix", "tsallis-inf"] = "exp3-ix"

    def __post_init__(self) -> None:
        if self.c0 <= 0:
            raise ValueError(f"c0 must be > 0, got {self.c0}")


class PhasedAggressionBandit(Method):
    """Bandit phased aggression: mix mu_c with a no-regret learner, alpha rising in phases.

    Source: Müller et al., ICML 2025 (arXiv 2502.11673), bandit algorithm, as reconstructed
    in shared/papers/bandit-safe-regret.md §2.2.

    Parameters
    ----------
    c0 : float, default=1
        R = c0 sqrt(T ln K / delta); alpha_k = min(1, 2^(k-1) / R).
    learner : {"exp3", "exp3-ix", "tsallis-inf"}, default="exp3-ix"
        Base learner, fed importance-weighted losses with the mixture probability p_t(a_t).

    Returns
    -------
    PlayOutput
        Per-round values, alpha_t and the phase-switch rounds.

    Raises
    ------
    ValueError
        If the comparator has a zero entry (delta = 0): the guarantee needs full support.

    Notes
    -----
    Constants are a reconstruction, not checked against the paper. Expected guarantees:
    O(1) regret to mu_c and O~(sqrt(T ln K / delta)) to the best fixed strategy.
    """

    name = "phased-aggression"
    task = TASK
    Params = PhasedParams

    def run(self, data: GameData, params: PhasedParams, seed: int) -> PlayOutput:
        agent = PhasedAggression(data, params.learner, "bandit", params.c0)
        return simulate(data, agent, seed)


@dataclass
class FullParams:
    """Phase-threshold scale of full-information phased aggression."""

    c0: float = 1.0

    def __post_init__(self) -> None:
        if self.c0 <= 0:
            raise ValueError(f"c0 must be > 0, got {self.c0}")


class PhasedAggressionFull(Method):
    """Full-information phased aggression with Hedge (sees the opponent's action).

    Source: Even-Dar, Kearns, Mansour, Wortman, Machine Learning 2008, "phased aggression";
    shared/papers/bandit-safe-regret.md §2.1.

    Parameters
    ----------
    c0 : float, default=1
        R = c0 sqrt(T ln K / 2) (Hedge's regret bound, loss units).

    Returns
    -------
    PlayOutput

    Notes
    -----
    A full-information baseline: invalid under bandit feedback except as a labelled
    comparison (§7).
    """

    name = "phased-aggression-full"
    task = TASK
    Params = FullParams

    def run(self, data: GameData, params: FullParams, seed: int) -> PlayOutput:
        agent = PhasedAggression(data, "hedge", "full", params.c0)
        return simulate(data, agent, seed)


class AbProd(Method):
    """(A,B)-Prod with A = Hedge and B = the comparator (full information).

    Source: Sani, Neu, Lazaric, NeurIPS 2014, (A,B)-Prod; shared/papers/bandit-safe-regret.md
    §2.1 (eta = sqrt(ln T / T) / 2, regret to B <= 2 ln 2 in loss units).

    Returns
    -------
    PlayOutput
        ``alpha`` is the weight s_t of A.
    """

    name = "ab-prod"
    task = TASK

    def run(self, data: GameData, params, seed: int) -> PlayOutput:
        return simulate(data, ABProd(data), seed)


class _Learner(Method):
    task = TASK
    learner = "exp3"
    feedback = "bandit"

    def run(self, data: GameData, params, seed: int) -> PlayOutput:
        agent = PhasedAggression(data, self.learner, self.feedback, phased=False)
        return simulate(data, agent, seed)


class Exp3Method(_Learner):
    """EXP3 alone: p proportional to exp(-eta L_hat), eta = sqrt(2 ln K / (K T)).

    Source: Auer, Cesa-Bianchi, Freund, Schapire, SIAM J. Comput. 2002;
    shared/papers/bandit-safe-regret.md §3 (pseudo-regret <= sqrt(2 T K ln K)).

    Returns
    -------
    PlayOutput
    """

    name = "exp3"
    learner = "exp3"


class Exp3IxMethod(_Learner):
    """EXP3-IX alone: estimates l / (p + gamma), gamma = eta / 2, eta = sqrt(2 ln K / (K T)).

    Source: Neu, NeurIPS 2015; shared/papers/bandit-safe-regret.md §3.

    Returns
    -------
    PlayOutput
    """

    name = "exp3-ix"
    learner = "exp3-ix"


class TsallisInfMethod(_Learner):
    """1/2-Tsallis-INF alone: q_i = 4 (eta_t (L_i - x))^-2, eta_t = 2 / sqrt(t).

    Source: Zimmert & Seldin, JMLR 2021; shared/papers/bandit-safe-regret.md §3.

    Returns
    -------
    PlayOutput
    """

    name = "tsallis-inf"
    learner = "tsallis-inf"


class HedgeMethod(_Learner):
    """Hedge alone with full information, eta = sqrt(8 ln K / T).

    Source: Freund & Schapire 1997; shared/papers/bandit-safe-regret.md §2.1.

    Returns
    -------
    PlayOutput
    """

    name = "hedge"
    learner = "hedge"
    feedback = "full"


class MinimaxMethod(Method):
    """Always play the comparator mu_c (the minimax strategy, perturbed where asked).

    Source: shared/papers/bandit-safe-regret.md §3 "Always-minimax".

    Returns
    -------
    PlayOutput
        ``alpha`` is 0 throughout.
    """

    name = "minimax"
    task = TASK

    def run(self, data: GameData, params, seed: int) -> PlayOutput:
        return simulate(data, Comparator(data), seed)
