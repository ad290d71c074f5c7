"""The single-layer model as a convex problem in W: gradient, minimiser, GD's rate."""

import numpy as np
import pytest
from harness_icl_gmm import _linear
from harness_icl_gmm.data import IclData, MixtureLaw
from harness_icl_gmm.datasets import covariance
from harness_icl_gmm.metrics import fitted_rate


@pytest.fixture(scope="module")
def train():
    law = MixtureLaw(covariance(3, 4.0, 0), 1.5, 2)
    return _linear.features(IclData(law, law, 20, 5, 3000, 10, 0).context_means("train"))


def test_gradient_matches_finite_differences(train):
    w = np.random.default_rng(0).standard_normal((3, 3)) * 0.3
    e = np.zeros((3, 3))
    e[1, 2] = 1e-6
    numeric = (train.loss(w + e) - train.loss(w - e)) / 2e-6
    assert train.gradient(w)[1, 2] == pytest.approx(numeric, rel=1e-5)


def test_two_class_softmax_is_the_papers_sigmoid_with_plus_minus_one_labels():
    law = MixtureLaw(np.eye(2), 1.0, 2)
    prompts = IclData(law, law, 6, 5, 10, 10, 1).prompts("train")
    w = np.array([[1.0, 0.5], [-0.2, 2.0]])
    summary = prompts.class_means(2)
    from harness_icl_gmm.data import ContextMeans

    p = _linear.features(ContextMeans(summary, prompts.query_x, prompts.query_y, prompts.means))
    signs = 2.0 * prompts.context_y - 1.0
    out = np.einsum("pl,pld,de,pe->p", signs, prompts.context_x, w, prompts.query_x) / 6
    assert np.allclose(p.probs(w)[:, 1], 1 / (1 + np.exp(-out)))


def test_minimiser_has_zero_gradient(train):
    assert np.linalg.norm(train.gradient(_linear.minimise(train))) < 1e-10


def test_gd_contracts_at_the_rate_the_hessian_predicts(train):
    w_star = _linear.minimise(train)
    path = _linear.gradient_descent(train, 400, 1.0)
    rho = np.abs(1 - path.step_size * np.linalg.eigvalsh(_linear.hessian(train, w_star))).max()
    distances = np.linalg.norm(path.weights - w_star, axis=(1, 2))
    assert fitted_rate(path.steps, distances) == pytest.approx(np.log(rho), rel=0.02)
