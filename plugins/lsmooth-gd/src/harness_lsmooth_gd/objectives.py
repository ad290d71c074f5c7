"""Objectives that are l-smooth but not L-smooth, each with its profile l and its minimum.

Every objective has ``value(x)`` (+inf outside its domain), ``grad(x)``, ``hess_norm(x)``
(the spectral norm of the Hessian, used by the tests to check ||Hess f|| <= l(||grad f||)),
``profile()`` (its l, an :class:`~harness_lsmooth_gd.ell.Ell`), ``minimiser()`` and
``sublevel(f0)``: the gradient-norm and curvature bounds on {f <= f0} that the rivals'
constant steps need.

Source: Tyurin, ICML 2025 (arXiv 2412.11773); the examples x^p (p > 2), e^x and -log x are
named in the paper's introduction (read through a summary of its first section, chatpaper
168027); the profiles below are this plugin's derivations (reconstruction, not read in the
paper), checked numerically by ``tests/test_objectives.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from harness_lsmooth_gd.ell import Ell

__all__ = [
    "Barrier",
    "CoshSum",
    "DoubleWell",
    "LogisticQuartic",
    "Objective",
    "Power",
    "Separable",
    "Sublevel",
]

_BISECTIONS = 200


@dataclass(frozen=True)
class Sublevel:
    """Bounds on the sublevel set {f <= f(x0)}, where GD that decreases f stays.

    Attributes
    ----------
    grad_bound : float
        An upper bound on ||grad f|| over the set (units of f per unit of x).
    curvature : float
        An upper bound on ||Hess f|| over the set (units of f per unit of x squared): the L
        of "GD with 1/L on a bounded region".
    """

    grad_bound: float
    curvature: float


class Objective:
    """The interface every objective keeps (see the module docstring)."""

    def profile(self) -> Ell:
        """The objective's l: ||Hess f(x)|| <= l(||grad f(x)||) everywhere in its domain."""
        raise NotImplementedError

    def value(self, x: np.ndarray) -> float:
        raise NotImplementedError

    def grad(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def hess_norm(self, x: np.ndarray) -> float:
        raise NotImplementedError

    def minimiser(self) -> np.ndarray:
        raise NotImplementedError

    def sublevel(self, f0: float) -> Sublevel:
        raise NotImplementedError

    def ray_end(self, origin: np.ndarray, direction: np.ndarray) -> float:
        """How far ``origin + t direction`` stays in the domain (inf for all of R^d)."""
        return np.inf


@dataclass(frozen=True, eq=False)
class Separable(Objective):
    """f(x) = sum_i phi(x_i; i) with phi convex, phi'' growing away from its minimiser.

    Subclasses give ``phi``, ``dphi`` and ``ddphi`` (elementwise over the coordinates),
    ``lower``/``upper`` (the open domain of each coordinate) and ``center`` (the minimiser).
    """

    def phi(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def dphi(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def ddphi(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    lower: float = -np.inf
    upper: float = np.inf

    def value(self, x: np.ndarray) -> float:
        if np.any(x <= self.lower) or np.any(x >= self.upper):
            return np.inf
        return float(self.phi(x).sum())

    def grad(self, x: np.ndarray) -> np.ndarray:
        return self.dphi(x)

    def hess_norm(self, x: np.ndarray) -> float:
        return float(np.abs(self.ddphi(x)).max())

    def ray_end(self, origin: np.ndarray, direction: np.ndarray) -> float:
        up = np.where(
            direction > 0, (self.upper - origin) / np.where(direction > 0, direction, 1), np.inf
        )
        down = np.where(
            direction < 0, (self.lower - origin) / np.where(direction < 0, direction, 1), np.inf
        )
        return float(min(up.min(), down.min()))

    def sublevel(self, f0: float) -> Sublevel:
        """Each coordinate's interval where phi_i <= f0 - sum_{j != i} min phi_j, found by
        bisection on both sides of the minimiser; the bounds are phi' and phi'' at its ends."""
        center = self.minimiser()
        floor = self.phi(center)
        budget = f0 - (floor.sum() - floor)
        ends = [self._reach(center, budget, side) for side in (-1.0, 1.0)]
        grad = np.maximum(np.abs(self.dphi(ends[0])), np.abs(self.dphi(ends[1])))
        curv = np.maximum(self.ddphi(ends[0]), self.ddphi(ends[1]))
        return Sublevel(float(np.linalg.norm(grad)), float(curv.max()))

    def _reach(self, center: np.ndarray, budget: np.ndarray, side: float) -> np.ndarray:
        wall = self.upper if side > 0 else self.lower
        inside = center.copy()
        outside = np.full_like(center, wall) if np.isfinite(wall) else center + side
        while not np.isfinite(wall) and np.any(self._phi_or_inf(outside) <= budget):
            outside = np.where(
                self._phi_or_inf(outside) <= budget, center + 2 * (outside - center), outside
            )
        for _ in range(_BISECTIONS):
            mid = (inside + outside) / 2
            ok = self._phi_or_inf(mid) <= budget
            inside, outside = np.where(ok, mid, inside), np.where(ok, outside, mid)
        return inside

    def _phi_or_inf(self, x: np.ndarray) -> np.ndarray:
        bad = (x <= self.lower) | (x >= self.upper)
        with np.errstate(all="ignore"):
            return np.where(bad, np.inf, self.phi(np.where(bad, 0.0, x)))


@dataclass(frozen=True, eq=False)
class Power(Separable):
    """f(x) = sum_i |x_i|^p / p, p > 2: not L-smooth on R^d (curvature grows like |x|^(p-2)).

    l(s) = l0 + (p - 1) s^((p-2)/(p-1)): phi'' = (p-1)|x|^(p-2) = (p-1)|phi'|^((p-2)/(p-1))
    and |phi'(x_i)| <= ||grad f||; ``l0`` > 0 keeps l positive (the paper's requirement).
    """

    p: float = 4.0
    dim: int = 10
    l0: float = 1.0

    def profile(self) -> Ell:
        return Ell(((self.l0, 0.0), (self.p - 1, (self.p - 2) / (self.p - 1))))

    def phi(self, x: np.ndarray) -> np.ndarray:
        return np.abs(x) ** self.p / self.p

    def dphi(self, x: np.ndarray) -> np.ndarray:
        return np.sign(x) * np.abs(x) ** (self.p - 1)

    def ddphi(self, x: np.ndarray) -> np.ndarray:
        return (self.p - 1) * np.abs(x) ** (self.p - 2)

    def minimiser(self) -> np.ndarray:
        return np.zeros(self.dim)


@dataclass(frozen=True, eq=False)
class CoshSum(Separable):
    """f(x) = sum_i 2 cosh(x_i - s_i) - 2: exponential growth, (L0, L1) = (2, 1)-smooth.

    phi'' = 2 cosh = sqrt(4 + phi'^2) <= 2 + |phi'|, so l(s) = 2 + s (affine: the closed form).
    """

    shift: np.ndarray = field(default_factory=lambda: np.zeros(1))

    def profile(self) -> Ell:
        return Ell(((2.0, 0.0), (1.0, 1.0)))

    def phi(self, x: np.ndarray) -> np.ndarray:
        return 2 * np.cosh(x - self.shift) - 2

    def dphi(self, x: np.ndarray) -> np.ndarray:
        return 2 * np.sinh(x - self.shift)

    def ddphi(self, x: np.ndarray) -> np.ndarray:
        return 2 * np.cosh(x - self.shift)

    def minimiser(self) -> np.ndarray:
        return self.shift.copy()


@dataclass(frozen=True, eq=False)
class Barrier(Separable):
    """f(x) = sum_i -log(1 - x_i) - log(1 + x_i) + c_i x_i on (-1, 1)^d: a log barrier.

    With h(x) = -log(1 - x^2): h'' = 1 + h'^2 + sqrt(1 + h'^2) exactly, <= 2 + |h'| + h'^2,
    and |h'| <= |phi'| + |c_i|, so l(s) = 2 + (s + c) + (s + c)^2 with c = max |c_i|:
    quadratic in s (the closed form), neither L- nor (L0, L1)-smooth.
    """

    tilt: np.ndarray = field(default_factory=lambda: np.zeros(1))
    lower: float = -1.0
    upper: float = 1.0

    def profile(self) -> Ell:
        c = float(np.abs(self.tilt).max())
        return Ell(((2.0 + c + c * c, 0.0), (1.0 + 2 * c, 1.0), (1.0, 2.0)))

    def phi(self, x: np.ndarray) -> np.ndarray:
        return -np.log1p(-x) - np.log1p(x) + self.tilt * x

    def dphi(self, x: np.ndarray) -> np.ndarray:
        return 2 * x / ((1 - x) * (1 + x)) + self.tilt

    def ddphi(self, x: np.ndarray) -> np.ndarray:
        return 1 / (1 - x) ** 2 + 1 / (1 + x) ** 2

    def minimiser(self) -> np.ndarray:
        return -self.tilt / (1 + np.sqrt(1 + self.tilt**2))


@dataclass(frozen=True, eq=False)
class DoubleWell(Separable):
    """f(x) = sum_i (x_i^2 - 1)^4 / 8: nonconvex (phi'' < 0 for x^2 < 1/7), with 2^d global
    minima x_i = +-1 of value 0, each flat (quartic), and a local maximum at 0.

    phi' = x (x^2 - 1)^3 and |phi''| = (x^2 - 1)^2 |7x^2 - 1| <= l(|phi'|) with
    l(s) = 1 + 4 s^(4/7) + 7 s^(6/7): 7 s^(6/7) matches 7x^6 at large |x|, 4 s^(4/7) covers
    the next order (3x^4), and 1 the curvature at x = 0 (found on a grid of |x| <= 1e6,
    checked by the tests); concave, so quadrature.

    Attributes
    ----------
    signs : ndarray of float, shape (d,)
        The minimiser the starting point is drawn around, entries +-1.
    """

    signs: np.ndarray = field(default_factory=lambda: np.ones(1))

    def profile(self) -> Ell:
        return Ell(((1.0, 0.0), (4.0, 4 / 7), (7.0, 6 / 7)))

    def phi(self, x: np.ndarray) -> np.ndarray:
        return (x * x - 1) ** 4 / 8

    def dphi(self, x: np.ndarray) -> np.ndarray:
        return x * (x * x - 1) ** 3

    def ddphi(self, x: np.ndarray) -> np.ndarray:
        return (x * x - 1) ** 2 * (7 * x * x - 1)

    def hess_norm(self, x: np.ndarray) -> float:
        return float(np.abs(self.ddphi(x)).max())

    def minimiser(self) -> np.ndarray:
        return self.signs.astype(float)


@dataclass(frozen=True, eq=False)
class LogisticQuartic(Objective):
    """Logistic regression with a ridge and a quartic penalty:
    f(w) = mean_i log(1 + exp(-y_i x_i^T w)) + (mu/2)||w||^2 + (lam/4)||w||^4.

    ||Hess|| <= L_log + mu + 3 lam ||w||^2 with L_log = ||X||_2^2 / (4n); since
    ||grad|| >= lam ||w||^3 - B with B = mean ||x_i||, ||w||^2 <= ((s + B)/lam)^(2/3)
    <= (s^(2/3) + B^(2/3)) / lam^(2/3): l(s) = L_log + mu + 3 lam^(1/3) (B^(2/3) + s^(2/3)),
    concave (quadrature). With lam = 0 it is L-smooth, l == L_log + mu.

    Attributes
    ----------
    features : ndarray of float, shape (n, d)
    labels : ndarray of float, shape (n,), in {-1, +1}
    ridge, quartic : float
        mu > 0 and lam >= 0.
    lipschitz, bound : float
        L_log and B (see :meth:`build`).
    """

    features: np.ndarray
    labels: np.ndarray
    ridge: float
    quartic: float
    lipschitz: float
    bound: float

    @classmethod
    def build(cls, features: np.ndarray, labels: np.ndarray, ridge: float, quartic: float):
        """The objective with L_log = ||X||_2^2 / (4n) and B = mean ||x_i|| computed."""
        gram = features.T @ features
        lipschitz = float(np.linalg.eigvalsh(gram)[-1] / (4 * features.shape[0]))
        bound = float(np.linalg.norm(features, axis=1).mean())
        return cls(features, labels, ridge, quartic, lipschitz, bound)

    def profile(self) -> Ell:
        base = self.lipschitz + self.ridge
        if self.quartic == 0:
            return Ell(((base, 0.0),))
        lam = self.quartic ** (1 / 3)
        return Ell(((base + 3 * lam * self.bound ** (2 / 3), 0.0), (3 * lam, 2 / 3)))

    def _margins(self, w: np.ndarray) -> np.ndarray:
        return self.labels * (self.features @ w)

    def value(self, w: np.ndarray) -> float:
        sq = float(w @ w)
        loss = np.logaddexp(0.0, -self._margins(w)).mean()
        return float(loss + self.ridge / 2 * sq + self.quartic / 4 * sq * sq)

    def grad(self, w: np.ndarray) -> np.ndarray:
        weights = -self.labels * 0.5 * (1 - np.tanh(self._margins(w) / 2))  # y / (1 + e^m)
        return self.features.T @ weights / len(weights) + (self.ridge + self.quartic * (w @ w)) * w

    def hessian(self, w: np.ndarray) -> np.ndarray:
        """The Hessian, shape (d, d)."""
        prob = 0.5 * (1 + np.tanh(self._margins(w) / 2))  # 1 / (1 + e^-m)
        curv = prob * (1 - prob) / len(prob)
        outer = self.features.T @ (self.features * curv[:, None])
        sq = float(w @ w)
        return (
            outer
            + (self.ridge + self.quartic * sq) * np.eye(len(w))
            + 2 * self.quartic * np.outer(w, w)
        )

    def hess_norm(self, w: np.ndarray) -> float:
        return float(np.linalg.eigvalsh(self.hessian(w))[-1])

    def minimiser(self) -> np.ndarray:
        """Newton's method with backtracking from w = 0, to machine precision."""
        w = np.zeros(self.features.shape[1])
        for _ in range(100):
            g = self.grad(w)
            if np.linalg.norm(g) < 1e-13:
                break
            direction = np.linalg.solve(self.hessian(w), g)
            t, f = 1.0, self.value(w)
            while self.value(w - t * direction) > f - 0.25 * t * (g @ direction) and t > 1e-12:
                t /= 2
            w = w - t * direction
        return w

    def sublevel(self, f0: float) -> Sublevel:
        """The loss is >= 0, so (mu/2) r^2 + (lam/4) r^4 <= f0 bounds r = ||w||."""
        mu, lam = self.ridge, self.quartic
        r2 = 2 * f0 / mu if lam == 0 else (-mu / 2 + np.sqrt(mu * mu / 4 + lam * f0)) / (lam / 2)
        r = float(np.sqrt(r2))
        return Sublevel(
            grad_bound=self.bound + mu * r + lam * r**3,
            curvature=self.lipschitz + mu + 3 * lam * r2,
        )
