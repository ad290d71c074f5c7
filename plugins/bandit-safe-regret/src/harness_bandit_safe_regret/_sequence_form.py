"""Bandit phased aggression over the sequence form, and its repeated-game simulator.

Source: Müller et al., ICML 2025 (arXiv 2502.11673), extensive-form phased aggression, as
reconstructed in docs/papers/bandit-safe-regret.md §2.2-2.3 (constants not checked against
the paper); Kozuno, Ménard, Munos, Valko, "Learning in two-player zero-sum partially
observable Markov games with perfect recall", NeurIPS 2021 (IXOMD: online mirror descent
with the dilated entropy and implicit-exploration loss estimates along the trajectory).

Alice's played realisation plan is x_p = (1 - alpha_k) x^c + alpha_k x^A (the episode-level
coin of §2.3; sampling her actions from the behavioural strategy of x_p gives the same
trajectory distribution). After a round she sees her own trajectory and the terminal payoff;
the loss estimate sits on her last sequence sigma_T with the *mixture* reach,
ell / (x_p(sigma_T) + gamma) (gamma = 0 for the phase statistics, gamma > 0 for IXOMD).
"""

from __future__ import annotations

import math

import numpy as np

from harness_bandit_safe_regret._data import GameData, PlayOutput
from harness_bandit_safe_regret._extensive import ExtensiveSeat, Treeplex, normal_form_image

__all__ = ["Ixomd", "SequenceFormPhasedAggression", "simulate_sequence_form"]


class Ixomd:
    """IXOMD on one player's treeplex: dilated-entropy OMD on bandit trajectory feedback.

    Source: Kozuno et al., NeurIPS 2021, Algorithm 1 (IXOMD), with unit dilation weights.

    Parameters
    ----------
    tree : Treeplex
        The learner's sequences and information sets.
    eta : float
        Learning rate, > 0.
    gamma : float
        Implicit exploration added to the reach in the loss estimate, >= 0.
    use_weights : bool, default=True
        False divides the loss by 1 instead of the reach (a deliberately *wrong* learner that
        ignores importance weights; used by the tests).

    Notes
    -----
    With the estimate g = ell / (x(sigma_T) + gamma) on the last sequence sigma_T only, the
    OMD step changes only the information sets on the trajectory, bottom-up:
    L = g; at each information set I on the path with taken sequence a,
    Z = 1 - pi(a) + pi(a) exp(-eta L), pi(a) <- pi(a) exp(-eta L) / Z, pi(b) <- pi(b) / Z
    (b != a), then L <- -ln(Z) / eta is the loss passed to I's parent sequence. With
    gamma = eta / 2, eta L <= 2 at every level, so Z >= exp(-2) never underflows.
    """

    def __init__(self, tree: Treeplex, eta: float, gamma: float, use_weights: bool = True):
        if eta <= 0 or gamma < 0:
            raise ValueError(f"Ixomd needs eta > 0 and gamma >= 0, got {eta}, {gamma}")
        self.tree, self.eta, self.gamma, self.use_weights = tree, eta, gamma, use_weights
        self._infoset = tree.infoset_of.tolist()
        self._children = [list(c) for c in tree.children]
        self._parent = list(tree.parent)
        self.reset()

    def reset(self) -> None:
        """Back to the uniform behavioural strategy."""
        self.pi = self.tree.uniform().tolist()

    def reach(self) -> list[float]:
        """The learner's realisation plan x^A, length n_sequences."""
        x = [0.0] * len(self.pi)
        pi = self.pi
        for p, c in zip(self._parent, self._children, strict=True):
            base = 1.0 if p == -1 else x[p]
            for s in c:
                x[s] = base * pi[s]
        return x

    def update(self, last: int, loss: float, prob: float) -> None:
        """One bandit round: ``loss`` in [0, 1] at Alice's last sequence ``last``, reached with
        the played probability ``prob`` (the mixture reach x_p(last))."""
        L = loss / (prob + self.gamma) if self.use_weights else loss
        eta, pi, seq = self.eta, self.pi, last
        while seq != -1:
            infoset = self._infoset[seq]
            factor = math.exp(-eta * L)
            pi[seq] *= factor
            siblings = self._children[infoset]
            z = sum(pi[s] for s in siblings)  # explicit sum: no 1 - pi cancellation
            for s in siblings:
                pi[s] /= z
            L = -math.log(z) / eta
            seq = self._parent[infoset]


