"""Data and output objects of the ``label-noise`` task.

A cell asks: trained by gradient descent on labels of which a fraction ``tau`` is flipped,
does a classifier first learn the signal (clean samples fitted, flipped samples still
classified by their true label) and then memorise the noise (flipped labels fitted, test
accuracy down)? The data hold training inputs as patches with their observed (possibly
flipped) and true labels, a held-out validation split with observed labels, and a test split
with true labels. A method returns the scores of its model along training.

Source: Han, Huang, Zhou, Niu, Chen, Yan, Takeda, Suzuki, "On the Role of Label Noise in the
Feature Learning Process", ICML 2025 (arXiv 2505.18909), Section 3 (data model and training).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NoisyLabelData", "TrainingOutput"]


@dataclass(frozen=True)
class NoisyLabelData:
    """A binary task with flipped training labels; inputs are stacks of patches.

    Attributes
    ----------
    x_train : ndarray of float64, shape (n, p, d)
        Training inputs, p patches of dimension d each (the synthetic model: patch 0 is
        ``y mu``, patch 1 the noise ``xi``).
    y_train : ndarray of float64, shape (n,)
        Observed training labels in {-1, +1}: the true label, flipped for a fraction tau.
    y_true : ndarray of float64, shape (n,)
        True training labels in {-1, +1}; methods must not read them (metrics do).
    x_val : ndarray of float64, shape (n_val, p, d)
        Held-out inputs for early stopping and sample selection.
    y_val : ndarray of float64, shape (n_val,)
        Their observed labels, flipped at the same rate as the training labels.
    x_test : ndarray of float64, shape (n_test, p, d)
        Test inputs.
    y_test : ndarray of float64, shape (n_test,)
        True test labels (never flipped).
    mu : ndarray of float64, shape (d,), or None
        The signal vector of the synthetic model (zeros for the signal-free control);
        None for real data, where the signal coefficient is not defined.
    tau : float
        The flip rate the data were made with, in [0, 0.5).
    """

    x_train: np.ndarray
    y_train: np.ndarray
    y_true: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    mu: np.ndarray | None
    tau: float

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        arrays = ["x_train", "y_train", "y_true", "x_val", "y_val", "x_test", "y_test"]
        for name in [*arrays, *(["mu"] if self.mu is not None else [])]:
            _check_finite(name, getattr(self, name))
        n, p, d = _shape3("x_train", self.x_train)
        for split in ("val", "test"):
            rows, *rest = _shape3(f"x_{split}", getattr(self, f"x_{split}"))
            if rest != [p, d]:
                raise ValueError(f"x_{split} patches {rest} differ from x_train's {[p, d]}")
            _check_labels(f"y_{split}", getattr(self, f"y_{split}"), rows)
        _check_labels("y_train", self.y_train, n)
        _check_labels("y_true", self.y_true, n)
        if self.mu is not None and self.mu.shape != (d,):
            raise ValueError(f"mu must have shape ({d},), got {self.mu.shape}")
        if not 0.0 <= self.tau < 0.5:
            raise ValueError(f"tau must lie in [0, 0.5), got {self.tau}")

    @property
    def noisy(self) -> np.ndarray:
        """Boolean mask of the flipped training samples, shape (n,)."""
        return self.y_train != self.y_true


@dataclass(frozen=True)
class TrainingOutput:
    """Scores of one model along full-batch training.

    Attributes
    ----------
    train_scores : ndarray of float64, shape (steps + 1, n)
        ``f(W(t), x_i)`` on every training input at every iteration t = 0..steps (also the
        samples a method left out of training, see ``trained_on``).
    steps : ndarray of int64, shape (k,)
        Increasing iterations at which the held-out scores were recorded, from 0 to steps.
    val_scores : ndarray of float64, shape (k, n_val)
        ``f`` on the validation inputs at ``steps``.
    test_scores : ndarray of float64, shape (k, n_test)
        ``f`` on the test inputs at ``steps``.
    returned : int
        Index into ``steps`` of the model the method returns (``k - 1`` for a fixed horizon,
        the chosen iteration for early stopping).
    trained_on : ndarray of bool, shape (n,)
        The training samples of the final run (all, except after sample selection).
    coefficients : ndarray of float64, shape (k, 2, m, n, p), or None
        For the two-layer CNN: ``c_{j,r,i,q}`` with ``w_{j,r}(t) = w_{j,r}(0) +
        sum_{i,q} c_{j,r,i,q}(t) x_{i,q}`` (exact: gradient descent moves each filter in the
        span of the training patches); the linear model's as one filter per sign (m = 1,
        see :mod:`harness_label_noise._gd`); None for a method that gives none.
    """

    train_scores: np.ndarray
    steps: np.ndarray
    val_scores: np.ndarray
    test_scores: np.ndarray
    returned: int
    trained_on: np.ndarray
    coefficients: np.ndarray | None = None

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        for name in ("train_scores", "val_scores", "test_scores"):
            _check_finite(name, getattr(self, name))
        if self.coefficients is not None:
            _check_finite("coefficients", self.coefficients)
        k = self.steps.shape[0]
        if self.steps.ndim != 1 or k == 0 or np.any(np.diff(self.steps) <= 0):
            raise ValueError("steps must be a non-empty, strictly increasing 1-D array")
        if self.steps[0] != 0 or self.steps[-1] != self.train_scores.shape[0] - 1:
            raise ValueError(
                f"steps must run from 0 to {self.train_scores.shape[0] - 1} (the rows of"
                f" train_scores), got {self.steps[0]}..{self.steps[-1]}"
            )
        for name in ("val_scores", "test_scores"):
            if getattr(self, name).shape[0] != k:
                raise ValueError(f"{name} has {getattr(self, name).shape[0]} rows, steps {k}")
        if not 0 <= self.returned < k:
            raise ValueError(f"returned must index steps (0..{k - 1}), got {self.returned}")
        if self.trained_on.shape != (self.train_scores.shape[1],):
            raise ValueError(f"trained_on must have shape ({self.train_scores.shape[1]},)")
        if self.coefficients is not None and self.coefficients.shape[0] != k:
            raise ValueError(f"coefficients has {self.coefficients.shape[0]} rows, steps {k}")


def _check_finite(name: str, values: np.ndarray) -> None:
    """ValueError naming ``name`` if ``values`` holds NaN or infinity."""
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite; it holds NaN or infinity")


def _shape3(name: str, x: np.ndarray) -> list[int]:
    if x.ndim != 3 or 0 in x.shape:
        raise ValueError(f"{name} must have shape (rows, patches, dim), got {x.shape}")
    return list(x.shape)


def _check_labels(name: str, y: np.ndarray, rows: int) -> None:
    if y.shape != (rows,):
        raise ValueError(f"{name} must have shape ({rows},), got {y.shape}")
    if not np.all(np.abs(y) == 1):
        raise ValueError(f"{name} must hold labels in {{-1, +1}}")
