"""Data and output objects of the ``bandit-safe-regret`` task.

Conventions (all arrays are numpy):

- Alice (the learner, row player) *gains* the payoff; payoffs lie in [-1, 1] ("payoff
  units"). Learners internally use losses ``(1 - payoff) / 2`` in [0, 1] ("loss units"; one
  loss unit is two payoff units). Every metric of this task is in payoff units.
- A game is a cycle of *seats*: round ``t`` (0-based) is played in seat ``t % n_seats``.
  Matrix games have one seat. Kuhn poker has two (Alice is player 1 on even rounds and
  player 2 on odd rounds), so that its value per pair of rounds is 0.
- Alice's strategy is one distribution per seat; a round only depends on the distribution
  of the seat it is played in, so the regret to the best fixed strategy is the sum over seats
  of the regret to the best fixed action of that seat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

__all__ = ["Game", "GameData", "Opponent", "PlayOutput", "Seat", "seat_rounds"]

Opponent = Literal[
    "minimax",
    "fixed",
    "random-fixed",
    "best-response",
    "fictitious-play",
    "no-regret",
    "bait-and-switch",
]
OPPONENTS = get_args(Opponent)


@dataclass(frozen=True)
class Seat:
    """One seat of a game: Alice's payoff for every chance outcome and action pair.

    Attributes
    ----------
    payoffs : ndarray of float, shape (n_outcomes, n_actions, n_opponent_actions)
        Alice's payoff in [-1, 1] when chance draws outcome ``d`` (uniformly), Alice plays
        ``a`` and the opponent plays ``b``. Matrix games have ``n_outcomes = 1``; in Kuhn
        poker the outcomes are the 6 deals.
    actions : tuple of str, length n_actions
        Names of Alice's actions (pure strategies) in this seat.
    opponent_actions : tuple of str, length n_opponent_actions
        Names of the opponent's actions in this seat.

    Raises
    ------
    ValueError
        If ``payoffs`` is not 3-D, is non-finite, or leaves [-1, 1].
    """

    payoffs: np.ndarray
    actions: tuple[str, ...]
    opponent_actions: tuple[str, ...]

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        payoffs = np.asarray(self.payoffs, dtype=float)
        if payoffs.ndim != 3:
            raise ValueError(
                f"Seat payoffs must have shape (n_outcomes, K, M), got {payoffs.shape}"
            )
        if not np.all(np.isfinite(payoffs)) or np.abs(payoffs).max() > 1 + 1e-12:
            raise ValueError("Seat payoffs must be finite and lie in [-1, 1] (payoff units)")
        if payoffs.shape[1:] != (len(self.actions), len(self.opponent_actions)):
            raise ValueError(
                f"Seat payoffs shape {payoffs.shape} does not match {len(self.actions)} actions"
                f" and {len(self.opponent_actions)} opponent actions"
            )
        object.__setattr__(self, "payoffs", payoffs)

    @property
    def matrix(self) -> np.ndarray:
        """Expected payoff over chance, shape (n_actions, n_opponent_actions)."""
        return self.payoffs.mean(axis=0)


@dataclass(frozen=True)
class Game:
    """A two-player zero-sum game as a cycle of seats.

    Attributes
    ----------
    name : str
        The dataset name, e.g. ``"rock-paper-scissors"``.
    seats : tuple of Seat, length n_seats
        Round ``t`` (0-based) is played in ``seats[t % n_seats]``.
    """

    name: str
    seats: tuple[Seat, ...]

    @property
    def n_seats(self) -> int:
        """Number of seats in the cycle (1 for matrix games, 2 for Kuhn poker)."""
        return len(self.seats)


@dataclass(frozen=True)
class GameData:
    """One task instance: a game, Alice's comparator, an opponent and a horizon.

    Attributes
    ----------
    game : Game
        The repeated zero-sum game.
    comparator : tuple of ndarray of float, one per seat, shape (n_actions,)
        Alice's comparator strategy mu_c per seat (minimax, epsilon-perturbed where asked);
        a probability vector.
    opponent_minimax : tuple of ndarray of float, one per seat, shape (n_opponent_actions,)
        The opponent's minimax strategy per seat (used by the ``minimax`` opponent).
    value : float
        Alice's minimax value per round averaged over the seat cycle, payoff units
        (0 for every game of this task).
    seat_values : tuple of float, one per seat
        Alice's minimax value in each seat, payoff units (Kuhn: -1/36 and +1/36, i.e.
        -1/18 and +1/18 chips).
    opponent : str
        One of ``minimax``, ``fixed``, ``random-fixed``, ``best-response``,
        ``fictitious-play``, ``no-regret``, ``bait-and-switch``.
    opponent_strategy : tuple of ndarray of float, one per seat, shape (n_opponent_actions,)
        The stationary strategy of the ``fixed``, ``random-fixed`` (drawn from the dataset
        seed) and ``bait-and-switch`` (before its switch) opponents.
    switch_tv : float
        ``bait-and-switch`` best-responds from the first round where the total-variation
        distance between Alice's played distribution and her comparator exceeds this, in [0, 1].
    T : int
        Horizon (number of rounds), >= 1.
    comparator_epsilon : float
        Weight of the uniform strategy mixed into the minimax comparator, in [0, 1).
    extensive : object or None
        The game's sequence form (:class:`harness_bandit_safe_regret._extensive.KuhnSequenceForm`)
        for extensive-form games, ``None`` for matrix games.
    """

    game: Game
    comparator: tuple[np.ndarray, ...]
    opponent_minimax: tuple[np.ndarray, ...]
    value: float
    seat_values: tuple[float, ...]
    opponent: str
    opponent_strategy: tuple[np.ndarray, ...]
    switch_tv: float
    T: int
    comparator_epsilon: float = 0.0
    extensive: object | None = None

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        if self.T < 1:
            raise ValueError(f"T must be >= 1, got {self.T}")
        if self.opponent not in OPPONENTS:
            raise ValueError(
                f"opponent must be one of {', '.join(OPPONENTS)}, got {self.opponent!r}"
            )
        for name in ("comparator", "opponent_minimax", "opponent_strategy"):
            strategies = getattr(self, name)
            if len(strategies) != self.game.n_seats:
                raise ValueError(f"{name} needs one strategy per seat ({self.game.n_seats})")
            for seat, x in zip(self.game.seats, strategies, strict=True):
                size = len(seat.actions) if name == "comparator" else len(seat.opponent_actions)
                x = np.asarray(x)
                if x.shape == (size,) and not np.all(np.isfinite(x)):
                    raise ValueError(f"{name} must be finite (no NaN or inf)")
                if x.shape != (size,) or np.any(x < -1e-12) or abs(x.sum() - 1) > 1e-8:
                    raise ValueError(f"{name} must be a probability vector of length {size}")

    @property
    def delta(self) -> float:
        """Smallest comparator probability over seats and actions, delta = min mu_c(a)."""
        return float(min(x.min() for x in self.comparator))


def seat_rounds(data: GameData) -> list[int]:
    """Number of rounds played in each seat over the horizon (at least 1 each)."""
    n = data.game.n_seats
    return [max(1, len(range(s, data.T, n))) for s in range(n)]


@dataclass(frozen=True)
class PlayOutput:
    """One simulated repeated game of ``T`` rounds, seen from Alice.

    Attributes
    ----------
    expected_payoff : ndarray of float, shape (T,)
        V(p_t, nu_t): Alice's expected payoff in round t under her played distribution p_t
        and the opponent's mixed strategy nu_t (and chance), payoff units.
    realised_payoff : ndarray of float, shape (T,)
        The payoff Alice received for her sampled action, the opponent's sampled action and
        the chance outcome, payoff units.
    comparator_payoff : ndarray of float, shape (T,)
        V(mu_c, nu_t): the comparator's expected payoff in round t, payoff units.
    comparator_realised : ndarray of float, shape (T,)
        V(mu_c, b_t): the comparator's payoff against the opponent's sampled action,
        expected over chance, payoff units.
    best_cumulative : ndarray of float, shape (T,)
        max over Alice's fixed pure strategies of sum_{s <= t} V(a, nu_s), payoff units.
    best_cumulative_realised : ndarray of float, shape (T,)
        The same against the opponent's sampled actions b_s, payoff units.
    alpha : ndarray of float, shape (T,)
        Weight of the learner in p_t, in [0, 1] (1 for pure learners, 0 for ``minimax``).
    phase_switches : ndarray of int, shape (n_switches,)
        The rounds (1-based) after which the method moved to its next phase.

    Raises
    ------
    ValueError
        If a per-round array is not 1-D of the same length T or has a non-finite value
        (the message names the field).
    """

    expected_payoff: np.ndarray
    realised_payoff: np.ndarray
    comparator_payoff: np.ndarray
    comparator_realised: np.ndarray
    best_cumulative: np.ndarray
    best_cumulative_realised: np.ndarray
    alpha: np.ndarray
    phase_switches: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        names = (
            "expected_payoff",
            "realised_payoff",
            "comparator_payoff",
            "comparator_realised",
            "best_cumulative",
            "best_cumulative_realised",
            "alpha",
        )
        shape = np.shape(self.expected_payoff)
        for name in names:
            values = np.asarray(getattr(self, name), dtype=float)
            if values.shape != shape or values.ndim != 1:
                raise ValueError(f"PlayOutput.{name} must have shape (T,) = {shape}")
            if not np.all(np.isfinite(values)):
                raise ValueError(f"PlayOutput.{name} must be finite (no NaN or inf)")

    @property
    def T(self) -> int:  # noqa: N802 - the paper's horizon T
        """Number of rounds played."""
        return int(self.expected_payoff.size)
