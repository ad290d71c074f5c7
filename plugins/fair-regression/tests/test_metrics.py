"""Metrics: exact KS / SP / W2 against brute force and scipy, Skip rules, NaN errors."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from harness_fair_regression import datasets, metrics
from harness_fair_regression.data import RegressionOutput
from scipy.stats import ks_2samp

from harness import Skip


def test_ks_equals_scipy_exact_statistic_with_ties():
    rng = np.random.default_rng(0)
    pred = rng.integers(0, 20, size=500).astype(float)  # many ties
    s = (rng.random(500) < 0.3).astype(np.int64)
    expected = ks_2samp(pred[s == 0], pred[s == 1]).statistic
    assert metrics.ks_unfairness(pred, s) == pytest.approx(expected, abs=1e-12)


def test_ks_is_max_over_group_pairs():
    rng = np.random.default_rng(1)
    s = rng.integers(0, 3, size=900)
    pred = rng.normal(size=900) + 0.5 * s
    pairs = [ks_2samp(pred[s == a], pred[s == b]).statistic for a, b in combinations(range(3), 2)]
    assert metrics.ks_unfairness(pred, s) == pytest.approx(max(pairs), abs=1e-12)


def test_sp_disparity_matches_brute_force_over_thresholds():
    rng = np.random.default_rng(2)
    pred = np.round(rng.normal(size=300), 1)
    s = rng.integers(0, 2, size=300)
    z = np.unique(pred)
    overall = (pred[None, :] >= z[:, None]).mean(axis=1)
    brute = max(
        np.max(np.abs((pred[s == g][None, :] >= z[:, None]).mean(axis=1) - overall)) for g in (0, 1)
    )
    assert metrics.sp_disparity(pred, s) == pytest.approx(brute, abs=1e-12)


def test_w2_equal_sizes_is_quarter_of_squared_w2_between_groups():
    # With p = (1/2, 1/2): U = sum_s p_s (Q_s - Qbar)^2 = (1/4) int (Q_0 - Q_1)^2
    # = (1/4) mean((sort a - sort b)^2) for equal sizes (closed form).
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=400), rng.normal(2, 3, size=400)
    pred = np.concatenate([a, b])
    s = np.repeat([0, 1], 400)
    expected = 0.25 * np.mean((np.sort(a) - np.sort(b)) ** 2)
    assert metrics.w2_unfairness(pred, s) == pytest.approx(expected, rel=1e-12)


def test_w2_unequal_sizes_matches_fine_quantile_grid():
    # Sizes 3 and 4: every Q_s is constant on the 12 intervals [k/12, (k+1)/12).
    a, b = np.array([0.0, 1.0, 5.0]), np.array([2.0, 2.5, 3.0, 10.0])
    u = (np.arange(12) + 0.5) / 12
    qa, qb = a[(u * 3).astype(int)], b[(u * 4).astype(int)]
    p = np.array([3, 4]) / 7
    bary = p[0] * qa + p[1] * qb
    expected = p[0] * np.mean((qa - bary) ** 2) + p[1] * np.mean((qb - bary) ** 2)
    pred, s = np.concatenate([a, b]), np.repeat([0, 1], [3, 4])
    assert metrics.w2_unfairness(pred, s) == pytest.approx(expected, rel=1e-12)


def test_w2_gaussian_groups_match_closed_form_cost():
    # Cost = sum p_s [(m_s - mbar)^2 + (sd_s - sdbar)^2] (papers file, section 6);
    # 200,000 points per group: quantile estimation error well under 2% (measured 0.3%).
    rng = np.random.default_rng(4)
    n = 200_000
    pred = np.concatenate([rng.normal(0, 1, n), rng.normal(2, 2, n)])
    s = np.repeat([0, 1], n)
    expected = 0.5 * (1 + 0.25) + 0.5 * (1 + 0.25)  # mbar = 1, sdbar = 1.5
    assert metrics.w2_unfairness(pred, s) == pytest.approx(expected, rel=0.02)


def test_identical_group_laws_give_zero_unfairness():
    pred = np.tile(np.arange(10.0), 2)
    s = np.repeat([0, 1], 10)
    assert metrics.ks_unfairness(pred, s) == 0
    assert metrics.sp_disparity(pred, s) == 0
    assert metrics.w2_unfairness(pred, s) == pytest.approx(0, abs=1e-15)


def test_metrics_raise_on_nan_predictions():
    pred, s = np.array([0.0, np.nan, 1.0, 2.0]), np.array([0, 0, 1, 1])
    for fn in (metrics.ks_unfairness, metrics.sp_disparity, metrics.w2_unfairness):
        with pytest.raises(ValueError, match="NaN"):
            fn(pred, s)


@pytest.fixture(scope="module")
def synthetic():
    ds = datasets.SyntheticLinear()
    return ds.load(ds.Params(n_train=50, n_calib=50, n_test=100), seed=0)


def test_mse_rmse_and_fair_risk_of_known_predictions(synthetic):
    out = RegressionOutput(y_pred=synthetic.y_test + 2.0)
    assert metrics.MSE().compute(synthetic, out) == pytest.approx(4.0)
    assert metrics.RMSE().compute(synthetic, out) == pytest.approx(2.0)
    fair = RegressionOutput(y_pred=synthetic.g_star_test)
    assert metrics.FairRisk().compute(synthetic, fair) == 0.0


def test_fair_risk_skips_real_data_with_a_reason(crime):
    out = RegressionOutput(y_pred=crime.y_test)
    with pytest.raises(Skip, match="g\\*"):
        metrics.FairRisk().compute(crime, out)


def test_unfairness_metrics_skip_a_single_group():
    ds = datasets.SyntheticLinear()
    data = ds.load(ds.Params(proportions=(1.0,), n_train=20, n_calib=20, n_test=20), seed=0)
    out = RegressionOutput(y_pred=data.y_test)
    for metric in (metrics.KSUnfairness(), metrics.W2Unfairness(), metrics.SPDisparity()):
        with pytest.raises(Skip, match="two groups"):
            metric.compute(data, out)


def test_meta_theorem_risks_of_known_outputs(synthetic):
    f, g = synthetic.f_star_test, synthetic.g_star_test
    out = RegressionOutput(y_pred=g + 1.0, base_pred=f - 0.5, oracle_pred=g + 0.25)
    assert metrics.RegressionRisk().compute(synthetic, out) == pytest.approx(0.25)
    assert metrics.FairRisk().compute(synthetic, out) == pytest.approx(1.0)
    assert metrics.TransportRisk().compute(synthetic, out) == pytest.approx(0.0625)
    assert metrics.ExcessRisk().compute(synthetic, out) == pytest.approx(np.mean((g + 1 - f) ** 2))


def test_meta_theorem_risks_skip_with_a_reason(synthetic, crime):
    plain = RegressionOutput(y_pred=synthetic.y_test)
    with pytest.raises(Skip, match="base predictions"):
        metrics.RegressionRisk().compute(synthetic, plain)
    with pytest.raises(Skip, match="oracle_pred"):
        metrics.TransportRisk().compute(synthetic, plain)
    real = RegressionOutput(y_pred=crime.y_test, base_pred=crime.y_test, oracle_pred=crime.y_test)
    for metric in (metrics.RegressionRisk(), metrics.ExcessRisk(), metrics.TransportRisk()):
        with pytest.raises(Skip, match="communities-crime"):
            metric.compute(crime, real)


@pytest.mark.parametrize("field", ["y_pred", "base_pred", "oracle_pred"])
def test_output_with_nan_names_the_field(field):
    values = {"y_pred": np.zeros(4), "base_pred": np.zeros(4), "oracle_pred": np.zeros(4)}
    values[field] = np.array([0.0, np.inf, 1.0, np.nan])
    with pytest.raises(ValueError, match=rf"RegressionOutput\.{field} holds 2 NaN/inf"):
        RegressionOutput(**values)


def test_output_fields_must_share_one_length():
    with pytest.raises(ValueError, match="base_pred has 3 rows, y_pred has 4"):
        RegressionOutput(y_pred=np.zeros(4), base_pred=np.zeros(3))
