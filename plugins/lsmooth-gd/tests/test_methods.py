"""The methods: the paper's step descends where rivals stall, reduces to 1/L when l is
constant, closed form and quadrature give the same run; wrong variants fail."""

import numpy as np
import pytest
from harness_lsmooth_gd.data import Trajectory
from harness_lsmooth_gd.datasets import (
    CoshDataset,
    DigitsLogistic,
    DoubleWellDataset,
    LogBarrier,
    PowerDataset,
)
from harness_lsmooth_gd.methods import (
    L0L1GD,
    ArmijoGD,
    ClippedGD,
    ConstantGD,
    LSmoothGD,
    NormalizedGD,
    descend,
)


@pytest.fixture(scope="module")
def barrier():
    return LogBarrier().load(LogBarrier.Params(dim=5, start_grad=1e6), 11)


def _run(cls, data, **params):
    return cls().run(data, cls.Params(**params), 0)


def _monotone(run: Trajectory) -> bool:
    return run.stopped_at < 0 and bool(np.all(np.diff(run.values) <= 1e-12 * abs(run.values[:-1])))


@pytest.mark.parametrize(
    ("cls", "params"),
    [
        (PowerDataset, {"dim": 5, "start_grad": 1e6}),
        (CoshDataset, {"dim": 5}),
        (LogBarrier, {"dim": 5, "start_grad": 1e6}),
        (DoubleWellDataset, {"dim": 5, "start_grad": 1e3}),
        (DigitsLogistic, {}),
    ],
)
def test_paper_step_decreases_f_at_every_step(cls, params):
    data = cls().load(cls.Params(**params), 2)
    assert _monotone(_run(LSmoothGD, data, steps=200))
    wrong = _run(LSmoothGD, data, steps=200, ell_scale=0.02)  # l 50x too small
    assert not _monotone(wrong)


def test_rivals_stall_near_the_wall_and_the_paper_step_does_not(barrier):
    gap = {}
    for cls in (LSmoothGD, L0L1GD, ClippedGD, ConstantGD, NormalizedGD):
        gap[cls.name] = _run(cls, barrier, steps=300).values[-1] - barrier.f_star
    assert gap["gd-lsmooth"] < 1e-8
    assert min(v for k, v in gap.items() if k != "gd-lsmooth") > 1.0


def test_frozen_l_leaves_the_domain(barrier):
    run = _run(LSmoothGD, barrier, steps=50, ell_growth=False)
    assert run.stopped_at == 1
    assert np.all(run.values[1:] == run.values[0]) and np.all(run.steps == 0)


def test_closed_form_and_quadrature_give_the_same_run(barrier):
    auto = _run(LSmoothGD, barrier, steps=100)
    quad = _run(LSmoothGD, barrier, steps=100, integration="quadrature")
    assert np.allclose(auto.steps, quad.steps, rtol=1e-9)
    assert not np.allclose(auto.steps, _run(LSmoothGD, barrier, steps=100, ell_scale=1.1).steps)


def test_constant_l_gives_gd_with_one_over_l():
    data = DigitsLogistic().load(DigitsLogistic.Params(quartic=0.0), 0)
    paper, classic = _run(LSmoothGD, data, steps=30), _run(ConstantGD, data, steps=30)
    assert np.allclose(paper.values, classic.values, rtol=1e-13)
    assert not np.allclose(paper.values, _run(LSmoothGD, data, steps=30, ell_scale=0.5).values)


def test_descend_counts_one_gradient_per_step(barrier):
    run = descend(barrier, lambda g: 1e-12, 5)
    assert run.evals.tolist() == [1, 2, 3, 4, 5, 6]
    assert np.allclose(run.steps, 1e-12)


def test_armijo_counts_its_function_values(barrier):
    run = _run(ArmijoGD, barrier, steps=20)
    assert np.all(np.diff(run.evals) >= 2)  # a gradient and at least one trial value
    assert np.all(np.diff(run.values) <= 0)


def test_normalized_step_length():
    data = PowerDataset().load(PowerDataset.Params(dim=3), 0)
    run = _run(NormalizedGD, data, steps=3, step_length=0.25)
    assert np.allclose(run.steps * run.grad_norms[:-1], 0.25)
