"""Alice's algorithms as round-by-round agents: phased aggression, (A,B)-Prod, the comparator.

Source: Müller et al., ICML 2025 (arXiv 2502.11673), bandit phased aggression; Even-Dar,
Kearns, Mansour, Wortman, Machine Learning 2008 (full-information phased aggression); Sani,
Neu, Lazaric, NeurIPS 2014 ((A,B)-Prod); as reconstructed in
docs/papers/bandit-safe-regret.md §2 (constants not checked against the papers).

An agent plays one round at a time: ``play(seat)`` returns the played distribution p_t over
the seat's actions; ``observe(seat, action, payoff, b)`` gives the realised payoff
(bandit feedback) and the opponent's realised action b (used only by full-information
agents, which then see the expected payoff of each of their actions against b). ``alpha``
is the current weight of the learner in p_t; ``switches`` lists the rounds (1-based) ending a phase.
"""

from __future__ import annotations

import math

import numpy as np

from harness_bandit_safe_regret._data import GameData, seat_rounds
from harness_bandit_safe_regret._learners import exp3_estimate, make_learner

__all__ = ["ABProd", "Comparator", "PhasedAggression"]


def _hedge_eta(n_actions: int, n_rounds: int) -> float:
    """Hedge's learning rate sqrt(8 ln K / T) for K actions over T rounds (loss units)."""
    return math.sqrt(8.0 * math.log(n_actions) / n_rounds)


def _log_n_strategies(data: GameData) -> float:
    """ln K, with K the number of Alice's pure strategies (the product over seats)."""
    return float(sum(math.log(len(seat.actions)) for seat in data.game.seats))


def _loss_columns(data: GameData) -> list[np.ndarray]:
    """Per seat, row b = Alice's expected loss (1 - V(a, b)) / 2 of every action a, shape (M, K)."""
    return [np.ascontiguousarray((1.0 - seat.matrix.T) * 0.5) for seat in data.game.seats]


class PhasedAggression:
    """p_t = (1 - alpha_k) mu_c + alpha_k q_t; alpha_k = min(1, 2^(k-1) / R) rises in phases.

    Parameters
    ----------
    data : GameData
        The game, comparator mu_c (one distribution per seat) and horizon T.
    learner : {"exp3", "exp3-ix", "tsallis-inf", "hedge"}
        Base learner, one instance per seat (their product is the learner over Alice's pure
        strategies).
    feedback : {"bandit", "full"}
        Bandit: importance-weighted estimates with the mixture probability p_t(a_t).
        Full: the whole loss vector against the opponent's realised action.
    c0 : float, default=1
        Scale of the phase threshold R.
    phased : bool, default=True
        False plays the learner alone (alpha = 1 throughout, learning rates for K arms).
    reset : bool, default=True
        Reset the learner at each phase switch (False: the "no reset" ablation).
    fixed_alpha : float or None, default=None
        Keep alpha at this value, never switching (the "fixed alpha" ablation).

    Notes on delta = 0: with bandit feedback and a comparator that has a zero entry,
    R = c0 sqrt(T ln K / delta) is infinite, so alpha stays 0 and the agent plays mu_c for
    ever (its regret to the best strategy is then linear in T: the Lattimore 2015
    obstruction of docs/papers/bandit-safe-regret.md §1). This is a documented failure
    mode, reported by the metrics, not an error.

    Notes
    -----
    Bandit (reconstruction of the paper): R = c0 sqrt(T ln K / delta), EXP3 rate
    eta_s = sqrt(2 delta_s ln K_s / T_s) per seat (K replaced by 1 / delta), IX gamma = eta / 2.
    Full information (Even-Dar et al. 2008): R = c0 sqrt(T ln K / 2), Hedge rate
    sqrt(8 ln K_s / T_s). A phase ends when the estimated comparator loss exceeds the best
    fixed strategy's by 2R (loss units); the learner and the statistics are then reset.
    """

    def __init__(
        self,
        data: GameData,
        learner: str,
        feedback: str = "bandit",
        c0: float = 1.0,
        phased: bool = True,
        reset: bool = True,
        fixed_alpha: float | None = None,
    ) -> None:
        self.mu = [np.asarray(x, dtype=float) for x in data.comparator]
        self._mu = [x.tolist() for x in self.mu]
        self._losses = _loss_columns(data)
        self.full = feedback == "full"
        rounds = seat_rounds(data)
        sizes = [len(seat.actions) for seat in data.game.seats]
        no_support = phased and not self.full and data.delta <= 0.0
        etas = [
            self._eta(learner, k, n, x, phased)
            for k, n, x in zip(sizes, rounds, self.mu, strict=True)
        ]
        self.learners = [make_learner(learner, k, eta) for k, eta in zip(sizes, etas, strict=True)]
        log_k = _log_n_strategies(data)
        if not phased or no_support:
            self.R = math.inf
        elif self.full:
            self.R = c0 * math.sqrt(data.T * log_k / 2.0)
        else:
            self.R = c0 * math.sqrt(data.T * log_k / data.delta)
        self.k = 1
        self.alpha = min(1.0, 1.0 / self.R) if phased else 1.0
        if fixed_alpha is not None:
            self.alpha, self.R = fixed_alpha, math.inf
        self.reset_learner = reset
        self.switches: list[int] = []
        self._t = 0
        self._reset_statistics()

    def _eta(self, learner: str, k: int, n: int, mu: np.ndarray, phased: bool) -> float:
        if self.full or learner == "hedge":
            return _hedge_eta(k, n)
        inverse_delta = 1.0 / mu.min() if phased and mu.min() > 0 else float(k)
        return math.sqrt(2.0 * math.log(k) / (inverse_delta * n))

    def _reset_statistics(self, reset_learner: bool = True) -> None:
        self._base = [(1.0 - self.alpha) * x for x in self.mu]
        self._Sc = 0.0
        self._S = [[0.0] * len(x) for x in self.mu]
        self._S_min = [0.0] * len(self.mu)
        if reset_learner:
            for learner in self.learners:
                learner.reset()

    def play(self, seat: int) -> np.ndarray:
        """Played distribution p_t for a round in ``seat``, shape (K_seat,)."""
        q = self.learners[seat].dist()
        self._p = q if self.alpha >= 1.0 else self._base[seat] + self.alpha * q
        return self._p

    def observe(self, seat: int, action: int, payoff: float, b: int) -> None:
        """Learn from the round; ``b`` is used only with full information."""
        self._t += 1
        learner, S = self.learners[seat], self._S[seat]
        if self.full:
            losses = self._losses[seat][b]
            learner.update_full(losses)
            self._Sc += float(self.mu[seat] @ losses)
            self._S[seat] = S = [x + y for x, y in zip(S, losses.tolist(), strict=True)]
        else:
            loss = (1.0 - payoff) * 0.5
            prob = float(self._p[action])
            learner.update_bandit(action, loss, prob)
            estimate = exp3_estimate(loss, prob)
            self._Sc += self._mu[seat][action] * estimate
            S[action] += estimate
        if self.alpha < 1.0 and math.inf != self.R:
            self._S_min[seat] = min(S)
            if self._Sc - sum(self._S_min) >= 2.0 * self.R:
                self.k += 1
                self.alpha = min(1.0, 2.0 ** (self.k - 1) / self.R)
                self.switches.append(self._t)
                self._reset_statistics(self.reset_learner)


