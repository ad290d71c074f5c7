"""The signal-noise decomposition of the CNN's filters and the accuracy curves of a run.

Source: Han et al., ICML 2025, Section 4 (``w_{j,r}(t) = w_{j,r}(0) + j gamma_{j,r}(t)
mu / ||mu||^2 + sum_i rho_{j,r,i}(t) xi_i / ||xi_i||^2``) and the synthetic figure's caption
(max over filters of gamma; max over filters of rho_{j,r,i}, averaged over the clean and
over the flipped samples).
"""

from __future__ import annotations

import numpy as np

from harness_label_noise.data import NoisyLabelData, TrainingOutput

__all__ = [
    "T1_LOSS",
    "T2_LOSS",
    "coefficient_curves",
    "fit_curves",
    "loss_curves",
    "signal_noise_coefficients",
    "stage_times",
]

T1_LOSS = 0.3
"""Stage I ends when the mean logistic loss of the clean samples falls to this (an average
margin of about 1: the clean samples fitted on the output's own scale, not by a first step's
sign)."""

T2_LOSS = 0.1
"""Stage II is read when the training loss (every sample) falls to this: training has
converged, the flipped samples' losses included."""


def signal_noise_coefficients(
    data: NoisyLabelData, coefficients: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(gamma, rho)`` of shapes (k, 2, m) and (k, 2, m, n) from the patch coefficients.

    Patch 0 of sample i is ``y_i mu`` and patch 1 is ``xi_i``, so the coefficient of ``mu``
    in filter (j, r) is ``sum_i c_{j,r,i,0} y_i``, i.e. ``gamma_{j,r} = j ||mu||^2 sum_i
    c_{j,r,i,0} y_i``, and ``rho_{j,r,i} = c_{j,r,i,1} ||xi_i||^2``. Exact, with no
    orthogonality assumption.
    """
    if data.mu is None:
        raise ValueError("the signal-noise decomposition needs the synthetic model's mu")
    sign = np.array([1.0, -1.0])[None, :, None]
    gamma = sign * float(data.mu @ data.mu) * (coefficients[..., 0] @ data.y_true)
    rho = coefficients[..., 1] * np.sum(data.x_train[:, 1] ** 2, axis=1)
    return gamma, rho


def coefficient_curves(
    data: NoisyLabelData, coefficients: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``max_{j,r} gamma`` and ``max_{j,r} rho_{j,r,i}`` averaged over the clean and over the
    flipped samples (nan where a subset is empty), each of shape (k,)."""
    gamma, rho = signal_noise_coefficients(data, coefficients)
    per_sample = rho.max(axis=(1, 2))  # (k, n)
    noisy = data.noisy
    clean_mean = per_sample[:, ~noisy].mean(axis=1) if (~noisy).any() else np.nan
    noisy_mean = per_sample[:, noisy].mean(axis=1) if noisy.any() else np.nan
    return gamma.max(axis=(1, 2)), clean_mean, noisy_mean


def fit_curves(data: NoisyLabelData, output: TrainingOutput) -> tuple[np.ndarray, np.ndarray]:
    """Training accuracy against the observed labels on the clean and on the flipped samples
    at every iteration, shapes (steps + 1,) each (the second empty without flips)."""
    correct = np.sign(output.train_scores) == data.y_train[None, :]
    return correct[:, ~data.noisy].mean(axis=1), correct[:, data.noisy].mean(axis=1)


def loss_curves(data: NoisyLabelData, output: TrainingOutput) -> tuple[np.ndarray, np.ndarray]:
    """The mean logistic loss ``log(1 + exp(-y~ f))`` (observed labels) of the clean and of
    all samples trained on (``output.trained_on``) at every iteration, shapes (steps + 1,)
    each."""
    loss = np.logaddexp(0.0, -data.y_train[None, :] * output.train_scores)
    kept = output.trained_on
    return loss[:, kept & ~data.noisy].mean(axis=1), loss[:, kept].mean(axis=1)


def stage_times(data: NoisyLabelData, output: TrainingOutput) -> tuple[int | None, int | None]:
    """``(T_1, T_2)``: the first iterations at which the clean samples' mean loss is at most
    :data:`T1_LOSS` and the training loss at most :data:`T2_LOSS` (None if never)."""
    clean, every = loss_curves(data, output)
    return _first(clean <= T1_LOSS), _first(every <= T2_LOSS)


def _first(reached: np.ndarray) -> int | None:
    return int(np.argmax(reached)) if reached.any() else None
