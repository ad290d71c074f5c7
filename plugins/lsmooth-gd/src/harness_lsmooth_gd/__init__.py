"""Hook implementations of the 'lsmooth-gd' plugin: they only return classes."""

from harness import hookimpl
from harness_lsmooth_gd.datasets import GaussianMean
from harness_lsmooth_gd.methods import PredictMean
from harness_lsmooth_gd.metrics import SquaredError


@hookimpl
def harness_datasets():
    return [GaussianMean]


@hookimpl
def harness_methods():
    return [PredictMean]


@hookimpl
def harness_metrics():
    return [SquaredError]
