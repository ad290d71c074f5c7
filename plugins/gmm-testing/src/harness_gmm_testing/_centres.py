"""Centre laws A = sum_i w_i delta_(s_i) that match the moments of N(0, 1).

Source: docs/papers/gmm-testing.md §2 (families a, b, c); Diakonikolas, Kane, Karmalkar,
Lee, Pittas, ICML 2025, Prop 3.1 and Prop 4.1 (existence); DKS17 (Gauss-Hermite centres).
Families (b) and (c) are numerical least-squares fits, a reconstruction: the paper's
existence proofs are non-constructive.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from numpy.polynomial import hermite_e

from harness import LazyModule
from harness_gmm_testing._hermite import normalised_hermite

optimize = LazyModule("scipy.optimize")
stats = LazyModule("scipy.stats")

__all__ = [
    "MATCH_TOLERANCE",
    "gauss_hermite_centres",
    "matched_degree",
    "mixture_hermite_moments",
    "mostly_uniform_centres",
    "uniform_centres",
]

MATCH_TOLERANCE = 1e-9
"""|E h_j| below this counts as matched (docs/papers/gmm-testing.md §2, family b)."""
_MAX_DEGREE = 40
_RESTARTS = 8


def mixture_hermite_moments(
    centres: np.ndarray, weights: np.ndarray, noise_sd: float, degrees: int
) -> np.ndarray:
    """``E_B[h_j]`` for j = 0..degrees, where B = sum_i w_i N(centres_i, noise_sd^2).

    Exact up to rounding: Gauss-Hermite quadrature with more nodes than degree / 2.

    Parameters
    ----------
    centres : ndarray of float, shape (k,)
    weights : ndarray of float, shape (k,), summing to 1
    noise_sd : float
        Standard deviation of each component, ``>= 0``.
    degrees : int
        Highest degree.

    Returns
    -------
    ndarray of float, shape (degrees + 1,)
    """
    nodes, qw = hermite_e.hermegauss(degrees // 2 + 2)
    qw = qw / qw.sum()
    y = (centres[:, None] + noise_sd * nodes[None, :]).ravel()
    mass = (weights[:, None] * qw[None, :]).ravel()
    return np.array([mass @ normalised_hermite(j, y) for j in range(degrees + 1)])


def matched_degree(moments: np.ndarray, tol: float = MATCH_TOLERANCE) -> int:
    """Largest m with ``|E h_j| <= tol`` for j = 1..m (0 if h_1 already differs).

    Raises
    ------
    ValueError
        If every available degree matches (no signal to test for).
    """
    for j in range(1, len(moments)):
        if abs(moments[j]) > tol:
            return j - 1
    raise ValueError(f"the law matches all {len(moments) - 1} computed moments of N(0, 1)")


def gauss_hermite_centres(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite nodes and weights (DKS17): match N(0, 1) through degree 2k - 1."""
    nodes, weights = hermite_e.hermegauss(k)
    return nodes, weights / weights.sum()


def _pairs_to_centres(half: np.ndarray, odd: bool) -> np.ndarray:
    centres = np.concatenate([-half[::-1], [0.0] if odd else [], half])
    return np.asarray(centres, dtype=float)


def _fit(residuals, x0_list) -> tuple[np.ndarray, float]:
    best, best_cost = None, math.inf
    for x0 in x0_list:
        sol = optimize.least_squares(
            residuals, x0, xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=2000
        )
        cost = float(np.max(np.abs(residuals(sol.x))))
        if cost < best_cost:
            best, best_cost = sol.x, cost
        if cost < MATCH_TOLERANCE / 100:
            break
    return best, best_cost


def _even_residuals(centres: np.ndarray, weights: np.ndarray, top: int) -> np.ndarray:
    return np.array([weights @ normalised_hermite(j, centres) for j in range(2, top + 1, 2)])


def _gap_shortfall(centres: np.ndarray, min_gap: float) -> np.ndarray:
    """``max(0, min_gap - gap)`` for each gap between sorted centres (0 when all are wide)."""
    return np.maximum(0.0, min_gap - np.diff(np.sort(centres)))


