"""Hook implementations of the ``lsmooth-gd`` plugin: they only return classes."""

from harness import hookimpl
from harness_lsmooth_gd.claims import CLAIMS
from harness_lsmooth_gd.datasets import (
    CoshDataset,
    DigitsLogistic,
    DoubleWellDataset,
    LogBarrier,
    PowerDataset,
)
from harness_lsmooth_gd.methods import (
    L0L1GD,
    ArmijoGD,
    ClippedGD,
    ConstantGD,
    LSmoothGD,
    NormalizedGD,
)
from harness_lsmooth_gd.metrics import (
    EvalsToTolerance,
    Final,
    GradientNorm,
    GradientNormPerEval,
    GradientRate,
    Suboptimality,
    SuboptimalityPerEval,
    TailRate,
)
from harness_lsmooth_gd.reports import CallsTable, ConvergenceCurves


@hookimpl
def harness_datasets():
    return [PowerDataset, CoshDataset, LogBarrier, DoubleWellDataset, DigitsLogistic]


@hookimpl
def harness_methods():
    return [LSmoothGD, ConstantGD, L0L1GD, ClippedGD, NormalizedGD, ArmijoGD]


@hookimpl
def harness_metrics():
    return [
        Suboptimality,
        SuboptimalityPerEval,
        GradientNorm,
        GradientNormPerEval,
        Final,
        EvalsToTolerance,
        TailRate,
        GradientRate,
    ]


@hookimpl
def harness_claims():
    return list(CLAIMS)


@hookimpl
def harness_reports():
    return [ConvergenceCurves, CallsTable]
