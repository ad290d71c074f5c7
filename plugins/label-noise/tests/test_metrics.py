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


def _run(toy: NoisyLabelData, returned: int = 2, scale: float = 1.0) -> TrainingOutput:
    # t = 0: nothing fitted; t = 1: the clean ones; t = 2: all, the flipped one memorised;
    # at scale 3 every fitted margin is 3 (loss 0.049: below T1_LOSS and T2_LOSS)
    train = np.array([[-1.0, 1.0, -1.0, -1.0], [1.0, -1.0, 1.0, -1.0], [1.0, -1.0, 1.0, 1.0]])
    test = np.array([[1.0, 1.0], [1.0, -1.0], [1.0, 1.0]])  # accuracy 0.5, 1, 0.5
    return TrainingOutput(scale * train, np.arange(3), test[:, :2], test, returned,
                          np.ones(4, bool))  # fmt: skip


def test_stage_one_is_read_when_the_clean_loss_falls_to_its_threshold(toy):
    got = metrics.StageOne().compute(toy, _run(toy, scale=3.0))
    assert got == {"t1": 1.0, "flipped_fit": 0.0, "test_error": 0.0}


def test_stage_one_is_not_the_first_step_that_fits_the_signs(toy):
    # margins of 1 fit every clean sign at t = 1, but their loss 0.31 is above 0.3
    with pytest.raises(Skip, match="no T_1"):
        metrics.StageOne().compute(toy, _run(toy, scale=1.0))


def test_stage_two_is_read_when_the_training_loss_converges(toy):
    got = metrics.StageTwo().compute(toy, _run(toy, scale=3.0))
    assert got == {"t2": 2.0, "flipped_fit": 1.0, "test_error": 0.5, "memorised": 1.0}


def test_stage_two_skips_a_run_whose_loss_never_converges(toy):
    out = _run(toy, scale=3.0)
    out.train_scores[2, 3] = 0.5  # the flipped sample barely fitted: mean loss 0.155
    with pytest.raises(Skip, match="no T_2"):
        metrics.StageTwo().compute(toy, out)


def test_stage_losses_count_only_the_samples_trained_on(toy):
    out = dataclasses.replace(_run(toy, scale=3.0), trained_on=np.array([1, 1, 1, 0], bool))
    out.train_scores[2, 3] = -3.0  # left out and never fitted: T_2 is that of the kept ones
    assert metrics.StageTwo().compute(toy, out)["t2"] == 1.0


def test_coefficient_order_reads_t1_and_t2(toy):
    coefficients = np.zeros((3, 2, 1, 4, 2))
    coefficients[:, 0, 0, :, 0] = [[0, 0, 0, 0], [1, 0, 1, 0], [1, 0, 1, 0]]  # signal
    coefficients[:, 0, 0, 3, 1] = [0, 0.5, 9]  # the flipped sample's noise
    x = np.zeros((4, 2, 3))
    x[:, 0, 0], x[:, 1, 1] = toy.y_true, 1.0
    data = dataclasses.replace(toy, x_train=x, mu=np.array([1.0, 0, 0]))
    out = dataclasses.replace(_run(toy, scale=3.0), coefficients=coefficients)
    got = metrics.CoefficientOrder().compute(data, out)
    # gamma = 2 at T_1 = 1 and T_2 = 2; rho of the flipped sample 0.5 then 9
    assert got == {"signal_lead": pytest.approx(0.6), "noise_lead": pytest.approx(7 / 11),
                   "both": pytest.approx(0.6)}  # fmt: skip


def test_test_summary_peak_final_drop_and_returned(toy):
    got = metrics.TestSummary().compute(toy, _run(toy, returned=1))
    assert got == {"peak": 1.0, "final": 0.5, "peak_step": 1.0, "drop": 0.5, "returned": 1.0,
                   "recovered": 0.5}  # fmt: skip


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
        metrics.StageOne().compute(clean, _run(clean))


def test_coefficient_metrics_skip_without_coefficients(toy):
    with pytest.raises(Skip, match="coefficients"):
        metrics.SignalCoefficient().compute(toy, _run(toy))
