"""Null-corrected association statistics for "does a measure predict the generalisation gap?".

The paper's statistic is the plug-in histogram mutual information (``np.histogram2d`` with
round(√n) bins, log base 2; Hur & Park, ICML 2025, ``QPR/calculate_correlations.py``). Its
bias depends on how many distinct values a measure takes (a parameter count with 5 values gets
far less than a continuous margin), so raw MIs of different measures cannot be compared. Here
every MI is compared with its own permutation null: the gap is permuted across models (within
each noise level when levels are pooled, which removes the confound of both the gap and the
margins moving with r), and the excess MI − mean(null MI) carries a permutation p-value
(Phipson & Smyth 2010: (1 + #{null ≥ observed}) / (1 + P)) and a bootstrap interval.

Bin edges are those of ``np.histogram2d`` on the observed sample; a permutation does not
change a variable's range, so the edges, hence the bin codes, are computed once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Association",
    "association",
    "bin_codes",
    "family_p",
    "histogram_mi",
    "mi_from_codes",
    "permutations",
]


def bin_codes(x: np.ndarray, bins: int) -> np.ndarray:
    """Bin index of every value, with the edges ``np.histogram2d(..., bins=bins)`` uses.

    Edges are ``linspace(min, max, bins + 1)`` (``min ± 0.5`` for a constant); the last bin
    is closed on the right.

    Parameters
    ----------
    x : numpy.ndarray of float, shape (n,)
    bins : int
        At least 1.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Values in [0, bins).
    """
    x = np.asarray(x, float)
    lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, bins + 1)
    return np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)


def mi_from_codes(cx: np.ndarray, cy: np.ndarray, bins: int) -> np.ndarray:
    """Plug-in mutual information in bits of paired bin codes, for many pairings at once.

    Parameters
    ----------
    cx, cy : numpy.ndarray of int, shape (..., n)
        Bin codes in [0, bins); leading axes broadcast (e.g. one row per permutation).
    bins : int

    Returns
    -------
    numpy.ndarray of float64, shape (...)
        I(x; y) = Σ p(a, b) log2(p(a, b) / (p(a) p(b))); empty cells contribute 0.
    """
    cx, cy = np.broadcast_arrays(np.asarray(cx), np.asarray(cy))
    lead, n = cx.shape[:-1], cx.shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    flat = (np.arange(rows)[:, None] * bins * bins + cx.reshape(rows, n) * bins).ravel()
    joint = np.bincount(flat + cy.reshape(rows, n).ravel(), minlength=rows * bins * bins)
    pxy = joint.reshape(rows, bins, bins) / n
    px, py = pxy.sum(2, keepdims=True), pxy.sum(1, keepdims=True)
    denom = px * py
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(pxy > 0, pxy * np.log2(pxy / np.where(denom > 0, denom, 1)), 0.0)
    return terms.sum((1, 2)).reshape(lead)


def histogram_mi(x: np.ndarray, y: np.ndarray) -> float:
    """Mutual information I(x; y) in bits from a 2-D histogram with round(√n) bins per axis.

    Source: Hur & Park, ICML 2025, ``mutual_information_hist`` in
    ``QPR/calculate_correlations.py``. Empty cells contribute nothing (the official code
    clamps them to 1e-10, which changes the sum by < 1e-8).

    Examples
    --------
    >>> x = np.repeat([0.0, 1.0], 50)
    >>> round(histogram_mi(x, x), 6)
    1.0
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    bins = max(1, round(np.sqrt(len(x))))
    return float(mi_from_codes(bin_codes(x, bins), bin_codes(y, bins), bins))


def permutations(
    n: int, n_perm: int, rng: np.random.Generator, strata: np.ndarray | None = None
) -> np.ndarray:
    """Random permutations of ``range(n)``, within each stratum when ``strata`` is given.

    Parameters
    ----------
    n : int
    n_perm : int
    rng : numpy.random.Generator
    strata : numpy.ndarray, shape (n,), optional
        Group labels (e.g. the noise level r); indices only move inside their group.

    Returns
    -------
    numpy.ndarray of int64, shape (n_perm, n)
    """
    if strata is None:
        return rng.permuted(np.tile(np.arange(n), (n_perm, 1)), axis=1)
    out = np.tile(np.arange(n), (n_perm, 1))
    for level in np.unique(strata):
        idx = np.flatnonzero(strata == level)
        out[:, idx] = idx[rng.permuted(np.tile(np.arange(len(idx)), (n_perm, 1)), axis=1)]
    return out


def _bootstraps(
    n: int, n_boot: int, rng: np.random.Generator, strata: np.ndarray | None
) -> np.ndarray:
    if strata is None:
        return rng.integers(0, n, (n_boot, n))
    out = np.empty((n_boot, n), dtype=np.int64)
    for level in np.unique(strata):
        idx = np.flatnonzero(strata == level)
        out[:, idx] = idx[rng.integers(0, len(idx), (n_boot, len(idx)))]
    return out


