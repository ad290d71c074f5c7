"""Hook implementations of the 'ftrl-shocks' plugin: they only return classes."""

from harness import hookimpl
from harness_ftrl_shocks.datasets import GaussianMean
from harness_ftrl_shocks.methods import PredictMean
from harness_ftrl_shocks.metrics import SquaredError


@hookimpl
def harness_datasets():
    return [GaussianMean]


@hookimpl
def harness_methods():
    return [PredictMean]


@hookimpl
def harness_metrics():
    return [SquaredError]
