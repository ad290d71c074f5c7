"""Metrics on hand-made plays with known answers."""

import numpy as np
import pytest
from harness_ftrl_shocks import datasets, metrics
from harness_ftrl_shocks.data import Play

from harness import Skip


def _play(x_row, x_col, hit=None, returns=None) -> Play:
    x_row, x_col = np.asarray(x_row, float), np.asarray(x_col, float)
    n_snap, paths = x_row.shape[:2]
    hit = np.full((3, paths), np.inf) if hit is None else np.asarray(hit, float)
    returns = np.zeros((3, paths), int) if returns is None else np.asarray(returns)
    return Play(
        np.linspace(0, 10, n_snap), x_row, x_col, hit, hit.copy(), returns, returns.copy(), 0.1
    )


GAME = datasets.Coordination().load(datasets.Coordination.Params(), 0)
PURE = [[1.0, 0.0]]
MIXED = [[0.5, 0.5]]


def test_limit_set_tells_pure_nash_from_other_profiles_and_from_moving_play():
    # three paths: settled at (0, 0) (a Nash equilibrium), at (0, 1) (not one), still mixed
    x_row = np.array([[PURE[0], PURE[0], MIXED[0]]] * 5)
    x_col = np.array([[PURE[0], [0.0, 1.0], MIXED[0]]] * 5)
    out = metrics.LimitSet(metrics.LimitSet.Params()).compute(GAME, _play(x_row, x_col))
    assert out == pytest.approx({"nash": 1 / 3, "other": 1 / 3, "unsettled": 1 / 3})


def test_hitting_rate_counts_censored_paths_as_not_hit():
    hit = np.array([[1.0, np.inf]] * 3)
    play = _play(np.full((2, 2, 2), 0.5), np.full((2, 2, 2), 0.5), hit=hit)
    out = metrics.Hitting(metrics.Hitting.Params()).compute(GAME, play)
    assert out["rate"] == 0.5 and out["median_time"] == pytest.approx(5.5)


def test_returns_rate_needs_two_entries():
    returns = np.array([[1, 3]] * 3)
    play = _play(np.full((2, 2, 2), 0.5), np.full((2, 2, 2), 0.5), returns=returns)
    assert metrics.Returns(metrics.Returns.Params()).compute(GAME, play) == {
        "mean": 2.0,
        "rate": 0.5,
    }


def test_boundary_distance_change_is_negative_toward_the_boundary():
    x = np.array([[[0.5, 0.5]], [[0.9, 0.1]]])
    out = metrics.BoundaryDistance().compute(GAME, _play(x, x))
    assert out["change"] == pytest.approx(-0.4)


def test_span_mass_skips_games_without_a_span():
    with pytest.raises(Skip, match="no span"):
        metrics.SpanMass(metrics.SpanMass.Params()).compute(
            GAME, _play(np.full((2, 1, 2), 0.5), np.full((2, 1, 2), 0.5))
        )


def test_unrecorded_eps_is_skipped():
    with pytest.raises(Skip, match="not recorded"):
        metrics.Hitting(metrics.Hitting.Params(eps=0.05)).compute(
            GAME, _play(np.full((2, 1, 2), 0.5), np.full((2, 1, 2), 0.5))
        )
