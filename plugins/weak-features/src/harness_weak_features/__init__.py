"""harness plugin ``weak-features``: learning with arbitrary discrete weak features.

Source: Sugiyama & Uchida, "A Unified Framework for Generalization Error Analysis of Learning
with Arbitrary Discrete Weak Features", ICML 2025 (PMLR 267:57249-57269).

Importing this module registers every component without importing torch, scikit-learn,
matplotlib or MLflow; those load when a component runs. Method authors: see
:mod:`harness_weak_features.api`.
"""

from __future__ import annotations

from harness import hookimpl
from harness_weak_features import claims, datasets, methods, metrics, reports

__all__ = [
    "harness_claims",
    "harness_datasets",
    "harness_methods",
    "harness_metrics",
    "harness_reports",
]


@hookimpl
def harness_datasets() -> list[type]:
    """The synthetic, affairs, anes96 and adult datasets."""
    return [datasets.Synthetic, datasets.Affairs, datasets.Anes96, datasets.Adult]


@hookimpl
def harness_methods() -> list[type]:
    """Oracle, baselines, the three WFL strategies, WFL with the true observation model and the
    emulated estimator."""
    return [
        methods.Oracle,
        methods.Naive,
        methods.DropFeature,
        methods.ModeImpute,
        methods.KnnImpute,
        methods.IterativeImpute,
        methods.HgbNative,
        methods.WflSequential,
        methods.WflIterative,
        methods.WflJoint,
        methods.WflOracleModel,
        methods.EmulatedEstimator,
    ]


@hookimpl
def harness_metrics() -> list[type]:
    """Downstream accuracy, balanced accuracy, AUC, logistic loss, WF accuracy, oracle gap and
    the paper's bound on the logistic loss."""
    return [
        metrics.Accuracy,
        metrics.BalancedAccuracy,
        metrics.Auc,
        metrics.LogisticLoss,
        metrics.WfAccuracy,
        metrics.OracleGap,
        metrics.WflBound,
    ]


@hookimpl
def harness_reports() -> list[type]:
    """Error vs estimation error, paired gains over naive, accuracy per method and weak kind."""
    return [reports.ErrorVsEpsilon, reports.PairedGain, reports.AccuracyByMethod]


@hookimpl
def harness_claims() -> list[type]:
    """The paper's experiment (error against epsilon) and its bound against the measured loss;
    exploratory: WFL against naive, and joint WFL's edge against soft sequential WFL."""
    return list(claims.CLAIMS)
