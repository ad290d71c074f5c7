"""Data and output objects of the ``equivariant-ntk`` task.

A cell asks: trained on upright digits, what does the ensemble of (infinitely or finitely)
wide networks predict on average, at several training times, for test digits turned by random
quarter turns and for noise images off the data manifold? The data hold the images and the
targets; a method returns its mean predictions at the times of :data:`TIMES`.

Source: Misof, Kessel, Gerken, ICML 2025 (arXiv 2406.06504), abstract: augmented training and
GCNNs "share the same expected prediction over initializations at all training times and even
off the data manifold". The images (scikit-learn's 8x8 digits), the split and the noise images
are this plugin's choices (reconstruction: the paper's experiments use histology images and
QM9, which cannot be shipped).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TIMES", "MeanPredictions", "RotatedImages"]

#: Training times t at which every method reports its mean prediction, in units of the inverse
#: step size (t = lr x steps); ``inf`` is the converged kernel regressor.
TIMES: tuple[float, ...] = (1.0, 10.0, 100.0, 1000.0, float("inf"))


def _finite(name: str, array: np.ndarray) -> None:
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")


@dataclass(frozen=True)
class RotatedImages:
    """Upright training images, rotated test images and off-manifold noise images.

    Attributes
    ----------
    x_train : ndarray of float64, shape (n_train, 8, 8)
        Upright digits, each scaled to unit mean square pixel (unitless).
    y_train : ndarray of int64, shape (n_train,)
        Classes in 0 .. classes - 1.
    x_test : ndarray of float64, shape (n_test, 8, 8)
        Held-out digits, each turned by ``test_turns`` quarter turns, same scaling.
    y_test : ndarray of int64, shape (n_test,)
        Their classes.
    test_turns : ndarray of int64, shape (n_test,)
        Quarter turns (0 .. 3) applied to each test digit.
    x_off : ndarray of float64, shape (n_off, 8, 8)
        Gaussian noise images scaled like the digits: points off the data manifold.
    classes : int
        Number of classes c; targets are one-hot codes minus 1/c (mean zero).
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    test_turns: np.ndarray
    x_off: np.ndarray
    classes: int

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        for name in ("x_train", "x_test", "x_off"):
            _finite(name, getattr(self, name))
        if len(self.x_train) != len(self.y_train) or len(self.x_test) != len(self.y_test):
            raise ValueError("images and labels differ in length")

    @property
    def targets(self) -> np.ndarray:
        """One-hot training targets minus 1/c, float64 (n_train, classes)."""
        return np.eye(self.classes)[self.y_train] - 1.0 / self.classes

    @property
    def points(self) -> np.ndarray:
        """The evaluation points: test images then noise images, (n_test + n_off, 8, 8)."""
        return np.concatenate([self.x_test, self.x_off])


@dataclass(frozen=True)
class MeanPredictions:
    """A method's mean prediction over initialisations at each training time.

    Attributes
    ----------
    times : ndarray of float64, shape (n_times,)
        Training times, a subset of :data:`TIMES` (t = lr x steps).
    test : ndarray of float64, shape (n_times, n_test, classes)
        Mean outputs on ``x_test`` (target units: one-hot minus 1/c).
    off : ndarray of float64, shape (n_times, n_off, classes)
        Mean outputs on ``x_off``.
    depth : int
        Convolution layers of the network whose dynamics these are.
    lr : float
        0 for gradient flow (kernel methods); else the gradient-descent step size.
    """

    times: np.ndarray
    test: np.ndarray
    off: np.ndarray
    depth: int
    lr: float = 0.0

    def __post_init__(self) -> None:
        _finite("test", self.test)
        _finite("off", self.off)
        if not (len(self.times) == len(self.test) == len(self.off)):
            raise ValueError("times, test and off differ in their number of times")
