"""Empirical Wasserstein-barycenter transport of predictions, vectorised.

Source: Chzhen, Denis, Hebiri, Oneto, Pontil, NeurIPS 2020, Algorithm 1 (estimator (5));
Le Gouic, Loubes, Rigollet, arXiv 2005.11720, Theorem 2.3 (projection = barycenter map).

Conventions (exact on the empirical laws): with ``a_s`` the sorted sample used for the CDF
of group s (``n_s`` points) and ``b_s`` the sorted sample used for its quantile function
(``m_s`` points),

* ``F_s(y) = #{a_s < y} / n_s`` (``searchsorted(a_s, y, side="left")``),
* ``Q_s(u) = b_s[clip(floor(m_s * u), 0, m_s - 1)]``,
* ``g(y, s) = sum_s' w_s' Q_s'(F_s(y))``.

So the j-th smallest calibration value of group s goes to the weighted mean of the
j/n_s-quantiles of every group; with one group and ``a = b`` the map is the identity on
the calibration points.

``convention="equipy"`` follows equipy 0.0.11a0 (``equipy/fairness/_base.py``,
``_estimate_ecdf_eqf`` and ``_fair_y_values``) instead: one sample for both (``a = b``),

* ``F_s(y) = #{a_s <= y} / n_s`` (statsmodels ``ECDF``: right-continuous, so ties count
  as below),
* ``Q_s(u)`` = linear interpolation of ``a_s`` on ``linspace(0, 1, n_s)`` (equipy ``EQF``),
* the jitter drawn with Python's ``random.Random(seed).uniform(-sigma, sigma)``, one draw
  per row in row order (all calibration rows at fit, all test rows at transform),
* the output clipped to [0, 1] when every (unjittered) input prediction lies in [0, 1].
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

import numpy as np

from harness_fair_regression.data import check_groups, check_predictions

__all__ = ["BarycenterMap", "Convention", "Weights", "fit_barycenter_map"]

Convention = Literal["order-statistic", "equipy"]
"""How F_s and Q_s are read off the samples (see the module docstring)."""

Weights = Literal["frequency", "uniform"]
"""Barycenter weights: the groups' frequencies in the sample (the DP-fair L2 projection)
or 1 / M each (a fair predictor that is not the projection: a negative control)."""

Rng = np.random.Generator | random.Random


@dataclass(frozen=True)
class BarycenterMap:
    """A fitted empirical barycenter map.

    Attributes
    ----------
    cdf_samples : tuple of ndarray, one per group, each sorted, shape (n_s,)
        Jittered predictions defining F_s, in target units.
    quantile_samples : tuple of ndarray, one per group, each sorted, shape (m_s,)
        Jittered predictions defining Q_s, in target units.
    weights : ndarray of float64, shape (n_groups,)
        Barycenter weights w_s (group frequencies), summing to 1.
    jitter : float
        Half-width sigma of the uniform noise added at fit and at transform time.
    convention : {"order-statistic", "equipy"}
        How F_s and Q_s are evaluated (module docstring), default "order-statistic".
    """

    cdf_samples: tuple[np.ndarray, ...]
    quantile_samples: tuple[np.ndarray, ...]
    weights: np.ndarray
    jitter: float
    convention: Convention = "order-statistic"

    @property
    def n_groups(self) -> int:
        """Number of groups M."""
        return len(self.weights)

    def transform(self, pred: np.ndarray, s: np.ndarray, rng: Rng) -> np.ndarray:
        """Map predictions onto the barycenter: g(y, s) = sum_s' w_s' Q_s'(F_s(y + eps)).

        Parameters
        ----------
        pred : ndarray of float, shape (n,)
            Base predictions f(x, s), in target units.
        s : ndarray of int, shape (n,)
            Group codes in ``0 .. n_groups - 1``.
        rng : numpy.random.Generator or random.Random
            Source of the fresh jitter eps ~ U[-jitter, jitter] (unused when jitter = 0);
            ``random.Random`` draws as equipy does (one ``uniform`` call per row).

        Returns
        -------
        ndarray of float64, shape (n,)
            Post-processed predictions, in target units.

        Raises
        ------
        ValueError
            If shapes differ, a prediction is NaN/inf, or a code is not a fitted group.
        """
        pred, s = check_predictions(
            pred, s, "pred holds NaN/inf; the barycenter map needs finite predictions"
        )
        if s.size and (s.min() < 0 or s.max() >= self.n_groups):
            raise ValueError(f"s has codes outside the fitted groups 0..{self.n_groups - 1}")
        y = _jitter(pred, self.jitter, rng)
        out = np.empty_like(y)
        equipy = self.convention == "equipy"
        for g, index in enumerate(_group_rows(s, self.n_groups)):
            a = self.cdf_samples[g]
            rank = np.searchsorted(a, y[index], side="right" if equipy else "left")
            if equipy:
                out[index] = self._interpolated_barycenter_at(rank / a.size)
            else:
                out[index] = self._barycenter_at(rank, a.size)  # rank = n_g * F_g(y)
        if equipy and pred.size and pred.min() >= 0 and pred.max() <= 1:
            np.clip(out, 0, 1, out=out)  # equipy's _fair_y_values keeps [0, 1] scores there
        return out

    def _interpolated_barycenter_at(self, u: np.ndarray) -> np.ndarray:
        """sum_s' w_s' Q_s'(u) with Q_s' linear on linspace(0, 1, m_s'), shape of ``u``."""
        total = np.zeros(u.shape, dtype=float)
        for w, b in zip(self.weights, self.quantile_samples, strict=True):
            if b.size == 1:
                total += w * b[0]
            else:
                total += w * np.interp(u, np.linspace(0, 1, b.size), b)
        return total

    def _barycenter_at(self, rank: np.ndarray, n: int) -> np.ndarray:
        """sum_s' w_s' Q_s'(rank / n), shape of ``rank``."""
        total = np.zeros(rank.shape, dtype=float)
        for w, b in zip(self.weights, self.quantile_samples, strict=True):
            index = np.minimum(rank * b.size // n, b.size - 1)
            total += w * b[index]
        return total


def _group_rows(s: np.ndarray, n_groups: int) -> list[np.ndarray]:
    """Row indices of each group code ``0 .. n_groups - 1``, each in ascending row order."""
    order = np.argsort(s, kind="stable")
    bounds = np.searchsorted(s[order], np.arange(n_groups + 1))
    return [order[bounds[g] : bounds[g + 1]] for g in range(n_groups)]


def _jitter(values: np.ndarray, sigma: float, rng: Rng) -> np.ndarray:
    """``values`` + U[-sigma, sigma] noise; a ``random.Random`` draws row by row (equipy)."""
    if sigma == 0:
        return values.astype(float, copy=True)
    if isinstance(rng, random.Random):
        return values + np.array([rng.uniform(-sigma, sigma) for _ in range(values.size)])
    return values + rng.uniform(-sigma, sigma, size=values.shape)


def fit_barycenter_map(
    pred: np.ndarray,
    s: np.ndarray,
    n_groups: int,
    *,
    jitter: float,
    split: bool,
    rng: Rng,
    convention: Convention = "order-statistic",
    weights: Weights = "frequency",
) -> BarycenterMap:
    """Estimate F_s, Q_s and w_s from unlabeled predictions.

    Source: Chzhen et al., NeurIPS 2020, Algorithm 1 (``split=True``: each group's sample
    is cut into two random halves, the first for F_s and the second for Q_s); Le Gouic et
    al. 2020 (``split=False``, ``jitter=0``: one sample for both).

    Parameters
    ----------
    pred : ndarray of float, shape (n,)
        Base predictions on the unlabeled sample, in target units.
    s : ndarray of int, shape (n,)
        Group codes ``0 .. n_groups - 1``.
    n_groups : int
        Number of groups M.
    jitter : float
        Half-width sigma >= 0 of the uniform noise U[-sigma, sigma] (target units).
    split : bool
        Whether to use disjoint halves for F_s and Q_s.
    rng : numpy.random.Generator or random.Random
        Source of the jitter and of the split (a ``random.Random`` only without split).
    convention : {"order-statistic", "equipy"}, default="order-statistic"
        How F_s and Q_s are read off the samples (module docstring); ``"equipy"`` needs
        ``split=False``.
    weights : {"frequency", "uniform"}, default="frequency"
        w_s = group frequencies in ``s`` (the L2 projection), or 1 / M.

    Returns
    -------
    BarycenterMap

    Raises
    ------
    ValueError
        If shapes differ, a prediction is NaN/inf, ``jitter`` < 0, a group is missing
        or has fewer than two points (naming the group), or ``convention="equipy"`` is
        asked with ``split=True``.
    """
    pred, s = check_predictions(
        pred, s, "calibration predictions hold NaN/inf; the map needs finite values"
    )
    if jitter < 0:
        raise ValueError(f"jitter must be >= 0, got {jitter}")
    if convention not in ("order-statistic", "equipy"):
        raise ValueError(f"convention must be 'order-statistic' or 'equipy', got {convention!r}")
    if convention == "equipy" and split:
        raise ValueError("convention='equipy' uses one sample for F_s and Q_s: pass split=False")
    check_groups("the calibration sample", s, n_groups)
    y = _jitter(pred, jitter, rng)
    rows = _group_rows(s, n_groups)
    cdf, quantile = [], []
    for index in rows:
        values = y[index]
        if split:
            values = rng.permutation(values)
            half = values.size // 2
            cdf.append(np.sort(values[:half]))
            quantile.append(np.sort(values[half:]))
        else:
            values = np.sort(values)
            cdf.append(values)
            quantile.append(values)
    if weights == "uniform":
        w = np.full(n_groups, 1 / n_groups)
    elif weights == "frequency":
        w = np.array([index.size for index in rows]) / s.size
    else:
        raise ValueError(f"weights must be 'frequency' or 'uniform', got {weights!r}")
    return BarycenterMap(tuple(cdf), tuple(quantile), w, float(jitter), convention)
