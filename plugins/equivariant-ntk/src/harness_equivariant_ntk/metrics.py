"""Metrics of the 'equivariant-ntk' task."""

from harness import Metric
from harness_equivariant_ntk.data import Estimate, Sample


class SquaredError(Metric):
    """Squared error of the estimated mean, in squared units of ``y``; lower is better.

    Source: a textbook example.
    """

    name = "squared-error"
    task = "equivariant-ntk"
    higher_is_better = False

    def compute(self, data: Sample, output: Estimate) -> float:
        return (output.mean - data.mean) ** 2
