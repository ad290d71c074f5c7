"""Sequence form of two-player zero-sum extensive-form games; Kuhn poker built from its tree.

Source: von Stengel, "Efficient computation of behavior strategies", GEB 1996 (sequence form,
realisation plans and the sequence-form LP); Kuhn, "A simplified two-person poker", 1950
(the game, its value -1/18 and its equilibrium family); docs/papers/bandit-safe-regret.md
§2.3 (mixing realisation plans, own-reach importance weights, delta_EFG = min x^c(sigma)).

Conventions. A *treeplex* lists one player's information sets in topological order (parents
first); each information set has a parent sequence (-1 for the empty sequence) and one child
sequence per action. A behavioural strategy is an array ``pi`` over sequences with
``pi[sigma]`` = probability of sigma's action at its information set; its realisation plan
``x[sigma]`` = product of ``pi`` along the path (the empty sequence has reach 1 and is not
stored). Payoffs are in payoff units (chips / 2 for Kuhn), expected over chance, so that
Alice's expected payoff is ``x @ M @ y``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

__all__ = [
    "ExtensiveSeat",
    "KuhnSequenceForm",
    "Treeplex",
    "kuhn_nash_behaviour",
    "kuhn_sequence_form",
    "perturb_behaviour",
    "sequence_form_lp",
]

KUHN_CARDS = "JQK"


@dataclass(frozen=True)
class Treeplex:
    """One player's sequences and information sets.

    Attributes
    ----------
    infosets : tuple of str, length n_infosets
        Information-set names, parents before children.
    parent : tuple of int, length n_infosets
        Parent sequence of each information set, -1 for the empty sequence.
    children : tuple of tuple of int, length n_infosets
        The sequences (one per action) of each information set.
    sequences : tuple of str, length n_sequences
        Sequence names (information set and action).

    Raises
    ------
    ValueError
        If the sequences are not partitioned by the information sets or a parent comes after
        its child.
    """

    infosets: tuple[str, ...]
    parent: tuple[int, ...]
    children: tuple[tuple[int, ...], ...]
    sequences: tuple[str, ...]

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        flat = sorted(s for c in self.children for s in c)
        if flat != list(range(len(self.sequences))):
            raise ValueError("Treeplex children must partition the sequences 0..n-1")
        seen: set[int] = set()
        for p, c in zip(self.parent, self.children, strict=True):
            if p != -1 and p not in seen:
                raise ValueError("Treeplex information sets must come after their parent sequence")
            seen.update(c)

    @property
    def n_sequences(self) -> int:
        """Number of non-empty sequences."""
        return len(self.sequences)

    @property
    def infoset_of(self) -> np.ndarray:
        """Information set of each sequence, shape (n_sequences,)."""
        out = np.empty(self.n_sequences, dtype=np.int64)
        for i, c in enumerate(self.children):
            out[list(c)] = i
        return out

    def reach(self, pi: np.ndarray) -> np.ndarray:
        """Realisation plan x of the behavioural strategy ``pi``, shape (n_sequences,)."""
        x = np.empty(self.n_sequences)
        for p, c in zip(self.parent, self.children, strict=True):
            base = 1.0 if p == -1 else x[p]
            for s in c:
                x[s] = base * pi[s]
        return x

    def behaviour(self, x: np.ndarray) -> np.ndarray:
        """Behavioural strategy of a realisation plan (uniform where unreached)."""
        pi = np.empty(self.n_sequences)
        for p, c in zip(self.parent, self.children, strict=True):
            base = 1.0 if p == -1 else x[p]
            for s in c:
                pi[s] = x[s] / base if base > 0 else 1.0 / len(c)
        return pi

    def uniform(self) -> np.ndarray:
        """The uniform behavioural strategy, shape (n_sequences,)."""
        pi = np.empty(self.n_sequences)
        for c in self.children:
            pi[list(c)] = 1.0 / len(c)
        return pi

    def pure_plans(self) -> np.ndarray:
        """Every reduced pure realisation plan, shape (n_plans, n_sequences), 0/1 entries.

        An information set whose parent sequence is not chosen gets no action (reduced form).
        """
        plans = [np.zeros(self.n_sequences)]
        for p, c in zip(self.parent, self.children, strict=True):
            grown = []
            for plan in plans:
                if p != -1 and plan[p] == 0:
                    grown.append(plan)
                    continue
                for s in c:
                    new = plan.copy()
                    new[s] = 1.0
                    grown.append(new)
            plans = grown
        return np.array(plans)

    def diameter(self) -> float:
        """Dilated-entropy diameter max_x sum_I x(parent(I)) ln |A(I)| over pure plans.

        It replaces ln K (K pure strategies) in the learner's regret bound; Kozuno et al.,
        NeurIPS 2021 (IXOMD with unit dilation weights). Kuhn: 6 ln 2 per player.
        """
        weights = np.array(
            [math.log(len(c)) for c in self.children]
        )  # per infoset, counted when its parent sequence is chosen
        parent_reach = np.array(
            [[1.0 if p == -1 else plan[p] for p in self.parent] for plan in self.pure_plans()]
        )
        return float((parent_reach @ weights).max())


@dataclass(frozen=True)
class ExtensiveSeat:
    """Alice's view of one seat of an extensive-form game in sequence form.

    Attributes
    ----------
    alice, opponent : Treeplex
        Alice's and the opponent's treeplexes.
    payoff : ndarray of float, shape (n_alice_sequences, n_opponent_sequences)
        Sequence-form payoff matrix M: Alice's expected payoff (over chance, payoff units)
        is ``x @ M @ y`` for realisation plans x, y.
    terminals : tuple of ndarray, one per chance outcome, each shape (n_terminals, 3)
        Rows (Alice's last sequence, opponent's last sequence, Alice's payoff in payoff
        units) of every terminal history of that chance outcome; -1 marks an empty sequence.
        For pure plans exactly one row per outcome is consistent with both.
    comparator : ndarray of float, shape (n_alice_sequences,)
        Alice's behavioural comparator mu_c (a perturbed Nash strategy), full support.
    opponent_nash : ndarray of float, shape (n_opponent_sequences,)
        The opponent's behavioural Nash strategy (unperturbed).
    value : float
        Alice's equilibrium value in this seat, payoff units.
    alice_plans, opponent_plans : ndarray of float, shapes (K, n_alice_sequences) and
        (M, n_opponent_sequences)
        The reduced pure strategies as 0/1 realisation plans, in the order of the dataset's
        normal-form actions (Kuhn: 27 and 64 in seat 0).
    """

    alice: Treeplex
    opponent: Treeplex
    payoff: np.ndarray
    terminals: tuple[np.ndarray, ...]
    comparator: np.ndarray
    opponent_nash: np.ndarray
    value: float
    alice_plans: np.ndarray
    opponent_plans: np.ndarray

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        shape = (self.alice.n_sequences, self.opponent.n_sequences)
        if self.payoff.shape != shape or not np.all(np.isfinite(self.payoff)):
            raise ValueError(f"ExtensiveSeat.payoff must be finite with shape {shape}")
        if self.comparator.shape != (self.alice.n_sequences,) or np.any(self.comparator < 0):
            raise ValueError("ExtensiveSeat.comparator must be a behavioural strategy of Alice")


@dataclass(frozen=True)
class KuhnSequenceForm:
    """Both seats of Kuhn poker in sequence form (seat 0: Alice is player 1).

    Attributes
    ----------
    seats : tuple of ExtensiveSeat, length 2
    epsilon : float
        Perturbation of the comparator at the information sets where Nash has a zero.
    comparator_form : str
        ``behavioural`` when the dataset's normal-form comparator is the image of these
        behavioural comparators (every method then shares mu_c), else ``uniform-mix``.
    """

    seats: tuple[ExtensiveSeat, ...]
    epsilon: float
    comparator_form: str

    @property
    def delta(self) -> float:
        """delta_EFG = min over seats and sequences of the comparator's reach x^c(sigma)."""
        return float(min(s.alice.reach(s.comparator).min() for s in self.seats))


