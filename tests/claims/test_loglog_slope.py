"""``harness.claims.stats.loglog_slope``: the closed-form bootstrap gives the numbers of refitting
each resample with ``np.polyfit`` (the implementation it replaced), to 1e-12."""

from __future__ import annotations

import numpy as np
import pytest

from harness.claims.stats import loglog_slope, minimum_detectable_effect


def _refitted(x, y, units, null=0.0, resamples=2000, seed=0):
    """The replaced implementation: ``np.polyfit`` on every resample's points."""
    lx, ly, labels = np.log(x), np.log(y), np.asarray(units)
    groups = [np.flatnonzero(labels == u) for u in dict.fromkeys(labels.tolist())]
    rng = np.random.default_rng(seed)
    slopes = []
    for _ in range(resamples):
        index = np.concatenate([groups[i] for i in rng.integers(0, len(groups), len(groups))])
        if np.unique(lx[index]).size > 1:
            slopes.append(np.polyfit(lx[index], ly[index], 1)[0])
    boot = np.asarray(slopes)
    low, high = np.quantile(boot, [0.025, 0.975])
    p = min(1.0, 2 * min(np.mean(boot <= null), np.mean(boot >= null)))
    return float(np.polyfit(lx, ly, 1)[0]), low, high, p, boot.std(ddof=1)


def _curves(seed: int, units: int, levels: list[float], ragged: bool = False):
    rng = np.random.default_rng(seed)
    x, y, u = [], [], []
    for unit in range(units):
        mine = levels[: 1 + unit % len(levels)] if ragged else levels
        for n in mine:
            x.append(n)
            y.append(3.0 * n**-0.5 * np.exp(rng.normal(0, 0.2)))
            u.append(f"seed-{unit}")
    return np.array(x), np.array(y), u


@pytest.mark.parametrize(
    ("units", "levels", "ragged"),
    [
        (5, [100.0, 1000.0, 10000.0], False),
        (3, [2.0, 4.0], False),
        (10, [50.0, 100.0, 200.0, 400.0], False),
        (4, [10.0, 20.0, 40.0], True),  # units with one level: some resamples have no slope
    ],
)
def test_closed_form_bootstrap_equals_refitting_each_resample(units, levels, ragged):
    x, y, u = _curves(units, units, levels, ragged)
    for null in (-0.5, 0.0):
        e = loglog_slope(x, y, u, null=null, resamples=500, seed=3)
        slope, low, high, p, se = _refitted(x, y, u, null=null, resamples=500, seed=3)
        assert e.estimate == pytest.approx(slope, abs=1e-12)
        assert (e.low, e.high) == pytest.approx((low, high), abs=1e-12)
        assert e.p_value == p
        assert e.n == units
        assert e.mde == pytest.approx(minimum_detectable_effect(se), rel=1e-9)


def test_resamples_of_one_x_are_left_out_as_refitting_does():
    x = np.array([1.0, 1.0, 2.0, 2.0, 1.0, 4.0])
    y = np.array([1.0, 1.1, 2.0, 2.2, 0.9, 4.1])
    u = ["a", "a", "b", "b", "c", "c"]  # a and b each hold one x
    e = loglog_slope(x, y, u, resamples=300, seed=1)
    slope, low, high, p, _ = _refitted(x, y, u, resamples=300, seed=1)
    assert (e.estimate, e.low, e.high) == pytest.approx((slope, low, high), abs=1e-12)
    assert e.p_value == p
