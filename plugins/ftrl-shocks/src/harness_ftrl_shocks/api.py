"""What a method author needs for the ``ftrl-shocks`` task, from one module.

A method takes a :class:`Game` and returns a :class:`Play`; :func:`simulate` runs stochastic
FTRL on many paths at once for any :class:`Regularizer`:

>>> import numpy as np
>>> from harness_ftrl_shocks.api import REGULARIZERS, simulate
>>> from harness_ftrl_shocks.datasets import MatchingPennies
>>> game = MatchingPennies().load(MatchingPennies.Params(), 0)
>>> play = simulate(game, REGULARIZERS["entropic"], 1.0, 0.05, 1.0, 4, np.random.default_rng(0))
>>> play.x_row.shape
(21, 4, 2)
"""

from harness_ftrl_shocks._dynamics import REGULARIZERS, Regularizer, project_simplex, simulate
from harness_ftrl_shocks.data import EPSILONS, REARM_GAP, Game, Play, pure_nash_profiles

__all__ = [
    "EPSILONS",
    "REARM_GAP",
    "REGULARIZERS",
    "Game",
    "Play",
    "Regularizer",
    "project_simplex",
    "pure_nash_profiles",
    "simulate",
]
