"""Games, minimax comparators (cross-checked with nashpy) and bad-input errors."""

import nashpy
import numpy as np
import pytest
from harness_bandit_safe_regret import _games as games
from harness_bandit_safe_regret._data import Game, GameData, Seat
from harness_bandit_safe_regret.datasets import (
    KuhnPoker,
    MatchingPennies,
    RandomSymmetric,
    RockPaperScissors,
    Rpsls,
    WeightedRps,
)


def _nashpy_row(A):
    row, _ = nashpy.Game(A).linear_program()
    return np.asarray(row)


def test_rock_paper_scissors_minimax_is_uniform_and_agrees_with_nashpy():
    data = RockPaperScissors().load(RockPaperScissors.Params(T=10), seed=0)
    # closed form: RPS minimax (1/3, 1/3, 1/3), value 0
    np.testing.assert_allclose(data.comparator[0], np.full(3, 1 / 3), atol=1e-9)
    np.testing.assert_allclose(
        _nashpy_row(data.game.seats[0].matrix), data.comparator[0], atol=1e-6
    )
    assert data.value == pytest.approx(0.0, abs=1e-9)
    assert data.delta == pytest.approx(1 / 3)


def test_weighted_rps_minimax_is_04_04_02_with_value_0_and_agrees_with_nashpy():
    data = WeightedRps().load(WeightedRps.Params(T=10), seed=0)
    # closed form (docs/papers/bandit-safe-regret.md §6): (0.4, 0.4, 0.2), delta 0.2
    np.testing.assert_allclose(data.comparator[0], [0.4, 0.4, 0.2], atol=1e-8)
    np.testing.assert_allclose(_nashpy_row(games.WEIGHTED_RPS), [0.4, 0.4, 0.2], atol=1e-6)
    assert data.value == pytest.approx(0.0, abs=1e-9)


def test_matching_pennies_and_rpsls_have_uniform_minimax():
    mp = MatchingPennies().load(MatchingPennies.Params(T=10), seed=0)
    np.testing.assert_allclose(mp.comparator[0], [0.5, 0.5], atol=1e-9)
    for k in (5, 7):
        data = Rpsls().load(Rpsls.Params(T=10, n_actions=k), seed=0)
        np.testing.assert_allclose(data.comparator[0], np.full(k, 1 / k), atol=1e-8)
        np.testing.assert_allclose(_nashpy_row(data.game.seats[0].matrix), 1 / k, atol=1e-6)


def test_cyclic_matrix_is_rock_paper_scissors_for_three_actions():
    A = games.cyclic_matrix(3)
    assert A[1, 0] == 1.0  # paper beats rock
    assert A[0, 2] == 1.0  # rock beats scissors
    np.testing.assert_array_equal(A, -A.T)


def test_kuhn_player_one_value_is_minus_one_eighteenth():
    data = KuhnPoker().load(KuhnPoker.Params(T=10, comparator_epsilon=0.0), seed=0)
    chips = 2.0 * np.array(data.seat_values)  # payoffs are chips / 2
    # closed form (Kuhn 1950): -1/18 for player 1; +1/18 in the other seat
    assert chips[0] == pytest.approx(games.KUHN_VALUE, abs=1e-9)
    assert chips[1] == pytest.approx(-games.KUHN_VALUE, abs=1e-9)
    assert data.value == pytest.approx(0.0, abs=1e-9)
    # cross-check the LP on the 27 x 64 reduced normal form with nashpy
    nash_row = _nashpy_row(data.game.seats[0].matrix)
    assert float(nash_row @ data.game.seats[0].matrix @ data.opponent_minimax[0]) == pytest.approx(
        -1 / 36, abs=1e-6
    )


def test_kuhn_nash_is_not_full_support_so_the_comparator_is_perturbed():
    exact = KuhnPoker().load(KuhnPoker.Params(T=10, comparator_epsilon=0.0), seed=0)
    assert exact.delta == 0.0  # dominated strategies get no weight (§7)
    perturbed = KuhnPoker().load(KuhnPoker.Params(T=10), seed=0)
    assert perturbed.comparator_epsilon == 0.1
    assert perturbed.delta == pytest.approx(0.1 / 64, rel=1e-9)


def test_random_symmetric_full_support_draw_has_min_delta_and_is_seed_deterministic():
    params = RandomSymmetric.Params(T=10, n_actions=5, min_delta=0.02)
    first = RandomSymmetric().load(params, seed=3)
    again = RandomSymmetric().load(params, seed=3)
    A = first.game.seats[0].matrix
    np.testing.assert_array_equal(A, again.game.seats[0].matrix)
    np.testing.assert_allclose(A, -A.T)
    assert first.delta >= 0.02
    np.testing.assert_allclose(_nashpy_row(A), first.comparator[0], atol=1e-5)


def test_t_below_one_is_rejected_naming_t():
    with pytest.raises(ValueError, match=r"T\n  Input should be greater than or equal to 1"):
        RockPaperScissors.Params(T=0)


def test_non_square_game_is_rejected_where_symmetric_is_required():
    with pytest.raises(ValueError, match="square"):
        games.zero_sum_matrix(np.zeros((2, 3)), square=True)


def test_non_zero_sum_bimatrix_is_rejected():
    A = games.cyclic_matrix(3)
    with pytest.raises(ValueError, match="not zero-sum"):
        games.zero_sum_matrix(A, B=A)


def test_fixed_strategy_of_wrong_length_is_rejected_naming_it():
    with pytest.raises(ValueError, match="fixed_strategy"):
        RockPaperScissors().load(
            RockPaperScissors.Params(T=10, opponent="fixed", fixed_strategy=[0.5, 0.5]), seed=0
        )


def test_game_data_rejects_a_comparator_that_is_not_a_distribution():
    seat = Seat(
        payoffs=games.cyclic_matrix(3)[None],
        actions=("r", "p", "s"),
        opponent_actions=("r", "p", "s"),
    )
    uniform = np.full(3, 1 / 3)
    with pytest.raises(ValueError, match="comparator"):
        GameData(
            Game("g", (seat,)),
            (np.array([0.5, 0.6, 0.0]),),
            (uniform,),
            0.0,
            (0.0,),
            "minimax",
            (uniform,),
            0.1,
            10,
        )


def test_game_data_rejects_a_non_finite_comparator_naming_it():
    import dataclasses

    data = RockPaperScissors().load(RockPaperScissors.Params(T=10), seed=0)
    with pytest.raises(ValueError, match="comparator must be finite"):
        dataclasses.replace(data, comparator=(np.array([np.nan, 0.5, 0.5]),))
