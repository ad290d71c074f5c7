"""Issue 58, item 7: every interval the claim kinds produce covers at least 93% at the nominal
95%, for 5, 10 and 20 units of normal and of skewed (lognormal, sigma = 0.5: skewness 1.75)
data. (Heavier skew at small n is out of any t interval's reach: harness.claims.samples says
what lognormal sigma = 1 gets.)

40,000 simulated samples per case (the Monte Carlo error of a coverage, 0.0012, well
below its distance to the goal), vectorised through the functions the samples call
(``t_bounds``, ``unit_slopes``, ``clopper_pearson``);
``test_the_kinds_compute_what_the_simulation_checks`` pins that each kind gives the same
interval on a results table. The t intervals are skewness-corrected (Hall 1992,
:mod:`harness.claims.samples`) and a sample of extreme skewness declines to decide (it
asserts no interval: it counts as covering); the plain t interval is the negative control:
it misses the goal on lognormal means at n = 5.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from harness.claims import Mean, PairedGain, Rate, Ratio, Select
from harness.claims.kinds import LogLogSlope, unit_slopes
from harness.claims.samples import clopper_pearson, t_bounds

DRAWS = 40_000
GOAL = 0.93
LEVELS = np.array([1.0, 2.0, 4.0, 8.0, 16.0])  # a slope's x: five levels per unit
SIGMA = 0.5
SHIFTED_LN_MEAN = math.exp(SIGMA**2 / 2)  # the mean of lognormal(0, SIGMA)


def _skewed(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Lognormal(0, SIGMA) minus its mean: skewness 1.75, mean 0."""
    return rng.lognormal(0.0, SIGMA, shape) - SHIFTED_LN_MEAN


def _mean(rng, n, skewed):
    """Per-unit values; the truth is their population mean."""
    if skewed:
        return rng.lognormal(0.0, SIGMA, (DRAWS, n)), SHIFTED_LN_MEAN
    return rng.normal(3.0, 2.0, (DRAWS, n)), 3.0


def _paired_gain(rng, n, skewed):
    """Subject minus baseline on shared units (a baseline with a large unit effect)."""
    baseline = rng.normal(10.0, 3.0, (DRAWS, n))
    gain = 0.5 + (_skewed(rng, (DRAWS, n)) if skewed else rng.normal(0.0, 1.0, (DRAWS, n)))
    return (baseline + gain) - baseline, 0.5


def _ratio(rng, n, skewed):
    """Log of subject over ``over`` per unit; the truth is the log of the geometric-mean
    ratio (t on the logs, as :class:`Ratio`)."""
    over = rng.lognormal(1.0, 0.5, (DRAWS, n))
    log_ratio = 0.2 + (_skewed(rng, (DRAWS, n)) if skewed else rng.normal(0, 0.4, (DRAWS, n)))
    return np.log((over * np.exp(log_ratio)) / over), 0.2


def _slope(rng, n, skewed):
    """Per-unit log-log slopes of curves ``y = x^b_u * noise``: each unit's exponent ``b_u``
    = -0.5 + a unit effect (normal, or skewed), its points with lognormal noise."""
    effect = 0.3 * (_skewed(rng, (DRAWS, n)) if skewed else rng.normal(0, 1, (DRAWS, n)))
    lx = np.broadcast_to(np.log(LEVELS), (DRAWS, n, LEVELS.size))
    ly = (-0.5 + effect)[..., None] * lx + rng.normal(0.0, 0.2, lx.shape)
    codes = np.repeat(np.arange(DRAWS * n), LEVELS.size)
    slopes = unit_slopes(codes, lx.ravel(), ly.ravel(), DRAWS * n)
    return slopes.reshape(DRAWS, n), -0.5


T_KINDS = {"mean": _mean, "paired-gain": _paired_gain, "ratio": _ratio, "log-log-slope": _slope}


@pytest.mark.parametrize("n", [5, 10, 20])
@pytest.mark.parametrize("skewed", [False, True], ids=["normal", "lognormal"])
@pytest.mark.parametrize("kind", list(T_KINDS))
def test_t_intervals_cover_at_least_93_percent(kind, skewed, n):
    rng = np.random.default_rng([n, skewed, len(kind)])
    values, truth = T_KINDS[kind](rng, n, skewed)
    _, low, high, declined = t_bounds(values)
    covered = declined | ((low <= truth) & (truth <= high))
    coverage = covered.mean()
    assert coverage >= GOAL, f"{kind}, {'lognormal' if skewed else 'normal'}, n = {n}: {coverage}"


