"""harness plugin ``gmm-testing``: telling parallel pancakes from N(0, I_d).

Paper: Diakonikolas, Kane, Karmalkar, Lee, Pittas, "On Learning Parallel Pancakes with
Mostly Uniform Weights", ICML 2025 (arXiv 2504.15251).
"""

from __future__ import annotations

from harness import hookimpl
from harness_gmm_testing import claims, datasets, methods, metrics, reports


@hookimpl
def harness_datasets():
    """The pancakes instances and the separated control."""
    return [
        datasets.UniformPancakes,
        datasets.GaussHermitePancakes,
        datasets.MostlyUniformPancakes,
        datasets.SeparatedMixture,
    ]


@hookimpl
def harness_methods():
    """The Hermite test, the paper's tester and the baselines."""
    return [
        methods.HermiteMomentTest,
        methods.MomentTensorTest,
        methods.Mardia,
        methods.HenzeZirkler,
        methods.Energy,
        methods.ProjectionKS,
        methods.CovarianceSpectral,
    ]


@hookimpl
def harness_metrics():
    """Type-I error, power, AUC and cost."""
    return [metrics.TypeOneError, metrics.Power, metrics.AUC, metrics.SecondsPerTest]


@hookimpl
def harness_reports():
    """Power curves and the n reaching power 0.9."""
    return [reports.PowerCurves, reports.NForPower]


@hookimpl
def harness_claims():
    """The paper's hardness statement; the Hermite closed form and Henze-Zirkler at k = 8
    (exploratory)."""
    return list(claims.CLAIMS)
