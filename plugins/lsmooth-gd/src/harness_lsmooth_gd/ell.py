"""The smoothness profile l and the paper's step size gamma(g) = int_0^1 dv / l(g + g v).

Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract (read): under
||Hess f(x)|| <= l(||grad f(x)||), with l non-decreasing and positive, gradient descent takes
``gamma_k = int_0^1 dv / l(||grad f(x_k)|| + ||grad f(x_k)|| v)``; for l == L it is 1/L.
The closed forms for affine and quadratic l are direct integrations of that formula
(reconstruction, not read in the paper); other profiles are integrated by Gauss-Legendre
quadrature.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["QUADRATURE_NODES", "Ell"]

#: Gauss-Legendre nodes of the quadrature: the integrand is smooth on [0, 1] for g > 0.
QUADRATURE_NODES = 32
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(QUADRATURE_NODES)
_V = (_NODES + 1.0) / 2.0  # nodes mapped to [0, 1]
_W = _WEIGHTS / 2.0
_SMALL = 1e-8  # below this argument the series of log1p(z)/z and arctan(t)/t is exact


def _log1p_ratio(z: np.ndarray) -> np.ndarray:
    """log(1 + z) / z, equal to 1 at z = 0, for z >= 0."""
    safe = np.where(z < _SMALL, 1.0, z)
    return np.where(z < _SMALL, 1.0 - z / 2.0, np.log1p(safe) / safe)


def _arctan_ratio(t: np.ndarray) -> np.ndarray:
    """arctan(t) / t, equal to 1 at t = 0, for t >= 0."""
    safe = np.where(t < _SMALL, 1.0, t)
    return np.where(t < _SMALL, 1.0 - t * t / 3.0, np.arctan(safe) / safe)


@dataclass(frozen=True)
class Ell:
    """A smoothness profile l(s) = sum_j c_j s^(k_j), non-decreasing and positive.

    Attributes
    ----------
    terms : tuple of (float, float)
        ``(c_j, k_j)`` pairs: coefficient c_j >= 0 (units of curvature, 1/x^2 per f) and
        exponent k_j >= 0; l(0) (the sum of the c_j with k_j = 0) must be positive.

    Examples
    --------
    >>> Ell(((2.0, 0.0),)).step(np.array([0.0, 5.0])).tolist()  # l == L gives 1/L
    [0.5, 0.5]
    """

    terms: tuple[tuple[float, float], ...]

    def __post_init__(self) -> None:
        if any(c < 0 or k < 0 for c, k in self.terms):
            raise ValueError(f"l needs coefficients and exponents >= 0, got {self.terms}")
        if self.at_zero <= 0:
            raise ValueError(f"l(0) must be positive, got {self.terms}")

    @property
    def at_zero(self) -> float:
        """l(0): the curvature bound where the gradient vanishes."""
        return float(sum(c for c, k in self.terms if k == 0))

    def __call__(self, s: np.ndarray) -> np.ndarray:
        """l(s) for gradient norms ``s >= 0`` (any shape)."""
        s = np.asarray(s, dtype=float)
        return sum(c * s**k if k else c * np.ones_like(s) for c, k in self.terms)

    def constant(self) -> Ell:
        """The profile frozen at l(0): what L-smoothness would assume near the minimiser."""
        return Ell(((self.at_zero, 0.0),))

    def scaled(self, factor: float) -> Ell:
        """``factor * l``: every coefficient multiplied by ``factor``."""
        return Ell(tuple((factor * c, k) for c, k in self.terms))

    @property
    def quadratic(self) -> tuple[float, float, float] | None:
        """``(a, b, c)`` with l(s) = a s^2 + b s + c when every exponent is 0, 1 or 2."""
        if any(k not in (0.0, 1.0, 2.0) for _, k in self.terms):
            return None
        coef = {k: 0.0 for k in (0.0, 1.0, 2.0)}
        for c, k in self.terms:
            coef[k] += c
        return coef[2.0], coef[1.0], coef[0.0]

    def step(
        self, g: np.ndarray, integration: Literal["auto", "quadrature"] = "auto"
    ) -> np.ndarray:
        """The step gamma(g) = int_0^1 dv / l(g (1 + v)) for gradient norms ``g >= 0``.

        Parameters
        ----------
        g : array-like of float, any shape
            Gradient norms ||grad f(x_k)||, >= 0.
        integration : {"auto", "quadrature"}
            "auto" uses the closed form when l is affine or quadratic, quadrature otherwise.

        Returns
        -------
        ndarray of float, the shape of ``g``
            Step sizes, in units of 1/curvature; gamma(0) = 1/l(0).
        """
        g = np.asarray(g, dtype=float)
        form = self.quadratic if integration == "auto" else None
        if form is None:
            return self._quadrature(g)
        a, b, c = form
        return self._affine(g, b, c) if a == 0 else self._quadratic(g, a, b, c)

    def _quadrature(self, g: np.ndarray) -> np.ndarray:
        values = self(g[..., None] * (1.0 + _V))
        return (_W / values).sum(axis=-1)

    @staticmethod
    def _affine(g: np.ndarray, b: float, c: float) -> np.ndarray:
        """int_g^2g ds / (c + b s) / g = log(1 + z) / z / (c + b g), z = b g / (c + b g)."""
        base = c + b * g
        return _log1p_ratio(b * g / base) / base

    @staticmethod
    def _quadratic(g: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
        """int_g^2g ds / (a s^2 + b s + c) / g: arctan form for D = 4ac - b^2 > 0, else log."""
        disc = 4 * a * c - b * b
        if disc > 0:
            root = np.sqrt(disc)
            u, w = (4 * a * g + b) / root, (2 * a * g + b) / root
            t = (2 * a * g / root) / (1 + u * w)  # arctan(u) - arctan(w) = arctan(t)
            return (2 / root) * (2 * a / root) / (1 + u * w) * _arctan_ratio(t)
        spread = np.sqrt(-disc)
        q1, q2 = (b - spread) / (2 * a), (b + spread) / (2 * a)  # a (s + q1)(s + q2), q >= 0
        # log((2g + q1)/(g + q1)) - log((2g + q2)/(g + q2)) = log1p(w), without cancellation
        w = g * (q2 - q1) / ((g + q1) * (2 * g + q2))
        return _log1p_ratio(w) / (a * (g + q1) * (2 * g + q2))

    def affine_bound(self, s_max: float) -> tuple[float, float]:
        """(L0, L1) with l(s) <= L0 + L1 s: globally for a concave l (the tangent at s = 1,
        by concavity of each s^k, k <= 1), on [0, s_max] for a convex l (the secant).

        Source: the (L0, L1)-smoothness of Zhang et al. (2019) as a special l; the choice
        of the pair is this plugin's (reconstruction, not read in the paper).
        """
        if all(k <= 1 for _, k in self.terms):
            l1 = sum(c * k for c, k in self.terms if k > 0)
            l0 = self.at_zero + sum(c * (1 - k) for c, k in self.terms if k > 0)
            return float(l0), float(l1)
        if all(k == 0 or k >= 1 for _, k in self.terms):
            l0 = self.at_zero
            return l0, float((self(np.array(s_max)) - l0) / s_max)
        raise ValueError(f"l mixes concave and convex terms: {self.terms}")
