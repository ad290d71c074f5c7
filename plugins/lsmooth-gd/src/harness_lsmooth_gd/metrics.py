"""Metrics of the ``lsmooth-gd`` task: suboptimality and gradient norm against iterations
and oracle calls, the calls needed to reach a tolerance, and the tail's log-log rate.

Source: the quantities the paper's theorems bound (Tyurin, ICML 2025, arXiv 2412.11773,
abstract: an eps-solution f(x) - f* <= eps in the convex setting, a small gradient norm in
the nonconvex one); the tail-rate fit is this plugin's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field

from harness import Curve, Metric, Skip
from harness_lsmooth_gd.data import Problem, Trajectory

__all__ = [
    "EvalsToTolerance",
    "Final",
    "GradientNorm",
    "GradientNormPerEval",
    "GradientRate",
    "Suboptimality",
    "SuboptimalityPerEval",
    "TailRate",
    "gaps",
    "loglog_tail_slope",
]

TASK = "lsmooth-gd"


def gaps(data: Problem, output: Trajectory) -> np.ndarray:
    """f(x_k) - f*, shape (T + 1,), clipped at 0 (round-off below the minimum)."""
    return np.maximum(output.values - data.f_star, 0.0)


def loglog_tail_slope(values: np.ndarray, start: float = 0.25, floor: float = 1e-13) -> float:
    """Least-squares slope of log(values_k) on log(k) over k in [start T, T] where the value
    is above ``floor`` (round-off): -1 for a 1/k decay.

    >>> round(loglog_tail_slope(1.0 / np.maximum(np.arange(1001), 1) ** 2), 3)
    -2.0
    """
    k = np.arange(len(values))
    keep = (k >= max(1, int(start * (len(values) - 1)))) & (values > floor)
    if keep.sum() < 3:
        raise Skip(f"fewer than 3 iterates with a value above {floor:g} in the tail")
    return float(np.polyfit(np.log(k[keep]), np.log(values[keep]), 1)[0])


class Suboptimality(Metric):
    """f(x_k) - f* against the iteration k = 0..T (a curve), units of f; lower is better.

    Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract: the quantity its theorems bound.
    """

    name = "suboptimality"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: Problem, output: Trajectory) -> Curve:
        return Curve(gaps(data, output), np.arange(len(output.values)))


class SuboptimalityPerEval(Metric):
    """f(x_k) - f* against the oracle calls spent (a curve), units of f; lower is better.

    Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract: the quantity its theorems bound.
    """

    name = "suboptimality-per-eval"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: Problem, output: Trajectory) -> Curve:
        return Curve(gaps(data, output), output.evals)


class GradientNorm(Metric):
    """||grad f(x_k)|| against the iteration k (a curve), units of f per x; lower is better.

    Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract: the quantity its theorems bound.
    """

    name = "gradient-norm"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: Problem, output: Trajectory) -> Curve:
        return Curve(output.grad_norms, np.arange(len(output.values)))


class GradientNormPerEval(Metric):
    """||grad f(x_k)|| against the oracle calls spent (a curve), units of f per x; lower is
    better.

    Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract: the quantity its theorems bound.
    """

    name = "gradient-norm-per-eval"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: Problem, output: Trajectory) -> Curve:
        return Curve(output.grad_norms, output.evals)


class GradientRate(Metric):
    """Log-log slope of min_{j <= k} ||grad f(x_j)||^2 on k over the last three quarters of
    the run (values above 1e-26): -1 is the 1/k rate of a nonconvex bound, 0 a stall.
    Skipped when fewer than 3 such values.

    Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract: the nonconvex setting's
    eps-stationary point; the fit is this plugin's.
    """

    name = "gradient-rate"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: Problem, output: Trajectory) -> float:
        best = np.minimum.accumulate(output.grad_norms) ** 2
        return loglog_tail_slope(best, floor=1e-26)


class Final(Metric):
    """The last iterate: ``gap`` f(x_T) - f* and ``log10_gap`` (floored at 1e-300),
    ``grad_norm`` and ``min_grad_norm`` (min over k), ``stopped`` (1 if the run left the
    domain or overflowed) and ``monotone`` (1 if f never increased).

    Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract: the quantity its theorems bound.
    """

    name = "final"
    task = TASK
    higher_is_better: ClassVar[bool | None] = None

    def compute(self, data: Problem, output: Trajectory) -> dict[str, float]:
        gap = float(gaps(data, output)[-1])
        return {
            "gap": gap,
            "log10_gap": float(np.log10(max(gap, 1e-300))),
            "grad_norm": float(output.grad_norms[-1]),
            "min_grad_norm": float(output.grad_norms.min()),
            "stopped": float(output.stopped_at >= 0),
            "monotone": float(output.stopped_at < 0 and np.all(np.diff(output.values) <= 0)),
        }


class EvalsToTolerance(Metric):
    """Oracle calls until f(x_k) - f* <= ``tol`` (units of f): ``evals``, ``log10_evals`` and
    ``reached`` (1/0). A run that never reaches it is censored at its total calls + 1 (a
    lower bound on its true count); lower is better.

    Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract: the quantity its theorems bound.
    """

    name = "evals-to-tolerance"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    @dataclass
    class Params:
        tol: Annotated[float, Field(gt=0)] = 1e-6

    def compute(self, data: Problem, output: Trajectory) -> dict[str, float]:
        hit = np.flatnonzero(gaps(data, output) <= self.params.tol)
        evals = float(output.evals[hit[0]]) if hit.size else float(output.evals[-1] + 1)
        return {
            "evals": evals,
            "log10_evals": float(np.log10(evals)),
            "reached": float(hit.size > 0),
        }


class TailRate(Metric):
    """Log-log slope of f(x_k) - f* on k over the last three quarters of the run (k >= T/4,
    values above 1e-13): -1 is a 1/k rate, 0 a stall. Skipped when fewer than 3 such values.

    Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract: the quantity its theorems bound.
    """

    name = "tail-rate"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: Problem, output: Trajectory) -> float:
        return loglog_tail_slope(gaps(data, output))
