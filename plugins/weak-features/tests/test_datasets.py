"""Corruption simulators (rates and guarantees) and the three datasets."""

import numpy as np
import pytest
from harness_weak_features._corruption import (
    candidates,
    complementary_transition,
    corrupt,
    emulate_estimator,
    mnar_missing_prob,
    symmetric_transition,
)
from harness_weak_features.datasets import Adult, Affairs, Anes96, Synthetic, build_weak_data

N, K, RATE = 20_000, 5, 0.3
# Binomial tolerance: 4 standard errors of a proportion estimated from N draws.
TOL = 4 * np.sqrt(RATE * (1 - RATE) / N)


@pytest.fixture(scope="module")
def truth():
    return np.random.default_rng(1).integers(0, K, size=N)


@pytest.mark.parametrize("kind", ["noisy", "missing-mcar"])
def test_corruption_rate_within_binomial_error(truth, kind):
    obs, _ = corrupt(truth, K, kind, RATE, np.random.default_rng(2))
    assert abs(np.mean(obs != truth) - RATE) < TOL


def test_noisy_flip_goes_to_uniform_other_value(truth):
    obs, lik = corrupt(truth, K, "noisy", RATE, np.random.default_rng(3))
    flipped = obs != truth
    offsets = (obs[flipped] - truth[flipped]) % K
    # Each of the K-1 offsets is equally likely: 4 SE of a proportion 1/(K-1).
    share = np.bincount(offsets, minlength=K)[1:] / flipped.sum()
    assert np.all(np.abs(share - 1 / (K - 1)) < 4 * np.sqrt(0.25 * 0.75 / flipped.sum()))
    np.testing.assert_allclose(lik, symmetric_transition(K, RATE)[:, obs].T)


@pytest.mark.parametrize("bias", [0.0, 0.6])
def test_every_complementary_value_differs_from_truth_with_its_bias(truth, bias):
    obs, lik = corrupt(truth, K, "complementary", bias, np.random.default_rng(4))
    assert np.all(obs != truth)  # every row complementary, none shows the truth
    np.testing.assert_allclose(lik, complementary_transition(K, bias)[:, obs].T)
    # The shift share (v + 1 mod K) is (1 - bias)/(K - 1) + bias; 4 binomial SE.
    share = np.mean(obs == (truth + 1) % K)
    expected = (1 - bias) / (K - 1) + bias
    assert abs(share - expected) < 4 * np.sqrt(expected * (1 - expected) / N)
    offsets = np.bincount((obs - truth) % K, minlength=K)[2:] / N  # the other offsets
    np.testing.assert_allclose(offsets, (1 - bias) / (K - 1), atol=4 * np.sqrt(0.25 / N))


def test_complementary_observation_carries_no_answer_flag(truth):
    """Every row has the same kind of observation: no row reveals its value exactly."""
    _, lik = corrupt(truth, K, "complementary", 0.0, np.random.default_rng(9))
    assert np.all((lik > 0).sum(axis=1) == K - 1)


def test_partial_set_contains_truth_and_has_expected_size(truth):
    q = 0.4
    obs, lik = corrupt(truth, K, "partial", q, np.random.default_rng(5))
    cand = candidates(obs, K)
    assert cand[np.arange(N), truth].all()
    np.testing.assert_array_equal(cand, lik > 0)
    # E|S| = 1 + q (K - 1) (closed form); sd of |S| is sqrt((K-1) q (1-q)); 4 SE.
    tol = 4 * np.sqrt((K - 1) * q * (1 - q) / N)
    assert abs(cand.sum(axis=1).mean() - (1 + q * (K - 1))) < tol


def test_truth_always_has_positive_likelihood(truth):
    x = np.random.default_rng(6).normal(size=N)
    for kind in [
        "noisy",
        "missing-mcar",
        "missing-mar",
        "missing-mnar",
        "complementary",
        "partial",
    ]:
        _, lik = corrupt(truth, K, kind, RATE, np.random.default_rng(7), driver=x)
        assert np.all(lik[np.arange(N), truth] > 0), kind


