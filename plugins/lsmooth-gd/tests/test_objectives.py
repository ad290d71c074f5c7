"""Each objective's gradient, its l (||Hess f|| <= l(||grad f||)), minimum and sublevel
bounds; the l checks fail on a wrong l."""

import hashlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from harness_lsmooth_gd.datasets import (
    CoshDataset,
    DigitsLogistic,
    DoubleWellDataset,
    LogBarrier,
    PowerDataset,
    digits,
    start_at_gradient,
)
from harness_lsmooth_gd.ell import Ell
from harness_lsmooth_gd.objectives import Barrier, DoubleWell, Power

DIGITS_SHA256 = "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22"
DATASETS = {
    "power": (PowerDataset, {"dim": 4}),
    "power-p3": (PowerDataset, {"dim": 4, "p": 3.0}),
    "cosh": (CoshDataset, {"dim": 4}),
    "log-barrier": (LogBarrier, {"dim": 4}),
    "double-well": (DoubleWellDataset, {"dim": 4}),
    "digits-logistic": (DigitsLogistic, {}),
}


@pytest.fixture(scope="module", params=list(DATASETS))
def problem(request):
    cls, params = DATASETS[request.param]
    return cls().load(cls.Params(**params), 7)


def _points(problem, n=24):
    """Points on rays from the minimiser, from close to it out to ||grad f|| = 1e6."""
    rng = np.random.default_rng(0)
    obj, center = problem.objective, problem.objective.minimiser()
    out = []
    for target in np.logspace(-3, 6, n):
        u = rng.standard_normal(len(center))
        out.append(start_at_gradient(obj, center, u / np.linalg.norm(u), target))
    return out


def _holds(problem, ell: Ell) -> bool:
    obj = problem.objective
    return all(
        obj.hess_norm(x) <= ell(np.linalg.norm(obj.grad(x))) * (1 + 1e-9) for x in _points(problem)
    )


def test_profile_bounds_the_hessian(problem):
    assert _holds(problem, problem.ell)
    assert not _holds(problem, problem.ell.constant())  # L-smoothness fails on every one


def test_gradient_matches_finite_differences(problem):
    obj = problem.objective
    x = problem.objective.minimiser() + 0.3 * (problem.x0 - problem.objective.minimiser())
    h = 1e-6
    fd = np.array([(obj.value(x + h * e) - obj.value(x - h * e)) / (2 * h) for e in np.eye(len(x))])
    assert np.allclose(obj.grad(x), fd, rtol=1e-5, atol=1e-7)


def test_minimiser_and_start(problem):
    obj = problem.objective
    assert np.linalg.norm(obj.grad(obj.minimiser())) < 1e-9
    assert obj.value(obj.minimiser()) == pytest.approx(problem.f_star, abs=1e-12)
    assert obj.value(problem.x0) > problem.f_star


def test_sublevel_bounds_hold_on_the_set(problem):
    obj, bound = problem.objective, problem.sublevel
    f0 = obj.value(problem.x0)
    inside = [x for x in _points(problem) if obj.value(x) <= f0]
    assert len(inside) > 5
    assert all(np.linalg.norm(obj.grad(x)) <= bound.grad_bound * (1 + 1e-9) for x in inside)
    assert all(obj.hess_norm(x) <= bound.curvature * (1 + 1e-9) for x in inside)


def test_start_has_the_requested_gradient_norm():
    for target in (1.0, 1e3, 1e9):
        for data in (
            PowerDataset().load(PowerDataset.Params(start_grad=target), 3),
            LogBarrier().load(LogBarrier.Params(start_grad=target), 3),
        ):
            assert np.linalg.norm(data.objective.grad(data.x0)) == pytest.approx(target, rel=1e-6)


def test_power_profile_exponent_is_the_right_one():
    obj = Power(p=4.0, dim=3)
    wrong = Ell(((1.0, 0.0), (3.0, 0.5)))  # (p-2)/p instead of (p-2)/(p-1)
    x = np.array([50.0, 0.0, 0.0])
    g = np.linalg.norm(obj.grad(x))
    assert obj.hess_norm(x) <= obj.profile()(g)
    assert obj.hess_norm(x) > wrong(g)


def test_double_well_profile_needs_every_term():
    obj = DoubleWell(signs=np.ones(1))
    x = np.concatenate([np.linspace(-3, 3, 6001), np.logspace(0.5, 4, 400)])[:, None]
    hess = np.array([obj.hess_norm(v) for v in x])
    g = np.abs(obj.dphi(x[:, 0]))
    assert np.all(hess <= obj.profile()(g) * (1 + 1e-12))
    for wrong in (Ell(((1.0, 0.0), (7.0, 6 / 7))), Ell(((0.5, 0.0), (4.0, 4 / 7), (7.0, 6 / 7)))):
        assert not np.all(hess <= wrong(g))


def test_barrier_is_infinite_outside_its_box():
    obj = Barrier(tilt=np.zeros(2))
    assert obj.value(np.array([0.5, 1.0])) == np.inf
    assert np.isfinite(obj.value(np.array([0.5, 0.999])))


def test_digits_file_is_the_one_data_md_names():
    """The file ``load_digits`` reads (sha256 in DATA.md), read without importing sklearn."""
    spec = importlib.util.find_spec("sklearn")
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets/data/digits.csv.gz"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == DIGITS_SHA256
    pixels, target = digits()
    assert pixels.shape == (1797, 64) and pixels.min() == 0 and pixels.max() == 16
    assert np.bincount(target).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
