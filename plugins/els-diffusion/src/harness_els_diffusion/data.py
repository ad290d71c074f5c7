"""Data and output objects of the 'els-diffusion' task.

The task: predict, image by image, what a trained convolution-only diffusion model samples
from given initial noise. The data object holds the training set, the trained network's
recorded behaviour (its samples from the evaluation noise, its trajectories from separate
calibration noise) and that noise; a method returns its own samples from the same
evaluation noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DiffusionData", "Samples"]


def _finite(name: str, array: np.ndarray, ndim: int) -> None:
    if array.ndim != ndim:
        raise ValueError(f"{name}: expected {ndim} dimensions, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name}: holds non-finite values")


@dataclass(frozen=True)
class DiffusionData:
    """A training set, a convolutional diffusion model trained on it, and its samples.

    Images are H x W grey levels scaled to [-1, 1] (-1 is the background). Every array is
    float32 and finite (checked on construction).

    Attributes
    ----------
    train_images : ndarray, shape (n_train, H, W)
        The images the network was trained on (the machines' training set too).
    heldout_images : ndarray, shape (n_heldout, H, W)
        Images of the same source never trained on, for the memorisation control.
    eval_noise : ndarray, shape (n_eval, H, W)
        Initial states at t = 1 of the evaluated samples, one independent draw each.
    reference : ndarray, shape (n_eval, H, W)
        The trained network's DDIM samples (t = 0) from ``eval_noise``, in [-1, 1].
    calibration_states : ndarray, shape (steps, n_calibration, H, W)
        The network's states at the start of each sampler step, from calibration noise
        drawn apart from ``eval_noise`` (the only place the machines may calibrate on).
    calibration_x0 : ndarray, shape (steps, n_calibration, H, W)
        The network's clean-image estimates at those states (clipped to [-1, 1]).
    steps : int
        DDIM steps of the sampler, from t = 1 to t = 0.
    network_parameters : int
        Trainable parameters of the network.
    """

    train_images: np.ndarray
    heldout_images: np.ndarray
    eval_noise: np.ndarray
    reference: np.ndarray
    calibration_states: np.ndarray
    calibration_x0: np.ndarray
    steps: int
    network_parameters: int

    def __post_init__(self) -> None:
        for name in ("train_images", "heldout_images", "eval_noise", "reference"):
            _finite(name, getattr(self, name), 3)
        for name in ("calibration_states", "calibration_x0"):
            _finite(name, getattr(self, name), 4)
        if self.reference.shape != self.eval_noise.shape:
            raise ValueError(
                f"reference {self.reference.shape} and eval_noise {self.eval_noise.shape} differ"
            )
        if self.calibration_states.shape[0] != self.steps:
            raise ValueError(
                f"calibration_states has {self.calibration_states.shape[0]} steps, not {self.steps}"
            )

    @property
    def image_shape(self) -> tuple[int, int]:
        """(H, W) of every image."""
        return tuple(self.train_images.shape[1:])


@dataclass(frozen=True)
class Samples:
    """A method's samples from the data's evaluation noise.

    Attributes
    ----------
    images : ndarray of float32, shape (n_eval, H, W)
        Sample ``i`` starts from ``DiffusionData.eval_noise[i]``; in [-1, 1] units, finite.
    patch_sizes : ndarray of int64, shape (steps,) or (0,)
        The patch size used at each sampler step, from t = 1 to t = 0, by a patch machine
        (``H`` or more: the whole image); empty for other methods.
    """

    images: np.ndarray
    patch_sizes: np.ndarray

    def __post_init__(self) -> None:
        _finite("images", self.images, 3)
        if self.patch_sizes.ndim != 1:
            raise ValueError(f"patch_sizes: expected 1 dimension, got {self.patch_sizes.shape}")
