"""Data and output objects of the ``ftrl-shocks`` task.

A cell asks: when two players run follow-the-regularized-leader (FTRL) on a finite game and
their scores are hit by random shocks, where does play go? The data object is the game (two
payoff matrices, a starting profile and the facts the metrics need: pure Nash equilibria, an
interior equilibrium, a span of pure strategies); the output holds many simulated paths of
play, sampled on a time grid, with the hitting and return counts recorded at every step.

Source: Cauvin, Legacci, Mertikopoulos, "The impact of uncertainty on regularized learning in
games", ICML 2025 (arXiv 2506.13286), abstract (read). The model (two players, scores
``dY = v(X) dt + dM``, ``X = Q(Y)``) is a reconstruction (not read in the paper): the paper's
body was not available, see the plugin README.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["EPSILONS", "REARM_GAP", "Game", "Play", "pure_nash_profiles"]

#: Neighbourhood sizes whose hitting times and returns every simulation records: a player is
#: eps-close to a pure strategy when ``1 - max_a x_a < eps`` (unitless).
EPSILONS: tuple[float, ...] = (0.1, 0.01, 0.001)

#: A return to a pure strategy counts only after the player's largest probability fell below
#: ``1 - REARM_GAP`` since the last entry: it must have left before it can come back.
REARM_GAP = 0.25


def pure_nash_profiles(
    payoff_row: np.ndarray, payoff_col: np.ndarray, strict: bool = False
) -> np.ndarray:
    """Pure Nash equilibria of a bimatrix game, by checking every profile.

    Parameters
    ----------
    payoff_row, payoff_col : ndarray of float, shape (n_row, n_col)
        Payoffs of the row and column player at each pure profile.
    strict : bool, default=False
        Keep only strict equilibria (every deviation loses strictly).

    Returns
    -------
    ndarray of int, shape (k, 2)
        The (row action, column action) of each equilibrium, in row-major order.

    >>> pure_nash_profiles(np.eye(2), np.eye(2)).tolist()
    [[0, 0], [1, 1]]
    """
    a, b = np.asarray(payoff_row, float), np.asarray(payoff_col, float)
    if strict:
        best_row = a > _max_excluding(a, axis=0)
        best_col = b > _max_excluding(b, axis=1)
    else:
        best_row = a >= a.max(axis=0, keepdims=True)
        best_col = b >= b.max(axis=1, keepdims=True)
    return np.argwhere(best_row & best_col)


def _max_excluding(m: np.ndarray, axis: int) -> np.ndarray:
    """At each entry, the largest other entry along ``axis`` (-inf if there is none)."""
    out = np.full_like(m, -np.inf)
    for k in range(m.shape[axis]):
        others = np.delete(m, k, axis=axis)
        if others.size:
            index = (k, slice(None)) if axis == 0 else (slice(None), k)
            out[index] = others.max(axis=axis)
    return out


@dataclass(frozen=True)
class Game:
    """A two-player finite game in normal form with a starting profile.

    Attributes
    ----------
    name : str
        The game's name (the dataset's).
    payoff_row : ndarray of float64, shape (n_row, n_col)
        Row player's payoff at each pure profile (utility units).
    payoff_col : ndarray of float64, shape (n_row, n_col)
        Column player's payoff at each pure profile (utility units).
    start_row : ndarray of float64, shape (n_row,)
        Row player's mixed strategy at t = 0, in the interior of the simplex.
    start_col : ndarray of float64, shape (n_col,)
        Column player's mixed strategy at t = 0, in the interior of the simplex.
    pure_nash : ndarray of int, shape (k, 2)
        Pure Nash equilibria (row action, column action); k may be 0.
    equilibrium_row, equilibrium_col : ndarray of float64, shape (n_row,) / (n_col,), or None
        An interior (fully mixed) equilibrium where the game has one, else None.
    span_row, span_col : ndarray of bool, shape (n_row,) / (n_col,), or None
        A span of pure strategies (the face of profiles using only these actions) that the
        dataset studies, else None.
    span_closed : bool or None
        Whether that span is closed under better replies (None without a span).
    """

    name: str
    payoff_row: np.ndarray
    payoff_col: np.ndarray
    start_row: np.ndarray
    start_col: np.ndarray
    pure_nash: np.ndarray
    equilibrium_row: np.ndarray | None = None
    equilibrium_col: np.ndarray | None = None
    span_row: np.ndarray | None = None
    span_col: np.ndarray | None = None
    span_closed: bool | None = None

    def __post_init__(self) -> None:
        shape = self.payoff_row.shape
        if self.payoff_col.shape != shape or len(shape) != 2:
            raise ValueError(f"payoffs must share one (n_row, n_col) shape, got {shape}")
        for label, x, n in (
            ("start_row", self.start_row, shape[0]),
            ("start_col", self.start_col, shape[1]),
        ):
            if x.shape != (n,) or not np.all(x > 0) or not np.isclose(x.sum(), 1.0):
                raise ValueError(f"{label} must be an interior point of the {n}-simplex, got {x}")
        if not (np.all(np.isfinite(self.payoff_row)) and np.all(np.isfinite(self.payoff_col))):
            raise ValueError("payoffs must be finite")

    @property
    def shape(self) -> tuple[int, int]:
        """(n_row, n_col), the numbers of pure actions."""
        return self.payoff_row.shape  # type: ignore[return-value]


@dataclass(frozen=True)
class Play:
    """Simulated paths of play of both players.

    Attributes
    ----------
    times : ndarray of float64, shape (n_snapshots,)
        Sampling times, from 0 to the horizon, in the dynamics' time units.
    x_row : ndarray of float64, shape (n_snapshots, n_paths, n_row)
        Row player's mixed strategy on each path at each sampling time.
    x_col : ndarray of float64, shape (n_snapshots, n_paths, n_col)
        Column player's mixed strategy on each path at each sampling time.
    hit_row, hit_col : ndarray of float64, shape (len(EPSILONS), n_paths)
        First time the player is eps-close to a pure strategy (``1 - max_a x_a < eps``),
        checked at every step; ``inf`` where it never is before the horizon (censored).
    returns_row, returns_col : ndarray of int64, shape (len(EPSILONS), n_paths)
        Entries into an eps-neighbourhood of a pure strategy, each after the player's largest
        probability fell below ``1 - REARM_GAP`` (the first entry included).
    dt : float
        Step of the discretisation (time units).
    """

    times: np.ndarray
    x_row: np.ndarray
    x_col: np.ndarray
    hit_row: np.ndarray
    hit_col: np.ndarray
    returns_row: np.ndarray
    returns_col: np.ndarray
    dt: float

    def __post_init__(self) -> None:
        n_snap, n_paths = self.x_row.shape[:2]
        if self.times.shape != (n_snap,) or self.x_col.shape[:2] != (n_snap, n_paths):
            raise ValueError("times, x_row and x_col must share (n_snapshots, n_paths)")
        for label in ("hit_row", "hit_col", "returns_row", "returns_col"):
            if getattr(self, label).shape != (len(EPSILONS), n_paths):
                raise ValueError(f"{label} must have shape ({len(EPSILONS)}, {n_paths})")
        if not (np.all(np.isfinite(self.x_row)) and np.all(np.isfinite(self.x_col))):
            raise ValueError("strategies must be finite")

    @property
    def horizon(self) -> float:
        """The last sampling time."""
        return float(self.times[-1])
