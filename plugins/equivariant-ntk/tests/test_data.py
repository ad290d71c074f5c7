"""The digits dataset and the task's data and output records."""

import numpy as np
import pytest
from harness_equivariant_ntk._kernels import rotate
from harness_equivariant_ntk.data import MeanPredictions
from harness_equivariant_ntk.datasets import RotatedDigits

PARAMS = RotatedDigits.Params(n_train=20, n_test=30, n_off=5)


def test_load_is_deterministic_per_seed_and_differs_across_seeds():
    a, b = RotatedDigits().load(PARAMS, 1), RotatedDigits().load(PARAMS, 1)
    assert np.array_equal(a.x_test, b.x_test) and np.array_equal(a.y_train, b.y_train)
    assert not np.array_equal(a.x_train, RotatedDigits().load(PARAMS, 2).x_train)


def test_test_digits_are_turned_by_their_recorded_quarter_turns():
    from sklearn.datasets import load_digits

    data = RotatedDigits().load(PARAMS, 3)
    upright = [rotate(x, -int(k)) for x, k in zip(data.x_test, data.test_turns, strict=True)]
    images = load_digits().images
    images = images / np.sqrt((images**2).mean(axis=(1, 2), keepdims=True))
    for image in upright:  # each one is a digit image of the set, upright
        assert np.isclose(images, image).all(axis=(1, 2)).any()
    assert set(np.unique(data.test_turns)) <= {0, 1, 2, 3} and len(set(data.test_turns)) > 1


def test_no_rotation_leaves_every_test_digit_upright():
    params = RotatedDigits.Params(n_train=5, n_test=10, n_off=2, test_rotation="none")
    assert not RotatedDigits().load(params, 0).test_turns.any()


def test_images_have_unit_mean_square_and_targets_mean_zero():
    data = RotatedDigits().load(PARAMS, 4)
    assert (data.points**2).mean(axis=(1, 2)) == pytest.approx(1.0)
    assert data.targets.sum(axis=1) == pytest.approx(0.0)


def test_predictions_refuse_non_finite_values_and_mismatched_times():
    good = np.zeros((2, 3, 10))
    with pytest.raises(ValueError, match="finite"):
        MeanPredictions(np.array([1.0, 2.0]), good + np.nan, good, 1)
    with pytest.raises(ValueError, match="number of times"):
        MeanPredictions(np.array([1.0]), good, good, 1)
