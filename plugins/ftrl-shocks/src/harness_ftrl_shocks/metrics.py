"""Metrics of the ``ftrl-shocks`` task: hitting, returns, limits, spans, the boundary.

Every metric is an average over the cell's paths (and players where it says so), so that a
seed, the unit of the claims, is one number per metric. Hitting times are heavy-tailed and
censored at the horizon: the metrics report a rate (share hit by the horizon) and a
median, never a mean.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field

from harness import Curve, Metric, Skip
from harness_ftrl_shocks.data import EPSILONS, Game, Play

__all__ = [
    "BoundaryCurve",
    "BoundaryDistance",
    "Hitting",
    "LimitSet",
    "Returns",
    "SpanMass",
    "boundary_distance",
]

TASK = "ftrl-shocks"
Epsilon = Annotated[float, Field(ge=min(EPSILONS), le=max(EPSILONS))]


def _eps_index(eps: float) -> int:
    matches = [k for k, e in enumerate(EPSILONS) if np.isclose(e, eps)]
    if not matches:
        raise Skip(f"eps={eps} is not recorded; the simulator records {EPSILONS}")
    return matches[0]


def boundary_distance(x_row: np.ndarray, x_col: np.ndarray) -> np.ndarray:
    """Distance of each profile to the boundary: the smallest probability of any action.

    ``x_row`` (..., n_row), ``x_col`` (..., n_col) -> (...), in [0, 1/min(n_row, n_col)];
    0 exactly when some player leaves an action unplayed.

    >>> boundary_distance(np.array([0.5, 0.5]), np.array([0.9, 0.1])).item()
    0.1
    """
    return np.minimum(x_row.min(axis=-1), x_col.min(axis=-1))


class Hitting(Metric):
    """First time each player comes eps-close to a pure strategy (``1 - max_a x_a < eps``).

    Keys: ``rate``, the share of (path, player) pairs that do so by the horizon, in [0, 1],
    higher is more often; ``median_time``, the median first time over those pairs, with
    paths not hit by the horizon counted at the horizon (so a lower bound when ``rate`` < 1/2),
    in time units.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    "every player's trajectory of play reaches an arbitrarily small neighborhood of a pure
    strategy in finite time". Its estimate of that time was not read.

    Parameters
    ----------
    eps : float, default=0.01
        Neighbourhood size; one of ``data.EPSILONS``.
    """

    name = "hitting"
    task = TASK
    higher_is_better: ClassVar[bool | None] = None

    @dataclass
    class Params:
        eps: Epsilon = 0.01

    def compute(self, data: Game, output: Play) -> dict[str, float]:
        k = _eps_index(self.params.eps)
        times = np.concatenate([output.hit_row[k], output.hit_col[k]])
        censored = np.minimum(times, output.horizon)
        return {
            "rate": float(np.mean(np.isfinite(times))),
            "median_time": float(np.median(censored)),
        }


class Returns(Metric):
    """Entries into eps-neighbourhoods of pure strategies, each after leaving (see REARM_GAP).

    Keys: ``mean``, entries per (path, player) by the horizon (count, the first included);
    ``rate``, the share of (path, player) pairs with at least two entries, i.e. at least one
    return after leaving, in [0, 1].

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    "they return arbitrarily close to some (possibly different) pure strategy infinitely
    often". The hysteresis that makes a return countable is this plugin's choice.

    Parameters
    ----------
    eps : float, default=0.01
        Neighbourhood size; one of ``data.EPSILONS``.
    """

    name = "returns"
    task = TASK
    higher_is_better: ClassVar[bool | None] = None

    @dataclass
    class Params:
        eps: Epsilon = 0.01

    def compute(self, data: Game, output: Play) -> dict[str, float]:
        k = _eps_index(self.params.eps)
        counts = np.concatenate([output.returns_row[k], output.returns_col[k]])
        return {"mean": float(counts.mean()), "rate": float(np.mean(counts >= 2))}


class LimitSet(Metric):
    """Where paths settle: at a pure Nash equilibrium, at another pure profile, or nowhere.

    A path settles at the pure profile (a, b) when, at every sampling time of the last
    ``tail`` of the horizon, the row player is eps-close to a and the column player to b.
    Keys (shares of paths, in [0, 1], summing to 1): ``nash`` (settled at a pure Nash
    equilibrium of the game), ``other`` (settled at a pure profile that is not one),
    ``unsettled``.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    "the only possible limits of the FTRL dynamics under uncertainty are pure Nash
    equilibria". Reading a limit off a finite horizon is this plugin's proxy.

    Parameters
    ----------
    eps : float, default=0.01
        Neighbourhood size (unitless).
    tail : float, default=0.2
        Final share of the horizon over which a path must stay put, in (0, 1].
    """

    name = "limit-set"
    task = TASK
    higher_is_better: ClassVar[bool | None] = None

    @dataclass
    class Params:
        eps: Annotated[float, Field(gt=0.0, lt=0.5)] = 0.01
        tail: Annotated[float, Field(gt=0.0, le=1.0)] = 0.2

    def compute(self, data: Game, output: Play) -> dict[str, float]:
        late = output.times >= (1 - self.params.tail) * output.horizon
        x_row, x_col = output.x_row[late], output.x_col[late]
        close = (x_row.max(axis=2) > 1 - self.params.eps) & (
            x_col.max(axis=2) > 1 - self.params.eps
        )
        a, b = x_row.argmax(axis=2), x_col.argmax(axis=2)
        settled = close.all(axis=0) & (a == a[-1]).all(axis=0) & (b == b[-1]).all(axis=0)
        nash = np.zeros(data.shape, dtype=bool)
        nash[tuple(data.pure_nash.T)] = True
        at_nash = settled & nash[a[-1], b[-1]]
        return {
            "nash": float(at_nash.mean()),
            "other": float((settled & ~at_nash).mean()),
            "unsettled": float((~settled).mean()),
        }


class SpanMass(Metric):
    """Probability both players put on the game's span of pure strategies, at the horizon.

    Keys: ``final``, the mean over paths of the smaller of the two players' mass on their
    span actions, in [0, 1], higher is closer to the span; ``stay``, the share of paths where
    both masses exceed ``1 - eps``, in [0, 1].

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    "a span of pure strategies is stable and attracting if and only if it is closed under
    better replies".

    Parameters
    ----------
    eps : float, default=0.01
        Tolerance of ``stay`` (unitless).

    Raises
    ------
    Skip
        If the game declares no span.
    """

    name = "span-mass"
    task = TASK
    higher_is_better: ClassVar[bool | None] = None

    @dataclass
    class Params:
        eps: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.01

    def compute(self, data: Game, output: Play) -> dict[str, float]:
        if data.span_row is None or data.span_col is None:
            raise Skip(f"game '{data.name}' declares no span of pure strategies")
        mass = np.minimum(
            output.x_row[-1][:, data.span_row].sum(axis=1),
            output.x_col[-1][:, data.span_col].sum(axis=1),
        )
        return {"final": float(mass.mean()), "stay": float(np.mean(mass > 1 - self.params.eps))}


class BoundaryDistance(Metric):
    """Mean distance to the boundary (smallest action probability) at the start and the end.

    Keys: ``start`` and ``final``, means over paths of :func:`boundary_distance` at t = 0 and
    at the horizon, in [0, 1/n], unitless; ``change`` = ``final - start``, negative when play
    drifted toward the boundary.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    in games where deterministic FTRL is recurrent, "randomness ... causing the stochastic
    dynamics to drift toward the boundary on average". The functional the paper shows to
    drift was not read; this distance is this plugin's choice.
    """

    name = "boundary-distance"
    task = TASK
    higher_is_better: ClassVar[bool | None] = None

    def compute(self, data: Game, output: Play) -> dict[str, float]:
        distance = boundary_distance(output.x_row, output.x_col).mean(axis=1)
        return {
            "start": float(distance[0]),
            "final": float(distance[-1]),
            "change": float(distance[-1] - distance[0]),
        }


class BoundaryCurve(Metric):
    """Mean distance to the boundary over time, one point per sampling time (index).

    Source: as :class:`BoundaryDistance`; values in [0, 1/n], unitless, steps are the
    indices of ``Play.times``.
    """

    name = "boundary-curve"
    task = TASK
    higher_is_better: ClassVar[bool | None] = None

    def compute(self, data: Game, output: Play) -> Curve:
        distance = boundary_distance(output.x_row, output.x_col).mean(axis=1)
        return Curve(distance, steps=np.arange(1, distance.size + 1))
