"""Games: their equilibria, the span's closedness, and the data object's checks."""

import numpy as np
import pytest
from harness_ftrl_shocks import datasets
from harness_ftrl_shocks.data import Game, pure_nash_profiles


def _load(cls, **params):
    return cls().load(cls.Params(**params), 7)


def test_pure_nash_of_the_named_games():
    assert _load(datasets.MatchingPennies).pure_nash.size == 0
    assert _load(datasets.RockPaperScissors).pure_nash.size == 0
    assert _load(datasets.Coordination).pure_nash.tolist() == [[0, 0], [1, 1]]
    assert _load(datasets.PrisonersDilemma).pure_nash.tolist() == [[1, 1]]
    assert _load(datasets.ClubGame).pure_nash.size == 0


def test_strict_equilibria_exclude_ties():
    ties = np.array([[1.0, 1.0], [0.0, 0.0]])
    assert pure_nash_profiles(ties, ties).tolist() == [[0, 0], [0, 1]]
    assert pure_nash_profiles(ties, np.eye(2), strict=True).tolist() == [[0, 0]]


def _better_reply_leaves_span(game: Game, grid: int = 11) -> bool:
    """Whether some profile of the span has an action outside it paying at least as much."""
    inside_r, inside_c = np.flatnonzero(game.span_row), np.flatnonzero(game.span_col)
    for p in np.linspace(0, 1, grid):
        for q in np.linspace(0, 1, grid):
            x = np.zeros(game.shape[0])
            y = np.zeros(game.shape[1])
            x[inside_r] = [p, 1 - p]
            y[inside_c] = [q, 1 - q]
            u_row, u_col = game.payoff_row @ y, x @ game.payoff_col
            if u_row[~game.span_row].max() >= x @ u_row or u_col[~game.span_col].max() >= u_col @ y:
                return True
    return False


def test_club_span_is_closed_under_better_replies_only_when_declared():
    assert not _better_reply_leaves_span(_load(datasets.ClubGame, closed=True))
    assert _better_reply_leaves_span(_load(datasets.ClubGame, closed=False))


def test_coordination_starts_at_its_mixed_equilibrium():
    game = _load(datasets.Coordination)
    assert game.start_row == pytest.approx([1 / 3, 2 / 3])
    assert game.payoff_row @ game.start_col == pytest.approx([2 / 3, 2 / 3])


def test_random_game_depends_on_the_seed_only():
    a = datasets.RandomGame().load(datasets.RandomGame.Params(), 1)
    b = datasets.RandomGame().load(datasets.RandomGame.Params(), 1)
    c = datasets.RandomGame().load(datasets.RandomGame.Params(), 2)
    assert np.array_equal(a.payoff_row, b.payoff_row) and not np.array_equal(
        a.payoff_row, c.payoff_row
    )


def test_game_refuses_a_start_on_the_boundary():
    with pytest.raises(ValueError, match="interior"):
        Game(
            "g",
            np.eye(2),
            np.eye(2),
            np.array([1.0, 0.0]),
            np.array([0.5, 0.5]),
            np.zeros((0, 2), int),
        )