@dataclass(frozen=True)
class Association:
    """Kendall τ and null-corrected histogram MI of one measure against one target.

    Attributes
    ----------
    n : int
        Models (rows) used.
    kendall_tau, tau_p : float
        ``scipy.stats.kendalltau(target, measure)`` and its two-sided p-value (NaN if either
        is constant).
    mi_bits : float
        Plug-in histogram MI, round(√n) bins, bits.
    mi_null_mean : float
        Mean MI over the permutation null (same bins), bits.
    mi_excess : float
        ``mi_bits - mi_null_mean``; about 0 for an unrelated measure whatever its number of
        distinct values.
    mi_p : float
        Permutation p-value of ``mi_bits`` (one-sided, (1 + #{null ≥ obs}) / (1 + P)).
    ci_low, ci_high : float
        95% bootstrap interval of ``mi_excess``: rows resampled (within noise levels when
        pooled), the null recomputed on each resample, percentile interval shifted by the
        bootstrap bias (mean resampled excess − estimate); NaN when no bootstrap was asked
        for. The permutation p-value, not this interval, is the test.
    null : numpy.ndarray of float64, shape (n_perm,)
        The null MIs (kept for family-wise tests across measures).
    """

    n: int
    kendall_tau: float
    tau_p: float
    mi_bits: float
    mi_null_mean: float
    mi_excess: float
    mi_p: float
    ci_low: float
    ci_high: float
    null: np.ndarray


def association(
    target: np.ndarray,
    measure: np.ndarray,
    perms: np.ndarray,
    *,
    boots: np.ndarray | None = None,
    boot_perms: int = 50,
    rng: np.random.Generator | None = None,
) -> Association:
    """Kendall τ and permutation-null-corrected MI of ``measure`` against ``target``.

    Parameters
    ----------
    target : numpy.ndarray of float, shape (n,)
        The generalisation gap (or test accuracy) of each model.
    measure : numpy.ndarray of float, shape (n,)
        A candidate predictor (a margin statistic, a parameter count, ...).
    perms : numpy.ndarray of int, shape (P, n)
        Permutations of the target (from :func:`permutations`); pass the same array for every
        measure of one scope so that family-wise max statistics can be formed.
    boots : numpy.ndarray of int, shape (B, n), optional
        Bootstrap row indices; each resample gets its own ``boot_perms``-permutation null.
    rng : numpy.random.Generator, optional
        Draws the permutations inside bootstrap resamples (required with ``boots``).

    Returns
    -------
    Association

    Raises
    ------
    ValueError
        If the arrays differ in length, hold non-finite values, or n < 3.
    """
    target, measure = np.asarray(target, float), np.asarray(measure, float)
    if target.shape != measure.shape or target.ndim != 1:
        raise ValueError(
            f"target and measure must be 1-D of one length, got {target.shape}, {measure.shape}"
        )
    if not (np.isfinite(target).all() and np.isfinite(measure).all()):
        raise ValueError("target and measure must be finite (drop failed cells first)")
    n = len(target)
    if n < 3:
        raise ValueError(f"need at least 3 models, got {n}")
    bins = max(1, round(np.sqrt(n)))
    ct, cm = bin_codes(target, bins), bin_codes(measure, bins)
    mi = float(mi_from_codes(cm, ct, bins))
    null = mi_from_codes(cm, ct[perms], bins)
    null_mean = float(null.mean())
    p = float((1 + np.sum(null >= mi - 1e-12)) / (1 + len(null)))
    if np.ptp(target) > 0 and np.ptp(measure) > 0:
        from scipy.stats import kendalltau

        tau = kendalltau(target, measure)
        kt, tp = float(tau.statistic), float(tau.pvalue)
    else:
        kt = tp = float("nan")
    lo = hi = float("nan")
    if boots is not None and len(boots):
        if rng is None:
            raise ValueError("rng is required with boots")
        bt, bm = ct[boots], cm[boots]  # (B, n)
        mi_b = mi_from_codes(bm, bt, bins)
        # The null of a resample pairs the resampled measure with the resampled rows of a
        # permuted target, so that duplicated rows inflate the null as much as the estimate.
        pi = rng.permuted(np.tile(np.arange(n), (boot_perms, 1)), axis=1)  # (K, n)
        shuffled = ct[pi][:, boots]  # (K, B, n)
        null_b = mi_from_codes(bm[None], shuffled, bins).mean(0)
        excess_b = mi_b - null_b
        shift = excess_b.mean() - (mi - null_mean)  # bootstrap bias, removed
        lo, hi = (float(v - shift) for v in np.percentile(excess_b, [2.5, 97.5]))
    return Association(n, kt, tp, mi, null_mean, mi - null_mean, p, lo, hi, null)


def family_p(observed: list[float], nulls: list[np.ndarray], null_means: list[float]) -> float:
    """Family-wise permutation p-value of the best excess MI among several measures.

    Westfall-Young max-T: the statistic is max_m (MI_m - mean null_m) and its null is
    max_m (null_m - mean null_m) over the same permutations, so the p-value accounts for
    picking the best of correlated measures.

    Parameters
    ----------
    observed : list of float
        MI of each measure, bits.
    nulls : list of numpy.ndarray, each shape (P,)
        Null MIs of each measure over one shared set of permutations.
    null_means : list of float

    Returns
    -------
    float
        (1 + #{max null excess ≥ max observed excess}) / (1 + P); NaN for no measures.
    """
    if not observed:
        return float("nan")
    best = max(o - m for o, m in zip(observed, null_means, strict=True))
    null_max = np.max([nl - m for nl, m in zip(nulls, null_means, strict=True)], axis=0)
    return float((1 + np.sum(null_max >= best - 1e-12)) / (1 + len(null_max)))
