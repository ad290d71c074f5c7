"""Metrics of the 'lsmooth-gd' task."""

from harness import Metric
from harness_lsmooth_gd.data import Estimate, Sample


class SquaredError(Metric):
    """Squared error of the estimated mean, in squared units of ``y``; lower is better.

    Source: a textbook example.
    """

    name = "squared-error"
    task = "lsmooth-gd"
    higher_is_better = False

    def compute(self, data: Sample, output: Estimate) -> float:
        return (output.mean - data.mean) ** 2
