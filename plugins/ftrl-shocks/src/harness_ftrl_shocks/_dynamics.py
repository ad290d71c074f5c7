"""Stochastic FTRL in a two-player game: regularizers, the vectorised simulator, a plain loop.

The scores follow ``dY_i = v_i(X) dt + dZ_i`` and play is ``X_i = Q_i(Y_i)``, with
``v_i`` the payoff vector of player i's pure actions against the other's mixed strategy and
``Q_i(y) = argmax_x <y, x> - h_i(x)`` over the simplex. ``Z`` is ``sigma`` times a Brownian
motion (a martingale: the paper's shocks), or with ``mean_reversion > 0`` an
Ornstein-Uhlenbeck process (mean-reverting shocks, not a martingale: a rival).

Discretisation: ``Y = U + Z`` with ``Z`` sampled exactly on the grid and ``U`` integrated by
Heun's predictor-corrector (stochastic Heun for additive noise, strong order 1), or by Euler
(``scheme="euler"``, Euler-Maruyama). Heun keeps the deterministic (sigma = 0) orbits of
zero-sum games closed to O(T dt^2); Euler spirals out at O(T dt).

Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read); the SDE
form and the kernel conditions follow the science notes' secondary reading and are a
reconstruction (not read in the paper).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from harness_ftrl_shocks.data import EPSILONS, REARM_GAP, Game, Play

__all__ = ["REGULARIZERS", "Regularizer", "simulate", "simulate_loop"]

Scheme = Literal["heun", "euler"]


@dataclass(frozen=True)
class Regularizer:
    """A regularizer ``h`` on the simplex with its choice map and mirror map.

    Attributes
    ----------
    name : str
        "entropic" (``h(x) = sum x log x``, choice map softmax, steep) or "euclidean"
        (``h(x) = |x|^2 / 2``, choice map the Euclidean projection, not steep).
    """

    name: str

    def choice(self, y: np.ndarray) -> np.ndarray:
        """``Q(y) = argmax_{x in simplex} <y, x> - h(x)`` row by row, shape (..., n) -> (..., n)."""
        if self.name == "entropic":
            z = np.exp(y - y.max(axis=-1, keepdims=True))
            return z / z.sum(axis=-1, keepdims=True)
        return project_simplex(y)

    def value(self, x: np.ndarray) -> np.ndarray:
        """``h(x)`` row by row, shape (..., n) -> (...)."""
        if self.name == "entropic":
            return np.sum(np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0), axis=-1)
        return 0.5 * np.sum(x * x, axis=-1)

    def score_of(self, x: np.ndarray) -> np.ndarray:
        """A score ``y`` with ``Q(y) = x`` for an interior ``x`` (the mirror map ``grad h``)."""
        return np.log(x) if self.name == "entropic" else np.array(x, dtype=float)


REGULARIZERS = {name: Regularizer(name) for name in ("entropic", "euclidean")}


def project_simplex(y: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row of ``y`` (shape (..., n)) onto the probability simplex.

    >>> project_simplex(np.array([[2.0, 0.0], [0.3, 0.2]])).round(2).tolist()
    [[1.0, 0.0], [0.55, 0.45]]
    """
    u = -np.sort(-y, axis=-1)
    css = np.cumsum(u, axis=-1) - 1.0
    index = np.arange(1, y.shape[-1] + 1)
    rho = np.sum(u - css / index > 0, axis=-1, keepdims=True)
    theta = np.take_along_axis(css, rho - 1, axis=-1) / rho
    return np.maximum(y - theta, 0.0)


def _noise_scale(sigma: float, mean_reversion: float, dt: float) -> tuple[float, float]:
    """(decay, std) of one exact OU step ``Z' = decay Z + std xi``; Brownian at rate 0."""
    if mean_reversion == 0.0:
        return 1.0, sigma * np.sqrt(dt)
    decay = np.exp(-mean_reversion * dt)
    return decay, sigma * np.sqrt((1.0 - decay**2) / (2.0 * mean_reversion))


