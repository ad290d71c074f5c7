"""Methods of the 'equivariant-ntk' task."""

from harness import Method
from harness_equivariant_ntk.data import Estimate, Sample


class PredictMean(Method):
    """The sample mean.

    Source: a textbook example.
    """

    name = "predict-mean"
    task = "equivariant-ntk"

    def run(self, data: Sample, params: Method.Params, seed: int) -> Estimate:
        return Estimate(mean=float(data.y.mean()))
