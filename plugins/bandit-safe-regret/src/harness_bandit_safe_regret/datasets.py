"""Datasets: a zero-sum game of value 0, Alice's comparator, an opponent and a horizon T.

Source: docs/papers/bandit-safe-regret.md §4 (games and opponents of the benchmark).
"""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import AfterValidator, Field
from pydantic.dataclasses import dataclass

from harness import Dataset
from harness_bandit_safe_regret import _games as games
from harness_bandit_safe_regret._data import Game, GameData, Opponent, Seat

__all__ = [
    "KuhnPoker",
    "MatchingPennies",
    "RandomSymmetric",
    "RockPaperScissors",
    "Rpsls",
    "WeightedRps",
    "build_data",
]


Epsilon = Annotated[float, Field(ge=0, lt=1)]
"""comparator_epsilon: the weight of the uniform strategy in mu_c, in [0, 1)."""


def _odd(n: int) -> int:
    if n % 2 == 0:
        raise ValueError(f"must be odd, got {n}")
    return n


@dataclass
class GameParams:
    """Parameters shared by every game dataset (see the dataset docstrings)."""

    T: Annotated[int, Field(ge=1)] = 10_000
    opponent: Opponent = "best-response"
    fixed_strategy: list[float] = field(default_factory=list)
    switch_tv: Annotated[float, Field(ge=0, le=1)] = 0.1
    comparator_epsilon: Epsilon = 0.0


_PARAMS_DOC = """
    T : int, default=10000
        Horizon, the number of rounds (>= 1).
    opponent : {"minimax", "fixed", "random-fixed", "best-response", "fictitious-play", \
"no-regret", "bait-and-switch"}, default="best-response"
        Bob: his minimax strategy; a fixed exploitable strategy; a stationary strategy drawn
        from the dataset seed (Dirichlet(1) over his actions; Kuhn: uniform random behaviour
        at each information set); a clairvoyant best
        response to Alice's current p_t; a best response to her empirical frequencies; EXP3;
        or the fixed strategy until TV(p_t, mu_c) > switch_tv, then best responses.
    fixed_strategy : list of float, default=[]
        Bob's exploitable strategy (length = his number of actions); empty means the
        game's default (always the first action, e.g. always-Rock).
    switch_tv : float, default=0.1
        Total-variation threshold of ``bait-and-switch``, in [0, 1].
    comparator_epsilon : float, default=0
        mu_c = (1 - epsilon) minimax + epsilon uniform, in [0, 1).
"""


def build_data(
    name: str,
    seats: list[Seat],
    params: GameParams,
    default_fixed: list[np.ndarray],
    seed: int = 0,
) -> GameData:
    """Solve each seat's minimax by LP and assemble the task's data object.

    Raises
    ------
    ValueError
        If ``fixed_strategy`` does not fit the game, or the game's value is not 0 (the
        guarantees of this task need a zero-sum game of value zero).
    """
    comparators, bob, values = [], [], []
    for seat in seats:
        x, value = games.maximin(seat.matrix)
        y, _ = games.maximin(-seat.matrix.T)
        comparators.append(games.perturb(x, params.comparator_epsilon))
        bob.append(y)
        values.append(value)
    if abs(float(np.mean(values))) > 1e-6:
        raise ValueError(f"game '{name}' has value {np.mean(values):.4g}; this task needs value 0")
    fixed = default_fixed
    if params.fixed_strategy:
        if len(seats) != 1 or len(params.fixed_strategy) != len(seats[0].opponent_actions):
            raise ValueError(
                f"fixed_strategy must have one probability per opponent action of '{name}'"
                f" ({[len(s.opponent_actions) for s in seats]} per seat; only one-seat games"
                f" accept it), got {params.fixed_strategy}"
            )
        x = np.asarray(params.fixed_strategy, dtype=float)
        if np.any(x < 0) or abs(x.sum() - 1) > 1e-8:
            raise ValueError(f"fixed_strategy must be a probability vector, got {x.tolist()}")
        fixed = [x]
    if params.opponent == "random-fixed":
        rng = np.random.default_rng([seed, 7])
        fixed = [rng.dirichlet(np.ones(len(seat.opponent_actions))) for seat in seats]
    return GameData(
        game=Game(name=name, seats=tuple(seats)),
        comparator=tuple(comparators),
        opponent_minimax=tuple(bob),
        value=float(np.mean(values)),
        seat_values=tuple(values),
        opponent=params.opponent,
        opponent_strategy=tuple(fixed),
        switch_tv=params.switch_tv,
        T=params.T,
        comparator_epsilon=params.comparator_epsilon,
    )


