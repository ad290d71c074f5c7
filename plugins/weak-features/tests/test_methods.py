"""The weak loss, the posterior, the training loop and the paper's qualitative claims."""

import copy

import numpy as np
import pytest
import torch
from harness_weak_features._losses import posterior, weak_nll
from harness_weak_features._models import train_full_batch
from harness_weak_features.datasets import Synthetic
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
    WflOracleModel,
    WflSequential,
    chained_impute,
    knn_impute,
)
from harness_weak_features.metrics import Accuracy, WfAccuracy
from scipy import stats
from sklearn.impute import KNNImputer

from harness import Skip


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


def _decayed(train, decays):
    """Two tensors under a loss that depends on the first only; returns the second."""
    x = torch.randn(30, 3, generator=torch.Generator().manual_seed(1))
    y = x @ torch.tensor([1.0, -2.0, 0.5])
    w, u = torch.zeros(3, requires_grad=True), torch.ones(3, requires_grad=True)
    train([w, u], lambda: ((x @ w - y) ** 2).mean() + 0.0 * u.sum(), 50, 0.1, decays)
    return w, u


def _one_decay_for_all(params, loss, epochs, lr, decays):
    """Wrong variant: the first tensor's weight decay applied to every tensor."""
    return train_full_batch(params, loss, epochs, lr, decays[0])


@pytest.mark.parametrize(("train", "kept"), [(train_full_batch, True), (_one_decay_for_all, False)])
def test_full_batch_adam_applies_each_tensors_own_weight_decay(train, kept):
    # f and h of joint training get different decays: u has none and no gradient, so it
    # must stay at 1; one decay for all (0.5) shrinks it.
    w, u = _decayed(train, [0.5, 0.0])
    assert torch.allclose(u, torch.ones(3)) is kept
    assert float(w[1].detach()) < -0.5  # the first tensor is still fitted


def test_knn_impute_matches_sklearn_knn_imputer():
    rng = np.random.default_rng(0)
    x, codes = rng.normal(size=(80, 3)), rng.integers(0, 4, size=(80, 1)).astype(float)
    codes[rng.random(80) < 0.4] = np.nan
    ours = knn_impute(x, codes, x, codes, 5)
    block = np.where(np.isnan(codes), np.nan, np.eye(4)[np.nan_to_num(codes[:, 0]).astype(int)])
    theirs = KNNImputer(n_neighbors=5).fit_transform(np.hstack([x, block]))[:, 3:].argmax(axis=1)
    np.testing.assert_array_equal(ours[:, 0], theirs)


# -- paired-seed claims ------------------------------------------------------------------
#
# Each claim compares two methods on the same data (same seed: same rows, split and
# corruption) and passes when the lower end of the Student-t 95% CI of the mean paired
# difference is above zero. Effects and standard errors measured on synthetic (n = 2,000,
# 20 seeds, /tmp measurement in the README) are quoted at each test; each test is also run on
# a deliberately wrong variant that must fail the same criterion.


class IgnoresObservation(WflSequential):
    """Wrong variant: WFL whose likelihood is flat, so f never learns from the weak feature."""

    name = "wfl-ignores-observation"

    def likelihoods(self, data):
        lik_train, lik_test = super().likelihoods(data)
        return np.ones_like(lik_train), np.ones_like(lik_test)


_RUNS: dict = {}


def _scores(method, datas, metric=Accuracy, **params):
    """``metric`` per seed; each (method, data list, params) runs once per module."""
    key = (method, id(datas), tuple(sorted(params.items())))
    if key not in _RUNS:
        p = method.Params(**params)
        _RUNS[key] = [method(p).run(d, p, s) for s, d in enumerate(datas)]
    return np.array([metric().compute(d, o) for d, o in zip(datas, _RUNS[key], strict=True)])


def clearly_above(diff) -> bool:
    """Lower end of the Student-t 95% CI of ``mean(diff)`` is above 0."""
    diff = np.asarray(diff, dtype=float)
    se = diff.std(ddof=1) / np.sqrt(diff.size)
    return bool(diff.mean() - stats.t.ppf(0.975, diff.size - 1) * se > 0)


def _synthetic(kind, rate, seeds):
    params = Synthetic.Params(n=2000, weak_kind=kind, rate=rate)
    return [Synthetic().load(params, seed) for seed in seeds]


@pytest.fixture(scope="module")
def noisy():
    """Synthetic, noisy WF at rate 0.3, eight seeds."""
    return _synthetic("noisy", 0.3, range(8))


