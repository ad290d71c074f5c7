"""Methods of the ``lsmooth-gd`` task: gradient descent with the paper's step and rivals.

Every method is deterministic (the seed is unused: the starting point is the dataset's) and
returns a :class:`~harness_lsmooth_gd.data.Trajectory`. The GD family shares
:func:`descend`: x_{k+1} = x_k - gamma(||grad f(x_k)||) grad f(x_k), one gradient per step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from harness import Method
from harness_lsmooth_gd.data import Problem, Trajectory

__all__ = [
    "L0L1GD",
    "ArmijoGD",
    "ClippedGD",
    "ConstantGD",
    "LSmoothGD",
    "NormalizedGD",
    "descend",
]

TASK = "lsmooth-gd"
Steps = Annotated[int, Field(ge=1, le=1_000_000)]

#: A run stops when f exceeds this (an overflow on its way) or leaves the domain (+inf).
BLOW_UP = 1e250


def descend(problem: Problem, step: Callable[[float], float], steps: int) -> Trajectory:
    """Gradient descent x_{k+1} = x_k - step(||g_k||) g_k for ``steps`` iterations.

    A step that leaves the domain, overflows, or lands above :data:`BLOW_UP` stops the run
    (``stopped_at``); the trajectory then repeats its last finite entries.
    """
    obj = problem.objective
    x = problem.x0.copy()
    values, norms, gammas = np.empty(steps + 1), np.empty(steps + 1), np.zeros(steps)
    values[0] = obj.value(x)
    g = obj.grad(x)
    norms[0] = np.linalg.norm(g)
    stopped = -1
    with np.errstate(all="ignore"):
        for k in range(steps):
            gammas[k] = step(norms[k]) if norms[k] > 0 else 0.0
            x = x - gammas[k] * g
            value = obj.value(x)
            g = obj.grad(x)
            norm = np.linalg.norm(g)
            if not (np.isfinite(value) and value < BLOW_UP and np.isfinite(norm)):
                stopped, gammas[k] = k + 1, 0.0
                values[k + 1 :], norms[k + 1 :] = values[k], norms[k]
                break
            values[k + 1], norms[k + 1] = value, norm
    return Trajectory(values, norms, np.arange(1, steps + 2), gammas, stopped)


@dataclass
class GDParams:
    """steps: iterations T (one gradient each)."""

    steps: Steps = 300


class LSmoothGD(Method):
    """GD with the paper's step gamma_k = int_0^1 dv / l(||g_k|| + ||g_k|| v).

    Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract (read): the step that minimises
    the l-smooth quadratic-like upper bound, as 1/L does under L-smoothness. Closed form for
    affine and quadratic l, Gauss-Legendre quadrature otherwise
    (:meth:`~harness_lsmooth_gd.ell.Ell.step`).

    Parameters
    ----------
    steps : int, default=300
        Iterations T (one gradient each).
    integration : {"auto", "quadrature"}, default="auto"
        "quadrature" forces the quadrature where a closed form exists (tests compare them).
    ell_growth : bool, default=True
        False feeds the rule l frozen at l(0) (the L-smooth assumption near the minimiser):
        a wrong l, the claims' negative control.
    ell_scale : float, default=1.0
        Multiplies l (1 is the true profile; below 1 l is too small, the step too long).

    Returns
    -------
    Trajectory
        T + 1 iterates' f and ||grad f||, ``evals`` = 1..T+1, the steps gamma_k (1/curvature).
    """

    name = "gd-lsmooth"
    task = TASK

    @dataclass
    class Params:
        steps: Steps = 300
        integration: Literal["auto", "quadrature"] = "auto"
        ell_growth: bool = True
        ell_scale: Annotated[float, Field(gt=0, le=1e6)] = 1.0

    def run(self, data: Problem, params: Params, seed: int) -> Trajectory:
        ell = data.ell if params.ell_growth else data.ell.constant()
        ell = ell.scaled(params.ell_scale)
        return descend(data, lambda g: float(ell.step(g, params.integration)), params.steps)


class ConstantGD(Method):
    """GD with the constant step 1/L, L the curvature bound on the sublevel set {f <= f(x0)}.

    Source: the classical L-smooth step (Nesterov 2018), restricted to the bounded region the
    iterates stay in (GD with 1/L on a bounded region). L grows with the start.

    Parameters
    ----------
    steps : int, default=300
        Iterations T (one gradient each).
    """

    name = "gd-constant"
    task = TASK
    Params = GDParams

    def run(self, data: Problem, params: GDParams, seed: int) -> Trajectory:
        gamma = 1.0 / data.sublevel.curvature
        return descend(data, lambda g: gamma, params.steps)


class L0L1GD(Method):
    """(L0, L1)-GD: gamma_k = 1 / (L0 + L1 ||g_k||), with the problem's (L0, L1) pair.

    Source: the (L0, L1)-smooth step of Gorbunov et al. / Vankov et al. (2024), as cited in
    the science notes (not read here); the pair from :meth:`Ell.affine_bound`.

    Parameters
    ----------
    steps : int, default=300
        Iterations T (one gradient each).
    """

    name = "gd-l0l1"
    task = TASK
    Params = GDParams

    def run(self, data: Problem, params: GDParams, seed: int) -> Trajectory:
        return descend(data, lambda g: 1.0 / (data.l0 + data.l1 * g), params.steps)


class ClippedGD(Method):
    """Clipped GD: gamma_k = min(1/L0, 1/(L1 ||g_k||)): step length at most 1/L1.

    Source: Zhang, He, Sra, Jadbabaie (ICLR 2020), gradient clipping under (L0, L1)-smoothness
    with eta = 1/L0 and clipping threshold L0/L1 (constants as cited, not read here).

    Parameters
    ----------
    steps : int, default=300
        Iterations T (one gradient each).
    """

    name = "gd-clipped"
    task = TASK
    Params = GDParams

    def run(self, data: Problem, params: GDParams, seed: int) -> Trajectory:
        l1 = data.l1 if data.l1 > 0 else np.inf
        return descend(data, lambda g: min(1.0 / data.l0, 1.0 / (l1 * g)), params.steps)


class NormalizedGD(Method):
    """Normalized GD: gamma_k = eta / ||g_k||, a fixed step length eta.

    Source: normalized gradient descent as analysed under (L0, L1)-smoothness by Vankov et
    al. (2024) (cited, not read); eta defaults to 1/L1 (1/L0 where L1 = 0).

    Parameters
    ----------
    steps : int, default=300
        Iterations T (one gradient each).
    step_length : float, default=0.0
        eta in units of x; 0 means the default 1/L1.

    Returns
    -------
    Trajectory
        As :class:`LSmoothGD`'s.
    """

    name = "gd-normalized"
    task = TASK

    @dataclass
    class Params:
        steps: Steps = 300
        step_length: Annotated[float, Field(ge=0, le=1e6)] = 0.0

    def run(self, data: Problem, params: Params, seed: int) -> Trajectory:
        eta = params.step_length or 1.0 / (data.l1 if data.l1 > 0 else data.l0)
        return descend(data, lambda g: eta / g, params.steps)


class ArmijoGD(Method):
    """GD with Armijo backtracking: from twice the last step, halve until
    f(x - t g) <= f(x) - c t ||g||^2; every trial point costs one function value.

    Source: Armijo (1966); Nocedal and Wright, Numerical Optimization, Algorithm 3.1.
    A practical baseline that needs function values (a different oracle); not a rival.

    Parameters
    ----------
    steps : int, default=300
        Iterations (each: one gradient and one or more function values).
    sufficient : float, default=1e-4
        c in (0, 1).

    Returns
    -------
    Trajectory
        ``evals`` counts the gradients and the trial function values.
    """

    name = "gd-armijo"
    task = TASK

    @dataclass
    class Params:
        steps: Steps = 300
        sufficient: Annotated[float, Field(gt=0, lt=1)] = 1e-4

    def run(self, data: Problem, params: Params, seed: int) -> Trajectory:
        obj, n = data.objective, params.steps
        x, t = data.x0.copy(), 1.0 / data.ell.at_zero
        values, norms, gammas = np.empty(n + 1), np.empty(n + 1), np.zeros(n)
        evals = np.empty(n + 1, dtype=int)
        values[0], g = obj.value(x), obj.grad(x)
        norms[0], evals[0] = np.linalg.norm(g), 1
        with np.errstate(all="ignore"):
            for k in range(n):
                t, calls = 2 * t, 1
                sq = norms[k] ** 2
                while obj.value(x - t * g) > values[k] - params.sufficient * t * sq and t > 1e-300:
                    t, calls = t / 2, calls + 1
                gammas[k], x = t, x - t * g
                values[k + 1], g = obj.value(x), obj.grad(x)
                norms[k + 1], evals[k + 1] = np.linalg.norm(g), evals[k] + calls + 1
        return Trajectory(values, norms, evals, gammas)
