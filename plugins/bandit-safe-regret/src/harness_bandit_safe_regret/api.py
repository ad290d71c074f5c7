"""Public API of the ``bandit-safe-regret`` task for method authors.

Source: Müller, Schneider, Skoulakis, Viano, Cevher, "Best of Both Worlds: Regret
Minimization versus Minimax Play", ICML 2025 (arXiv 2502.11673), repeated zero-sum games
under bandit feedback.

A method receives a :class:`GameData` and returns a :class:`PlayOutput`:

- ``GameData.game.seats``: tuple of :class:`Seat`; round t (0-based) is played in seat
  ``t % n_seats``. ``Seat.payoffs`` (n_outcomes, K, M) is Alice's payoff in [-1, 1]
  (payoff units) per chance outcome; ``Seat.matrix`` (K, M) its expectation.
  ``GameData.comparator``: one mu_c (K,) per seat; ``delta`` = min mu_c; ``T``: horizon;
  ``opponent``: the opponent's name. ``GameData.extensive`` (Kuhn poker only): the sequence
  form, :class:`KuhnSequenceForm` (per seat a :class:`ExtensiveSeat` with treeplexes, the
  (n_seq, m_seq) payoff matrix and Alice's behavioural comparator).
- ``PlayOutput``: per-round arrays of shape (T,) in payoff units (``expected_payoff``
  V(p_t, nu_t), ``realised_payoff``, ``comparator_payoff``, ``comparator_realised``,
  ``best_cumulative``, ``best_cumulative_realised``), ``alpha`` (T,) and
  ``phase_switches`` (n,) int rounds.

Helpers:

- :func:`simulate` (data, agent, seed) -> PlayOutput: plays a normal-form agent (an object
  with ``play(seat) -> p (K,)``, ``observe(seat, a, payoff, b)``, ``alpha``, ``switches``)
  against the dataset's opponent and computes every per-round value.
- :class:`PhasedAggression`, :class:`Comparator`: the normal-form agents;
  :func:`make_learner` (kind, K, eta) -> EXP3 / EXP3-IX / Tsallis-INF / Hedge learner.
- :func:`simulate_sequence_form`, :class:`SequenceFormPhasedAggression`, :class:`Ixomd`:
  the sequence-form counterparts (Kuhn poker), in pure Python (the reference).
- :func:`simulate_batch` (data, FastConfig, seeds) -> list of PlayOutput: the compiled
  (numba) sequence-form simulator, one output per seed; a :class:`FastConfig` comes from
  ``SequenceFormPhasedAggression(...).fast_config(test=..., guard=...)``; it adds the
  certified phase test and the budget guard.

Example (a method that plays EXP3 with twice the default learning rate)::

    from harness import Method
    from harness_bandit_safe_regret.api import GameData, PlayOutput, PhasedAggression, simulate

    class FastExp3(Method):
        \"\"\"EXP3 with doubled learning rate. Source: Auer et al. 2002 (EXP3).\"\"\"
        name, task = "fast-exp3", "bandit-safe-regret"

        def run(self, data: GameData, params, seed: int) -> PlayOutput:
            agent = PhasedAggression(data, "exp3", phased=False)
            for learner in agent.learners:
                learner.eta *= 2.0
            return simulate(data, agent, seed)
"""

from __future__ import annotations

from harness_bandit_safe_regret._agents import ABProd, Comparator, PhasedAggression
from harness_bandit_safe_regret._data import Game, GameData, PlayOutput, Seat, seat_rounds
from harness_bandit_safe_regret._efg_fast import FastConfig, simulate_batch
from harness_bandit_safe_regret._extensive import ExtensiveSeat, KuhnSequenceForm, Treeplex
from harness_bandit_safe_regret._learners import Exp3, TsallisInf, exp3_estimate, make_learner
from harness_bandit_safe_regret._sequence_form import (
    Ixomd,
    SequenceFormPhasedAggression,
    simulate_sequence_form,
)
from harness_bandit_safe_regret._simulate import simulate

__all__ = [
    "ABProd",
    "Comparator",
    "Exp3",
    "ExtensiveSeat",
    "FastConfig",
    "Game",
    "GameData",
    "Ixomd",
    "KuhnSequenceForm",
    "PhasedAggression",
    "PlayOutput",
    "Seat",
    "SequenceFormPhasedAggression",
    "Treeplex",
    "TsallisInf",
    "exp3_estimate",
    "make_learner",
    "seat_rounds",
    "simulate",
    "simulate_batch",
    "simulate_sequence_form",
]
