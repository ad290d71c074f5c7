"""Leduc poker (OpenSpiel's rules): its sequence form and game value (issue 16, point 4)."""

import pytest
from harness_bandit_safe_regret._leduc import leduc_sequence_form, leduc_value

# OpenSpiel reports player 1's value of leduc_poker as about -0.0856 chips (quoted in
# issue 16). The LP gives -0.0856064240780 with suits told apart and by rank only.
OPENSPIEL_VALUE = -0.0856


def test_leduc_has_openspiels_936_information_states_and_its_value():
    game = leduc_sequence_form(suits=True)
    assert len(game.player1.infosets) + len(game.player2.infosets) == 936
    value = leduc_value(suits=True)
    assert value == pytest.approx(OPENSPIEL_VALUE, abs=5e-5)
    # suits are strategically irrelevant: the rank-only game (144 + 144) has the same value
    ranks = leduc_sequence_form(suits=False)
    assert len(ranks.player1.infosets) == len(ranks.player2.infosets) == 144
    assert leduc_value(suits=False) == pytest.approx(value, abs=1e-9)


def test_wrong_leduc_rules_are_caught_by_the_value_check():
    # Wrong variants: raise size 2 in both rounds (-0.0759), or one raise per round.
    for kwargs in ({"raise_sizes": (2, 2)}, {"max_raises": 1}):
        assert abs(leduc_value(suits=False, **kwargs) - OPENSPIEL_VALUE) > 5e-4
