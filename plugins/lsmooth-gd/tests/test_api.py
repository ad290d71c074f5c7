"""The README's example method runs through the public API and is no better than the
paper's step (it takes 1/l at the interval's far end, a smaller step)."""

import numpy as np
from harness_lsmooth_gd.api import Problem, Trajectory, descend
from harness_lsmooth_gd.datasets import LogBarrier
from harness_lsmooth_gd.methods import LSmoothGD

from harness import Method


class LAtTwiceTheGradient(Method):
    """GD with 1 / l(2 ||g||), the integrand's largest value. Source: an example."""

    name, task = "gd-l-at-2g", "lsmooth-gd"

    def run(self, data: Problem, params: Method.Params, seed: int) -> Trajectory:
        return descend(data, lambda g: 1.0 / float(data.ell(2.0 * g)), 200)


def test_example_method_runs_and_takes_shorter_steps():
    data = LogBarrier().load(LogBarrier.Params(dim=4, start_grad=1e4), 0)
    mine = LAtTwiceTheGradient().run(data, Method.Params(), 0)
    paper = LSmoothGD().run(data, LSmoothGD.Params(steps=200), 0)
    assert mine.stopped_at < 0 and np.all(np.diff(mine.values) <= 1e-12 * abs(mine.values[:-1]))
    assert mine.steps[0] < paper.steps[0]
    assert mine.values[20] > paper.values[20]