@pytest.fixture(scope="module")
def complementary():
    """Synthetic, every WF value complementary (uniform), eight seeds."""
    return _synthetic("complementary", 0.0, range(8))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "should_pass"), [(WflSequential, True), (IgnoresObservation, False)]
)
def test_wfl_estimates_noisy_feature_better_than_observed_value(noisy, method, should_pass):
    # Round 2 (20 seeds; not in the committed evidence): wf-accuracy 0.734 against the
    # observed 0.700, with T estimated by anchor points; the flat-likelihood variant 0.252.
    observed = np.array([np.mean(d.obs_test == d.v_test) for d in noisy])
    assert clearly_above(_scores(method, noisy, WfAccuracy) - observed) is should_pass


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "should_pass"), [(WflSequential, True), (IgnoresObservation, False)]
)
def test_wfl_uses_complementary_feature_over_drop_feature(complementary, method, should_pass):
    # Round 2 (20 seeds; not in the committed evidence): +0.026, SE 0.0024; the
    # flat-likelihood variant, drop-feature in disguise, +0.0015, SE 0.0017.
    gain = _scores(method, complementary) - _scores(DropFeature, complementary)
    assert clearly_above(gain) is should_pass


class ComplementAsValue(WflSequential):
    """Wrong variant: the complementary value read as the value itself (``P(o | v) = 1[v = o]``),
    the mistake of feeding CFL's ``comp`` value to f as a label."""

    name = "wfl-complement-as-value"

    def likelihoods(self, data):
        k = max(data.n_levels)
        return tuple(
            (obs[:, :, None] == np.arange(k)[None, None, :]).astype(np.float64)
            for obs in (data.obs_train, data.obs_test)
        )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "should_pass"), [(WflSequential, True), (ComplementAsValue, False)]
)
def test_wfl_complementary_posterior_beats_x_only_estimate(complementary, method, should_pass):
    # The posterior p(v | x_o, not v_bar) must be more accurate than the estimate from x_o
    # alone (the flat-likelihood variant's). Reading "not v_bar" as "v_bar" puts every
    # estimate on a value the row is known not to have (wf-accuracy 0).
    baseline = _scores(IgnoresObservation, complementary, WfAccuracy)
    gain = _scores(method, complementary, WfAccuracy) - baseline
    assert clearly_above(gain) is should_pass


class JointIgnoresObservation(WflJoint):
    """Wrong variant: joint WFL with a flat likelihood (the weak feature is dropped)."""

    name = "wfl-joint-ignores-observation"

    def likelihoods(self, data):
        lik_train, lik_test = super().likelihoods(data)
        return np.ones_like(lik_train), np.ones_like(lik_test)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "should_pass"), [(WflJoint, True), (JointIgnoresObservation, False)]
)
def test_joint_wfl_above_naive_on_uniform_complementary(complementary, method, should_pass):
    # Committed evidence (results/weak-features.parquet, synthetic n = 2,000, 10 seeds):
    # wfl-joint - naive = +0.027 [+0.017, +0.037]; wfl-sequential (hard) +0.017 [+0.007,
    # +0.028], the claim wfl-sequential-beats-naive-complementary. This test's 8 seeds are
    # seeds 0-7 of the same data.
    assert clearly_above(_scores(method, complementary) - _scores(Naive, complementary)) is (
        should_pass
    )


@pytest.fixture(scope="module")
def biased():
    """Synthetic, every WF value complementary with bias 0.6 towards v + 1, eight seeds."""
    return _synthetic("complementary", 0.6, range(8))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "should_pass"), [(WflOracleModel, True), (IgnoresObservation, False)]
)
def test_true_complementary_model_beats_uniform_assumption_when_biased(biased, method, should_pass):
    # Measured (10 seeds, round 2): wfl-oracle-model 0.752 against wfl-sequential 0.687 (the
    # uniform assumption is misspecified at bias 0.6). In the true model's place, a model that
    # carries no knowledge of the observation (flat likelihood) must not beat the uniform
    # assumption. (A model with the bias mirrored to v - 1 does beat it: its hard estimates
    # are a relabelling of the right ones, which h undoes, so it is no wrong variant here.)
    gain = _scores(method, biased) - _scores(WflSequential, biased)
    assert clearly_above(gain) is should_pass


@pytest.mark.slow
def test_oracle_above_wfl_and_oracle_model_above_naive_on_noisy(noisy):
    # Round 2 (20 seeds; not in the committed evidence): oracle - wfl-oracle-model clearly
    # positive; wfl-oracle-model - naive +0.0093 +- 0.0022 (SE), so with 8 seeds only the
    # sign is asserted.
    oracle, wfl_true = _scores(Oracle, noisy), _scores(WflOracleModel, noisy)
    assert clearly_above(oracle - wfl_true)
    assert (wfl_true - _scores(Naive, noisy)).mean() > 0


