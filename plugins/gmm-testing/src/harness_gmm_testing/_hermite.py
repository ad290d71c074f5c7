"""Hermite-chaos maths: normalised Hermite polynomials, the degree-m chaos kernel and the
unbiased U-statistic ``U_m`` in its power-sum form (no explicit moment tensors).

Source: docs/papers/gmm-testing.md §3.2 (a derivation, not from the paper): Mehler's formula
for the kernel ``K_m(x, y) = sum_{|alpha|=m} H_alpha(x) H_alpha(y)``.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from numpy.polynomial import hermite_e

__all__ = [
    "chaos_dimension",
    "hermite_features",
    "hermite_u_statistic",
    "kernel_coefficients",
    "monomial_index",
    "normalised_hermite",
    "symmetric_power",
    "u_statistic_from_features",
]


def normalised_hermite(j: int, x: np.ndarray) -> np.ndarray:
    """``h_j(x) = He_j(x) / sqrt(j!)``, orthonormal under N(0, 1).

    Parameters
    ----------
    j : int
        Degree, ``j >= 0``.
    x : ndarray of float, any shape
        Points.

    Returns
    -------
    ndarray of float, same shape as ``x``
    """
    coef = np.zeros(j + 1)
    coef[j] = 1.0
    return hermite_e.hermeval(x, coef) / math.sqrt(math.factorial(j))


def chaos_dimension(d: int, m: int) -> int:
    """``N_m = C(d + m - 1, m)``: the number of Hermite polynomials of exact degree m in d
    variables (the dimension of the degree-m Wiener chaos)."""
    return math.comb(d + m - 1, m)


@functools.lru_cache(maxsize=256)
def kernel_coefficients(m: int, d: int) -> dict[tuple[int, int, int], float]:
    """Coefficients of ``K_m(x, y) = sum c[a, b, c] <x, y>^a |x|^(2b) |y|^(2c)``.

    ``K_m`` is the rho^m coefficient of Mehler's kernel
    ``(1 - rho^2)^(-d/2) exp((rho s - rho^2 (|x|^2 + |y|^2)/2) / (1 - rho^2))``, expanded by
    the exp-series recursion ``g_n = (1/n) sum_j j f_j g_(n-j)`` (``f_j = s`` for odd j,
    ``t = -(|x|^2 + |y|^2)/2`` for even j) and convolved with the coefficients
    ``(d/2)_k / k!`` of ``(1 - rho^2)^(-d/2)``.

    Returns
    -------
    dict
        ``{(a, b, c): coefficient}`` with ``a + 2b + 2c <= m`` and ``a = m (mod 2)``.
    """
    # g[n] is a polynomial in (s, t): array indexed [a, e] for s^a t^e.
    g = [np.zeros((m + 1, m + 1)) for _ in range(m + 1)]
    g[0][0, 0] = 1.0
    for n in range(1, m + 1):
        for j in range(1, n + 1):
            prev = g[n - j]
            if j % 2:  # f_j = s: shift a by one
                g[n][1:, :] += j * prev[:-1, :] / n
            else:  # f_j = t: shift e by one
                g[n][:, 1:] += j * prev[:, :-1] / n
    st = np.zeros((m + 1, m + 1))
    rising = 1.0  # (d/2)_k / k!, the rho^(2k) coefficient of (1 - rho^2)^(-d/2)
    for k in range(m // 2 + 1):
        st += rising * g[m - 2 * k]
        rising *= (d / 2 + k) / (k + 1)
    out: dict[tuple[int, int, int], float] = {}
    for a, e in zip(*np.nonzero(st), strict=True):
        for b in range(e + 1):
            key = (int(a), b, int(e) - b)
            out[key] = out.get(key, 0.0) + st[a, e] * (-0.5) ** e * math.comb(int(e), b)
    return out


@functools.lru_cache(maxsize=64)
def monomial_index(d: int, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Index of the parent monomial, the last variable and sqrt(multinomial) per monomial."""
    combos = list(itertools.combinations_with_replacement(range(d), p))
    if p == 0:
        return np.zeros(0, int), np.zeros(0, int), np.ones(1)
    parents = {c: i for i, c in enumerate(itertools.combinations_with_replacement(range(d), p - 1))}
    parent = np.array([parents[c[:-1]] for c in combos])
    last = np.array([c[-1] for c in combos])
    weight = np.array(
        [
            math.sqrt(math.factorial(p) / math.prod(math.factorial(c.count(v)) for v in set(c)))
            for c in combos
        ]
    )
    return parent, last, weight


