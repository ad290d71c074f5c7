"""Corruption simulators: turn true weak-feature values into weak observations.

Source: Sugiyama & Uchida, ICML 2025, §2 (weak observation models); simulators as in
``docs/papers/weak-features.md`` §4 (reconstruction, not checked against the paper).

Each simulator takes the true values ``v`` of one weak feature, shape (n,), with ``K`` levels,
and returns ``(obs, lik)``: the observation code, shape (n,) int64 (encoding in
:mod:`harness_weak_features._data`), and ``lik[i, u] = P(o_i | v = u)``, shape (n, K) float64.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "candidates",
    "complementary_transition",
    "corrupt",
    "emulate_estimator",
    "mar_missing_prob",
    "mnar_missing_prob",
    "symmetric_transition",
]


def symmetric_transition(n_levels: int, rate: float) -> np.ndarray:
    """Symmetric noise matrix ``T = (1 - rate) I + rate (11ᵀ - I) / (K - 1)``.

    Source: Patrini et al., CVPR 2017 (forward correction); closed form.

    Parameters
    ----------
    n_levels : int
        K >= 2.
    rate : float
        Flip probability in [0, 1); T is singular at ``rate = (K - 1) / K``.

    Returns
    -------
    ndarray of float64, shape (K, K)
        ``T[v, o] = P(o | v)``; rows sum to 1.

    Examples
    --------
    >>> symmetric_transition(3, 0.3).round(2).tolist()[0]
    [0.7, 0.15, 0.15]
    """
    off = rate / (n_levels - 1)
    return np.full((n_levels, n_levels), off) + (1.0 - rate - off) * np.eye(n_levels)


def complementary_transition(n_levels: int, bias: float) -> np.ndarray:
    """Complementary observation matrix ``Q = (1 - bias) U + bias S``.

    ``U[v, u] = 1[u != v] / (K - 1)`` is the uniform complementary model of complementary-label
    learning (Ishida et al., NeurIPS 2017) and of complementary-feature learning (Sugiyama &
    Uchida, arXiv 2408.14788); ``S[v, (v + 1) mod K] = 1`` is a cyclic shift, the biased
    variant (Yu et al., ECCV 2018, biased complementary labels). Closed form.

    Parameters
    ----------
    n_levels : int
        K >= 2.
    bias : float
        Weight of the shift in [0, 1]; 0 = uniform.

    Returns
    -------
    ndarray of float64, shape (K, K)
        ``Q[v, o] = P(o | v)``, zero diagonal (the observed value is never the truth); rows
        sum to 1.

    Examples
    --------
    >>> complementary_transition(3, 0.0).round(2).tolist()[0]
    [0.0, 0.5, 0.5]
    >>> complementary_transition(3, 0.5).round(2).tolist()[0]
    [0.0, 0.75, 0.25]
    """
    uniform = (1.0 - np.eye(n_levels)) / (n_levels - 1)
    shift = np.roll(np.eye(n_levels), 1, axis=1)
    return (1.0 - bias) * uniform + bias * shift


def _other_value(v: np.ndarray, n_levels: int, rng: np.random.Generator) -> np.ndarray:
    """A value drawn uniformly from ``{0..K-1} minus {v}``, per row; never equal to v."""
    return (v + rng.integers(1, n_levels, size=v.shape)) % n_levels


def emulate_estimator(
    v: np.ndarray, n_levels: int, epsilon: float, rng: np.random.Generator
) -> np.ndarray:
    """Estimates with error rate epsilon: each value replaced by a uniform wrong one w.p. epsilon.

    Source: official ``codes_discrete`` argument ``est_error_rate`` (reconstruction).

    Returns
    -------
    ndarray of int64, shape (n,)
        Expected accuracy ``1 - epsilon`` exactly.
    """
    wrong = rng.random(v.shape) < epsilon
    return np.where(wrong, _other_value(v, n_levels, rng), v).astype(np.int64)


def mar_missing_prob(driver: np.ndarray, rate: float, slope: float = 2.0) -> np.ndarray:
    """Logistic MAR missingness ``sigmoid(slope * driver + b)``, b set so the mean is ``rate``.

    Source: MAR_logistic of the official ``codes_continuous`` (reconstruction).

    Parameters
    ----------
    driver : ndarray of float64, shape (n,)
        An ordinary feature (z-score) that drives missingness.
    rate : float
        Target mean missing probability in [0, 1).
    """
    if rate <= 0.0:
        return np.zeros_like(driver)
    lo, hi = -50.0, 50.0
    for _ in range(80):  # bisection on the intercept; the mean is increasing in b
        b = 0.5 * (lo + hi)
        mean = np.mean(1.0 / (1.0 + np.exp(-(slope * driver + b))))
        lo, hi = (b, hi) if mean < rate else (lo, b)
    return 1.0 / (1.0 + np.exp(-(slope * driver + 0.5 * (lo + hi))))


def mnar_missing_prob(n_levels: int, rate: float) -> np.ndarray:
    """Value-dependent missing probability ``r_u = rate (2u + 1) / K``, clipped to 0.99.

    Its mean over uniformly distributed values is ``rate`` (before clipping). Known to the
    methods through ``lik``; MNAR is unidentifiable without such a model.
    """
    return np.minimum(rate * (2 * np.arange(n_levels) + 1) / n_levels, 0.99)


def corrupt(
    v: np.ndarray,
    n_levels: int,
    kind: str,
    rate: float,
    rng: np.random.Generator,
    driver: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Weak observations of one weak feature.

    Source: Sugiyama & Uchida, ICML 2025, §2; observation models of
    ``docs/papers/weak-features.md`` §2 table (reconstruction).

    Parameters
    ----------
    v : ndarray of int64, shape (n,)
        True values in ``{0..K-1}``.
    n_levels : int
        K >= 2.
    kind : {"noisy", "missing-mcar", "missing-mar", "missing-mnar", "complementary", "partial"}
        Observation model.
    rate : float
        In [0, 1): flip or missing probability; for ``complementary`` (every value is observed
        as one value it is *not*) the bias of :func:`complementary_transition` (0 = uniform
        among the other values); for ``partial`` the probability ``q`` that each other value
        joins the candidate set (``E|S| = 1 + q (K - 1)``).
    rng : numpy.random.Generator
        Source of randomness.
    driver : ndarray of float64, shape (n,), optional
        The ordinary feature driving ``missing-mar``; required for that kind.

    Returns
    -------
    obs : ndarray of int64, shape (n,)
    lik : ndarray of float64, shape (n, K)
        ``P(o_i | v = u)``.

    Raises
    ------
    ValueError
        Unknown kind, rate outside [0, 1), K < 2, or ``missing-mar`` without ``driver``.
    """
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"rate must be in [0, 1), got {rate}")
    if n_levels < 2:
        raise ValueError(f"a weak feature needs at least 2 levels, got {n_levels}")
    n, eye = v.shape[0], np.eye(n_levels)
    if kind == "noisy":
        obs = emulate_estimator(v, n_levels, rate, rng)
        return obs, symmetric_transition(n_levels, rate)[:, obs].T.copy()
    if kind.startswith("missing"):
        if kind == "missing-mcar":
            p_miss = np.full(n, rate)
        elif kind == "missing-mar":
            if driver is None:
                raise ValueError("missing-mar needs the driver ordinary feature")
            p_miss = mar_missing_prob(driver, rate)
        elif kind == "missing-mnar":
            r = mnar_missing_prob(n_levels, rate)
            p_miss = r[v]
        else:
            raise ValueError(f"unknown weak kind {kind!r}")
        miss = rng.random(n) < p_miss
        obs = np.where(miss, -1, v).astype(np.int64)
        lik = np.where(miss[:, None], 1.0, eye[v])
        if kind == "missing-mnar":
            lik = np.where(miss[:, None], r[None, :], eye[v] * (1.0 - r)[None, :])
        return obs, lik
    if kind == "complementary":
        Q = complementary_transition(n_levels, rate)
        cum = np.cumsum(Q[v], axis=1)
        v_bar = np.minimum((rng.random((n, 1)) > cum).sum(axis=1), n_levels - 1)
        return v_bar.astype(np.int64), Q[:, v_bar].T.copy()
    if kind == "partial":
        if n_levels > 62:
            raise ValueError(f"partial observations support K <= 62 levels, got {n_levels}")
        cand = (rng.random((n, n_levels)) < rate) | (eye[v] > 0)
        obs = (cand * (1 << np.arange(n_levels, dtype=np.int64))).sum(axis=1).astype(np.int64)
        return obs, cand.astype(np.float64)
    raise ValueError(f"unknown weak kind {kind!r}")


def candidates(obs: np.ndarray, n_levels: int) -> np.ndarray:
    """Decode ``partial`` bitmask observations, shape (n,), into a bool mask, shape (n, K)."""
    return ((obs[:, None] >> np.arange(n_levels)) & 1).astype(bool)