class ABProd:
    """(A,B)-Prod with A = Hedge and B = the comparator; full information only.

    Parameters
    ----------
    data : GameData
        The game, comparator and horizon.

    Notes
    -----
    w_A = eta, w_B = 1 - eta (frozen), s_t = w_A / (w_A + w_B), p_t = s_t q_t + (1 - s_t) mu_c,
    w_A <- w_A (1 + eta (<mu_c, l_t> - <q_t, l_t>)), eta = sqrt(ln T / T) / 2 (Sani et al.
    2014); the agent plays the mixture p_t, whose expected loss is that of sampling A or B.
    """

    def __init__(self, data: GameData) -> None:
        self.mu = [np.asarray(x, dtype=float) for x in data.comparator]
        rounds = seat_rounds(data)
        self.learners = [
            make_learner("hedge", len(s.actions), _hedge_eta(len(s.actions), n))
            for s, n in zip(data.game.seats, rounds, strict=True)
        ]
        self._losses = _loss_columns(data)
        T = max(data.T, 3)
        self.eta = 0.5 * math.sqrt(math.log(T) / T)
        self._w_a, self._w_b = self.eta, 1.0 - self.eta
        self.alpha = self._w_a / (self._w_a + self._w_b)
        self.switches: list[int] = []

    def play(self, seat: int) -> np.ndarray:
        """Played distribution p_t = s_t q_t + (1 - s_t) mu_c, shape (K_seat,)."""
        self._q = self.learners[seat].dist()
        return self.alpha * self._q + (1.0 - self.alpha) * self.mu[seat]

    def observe(self, seat: int, action: int, payoff: float, b: int) -> None:
        """Update w_A and Hedge on the full loss vector."""
        losses = self._losses[seat][b]
        gap = float(self.mu[seat] @ losses - self._q @ losses)
        self._w_a *= 1.0 + self.eta * gap
        self.alpha = self._w_a / (self._w_a + self._w_b)
        self.learners[seat].update_full(losses)


class Comparator:
    """Always play the comparator mu_c (alpha = 0)."""

    def __init__(self, data: GameData) -> None:
        self.mu = [np.asarray(x, dtype=float) for x in data.comparator]
        self.alpha = 0.0
        self.switches: list[int] = []

    def play(self, seat: int) -> np.ndarray:
        """The comparator of ``seat``."""
        return self.mu[seat]

    def observe(self, seat: int, action: int, payoff: float, b: int) -> None:
        """Nothing to learn."""
