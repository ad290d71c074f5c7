"""Leduc poker in sequence form (OpenSpiel's rules), and its game value by the sequence-form LP.

Source: Southey et al., "Bayes' bluff: opponent modelling in poker", UAI 2005 (the game);
the rules as implemented by OpenSpiel's ``leduc_poker`` (google-deepmind/open_spiel,
``open_spiel/games/leduc_poker``): a deck of 6 cards (J, Q, K in two suits), ante 1 each,
one private card each, two betting rounds with raise sizes 2 and 4 and at most 2 raises per
round, player 1 acts first in both rounds, fold only when facing a bet; one public card
between the rounds; at the showdown a private card that pairs the public card wins, else the
higher rank wins, equal ranks split. von Stengel, GEB 1996 (sequence form and LP).

Reference value: OpenSpiel reports player 1's value of Leduc poker as about -0.0856 chips
(as quoted in this project's issue 16; not re-derived from OpenSpiel here). The LP below
reproduces it (tests). Information sets: with suits told apart, as OpenSpiel's information
state strings do, 468 per player (936 in all); with ranks only, 144 per player; both give
the same value.

Only the game and its value are implemented: the bandit simulators enumerate the players'
pure plans (Kuhn: 27 and 64), which is impossible for Leduc, so Leduc is not a dataset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness_bandit_safe_regret._extensive import Treeplex, sequence_form_lp

__all__ = ["LeducSequenceForm", "leduc_sequence_form", "leduc_value"]

RANK_NAMES = "JQK"


@dataclass(frozen=True)
class LeducSequenceForm:
    """Both players' treeplexes and player 1's sequence-form payoff matrix (chips).

    Attributes
    ----------
    player1, player2 : Treeplex
    payoff : ndarray of float, shape (n1, n2)
        Player 1's expected payoff in chips (over chance) is ``x @ payoff @ y``.
    n_terminals : int
        Terminal histories, chance outcomes included.
    """

    player1: Treeplex
    player2: Treeplex
    payoff: np.ndarray
    n_terminals: int


class _Builder:
    def __init__(self) -> None:
        self.index: list[dict] = [{}, {}]
        self.parent: list[list[int]] = [[], []]
        self.children: list[list[tuple[int, ...]]] = [[], []]
        self.names: list[list[str]] = [[], []]
        self.sequences: list[list[str]] = [[], []]

    def infoset(self, p: int, key: tuple, parent: int, actions: tuple[str, ...]) -> tuple:
        if key in self.index[p]:
            i = self.index[p][key]
            if self.parent[p][i] != parent:
                raise RuntimeError(f"imperfect recall at {key}")
            return self.children[p][i]
        start = len(self.sequences[p])
        seqs = tuple(range(start, start + len(actions)))
        name = "|".join(str(k) for k in key)
        self.sequences[p].extend(f"{name}:{a}" for a in actions)
        self.index[p][key] = len(self.parent[p])
        self.parent[p].append(parent)
        self.children[p].append(seqs)
        self.names[p].append(name)
        return seqs

    def treeplex(self, p: int) -> Treeplex:
        return Treeplex(
            infosets=tuple(self.names[p]),
            parent=tuple(self.parent[p]),
            children=tuple(self.children[p]),
            sequences=tuple(self.sequences[p]),
        )


def leduc_sequence_form(
    suits: bool = True, raise_sizes: tuple[int, int] = (2, 4), max_raises: int = 2
) -> LeducSequenceForm:
    """Build Leduc poker's sequence form by walking its game tree.

    Parameters
    ----------
    suits : bool, default=True
        Tell the two suits apart in the information sets (OpenSpiel's 936 information
        states); False keys them by rank only (strategically equivalent).
    raise_sizes : tuple of int, default=(2, 4)
        Raise size in round 1 and round 2 (OpenSpiel's rules; other values are a variant).
    max_raises : int, default=2
        Raises allowed per round.

    Returns
    -------
    LeducSequenceForm
    """
    b = _Builder()
    entries: dict[tuple[int, int], float] = {}
    count = [0]

    def rank(card: int) -> int:
        return card // 2

    def label(card: int) -> str:
        return f"{RANK_NAMES[rank(card)]}{card % 2}" if suits else RANK_NAMES[rank(card)]

    def terminal(last: list[int], prob: float, chips: float) -> None:
        key = (last[0], last[1])
        entries[key] = entries.get(key, 0.0) + prob * chips
        count[0] += 1

    def showdown(cards, public, contrib) -> float:
        r1, r2, rp = rank(cards[0]), rank(cards[1]), rank(public)
        s1 = (r1 == rp, r1)
        s2 = (r2 == rp, r2)
        if s1 == s2:
            return 0.0
        return float(contrib[1]) if s1 > s2 else -float(contrib[0])

    def node(cards, public, histories, contrib, raises, player, last, prob) -> None:
        rnd = 0 if public is None else 1
        other = 1 - player
        facing = contrib[player] < contrib[other]
        actions = (("f",) if facing else ()) + ("c",) + (("r",) if raises < max_raises else ())
        key = (label(cards[player]), "-" if public is None else label(public), *histories)
        seqs = b.infoset(player, key, last[player], actions)
        for action, seq in zip(actions, seqs, strict=True):
            new_last = list(last)
            new_last[player] = seq
            hist = histories[rnd] + action
            new_histories = list(histories)
            new_histories[rnd] = hist
            if action == "f":
                terminal(new_last, prob, -contrib[0] if player == 0 else float(contrib[1]))
                continue
            new_contrib = list(contrib)
            if action == "r":
                new_contrib[player] = contrib[other] + raise_sizes[rnd]
                node(cards, public, tuple(new_histories), new_contrib, raises + 1, other,
                     new_last, prob)  # fmt: skip
                continue
            new_contrib[player] = contrib[other]  # call or check
            if len(histories[rnd]) == 0:  # the first check of the round
                node(cards, public, tuple(new_histories), new_contrib, raises, other,
                     new_last, prob)  # fmt: skip
                continue
            if rnd == 0:  # round 1 ends: deal the public card
                rest = [c for c in range(6) if c not in cards]
                for pub in rest:
                    node(cards, pub, (*new_histories, ""), new_contrib, 0, 0, new_last,
                         prob / len(rest))  # fmt: skip
            else:
                terminal(new_last, prob, showdown(cards, public, new_contrib))

    for c1 in range(6):
        for c2 in range(6):
            if c1 != c2:
                node((c1, c2), None, ("",), [1, 1], 0, 0, [-1, -1], 1.0 / 30.0)
    t1, t2 = b.treeplex(0), b.treeplex(1)
    M = np.zeros((t1.n_sequences, t2.n_sequences))
    for (s1, s2), v in entries.items():
        if s1 < 0 or s2 < 0:
            raise RuntimeError("a terminal without both players acting")
        M[s1, s2] += v
    return LeducSequenceForm(player1=t1, player2=t2, payoff=M, n_terminals=count[0])


def leduc_value(**kwargs) -> float:
    """Player 1's value of Leduc poker in chips, by the sequence-form LP (HiGHS).

    Parameters
    ----------
    **kwargs
        Passed to :func:`leduc_sequence_form`.

    Returns
    -------
    float
        About -0.0856 chips (OpenSpiel's reported value) under the default rules.
    """
    game = leduc_sequence_form(**kwargs)
    return sequence_form_lp(game.payoff, game.player1, game.player2)[1]