def _raise_degree(
    unpack: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    start: np.ndarray,
    restarts: Callable[[np.ndarray], list[np.ndarray]],
    moments: int,
    min_gap: float = 0.0,
) -> tuple[tuple[np.ndarray, np.ndarray], int]:
    """Fit ``unpack(x) = (centres, weights)`` to the even moments 2..top, raising top in steps
    of 2 from the last solution (plus ``restarts(x)``) until the residual exceeds
    ``MATCH_TOLERANCE / 10`` or ``moments`` is reached. With ``min_gap > 0`` every gap
    between sorted centres shorter than ``min_gap`` adds its shortfall (times 10) to the
    residuals, so a fit that counts as matched also keeps its centres ``min_gap`` apart.

    Returns
    -------
    law : tuple of ndarray
        ``unpack`` of the last fit that matched (of ``start`` if none did).
    reached : int
        The odd degree top + 1 it matches through (1 if none).
    """
    best, reached = unpack(start), 1
    for top in range(2, _MAX_DEGREE, 2):

        def residuals(x, top=top):
            centres, weights = unpack(x)
            moments_part = _even_residuals(centres, weights, top)
            if not min_gap:
                return moments_part
            return np.concatenate([moments_part, 10.0 * _gap_shortfall(centres, min_gap)])

        x, cost = _fit(residuals, [start, *restarts(start)])
        if cost > MATCH_TOLERANCE / 10:
            break
        best, reached, start = unpack(x), top + 1, x
        if moments and reached >= moments:
            break
    return best, reached


@functools.lru_cache(maxsize=64)
def uniform_centres(k: int, moments: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """k equally weighted centres, symmetric in +-pairs, matching as many moments as a
    least-squares fit reaches (or exactly ``moments`` when > 0).

    Fits positions to ``(1/k) sum_i h_j(s_i) = 0`` for even j = 2..m (odd j vanish by
    symmetry), starting at ``Phi^-1((i - 1/2)/k)`` plus seeded random restarts; m rises in
    steps of 2 until the residual exceeds MATCH_TOLERANCE / 10 = 1e-10.

    Returns
    -------
    centres : ndarray of float, shape (k,)
    weights : ndarray of float, shape (k,), all 1/k

    Raises
    ------
    ValueError
        If ``k`` equal weights cannot match ``moments`` moments (message names ``k``).
    """
    rng = np.random.default_rng(k)
    weights = np.full(k, 1.0 / k)
    start = stats.norm.ppf((np.arange(k) + 0.5) / k)[k - k // 2 :]
    (best, _), reached = _raise_degree(
        lambda half: (_pairs_to_centres(half, k % 2 == 1), weights),
        start,
        lambda x: [np.sort(x * rng.uniform(0.8, 1.2, x.size)) for _ in range(3)],
        moments,
    )
    if moments and reached < moments:
        raise ValueError(
            f"k={k} equally weighted centres match at most {reached} moments of N(0, 1), "
            f"fewer than moments={moments}; raise k"
        )
    return best, weights


@functools.lru_cache(maxsize=64)
def mostly_uniform_centres(
    k: int, k_free: int, moments: int = 0, min_gap: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """k centres in +-pairs; ``k_free`` of them (``k_free / 2`` pairs) carry free weights,
    the other ``k - k_free`` share one weight (Thm 1.4's "mostly uniform" family).

    Weights are a softmax over the free pairs and the shared group; positions and logits are
    fitted as in :func:`uniform_centres`, with every gap between centres kept at least
    ``min_gap`` (a penalty in the least-squares fit). Without it the fit collapses: k = 8,
    k' = 2 puts six "uniform" centres within 0.05 of +-0.72 (Gauss-Hermite k = 4 in disguise).

    Parameters
    ----------
    k, k_free : int
        Number of centres and of free-weight centres (both even).
    moments : int, default=0
        Required matched degree; 0 takes what the fit reaches.
    min_gap : float, default=0.0
        Smallest allowed distance between two centres, in units of the N(0, 1) s.d.

    Returns
    -------
    centres, weights : ndarray of float, shape (k,)

    Raises
    ------
    ValueError
        If the fit cannot reach ``moments`` (message names ``k`` and ``k_prime``).
    """
    pairs, free = k // 2, k_free // 2

    def unpack(x):
        half = np.abs(x[:pairs])
        order = np.argsort(half)
        logits = np.concatenate([x[pairs:], [0.0]])
        mass = np.exp(logits - logits.max())
        mass /= mass.sum()
        per_pair = np.concatenate(
            [mass[:free] / 2, np.full(pairs - free, mass[free] / (k - k_free))]
        )
        centres = np.concatenate([-half[order][::-1], half[order]])
        w_half = per_pair[order]
        return centres, np.concatenate([w_half[::-1], w_half])

    rng = np.random.default_rng(1000 * k + k_free)
    start = np.concatenate([stats.norm.ppf((np.arange(k) + 0.5) / k)[k - pairs :], np.zeros(free)])
    best, reached = _raise_degree(
        unpack,
        start,
        lambda x: [x * rng.uniform(0.8, 1.2, x.size) for _ in range(_RESTARTS)],
        moments,
        min_gap,
    )
    if moments and reached < moments:
        raise ValueError(
            f"k={k} centres with k_prime={k_free} free weights match at most {reached} "
            f"moments of N(0, 1), fewer than moments={moments}; raise k or k_prime"
        )
    return best