def test_the_plain_t_interval_misses_the_goal_on_skewed_means():
    """The negative control: without the skewness correction, lognormal means at n = 5 are
    covered less than 93% of the time, so the test above can fail."""
    from scipy import stats

    rng = np.random.default_rng(5)
    values, truth = _mean(rng, 5, True)
    mean, se = values.mean(axis=1), values.std(axis=1, ddof=1) / math.sqrt(5)
    half = stats.t.ppf(0.975, 4) * se
    assert np.mean((mean - half <= truth) & (truth <= mean + half)) < GOAL


@pytest.mark.parametrize("n", [5, 10, 20])
@pytest.mark.parametrize("skewed", [False, True], ids=["normal", "lognormal"])
def test_rate_exact_interval_covers(skewed, n):
    """:class:`Rate`: the share of units above a threshold, exact (Clopper-Pearson)."""
    rng = np.random.default_rng([n, skewed])
    if skewed:
        values, threshold, truth = rng.lognormal(0, 1, (DRAWS, n)), 1.5, 0.3433
    else:
        values, threshold, truth = rng.normal(0, 1, (DRAWS, n)), 0.5, 0.3085
    low, high = clopper_pearson((values > threshold).sum(axis=1), n)
    assert np.mean((low <= truth) & (truth <= high)) >= GOAL


def _table(values: np.ndarray, method: str, along: np.ndarray | None = None) -> pd.DataFrame:
    """A results table: one row per unit (seed) and, with ``along``, per level."""
    seeds = np.arange(values.shape[0])
    frame = pd.DataFrame({"dataset": "d", "method": method, "seed": seeds, "m": values})
    if along is None:
        return frame
    return frame.loc[frame.index.repeat(along.size)].assign(
        **{"dataset.n": np.tile(along, seeds.size).astype(str)}
    )


def test_the_kinds_compute_what_the_simulation_checks():
    """Each kind's sample on a results table has the interval (and the declining) that the
    vectorised functions give for its per-unit values."""
    rng = np.random.default_rng(7)
    subject = Select("s")
    for trial in range(10):
        a, b = rng.lognormal(0, 1, 8), rng.lognormal(0, 1, 8)
        rows = pd.concat([_table(a, "s"), _table(b, "b")], ignore_index=True)
        for kind, values in (
            (Mean(), a),
            (PairedGain("b"), a - b),
            (PairedGain("b", higher_is_better=False), b - a),
            (Ratio("b"), np.log(a / b)),
        ):
            sample = kind.sample(rows, "m", "seed", subject)
            _, low, high, declined = t_bounds(values[None])
            shown = sample.interval(0.95)
            if isinstance(kind, Ratio):
                shown = tuple(np.log(shown))
            assert shown == pytest.approx((low[0], high[0]), rel=1e-9), (trial, kind)
            assert bool(sample.refused) == bool(declined[0])
        rate = Rate(threshold=1.0).sample(rows, "m", "seed", subject)
        assert rate.interval(0.95) == pytest.approx(
            [float(v) for v in clopper_pearson(np.sum(a > 1.0), 8)]
        )
        exponents = -0.5 + 0.3 * rng.normal(size=6)
        curves = np.exp(exponents[:, None] * np.log(LEVELS) + rng.normal(0, 0.2, (6, 5)))
        frame = _table(np.zeros(6), "s", LEVELS).assign(m=curves.ravel())
        sample = LogLogSlope("dataset.n").sample(frame, "m", "seed", subject)
        slopes = [np.polyfit(np.log(LEVELS), np.log(c), 1)[0] for c in curves]
        _, low, high, _ = t_bounds(np.array(slopes)[None])
        assert sample.interval(0.95) == pytest.approx((low[0], high[0]), rel=1e-9)


def test_permutation_test_gives_no_interval_rather_than_the_nulls_quantiles():
    """The null's 2.5-97.5% quantiles are no interval for the effect (they do not move with
    it): ``permutation_test`` reports none, and says so in ``test``."""
    from harness.claims.stats import permutation_test

    rng = np.random.default_rng(0)
    x = np.repeat([0, 1], 20)
    y = 3.0 * x + rng.normal(size=40)
    e = permutation_test(lambda a, b: b[a == 1].mean() - b[a == 0].mean(), x, y, permutations=200)
    assert e.p_value < 0.01 and e.estimate > 2
    assert math.isnan(e.low) and math.isnan(e.high)
    assert "no interval" in e.test
