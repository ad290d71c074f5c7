"""The weak loss, the posterior, the training loop and the paper's qualitative claims."""

import copy

import numpy as np
import pytest
import torch
from harness_weak_features.datasets import Synthetic
from harness_weak_features.losses import posterior, weak_nll
from harness_weak_features.methods import (
    DropFeature,
    EmulatedEstimator,
    HgbNative,
    IterativeImpute,
    KnnImpute,
    ModeImpute,
    Naive,
    Oracle,
    WflIterative,
    WflJoint,
    WflSequential,
    knn_impute,
)
from harness_weak_features.metrics import Accuracy, WfAccuracy
from harness_weak_features.models import train_full_batch
from sklearn.impute import KNNImputer

from harness import Skip

SEEDS = range(5)


def _logits(n=50, k=5):
    return torch.randn(n, k, generator=torch.Generator().manual_seed(0), dtype=torch.float64)


def test_weak_loss_reduces_to_cross_entropy_when_clean():
    logits = _logits()
    v = torch.arange(50) % 5
    clean = torch.nn.functional.one_hot(v, 5).double()
    expected = torch.nn.functional.cross_entropy(logits, v)
    assert float(weak_nll(logits, clean)) == pytest.approx(float(expected), rel=1e-12)


def test_weak_loss_complementary_and_missing_closed_forms():
    logits, k = _logits(), 5
    v_bar = torch.arange(50) % k
    lik = (1 - torch.nn.functional.one_hot(v_bar, k).double()) / (k - 1)
    p_bar = torch.softmax(logits, -1)[torch.arange(50), v_bar]
    # Closed form (docs/papers/weak-features.md §7): -log(1 - p(v_bar)) + log(K - 1).
    expected = (-torch.log(1 - p_bar) + np.log(k - 1)).mean()
    assert float(weak_nll(logits, lik)) == pytest.approx(float(expected), rel=1e-12)
    assert float(weak_nll(logits, torch.ones(50, k, dtype=torch.float64))) == pytest.approx(
        0.0, abs=1e-12
    )


def test_posterior_keeps_clean_value_and_prior_on_missing():
    logits = _logits()
    clean = torch.nn.functional.one_hot(torch.arange(50) % 5, 5).double()
    torch.testing.assert_close(posterior(logits, clean), clean)
    torch.testing.assert_close(posterior(logits, torch.ones_like(clean)), torch.softmax(logits, -1))


def test_full_batch_adam_matches_torch_adam():
    x = torch.randn(30, 3, generator=torch.Generator().manual_seed(1))
    y = x @ torch.tensor([1.0, -2.0, 0.5])
    w1, w2 = torch.zeros(3, requires_grad=True), torch.zeros(3, requires_grad=True)
    train_full_batch([w1], lambda: ((x @ w1 - y) ** 2).mean(), 50, 0.1, 0.01)
    opt = torch.optim.Adam([w2], lr=0.1, weight_decay=0.01)
    for _ in range(50):
        opt.zero_grad()
        ((x @ w2 - y) ** 2).mean().backward()
        opt.step()
    torch.testing.assert_close(w1, w2)


def test_knn_impute_matches_sklearn_knn_imputer():
    rng = np.random.default_rng(0)
    x, codes = rng.normal(size=(80, 3)), rng.integers(0, 4, size=(80, 1)).astype(float)
    codes[rng.random(80) < 0.4] = np.nan
    ours = knn_impute(x, codes, x, codes, 5)
    block = np.where(np.isnan(codes), np.nan, np.eye(4)[np.nan_to_num(codes[:, 0]).astype(int)])
    theirs = KNNImputer(n_neighbors=5).fit_transform(np.hstack([x, block]))[:, 3:].argmax(axis=1)
    np.testing.assert_array_equal(ours[:, 0], theirs)


@pytest.fixture(scope="module")
def noisy():
    """Synthetic, noisy WF at rate 0.3 (the issue's reference setting), five seeds."""
    params = Synthetic.Params(weak_kind="noisy", rate=0.3)
    return [Synthetic().load(params, seed) for seed in SEEDS]


def _mean(method, datas, metric=Accuracy, **params):
    p = method.Params(**params)
    return np.mean([metric().compute(d, method(p).run(d, p, s)) for s, d in enumerate(datas)])


def test_wfl_sequential_estimates_better_than_observed_value(noisy):
    # Reference run (issue 8): about 0.78 against 0.70; measured 0.79 against 0.70.
    observed = np.mean([np.mean(d.obs_test == d.v_test) for d in noisy])
    assert abs(observed - 0.7) < 0.03  # the flip rate 0.3, binomial error over 3,000 rows
    assert _mean(WflSequential, noisy, WfAccuracy) > observed + 0.05


def test_downstream_ordering_oracle_wfl_naive_drop(noisy):
    oracle, wfl = _mean(Oracle, noisy), _mean(WflSequential, noisy)
    naive, drop = _mean(Naive, noisy), _mean(DropFeature, noisy)
    assert oracle >= wfl >= naive - 0.01  # issue 8 tolerance: 0.01 in mean accuracy
    assert naive > drop


def test_iterative_and_joint_estimate_better_than_observed_value(noisy):
    data = noisy[0]
    observed = np.mean(data.obs_test == data.v_test)
    for method in (WflIterative, WflJoint):
        p = method.Params(epochs=100)
        assert WfAccuracy().compute(data, method(p).run(data, p, 0)) > observed, method.name


def test_downstream_error_rises_monotonically_in_epsilon(noisy):
    errors = [1 - _mean(EmulatedEstimator, noisy, epsilon=e) for e in (0.0, 0.25, 0.5, 0.75)]
    assert np.all(np.diff(errors) > 0), errors


def test_emulated_wf_accuracy_is_one_minus_epsilon(noisy):
    acc = _mean(EmulatedEstimator, noisy, WfAccuracy, epsilon=0.4)
    assert abs(acc - 0.6) < 4 * np.sqrt(0.24 / (5 * 600))  # binomial error over 3,000 rows


@pytest.mark.parametrize("method", [ModeImpute, KnnImpute, IterativeImpute])
def test_imputers_skip_noisy_and_impute_missing(method):
    params = Synthetic.Params(n=400)
    with pytest.raises(Skip):
        method().run(Synthetic().load(params, 0), method.Params(), 0)
    missing = Synthetic.Params(n=400, weak_kind="missing-mcar")
    data = Synthetic().load(missing, 0)
    out = method().run(data, method.Params(), 0)
    assert np.all((out.v_hat_test >= 0) & (out.v_hat_test < data.n_levels[0]))
    observed = data.obs_test[:, 0] >= 0
    np.testing.assert_array_equal(out.v_hat_test[observed, 0], data.v_test[observed, 0])


@pytest.mark.parametrize(
    "method",
    [
        Oracle,
        Naive,
        DropFeature,
        ModeImpute,
        KnnImpute,
        IterativeImpute,
        HgbNative,
        WflSequential,
        WflIterative,
        WflJoint,
        EmulatedEstimator,
    ],
)
def test_methods_do_not_mutate_data(method):
    data = Synthetic().load(Synthetic.Params(n=200, weak_kind="partial"), 0)
    before = copy.deepcopy(data)
    params = method.Params(epochs=20) if hasattr(method.Params(), "epochs") else method.Params()
    out = method(params).run(data, params, 0)
    assert data == before
    assert out.y_score.shape == data.y_test.shape
    assert np.all((out.y_score >= 0) & (out.y_score <= 1))
