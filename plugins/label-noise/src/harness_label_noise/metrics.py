"""Metrics of the ``label-noise`` task: accuracy and coefficient curves over iterations, and
the scalars the claims read (peak and final test accuracy, the stages read at the training
losses that end them, selection quality).

Training accuracies are against the *observed* labels (for a flipped sample: whether its
wrong label is fitted, i.e. memorised); test accuracy is against true labels.
"""

from __future__ import annotations

import numpy as np

from harness import Curve, Metric, Skip
from harness_label_noise._decomposition import (
    T1_LOSS,
    T2_LOSS,
    coefficient_curves,
    fit_curves,
    stage_times,
)
from harness_label_noise.data import NoisyLabelData, TrainingOutput

__all__ = [
    "CoefficientOrder",
    "NoiseCoefficientClean",
    "NoiseCoefficientNoisy",
    "Selection",
    "SignalCoefficient",
    "StageOne",
    "StageTwo",
    "TestAccuracy",
    "TestSummary",
    "TrainAccuracyClean",
    "TrainAccuracyNoisy",
]


def _test_accuracy(data: NoisyLabelData, output: TrainingOutput) -> np.ndarray:
    return (np.sign(output.test_scores) == data.y_test[None, :]).mean(axis=1)


def _recorded(output: TrainingOutput, t: int) -> int:
    """Index of the first recorded iteration at or after ``t``."""
    return int(np.searchsorted(output.steps, t))


def _times(data: NoisyLabelData, output: TrainingOutput, metric: str, both: bool) -> tuple:
    t1, t2 = stage_times(data, output)
    if t1 is None:
        raise Skip(f"{metric}: the clean samples' loss never fell to {T1_LOSS} (no T_1)")
    if both and t2 is None:
        raise Skip(f"{metric}: the training loss never fell to {T2_LOSS} within"
                   f" {output.train_scores.shape[0] - 1} steps (no T_2)")  # fmt: skip
    return t1, t2


def _needs_flips(data: NoisyLabelData, metric: str) -> None:
    if not data.noisy.any():
        raise Skip(f"{metric} needs flipped training labels; these data have none (tau = 0)")


def _coefficients(data: NoisyLabelData, output: TrainingOutput, metric: str) -> tuple:
    if data.mu is None:
        raise Skip(f"{metric} needs the synthetic model's signal mu; these data have none")
    if output.coefficients is None:
        raise Skip(f"{metric} needs the CNN's patch coefficients; this method gives none")
    return coefficient_curves(data, output.coefficients)


class TrainAccuracyClean(Metric):
    """Training accuracy on the clean samples at the recorded iterations, in [0, 1].

    Source: Han et al., ICML 2025, synthetic figure (bottom row, "clean").
    """

    name = "train-accuracy-clean"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> Curve:
        clean, _ = fit_curves(data, output)
        return Curve(clean[output.steps], output.steps)


class TrainAccuracyNoisy(Metric):
    """Fraction of flipped samples whose *flipped* label is fitted, at the recorded
    iterations, in [0, 1]: about 0 in Stage I (classified by their true label), 1 once
    memorised.

    Source: Han et al., ICML 2025, synthetic figure (bottom row, "noisy").
    """

    name = "train-accuracy-noisy"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> Curve:
        _needs_flips(data, self.name)
        _, noisy = fit_curves(data, output)
        return Curve(noisy[output.steps], output.steps)


class TestAccuracy(Metric):
    """Test accuracy (true labels) at the recorded iterations, in [0, 1], higher is better.

    Source: Han et al., ICML 2025, Theorems 4.2 and 4.4 (test error after each stage).
    """

    __test__ = False
    name = "test-accuracy"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> Curve:
        return Curve(_test_accuracy(data, output), output.steps)


class SignalCoefficient(Metric):
    """``max_{j,r} gamma_{j,r}(t)``, the signal learned, at the recorded iterations (units of
    the filters' inner product with mu; higher = more signal).

    Source: Han et al., ICML 2025, signal-noise decomposition; synthetic figure (top row).
    """

    name = "signal-coefficient"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> Curve:
        gamma, _, _ = _coefficients(data, output, self.name)
        return Curve(gamma, output.steps)


class NoiseCoefficientNoisy(Metric):
    """``max_{j,r} rho_{j,r,i}(t)`` averaged over the flipped samples: their memorisation.

    Source: Han et al., ICML 2025, signal-noise decomposition; synthetic figure (top row).
    """

    name = "noise-coefficient-noisy"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> Curve:
        _needs_flips(data, self.name)
        _, _, noisy = _coefficients(data, output, self.name)
        return Curve(noisy, output.steps)


class NoiseCoefficientClean(Metric):
    """``max_{j,r} rho_{j,r,i}(t)`` averaged over the clean samples.

    Source: Han et al., ICML 2025, signal-noise decomposition; synthetic figure (top row).
    """

    name = "noise-coefficient-clean"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> Curve:
        _, clean, _ = _coefficients(data, output, self.name)
        return Curve(clean, output.steps)


