"""harness plugin ``fair-regression``: demographic-parity regression by post-processing.

Fukuchi, "Meta Optimality for Demographic Parity Constrained Regression via
Post-Processing", ICML 2025; baselines from Chzhen et al. (NeurIPS 2020), Le Gouic et al.
(2020), Chzhen & Schreuder (2022) and fairlearn.
"""

from __future__ import annotations

from harness import hookimpl
from harness_fair_regression import claims, datasets, methods, metrics, reports


@hookimpl
def harness_datasets() -> list[type]:
    """The five datasets of the task."""
    return [datasets.SyntheticLinear, datasets.SyntheticUnequalVariance,
            datasets.CommunitiesCrime, datasets.LawSchool, datasets.Diabetes]  # fmt: skip


@hookimpl
def harness_methods() -> list[type]:
    """The base regressor, five post-processings and the adversarial baseline."""
    return [
        methods.Unconstrained,
        methods.WassersteinBarycenter,
        methods.Projection,
        methods.PartialFairness,
        methods.MetaOptimalPostProcessing,
        methods.EquipyFairWasserstein,
        methods.Adversarial,
    ]


@hookimpl
def harness_metrics() -> list[type]:
    """Accuracy, exact unfairness, and the risks of the meta-theorem (synthetic data)."""
    return [metrics.MSE, metrics.RMSE, metrics.KSUnfairness, metrics.W2Unfairness,
            metrics.SPDisparity, metrics.CostToBase, metrics.FairRisk, metrics.RegressionRisk,
            metrics.ExcessRisk, metrics.TransportRisk]  # fmt: skip


@hookimpl
def harness_reports() -> list[type]:
    """Risk-unfairness scatter, the meta-theorem's rates and the alpha trade-off."""
    return [reports.RiskUnfairness, reports.FairRiskRate, reports.TradeOff]


@hookimpl
def harness_claims() -> list[type]:
    """The papers' claims: DP by post-processing and its cost, the meta-theorem's bound and
    rates, the alpha trade-off, equipy port fidelity (``claims.py``)."""
    return list(claims.CLAIMS)
