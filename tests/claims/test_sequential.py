"""Anytime-valid claims: looking after every batch of seeds keeps the error rate of a claim at
its margin, where the same loop with fixed-n intervals does not (harness.claims.sequential)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from harness.claims import Greater, Within
from harness.claims.sequential import _mixture_radius, mean_sequence, mixture_rho, rate_sequence
from harness.claims.verdicts import Status

ALPHA = 0.025
SIMS = 5000
FIRST, BUDGET = 5, 20  # a claim's min_seeds and its max_units (4 x)


def _looks(effect: float, fixed: bool, seed: int = 0) -> tuple[float, float]:
    """``(rate of reproduced, rate of decided)`` over SIMS claims ``mean > 0`` on unit-variance
    units, looked at after every unit from FIRST to BUDGET; the radius is the confidence
    sequence's (or, ``fixed``, the fixed-n t interval's at each look)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(effect, 1.0, (SIMS, BUDGET))
    sums, squares = np.cumsum(x, axis=1), np.cumsum(x**2, axis=1)
    reproduced, decided = np.zeros(SIMS, bool), np.zeros(SIMS, bool)
    rho = mixture_rho(BUDGET, ALPHA)
    for n in range(FIRST, BUDGET + 1):
        mean = sums[:, n - 1] / n
        sd = np.sqrt((squares[:, n - 1] - n * mean**2) / (n - 1))
        t = stats.t.ppf(1 - ALPHA, n - 1) / math.sqrt(n)
        radius = (t if fixed else max(_mixture_radius(n, ALPHA, rho), t)) * sd
        now = ~decided & (mean - radius > 0)
        reproduced |= now
        decided |= now | (mean + radius < 0)
    return float(reproduced.mean()), float(decided.mean())


def test_looking_after_every_batch_keeps_the_error_rate_at_the_margin():
    rate, _ = _looks(0.0, fixed=False)
    assert rate <= 0.05, rate  # measured 0.026


def test_the_fixed_n_loop_exceeds_it():
    """The negative control: the same looks with fixed-n intervals."""
    rate, _ = _looks(0.0, fixed=True)
    assert rate > 0.05, rate  # measured 0.10


def test_an_effect_of_one_and_a_half_mdes_is_decided_within_the_budget():
    mde = (stats.t.ppf(1 - ALPHA, FIRST - 1) + stats.t.ppf(0.8, FIRST - 1)) / math.sqrt(FIRST)
    _, decided = _looks(1.5 * mde, fixed=False)
    assert decided >= 0.8, decided


def test_a_sequence_is_never_narrower_than_the_fixed_n_interval():
    values = np.random.default_rng(1).normal(0.3, 1.0, 12)
    s = mean_sequence(values, target_n=20)
    half = stats.t.ppf(0.975, 11) * values.std(ddof=1) / math.sqrt(12)
    low, high = s.interval(0.95)
    assert low <= values.mean() - half + 1e-12 and high >= values.mean() + half - 1e-12


def test_anytime_p_values_agree_with_the_sequence():
    s = mean_sequence(np.random.default_rng(2).normal(0.8, 1.0, 15), target_n=20)
    low, high = s.bounds(ALPHA)
    assert (s.p_greater(low - 1e-6) < ALPHA) and not (s.p_greater(low + 1e-6) < ALPHA)
    assert Greater(low - 1e-3).status(s) == Status.REPRODUCED
    assert Greater(high + 1e-3).status(s) == Status.NOT_REPRODUCED
    assert Within(s.estimate, 10.0).status(s) == Status.REPRODUCED


@pytest.mark.parametrize("truth", [0.2, 0.5, 0.9])
def test_the_rate_sequence_covers_at_every_look(truth):
    rng = np.random.default_rng(3)
    draws = rng.random((400, 40)) < truth
    hits = np.cumsum(draws, axis=1)
    missed = 0
    for row in hits:
        for n in range(5, 41, 5):
            low, high = rate_sequence(int(row[n - 1]), n).bounds(ALPHA)
            if not low <= truth <= high:
                missed += 1
                break
    assert missed / 400 <= 0.05


def test_a_claim_evaluated_anytime_reads_its_units_through_the_sequence():
    import pandas as pd

    from harness.claims import Cells, Claim, Mean, Source, UseMetric, evaluate_claims

    class Positive(Claim):
        name = "positive-mean"
        task = "t"
        source = Source("fixture")
        statement = "The mean is positive."
        requires = (Cells("d", ("m",), min_seeds=5),)
        metric = "score"
        subject = "m"
        kind = Mean()
        hypothesis = Greater(0.0)
        control = UseMetric("negative")

    rng = np.random.default_rng(4)
    score = rng.normal(0.9, 1.0, 12)
    table = pd.DataFrame({"task": "t", "dataset": "d", "method": "m", "seed": range(12),
                          "status": "ok", "score": score, "negative": -score - 5})  # fmt: skip
    (fixed,) = evaluate_claims([Positive], table)
    (anytime,) = evaluate_claims([Positive], table, anytime={"positive-mean"})
    assert "confidence sequence" in anytime.estimate.test
    assert (
        anytime.estimate.low < fixed.estimate.low
        and anytime.estimate.p_value > fixed.estimate.p_value
    )


@pytest.mark.parametrize(("successes", "n"), [(8, 8), (0, 8), (3, 8)])
def test_a_rate_sequence_holds_its_own_estimate(successes, n):
    """Every success (or none) gave the estimate 1 outside [0.51, 0.999999]: an error."""
    s = rate_sequence(successes, n)
    low, high = s.interval(0.95)
    assert low <= s.estimate <= high


@pytest.mark.parametrize("n", [3, 5, 12, 30])
def test_the_anytime_p_value_is_the_level_where_the_sequence_leaves_the_margin(n):
    """The p-value (the t side in closed form, the mixture's by bisection) is the smallest
    alpha whose bounds exclude the margin, found here by bisection on the bounds themselves
    (dropping the t side, which binds at small n, fails this)."""
    values = np.random.default_rng(n).normal(0.5, 1.0, n)
    s = mean_sequence(values, target_n=40)

    def by_bounds(margin):
        low_a, high_a = 1e-12, 1.0 - 1e-12
        if not s.bounds(high_a)[0] > margin:
            return 1.0
        for _ in range(80):
            mid = math.sqrt(low_a * high_a)
            low_a, high_a = (low_a, mid) if s.bounds(mid)[0] > margin else (mid, high_a)
        return high_a

    for margin in (values.mean() - 2.0, values.mean() - 0.8, values.mean() - 0.3):
        assert s.p_greater(margin) == pytest.approx(by_bounds(margin), rel=1e-4)
