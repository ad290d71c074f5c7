"""Methods of the ``ftrl-shocks`` task: FTRL with shocks on the scores, and a rival."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field

from harness import Method
from harness_ftrl_shocks._dynamics import REGULARIZERS, simulate
from harness_ftrl_shocks.data import Game, Play

__all__ = ["MeanRevertingShocks", "StochasticFTRL"]

TASK = "ftrl-shocks"


@dataclass
class _Common:
    regularizer: Literal["entropic", "euclidean"] = "entropic"
    sigma: Annotated[float, Field(ge=0.0)] = 1.0
    dt: Annotated[float, Field(gt=0.0, le=1.0)] = 0.01
    horizon: Annotated[float, Field(gt=0.0)] = 50.0
    paths: Annotated[int, Field(ge=1, le=100_000)] = 200
    scheme: Literal["heun", "euler"] = "heun"
    snapshots: Annotated[int, Field(ge=2, le=1001)] = 51


class StochasticFTRL(Method):
    """Follow-the-regularized-leader with Brownian shocks on the scores (S-FTRL).

    ``dY_i = v_i(X) dt + sigma dW_i``, ``X_i = Q_i(Y_i)`` for both players, simulated on
    ``paths`` independent paths with the seed's generator. ``sigma = 0`` is deterministic
    FTRL (replicator dynamics for the entropic regularizer): the natural control.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    FTRL whose "payoff observations and strategy updates are continually impacted by random
    shocks". The SDE form (additive noise ``sigma`` per action, independent across actions
    and players) is a reconstruction (not read in the paper).

    Parameters
    ----------
    regularizer : {"entropic", "euclidean"}, default="entropic"
        ``sum x log x`` (choice map softmax) or ``|x|^2 / 2`` (Euclidean projection).
    sigma : float, default=1.0
        Shock level: standard deviation of each score's shock per unit time (score units).
    dt : float, default=0.01
        Step of the discretisation (time units).
    horizon : float, default=50.0
        Final time (time units).
    paths : int, default=200
        Independent paths per cell.
    scheme : {"heun", "euler"}, default="heun"
        Drift integrator: stochastic Heun (order 1) or Euler-Maruyama.
    snapshots : int, default=51
        Equally spaced sampling times kept in the output.

    Returns
    -------
    Play
        Sampled strategies, hitting times and returns of every path.
    """

    name = "stochastic-ftrl"
    task = TASK
    test_params: ClassVar[dict] = {"horizon": 1.0, "dt": 0.05, "paths": 8, "snapshots": 5}

    @dataclass
    class Params(_Common):
        pass

    def run(self, data: Game, params: Params, seed: int) -> Play:
        return simulate(
            data,
            REGULARIZERS[params.regularizer],
            params.sigma,
            params.dt,
            params.horizon,
            params.paths,
            np.random.default_rng(seed),
            scheme=params.scheme,
            snapshots=params.snapshots,
        )


class MeanRevertingShocks(Method):
    """FTRL whose score shocks mean-revert (Ornstein-Uhlenbeck): noise that is no martingale.

    ``Y_i = U_i + Z_i`` with ``dU_i = v_i(X) dt`` and ``dZ_i = -theta Z_i dt + sigma dW_i``:
    the same instantaneous shock level as :class:`StochasticFTRL`, but the shocks are undone
    over a time ``1 / theta``, so they do not accumulate. A rival: it lacks the paper's
    mechanism (shocks that add up, a martingale in the scores) yet perturbs play as much.

    Source: this plugin's rival, named in its issue ("noise that is not a martingale");
    the paper's abstract (arXiv 2506.13286, read) describes persistent random shocks.

    Parameters
    ----------
    mean_reversion : float, default=1.0
        theta, the shocks' rate of return to 0 (1 / time units); stationary standard
        deviation ``sigma / sqrt(2 theta)``.
    regularizer, sigma, dt, horizon, paths, scheme, snapshots
        As for :class:`StochasticFTRL`.

    Returns
    -------
    Play
        Sampled strategies, hitting times and returns of every path.
    """

    name = "mean-reverting-shocks"
    task = TASK
    test_params: ClassVar[dict] = {"horizon": 1.0, "dt": 0.05, "paths": 8, "snapshots": 5}

    @dataclass
    class Params(_Common):
        mean_reversion: Annotated[float, Field(gt=0.0)] = 1.0

    def run(self, data: Game, params: Params, seed: int) -> Play:
        return simulate(
            data,
            REGULARIZERS[params.regularizer],
            params.sigma,
            params.dt,
            params.horizon,
            params.paths,
            np.random.default_rng(seed),
            mean_reversion=params.mean_reversion,
            scheme=params.scheme,
            snapshots=params.snapshots,
        )
