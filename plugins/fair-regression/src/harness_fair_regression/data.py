"""Data and output objects of the ``fair-regression`` task.

Source: Chzhen, Denis, Hebiri, Oneto, Pontil, "Fair Regression with Wasserstein
Barycenters", NeurIPS 2020, Section 2 (the "aware" setting: the sensitive attribute ``s``
is available at prediction time); Fukuchi, ICML 2025, Section 2.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["FairRegressionData", "RegressionOutput", "check_groups", "check_predictions"]


def _check_finite(name: str, values: np.ndarray, columns: tuple[str, ...] | None = None) -> None:
    """Raise ValueError naming the split and column of the first non-finite value."""
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    if values.ndim == 2:
        col = int(np.flatnonzero(bad.any(axis=0))[0])
        label = columns[col] if columns else f"column {col}"
        raise ValueError(
            f"{name} has {int(bad[:, col].sum())} NaN/inf value(s) in feature '{label}';"
            " impute or drop those rows before building the data (nothing is dropped silently)."
        )
    raise ValueError(
        f"{name} has {int(bad.sum())} NaN/inf value(s);"
        " impute or drop those rows before building the data (nothing is dropped silently)."
    )


def check_predictions(
    pred: np.ndarray, s: np.ndarray, nan_message: str
) -> tuple[np.ndarray, np.ndarray]:
    """``pred`` as float and ``s`` as arrays, checked to be 1-D, of equal shape and finite.

    Raises
    ------
    ValueError
        If the shapes differ or are not 1-D, or (with ``nan_message``) if ``pred`` holds
        NaN/inf.
    """
    pred = np.asarray(pred, dtype=float)
    s = np.asarray(s)
    if pred.shape != s.shape or pred.ndim != 1:
        raise ValueError(f"pred shape {pred.shape} and s shape {s.shape} must be equal, 1-D")
    if not np.isfinite(pred).all():
        raise ValueError(nan_message)
    return pred, s


def check_groups(
    where: str, s: np.ndarray, n_groups: int, group_names: tuple[str, ...] | None = None
) -> None:
    """Check integer group codes ``s`` in ``0 .. n_groups - 1``, each seen at least twice.

    Parameters
    ----------
    where : str
        Name of the split or argument, used in the error message.
    s : ndarray of int, shape (n,)
        Group codes.
    n_groups : int
        Number of groups M.
    group_names : tuple of str, optional
        Readable group names for messages.

    Raises
    ------
    ValueError
        If a code is outside ``0 .. n_groups - 1``, or a group is missing or has fewer than
        two members in ``s`` (naming the group).
    """
    s = np.asarray(s)
    if s.ndim != 1 or not np.issubdtype(s.dtype, np.integer):
        raise ValueError(f"{where} must be a 1-D integer array of group codes, got {s.dtype}")
    if s.size and (s.min() < 0 or s.max() >= n_groups):
        raise ValueError(f"{where} has group codes outside 0..{n_groups - 1}: {np.unique(s)}")
    counts = np.bincount(s, minlength=n_groups)
    for g, c in enumerate(counts):
        label = f"{g} ('{group_names[g]}')" if group_names else str(g)
        if c == 0:
            raise ValueError(f"group {label} is missing from {where}; every group needs >= 2 rows")
        if c < 2:
            raise ValueError(f"group {label} has {c} row in {where}; every group needs >= 2 rows")


@dataclass(frozen=True, eq=False)
class FairRegressionData:
    """Train / calibration / test splits of a regression problem with a sensitive attribute.

    Source: Chzhen et al., NeurIPS 2020, Section 4 (labeled sample for the base regressor,
    unlabeled sample for the transport maps).

    Attributes
    ----------
    name : str
        Dataset name, e.g. ``"law-school"``.
    X_train : ndarray of float64, shape (n_train, d)
        Features of the labeled training split, in the dataset's units. The sensitive
        attribute is *not* a column; methods append it (aware setting).
    y_train : ndarray of float64, shape (n_train,)
        Target of the training split, in the dataset's target units.
    s_train : ndarray of int64, shape (n_train,)
        Group codes ``0 .. n_groups - 1`` of the training split.
    X_calib : ndarray of float64, shape (n_calib, d)
        Features of the unlabeled calibration split (no target is exposed).
    s_calib : ndarray of int64, shape (n_calib,)
        Group codes of the calibration split.
    X_test : ndarray of float64, shape (n_test, d)
        Features of the test split.
    y_test : ndarray of float64, shape (n_test,)
        Target of the test split.
    s_test : ndarray of int64, shape (n_test,)
        Group codes of the test split.
    feature_names : tuple of str, length d
        Column names of ``X_*``.
    group_names : tuple of str, length n_groups
        Meaning of each group code.
    target_name : str
        Column name of ``y``.
    f_star_test : ndarray of float64, shape (n_test,) or None
        Bayes regressor f*(x, s) = E[Y | X=x, S=s] on the test split (synthetic data only).
    g_star_test : ndarray of float64, shape (n_test,) or None
        Fair Bayes predictor g*(x, s) = sum_s' p_s' Q_{f*|s'}(F_{f*|s}(f*(x, s))) on the test
        split (synthetic data only), in target units.
    f_star_train : ndarray of float64, shape (n_train,) or None
        f* on the training rows (synthetic data only), for the ``oracle`` base regressor.
    f_star_calib : ndarray of float64, shape (n_calib,) or None
        f* on the calibration rows (synthetic data only), for the ``oracle`` base
        regressor and the ``transport-risk`` metric.
    cost_of_fairness : float or None
        U(f*) = min_nu sum_s p_s W_2^2(Law(f* | S=s), nu) = E(f* - g*)^2 in closed form
        (synthetic data only), squared target units.

    Raises
    ------
    ValueError
        If shapes disagree, a feature, target or Bayes prediction holds NaN/inf (naming the
        field or column), or a group is missing from a split or has fewer than two rows
        there (naming the group).
    """

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    s_train: np.ndarray
    X_calib: np.ndarray
    s_calib: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    s_test: np.ndarray
    feature_names: tuple[str, ...]
    group_names: tuple[str, ...]
    target_name: str = "y"
    f_star_test: np.ndarray | None = field(default=None)
    g_star_test: np.ndarray | None = field(default=None)
    f_star_train: np.ndarray | None = field(default=None)
    f_star_calib: np.ndarray | None = field(default=None)
    cost_of_fairness: float | None = None

    def __post_init__(self) -> None:
        d = len(self.feature_names)
        for split in ("train", "calib", "test"):
            X = getattr(self, f"X_{split}")
            s = getattr(self, f"s_{split}")
            if X.ndim != 2 or X.shape[1] != d:
                raise ValueError(f"X_{split} must have shape (n, {d}), got {X.shape}")
            if s.shape != (X.shape[0],):
                raise ValueError(f"s_{split} shape {s.shape} != ({X.shape[0]},)")
            _check_finite(f"X_{split}", X, self.feature_names)
            check_groups(f"s_{split}", s, self.n_groups, self.group_names)
        for split in ("train", "test"):
            y = getattr(self, f"y_{split}")
            if y.shape != (getattr(self, f"X_{split}").shape[0],):
                raise ValueError(f"y_{split} shape {y.shape} does not match X_{split}")
            _check_finite(f"y_{split} (target '{self.target_name}')", y)
        for name, split in (("f_star_train", "train"), ("f_star_calib", "calib"),
                            ("f_star_test", "test"), ("g_star_test", "test")):  # fmt: skip
            values = getattr(self, name)
            if values is None:
                continue
            n = getattr(self, f"s_{split}").size
            if np.shape(values) != (n,):
                raise ValueError(f"{name} shape {np.shape(values)} != ({n},)")
            _check_finite(name, np.asarray(values, dtype=float))
        if self.cost_of_fairness is not None and not (
            np.isfinite(self.cost_of_fairness) and self.cost_of_fairness >= 0
        ):
            raise ValueError(
                f"cost_of_fairness must be finite and >= 0, got {self.cost_of_fairness}"
            )

    @property
    def n_groups(self) -> int:
        """Number of groups M."""
        return len(self.group_names)

    def proportions(self, split: str = "train") -> np.ndarray:
        """Group frequencies p_s of one split, shape (n_groups,), summing to 1."""
        s = getattr(self, f"s_{split}")
        return np.bincount(s, minlength=self.n_groups) / s.size


@dataclass(frozen=True, eq=False)
class RegressionOutput:
    """Test-split predictions of a fair-regression method.

    Attributes
    ----------
    y_pred : ndarray of float64, shape (n_test,)
        Final predictions on ``data.X_test``, in target units.
    base_pred : ndarray of float64, shape (n_test,) or None
        The base regressor's predictions before post-processing, where there is one.
    oracle_pred : ndarray of float64, shape (n_test,) or None
        The same post-processing (same transport sample, jitter and split) applied to the
        Bayes regressor f* instead of the fitted one, where f* is known (synthetic data).
        Its distance to g* is the transport-estimation term of Fukuchi's meta-theorem.

    Raises
    ------
    ValueError
        If a field is not 1-D, the fields' lengths differ, or a field holds NaN/inf
        (naming the field: a diverged method fails here, not later in a metric).
    """

    y_pred: np.ndarray
    base_pred: np.ndarray | None = None
    oracle_pred: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = None
        for name in ("y_pred", "base_pred", "oracle_pred"):
            values = getattr(self, name)
            if values is None:
                continue
            values = np.asarray(values)
            if values.ndim != 1:
                raise ValueError(f"RegressionOutput.{name} must be 1-D, got shape {values.shape}")
            if n is not None and values.size != n:
                raise ValueError(f"RegressionOutput.{name} has {values.size} rows, y_pred has {n}")
            n = values.size if n is None else n
            bad = int((~np.isfinite(values.astype(float))).sum())
            if bad:
                raise ValueError(
                    f"RegressionOutput.{name} holds {bad} NaN/inf value(s);"
                    " the method diverged or its base model failed"
                )
