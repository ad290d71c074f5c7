"""Hook implementations of the 'els-diffusion' plugin: they only return classes."""

from harness import hookimpl
from harness_els_diffusion.datasets import GaussianMean
from harness_els_diffusion.methods import PredictMean
from harness_els_diffusion.metrics import SquaredError


@hookimpl
def harness_datasets():
    return [GaussianMean]


@hookimpl
def harness_methods():
    return [PredictMean]


@hookimpl
def harness_metrics():
    return [SquaredError]
