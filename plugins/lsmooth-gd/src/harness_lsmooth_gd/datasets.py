"""Datasets of the ``lsmooth-gd`` task: l-smooth objectives, each with a starting point.

Every dataset places x0 on a ray from the minimiser, x0 = x* + t u with u a seeded random
unit direction, at the distance t where ||grad f(x0)|| equals ``start_grad``: the claims vary
the initial gradient norm directly. The seed is the starting point (and, where noted, the
objective's random shift), the unit of replication of every claim.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import Field

from harness import Dataset
from harness_lsmooth_gd.data import Problem
from harness_lsmooth_gd.objectives import (
    Barrier,
    CoshSum,
    DoubleWell,
    LogisticQuartic,
    Objective,
    Power,
)

__all__ = [
    "CoshDataset",
    "DigitsLogistic",
    "DoubleWellDataset",
    "LogBarrier",
    "PowerDataset",
    "digits",
    "start_at_gradient",
]

TASK = "lsmooth-gd"
StartGrad = Annotated[float, Field(gt=0, le=1e12)]
Dim = Annotated[int, Field(ge=1, le=10_000)]
_BISECTIONS = 200


def start_at_gradient(
    objective: Objective, center: np.ndarray, u: np.ndarray, target: float
) -> np.ndarray:
    """x* + t u with ||grad f|| = ``target`` (bisection on t; the norm grows along the ray
    from the minimiser of a convex f and is infinite at a domain's wall)."""
    end = objective.ray_end(center, u)

    def norm(t: float) -> float:
        with np.errstate(all="ignore"):
            return float(np.linalg.norm(objective.grad(center + t * u)))

    low, high = 0.0, end if np.isfinite(end) else 1.0
    while not np.isfinite(end) and norm(high) < target:
        low, high = high, 2 * high
    for _ in range(_BISECTIONS):
        mid = (low + high) / 2
        if mid in (low, high):
            break
        low, high = (mid, high) if norm(mid) < target else (low, mid)
    return center + low * u


def digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled digits, ``(pixels (1797, 64) in 0..16, target (1797,))``,
    read from the file ``sklearn.datasets.load_digits`` reads (``datasets/data/digits.csv.gz``
    in the installed package) without importing scikit-learn (seconds of start-up)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("digits-logistic needs scikit-learn installed (its digits)")
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data" / "digits.csv.gz"
    table = np.loadtxt(path, delimiter=",")
    return table[:, :-1], table[:, -1].astype(int)


def _direction(rng: np.random.Generator, dim: int) -> np.ndarray:
    u = rng.standard_normal(dim)
    return u / np.linalg.norm(u)


class PowerDataset(Dataset):
    """f(x) = sum_i |x_i|^p / p on R^d, p > 2: l(s) = l0 + (p-1) s^((p-2)/(p-1)).

    Source: x^p (p > 2) is the paper's first example of an l-smooth function that is not
    L-smooth (Tyurin, ICML 2025, arXiv 2412.11773, introduction, read through a summary);
    the separable d-dimensional form and l are this plugin's (reconstruction). f* = 0.

    Parameters
    ----------
    p : float, default=4.0
        The power, in (2, 20].
    dim : int, default=10
        d.
    l0 : float, default=1.0
        l(0) > 0 (the profile's floor; f itself has zero curvature at 0).
    start_grad : float, default=1e3
        ||grad f(x0)||, in units of f per unit of x.

    Returns
    -------
    Problem
        ``x0`` of shape (dim,), ``f_star`` = 0.
    """

    name = "power"
    task = TASK

    @dataclass
    class Params:
        p: Annotated[float, Field(gt=2, le=20)] = 4.0
        dim: Dim = 10
        l0: Annotated[float, Field(gt=0, le=1e6)] = 1.0
        start_grad: StartGrad = 1e3

    def load(self, params: Params, seed: int) -> Problem:
        obj = Power(p=params.p, dim=params.dim, l0=params.l0)
        u = _direction(np.random.default_rng(seed), params.dim)
        x0 = start_at_gradient(obj, obj.minimiser(), u, params.start_grad)
        return Problem.make(obj, x0, 0.0)


class CoshDataset(Dataset):
    """f(x) = sum_i 2 cosh(x_i - s_i) - 2, s ~ N(0, I) from the seed: l(s) = 2 + s.

    Source: e^x is named among the paper's examples (Tyurin, ICML 2025, introduction, read
    through a summary); this symmetric, separable form is (L0, L1) = (2, 1)-smooth exactly,
    so the paper's step and the (L0, L1) step use the same l (reconstruction). f* = 0.

    Parameters
    ----------
    dim : int, default=10
        d.
    start_grad : float, default=1e3
        ||grad f(x0)||.
    """

    name = "cosh"
    task = TASK

    @dataclass
    class Params:
        dim: Dim = 10
        start_grad: StartGrad = 1e3

    def load(self, params: Params, seed: int) -> Problem:
        rng = np.random.default_rng(seed)
        obj = CoshSum(shift=rng.standard_normal(params.dim))
        x0 = start_at_gradient(obj, obj.minimiser(), _direction(rng, params.dim), params.start_grad)
        return Problem.make(obj, x0, 0.0)


class DoubleWellDataset(Dataset):
    """f(x) = sum_i (x_i^2 - 1)^4 / 8 on R^d: nonconvex, l(s) = 1 + 4 s^(4/7) + 7 s^(6/7).

    The seed draws a global minimiser (signs +-1) and the direction of the start from it.
    Source: the paper's nonconvex setting (Tyurin, ICML 2025, arXiv 2412.11773, abstract:
    an eps-stationary point); the objective and its l are this plugin's (reconstruction,
    not read in the paper). f* = 0.

    Parameters
    ----------
    dim : int, default=10
        d.
    start_grad : float, default=1e3
        ||grad f(x0)||.
    """

    name = "double-well"
    task = TASK

    @dataclass
    class Params:
        dim: Dim = 10
        start_grad: StartGrad = 1e3

    def load(self, params: Params, seed: int) -> Problem:
        rng = np.random.default_rng(seed)
        obj = DoubleWell(signs=rng.choice([-1.0, 1.0], params.dim))
        x0 = start_at_gradient(obj, obj.minimiser(), _direction(rng, params.dim), params.start_grad)
        return Problem.make(obj, x0, 0.0)


class LogBarrier(Dataset):
    """f(x) = sum_i -log(1 - x_i) - log(1 + x_i) + c_i x_i on (-1, 1)^d, c_i ~ U(-tilt, tilt)
    from the seed: l(s) quadratic, neither L- nor (L0, L1)-smooth; a large ``start_grad``
    puts x0 close to the domain's wall.

    Source: -log x is named among the paper's examples (Tyurin, ICML 2025, abstract's lay
    summary on OpenReview: "-log x ... violate L-smoothness"); the box barrier and its l are
    this plugin's (reconstruction). f* in closed form.

    Parameters
    ----------
    dim : int, default=10
        d.
    tilt : float, default=0.5
        Half-width of the uniform law of the linear terms c_i.
    start_grad : float, default=1e3
        ||grad f(x0)||.
    """

    name = "log-barrier"
    task = TASK

    @dataclass
    class Params:
        dim: Dim = 10
        tilt: Annotated[float, Field(ge=0, le=100)] = 0.5
        start_grad: StartGrad = 1e3

    def load(self, params: Params, seed: int) -> Problem:
        rng = np.random.default_rng(seed)
        obj = Barrier(tilt=rng.uniform(-params.tilt, params.tilt, params.dim))
        center = obj.minimiser()
        x0 = start_at_gradient(obj, center, _direction(rng, params.dim), params.start_grad)
        return Problem.make(obj, x0, obj.value(center))


class DigitsLogistic(Dataset):
    """Logistic regression (digit < 5 against >= 5) on scikit-learn's bundled digits,
    1,797 8x8 images, pixels / 16 and an intercept (d = 65), with ridge mu and a quartic
    penalty lam: l(s) = L_log + mu + 3 lam^(1/3) (B^(2/3) + s^(2/3)) (quadrature); lam = 0
    is L-smooth (l == L_log + mu), where the paper's step is exactly 1/L.

    Source: scikit-learn ``load_digits`` (UCI optdigits test set, shipped with the library,
    no download); the penalised objective and its l are this plugin's (reconstruction, not
    read in the paper). f* by Newton's method.

    Parameters
    ----------
    ridge : float, default=1e-3
        mu > 0.
    quartic : float, default=1e-2
        lam >= 0.
    start_grad : float, default=10.0
        ||grad f(x0)||.
    """

    name = "digits-logistic"
    task = TASK

    @dataclass
    class Params:
        ridge: Annotated[float, Field(gt=0, le=1e3)] = 1e-3
        quartic: Annotated[float, Field(ge=0, le=1e3)] = 1e-2
        start_grad: StartGrad = 10.0

    def load(self, params: Params, seed: int) -> Problem:
        pixels, target = digits()
        features = np.hstack([pixels / 16.0, np.ones((len(target), 1))])
        labels = np.where(target < 5, 1.0, -1.0)
        obj = LogisticQuartic.build(features, labels, params.ridge, params.quartic)
        center = obj.minimiser()
        u = _direction(np.random.default_rng(seed), features.shape[1])
        x0 = start_at_gradient(obj, center, u, params.start_grad)
        return Problem.make(obj, x0, obj.value(center))
