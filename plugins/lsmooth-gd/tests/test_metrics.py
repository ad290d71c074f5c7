"""Metrics on hand-made trajectories: censoring, the tail rate, the final summary."""

import numpy as np
import pytest
from harness_lsmooth_gd.data import Trajectory
from harness_lsmooth_gd.datasets import PowerDataset
from harness_lsmooth_gd.metrics import (
    EvalsToTolerance,
    Final,
    GradientRate,
    TailRate,
    loglog_tail_slope,
)

from harness import Skip


@pytest.fixture(scope="module")
def data():
    return PowerDataset().load(PowerDataset.Params(dim=2), 0)  # f* = 0


def _trajectory(values, stopped=-1):
    n = len(values)
    return Trajectory(
        np.asarray(values, float), np.ones(n), np.arange(1, n + 1), np.ones(n - 1), stopped
    )


def test_evals_to_tolerance_and_censoring(data):
    metric = EvalsToTolerance(EvalsToTolerance.Params(tol=1e-3))
    hit = metric.compute(data, _trajectory([1.0, 1e-2, 1e-4, 1e-5]))
    assert hit == {"evals": 3.0, "log10_evals": pytest.approx(np.log10(3)), "reached": 1.0}
    miss = metric.compute(data, _trajectory([1.0, 0.5, 0.2]))
    assert miss["evals"] == 4.0 and miss["reached"] == 0.0


def test_tail_rate_recovers_power_laws(data):
    k = np.maximum(np.arange(2001), 1)
    for rate in (-1.0, -2.0, -0.5):
        assert TailRate().compute(data, _trajectory(k**rate)) == pytest.approx(rate, abs=1e-9)
    assert TailRate().compute(data, _trajectory(np.ones(2001))) == pytest.approx(0.0, abs=1e-12)
    assert TailRate().compute(data, _trajectory(k**-2.0)) != pytest.approx(-1.0, abs=0.1)


def test_tail_rate_skips_a_run_at_round_off():
    with pytest.raises(Skip):
        loglog_tail_slope(np.zeros(100))


def test_final_summary(data):
    out = Final().compute(data, _trajectory([2.0, 1.0, 1.5], stopped=-1))
    assert out["gap"] == 1.5 and out["monotone"] == 0.0 and out["stopped"] == 0.0
    assert Final().compute(data, _trajectory([2.0, 1.0, 0.5]))["monotone"] == 1.0
    assert Final().compute(data, _trajectory([2.0, 2.0, 2.0], stopped=1))["stopped"] == 1.0


def test_gradient_rate_reads_the_running_minimum(data):
    k = np.maximum(np.arange(2001), 1)
    norms = k**-1.5 * (1 + 0.5 * (np.arange(2001) % 2))  # oscillating around k^-3/2
    run = Trajectory(np.ones(2001), norms, np.arange(1, 2002), np.ones(2000))
    assert GradientRate().compute(data, run) == pytest.approx(-3.0, abs=0.02)
    flat = Trajectory(np.ones(2001), np.full(2001, 0.1), np.arange(1, 2002), np.ones(2000))
    assert GradientRate().compute(data, flat) == pytest.approx(0.0, abs=1e-12)