def test_mcar_missingness_independent_of_ordinary_features():
    data = Synthetic().load(Synthetic.Params(n=20_000, weak_kind="missing-mcar", rate=RATE), 0)
    miss = data.obs_train[:, 0] == -1
    assert abs(miss.mean() - RATE) < 4 * np.sqrt(RATE * (1 - RATE) / miss.size)
    for k in range(data.x_train.shape[1]):  # two-sample z statistic of each feature's mean
        x = data.x_train[:, k]
        z = (x[miss].mean() - x[~miss].mean()) / np.sqrt(1 / miss.sum() + 1 / (~miss).sum())
        assert abs(z) < 4


def test_mar_missingness_follows_driver_at_target_rate():
    data = Synthetic().load(Synthetic.Params(n=20_000, weak_kind="missing-mar", rate=RATE), 0)
    miss = data.obs_train[:, 0] == -1
    assert abs(miss.mean() - RATE) < 0.02  # the intercept matches the mean over all rows
    assert data.x_train[miss, 0].mean() > data.x_train[~miss, 0].mean() + 0.5


def test_mnar_rate_depends_on_value(truth):
    obs, _ = corrupt(truth, K, "missing-mnar", RATE, np.random.default_rng(8))
    per_value = np.array([np.mean(obs[truth == u] == -1) for u in range(K)])
    np.testing.assert_allclose(per_value, mnar_missing_prob(K, RATE), atol=0.03)
    assert np.all(np.diff(per_value) > 0)


def test_emulated_estimator_accuracy_is_one_minus_epsilon(truth):
    est = emulate_estimator(truth, K, 0.25, np.random.default_rng(9))
    assert abs(np.mean(est == truth) - 0.75) < 4 * np.sqrt(0.25 * 0.75 / N)


def test_symmetric_transition_closed_form():
    T = symmetric_transition(4, 0.3)
    np.testing.assert_allclose(T.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.diag(T), 0.7)
    assert abs(np.linalg.det(symmetric_transition(4, 0.75))) < 1e-12  # singular at (K-1)/K


def test_real_datasets_have_documented_rows_and_levels():
    affairs = Affairs().load(Affairs.Params(), 0)
    assert len(affairs.y_train) + len(affairs.y_test) == 6366  # data/DATA.md
    assert affairs.n_levels == (6,) and affairs.weak_names == ("occupation",)
    anes = Anes96().load(Anes96.Params(weak_columns="PID,educ"), 0)
    assert len(anes.y_train) + len(anes.y_test) == 944
    assert anes.n_levels == (7, 7)


def test_load_is_deterministic_and_seed_dependent():
    params = Synthetic.Params(n=200)
    assert Synthetic().load(params, 3) == Synthetic().load(params, 3)
    assert Synthetic().load(params, 3) != Synthetic().load(params, 4)


def test_unknown_column_is_named():
    with pytest.raises(ValueError, match=r"weak_columns: unknown column 'salary'"):
        Affairs.Params(weak_columns="occupation,salary")


@pytest.mark.parametrize("rate", [-0.1, 1.0])
def test_rate_outside_unit_interval_is_rejected(rate):
    with pytest.raises(ValueError, match=r"(?s)rate\n.*than( or equal to)? [01]"):
        Synthetic.Params(rate=rate)
    with pytest.raises(ValueError, match=r"rate must be in \[0, 1\)"):
        corrupt(np.zeros(3, dtype=np.int64), 2, "noisy", rate, np.random.default_rng(0))


def test_weak_feature_with_one_level_is_rejected():
    with pytest.raises(ValueError, match=r"(?s)n_levels\n.*greater than or equal to 2"):
        Synthetic.Params(n_levels=1)
    x, y = np.zeros((40, 2)), np.arange(40) % 2
    with pytest.raises(ValueError, match=r"weak feature 'w' has 1 level"):
        build_weak_data(
            x,
            np.zeros((40, 1), dtype=np.int64),
            y,
            ("w",),
            "noisy",
            0.1,
            0.3,
            np.random.default_rng(0),
        )