class SequenceFormPhasedAggression:
    """p = (1 - alpha_k) x^c + alpha_k x^A over both seats; alpha_k = min(1, 2^(k-1) / R).

    Parameters
    ----------
    seats : tuple of ExtensiveSeat
        Alice's seats (Kuhn: player 1, player 2), each with its behavioural comparator.
    T : int
        Horizon; round t is played in seat t % n_seats.
    c0 : float
        R = c0 sqrt(T D / delta), D = sum over seats of the dilated-entropy diameter
        (replaces ln K), delta = min over seats and sequences of x^c(sigma).
    phased : bool, default=True
        False: IXOMD alone (alpha = 1; eta = sqrt(2 D_s / (n_s T_s)), n_s sequences).
    reset : bool, default=True
        Reset the learner at each phase switch (False: ablation "no learner reset").
    fixed_alpha : float or None, default=None
        Keep alpha at this value and never switch (ablation "fixed alpha").
    use_weights : bool, default=True
        False: the learner ignores importance weights (a deliberately wrong variant).

    Notes
    -----
    Reconstruction (not checked against the paper): EXP3's eta = sqrt(2 delta ln K / T)
    becomes eta_s = sqrt(2 delta D_s / T_s) per seat, gamma = eta / 2. With delta = 0 (a
    comparator without full support) R is infinite: alpha stays 0 and the agent plays the
    comparator for ever, so its regret to the best strategy grows linearly (the failure
    mode of docs/papers/bandit-safe-regret.md §1, Lattimore 2015).
    """

    def __init__(
        self,
        seats: tuple[ExtensiveSeat, ...],
        T: int,
        c0: float = 1.0,
        phased: bool = True,
        reset: bool = True,
        fixed_alpha: float | None = None,
        use_weights: bool = True,
    ) -> None:
        self.seats = seats
        self.xc = [s.alice.reach(s.comparator) for s in seats]
        self._xc = [x.tolist() for x in self.xc]
        self.delta = float(min(x.min() for x in self.xc))
        diameters = [s.alice.diameter() for s in seats]
        rounds = [max(1, len(range(i, T, len(seats)))) for i in range(len(seats))]
        self.learners = []
        for seat, d, n in zip(seats, diameters, rounds, strict=True):
            if phased and self.delta > 0:
                eta = math.sqrt(2.0 * self.delta * d / n)
            else:
                eta = math.sqrt(2.0 * d / (seat.alice.n_sequences * n))
            self.learners.append(Ixomd(seat.alice, eta, eta / 2.0, use_weights))
        self.plans = [s.alice_plans for s in seats]
        self._columns = [np.ascontiguousarray(p.T) for p in self.plans]
        if not phased:
            self.R = math.inf
            self.alpha = 1.0
        elif self.delta <= 0:
            self.R = math.inf
            self.alpha = 0.0
        else:
            self.R = c0 * math.sqrt(T * sum(diameters) / self.delta)
            self.alpha = min(1.0, 1.0 / self.R)
        if fixed_alpha is not None:
            self.alpha, self.R = fixed_alpha, math.inf
        self.reset_learner = reset
        self.k = 1
        self.switches: list[int] = []
        self._t = 0
        self._reset_statistics(reset_learner=True)

    def fast_config(
        self,
        test: str = "paper",
        confidence: float = 0.01,
        variance_scale: float = 1.0,
        guard: float = -1.0,
    ):
        """This agent's settings for the compiled simulator (:mod:`efg_fast`).

        Parameters
        ----------
        test : {"paper", "freedman"}, default="paper"
            The phase test (the paper's, or the certified one of :mod:`efg_fast`).
        confidence, variance_scale, guard : float
            See :class:`harness_bandit_safe_regret._efg_fast.FastConfig`.

        Returns
        -------
        FastConfig
        """
        from harness_bandit_safe_regret._efg_fast import FastConfig

        return FastConfig(
            alpha0=float(self.alpha),
            R=float(self.R),
            test=test if math.isfinite(self.R) else "none",
            reset=bool(self.reset_learner),
            eta=tuple(learner.eta for learner in self.learners),
            gamma=tuple(learner.gamma for learner in self.learners),
            use_weights=bool(self.learners[0].use_weights),
            confidence=confidence,
            variance_scale=variance_scale,
            guard=guard,
        )

    def _reset_statistics(self, reset_learner: bool) -> None:
        self._Sc = 0.0
        self._plan_values = [np.zeros(len(p)) for p in self.plans]
        self._mins = [0.0] * len(self.plans)
        if reset_learner:
            for learner in self.learners:
                learner.reset()

    def play(self, seat: int) -> list[float]:
        """Played realisation plan x_p of ``seat``, length n_sequences."""
        xa = self.learners[seat].reach()
        a = self.alpha
        if a >= 1.0:
            self._x = xa
        else:
            self._x = [(1.0 - a) * c + a * q for c, q in zip(self._xc[seat], xa, strict=True)]
        return self._x

    def observe(self, seat: int, last: int, payoff: float) -> None:
        """Learn from a round that ended with Alice's last sequence ``last`` and ``payoff``."""
        self._t += 1
        loss = (1.0 - payoff) * 0.5
        prob = self._x[last]
        self.learners[seat].update(last, loss, prob)
        if math.inf == self.R:
            return
        estimate = loss / prob
        self._Sc += self._xc[seat][last] * estimate
        values = self._plan_values[seat]
        values += self._columns[seat][last] * estimate
        self._mins[seat] = float(values.min())
        if self._Sc - sum(self._mins) >= 2.0 * self.R:
            self.k += 1
            self.alpha = min(1.0, 2.0 ** (self.k - 1) / self.R)
            self.switches.append(self._t)
            self._reset_statistics(self.reset_learner)
            if self.alpha >= 1.0:
                self.R = math.inf