class TestSummary(Metric):
    """Peak, final and returned test accuracy (in [0, 1]), the iteration of the peak, and
    ``drop = peak - final``.

    Source: Han et al., ICML 2025, Theorem 4.2 and Proposition 4.3 (test accuracy high after
    Stage I, lower after Stage II).

    Returns
    -------
    dict
        ``peak`` and ``final`` over the recorded iterates of the final run, ``peak_step``
        (first iteration of the peak), ``drop``, ``returned``: the accuracy of the model
        the method returns (the final one, or the early-stopped one), and ``recovered =
        returned - final``.
    """

    __test__ = False
    name = "test-summary"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> dict[str, float]:
        accuracy = _test_accuracy(data, output)
        peak = int(np.argmax(accuracy))
        return {"peak": float(accuracy[peak]), "final": float(accuracy[-1]),
                "peak_step": float(output.steps[peak]), "drop": float(accuracy[peak] -
                accuracy[-1]), "returned": float(accuracy[output.returned]),
                "recovered": float(accuracy[output.returned] - accuracy[-1])}  # fmt: skip


class StageOne(Metric):
    """Stage I read where it ends: at T_1, the first iteration at which the clean samples'
    mean training loss is at most 0.3 (``T1_LOSS``).

    Source: Han et al., ICML 2025, Theorem 4.1 (Stage I: the clean samples fitted, the
    flipped ones still classified by their true label); the loss threshold is ours.

    Returns
    -------
    dict
        ``t1`` (iterations), ``flipped_fit`` (fraction of flipped labels fitted at T_1, in
        [0, 1]) and ``test_error`` (at the first recorded iteration >= T_1, in [0, 1]).
    """

    name = "stage-one"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> dict[str, float]:
        _needs_flips(data, self.name)
        t1, _ = _times(data, output, self.name, both=False)
        _, noisy = fit_curves(data, output)
        error = 1.0 - _test_accuracy(data, output)[_recorded(output, t1)]
        return {"t1": float(t1), "flipped_fit": float(noisy[t1]), "test_error": float(error)}


class StageTwo(Metric):
    """Stage II read where training has converged: at T_2, the first iteration at which the
    training loss (every sample) is at most 0.1 (``T2_LOSS``).

    Source: Han et al., ICML 2025, Theorem 4.2 (Stage II: the flipped labels fitted, the
    test error up); the loss threshold is ours.

    Returns
    -------
    dict
        ``t2`` (iterations), ``flipped_fit`` and ``test_error`` at T_2 (as for
        ``stage-one``), and ``memorised``: the flipped fit at T_2 minus that at T_1.

    Raises
    ------
    Skip
        If the training loss never reaches 0.1 within the horizon.
    """

    name = "stage-two"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> dict[str, float]:
        _needs_flips(data, self.name)
        t1, t2 = _times(data, output, self.name, both=True)
        _, noisy = fit_curves(data, output)
        error = 1.0 - _test_accuracy(data, output)[_recorded(output, t2)]
        return {"t2": float(t2), "flipped_fit": float(noisy[t2]), "test_error": float(error),
                "memorised": float(noisy[t2] - noisy[t1])}  # fmt: skip


class CoefficientOrder(Metric):
    """Which coefficient leads at T_1 and at T_2 (see ``stage-one``, ``stage-two``), as
    normalised differences in [-1, 1].

    Source: Han et al., ICML 2025, Theorems 4.1-4.2 (gamma > rho for every sample at T_1;
    rho > gamma for flipped samples after Stage II); synthetic figure (top row).

    Returns
    -------
    dict
        ``signal_lead = (gamma - rho_noisy) / (gamma + rho_noisy)`` at the first recorded
        iteration >= T_1, ``noise_lead = (rho_noisy - gamma) / (gamma + rho_noisy)`` at the
        first >= T_2, and ``both = min(signal_lead, noise_lead)`` (> 0: the order flips).
    """

    name = "coefficient-order"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> dict[str, float]:
        _needs_flips(data, self.name)
        gamma, _, rho = _coefficients(data, output, self.name)
        t1, t2 = _times(data, output, self.name, both=True)
        first, last = _recorded(output, max(t1, 1)), _recorded(output, t2)
        total = np.abs(gamma) + np.abs(rho)
        if total[first] == 0 or total[last] == 0:
            raise Skip(f"{self.name}: gamma and rho are both 0 (no training step taken)")
        lead = float((gamma[first] - rho[first]) / total[first])
        late = float((rho[last] - gamma[last]) / total[last])
        return {"signal_lead": lead, "noise_lead": late, "both": min(lead, late)}


class Selection(Metric):
    """How well the final run's training set excludes the flipped samples, in [0, 1].

    Source: Han et al., ICML 2025, Proposition 4.3 (the log 2 loss threshold at T_1 keeps
    every clean sample and no flipped one).

    Returns
    -------
    dict
        ``clean_kept`` (fraction of clean samples trained on), ``noisy_dropped`` (fraction of
        flipped ones left out), ``balanced`` (their mean; 0.5 for a random subset).
    """

    name = "selection"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> dict[str, float]:
        _needs_flips(data, self.name)
        if output.trained_on.all():
            raise Skip(f"{self.name}: the method trained on every sample (no selection)")
        kept = float(output.trained_on[~data.noisy].mean())
        dropped = float(1.0 - output.trained_on[data.noisy].mean())
        return {"clean_kept": kept, "noisy_dropped": dropped, "balanced": (kept + dropped) / 2}
