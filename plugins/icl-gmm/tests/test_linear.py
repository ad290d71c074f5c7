"""The single-layer model as a convex problem in W: gradient, minimiser, GD's rate."""

import numpy as np
import pytest
from harness_icl_gmm import _linear
from harness_icl_gmm.data import IclData, MixtureLaw
from harness_icl_gmm.datasets import covariance
from harness_icl_gmm.metrics import window_rates

from harness import Skip


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


def _rates(train, path):
    w_star = _linear.minimise(train)
    rho = np.abs(1 - path.step_size * np.linalg.eigvalsh(_linear.hessian(train, w_star))).max()
    return window_rates(path.steps, np.linalg.norm(path.weights - w_star, axis=(1, 2))), rho


def test_gd_contracts_at_the_rate_the_hessian_predicts(train):
    rates, rho = _rates(train, _linear.gradient_descent(train, 400, 1.0))
    assert rates[-1] == pytest.approx(np.log(rho), rel=0.02)


def test_gd_from_a_far_start_contracts_in_every_stretch(train):
    start = 4.0 * np.random.default_rng(1).standard_normal((3, 3)) / np.sqrt(3)
    path = _linear.gradient_descent(train, 400, 1.0, start)
    rates, rho = _rates(train, path)
    assert np.allclose(path.weights[0], start)
    assert rates.max() < 0.9 * np.log(rho)  # the slowest stretch near the local rate


def test_factored_gd_from_the_origin_sits_at_its_saddle(train):
    """W = A B from A = B = 0: every gradient in A and B is 0, so GD never moves (the
    control of the global rate); from a random start it moves."""
    zero = np.zeros((3, 3))
    assert np.all(_linear.gradient_descent(train, 20, 1.0, (zero, zero)).weights == 0)
    rng = np.random.default_rng(2)
    moved = _linear.gradient_descent(train, 20, 1.0, tuple(rng.standard_normal((2, 3, 3))))
    assert not np.allclose(moved.weights[0], moved.final)


def test_window_rates_see_a_plateau():
    """A run that stalls for 200 steps and then contracts: its slowest stretch is 0."""
    steps = np.arange(0, 601, 5)
    distances = np.where(steps < 200, 1.0, 0.95 ** np.clip(steps - 200, 0, None))
    rates = window_rates(steps, distances)
    assert rates.max() == pytest.approx(0.0)
    assert rates.min() == pytest.approx(np.log(0.95))


def test_window_rates_skip_a_run_shorter_than_two_stretches():
    with pytest.raises(Skip, match="fewer than 2 stretches"):
        window_rates(np.arange(0, 151, 5), 0.9 ** np.arange(0, 151, 5))