def _terminal_tables(seat: ExtensiveSeat) -> list[list[tuple[int, int, float]]]:
    """Per chance outcome: lists of (Alice's last seq, opponent's last seq, payoff)."""
    return [[(int(a), int(b), float(v)) for a, b, v in t] for t in seat.terminals]


def simulate_sequence_form(
    data: GameData,
    agent: SequenceFormPhasedAggression,
    seed: int,
    chunk: int = 65_536,
) -> PlayOutput:
    """Play ``data.T`` rounds of Kuhn-style sequence-form play against ``data.opponent``.

    Parameters
    ----------
    data : GameData
        Must carry ``extensive`` seats; opponent one of ``minimax`` (Nash behaviour, sampled),
        ``fixed`` (the dataset's fixed pure strategy, e.g. always bet / always call) or
        ``best-response`` (clairvoyant: a pure best response to Alice's current x_p).
    agent : SequenceFormPhasedAggression
    seed : int
        Seeds chance, Alice's and the opponent's sampling.
    chunk : int, default=65536
        Rounds per block in the vectorised best-in-hindsight sums (memory bound).

    Returns
    -------
    PlayOutput
        As the normal-form simulator: expected values use the opponent's (mixed) strategy,
        realised values the sampled pure plan; ``best_cumulative`` maximises over Alice's
        reduced pure plans of each seat.

    Raises
    ------
    ValueError
        If the opponent is not one of the three above.
    """
    seats = data.extensive.seats
    T, n_seats = data.T, len(seats)
    if data.opponent not in ("minimax", "fixed", "best-response"):
        raise ValueError(
            "the sequence-form simulator supports opponent minimax, fixed or best-response;"
            f" got {data.opponent!r}"
        )
    rng = np.random.default_rng(seed)
    opp_plans = [s.opponent_plans for s in seats]
    # MY[s]: (n_alice_seq, n_opp_plans + 1): Alice's sequence values against each opponent
    # pure plan; the last column is the opponent's Nash (mixed) plan.
    MY, nash_plan_probs, fixed_index = [], [], []
    for s, seat in enumerate(seats):
        y_nash = seat.opponent.reach(seat.opponent_nash)
        MY.append(np.hstack([seat.payoff @ opp_plans[s].T, (seat.payoff @ y_nash)[:, None]]))
        nash_plan_probs.append(_plan_distribution(seat.opponent, seat.opponent_nash, opp_plans[s]))
        fixed = np.asarray(data.opponent_strategy[s])
        fixed_index.append(int(_plan_index_of_strategy(seat, fixed, opp_plans[s])))
    opp_last = [_last_sequence_lookup(seats[s], opp_plans[s]) for s in range(n_seats)]
    tables = [_terminal_tables(seat) for seat in seats]
    n_outcomes = [len(t) for t in tables]
    deals = [rng.integers(n, size=T).tolist() for n in n_outcomes]
    u_alice = rng.random((T, max(len(s.alice.infosets) for s in seats)))
    u_bob = rng.random(T).tolist()
    cumulative = [np.cumsum(p).tolist() for p in nash_plan_probs]

    b_expected = np.empty(T, dtype=np.int64)
    b_sampled = np.empty(T, dtype=np.int64)
    expected = np.empty(T)
    realised = np.empty(T)
    alpha = np.empty(T)
    children = [[list(c) for c in s.alice.children] for s in seats]
    parents = [list(s.alice.parent) for s in seats]
    MY_pure = [np.ascontiguousarray(m[:, :-1]) for m in MY]
    for t in range(T):
        s = t % n_seats
        x = agent.play(s)
        my = MY[s]
        if data.opponent == "best-response":
            values = np.dot(x, MY_pure[s])
            b = int(values.argmin())
            col, v = b, float(values[b])
        elif data.opponent == "fixed":
            b = col = fixed_index[s]
            v = float(np.dot(x, my[:, b]))
        else:
            u = u_bob[t]
            c = cumulative[s]
            b = min(int(np.searchsorted(c, u * c[-1], side="right")), len(c) - 1)
            col = my.shape[1] - 1
            v = float(np.dot(x, my[:, col]))
        # Alice samples one action per information set from the behaviour of x (reduced:
        # only information sets whose parent sequence she chose matter).
        chosen = set()
        u_row = u_alice[t]
        for i, (p, c) in enumerate(zip(parents[s], children[s], strict=True)):
            if p != -1 and p not in chosen:
                continue
            base = 1.0 if p == -1 else x[p]
            r = u_row[i] * base
            acc = 0.0
            pick = c[-1]
            for sq in c:
                acc += x[sq]
                if r < acc:
                    pick = sq
                    break
            chosen.add(pick)
        last, payoff = _terminal(tables[s][deals[s][t]], chosen, opp_last[s][b])
        agent.observe(s, last, payoff)
        b_expected[t], b_sampled[t] = col, b
        expected[t], realised[t], alpha[t] = v, payoff, agent.alpha
    return _sequence_form_values(
        data, agent, MY, b_expected, b_sampled, expected, realised, alpha, chunk
    )


