"""Metrics of the ``label-noise`` task: accuracy and coefficient curves over iterations, and
the scalars the claims read (peak and final test accuracy, stage timings, selection quality).

Training accuracies are against the *observed* labels (for a flipped sample: whether its
wrong label is fitted, i.e. memorised); test accuracy is against true labels.
"""

from __future__ import annotations

import numpy as np

from harness import Curve, Metric, Skip
from harness_label_noise._decomposition import coefficient_curves, fit_curves, stage_one_end
from harness_label_noise.data import NoisyLabelData, TrainingOutput

__all__ = [
    "CoefficientOrder",
    "NoiseCoefficientClean",
    "NoiseCoefficientNoisy",
    "Selection",
    "SignalCoefficient",
    "Stages",
    "TestAccuracy",
    "TestSummary",
    "TrainAccuracyClean",
    "TrainAccuracyNoisy",
]


def _test_accuracy(data: NoisyLabelData, output: TrainingOutput) -> np.ndarray:
    return (np.sign(output.test_scores) == data.y_test[None, :]).mean(axis=1)


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
        (first iteration of the peak), ``drop``, and ``returned``: the accuracy of the model
        the method returns (the final one, or the early-stopped one).
    """

    __test__ = False
    name = "test-summary"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> dict[str, float]:
        accuracy = _test_accuracy(data, output)
        peak = int(np.argmax(accuracy))
        return {"peak": float(accuracy[peak]), "final": float(accuracy[-1]),
                "peak_step": float(output.steps[peak]), "drop": float(accuracy[peak] -
                accuracy[-1]), "returned": float(accuracy[output.returned])}  # fmt: skip


class Stages(Metric):
    """The two stages read off the training accuracies.

    Source: Han et al., ICML 2025, Theorem 4.1 (Stage I: clean samples fitted, flipped ones
    classified by their true label) and Theorem 4.2 (Stage II: flipped labels fitted).

    Returns
    -------
    dict
        ``t_clean``: T_1, the first iteration with every clean sample fitted (else the first
        of the highest clean fit); ``noisy_fit_at_t_clean``: fraction of flipped labels
        fitted then; ``noisy_fit_final`` and ``clean_fit_final``: at the horizon;
        ``memorised = noisy_fit_final - noisy_fit_at_t_clean``.
    """

    name = "stages"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> dict[str, float]:
        _needs_flips(data, self.name)
        clean, noisy = fit_curves(data, output)
        t1 = stage_one_end(clean)
        return {"t_clean": float(t1), "noisy_fit_at_t_clean": float(noisy[t1]),
                "noisy_fit_final": float(noisy[-1]), "clean_fit_final": float(clean[-1]),
                "memorised": float(noisy[-1] - noisy[t1])}  # fmt: skip


class CoefficientOrder(Metric):
    """Which coefficient leads, at the end of Stage I and at the horizon, as normalised
    differences in [-1, 1].

    Source: Han et al., ICML 2025, Theorems 4.1-4.2 (gamma > rho for every sample at T_1;
    rho > gamma for flipped samples after Stage II); synthetic figure (top row).

    Returns
    -------
    dict
        ``signal_lead = (gamma - rho_noisy) / (gamma + rho_noisy)`` at the first recorded
        iteration >= max(T_1, 1), ``noise_lead = (rho_noisy - gamma) / (gamma + rho_noisy)``
        at the horizon, and ``both = min(signal_lead, noise_lead)`` (> 0: the order flips).
    """

    name = "coefficient-order"
    task = "label-noise"

    def compute(self, data: NoisyLabelData, output: TrainingOutput) -> dict[str, float]:
        _needs_flips(data, self.name)
        gamma, _, rho = _coefficients(data, output, self.name)
        clean, _ = fit_curves(data, output)
        at = int(np.searchsorted(output.steps, max(stage_one_end(clean), 1)))
        total = np.abs(gamma) + np.abs(rho)
        if total[at] == 0 or total[-1] == 0:
            raise Skip(f"{self.name}: gamma and rho are both 0 (no training step taken)")
        first = float((gamma[at] - rho[at]) / total[at])
        last = float((rho[-1] - gamma[-1]) / total[-1])
        return {"signal_lead": first, "noise_lead": last, "both": min(first, last)}


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
