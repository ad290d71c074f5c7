"""harness plugin ``margin-qml``: margins predict generalisation of quantum classifiers.

Source: Hur & Park, "Understanding Generalization in Quantum Machine Learning with Margins",
ICML 2025 (arXiv 2411.06919).
"""

from __future__ import annotations

from harness import hookimpl
from harness_margin_qml.claims import CLAIMS
from harness_margin_qml.datasets import ClusterPhases, DigitsBinary, TfimPhases
from harness_margin_qml.methods import (
    NQE,
    IQPEmbedding,
    QCNNGroupMethod,
    QCNNMethod,
    StronglyEntanglingGroupMethod,
    StronglyEntanglingMethod,
)
from harness_margin_qml.metrics import (
    EffectiveParameters,
    GeneralizationGap,
    MarginMean,
    MarginQ25,
    MarginQ50,
    MarginQ75,
    ParameterCount,
    TestAccuracy,
    TraceDistance,
    TrainAccuracy,
)
from harness_margin_qml.reports import MarginCorrelation


@hookimpl
def harness_datasets():
    return [ClusterPhases, TfimPhases, DigitsBinary]


@hookimpl
def harness_methods():
    return [
        QCNNMethod,
        StronglyEntanglingMethod,
        QCNNGroupMethod,
        StronglyEntanglingGroupMethod,
        IQPEmbedding,
        NQE,
    ]


@hookimpl
def harness_metrics():
    return [
        TrainAccuracy,
        TestAccuracy,
        GeneralizationGap,
        MarginMean,
        MarginQ25,
        MarginQ50,
        MarginQ75,
        ParameterCount,
        EffectiveParameters,
        TraceDistance,
    ]


@hookimpl
def harness_reports():
    return [MarginCorrelation]


@hookimpl
def harness_claims():
    return list(CLAIMS)