def _kuhn_treeplexes() -> tuple[Treeplex, Treeplex]:
    names1, names2, inf1, inf2 = [], [], [], []
    for c, card in enumerate(KUHN_CARDS):
        names1 += [
            f"{card}:check",
            f"{card}:bet",
            f"{card}:check-bet:fold",
            f"{card}:check-bet:call",
        ]
        inf1 += [
            (f"{card}", -1, (4 * c, 4 * c + 1)),
            (f"{card}:check-bet", 4 * c, (4 * c + 2, 4 * c + 3)),
        ]
        names2 += [
            f"{card}:bet:fold",
            f"{card}:bet:call",
            f"{card}:check:check",
            f"{card}:check:bet",
        ]
        inf2 += [
            (f"{card}:bet", -1, (4 * c, 4 * c + 1)),
            (f"{card}:check", -1, (4 * c + 2, 4 * c + 3)),
        ]

    def build(infos, names):
        return Treeplex(
            infosets=tuple(i[0] for i in infos),
            parent=tuple(i[1] for i in infos),
            children=tuple(i[2] for i in infos),
            sequences=tuple(names),
        )

    return build(inf1, names1), build(inf2, names2)


def _kuhn_terminals() -> list[np.ndarray]:
    """Player 1's terminals per deal (c1, c2): (P1 last seq, P2 last seq, P1 chips / 2)."""
    out = []
    for c1, c2 in itertools.permutations(range(3), 2):
        show = 1.0 if c1 > c2 else -1.0
        a, b = 4 * c1, 4 * c2
        rows = [
            (a + 1, b + 0, 1.0),  # bet, fold
            (a + 1, b + 1, 2.0 * show),  # bet, call
            (a + 0, b + 2, show),  # check, check
            (a + 2, b + 3, -1.0),  # check, bet, fold
            (a + 3, b + 3, 2.0 * show),  # check, bet, call
        ]
        out.append(np.array([(s1, s2, chips / 2.0) for s1, s2, chips in rows]))
    return out


