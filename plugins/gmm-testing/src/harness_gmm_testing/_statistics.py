"""Test statistics for "is X ~ N(0, I_d)?", each oriented so larger = more evidence of H1.

Source: docs/papers/gmm-testing.md §3-§4; each function names its own reference.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable

import numpy as np

from harness import LazyModule
from harness_gmm_testing._hermite import (
    chaos_dimension,
    hermite_u_statistic,
    monomial_index,
    symmetric_power,
)

special = LazyModule("scipy.special")
stats = LazyModule("scipy.stats")

__all__ = [
    "covariance_top_eigenvalue",
    "energy_statistic",
    "henze_zirkler",
    "hermite_z",
    "mardia",
    "max_standardised_moment",
    "norm_outlier_z",
    "projection_statistic",
]

_CHUNK = 1024  # rows per block of pairwise computations: O(_CHUNK n) memory


def _standardise(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``y_i = S^(-1/2) (x_i - mean)`` (Cholesky of the biased covariance S) and their
    squared norms ``|y_i|^2``."""
    centred = X - X.mean(axis=0)
    cov = centred.T @ centred / X.shape[0]
    Y = centred @ np.linalg.inv(np.linalg.cholesky(cov)).T
    return Y, np.einsum("ij,ij->i", Y, Y)


def _pairwise_sum(
    X: np.ndarray, q: np.ndarray, kernel: Callable[[np.ndarray], np.ndarray]
) -> float:
    """``sum_ij kernel(|x_i - x_j|^2)`` with ``q = |x_i|^2``, in blocks of ``_CHUNK`` rows.

    The sum is symmetric: each block of rows meets only itself and the rows after it, and
    the pairs past its own columns count twice (half the kernel evaluations).
    """
    total = 0.0
    for start in range(0, X.shape[0], _CHUNK):
        stop = start + _CHUNK
        block = X[start:stop]
        sq = q[start:stop, None] + q[None, start:] - 2 * block @ X[start:].T
        values = kernel(np.maximum(sq, 0.0))
        width = block.shape[0]
        total += float(values[:, :width].sum()) + 2.0 * float(values[:, width:].sum())
    return total


def hermite_z(X: np.ndarray, m: int) -> float:
    """``Z = U_m / sqrt(2 N_m / (n (n - 1)))``, approximately N(0, 1) under H0.

    Source: docs/papers/gmm-testing.md §3.2 (Hermite-chaos U-statistic).
    """
    n, d = X.shape
    return hermite_u_statistic(X, m) / math.sqrt(2 * chaos_dimension(d, m) / (n * (n - 1)))