def test_downstream_error_rises_monotonically_in_epsilon(noisy):
    errors = [1 - _scores(EmulatedEstimator, noisy[:5], epsilon=e).mean() for e in (0.0, 0.3, 0.6)]
    assert np.all(np.diff(errors) > 0), errors


def test_emulated_wf_accuracy_is_one_minus_epsilon(noisy):
    acc = _scores(EmulatedEstimator, noisy[:5], WfAccuracy, epsilon=0.4).mean()
    assert abs(acc - 0.6) < 4 * np.sqrt(0.24 / (5 * 600))  # binomial error over 3,000 rows


def test_iterative_and_joint_estimate_better_than_observed_value(noisy):
    data = noisy[0]
    observed = np.mean(data.obs_test == data.v_test)
    for method in (WflIterative, WflJoint):
        p = method.Params(epochs=100)
        assert WfAccuracy().compute(data, method(p).run(data, p, 0)) > observed, method.name


# -- no oracle knowledge --------------------------------------------------------------------

NON_ORACLE = [Naive, DropFeature, ModeImpute, KnnImpute, IterativeImpute, HgbNative,
              WflSequential, WflIterative, WflJoint]  # fmt: skip


def _scrambled(data):
    """The same observations with the true values and true observation model replaced."""
    out = copy.deepcopy(data)
    rng = np.random.default_rng(123)
    for split in ("train", "test"):
        v = getattr(out, f"v_{split}")
        v[:] = rng.integers(0, data.n_levels[0], size=v.shape)
        getattr(out, f"lik_{split}")[:] = 1.0
    return out


@pytest.mark.parametrize("kind", ["noisy", "missing-mnar", "complementary"])
@pytest.mark.parametrize("method", [*NON_ORACLE, WflOracleModel])
def test_only_oracle_methods_read_true_values_or_model(method, kind):
    data = Synthetic().load(Synthetic.Params(n=300, weak_kind=kind, rate=0.4), 0)
    params = method.Params(epochs=30) if hasattr(method.Params(), "epochs") else method.Params()
    try:
        out = method(params).run(data, params, 0)
    except Skip:
        return
    same = np.array_equal(method(params).run(_scrambled(data), params, 0).y_score, out.y_score)
    assert same is (method is not WflOracleModel)  # the oracle-model variant must change


# -- nominal codes stay categories ----------------------------------------------------------


def _round_regressed(x, codes):
    """Wrong variant: codes regressed as numbers (IterativeImputer, BayesianRidge), rounded."""
    from sklearn.experimental import enable_iterative_imputer  # noqa: F401
    from sklearn.impute import IterativeImputer

    filled = IterativeImputer(random_state=0).fit_transform(np.hstack([x, codes]))
    return np.clip(np.rint(filled[:, x.shape[1] :]), 0, 3)


def _chained(x, codes):
    return chained_impute(x, codes, (4,), 10, 1, 0)(x, codes)


@pytest.mark.parametrize(("impute", "should_pass"), [(_chained, True), (_round_regressed, False)])
def test_imputation_is_equivariant_to_relabelling_the_categories(impute, should_pass):
    """A nominal imputer does not care how the categories are numbered; one that treats codes
    as numbers (mean, rounding) does."""
    data = Synthetic().load(Synthetic.Params(n=600, weak_kind="missing-mcar", rate=0.4), 0)
    codes = np.where(data.obs_train < 0, np.nan, data.obs_train).astype(float)
    perm = np.array([2, 0, 3, 1])
    relabelled = np.where(np.isnan(codes), np.nan, perm[np.nan_to_num(codes).astype(int)])
    a = perm[impute(data.x_train, codes).astype(int)]
    b = impute(data.x_train, relabelled).astype(int)
    assert bool(np.all(a == b)) is should_pass


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
        WflOracleModel,
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


@pytest.mark.parametrize("method", [Oracle, WflSequential, WflIterative, WflJoint])
def test_mlp_label_model_runs_in_every_strategy(method):
    data = Synthetic().load(Synthetic.Params(n=300, weak_kind="complementary", rate=0.0), 0)
    extra = {"epochs": 30} if hasattr(method.Params(), "epochs") else {}
    mlp, logistic = method.Params(label_model="mlp", **extra), method.Params(**extra)
    a, b = method(mlp).run(data, mlp, 0), method(logistic).run(data, logistic, 0)
    assert a.y_score.shape == data.y_test.shape
    assert not np.allclose(a.y_score, b.y_score)  # the MLP h is used, not the logistic one
