"""Methods of the 'els-diffusion' task."""

from harness import Method
from harness_els_diffusion.data import Estimate, Sample


class PredictMean(Method):
    """The sample mean.

    Source: a textbook example.
    """

    name = "predict-mean"
    task = "els-diffusion"

    def run(self, data: Sample, params: Method.Params, seed: int) -> Estimate:
        return Estimate(mean=float(data.y.mean()))
