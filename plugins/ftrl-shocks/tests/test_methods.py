"""Methods: the control is deterministic, the rival tends to the subject as its rate -> 0."""

import numpy as np
import pytest
from harness_ftrl_shocks import datasets, methods
from harness_ftrl_shocks._dynamics import _noise_scale

GAME = datasets.MatchingPennies().load(datasets.MatchingPennies.Params(), 0)
SMALL = {"horizon": 2.0, "dt": 0.05, "paths": 16}


def _run(cls, seed, **params):
    return cls().run(GAME, cls.Params(**{**SMALL, **params}), seed)


def test_without_shocks_every_seed_gives_the_same_orbit():
    a, b = _run(methods.StochasticFTRL, 1, sigma=0.0), _run(methods.StochasticFTRL, 2, sigma=0.0)
    assert np.array_equal(a.x_row, b.x_row)
    assert not np.array_equal(
        _run(methods.StochasticFTRL, 1).x_row, _run(methods.StochasticFTRL, 2).x_row
    )


def test_mean_reverting_shocks_tend_to_brownian_ones_as_the_rate_vanishes():
    brownian = _run(methods.StochasticFTRL, 3)
    slow = _run(methods.MeanRevertingShocks, 3, mean_reversion=1e-6)
    fast = _run(methods.MeanRevertingShocks, 3, mean_reversion=4.0)
    assert slow.x_row == pytest.approx(brownian.x_row, abs=1e-4)
    assert np.abs(fast.x_row - brownian.x_row).max() > 0.05


@pytest.mark.parametrize("rate", [0.5, 4.0])
def test_ou_step_keeps_the_stationary_variance(rate):
    decay, std = _noise_scale(1.0, rate, 0.01)
    # a stationary Z stays stationary: decay^2 v + std^2 = v with v = sigma^2 / (2 rate)
    v = 1.0 / (2 * rate)
    assert decay**2 * v + std**2 == pytest.approx(v)