def kuhn_nash_behaviour(alpha: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """A closed-form Nash equilibrium of Kuhn poker as behavioural strategies.

    Source: Kuhn 1950 (the equilibrium family of player 1, parameter alpha in [0, 1/3]).
    Player 1: bet J w.p. alpha, never open Q, bet K w.p. 3 alpha; after check-bet fold J,
    call Q w.p. alpha + 1/3, call K. Player 2: facing a bet fold J, call Q w.p. 1/3, call K;
    facing a check bet J w.p. 1/3, check Q, bet K. The default alpha = 1/4 maximises the
    smallest probability that is not forced to 0 (min(alpha, 1 - 3 alpha) = 1/4).

    Returns
    -------
    pi1, pi2 : ndarray of float, shape (12,)
        Behavioural strategies over the sequences of :func:`kuhn_sequence_form`.

    Raises
    ------
    ValueError
        If alpha is outside [0, 1/3].
    """
    if not 0.0 <= alpha <= 1.0 / 3.0:
        raise ValueError(f"Kuhn's equilibrium parameter alpha must be in [0, 1/3], got {alpha}")
    bet1 = [alpha, 0.0, 3.0 * alpha]
    call1 = [0.0, alpha + 1.0 / 3.0, 1.0]
    call2 = [0.0, 1.0 / 3.0, 1.0]
    bet2 = [1.0 / 3.0, 0.0, 1.0]
    pi1, pi2 = np.empty(12), np.empty(12)
    for c in range(3):
        pi1[4 * c : 4 * c + 4] = [1 - bet1[c], bet1[c], 1 - call1[c], call1[c]]
        pi2[4 * c : 4 * c + 4] = [1 - call2[c], call2[c], 1 - bet2[c], bet2[c]]
    return pi1, pi2


def perturb_behaviour(tree: Treeplex, pi: np.ndarray, epsilon: float) -> np.ndarray:
    """(1 - epsilon) pi + epsilon uniform, only at information sets where pi has a zero.

    This is the smallest change that gives full support for a given epsilon; information
    sets where pi already has full support keep pi. A benchmark design choice
    (docs/papers/bandit-safe-regret.md §7), not the paper's.

    Raises
    ------
    ValueError
        If epsilon is outside [0, 1).
    """
    if not 0.0 <= epsilon < 1.0:
        raise ValueError(f"epsilon must be in [0, 1), got {epsilon}")
    out = np.array(pi, dtype=float)
    for c in tree.children:
        c = list(c)
        if out[c].min() <= 0.0:
            out[c] = (1.0 - epsilon) * out[c] + epsilon / len(c)
    return out


def sequence_form_lp(
    payoff: np.ndarray, row: Treeplex, column: Treeplex
) -> tuple[np.ndarray, float]:
    """Maximin realisation plan of the row player and the game value, by the sequence-form LP.

    Source: von Stengel 1996, the LP max_{x, v} f^T v s.t. M^T x - F^T v >= 0, E x = e,
    x >= 0 (E, F: the players' sequence constraints); scipy.optimize.linprog (HiGHS).

    Parameters
    ----------
    payoff : ndarray of float, shape (n_row_sequences, n_column_sequences)
        The row player's sequence-form payoff matrix (the row player maximises).
    row, column : Treeplex

    Returns
    -------
    x : ndarray of float, shape (n_row_sequences,)
        A maximin realisation plan.
    value : float
        The row player's value, in the payoff's units.
    """

    def constraints(tree: Treeplex) -> tuple[np.ndarray, np.ndarray]:
        E = np.zeros((len(tree.infosets), tree.n_sequences))
        e = np.zeros(len(tree.infosets))
        for i, (p, c) in enumerate(zip(tree.parent, tree.children, strict=True)):
            E[i, list(c)] = 1.0
            if p == -1:
                e[i] = 1.0
            else:
                E[i, p] = -1.0
        return E, e

    E, e = constraints(row)
    F, f = constraints(column)
    n, m = row.n_sequences, len(column.infosets)
    # variables (x, v); maximise f.v  <=>  minimise -f.v;  -(M^T x) + F^T v <= 0
    c = np.concatenate([np.zeros(n), -f])
    A_ub = np.hstack([-payoff.T, F.T])
    A_eq = np.hstack([E, np.zeros((E.shape[0], m))])
    bounds = [(0, None)] * n + [(None, None)] * m
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(payoff.shape[1]), A_eq=A_eq, b_eq=e, bounds=bounds)
    if res.status != 0:
        raise RuntimeError(f"linprog failed on the sequence-form LP: {res.message}")
    return np.clip(res.x[:n], 0.0, None), float(-res.fun)


