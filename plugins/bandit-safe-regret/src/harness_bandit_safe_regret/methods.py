"""Methods: Alice's algorithms, each simulated against the dataset's opponent for T rounds.

Source: Müller et al., ICML 2025 (arXiv 2502.11673); Even-Dar et al., MLJ 2008; Sani et al.,
NeurIPS 2014; Auer et al. 2002; Neu 2015; Zimmert & Seldin 2021 (see the class docstrings).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field
from pydantic.dataclasses import dataclass

from harness import Method, Skip
from harness_bandit_safe_regret._agents import ABProd, Comparator, PhasedAggression
from harness_bandit_safe_regret._data import GameData, PlayOutput
from harness_bandit_safe_regret._simulate import simulate

__all__ = [
    "AbProd",
    "Exp3IxMethod",
    "Exp3Method",
    "HedgeMethod",
    "MinimaxMethod",
    "PhasedAggressionBandit",
    "PhasedAggressionFull",
    "PhasedAggressionSequenceForm",
    "SequenceFormIxomd",
    "TsallisInfMethod",
]

TASK = "bandit-safe-regret"


def _unit_or_off(value: float) -> float:
    if value != -1.0 and not 0.0 <= value <= 1.0:
        raise ValueError(f"must be in [0, 1] or -1 (off), got {value}")
    return value


def _nonnegative_or_off(value: float) -> float:
    if value != -1.0 and value < 0:
        raise ValueError(f"must be >= 0 or -1 (off), got {value}")
    return value


Scale = Annotated[float, Field(gt=0)]
FixedAlpha = Annotated[float, AfterValidator(_unit_or_off)]
"""fixed_alpha: a value in [0, 1] holds alpha there (ablation); -1 turns it off."""


@dataclass
class PhasedParams:
    """Phase-threshold scale, base learner and ablation switches of phased aggression."""

    c0: Scale = 1.0
    learner: Literal["exp3", "exp3-ix", "tsallis-inf"] = "exp3-ix"
    reset: bool = True
    fixed_alpha: FixedAlpha = -1.0


class PhasedAggressionBandit(Method):
    """Bandit phased aggression: mix mu_c with a no-regret learner, alpha rising in phases.

    Source: Müller et al., ICML 2025 (arXiv 2502.11673), bandit algorithm, as reconstructed
    in docs/papers/bandit-safe-regret.md §2.2.

    Parameters
    ----------
    c0 : float, default=1
        R = c0 sqrt(T ln K / delta); alpha_k = min(1, 2^(k-1) / R).
    learner : {"exp3", "exp3-ix", "tsallis-inf"}, default="exp3-ix"
        Base learner, fed importance-weighted losses with the mixture probability p_t(a_t).
    reset : bool, default=True
        Reset the learner at each phase switch; False is the "no reset" ablation.
    fixed_alpha : float, default=-1
        -1: phases as the paper; a value in [0, 1] keeps alpha there for ever (ablation).

    Returns
    -------
    PlayOutput
        Per-round values, alpha_t and the phase-switch rounds.

    Notes
    -----
    Constants are a reconstruction, not checked against the paper. Expected guarantees:
    O(1) regret to mu_c and O~(sqrt(T ln K / delta)) to the best fixed strategy. With a
    comparator that has a zero entry (delta = 0) R is infinite: alpha stays 0 and the
    method plays mu_c for ever, a documented failure mode (regret to the best linear in T).
    """

    name = "phased-aggression"
    task = TASK
    Params = PhasedParams

    def run(self, data: GameData, params: PhasedParams, seed: int) -> PlayOutput:
        agent = PhasedAggression(
            data,
            params.learner,
            "bandit",
            params.c0,
            reset=params.reset,
            fixed_alpha=None if params.fixed_alpha == -1.0 else params.fixed_alpha,
        )
        return simulate(data, agent, seed)


@dataclass
class FullParams:
    """Phase-threshold scale of full-information phased aggression."""

    c0: Scale = 1.0


class PhasedAggressionFull(Method):
    """Full-information phased aggression with Hedge (sees the opponent's action).

    Source: Even-Dar, Kearns, Mansour, Wortman, Machine Learning 2008, "phased aggression";
    docs/papers/bandit-safe-regret.md §2.1.

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

    Source: Sani, Neu, Lazaric, NeurIPS 2014, (A,B)-Prod; docs/papers/bandit-safe-regret.md
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
    docs/papers/bandit-safe-regret.md §3 (pseudo-regret <= sqrt(2 T K ln K)).

    Returns
    -------
    PlayOutput
    """

    name = "exp3"
    learner = "exp3"


class Exp3IxMethod(_Learner):
    """EXP3-IX alone: estimates l / (p + gamma), gamma = eta / 2, eta = sqrt(2 ln K / (K T)).

    Source: Neu, NeurIPS 2015; docs/papers/bandit-safe-regret.md §3.

    Returns
    -------
    PlayOutput
    """

    name = "exp3-ix"
    learner = "exp3-ix"


class TsallisInfMethod(_Learner):
    """1/2-Tsallis-INF alone: q_i = 4 (eta_t (L_i - x))^-2, eta_t = 2 / sqrt(t).

    Source: Zimmert & Seldin, JMLR 2021; docs/papers/bandit-safe-regret.md §3.

    Returns
    -------
    PlayOutput
    """

    name = "tsallis-inf"
    learner = "tsallis-inf"


class HedgeMethod(_Learner):
    """Hedge alone with full information, eta = sqrt(8 ln K / T).

    Source: Freund & Schapire 1997; docs/papers/bandit-safe-regret.md §2.1.

    Returns
    -------
    PlayOutput
    """

    name = "hedge"
    learner = "hedge"
    feedback = "full"


class MinimaxMethod(Method):
    """Always play the comparator mu_c (the minimax strategy, perturbed where asked).

    Source: docs/papers/bandit-safe-regret.md §3 "Always-minimax".

    Returns
    -------
    PlayOutput
        ``alpha`` is 0 throughout.
    """

    name = "minimax"
    task = TASK

    def run(self, data: GameData, params, seed: int) -> PlayOutput:
        return simulate(data, Comparator(data), seed)


@dataclass
class SequenceFormParams:
    """Phase test, phase scale, budget guard, learner rate and ablation switches of
    sequence-form phased aggression (defaults: the paper's reconstruction, c0 = 1; the
    certified test, the guard and eta_scale are this benchmark's labelled variants)."""

    c0: Scale = 1.0
    test: Literal["certified", "paper"] = "paper"
    guard: Annotated[float, AfterValidator(_nonnegative_or_off)] = -1.0  # loss units
    eta_scale: Scale = 1.0
    confidence: Annotated[float, Field(gt=0, lt=1)] = 0.01
    reset: bool = True
    fixed_alpha: FixedAlpha = -1.0


def _sequence_form_data(data: GameData, name: str):
    """The data's sequence form, or Skip where the method does not apply."""
    extensive = getattr(data, "extensive", None)
    if extensive is None:
        raise Skip(f"{name} needs an extensive-form game (kuhn-poker); '{data.game.name}' is not")
    if extensive.comparator_form != "behavioural":
        raise Skip(
            f"{name} needs comparator_form: behavioural so that its comparator is the dataset's"
        )
    return extensive


class PhasedAggressionSequenceForm(Method):
    """Bandit phased aggression over the sequence form with an IXOMD learner (Kuhn poker).

    Source: Müller et al., ICML 2025 (arXiv 2502.11673), extensive-form phased aggression, as
    reconstructed in docs/papers/bandit-safe-regret.md §2.3; Kozuno et al., NeurIPS 2021
    (IXOMD learner with own-reach importance weights). The certified phase test and the
    budget guard are this benchmark's additions, derived in
    :mod:`harness_bandit_safe_regret._efg_fast` (not in the paper notes).

    Parameters
    ----------
    c0 : float, default=1
        R = c0 sqrt(T D / delta_EFG), D = summed dilated-entropy diameters (Kuhn: 12 ln 2),
        delta_EFG = min over sequences of the comparator's reach; alpha_k = min(1, 2^(k-1) / R).
        1 is the paper's reconstruction.
    test : {"certified", "paper"}, default="paper"
        ``paper``: S_c - min over pure plans of S >= 2R. ``certified`` (this benchmark's
        variant): the phase ends when alpha_k R loss units of gain over mu_c are banked
        with probability >= 1 - confidence (Freedman with the exact predictable variance
        bound).
    guard : float, default=-1 (off)
        A budget in loss units (this benchmark's variant): alpha_t is halved (down to 0,
        i.e. mu_c) whenever the next round could take the estimated total gain over mu_c
        below -guard (1 + t / T); then the expected regret to mu_c is at most 2 guard loss
        units = 4 guard payoff units, whatever the learner.
    eta_scale : float, default=1
        Multiplies the learner's eta = sqrt(2 delta_EFG D_s / T_s) (and gamma = eta / 2);
        1 is the reconstruction's worst-case tuning.
    confidence : float, default=0.01
        Failure probability of the certified test.
    reset : bool, default=True
        Reset the learner at each phase switch; False is the "no reset" ablation.
    fixed_alpha : float, default=-1
        -1: phases. A value in [0, 1]: keep alpha there for ever, no phases (the "fixed alpha"
        ablation; the guard still applies unless -1).

    Returns
    -------
    PlayOutput
        Per-round values (payoff units), alpha_t (the mixing weight played; 0 in rounds the
        guard blocked) and the phase-switch rounds.

    Raises
    ------
    harness.Skip
        On matrix games and on Kuhn with ``comparator_form: uniform-mix`` (every opponent
        is accepted).

    Notes
    -----
    The comparator is Kuhn's Nash strategy perturbed at its zero-probability actions
    (dataset ``comparator_epsilon``); with epsilon = 0 (no full support) R is infinite and
    the method plays the comparator for ever: a documented failure mode, not an error.
    Constants are a reconstruction, not checked against the paper; the defaults are its
    values, none tuned on the cells the claims evaluate.
    """

    name = "phased-aggression-sequence-form"
    task = TASK
    Params = SequenceFormParams

    def run(self, data: GameData, params: SequenceFormParams, seed: int) -> PlayOutput:
        import dataclasses

        from harness_bandit_safe_regret._efg_fast import simulate_batch
        from harness_bandit_safe_regret._sequence_form import SequenceFormPhasedAggression

        extensive = _sequence_form_data(data, self.name)
        agent = SequenceFormPhasedAggression(
            extensive.seats,
            data.T,
            params.c0,
            reset=params.reset,
            fixed_alpha=None if params.fixed_alpha == -1.0 else params.fixed_alpha,
        )
        config = agent.fast_config(
            test="freedman" if params.test == "certified" else "paper",
            confidence=params.confidence,
            guard=params.guard,
        )
        config = dataclasses.replace(
            config,
            eta=tuple(e * params.eta_scale for e in config.eta),
            gamma=tuple(g * params.eta_scale for g in config.gamma),
        )
        return simulate_batch(data, config, [seed])[0]


class SequenceFormIxomd(Method):
    """IXOMD alone over the sequence form (the no-regret learner without the comparator).

    Source: Kozuno, Ménard, Munos, Valko, NeurIPS 2021 (IXOMD); learning rate
    eta = sqrt(2 D / (n T)) per seat (D: dilated-entropy diameter, n: number of sequences),
    gamma = eta / 2 (a reconstruction, not the paper's tuned constants).

    Returns
    -------
    PlayOutput
        ``alpha`` is 1 throughout.

    Raises
    ------
    harness.Skip
        Where ``phased-aggression-sequence-form`` skips.
    """

    name = "ixomd"
    task = TASK

    def run(self, data: GameData, params, seed: int) -> PlayOutput:
        from harness_bandit_safe_regret._efg_fast import simulate_batch
        from harness_bandit_safe_regret._sequence_form import SequenceFormPhasedAggression

        extensive = _sequence_form_data(data, self.name)
        agent = SequenceFormPhasedAggression(extensive.seats, data.T, phased=False)
        return simulate_batch(data, agent.fast_config(), [seed])[0]
