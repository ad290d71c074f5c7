"""Datasets of the ``ftrl-shocks`` task: finite two-player games with a starting profile.

Each game is chosen for one of the paper's statements (abstract of arXiv 2506.13286, read):
zero-sum games with an interior equilibrium (matching pennies, rock-paper-scissors), where
deterministic FTRL is recurrent; a coordination game (two strict pure equilibria and a mixed
one); a game with a strict dominant-strategy equilibrium; a game with a span of pure strategies
closed under better replies that holds no pure equilibrium; random games. The payoff values
and starting points are this plugin's choices (reconstruction, not read in the paper).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
from pydantic import Field

from harness import Dataset
from harness_ftrl_shocks.data import Game, pure_nash_profiles

__all__ = [
    "ClubGame",
    "Coordination",
    "MatchingPennies",
    "PrisonersDilemma",
    "RandomGame",
    "RockPaperScissors",
]

TASK = "ftrl-shocks"
Probability = Annotated[float, Field(gt=0.0, lt=1.0)]


def _game(name: str, a: np.ndarray, b: np.ndarray, start_row, start_col, **facts) -> Game:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return Game(
        name=name,
        payoff_row=a,
        payoff_col=b,
        start_row=np.asarray(start_row, float),
        start_col=np.asarray(start_col, float),
        pure_nash=pure_nash_profiles(a, b),
        **facts,
    )


class MatchingPennies(Dataset):
    """Matching pennies: zero-sum 2x2, unique equilibrium (1/2, 1/2) for both, no pure one.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    "zero-sum games with interior equilibria", where deterministic FTRL is recurrent.

    Parameters
    ----------
    start : float, default=0.75
        Row player's initial probability of heads; the column player starts at (1/2, 1/2).

    Notes
    -----
    Payoffs +-1 (row wins on a match) and the start are this plugin's choice.
    """

    name = "matching-pennies"
    task = TASK

    @dataclass
    class Params:
        start: Probability = 0.75

    def load(self, params: Params, seed: int) -> Game:
        a = np.array([[1.0, -1.0], [-1.0, 1.0]])
        half = np.full(2, 0.5)
        return _game(
            self.name,
            a,
            -a,
            [params.start, 1 - params.start],
            half,
            equilibrium_row=half,
            equilibrium_col=half,
        )


class RockPaperScissors(Dataset):
    """Rock-paper-scissors: zero-sum 3x3 with the uniform equilibrium and no pure one.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read);
    the game is this plugin's example of a zero-sum game with an interior equilibrium.

    Parameters
    ----------
    start : float, default=0.5
        Row player's initial probability of rock (the rest split evenly); the column player
        starts uniform.
    """

    name = "rock-paper-scissors"
    task = TASK

    @dataclass
    class Params:
        start: Probability = 0.5

    def load(self, params: Params, seed: int) -> Game:
        a = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
        third = np.full(3, 1 / 3)
        rest = (1 - params.start) / 2
        return _game(
            self.name,
            a,
            -a,
            [params.start, rest, rest],
            third,
            equilibrium_row=third,
            equilibrium_col=third,
        )


class Coordination(Dataset):
    """A 2x2 coordination game: strict pure equilibria (0, 0) and (1, 1), a mixed one.

    Payoffs ``A = B = [[2, 0], [0, 1]]``; the mixed equilibrium plays action 0 with
    probability 1/3. Play starts at the mixed equilibrium plus ``offset`` on action 0.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    "the only possible limits ... are pure Nash equilibria".

    Parameters
    ----------
    offset : float, default=0.0
        Added to both players' initial probability of action 0 (in (-1/3, 2/3)); 0 starts at
        the mixed equilibrium, a rest point of deterministic FTRL.
    """

    name = "coordination"
    task = TASK

    @dataclass
    class Params:
        offset: Annotated[float, Field(gt=-1 / 3, lt=2 / 3)] = 0.0

    def load(self, params: Params, seed: int) -> Game:
        a = np.array([[2.0, 0.0], [0.0, 1.0]])
        mixed = np.array([1 / 3, 2 / 3])
        start = mixed + np.array([params.offset, -params.offset])
        return _game(
            self.name, a, a.copy(), start, start, equilibrium_row=mixed, equilibrium_col=mixed
        )


class PrisonersDilemma(Dataset):
    """Prisoner's dilemma: defection (action 1) strictly dominant, (1, 1) a strict equilibrium.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read);
    the game is this plugin's example of a strict pure equilibrium.

    Parameters
    ----------
    start : float, default=0.9
        Both players' initial probability of cooperating (action 0).
    """

    name = "prisoners-dilemma"
    task = TASK

    @dataclass
    class Params:
        start: Probability = 0.9

    def load(self, params: Params, seed: int) -> Game:
        a = np.array([[3.0, 0.0], [5.0, 1.0]])
        start = [params.start, 1 - params.start]
        return _game(self.name, a, a.T.copy(), start, start)


class ClubGame(Dataset):
    """A 3x3 zero-sum game whose span {0, 1} x {0, 1} is a matching-pennies block.

    ``A = [[1, -1, 2], [-1, 1, 2], [-2, c, 0]]``, ``B = -A``, with ``c = -2`` when ``closed``
    and the row player's action 2 answering column action 0 with ``A[2, 0] = 2`` when not.
    Closed: against any mixed profile of the span, action 2 pays at least 1 less than the
    span's actions for both players, so the span is closed under better replies; it holds no
    pure equilibrium (its only equilibrium is (1/2, 1/2, 0) for both). Not closed: action 2
    is a better reply of the row player to column action 0, and play cycles out of the span.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    "a span of pure strategies is stable and attracting if and only if it is closed under
    better replies". The game is this plugin's construction.

    Parameters
    ----------
    closed : bool, default=True
        Whether the span is closed under better replies.
    leak : float, default=0.05
        Both players' initial probability of action 2 (outside the span).
    """

    name = "club-game"
    task = TASK

    @dataclass
    class Params:
        closed: bool = True
        leak: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.05

    def load(self, params: Params, seed: int) -> Game:
        a = np.array([[1.0, -1.0, 2.0], [-1.0, 1.0, 2.0], [-2.0, -2.0, 0.0]])
        if not params.closed:
            a[2, 0] = 2.0
        start = np.append((1 - params.leak) * np.array([0.6, 0.4]), params.leak)
        span = np.array([True, True, False])
        return _game(
            self.name,
            a,
            -a,
            start,
            start,
            span_row=span,
            span_col=span.copy(),
            span_closed=params.closed,
        )


class RandomGame(Dataset):
    """An n x n game with independent standard normal payoffs, drawn from the seed.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    "in any game"; the family is this plugin's choice.

    Parameters
    ----------
    n : int, default=3
        Actions per player, at least 2.
    """

    name = "random-game"
    task = TASK

    @dataclass
    class Params:
        n: Annotated[int, Field(ge=2, le=10)] = 3

    def load(self, params: Params, seed: int) -> Game:
        rng = np.random.default_rng(seed)
        a, b = rng.standard_normal((2, params.n, params.n))
        uniform = np.full(params.n, 1 / params.n)
        return _game(self.name, a, b, uniform, uniform.copy())