def _plan_distribution(tree: Treeplex, pi: np.ndarray, plans: np.ndarray) -> np.ndarray:
    """Probability of each pure plan under the behavioural strategy ``pi`` (Kuhn 1953)."""
    return normal_form_image(tree, pi, plans)


def _plan_index_of_strategy(seat: ExtensiveSeat, strategy: np.ndarray, plans: np.ndarray) -> int:
    """Index of the opponent's pure plan equal to a one-hot normal-form ``strategy``.

    The normal-form and sequence-form plan orders agree (``kuhn_normal_form_plans`` is used
    for both), so the index is the argmax of the one-hot vector.

    Raises
    ------
    ValueError
        If ``strategy`` is not pure.
    """
    if strategy.shape != (len(plans),) or strategy.max() < 1.0 - 1e-12:
        raise ValueError("the sequence-form simulator needs a pure fixed_strategy for the opponent")
    return int(strategy.argmax())


def _last_sequence_lookup(seat: ExtensiveSeat, plans: np.ndarray) -> list[set[int]]:
    """Per opponent pure plan, the set of its chosen sequences."""
    return [set(np.flatnonzero(p).tolist()) for p in plans]


def _terminal(rows: list, alice: set[int], opponent: set[int]) -> tuple[int, float]:
    """The terminal consistent with both pure plans: (Alice's last sequence, payoff)."""
    for a, b, v in rows:
        if (a == -1 or a in alice) and (b == -1 or b in opponent):
            return a, v
    raise RuntimeError("no terminal history is consistent with the sampled plans")


def _sequence_form_values(
    data, agent, MY, b_expected, b_sampled, expected, realised, alpha, chunk
) -> PlayOutput:
    T, seats = data.T, data.extensive.seats
    n_seats = len(seats)
    comparator = np.empty(T)
    comparator_realised = np.empty(T)
    best = np.zeros(T)
    best_realised = np.zeros(T)
    for s, _seat in enumerate(seats):
        rounds = np.arange(s, T, n_seats)
        if rounds.size == 0:
            continue
        xc = agent.xc[s]
        plans = agent.plans[s]
        comparator[rounds] = (xc @ MY[s])[b_expected[rounds]]
        comparator_realised[rounds] = (xc @ MY[s])[b_sampled[rounds]]
        table = plans @ MY[s]  # (n_alice_plans, n_columns)
        for target, cols in ((best, b_expected[rounds]), (best_realised, b_sampled[rounds])):
            running = np.zeros(len(plans))
            maxima = np.empty(rounds.size)
            for start in range(0, rounds.size, chunk):
                block = np.cumsum(table[:, cols[start : start + chunk]].T, axis=0) + running
                maxima[start : start + block.shape[0]] = block.max(axis=1)
                running = block[-1]
            target += _forward_fill(maxima, rounds, T)
    return PlayOutput(
        expected_payoff=expected,
        realised_payoff=realised,
        comparator_payoff=comparator,
        comparator_realised=comparator_realised,
        best_cumulative=best,
        best_cumulative_realised=best_realised,
        alpha=alpha,
        phase_switches=np.asarray(agent.switches, dtype=np.int64),
    )


def _forward_fill(values: np.ndarray, rounds: np.ndarray, T: int) -> np.ndarray:
    index = np.zeros(T, dtype=np.int64)
    index[rounds] = np.arange(1, rounds.size + 1)
    index = np.maximum.accumulate(index)
    return np.concatenate([[0.0], values])[index]
