"""harness plugin ``label-noise``: the two stages of feature learning under label noise.

Paper: Han, Huang, Zhou, Niu, Chen, Yan, Takeda, Suzuki, "On the Role of Label Noise in the
Feature Learning Process", ICML 2025 (arXiv 2505.18909).
"""

from __future__ import annotations

from harness import hookimpl
from harness_label_noise import claims, datasets, methods, metrics, reports


@hookimpl
def harness_datasets():
    """The paper's signal-noise patch model and a binary digits task."""
    return [datasets.SignalNoisePatches, datasets.DigitsBinary]


@hookimpl
def harness_methods():
    """The two-layer CNN, its early-stopped and sample-selected variants, a linear baseline."""
    return [methods.TwoLayerCNN, methods.EarlyStoppingCNN, methods.SmallLossCNN,
            methods.LinearLogistic]  # fmt: skip


@hookimpl
def harness_metrics():
    """Accuracy and coefficient curves, and the scalars the claims read."""
    return [
        metrics.TrainAccuracyClean,
        metrics.TrainAccuracyNoisy,
        metrics.TestAccuracy,
        metrics.SignalCoefficient,
        metrics.NoiseCoefficientNoisy,
        metrics.NoiseCoefficientClean,
        metrics.TestSummary,
        metrics.StageOne,
        metrics.StageTwo,
        metrics.CoefficientOrder,
        metrics.Selection,
    ]


@hookimpl
def harness_reports():
    """The paper's synthetic figure: the stages as curves over iterations."""
    return [reports.StageCurves]


@hookimpl
def harness_claims():
    """The paper's claims as pre-registered hypotheses (see ``claims``)."""
    return list(claims.CLAIMS)
