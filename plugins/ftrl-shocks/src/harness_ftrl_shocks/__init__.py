"""Hook implementations of the 'ftrl-shocks' plugin: they only return classes."""

from harness import hookimpl
from harness_ftrl_shocks import claims, datasets, methods, metrics, reports


@hookimpl
def harness_datasets():
    return [
        datasets.MatchingPennies,
        datasets.RockPaperScissors,
        datasets.Coordination,
        datasets.PrisonersDilemma,
        datasets.ClubGame,
        datasets.RandomGame,
    ]


@hookimpl
def harness_methods():
    return [methods.StochasticFTRL, methods.MeanRevertingShocks]


@hookimpl
def harness_metrics():
    return [
        metrics.Hitting,
        metrics.Returns,
        metrics.LimitSet,
        metrics.SpanMass,
        metrics.BoundaryDistance,
        metrics.BoundaryCurve,
    ]


@hookimpl
def harness_reports():
    return [reports.BoundaryOverTime]


@hookimpl
def harness_claims():
    return list(claims.CLAIMS)
