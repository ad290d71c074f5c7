"""Metrics on hand-made outputs with known answers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from harness_label_noise import metrics
from harness_label_noise.api import NoisyLabelData, TrainingOutput

from harness import Skip


@pytest.fixture
def toy() -> NoisyLabelData:
    """Four training samples, the last flipped; two test samples."""
    x = np.zeros((4, 2, 3))
    y = np.array([1.0, -1.0, 1.0, -1.0])
    observed = y.copy()
    observed[3] = 1.0
    return NoisyLabelData(x, observed, y, x[:2], y[:2], x[:2], np.array([1.0, -1.0]),
                          np.zeros(3), 0.25)  # fmt: skip


def _run(toy: NoisyLabelData, returned: int = 2) -> TrainingOutput:
    # t = 0: nothing fitted; t = 1: the clean ones; t = 2: all, the flipped one memorised
    train = np.array([[-1.0, 1.0, -1.0, -1.0], [1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, 1.0]])
    test = np.array([[1.0, 1.0], [1.0, -1.0], [1.0, 1.0]])  # accuracy 0.5, 1, 0.5
    return TrainingOutput(train, np.arange(3), test[:, :2], test, returned, np.ones(4, bool))


def test_stages_read_t1_and_the_noisy_fit_before_and_after(toy):
    got = metrics.Stages().compute(toy, _run(toy))
    assert got == {"t_clean": 1.0, "noisy_fit_at_t_clean": 0.0, "noisy_fit_final": 1.0,
                   "clean_fit_final": 1.0, "memorised": 1.0}  # fmt: skip


def test_test_summary_peak_final_drop_and_returned(toy):
    got = metrics.TestSummary().compute(toy, _run(toy, returned=1))
    assert got == {"peak": 1.0, "final": 0.5, "peak_step": 1.0, "drop": 0.5, "returned": 1.0}


def test_train_accuracy_noisy_is_against_the_flipped_label(toy):
    curve = metrics.TrainAccuracyNoisy().compute(toy, _run(toy))
    assert curve.values.tolist() == [0.0, 0.0, 1.0]


def test_selection_scores_kept_clean_and_dropped_flipped(toy):
    out = dataclasses.replace(_run(toy), trained_on=np.array([True, True, False, False]))
    got = metrics.Selection().compute(toy, out)
    assert got == {"clean_kept": pytest.approx(2 / 3), "noisy_dropped": 1.0,
                   "balanced": pytest.approx(5 / 6)}  # fmt: skip


def test_metrics_needing_flips_skip_on_clean_labels(toy):
    clean = dataclasses.replace(toy, y_train=toy.y_true, tau=0.0)
    with pytest.raises(Skip, match="tau = 0"):
        metrics.Stages().compute(clean, _run(clean))


def test_coefficient_metrics_skip_without_coefficients(toy):
    with pytest.raises(Skip, match="coefficients"):
        metrics.SignalCoefficient().compute(toy, _run(toy))
