"""The signal-noise decomposition of the CNN's filters and the accuracy curves of a run.

Source: Han et al., ICML 2025, Section 4 (``w_{j,r}(t) = w_{j,r}(0) + j gamma_{j,r}(t)
mu / ||mu||^2 + sum_i rho_{j,r,i}(t) xi_i / ||xi_i||^2``) and the synthetic figure's caption
(max over filters of gamma; max over filters of rho_{j,r,i}, averaged over the clean and
over the flipped samples).
"""

from __future__ import annotations

import numpy as np

from harness_label_noise.data import NoisyLabelData, TrainingOutput

__all__ = ["coefficient_curves", "fit_curves", "signal_noise_coefficients", "stage_one_end"]


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


def stage_one_end(clean_fit: np.ndarray) -> int:
    """T_1: the first iteration at which every clean sample is fitted, or else the first
    iteration of the highest clean fit."""
    return int(np.argmax(clean_fit >= 1.0) if np.any(clean_fit >= 1.0) else np.argmax(clean_fit))