def test_one_class_training_label_is_rejected():
    x, v = np.zeros((40, 2)), (np.arange(40) % 3)[:, None]
    with pytest.raises(ValueError, match="y_train has one class"):
        build_weak_data(
            x, v, np.zeros(40, dtype=np.int64), ("w",), "noisy", 0.1, 0.3, np.random.default_rng(0)
        )


def test_non_finite_data_and_output_are_rejected_naming_the_field():
    import dataclasses

    from harness_weak_features._data import WeakOutput

    data = Synthetic().load(Synthetic.Params(n=100), 0)
    x = data.x_train.copy()
    x[0, 0] = np.nan
    with pytest.raises(ValueError, match="x_train has non-finite"):
        dataclasses.replace(data, x_train=x)
    lik = data.lik_test.copy()
    lik[0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="lik_test has non-finite"):
        dataclasses.replace(data, lik_test=lik)
    with pytest.raises(ValueError, match="y_score has non-finite"):
        WeakOutput(np.zeros(2, dtype=np.int64), np.array([0.5, np.nan]))


ADULT_SHA256 = "a62262dd33fc72e016a90baf0e554e2c4b7ddd572651818e00f310f7976092c7"  # data/DATA.md
ALL_KINDS = ["noisy", "missing-mcar", "missing-mar", "missing-mnar", "complementary", "partial"]


def test_adult_ships_the_file_named_in_data_md():
    import hashlib
    from importlib import resources

    blob = (resources.files("harness_weak_features") / "data" / "adult.csv.zip").read_bytes()
    assert hashlib.sha256(blob).hexdigest() == ADULT_SHA256


def test_adult_has_documented_rows_label_share_and_levels():
    data = Adult().load(Adult.Params(n=0), 0)
    y = np.concatenate([data.y_train, data.y_test])
    assert len(y) == 45_222 and y.sum() == 11_208  # data/DATA.md
    assert data.weak_names == ("occupation",) and data.n_levels == (14,)
    # age, education-num, capital-gain, capital-loss, hours-per-week + 100 - 14 - 2 indicators
    assert data.x_train.shape[1] == 5 + 100 - 14 - 2


def test_adult_subsample_shapes_and_determinism():
    params = Adult.Params()  # n = 5,000, test share 0.3
    first = Adult().load(params, 3)
    assert first.x_train.shape == (3500, 89) and first.x_test.shape == (1500, 89)
    assert first.lik_train.shape == (3500, 1, max(first.n_levels))
    assert first == Adult().load(params, 3)
    assert first != Adult().load(params, 4)


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_adult_loads_every_weak_kind(kind):
    rate = 0.0 if kind == "complementary" else RATE
    data = Adult().load(Adult.Params(n=400, weak_kind=kind, rate=rate), 0)
    assert data.weak_kind == kind and len(data.y_train) == 280 and len(data.y_test) == 120
    rows = np.arange(len(data.y_train))
    assert np.all(data.lik_train[rows, 0, data.v_train[:, 0]] > 0)  # the truth stays possible
    if kind == "complementary":
        assert np.all(data.obs_train != data.v_train)


def test_adult_education_as_weak_feature_is_not_a_column_of_x():
    """``education-num`` is education as a number: kept, it would reveal the weak value."""
    data = Adult().load(Adult.Params(weak_columns="education,occupation", n=3000), 0)
    v = data.v_train[:, 0]
    assert data.n_levels[0] == 16
    for column in data.x_train.T:
        values = np.unique(column)
        determined = all(len(np.unique(v[column == c])) == 1 for c in values)
        assert not (determined and len(values) == data.n_levels[0]), "x_o encodes education"


def test_adult_unknown_column_is_named():
    with pytest.raises(ValueError, match=r"weak_columns: unknown column 'salary'"):
        Adult.Params(weak_columns="salary")