def simulate(
    game: Game,
    regularizer: Regularizer,
    sigma: float,
    dt: float,
    horizon: float,
    paths: int,
    rng: np.random.Generator,
    *,
    mean_reversion: float = 0.0,
    scheme: Scheme = "heun",
    snapshots: int = 51,
) -> Play:
    """Simulate ``paths`` independent paths of stochastic FTRL at once (vectorised).

    Parameters
    ----------
    game : Game
        Payoffs and starting profile.
    regularizer : Regularizer
        Both players' regularizer.
    sigma : float
        Noise level: the shocks' standard deviation per unit time, per action (score units).
    dt : float
        Step (time units); ``round(horizon / dt)`` steps are taken.
    horizon : float
        Final time.
    paths : int
        Independent paths.
    rng : numpy.random.Generator
        Source of the shocks.
    mean_reversion : float, default=0.0
        OU rate of the shocks (1 / time units); 0 gives Brownian (martingale) shocks.
    scheme : {"heun", "euler"}, default="heun"
        Integrator of the drift.
    snapshots : int, default=51
        Sampling times, equally spaced from 0 to the horizon.

    Returns
    -------
    Play
        The sampled strategies, hitting times and return counts.
    """
    payoffs, n_row, n_col = _stacked_payoffs(game)
    n = payoffs.shape[-1]
    steps = max(1, round(horizon / dt))
    stride = max(1, steps // (snapshots - 1))
    u = np.full((2, paths, n), _ABSENT)
    u[0, :, :n_row] = regularizer.score_of(game.start_row)
    u[1, :, :n_col] = regularizer.score_of(game.start_col)
    z = np.zeros_like(u)
    decay, std = _noise_scale(sigma, mean_reversion, dt)
    eps = np.asarray(EPSILONS)[None, :, None]
    hit = np.full((2, len(EPSILONS), paths), np.inf)
    returns = np.zeros((2, len(EPSILONS), paths), dtype=np.int64)
    armed = np.ones((2, len(EPSILONS), paths), dtype=bool)
    times, xs = [], []

    x = regularizer.choice(u + z)
    for k in range(steps + 1):
        if k % stride == 0 or k == steps:
            times.append(k * dt)
            xs.append(x)
        gaps = (1.0 - x.max(axis=2))[:, None, :]
        entered = armed & (gaps < eps)
        hit[np.isinf(hit) & entered] = k * dt
        returns += entered
        armed = (armed & ~entered) | (gaps > REARM_GAP)
        if k == steps:
            break
        v = np.matmul(x[::-1], payoffs)
        z = decay * z + std * rng.standard_normal(z.shape)
        if scheme == "heun":
            w = np.matmul(regularizer.choice(u + v * dt + z)[::-1], payoffs)
            u = u + 0.5 * (v + w) * dt
        else:
            u = u + v * dt
        x = regularizer.choice(u + z)
    xs = np.stack(xs)
    return Play(
        times=np.asarray(times),
        x_row=xs[:, 0, :, :n_row],
        x_col=xs[:, 1, :, :n_col],
        hit_row=hit[0],
        hit_col=hit[1],
        returns_row=returns[0],
        returns_col=returns[1],
        dt=dt,
    )


#: Score of an action a player lacks when the other has more (both are stacked to one
#: width): its probability is exactly 0 under both choice maps.
_ABSENT = -1e9


def _stacked_payoffs(game: Game) -> tuple[np.ndarray, int, int]:
    """``(M, n_row, n_col)`` with ``M`` of shape (2, n, n), n = max(n_row, n_col), such that
    ``x_col @ M[0]`` is the row player's payoff vector and ``x_row @ M[1]`` the column
    player's (zero-padded to width n)."""
    n_row, n_col = game.shape
    n = max(n_row, n_col)
    m = np.zeros((2, n, n))
    m[0, :n_col, :n_row] = game.payoff_row.T
    m[1, :n_row, :n_col] = game.payoff_col
    return m, n_row, n_col


def simulate_loop(
    game: Game,
    regularizer: Regularizer,
    sigma: float,
    dt: float,
    horizon: float,
    paths: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """The same Heun scheme with Brownian shocks, one path at a time in plain Python loops.

    The benchmark's baseline for :func:`simulate`: it draws the same shocks in the same order
    (so the two agree path by path) and returns only the final strategies.

    Returns
    -------
    ndarray of float64, shape (paths, n_row + n_col)
        Both players' strategies at the horizon.
    """
    a, b = game.payoff_row, game.payoff_col
    n_row, n_col = game.shape
    n = max(n_row, n_col)
    steps = max(1, round(horizon / dt))
    shocks = np.stack(
        [sigma * np.sqrt(dt) * rng.standard_normal((2, paths, n)) for _ in range(steps)]
    )
    final = np.empty((paths, n_row + n_col))
    for p in range(paths):
        u_row, u_col = regularizer.score_of(game.start_row), regularizer.score_of(game.start_col)
        z_row, z_col = np.zeros(n_row), np.zeros(n_col)
        for k in range(steps):
            x_row, x_col = regularizer.choice(u_row + z_row), regularizer.choice(u_col + z_col)
            v_row, v_col = a @ x_col, x_row @ b
            z_row, z_col = z_row + shocks[k, 0, p, :n_row], z_col + shocks[k, 1, p, :n_col]
            p_row = regularizer.choice(u_row + v_row * dt + z_row)
            p_col = regularizer.choice(u_col + v_col * dt + z_col)
            u_row = u_row + 0.5 * (v_row + a @ p_col) * dt
            u_col = u_col + 0.5 * (v_col + p_row @ b) * dt
        final[p] = np.concatenate(
            [regularizer.choice(u_row + z_row), regularizer.choice(u_col + z_col)]
        )
    return final