@functools.lru_cache(maxsize=64)
def _gaussian_monomial_moments(d: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and s.d. under N(0, I_d) of each monomial ``x^alpha``, ``|alpha| = p``, in the
    order of :func:`~harness_gmm_testing._hermite.symmetric_power`.

    ``E x^alpha = prod_j E g^(alpha_j)`` with ``E g^(2r) = (2r - 1)!!`` and odd moments 0.
    """

    def gauss_moment(r: int) -> float:
        return 0.0 if r % 2 else float(math.prod(range(r - 1, 0, -2)))

    mean, sd = [], []
    for combo in itertools.combinations_with_replacement(range(d), p):
        counts = [combo.count(v) for v in set(combo)]
        mu = math.prod(gauss_moment(c) for c in counts)
        mean.append(mu)
        sd.append(math.sqrt(math.prod(gauss_moment(2 * c) for c in counts) - mu**2))
    return np.array(mean), np.array(sd)


def max_standardised_moment(X: np.ndarray, degree: int) -> float:
    """``max_alpha sqrt(n) |mean_i x_i^alpha - E_N x^alpha| / sd_N(x^alpha)`` over the
    unique entries of the empirical moment tensors of orders 1..degree.

    Source: Diakonikolas et al., ICML 2025, App. D, Algs 2-3 (entrywise moment-tensor
    comparison), in the practical standardised form of docs/papers/gmm-testing.md §3.1.
    """
    n, d = X.shape
    totals = [np.zeros(math.comb(d + p - 1, p)) for p in range(degree + 1)]
    for start in range(0, n, _CHUNK):
        block = X[start : start + _CHUNK]
        Z = np.ones((block.shape[0], 1))
        for p in range(1, degree + 1):
            parent, last, _ = monomial_index(d, p)
            Z = Z[:, parent] * block[:, last]
            totals[p] += Z.sum(axis=0)
    best = 0.0
    for p in range(1, degree + 1):
        mean, sd = _gaussian_monomial_moments(d, p)
        best = max(best, float(np.max(np.abs(totals[p] / n - mean) / sd)))
    return math.sqrt(n) * best


def norm_outlier_z(X: np.ndarray) -> float:
    """The far-sample check of Alg 2 as a z-score: ``Phi^-1(1 - p)`` with
    ``p = P_H0(max_i |x_i|^2 >= observed) = 1 - F_(chi2_d)(t)^n`` (exact).

    Source: Diakonikolas et al., ICML 2025, App. D, Alg 2 step 1.
    """
    n, d = X.shape
    top = float(np.max(np.einsum("ij,ij->i", X, X)))
    p = -math.expm1(n * math.log1p(-special.chdtrc(d, top)))
    return float(-special.ndtri(max(p, 1e-300)))  # = stats.norm.isf(p), without its overhead


def mardia(X: np.ndarray) -> tuple[float, float]:
    """Mardia's skewness and kurtosis p-values (asymptotic), affine invariant.

    ``n b_1 / 6 ~ chi2_(d(d+1)(d+2)/6)`` and ``(b_2 - d(d+2)) / sqrt(8 d (d+2) / n) ~ N(0,1)``
    (two-sided). ``b_1 = n^-2 sum_ij (y_i . y_j)^3`` is computed as the squared norm of the
    summed compressed third symmetric power, O(n d^3).

    Source: Mardia, Biometrika 57 (1970), eqs (2.5), (2.9), (2.23), (2.24).
    """
    n, d = X.shape
    Y, q = _standardise(X)
    cubes = symmetric_power(Y, 3).sum(axis=0)  # |sum_i y_i^(x3)|^2 = sum_ij (y_i . y_j)^3
    b1 = float(cubes @ cubes) / n**2
    b2 = float(np.mean(q**2))
    p_skew = special.chdtrc(d * (d + 1) * (d + 2) / 6, n * b1 / 6)  # = stats.chi2.sf
    z_kurt = (b2 - d * (d + 2)) / math.sqrt(8 * d * (d + 2) / n)
    return float(p_skew), float(2 * special.ndtr(-abs(z_kurt)))


def _henze_zirkler_beta(n: int, d: int) -> float:
    return ((2 * d + 1) / 4) ** (1 / (d + 4)) * n ** (1 / (d + 4)) / math.sqrt(2)


def henze_zirkler(X: np.ndarray) -> float:
    """The Henze-Zirkler statistic HZ (affine invariant, smoothing beta of the paper).

    Source: Henze and Zirkler, Comm. Stat. Theory Methods 19 (1990), eq. (2.2); optimal
    bandwidth ``beta = ((2d+1)/4)^(1/(d+4)) n^(1/(d+4)) / sqrt(2)``.
    """
    n, d = X.shape
    Y, q = _standardise(X)
    b2 = _henze_zirkler_beta(n, d) ** 2
    pair = _pairwise_sum(Y, q, lambda sq: np.exp(-b2 / 2 * sq))
    single = float(np.exp(-b2 / (2 * (1 + b2)) * q).sum())
    return pair / n - 2 * (1 + b2) ** (-d / 2) * single + n * (1 + 2 * b2) ** (-d / 2)


def henze_zirkler_lognormal_p(hz: float, n: int, d: int) -> float:
    """Henze-Zirkler's log-normal approximation of the null law of HZ.

    Source: Henze and Zirkler (1990), Theorem 2.1 moments; log-normal fit as in
    ``MVN::hz`` and ``pingouin.multivariate_normality``.
    """
    b2 = _henze_zirkler_beta(n, d) ** 2
    a = 1 + 2 * b2
    wb = (1 + b2) * (1 + 3 * b2)
    mu = 1 - a ** (-d / 2) * (1 + d * b2 / a + d * (d + 2) * b2**2 / (2 * a**2))
    si2 = (
        2 * (1 + 4 * b2) ** (-d / 2)
        + 2 * a**-d * (1 + 2 * d * b2**2 / a**2 + 3 * d * (d + 2) * b2**4 / (4 * a**4))
        - 4 * wb ** (-d / 2) * (1 + 3 * d * b2**2 / (2 * wb) + d * (d + 2) * b2**4 / (2 * wb**2))
    )
    log_mean = math.log(math.sqrt(mu**4 / (si2 + mu**2)))
    log_sd = math.sqrt(math.log((si2 + mu**2) / mu**2))
    return float(stats.lognorm.sf(hz, log_sd, scale=math.exp(log_mean)))


def energy_statistic(X: np.ndarray) -> float:
    """One-sample energy statistic against N(0, I_d):
    ``n (2/n sum_i E|x_i - Y| - E|Y - Y'| - n^-2 sum_ij |x_i - x_j|)``.

    ``E|x - Y| = sqrt(2) Gamma((d+1)/2) / Gamma(d/2) 1F1(-1/2; d/2; -|x|^2/2)`` and
    ``E|Y - Y'| = 2 Gamma((d+1)/2) / Gamma(d/2)``.

    Source: Szekely and Rizzo, J. Multivariate Anal. 93 (2005), eq. (3); R ``energy``.
    """
    n, d = X.shape
    q = np.einsum("ij,ij->i", X, X)
    ratio = math.exp(math.lgamma((d + 1) / 2) - math.lgamma(d / 2))
    to_gauss = math.sqrt(2) * ratio * special.hyp1f1(-0.5, d / 2, -q / 2)
    within = _pairwise_sum(X, q, np.sqrt)
    return n * (2 * float(to_gauss.mean()) - 2 * ratio - within / n**2)


def projection_statistic(
    X: np.ndarray, rng: np.random.Generator, directions: int, test: str, exact_p: bool = False
) -> tuple[float, float]:
    """Largest 1-D goodness-of-fit statistic against N(0, 1) over random unit directions.

    Returns
    -------
    stat : float
        ``max_l D_l`` (Kolmogorov-Smirnov) or ``max_l A^2_l`` (Anderson-Darling, known
        parameters) over ``directions`` directions drawn uniformly on the sphere.
    p_min : float
        With ``exact_p`` and KS, the smallest exact per-direction p-value
        ``kstwo.sf(D, n)``; NaN otherwise.

    Source: Kolmogorov-Smirnov and Anderson-Darling (1954) statistics with the simple null
    N(0, 1); scipy.stats.kstwo for the KS law.
    """
    n, d = X.shape
    U = rng.standard_normal((d, directions))
    U /= np.linalg.norm(U, axis=0)
    F = np.sort(special.ndtr(X @ U), axis=0)
    i = np.arange(1, n + 1)[:, None]
    if test == "ks":
        D = np.maximum((i / n - F).max(axis=0), (F - (i - 1) / n).max(axis=0)).max()
        return float(D), float(stats.kstwo.sf(D, n)) if exact_p else math.nan
    F = np.clip(F, 1e-300, 1 - 1e-16)
    a2 = -n - ((2 * i - 1) * (np.log(F) + np.log1p(-F[::-1]))).sum(axis=0) / n
    return float(a2.max()), math.nan


def covariance_top_eigenvalue(X: np.ndarray) -> float:
    """``lambda_max(X^T X / n) - (1 + sqrt(d / n))^2``: the top eigenvalue of the sample
    covariance (known mean 0) above the Marchenko-Pastur edge.

    Source: Johnstone, Ann. Statist. 29 (2001) (largest eigenvalue under the null).
    """
    n, d = X.shape
    return float(np.linalg.eigvalsh(X.T @ X / n)[-1] - (1 + math.sqrt(d / n)) ** 2)
