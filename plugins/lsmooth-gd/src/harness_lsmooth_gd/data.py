"""Data and output objects of the ``lsmooth-gd`` task.

A cell asks: started at x0 on an l-smooth objective, how fast does a first-order method
drive f(x_k) - f* and ||grad f(x_k)|| down, per iteration and per oracle call? The data
object (:class:`Problem`) is one objective with its profile l, its minimum and one starting
point; the seed draws the starting point's direction (and, where a dataset says so, the
objective's shift), so **the unit of replication is the starting point**: the methods are
deterministic and use no seed.

Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract (the l-smoothness assumption and the
step rule); the datasets' objectives are named in :mod:`harness_lsmooth_gd.objectives`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness_lsmooth_gd.ell import Ell
from harness_lsmooth_gd.objectives import Objective, Sublevel

__all__ = ["Problem", "Trajectory"]


@dataclass(frozen=True, eq=False)
class Problem:
    """One objective, its constants and one starting point.

    Attributes
    ----------
    objective : Objective
        ``value(x)`` (+inf outside the domain), ``grad(x)`` and the rest of
        :class:`~harness_lsmooth_gd.objectives.Objective`.
    ell : Ell
        The profile l with ||Hess f(x)|| <= l(||grad f(x)||) on the whole domain.
    x0 : ndarray of float, shape (d,)
        The starting point, inside the domain.
    f_star : float
        min f, in the units of f (computed: closed form or Newton's method).
    sublevel : Sublevel
        Gradient-norm and curvature bounds on {f <= f(x0)}: the L of the 1/L step.
    l0, l1 : float
        An (L0, L1) pair with l(s) <= L0 + L1 s for s <= ``sublevel.grad_bound``
        (:meth:`Ell.affine_bound`): the constants of the (L0, L1) and clipped rivals.
    """

    objective: Objective
    ell: Ell
    x0: np.ndarray
    f_star: float
    sublevel: Sublevel
    l0: float
    l1: float

    def __post_init__(self) -> None:
        if not (np.all(np.isfinite(self.x0)) and np.isfinite(self.objective.value(self.x0))):
            raise ValueError("x0 must be finite and inside the objective's domain")

    @classmethod
    def make(cls, objective: Objective, x0: np.ndarray, f_star: float) -> Problem:
        """The problem with l, the sublevel bounds and the (L0, L1) pair derived."""
        ell = objective.profile()
        sublevel = objective.sublevel(objective.value(x0))
        l0, l1 = ell.affine_bound(sublevel.grad_bound)
        return cls(objective, ell, np.asarray(x0, dtype=float), float(f_star), sublevel, l0, l1)


@dataclass(frozen=True)
class Trajectory:
    """What a method did: the objective and gradient norm at every iterate.

    Attributes
    ----------
    values : ndarray of float, shape (T + 1,)
        f(x_k) for k = 0..T, finite. A run that left the domain or overflowed stops; its
        remaining entries repeat the last finite value (no further progress).
    grad_norms : ndarray of float, shape (T + 1,)
        ||grad f(x_k)||, padded the same way.
    evals : ndarray of int, shape (T + 1,)
        Oracle calls (gradients plus the function values a line search asks for) spent up
        to and including iterate k; strictly increasing, evals[0] = 1.
    steps : ndarray of float, shape (T,)
        The step size gamma_k taken at iteration k (0 after a stop).
    stopped_at : int
        The iteration at which the run left the domain or overflowed, or -1.
    """

    values: np.ndarray
    grad_norms: np.ndarray
    evals: np.ndarray
    steps: np.ndarray
    stopped_at: int = -1

    def __post_init__(self) -> None:
        n = len(self.values)
        if len(self.grad_norms) != n or len(self.evals) != n or len(self.steps) != n - 1:
            raise ValueError("values, grad_norms and evals need T + 1 entries, steps T")
        if not (np.all(np.isfinite(self.values)) and np.all(np.isfinite(self.grad_norms))):
            raise ValueError("a trajectory's values and gradient norms must be finite")
        if np.any(np.diff(self.evals) <= 0):
            raise ValueError("evals must be strictly increasing")
