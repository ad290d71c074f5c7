"""Methods of the 'ftrl-shocks' task."""

from harness import Method
from harness_ftrl_shocks.data import Estimate, Sample


class PredictMean(Method):
    """The sample mean.

    Source: a textbook example.
    """

    name = "predict-mean"
    task = "ftrl-shocks"

    def run(self, data: Sample, params: Method.Params, seed: int) -> Estimate:
        return Estimate(mean=float(data.y.mean()))
