"""Datasets: the synthetic patches follow x = [y mu, xi]; flips are a fixed count."""

from __future__ import annotations

import numpy as np
import pytest
from harness_label_noise import datasets
from harness_label_noise.api import flip_labels

from harness.components import validate_params
from harness.errors import ParamsError


def test_signal_patch_is_label_times_mu_and_noise_patch_is_isotropic():
    ds = datasets.SignalNoisePatches()
    data = ds.load(ds.Params(n=400, d=300, signal_norm=2.0, noise_sd=0.5), seed=0)
    assert np.allclose(data.x_train[:, 0], data.y_true[:, None] * data.mu[None, :])
    assert np.linalg.norm(data.mu) == pytest.approx(2.0)
    assert data.x_train[:, 1].std() == pytest.approx(0.5, rel=0.02)
    assert ds.describe(data)["n_snr2"] == pytest.approx(400 * 4 / (0.25 * 300), rel=0.02)


def test_flips_are_exactly_round_tau_n_and_test_labels_are_clean():
    ds = datasets.SignalNoisePatches()
    data = ds.load(ds.Params(n=101, n_val=30, tau=0.3), seed=1)
    assert data.noisy.sum() == round(0.3 * 101)
    assert np.all(data.x_test[:, 0] @ data.mu * data.y_test > 0)  # y_test is the signal's sign


def test_flip_labels_negates_a_fixed_count():
    y = np.ones(50)
    assert (flip_labels(y, 0.1, np.random.default_rng(0)) == -1).sum() == 5


def test_tau_outside_range_is_refused_by_the_params_annotation():
    with pytest.raises(ParamsError, match="tau"):
        validate_params(datasets.SignalNoisePatches, {"tau": 0.5})


def test_digits_pair_uses_a_fixed_test_split_and_seeded_training_draws():
    ds = datasets.DigitsBinary()
    params = ds.Params(pair="3-vs-8", n=60, n_val=20, tau=0.2)
    a, b = ds.load(params, 0), ds.load(params, 1)
    assert a.x_train.shape == (60, 1, 64) and a.x_test.shape == (357 // 4, 1, 64)
    assert np.array_equal(a.y_test, b.y_test)
    assert not np.array_equal(a.x_train, b.x_train)
    assert a.noisy.sum() == 12 and a.mu is None


def test_digits_refuses_more_samples_than_the_pair_has():
    ds = datasets.DigitsBinary()
    with pytest.raises(ValueError, match="exceeds"):
        ds.load(ds.Params(pair="3-vs-8", n=300, n_val=100), 0)


@pytest.mark.parametrize("pair", ["3-vs-8", "1-vs-7", "low-vs-high"])
def test_digits_file_read_directly_equals_scikit_learns_load_digits(pair):
    """The bundled file read without importing scikit-learn gives ``load_digits``' images
    and classes; fails if the pixels are not divided by 16 or the class column is misread."""
    from sklearn.datasets import load_digits

    images, digits = load_digits(return_X_y=True)
    x, y = datasets._digits(pair)
    if pair == "low-vs-high":
        keep, positive = np.ones(digits.size, bool), digits >= 5
    else:
        a, b = (int(c) for c in pair.split("-vs-"))
        keep, positive = np.isin(digits, [a, b]), digits == b
    assert np.array_equal(x, images[keep] / 16.0)
    assert np.array_equal(y, np.where(positive[keep], 1.0, -1.0))