def kuhn_sequence_form(
    epsilon: float = 0.1, alpha: float = 0.25, comparator_form: str = "behavioural"
) -> KuhnSequenceForm:
    """Kuhn poker in sequence form, both seats, with Alice's behavioural comparators.

    Source: Kuhn 1950 (ante 1, one bet of 1, cards J < Q < K); von Stengel 1996.

    Parameters
    ----------
    epsilon : float, default=0.1
        Perturbation of Kuhn's Nash strategy at information sets where it has a zero (see
        :func:`perturb_behaviour`), in [0, 1); 0 keeps Nash (no full support).
    alpha : float, default=0.25
        Player 1's equilibrium parameter (see :func:`kuhn_nash_behaviour`).
    comparator_form : str, default="behavioural"
        Recorded on the result (see :class:`KuhnSequenceForm`).

    Returns
    -------
    KuhnSequenceForm
        Seat 0: Alice is player 1 (value -1/36 payoff units = -1/18 chips); seat 1: Alice
        is player 2 (value +1/36).
    """
    t1, t2 = _kuhn_treeplexes()
    terminals1 = _kuhn_terminals()
    M1 = np.zeros((12, 12))
    for rows in terminals1:
        for s1, s2, pay in rows:
            M1[int(s1), int(s2)] += pay / 6.0
    pi1, pi2 = kuhn_nash_behaviour(alpha)
    value = float(t1.reach(pi1) @ M1 @ t2.reach(pi2))
    plans1, plans2 = kuhn_normal_form_plans()
    terminals2 = [rows[:, [1, 0, 2]] * np.array([1.0, 1.0, -1.0]) for rows in terminals1]
    seats = (
        ExtensiveSeat(
            alice=t1,
            opponent=t2,
            payoff=M1,
            terminals=tuple(terminals1),
            comparator=perturb_behaviour(t1, pi1, epsilon),
            opponent_nash=pi2,
            value=value,
            alice_plans=plans1,
            opponent_plans=plans2,
        ),
        ExtensiveSeat(
            alice=t2,
            opponent=t1,
            payoff=-M1.T,
            terminals=tuple(terminals2),
            comparator=perturb_behaviour(t2, pi2, epsilon),
            opponent_nash=pi1,
            value=-value,
            alice_plans=plans2,
            opponent_plans=plans1,
        ),
    )
    return KuhnSequenceForm(seats=seats, epsilon=epsilon, comparator_form=comparator_form)


def normal_form_image(tree: Treeplex, pi: np.ndarray, plans: np.ndarray) -> np.ndarray:
    """The mixed strategy over reduced pure plans equivalent to behavioural ``pi`` (Kuhn 1953).

    Parameters
    ----------
    plans : ndarray, shape (n_plans, n_sequences)
        Reduced pure plans (rows of :meth:`Treeplex.pure_plans`).

    Returns
    -------
    ndarray of float, shape (n_plans,)
        Probability of each plan: the product of pi over the plan's chosen sequences.
    """
    logs = np.log(np.clip(pi, 1e-300, None))
    probs = np.exp(plans @ logs)
    probs[(plans * (pi <= 0)).sum(axis=1) > 0] = 0.0
    return probs / probs.sum()


def kuhn_normal_form_plans() -> tuple[np.ndarray, np.ndarray]:
    """Realisation plans of the reduced pure strategies of :func:`games.kuhn_seat_payoffs`.

    Returns
    -------
    plans1 : ndarray of float, shape (27, 12)
        Row i is player 1's strategy i (choice per card J, Q, K: bet / check-fold /
        check-call) as a 0/1 realisation plan.
    plans2 : ndarray of float, shape (64, 12)
        Row j is player 2's strategy j (per card: fold-check, call-check, fold-bet, call-bet).
    """
    plans1 = np.zeros((27, 12))
    for i, choice in enumerate(itertools.product(range(3), repeat=3)):
        for c, s in enumerate(choice):
            plans1[i, [4 * c + 1] if s == 0 else [4 * c, 4 * c + 1 + s]] = 1.0
    plans2 = np.zeros((64, 12))
    for j, choice in enumerate(itertools.product(range(4), repeat=3)):
        for c, s in enumerate(choice):
            plans2[j, [4 * c + s % 2, 4 * c + (3 if s >= 2 else 2)]] = 1.0
    return plans1, plans2
