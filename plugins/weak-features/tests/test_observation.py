"""The observation model methods use without oracle knowledge, and the label model copies."""

import numpy as np
import pytest
import torch
from harness_weak_features._corruption import corrupt, symmetric_transition
from harness_weak_features._models import fit_label_model, torch_module_from
from harness_weak_features._observation import (
    anchor_transition,
    assumed_likelihood,
    estimated_likelihood,
)
from harness_weak_features.datasets import Synthetic

K, N, RATE = 3, 6000, 0.3


def _anchored(informative: bool):
    rng = np.random.default_rng(0)
    v = rng.integers(0, K, size=N)
    x = rng.normal(size=(N, K)) * 0.1 + (4.0 * np.eye(K)[v] if informative else 0.0)
    obs, _ = corrupt(v, K, "noisy", RATE, rng)
    return x, obs


@pytest.mark.parametrize(("informative", "should_pass"), [(True, True), (False, False)])
def test_anchor_estimator_recovers_t_when_anchors_exist(informative, should_pass):
    """With exact anchors (x pins v down) T̂ is T up to sampling error: each row of T̂ is a
    frequency over ~N/K rows, SE sqrt(0.3 * 0.7 / 2000) ≈ 0.01, so 0.05 is 5 SE. Without
    anchors (x carries no information on v) the estimate is far off: the test fails."""
    x, obs = _anchored(informative)
    err = np.abs(anchor_transition(x, obs, K) - symmetric_transition(K, RATE)).max()
    assert bool(err < 0.05) is should_pass, err


def test_assumed_likelihood_per_kind():
    obs = np.array([0, 2, -1])
    np.testing.assert_array_equal(
        assumed_likelihood(obs, "missing-mnar", 3), [[1, 0, 0], [0, 0, 1], [1, 1, 1]]
    )  # MNAR treated as ignorable: a documented misspecification
    np.testing.assert_allclose(
        assumed_likelihood(np.array([1]), "complementary", 3), [[0.5, 0.0, 0.5]]
    )
    np.testing.assert_array_equal(assumed_likelihood(np.array([5]), "partial", 3), [[1, 0, 1]])
    with pytest.raises(ValueError, match="noisy"):
        assumed_likelihood(obs, "noisy", 3)


@pytest.mark.parametrize("kind", ["missing-mcar", "complementary", "noisy"])
def test_estimated_likelihood_never_reads_the_true_model(kind):
    data = Synthetic().load(Synthetic.Params(n=300, weak_kind=kind, rate=0.4), 0)
    before = estimated_likelihood(data)
    data.lik_train[:] = 1.0
    data.lik_test[:] = 1.0
    data.v_train[:] = 0
    after = estimated_likelihood(data)
    for a, b in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


def test_uniform_complementary_assumption_is_exact_at_zero_bias():
    data = Synthetic().load(Synthetic.Params(n=300, weak_kind="complementary", rate=0.0), 0)
    np.testing.assert_allclose(estimated_likelihood(data)[0], data.lik_train)


@pytest.mark.parametrize("label_model", ["logistic", "mlp"])
def test_torch_copy_of_label_model_gives_same_probabilities(label_model):
    rng = np.random.default_rng(0)
    z = rng.normal(size=(200, 4))
    y = (z[:, 0] + z[:, 1] ** 2 > 1).astype(np.int64)
    _, score, model = fit_label_model(z, y, z, 1.0, label_model, 8, 0)
    with torch.no_grad():
        logits = torch_module_from(model)(torch.as_tensor(z, dtype=torch.float32))
    np.testing.assert_allclose(torch.sigmoid(logits).squeeze(1).numpy(), score, atol=1e-5)
