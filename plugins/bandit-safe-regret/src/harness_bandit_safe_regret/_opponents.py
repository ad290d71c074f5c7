"""Bob, the opponent: stationary (fixed, random), clairvoyant, fictitious play, no-regret,
bait-and-switch.

Source: docs/papers/bandit-safe-regret.md §4 "Opponents" (benchmark design; the paper's own
opponents are not reproduced here).

An opponent acts once per round: ``act(seat, p, u)`` sees Alice's played distribution p_t
(only the clairvoyant ones use it) and a uniform draw ``u``, and returns ``(nu, b)``: its
mixed strategy nu_t (``None`` for a pure action) and its sampled action b_t.
``observe(seat, a, b, payoff)`` gives Alice's sampled action and Alice's payoff.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from itertools import accumulate

import numpy as np

from harness_bandit_safe_regret._data import GameData, seat_rounds

__all__ = ["make_opponent", "sample"]


def sample(p: np.ndarray, u: float) -> int:
    """The action i with cumsum(p)[i-1] <= u * sum(p) < cumsum(p)[i], for u in [0, 1)."""
    c = list(accumulate(p.tolist()))
    return min(bisect_right(c, u * c[-1]), len(c) - 1)


class _Stationary:
    def __init__(self, strategies: tuple[np.ndarray, ...]) -> None:
        self.nu = [np.asarray(x, dtype=float) for x in strategies]

    def act(self, seat: int, p: np.ndarray, u: float) -> tuple[np.ndarray | None, int]:
        return self.nu[seat], sample(self.nu[seat], u)

    def observe(self, seat: int, a: int, b: int, payoff: float) -> None:
        pass


class _BestResponse:
    """Clairvoyant: b_t = argmin_b p_t^T M b (Alice's expected payoff), ties to the lowest b."""

    def __init__(self, data: GameData) -> None:
        self.M = [seat.matrix for seat in data.game.seats]

    def act(self, seat: int, p: np.ndarray, u: float) -> tuple[np.ndarray | None, int]:
        return None, int((p @ self.M[seat]).argmin())

    def observe(self, seat: int, a: int, b: int, payoff: float) -> None:
        pass


class _FictitiousPlay:
    """Best response to Alice's empirical action frequencies in the seat (uniform at first)."""

    def __init__(self, data: GameData) -> None:
        self.M = [seat.matrix for seat in data.game.seats]
        self.g = [M.mean(axis=0) for M in self.M]  # counts @ M, starting from uniform weight 1

    def act(self, seat: int, p: np.ndarray, u: float) -> tuple[np.ndarray | None, int]:
        return None, int(self.g[seat].argmin())

    def observe(self, seat: int, a: int, b: int, payoff: float) -> None:
        self.g[seat] = self.g[seat] + self.M[seat][a]


class _NoRegret:
    """EXP3 for Bob on his loss (1 + Alice's payoff) / 2, eta = sqrt(2 ln M / (M T_seat))."""

    def __init__(self, data: GameData) -> None:
        self.logw, self.nu, self.eta = [], [], []
        for seat, rounds in zip(data.game.seats, seat_rounds(data), strict=True):
            m = len(seat.opponent_actions)
            self.logw.append(np.zeros(m))
            self.nu.append(np.full(m, 1.0 / m))
            self.eta.append(math.sqrt(2.0 * math.log(m) / (m * rounds)))

    def act(self, seat: int, p: np.ndarray, u: float) -> tuple[np.ndarray | None, int]:
        return self.nu[seat], sample(self.nu[seat], u)

    def observe(self, seat: int, a: int, b: int, payoff: float) -> None:
        logw = self.logw[seat]
        logw[b] -= self.eta[seat] * (1.0 + payoff) * 0.5 / self.nu[seat][b]
        w = np.exp(logw - logw.max())
        self.nu[seat] = w / w.sum()


class _BaitAndSwitch(_BestResponse):
    """Plays the exploitable strategy until TV(p_t, mu_c) > switch_tv, then best-responds."""

    def __init__(self, data: GameData) -> None:
        super().__init__(data)
        self.fixed = _Stationary(data.opponent_strategy)
        self.mu = [np.asarray(x, dtype=float) for x in data.comparator]
        self.threshold = 2.0 * data.switch_tv
        self.switched = False

    def act(self, seat: int, p: np.ndarray, u: float) -> tuple[np.ndarray | None, int]:
        if not self.switched and np.abs(p - self.mu[seat]).sum() > self.threshold:
            self.switched = True
        if self.switched:
            return super().act(seat, p, u)
        return self.fixed.act(seat, p, u)


def make_opponent(data: GameData):
    """The opponent named by ``data.opponent``, freshly initialised."""
    if data.opponent == "minimax":
        return _Stationary(data.opponent_minimax)
    if data.opponent in ("fixed", "random-fixed"):
        return _Stationary(data.opponent_strategy)
    return {
        "best-response": _BestResponse,
        "fictitious-play": _FictitiousPlay,
        "no-regret": _NoRegret,
        "bait-and-switch": _BaitAndSwitch,
    }[data.opponent](data)
