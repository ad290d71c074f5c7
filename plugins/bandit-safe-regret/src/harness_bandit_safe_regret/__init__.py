"""harness plugin ``bandit-safe-regret``: safe regret under bandit feedback in zero-sum games.

Müller, Schneider, Skoulakis, Viano, Cevher, "Best of Both Worlds: Regret Minimization
versus Minimax Play", ICML 2025 (arXiv 2502.11673). Hook implementations only.
"""

from __future__ import annotations

from harness import hookimpl
from harness_bandit_safe_regret import claims, datasets, methods, metrics, reports


@hookimpl
def harness_datasets():
    """The games: matrix games and Kuhn poker, each with an opponent and a horizon."""
    return [
        datasets.MatchingPennies,
        datasets.RockPaperScissors,
        datasets.WeightedRps,
        datasets.Rpsls,
        datasets.RandomSymmetric,
        datasets.KuhnPoker,
    ]


@hookimpl
def harness_methods():
    """Phased aggression (bandit and full information), (A,B)-Prod, learners, minimax."""
    return [
        methods.PhasedAggressionBandit,
        methods.PhasedAggressionFull,
        methods.AbProd,
        methods.Exp3Method,
        methods.Exp3IxMethod,
        methods.TsallisInfMethod,
        methods.HedgeMethod,
        methods.MinimaxMethod,
        methods.PhasedAggressionSequenceForm,
        methods.SequenceFormIxomd,
    ]


@hookimpl
def harness_metrics():
    """Regrets (curves), cumulative payoff, max-prefix loss, final alpha."""
    return [
        metrics.RegretVsComparator,
        metrics.RegretVsComparatorPeak,
        metrics.RegretVsBest,
        metrics.CumulativePayoff,
        metrics.MaxPrefixLoss,
        metrics.FinalAlpha,
        metrics.ExploitationSlope,
    ]


@hookimpl
def harness_reports():
    """Regret curves per opponent and the regret-vs-horizon table."""
    return [reports.RegretCurves, reports.RegretVsHorizon]


@hookimpl
def harness_claims():
    """Safety, exploitation and both at once, in normal form (RPS) and sequence form (Kuhn)."""
    return list(claims.CLAIMS)
