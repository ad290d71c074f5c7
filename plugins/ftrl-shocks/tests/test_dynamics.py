"""The simulator: choice maps, Heun against the plain loop, and the drift's sign."""

import numpy as np
import pytest
from harness_ftrl_shocks import datasets
from harness_ftrl_shocks._dynamics import (
    REGULARIZERS,
    Regularizer,
    project_simplex,
    simulate,
    simulate_loop,
)
from harness_ftrl_shocks.data import Game
from harness_ftrl_shocks.metrics import boundary_distance


class HardMax(Regularizer):
    """A wrong regularizer: h = 0 is not strictly convex, so its 'choice' is argmax."""

    def choice(self, y):
        return np.eye(y.shape[-1])[y.argmax(axis=-1)]

    def value(self, x):
        return np.zeros(x.shape[:-1])


def _choice_problems(reg: Regularizer, rng: np.random.Generator) -> list[str]:
    """A regularizer's choice map must land in the simplex, maximise <y, x> - h(x) and be
    Lipschitz (h strictly convex): a small change of y moves x a little."""
    y = rng.normal(size=(500, 3))
    y[:250, 1] = y[:250, 0]  # near ties, where a choice map that jumps would show it
    x = reg.choice(y)
    problems = []
    if not (np.allclose(x.sum(axis=1), 1) and np.all(x >= 0)):
        problems.append("not in the simplex")
    others = rng.dirichlet(np.ones(3), size=500)
    if np.any((y * others).sum(1) - reg.value(others) > (y * x).sum(1) - reg.value(x) + 1e-9):
        problems.append("not a maximiser")
    step = 1e-4 * rng.normal(size=y.shape)
    moved = np.abs(reg.choice(y + step) - x).sum(1) / np.abs(step).sum(1)
    if moved.max() > 10:
        problems.append("not Lipschitz")
    return problems


@pytest.mark.parametrize("name", ["entropic", "euclidean"])
def test_choice_map_is_a_lipschitz_maximiser_on_the_simplex(name):
    assert _choice_problems(REGULARIZERS[name], np.random.default_rng(0)) == []


def test_regularizer_that_is_not_strictly_convex_fails_the_check():
    assert "not Lipschitz" in _choice_problems(HardMax("entropic"), np.random.default_rng(0))


def test_projection_keeps_interior_points_and_clips_far_ones():
    assert project_simplex(np.array([0.2, 0.3, 0.5])) == pytest.approx([0.2, 0.3, 0.5])
    assert project_simplex(np.array([5.0, 0.0, 0.0])) == pytest.approx([1.0, 0.0, 0.0])


def test_vectorised_simulator_matches_the_plain_loop_path_by_path():
    game = datasets.RockPaperScissors().load(datasets.RockPaperScissors.Params(), 0)
    reg = REGULARIZERS["entropic"]
    play = simulate(game, reg, 0.7, 0.05, 2.0, 6, np.random.default_rng(3))
    final = simulate_loop(game, reg, 0.7, 0.05, 2.0, 6, np.random.default_rng(3))
    assert np.hstack([play.x_row[-1], play.x_col[-1]]) == pytest.approx(final, abs=1e-12)


def _pennies(sigma: float, sign: float = 1.0, scheme: str = "heun"):
    game = datasets.MatchingPennies().load(datasets.MatchingPennies.Params(), 0)
    if sign != 1.0:  # a drift of the wrong sign: each player minimises its payoff
        game = type(game)(
            **{**game.__dict__, "payoff_row": -game.payoff_row, "payoff_col": -game.payoff_col}
        )
    return simulate(
        game,
        REGULARIZERS["entropic"],
        sigma,
        0.02,
        10.0,
        100,
        np.random.default_rng(1),
        scheme=scheme,
    )


def test_deterministic_ftrl_keeps_its_orbit_in_matching_pennies():
    play = _pennies(0.0)
    distance = boundary_distance(play.x_row, play.x_col)[:, 0]
    assert distance.min() > 0.15  # the closed orbit through (3/4, 1/2) stays inside
    assert np.isinf(play.hit_row).all()


def test_euler_spirals_out_where_heun_keeps_the_orbit():
    heun = boundary_distance(*(lambda p: (p.x_row, p.x_col))(_pennies(0.0)))[-1, 0]
    euler = boundary_distance(*(lambda p: (p.x_row, p.x_col))(_pennies(0.0, scheme="euler")))[-1, 0]
    assert euler < heun - 0.005


def _strict_equilibrium_mass(sign: float) -> float:
    game = datasets.PrisonersDilemma().load(datasets.PrisonersDilemma.Params(), 0)
    a, b = sign * game.payoff_row, sign * game.payoff_col
    game = type(game)(**{**game.__dict__, "payoff_row": a, "payoff_col": b})
    play = simulate(game, REGULARIZERS["entropic"], 0.5, 0.02, 10.0, 50, np.random.default_rng(2))
    return float(play.x_row[-1][:, 1].mean())


def test_strict_equilibrium_attracts_and_a_wrong_sign_drift_does_not():
    assert _strict_equilibrium_mass(1.0) > 0.99
    assert _strict_equilibrium_mass(-1.0) < 0.5


def test_shocks_drift_toward_the_boundary_in_matching_pennies():
    shocked = _pennies(1.0)
    distance = boundary_distance(shocked.x_row, shocked.x_col).mean(axis=1)
    assert distance[-1] < distance[0] - 0.1
    assert np.isfinite(shocked.hit_row[1]).mean() > 0.5


def test_hits_and_returns_are_recorded_at_every_eps():
    play = _pennies(1.0)
    assert play.hit_row.shape == (3, 100)
    # a smaller neighbourhood is reached later, and entered no more often
    assert np.all(play.hit_row[0] <= play.hit_row[1]) and np.all(play.hit_row[1] <= play.hit_row[2])
    assert np.all(play.returns_row[0] >= play.returns_row[2])


@pytest.mark.parametrize("name", ["entropic", "euclidean"])
def test_players_with_different_action_counts_match_the_loop(name):
    a = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]])
    game = Game("2x3", a, -a, np.array([0.6, 0.4]), np.full(3, 1 / 3), np.zeros((0, 2), int))
    play = simulate(game, REGULARIZERS[name], 0.5, 0.05, 1.0, 4, np.random.default_rng(5))
    final = simulate_loop(game, REGULARIZERS[name], 0.5, 0.05, 1.0, 4, np.random.default_rng(5))
    assert play.x_row.shape[2] == 2 and play.x_col.shape[2] == 3
    assert np.hstack([play.x_row[-1], play.x_col[-1]]) == pytest.approx(final, abs=1e-12)