class _MatrixGame(Dataset):
    task = "bandit-safe-regret"
    test_params: ClassVar[dict] = {"T": 200}
    actions: tuple[str, ...] = ()
    Params = GameParams

    def matrix(self, params, seed: int) -> np.ndarray:
        raise NotImplementedError

    def load(self, params, seed: int) -> GameData:
        """The game with its minimax comparator and the opponent; see the class docstring."""
        A = games.zero_sum_matrix(self.matrix(params, seed), square=True)
        names = self.actions or tuple(f"a{i}" for i in range(A.shape[0]))
        seat = Seat(payoffs=A[None], actions=names, opponent_actions=names)
        first = np.eye(A.shape[1])[0]
        return build_data(self.name, [seat], params, [first], seed)

    def describe(self, data: GameData) -> dict[str, float | int | str]:
        """delta, the comparator and the number of actions."""
        return {
            "delta": round(data.delta, 6),
            "comparator": str(np.round(data.comparator[0], 4).tolist()),
            "n_actions": len(data.game.seats[0].actions),
        }


class MatchingPennies(_MatrixGame):
    __doc__ = f"""Matching pennies: [[1, -1], [-1, 1]], minimax (1/2, 1/2), delta = 1/2.

    Source: docs/papers/bandit-safe-regret.md §4 (K = 2).

    Parameters
    ----------{_PARAMS_DOC}
    Returns
    -------
    GameData
    """

    name = "matching-pennies"
    actions = ("heads", "tails")

    def matrix(self, params, seed: int) -> np.ndarray:
        return np.array([[1.0, -1.0], [-1.0, 1.0]])


class RockPaperScissors(_MatrixGame):
    __doc__ = f"""Rock-paper-scissors: win +1, loss -1; minimax uniform, delta = 1/3.

    Source: docs/papers/bandit-safe-regret.md §4; the paper's lay summary names RPS.

    Parameters
    ----------{_PARAMS_DOC}
    Returns
    -------
    GameData
    """

    name = "rock-paper-scissors"
    actions = ("rock", "paper", "scissors")

    def matrix(self, params, seed: int) -> np.ndarray:
        return games.cyclic_matrix(3)


class WeightedRps(_MatrixGame):
    __doc__ = f"""Weighted RPS [[0,-1,2],[1,0,-2],[-2,2,0]] / 2; minimax (0.4, 0.4, 0.2).

    Source: docs/papers/bandit-safe-regret.md §4 (delta = 0.2); payoffs halved into [-1, 1].

    Parameters
    ----------{_PARAMS_DOC}
    Returns
    -------
    GameData
    """

    name = "weighted-rps"
    actions = ("rock", "paper", "scissors")

    def matrix(self, params, seed: int) -> np.ndarray:
        return games.WEIGHTED_RPS


@dataclass
class RpslsParams(GameParams):
    """GameParams plus the number of actions."""

    n_actions: Annotated[int, Field(ge=3), AfterValidator(_odd)] = 5


class Rpsls(_MatrixGame):
    __doc__ = f"""Rock-paper-scissors-lizard-Spock and larger cyclic games; minimax uniform.

    Source: docs/papers/bandit-safe-regret.md §4 (RPSLS / cyclic K = 5, 7).

    Parameters
    ----------
    n_actions : int, default=5
        Odd number of actions K >= 3; delta = 1 / K.{_PARAMS_DOC}
    Returns
    -------
    GameData
    """

    name = "rpsls"
    Params = RpslsParams

    def matrix(self, params, seed: int) -> np.ndarray:
        return games.cyclic_matrix(params.n_actions)


@dataclass
class RandomSymmetricParams(GameParams):
    """GameParams plus the size and the full-support rule of random symmetric games."""

    n_actions: Annotated[int, Field(ge=2)] = 5
    selection: Literal["full-support", "perturb"] = "full-support"
    min_delta: Annotated[float, Field(gt=0)] = 0.02
    max_draws: Annotated[int, Field(ge=1)] = 5000

    def __post_init__(self) -> None:  # a constraint between two fields
        if self.min_delta >= 1.0 / self.n_actions:
            raise ValueError(f"min_delta must be in (0, 1/n_actions), got {self.min_delta}")


