"""The data and output types reject malformed or non-finite values."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from harness_label_noise.api import NoisyLabelData, TrainingOutput


def _output(**change):
    base = dict(train_scores=np.zeros((4, 5)), steps=np.array([0, 1, 3]),
                val_scores=np.zeros((3, 2)), test_scores=np.zeros((3, 6)), returned=2,
                trained_on=np.ones(5, bool))  # fmt: skip
    return TrainingOutput(**(base | change))


def test_data_rejects_nan_inputs(small):
    x = small.x_train.copy()
    x[0, 1, 0] = np.nan
    with pytest.raises(ValueError, match="x_train must be finite"):
        dataclasses.replace(small, x_train=x)


def test_data_rejects_labels_outside_plus_minus_one(small):
    with pytest.raises(ValueError, match="y_train must hold labels"):
        dataclasses.replace(small, y_train=np.zeros_like(small.y_train))


def test_data_rejects_tau_of_one_half(small):
    with pytest.raises(ValueError, match="tau must lie in"):
        dataclasses.replace(small, tau=0.5)


def test_output_rejects_infinite_scores():
    with pytest.raises(ValueError, match="test_scores must be finite"):
        _output(test_scores=np.full((3, 6), np.inf))


def test_output_steps_must_end_at_the_last_training_row():
    with pytest.raises(ValueError, match="steps must run from 0 to 3"):
        _output(steps=np.array([0, 1, 2]))


def test_output_returned_must_index_steps():
    with pytest.raises(ValueError, match="returned must index steps"):
        _output(returned=3)


def test_noisy_mask_is_where_observed_and_true_labels_differ(small):
    assert isinstance(small, NoisyLabelData)
    assert small.noisy.sum() == round(0.2 * 40)
    assert np.array_equal(small.noisy, small.y_train != small.y_true)
