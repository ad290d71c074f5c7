"""Hook implementations of the 'equivariant-ntk' plugin: they only return classes."""

from harness import hookimpl
from harness_equivariant_ntk.datasets import GaussianMean
from harness_equivariant_ntk.methods import PredictMean
from harness_equivariant_ntk.metrics import SquaredError


@hookimpl
def harness_datasets():
    return [GaussianMean]


@hookimpl
def harness_methods():
    return [PredictMean]


@hookimpl
def harness_metrics():
    return [SquaredError]
