"""Game maths: payoff matrices, native Kuhn poker, minimax strategies by linear programming.

Source: Müller et al., ICML 2025 (arXiv 2502.11673) §4 games, as summarised in
docs/papers/bandit-safe-regret.md §4; Kuhn, "A simplified two-person poker", 1950.
"""

from __future__ import annotations

import itertools

import numpy as np

from harness import LazyModule

optimize = LazyModule("scipy.optimize")

__all__ = [
    "KUHN_VALUE",
    "WEIGHTED_RPS",
    "cyclic_matrix",
    "kuhn_seat_payoffs",
    "maximin",
    "perturb",
    "random_symmetric",
    "zero_sum_matrix",
]

KUHN_VALUE = -1.0 / 18.0
"""Player 1's value of Kuhn poker in chips (ante 1, bet 1); Kuhn 1950."""

WEIGHTED_RPS = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -2.0], [-2.0, 2.0, 0.0]]) / 2.0
"""Weighted RPS [[0,-1,2],[1,0,-2],[-2,2,0]] scaled by 1/2 to [-1, 1]; minimax (0.4, 0.4, 0.2)."""


def zero_sum_matrix(A: np.ndarray, B: np.ndarray | None = None, square: bool = False) -> np.ndarray:
    """Check a (bi)matrix game and return the row player's payoff matrix.

    Parameters
    ----------
    A : array-like of float, shape (K, M)
        Row player's payoffs in [-1, 1].
    B : array-like of float, shape (K, M), optional
        Column player's payoffs; must equal ``-A`` (zero-sum).
    square : bool, default=False
        Require K == M (symmetric games).

    Returns
    -------
    ndarray of float, shape (K, M)

    Raises
    ------
    ValueError
        If A is not 2-D, not square where required, leaves [-1, 1], or A + B != 0.
    """
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or min(A.shape) < 2:
        raise ValueError(f"payoff matrix must be 2-D with >= 2 actions each, got shape {A.shape}")
    if square and A.shape[0] != A.shape[1]:
        raise ValueError(f"payoff matrix must be square for a symmetric game, got shape {A.shape}")
    if np.abs(A).max() > 1 + 1e-12:
        raise ValueError("payoff matrix must lie in [-1, 1]; rescale it")
    if B is not None:
        B = np.asarray(B, dtype=float)
        if B.shape != A.shape or not np.allclose(A + B, 0.0, atol=1e-12):
            raise ValueError("game is not zero-sum: A + B != 0; this task needs a zero-sum game")
    return A


def maximin(A: np.ndarray) -> tuple[np.ndarray, float]:
    """The row player's maximin strategy and the game value, by linear programming.

    Source: scipy.optimize.linprog (HiGHS): maximise v s.t. A^T x >= v 1, sum x = 1, x >= 0.

    Parameters
    ----------
    A : ndarray of float, shape (K, M)
        Row player's payoffs (the row player maximises).

    Returns
    -------
    x : ndarray of float, shape (K,)
        A maximin mixed strategy (probabilities, clipped at 0 and renormalised).
    value : float
        The game's value for the row player, in A's units.
    """
    K, M = A.shape
    c = np.zeros(K + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-A.T, np.ones((M, 1))])
    A_eq = np.hstack([np.ones((1, K)), np.zeros((1, 1))])
    bounds = [(0, None)] * K + [(None, None)]
    res = optimize.linprog(c, A_ub=A_ub, b_ub=np.zeros(M), A_eq=A_eq, b_eq=[1.0], bounds=bounds)
    if res.status != 0:
        raise RuntimeError(f"linprog failed to solve the maximin LP: {res.message}")
    x = np.clip(res.x[:K], 0.0, None)
    return x / x.sum(), float(res.x[-1])


def perturb(x: np.ndarray, epsilon: float) -> np.ndarray:
    """(1 - epsilon) x + epsilon uniform: a full-support comparator for epsilon > 0."""
    return (1.0 - epsilon) * x + epsilon / x.size


def cyclic_matrix(n_actions: int) -> np.ndarray:
    """Generalised rock-paper-scissors on an odd number of actions (RPS, RPSLS, ...).

    Action i beats the (n - 1) / 2 actions i - 1, i - 3, ... (mod n): payoff +1 for a win,
    -1 for a loss, 0 for a tie; the unique minimax strategy is uniform.

    Raises
    ------
    ValueError
        If ``n_actions`` is even or < 3.
    """
    if n_actions < 3 or n_actions % 2 == 0:
        raise ValueError(f"n_actions must be odd and >= 3, got {n_actions}")
    d = (np.arange(n_actions)[None, :] - np.arange(n_actions)[:, None]) % n_actions
    # i beats j when (j - i) mod n is even and non-zero: RPS rows R, P, S give P beats R.
    return np.where(d == 0, 0.0, np.where(d % 2 == 0, 1.0, -1.0))


def random_symmetric(rng: np.random.Generator, n_actions: int) -> np.ndarray:
    """A = (B - B^T) / 2 with B ~ U[-1, 1]^(n x n): symmetric zero-sum, value 0, in [-1, 1]."""
    B = rng.uniform(-1.0, 1.0, size=(n_actions, n_actions))
    return (B - B.T) / 2.0


# -- Kuhn poker ---------------------------------------------------------------------------

P1_CHOICES = ("bet", "check-fold", "check-call")
P2_CHOICES = ("fold-check", "call-check", "fold-bet", "call-bet")  # (facing bet, facing check)
CARDS = "JQK"


def _kuhn_chips(c1: int, c2: int, s1: int, s2: int) -> float:
    """Chips won by player 1 with cards c1, c2 and per-card choices s1 (P1), s2 (P2)."""
    show = 1.0 if c1 > c2 else -1.0
    p2_calls, p2_bets = s2 % 2 == 1, s2 >= 2
    if s1 == 0:  # P1 bets
        return 2.0 * show if p2_calls else 1.0
    if not p2_bets:  # check, check
        return show
    return 2.0 * show if s1 == 2 else -1.0  # check, bet, then call or fold


def kuhn_seat_payoffs() -> tuple[np.ndarray, tuple[str, ...], tuple[str, ...]]:
    """Player 1's payoff in Kuhn poker for every deal and reduced pure strategy pair.

    Source: Kuhn 1950; native game tree (ante 1, one bet of 1, cards J < Q < K).

    Returns
    -------
    payoffs : ndarray of float, shape (6, 27, 64)
        Player 1's chips for deal d (ordered card pairs), P1 strategy (one of bet /
        check-fold / check-call per card) and P2 strategy (one of the 4 choices per card),
        divided by 2 so that they lie in [-1, 1].
    p1_actions : tuple of str, length 27
    p2_actions : tuple of str, length 64
    """
    deals = [(c1, c2) for c1 in range(3) for c2 in range(3) if c1 != c2]
    p1 = list(itertools.product(range(3), repeat=3))  # choice for J, Q, K
    p2 = list(itertools.product(range(4), repeat=3))
    payoffs = np.empty((len(deals), len(p1), len(p2)))
    for d, (c1, c2) in enumerate(deals):
        for i, s1 in enumerate(p1):
            for j, s2 in enumerate(p2):
                payoffs[d, i, j] = _kuhn_chips(c1, c2, s1[c1], s2[c2]) / 2.0
    name1 = tuple("/".join(f"{CARDS[c]}:{P1_CHOICES[s[c]]}" for c in range(3)) for s in p1)
    name2 = tuple("/".join(f"{CARDS[c]}:{P2_CHOICES[s[c]]}" for c in range(3)) for s in p2)
    return payoffs, name1, name2
