"""Prompts, their summaries and the output type."""

import numpy as np
import pytest
from harness_icl_gmm.data import IclData, IclOutput, MixtureLaw
from harness_icl_gmm.datasets import covariance


def _data(classes=3, length=7, prompts=2500, seed=3):
    law = MixtureLaw(covariance(3, 4.0, seed), 1.5, classes)
    return IclData(law, law, length, 5, prompts, 1200, seed)


def test_context_means_are_the_explicit_prompts_summarised():
    data = _data()
    explicit = data.prompts("train", 900, 2100)
    summary = data.context_means("train", 900, 2100)
    assert np.allclose(explicit.class_means(3), summary.class_means, atol=1e-12)
    assert np.array_equal(explicit.query_y, summary.query_y)


def test_a_prompt_range_is_cut_from_the_same_chunks():
    data = _data()
    assert np.array_equal(data.prompts("train").query_x[900:2100],
                          data.prompts("train", 900, 2100).query_x)  # fmt: skip


def test_context_points_have_the_class_mean_and_covariance_lambda():
    data = _data(classes=2, length=50, prompts=4000, seed=0)
    prompts = data.prompts("train")
    noise = prompts.context_x - np.take_along_axis(prompts.means, prompts.context_y[..., None], 1)
    assert np.allclose(np.cov(noise.reshape(-1, 3).T), data.train_law.covariance, atol=0.03)
    radius = np.einsum("pkd,de,pke->pk", prompts.means, data.train_law.precision, prompts.means)
    assert np.allclose(np.sqrt(radius), 1.5)


def test_random_labels_carry_no_information_about_the_points():
    data = _data(classes=2, length=200, prompts=3000)
    informative = data.context_means("train")
    random = data.context_means("train", random_labels=True)
    gap = lambda m: np.abs(m.class_means[:, 1] - m.class_means[:, 0]).mean()  # noqa: E731
    assert gap(random) < 0.25 * gap(informative)


def test_posterior_is_bayes_for_known_means():
    law = MixtureLaw(np.eye(2), 1.0, 2)
    means = np.array([[[1.0, 0.0], [-1.0, 0.0]]])
    p = law.posterior(means, np.array([[0.5, 3.0]]))
    assert p[0, 0] == pytest.approx(1 / (1 + np.exp(-2 * 0.5)))


@pytest.mark.parametrize(
    ("probs", "match"),
    [(np.array([[np.nan, 1.0]]), "finite"), (np.array([[0.3, 0.3]]), "sum to 1")],
)
def test_output_rejects_bad_probabilities(probs, match):
    with pytest.raises(ValueError, match=match):
        IclOutput(probs)


def test_law_rejects_a_covariance_that_is_not_positive_definite():
    with pytest.raises(ValueError, match="positive definite"):
        MixtureLaw(np.diag([1.0, -1.0]), 1.0, 2)
