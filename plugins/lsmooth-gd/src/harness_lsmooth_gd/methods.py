"""Methods of the 'lsmooth-gd' task."""

from harness import Method
from harness_lsmooth_gd.data import Estimate, Sample


class PredictMean(Method):
    """The sample mean.

    Source: a textbook example.
    """

    name = "predict-mean"
    task = "lsmooth-gd"

    def run(self, data: Sample, params: Method.Params, seed: int) -> Estimate:
        return Estimate(mean=float(data.y.mean()))