def symmetric_power(X: np.ndarray, p: int) -> np.ndarray:
    """Compressed symmetric tensor power: rows ``z_i`` with ``z_i . z_j = <x_i, x_j>^p``.

    Parameters
    ----------
    X : ndarray of float, shape (n, d)
    p : int
        Power, ``p >= 0``.

    Returns
    -------
    ndarray of float, shape (n, C(d + p - 1, p))
        Monomials ``x^alpha`` (``|alpha| = p``) scaled by ``sqrt(p! / alpha!)``.
    """
    n, d = X.shape
    Z = np.ones((n, 1))
    for q in range(1, p + 1):
        parent, last, _ = monomial_index(d, q)
        Z = Z[:, parent] * X[:, last]
    return Z * monomial_index(d, p)[2]


_ROW_CHUNK = 4096  # samples per block: the transposed feature blocks stay in cache


def _symmetric_power_rows(XT: np.ndarray, p: int) -> np.ndarray:
    """:func:`symmetric_power` transposed, of shape (C(d + p - 1, p), n), for XT of shape
    (d, n): gathering whole rows keeps every copy contiguous (ten times faster than columns)."""
    d, n = XT.shape
    Z = np.ones((1, n))
    for q in range(1, p + 1):
        parent, last, _ = monomial_index(d, q)
        Z = Z[parent] * XT[last]
    return Z * monomial_index(d, p)[2][:, None]


def hermite_u_statistic(X: np.ndarray, m: int) -> float:
    """The unbiased degree-m chaos U-statistic, power-sum form.

    ``U_m = sum_{i != j} K_m(x_i, x_j) / (n (n - 1))``. Each pair sum
    ``sum_ij <x_i, x_j>^a |x_i|^(2b) |x_j|^(2c)`` is the Frobenius product
    ``<A_(a,b), A_(a,c)>`` with ``A_(a,b) = Z_ceil(a/2)^T diag(|x|^(2b)) Z_floor(a/2)``, so the
    cost is O(n C(d + m/2, m/2)^2) (one BLAS ``syrk``-sized product per Gram, accumulated
    over blocks of ``_ROW_CHUNK`` samples), not O(n^2) or O(n d^m).

    Parameters
    ----------
    X : ndarray of float, shape (n, d)
        The sample, ``n >= 2``.
    m : int
        Chaos degree, ``m >= 1``.

    Returns
    -------
    float
        ``U_m``; under N(0, I_d) mean 0 and variance ``2 N_m / (n (n - 1))``; under the
        pancakes law ``E U_m = (E_B h_m)^2``.
    """
    n, d = X.shape
    coef = kernel_coefficients(m, d)
    needed = sorted({(a, b) for a, b, _ in coef} | {(a, c) for a, _, c in coef})
    grams: dict[tuple[int, int], np.ndarray] = {}
    diagonal = 0.0
    for start in range(0, n, _ROW_CHUNK):
        XT = np.ascontiguousarray(X[start : start + _ROW_CHUNK].T)
        q = np.einsum("ij,ij->j", XT, XT)
        powers = {p: _symmetric_power_rows(XT, p) for p in {(a + 1) // 2 for a, _ in needed}}
        powers.update(
            {p: _symmetric_power_rows(XT, p) for p in {a // 2 for a, _ in needed} - powers.keys()}
        )
        for a, b in needed:
            left, right = powers[(a + 1) // 2], powers[a // 2]
            block = left @ (right * q**b).T if b else left @ right.T
            grams[(a, b)] = grams[(a, b)] + block if (a, b) in grams else block
        diagonal += sum(
            value * float(np.sum(q ** (a + b + c))) for (a, b, c), value in coef.items()
        )
    total = sum(
        value * float(np.vdot(grams[(a, b)], grams[(a, c)])) for (a, b, c), value in coef.items()
    )
    return (total - diagonal) / (n * (n - 1))


def hermite_features(X: np.ndarray, m: int) -> np.ndarray:
    """Explicit chaos features ``H_alpha(x) = prod_j h_(alpha_j)(x_j)``, ``|alpha| = m``.

    For tests and small inputs only: shape (n, C(d + m - 1, m)).
    """
    n, d = X.shape
    h = np.stack([normalised_hermite(j, X) for j in range(m + 1)])  # (m + 1, n, d)
    cols = []
    for combo in itertools.combinations_with_replacement(range(d), m):
        col = np.ones(n)
        for var in set(combo):
            col = col * h[combo.count(var), :, var]
        cols.append(col)
    return np.stack(cols, axis=1)


def u_statistic_from_features(features: np.ndarray) -> float:
    """``(|sum_i phi_i|^2 - sum_i |phi_i|^2) / (n (n - 1))`` for features of shape (n, N)."""
    n = features.shape[0]
    total = features.sum(axis=0)
    return (float(total @ total) - float(np.sum(features**2))) / (n * (n - 1))
