"""The repeated-game loop: Alice's agent against Bob for T rounds, then per-round values.

Source: docs/papers/bandit-safe-regret.md §5 (expected per-round values V(p_t, nu_t)
where the opponent's mixed strategy is known, realised values kept too).

The loop is a tight Python loop over rounds (agents and opponents adapt every round); the
values the metrics need are computed afterwards, vectorised over rounds, from the stored
p_t, nu_t and b_t.
"""

from __future__ import annotations

import numpy as np

from harness_bandit_safe_regret._data import GameData, PlayOutput
from harness_bandit_safe_regret._opponents import make_opponent, sample

__all__ = ["simulate"]


def simulate(data: GameData, agent, seed: int) -> PlayOutput:
    """Play ``data.T`` rounds of ``agent`` (Alice) against ``data.opponent`` (Bob).

    Parameters
    ----------
    data : GameData
        Game, comparator, opponent and horizon.
    agent : object
        Has ``play(seat) -> p``, ``observe(seat, a, payoff, b)``, ``alpha`` and
        ``switches`` (see :mod:`harness_bandit_safe_regret._agents`).
    seed : int
        Seeds Alice's and Bob's sampling and chance.

    Returns
    -------
    PlayOutput
    """
    T, seats = data.T, data.game.seats
    n_seats = len(seats)
    rng = np.random.default_rng(seed)
    u_alice, u_bob = rng.random(T), rng.random(T)
    outcomes = [rng.integers(seat.payoffs.shape[0], size=T).tolist() for seat in seats]
    opponent = make_opponent(data)
    tables = [seat.payoffs.tolist() for seat in seats]
    play, act, observe, learn = agent.play, opponent.act, opponent.observe, agent.observe
    P, N, B = [[] for _ in seats], [[] for _ in seats], [[] for _ in seats]
    realised, alpha = [], []
    for t in range(T):
        s = 0 if n_seats == 1 else t % n_seats
        p = play(s)
        nu, b = act(s, p, u_bob[t])
        a = sample(p, u_alice[t])
        payoff = tables[s][outcomes[s][t]][a][b]
        learn(s, a, payoff, b)
        observe(s, a, b, payoff)
        P[s].append(p)
        N[s].append(nu)
        B[s].append(b)
        realised.append(payoff)
        alpha.append(agent.alpha)
    N = [
        _strategies(nus, bs, len(seat.opponent_actions))
        for nus, bs, seat in zip(N, B, seats, strict=True)
    ]
    P = [
        np.array(ps).reshape(len(ps), len(seat.actions)) for ps, seat in zip(P, seats, strict=True)
    ]
    B = [np.asarray(bs, dtype=np.int64) for bs in B]
    return _values(data, P, N, B, np.asarray(realised), np.asarray(alpha), agent.switches)


def _strategies(nus: list, bs: list[int], m: int) -> np.ndarray:
    """Stack the opponent's mixed strategies, one-hot rows where it played a pure action."""
    out = np.zeros((len(bs), m))
    pure = [i for i, nu in enumerate(nus) if nu is None]
    out[pure, [bs[i] for i in pure]] = 1.0
    mixed = [i for i, nu in enumerate(nus) if nu is not None]
    if mixed:
        out[mixed] = np.array([nus[i] for i in mixed])
    return out


def _values(data, P, N, B, realised, alpha, switches) -> PlayOutput:
    T, n_seats = data.T, data.game.n_seats
    expected, comparator, comparator_realised = np.empty(T), np.empty(T), np.empty(T)
    best, best_realised = np.zeros(T), np.zeros(T)
    for s, seat in enumerate(data.game.seats):
        rounds = np.arange(s, T, n_seats)
        if rounds.size == 0:
            continue
        action_values = N[s] @ seat.matrix.T  # (n_rounds, K): V(e_a, nu_t)
        action_realised = seat.matrix[:, B[s]].T  # (n_rounds, K): V(e_a, b_t)
        expected[rounds] = np.einsum("ik,ik->i", P[s], action_values)
        comparator[rounds] = action_values @ data.comparator[s]
        comparator_realised[rounds] = action_realised @ data.comparator[s]
        best += _forward_fill(np.cumsum(action_values, axis=0).max(axis=1), rounds, T)
        best_realised += _forward_fill(np.cumsum(action_realised, axis=0).max(axis=1), rounds, T)
    return PlayOutput(
        expected_payoff=expected,
        realised_payoff=realised,
        comparator_payoff=comparator,
        comparator_realised=comparator_realised,
        best_cumulative=best,
        best_cumulative_realised=best_realised,
        alpha=alpha,
        phase_switches=np.asarray(switches, dtype=np.int64),
    )


def _forward_fill(values: np.ndarray, rounds: np.ndarray, T: int) -> np.ndarray:
    """A (T,) array equal to ``values[j]`` from round ``rounds[j]`` on, 0 before rounds[0]."""
    index = np.zeros(T, dtype=np.int64)
    index[rounds] = np.arange(1, rounds.size + 1)
    index = np.maximum.accumulate(index)
    return np.concatenate([[0.0], values])[index]
