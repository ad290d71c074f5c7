"""No-regret base learners over K actions, in loss units ([0, 1] per round).

Source: EXP3 (Auer et al., SIAM J. Comput. 2002); EXP3-IX (Neu, NeurIPS 2015); Tsallis-INF
(Zimmert & Seldin, JMLR 2021, alpha = 1/2); Hedge (Freund & Schapire 1997), as summarised in
docs/papers/bandit-safe-regret.md §3.

Every learner keeps its own distribution ``q`` (``dist()``) and accepts either an
importance-weighted loss estimate for one action (``update_bandit``, bandit feedback) or the
whole loss vector (``update_full``, full information). The caller computes importance weights
with the probability it *played* (the mixture p_t, not q_t): §7 "importance weights must use
the mixture probability".
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Exp3", "TsallisInf", "exp3_estimate", "make_learner"]


def exp3_estimate(loss: float, prob: float, gamma: float = 0.0) -> float:
    """Importance-weighted estimate of the played action's loss, loss / (prob + gamma).

    With ``gamma = 0`` and ``prob = p_t(a_t)`` the vector ``e_a * estimate`` is an unbiased
    estimate of the loss vector; ``gamma > 0`` is the implicit exploration (IX) of Neu 2015.
    """
    return loss / (prob + gamma)


class Exp3:
    """Exponential weights on importance-weighted loss estimates (EXP3; IX via ``gamma``).

    Parameters
    ----------
    n_actions : int
        K, the number of actions.
    eta : float
        Learning rate, > 0.
    gamma : float, default=0
        Implicit exploration added to the denominator of the estimate (EXP3-IX).

    Notes
    -----
    Keeps unnormalised weights w; a bandit update changes one weight, so a round costs a
    few numpy calls. Weights are rescaled when their sum falls below 1e-150.
    """

    def __init__(self, n_actions: int, eta: float, gamma: float = 0.0) -> None:
        self.n_actions, self.eta, self.gamma = n_actions, eta, gamma
        self.reset()

    def reset(self) -> None:
        """Forget every loss: back to the uniform distribution."""
        self._w = np.ones(self.n_actions)
        self._q = np.full(self.n_actions, 1.0 / self.n_actions)

    def dist(self) -> np.ndarray:
        """Current distribution q, shape (K,)."""
        return self._q

    def update_bandit(self, action: int, loss: float, prob: float) -> float:
        """Update on the played action's loss; returns the loss estimate used."""
        estimate = exp3_estimate(loss, prob, self.gamma)
        self._w[action] *= math.exp(-self.eta * estimate)
        total = self._w.sum()
        if total < 1e-150:
            self._w /= self._w.max()
            total = self._w.sum()
        self._q = self._w / total
        return estimate

    def update_full(self, losses: np.ndarray) -> None:
        """Update on the whole loss vector, shape (K,)."""
        w = self._w * np.exp(-self.eta * losses)
        self._w = w / w.max()
        self._q = self._w / self._w.sum()


class TsallisInf:
    """1/2-Tsallis-INF: q_i = 4 (eta_t (L_i - x))^-2 with x normalising, eta_t = 2 / sqrt(t).

    Parameters
    ----------
    n_actions : int
        K, the number of actions.

    Notes
    -----
    Plain importance weighting (not the reduced-variance estimator); x by Newton's method,
    warm-started at the previous x and capped at min L - 2 / eta_t, where sum q >= 1, so that
    iterates never cross the pole at min L (sum q(x) - 1 is convex and increasing).
    """

    def __init__(self, n_actions: int) -> None:
        self.n_actions = n_actions
        self.reset()

    def reset(self) -> None:
        """Forget every loss: back to the uniform distribution and t = 1."""
        self._L = np.zeros(self.n_actions)
        self._t = 1
        self._x = math.inf
        self._q = np.full(self.n_actions, 1.0 / self.n_actions)

    def dist(self) -> np.ndarray:
        """Current distribution q, shape (K,)."""
        return self._q

    def _solve(self) -> None:
        self._t += 1
        eta = 2.0 / math.sqrt(self._t)
        L = self._L
        cap = L.min() - 2.0 / eta  # sum q(cap) >= 1: at or right of the root
        x = min(self._x, cap)
        for _ in range(100):
            w = 4.0 / (eta * (L - x)) ** 2
            excess = w.sum() - 1.0
            if abs(excess) < 1e-10:
                break
            x = min(x - excess / (eta * (w**1.5).sum()), cap)
        self._x = x
        self._q = w / w.sum()

    def update_bandit(self, action: int, loss: float, prob: float) -> float:
        """Update on the played action's loss; returns the loss estimate used."""
        estimate = exp3_estimate(loss, prob)
        self._L[action] += estimate
        self._solve()
        return estimate

    def update_full(self, losses: np.ndarray) -> None:
        """Update on the whole loss vector, shape (K,)."""
        self._L += losses
        self._solve()


def make_learner(kind: str, n_actions: int, eta: float) -> Exp3 | TsallisInf:
    """A learner by name: ``exp3``, ``exp3-ix`` (gamma = eta / 2), ``tsallis-inf``, ``hedge``.

    Raises
    ------
    ValueError
        If ``kind`` is unknown.
    """
    if kind in ("exp3", "hedge"):
        return Exp3(n_actions, eta)
    if kind == "exp3-ix":
        return Exp3(n_actions, eta, gamma=eta / 2.0)
    if kind == "tsallis-inf":
        return TsallisInf(n_actions)
    raise ValueError(f"learner must be one of exp3, exp3-ix, tsallis-inf, hedge; got {kind!r}")
