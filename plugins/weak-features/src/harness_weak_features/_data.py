"""Task data and method output of the ``weak-features`` task.

Source: Sugiyama & Uchida, "A Unified Framework for Generalization Error Analysis of Learning
with Arbitrary Discrete Weak Features", ICML 2025 (PMLR 267:57249-57269), setting of §2.

A row is ``(x_o, o_W, y)``: ordinary features ``x_o`` observed exactly, a *weak observation*
``o_j`` of each discrete weak feature (WF) ``j`` with true value ``v_j`` in ``{0, .., K_j - 1}``,
and a binary label ``y``. Test rows carry weak observations too.

Encoding of ``obs_*`` per ``weak_kind`` (column ``j``, true value ``v``):

- ``noisy``: the observed value, ``v`` with probability ``1 - rate``, else a uniform other value.
- ``missing-mcar`` / ``missing-mar`` / ``missing-mnar``: ``v``, or ``-1`` where missing.
- ``complementary``: every value is observed as one value ``v_bar != v`` ("not v_bar"), as in
  complementary-feature learning; ``v_bar`` is uniform among the other values at ``rate = 0``
  and biased towards ``(v + 1) mod K`` by ``rate`` (see
  :func:`harness_weak_features._corruption.complementary_transition`).
- ``partial``: the candidate set ``S`` as a bitmask ``sum(2**u for u in S)``; ``v`` is in ``S``.

``lik_*[i, j, u]`` is the *true* observation model ``P(o_ij | v_ij = u)`` evaluated at the row's
observation (zero padded for ``u >= K_j``). It is oracle knowledge (the flip rate, the MNAR
mechanism, the complementary bias): only methods whose name says ``oracle`` use it. The others
build ``P(o | v)`` from ``obs_*`` and the kind's standard assumption, estimating what is unknown
(:mod:`harness_weak_features._observation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["WEAK_KINDS", "WeakData", "WeakOutput"]

WEAK_KINDS = ("noisy", "missing-mcar", "missing-mar", "missing-mnar", "complementary", "partial")


@dataclass(eq=False)
class WeakData:
    """Ordinary features, weak observations, true weak values and labels, split train/test.

    Parameters
    ----------
    x_train, x_test : ndarray of float64, shape (n_train, d_o) and (n_test, d_o)
        Ordinary features, standardised with the training mean and standard deviation
        (unitless z-scores).
    obs_train, obs_test : ndarray of int64, shape (n_train, J) and (n_test, J)
        Weak observations, encoded per ``weak_kind`` as in the module docstring.
    lik_train, lik_test : ndarray of float64, shape (n_train, J, K_max) and (n_test, J, K_max)
        ``P(o | v = u)`` of each row's observation under the true observation model (oracle
        knowledge); entries for ``u >= K_j`` are 0. Finite, non-negative, with at least one
        positive entry per row and WF.
    v_train, v_test : ndarray of int64, shape (n_train, J) and (n_test, J)
        True weak-feature values in ``{0, .., K_j - 1}``; for evaluation and the ``oracle`` and
        ``emulated-estimator`` methods only.
    y_train, y_test : ndarray of int64, shape (n_train,) and (n_test,)
        Binary labels in ``{0, 1}``.
    n_levels : tuple of int, length J
        ``K_j``, the number of values of each weak feature (each >= 2).
    weak_names : tuple of str, length J
        Names of the weak features.
    weak_kind : str
        One of ``WEAK_KINDS``.
    rate : float
        Corruption rate in [0, 1): flip or missing probability, complementary bias, or the
        candidate-inclusion probability ``q`` for ``partial``.

    Raises
    ------
    ValueError
        Naming the field: inconsistent shapes, non-finite ``x_*`` or ``lik_*``, a negative
        ``lik_*``, a weak feature with fewer than two levels, a label that is not 0/1, or a
        training label with one class.
    """

    x_train: np.ndarray
    x_test: np.ndarray
    obs_train: np.ndarray
    obs_test: np.ndarray
    lik_train: np.ndarray
    lik_test: np.ndarray
    v_train: np.ndarray
    v_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    n_levels: tuple[int, ...]
    weak_names: tuple[str, ...]
    weak_kind: str
    rate: float

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        if self.weak_kind not in WEAK_KINDS:
            raise ValueError(f"weak_kind must be one of {WEAK_KINDS}, got {self.weak_kind!r}")
        for name, k in zip(self.weak_names, self.n_levels, strict=True):
            if k < 2:
                raise ValueError(f"weak feature {name!r} has {k} level(s); it needs at least 2")
        for split in ("train", "test"):
            n, J = len(getattr(self, f"y_{split}")), len(self.n_levels)
            for field, shape in (("x", (n,)), ("obs", (n, J)), ("v", (n, J)), ("lik", (n, J))):
                arr = getattr(self, f"{field}_{split}")
                if arr.shape[: len(shape)] != shape:
                    raise ValueError(f"{field}_{split} has shape {arr.shape}; expected {shape}+")
            for field in ("x", "lik"):
                arr = getattr(self, f"{field}_{split}")
                if not np.isfinite(arr).all():
                    raise ValueError(f"{field}_{split} has non-finite values (NaN or inf)")
            if (getattr(self, f"lik_{split}") < 0).any():
                raise ValueError(f"lik_{split} has negative entries; it holds probabilities")
        if not np.isin(self.y_train, (0, 1)).all() or not np.isin(self.y_test, (0, 1)).all():
            raise ValueError("y_train and y_test must be 0/1 labels")
        classes = np.unique(self.y_train)
        if classes.size < 2:
            raise ValueError(
                f"y_train has one class ({classes.tolist()}); the label model needs both 0 and 1."
                " Use more rows (n) or another test_fraction."
            )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WeakData):
            return NotImplemented
        return all(
            np.array_equal(np.asarray(getattr(self, f)), np.asarray(getattr(other, f)))
            for f in self.__dataclass_fields__
        )

    @property
    def n_weak(self) -> int:
        """J, the number of weak features."""
        return len(self.n_levels)


@dataclass(eq=False)
class WeakOutput:
    """Predictions of one method on the test rows.

    Parameters
    ----------
    y_pred : ndarray of int64, shape (n_test,)
        Predicted labels in ``{0, 1}``.
    y_score : ndarray of float64, shape (n_test,)
        Predicted probability of label 1, in [0, 1].
    v_hat_test : ndarray of int64, shape (n_test, J), or None
        Estimated weak-feature values of the test rows (``-1`` = no estimate, counted as
        wrong); ``None`` for methods that do not estimate the weak features.

    Raises
    ------
    ValueError
        Naming the field: ``y_score`` not finite or outside [0, 1], ``y_pred`` not 0/1, or
        ``v_hat_test`` not two-dimensional.
    """

    y_pred: np.ndarray
    y_score: np.ndarray
    v_hat_test: np.ndarray | None = None

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        score = np.asarray(self.y_score, dtype=np.float64)
        if not np.isfinite(score).all():
            raise ValueError("y_score has non-finite values (NaN or inf)")
        if ((score < 0) | (score > 1)).any():
            raise ValueError("y_score must be probabilities in [0, 1]")
        if not np.isin(self.y_pred, (0, 1)).all():
            raise ValueError("y_pred must be 0/1 labels")
        if self.v_hat_test is not None and np.ndim(self.v_hat_test) != 2:
            raise ValueError(
                f"v_hat_test must have shape (n_test, J), got {np.shape(self.v_hat_test)}"
            )