class RandomSymmetric(_MatrixGame):
    __doc__ = f"""Random symmetric zero-sum game A = (B - B^T) / 2, B ~ U[-1, 1]^(K x K); value 0.

    Source: docs/papers/bandit-safe-regret.md §4 (about 6.5% of 5 x 5 draws have a
    full-support minimax strategy).

    Parameters
    ----------
    n_actions : int, default=5
        K >= 2.
    selection : {{"full-support", "perturb"}}, default="full-support"
        ``full-support``: redraw until the minimax strategy has every probability >=
        ``min_delta``. ``perturb``: keep the first draw; set ``comparator_epsilon`` > 0 to
        make the comparator full-support (delta is logged as ``dataset.delta``).
    min_delta : float, default=0.02
        Smallest minimax probability accepted by ``full-support``, in (0, 1/K).
    max_draws : int, default=5000
        Draws tried by ``full-support`` before giving up.{_PARAMS_DOC}
    Returns
    -------
    GameData

    Raises
    ------
    ValueError
        If no draw in ``max_draws`` has a full-support minimax strategy.
    """

    name = "random-symmetric"
    Params = RandomSymmetricParams
    test_params: ClassVar[dict] = {"T": 200, "n_actions": 3}

    def matrix(self, params, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        for _ in range(params.max_draws):
            A = games.random_symmetric(rng, params.n_actions)
            if params.selection == "perturb" or games.maximin(A)[0].min() >= params.min_delta:
                return A
        raise ValueError(
            f"no {params.n_actions}x{params.n_actions} draw in max_draws={params.max_draws} has"
            f" a minimax strategy with every probability >= min_delta={params.min_delta}"
        )


@dataclass
class KuhnParams(GameParams):
    """GameParams with the comparator perturbed by default (Kuhn's Nash is not full support)."""

    comparator_epsilon: Epsilon = 0.1
    comparator_form: Literal["uniform-mix", "behavioural"] = "uniform-mix"


_KUHN_PARAMS_DOC = _PARAMS_DOC.replace(
    "epsilon : float, default=0\n", "epsilon : float, default=0.1\n"
)


class KuhnPoker(Dataset):
    __doc__ = f"""Kuhn poker (native), seats alternated: Alice is player 1 on even rounds.

    Source: Kuhn 1950; docs/papers/bandit-safe-regret.md §2.3, §7 (value -1/18 for player 1,
    Nash not full support: mu_c = (1 - epsilon) Nash + epsilon uniform).

    Each seat is the reduced normal form (27 strategies for player 1, 64 for player 2), with
    the deal as chance (realised payoffs use a sampled deal); payoffs in chips / 2. The data
    also carry the sequence form (``extensive``) for sequence-form methods. The value per
    pair of rounds is 0. The default ``fixed`` opponent always bets and always calls.

    Parameters
    ----------
    comparator_form : {{"uniform-mix", "behavioural"}}, default="uniform-mix"
        ``uniform-mix``: mu_c = (1 - epsilon) LP minimax + epsilon uniform over the 27 / 64
        pure strategies of each seat (the sequence-form methods skip these cells: their
        comparator would differ). ``behavioural``: mu_c is Kuhn's closed-form Nash strategy
        (player 1's alpha = 1/4) perturbed by epsilon only at information sets where it
        has a zero, and the normal-form comparator is its image over pure strategies, so
        every method shares mu_c.{_KUHN_PARAMS_DOC}
    Returns
    -------
    GameData
    """

    name = "kuhn-poker"
    task = "bandit-safe-regret"
    Params = KuhnParams
    test_params: ClassVar[dict] = {"T": 100, "comparator_form": "behavioural"}

    def load(self, params: KuhnParams, seed: int) -> GameData:
        """Both seats of Kuhn poker with their minimax comparators and the opponent."""
        from dataclasses import replace

        from harness_bandit_safe_regret._extensive import kuhn_sequence_form, normal_form_image

        payoffs, p1, p2 = games.kuhn_seat_payoffs()
        seats = [
            Seat(payoffs=payoffs, actions=p1, opponent_actions=p2),
            Seat(payoffs=-payoffs.transpose(0, 2, 1), actions=p2, opponent_actions=p1),
        ]
        maniac_p2 = p2.index("J:call-bet/Q:call-bet/K:call-bet")
        maniac_p1 = p1.index("J:bet/Q:bet/K:bet")
        fixed = [np.eye(len(p2))[maniac_p2], np.eye(len(p1))[maniac_p1]]
        form = params.comparator_form
        sequence_form = kuhn_sequence_form(params.comparator_epsilon, comparator_form=form)
        if form == "uniform-mix":
            data = build_data(self.name, seats, params, fixed)
        else:
            data = build_data(self.name, seats, replace(params, comparator_epsilon=0.0), fixed)
        if params.opponent == "random-fixed":  # a random behavioural strategy per seat
            rng = np.random.default_rng([seed, 7])
            images = []
            for s in sequence_form.seats:
                tree = s.opponent
                pi = np.zeros(tree.n_sequences)
                for children in tree.children:
                    pi[list(children)] = rng.dirichlet(np.ones(len(children)))
                images.append(normal_form_image(tree, pi, s.opponent_plans))
            data = replace(data, opponent_strategy=tuple(images))
        if form != "uniform-mix":
            images = tuple(
                normal_form_image(s.alice, s.comparator, s.alice_plans) for s in sequence_form.seats
            )
            data = replace(data, comparator=images, comparator_epsilon=params.comparator_epsilon)
        return replace(data, extensive=sequence_form)

    def describe(self, data: GameData) -> dict[str, float | int | str]:
        """delta, player 1's value in chips and the support size of the comparator."""
        return {
            "delta": float(f"{data.delta:.6g}"),
            "delta_sequence_form": float(f"{data.extensive.delta:.6g}"),
            "player1_value_chips": round(2 * data.seat_values[0], 6),
            "n_actions": "27/64",
        }
