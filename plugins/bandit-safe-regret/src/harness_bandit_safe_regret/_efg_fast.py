"""Compiled (numba) simulator of sequence-form phased aggression, with the certified phase test.

Source: Müller et al., ICML 2025 (arXiv 2502.11673), extensive-form phased aggression as
reconstructed in docs/papers/bandit-safe-regret.md §2.2-2.3; Kozuno et al., NeurIPS 2021
(IXOMD); Freedman, "On tail probabilities for martingales", Ann. Probab. 1975 (the
concentration inequality of the certified phase test). The certified test is this
benchmark's design, derived below; it is *not* in the reconstructed paper notes.

The kernel plays one seed; :func:`simulate_batch` runs several seeds (about 1-2 µs per round
per seed once compiled, against about 45 µs per round for the pure-Python reference
:func:`harness_bandit_safe_regret._sequence_form.simulate_sequence_form`). Both consume the
same random streams (``numpy.random.default_rng(seed)``: deals per seat, Alice's uniforms per
information set, the opponent's uniforms), so for ``test="paper"`` the kernel reproduces the
reference exactly against the ``fixed`` and ``minimax`` opponents (tests).

**The certified phase test** (``test="freedman"``). Alice's played plan in phase k is
x_p = (1 - a) x^c + a x^A (a = alpha_k). After a round ending at her terminal sequence s with
loss l in [0, 1] she forms

    D = l * (x^c(s) / x_p(s) - 1)          (loss units)

the importance-weighted comparator loss minus the loss she actually suffered. Its conditional
mean is <x^c - x_p, l_t> = a <x^c - x^A, l_t>: the gain of the played plan over mu_c in that
round, i.e. minus the round's regret to mu_c. Two bounds, both free of delta = min x^c:

1. Range. Mixing realisation plans is linear, so x_p(s) >= (1 - a) x^c(s) on every sequence:
   x^c(s) / x_p(s) <= 1 / (1 - a), hence D <= a / (1 - a); and -E[D] = a <x^A - x^c, l> <= a.
   The centred increment X = D - E[D] is at most b = a / (1 - a) + a.
2. Variance. With y the opponent's realisation plan and q_y(s) = sum over terminals z that end
   at Alice's sequence s of chance(z) y(opponent's sequence of z) (the probability of ending at
   s when Alice plays s's actions), E[D^2] = sum_s q_y(s) l^2 (x^c(s) - x_p(s))^2 / x_p(s)
   <= a^2 sum_s q_y(s) (x^c(s) - x^A(s))^2 / x_p(s) =: a^2 w_t . q_y.
   This is linear in y, so the largest value over the opponent's *pure* plans is a predictable
   bound v_t >= Var_t(D) whatever the opponent does. (Crude bounds that also hold:
   v_t <= a / (1 - a), from (x^c - x^A)^2 / x_p <= x^c / (1 - a) + x^A / a; the hint
   "second moment of the comparator estimate <= 1 / (1 - a)" bounds E[(l x^c / x_p)^2] but
   not the learner's part; both are far looser than the exact maximum.)

Freedman's inequality: for martingale differences X_t <= b with sum_t Var_t(X_t) <= V_n,
P(exists n: S_n >= a_n and V_n <= v) <= exp(-a^2 / (2 (v + b a / 3))). Stitching over the
variance levels v_j = b^2 2^j (j >= 0) with failure p 6 / (pi^2 (j + 1)^2) and over phases k
with p 6 / (pi^2 k^2), the width

    W_k(V) = sqrt(2 v_j L) + 2 b L / 3,   L = ln(pi^4 k^2 (j + 1)^2 / (36 p)),
    v_j = the smallest level >= V

gives, with probability >= 1 - p simultaneously for every phase and round,
sum_{t in phase} E_t[D_t] >= G_k - W_k(V_k) (G_k: the phase's sum of D, V_k: its sum of v_t).
(a = sqrt(2 v L) + 2 b L / 3 satisfies a^2 >= 2 (v + b a / 3) L.) The phase ends when
G_k - W_k(V_k) >= alpha_k R, i.e. when alpha_k R = 2^(k-1) loss units of gain over mu_c are
*certified* banked, the amount the paper's test banks (docs/papers/bandit-safe-regret.md §2.1:
each finished phase banks >= 2^(k-1), the open phase costs <= alpha_k R).

**The budget guard** (``guard >= 0``, loss units). Before each round the kernel picks the
largest a_t in alpha_k 2^-j (j < 40, else 0 = play mu_c) such that the worst next increment,
D >= -l (1 - x^c(s) / x_p(s)) >= -max_s (1 - x^c(s) / x_p(s))^+, keeps the running total
G_t = sum_{u <= t} D_u >= -guard (1 + t / T). So G_T >= -2 guard on every path. Since a_t is
predictable and E_t[D_t] = <x^c - x_p, l_t>, the tower rule gives
E[Reg_T(mu_c)] = E[sum_t <x_p - x^c, l_t>] = -E[G_T] <= 2 guard loss units = 4 guard payoff
units, for any learner and any opponent. The slack guard t / T lets the algorithm keep
risking a little once the budget is spent (without it, G stuck at -guard blocks every
a_t > 0 for ever). The bound holds in expectation, not per seed.

The paper's test (``test="paper"``): S_c - min over pure plans of S >= 2 R, with the same
own-reach estimates; the minimum over 27 / 64 plans of estimates whose variance is up to
1 / ((1 - a) delta) per round is biased downwards, so at small c0 it fires on noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FastConfig",
    "freedman_width",
    "opponent_mode",
    "seat_arrays",
    "simulate_batch",
    "variance_bound",
]

TEST_NONE, TEST_PAPER, TEST_FREEDMAN = 0, 1, 2
OPP_BEST_RESPONSE, OPP_FIXED, OPP_STATIONARY = 0, 1, 2
OPP_FICTITIOUS, OPP_NO_REGRET, OPP_BAIT = 3, 4, 5


@dataclass(frozen=True)
class FastConfig:
    """Agent settings of the compiled simulator.

    Attributes
    ----------
    alpha0 : float
        Alpha of the first phase (1 / R; 1 for the learner alone; 0 when delta = 0).
    R : float
        Phase scale (loss units); ``math.inf`` disables the phase test.
    test : {"none", "paper", "freedman"}
    reset : bool
        Reset the learner at each phase switch.
    eta, gamma : tuple of float, one per seat
        IXOMD learning rate and implicit exploration.
    use_weights : bool
        False: the learner ignores importance weights (a deliberately wrong variant).
    confidence : float
        Failure probability p of the certified test, in (0, 1).
    variance_scale : float
        Multiplies the predictable variance bound v_t (1 is the derived bound; < 1 is a
        deliberately wrong, too-small bound used by the tests).
    guard : float
        Budget of the guard in loss units (see
        :class:`harness_bandit_safe_regret.methods.PhasedAggressionSequenceForm`); -1: off.
    variance : {"exact", "crude"}
        ``exact``: v_t = a^2 max_y w_t . q_y; ``crude``: the a-priori bound a / (1 - a)
        (valid but loose: a wrong variant for the switch-time test).
    horizon : int
        T used by the guard's allowance -guard (1 + t / T); 0: ``data.T``.
    """

    alpha0: float
    R: float
    test: str
    reset: bool
    eta: tuple[float, ...]
    gamma: tuple[float, ...]
    use_weights: bool = True
    confidence: float = 0.01
    variance_scale: float = 1.0
    guard: float = -1.0
    variance: str = "exact"
    horizon: int = 0


def _pad(arrays, shape, fill=0.0, dtype=np.float64):
    out = np.full(shape, fill, dtype=dtype)
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        out[(i, *tuple(slice(0, n) for n in a.shape))] = a
    return out


def seat_arrays(data) -> dict[str, np.ndarray]:
    """Padded arrays of both seats for the kernel (Alice's treeplex, payoffs, terminals).

    Parameters
    ----------
    data : GameData
        An extensive-form game (``data.extensive`` with ``seats``).

    Returns
    -------
    dict of str to ndarray
        Keys: inf_parent, inf_nch, inf_ch (Alice's information sets), seq_inf, xc,
        my_pure (n_seats, n_seq, n_opp_plans), my_nash, opp_chosen, rows (per deal: Alice's
        last sequence, opponent's last sequence, payoff), n_rows, qb (the opponent-and-chance
        reach q_y(s) of every terminal sequence s for each opponent pure plan y),
        plan_cols (Alice's pure plans, transposed), n_plans, nash_cdf, fixed_b, n_opp, n_deals.
    """
    from harness_bandit_safe_regret._extensive import normal_form_image

    seats = data.extensive.seats
    n = len(seats)
    n_inf = max(len(s.alice.infosets) for s in seats)
    n_seq = max(s.alice.n_sequences for s in seats)
    n_act = max(len(c) for s in seats for c in s.alice.children)
    n_opp = max(len(s.opponent_plans) for s in seats)
    n_opp_seq = max(s.opponent.n_sequences for s in seats)
    n_plans = max(len(s.alice_plans) for s in seats)
    n_deals = max(len(s.terminals) for s in seats)
    n_rows = max(len(r) for s in seats for r in s.terminals)
    out = {
        "inf_parent": _pad([s.alice.parent for s in seats], (n, n_inf), -1, np.int64),
        "inf_nch": _pad(
            [[len(c) for c in s.alice.children] for s in seats], (n, n_inf), 0, np.int64
        ),
        "inf_ch": np.full((n, n_inf, n_act), -1, dtype=np.int64),
        "seq_inf": _pad([s.alice.infoset_of for s in seats], (n, n_seq), -1, np.int64),
        "xc": _pad([s.alice.reach(s.comparator) for s in seats], (n, n_seq), 1.0),
        "my_pure": np.zeros((n, n_seq, n_opp)),
        "my_nash": np.zeros((n, n_seq)),
        "opp_chosen": np.zeros((n, n_opp, n_opp_seq), dtype=np.bool_),
        "rows": np.zeros((n, n_deals, n_rows, 3)),
        "n_rows": np.zeros((n, n_deals), dtype=np.int64),
        "qb": np.zeros((n, n_opp, n_seq)),
        "plan_cols": np.zeros((n, n_seq, n_plans)),
        "n_plans": np.array([len(s.alice_plans) for s in seats], dtype=np.int64),
        "nash_cdf": np.ones((n, n_opp)),
        "fixed_b": np.zeros(n, dtype=np.int64),
        "n_opp": np.array([len(s.opponent_plans) for s in seats], dtype=np.int64),
        "n_deals": np.array([len(s.terminals) for s in seats], dtype=np.int64),
        "n_inf": np.array([len(s.alice.infosets) for s in seats], dtype=np.int64),
        "n_seq": np.array([s.alice.n_sequences for s in seats], dtype=np.int64),
        "fp0": np.zeros((n, n_opp)),
        "nr_eta": np.zeros(n),
        "switch_tv": float(data.switch_tv),
    }
    for k, s in enumerate(seats):
        for i, c in enumerate(s.alice.children):
            out["inf_ch"][k, i, : len(c)] = c
        plans = s.opponent_plans
        P = len(plans)
        out["my_pure"][k, : s.alice.n_sequences, :P] = s.payoff @ plans.T
        out["my_nash"][k, : s.alice.n_sequences] = s.payoff @ s.opponent.reach(s.opponent_nash)
        out["opp_chosen"][k, :P, : s.opponent.n_sequences] = plans > 0.5
        for d, rows in enumerate(s.terminals):
            out["rows"][k, d, : len(rows)] = rows
            out["n_rows"][k, d] = len(rows)
            for a, b, _v in rows:
                if a < 0:
                    continue
                reach = np.ones(P) if b < 0 else plans[:, int(b)]
                out["qb"][k, :P, int(a)] += reach / len(s.terminals)
        out["plan_cols"][k, : s.alice.n_sequences, : len(s.alice_plans)] = s.alice_plans.T
        fixed = np.asarray(data.opponent_strategy[k], dtype=float)
        if fixed.shape != (P,):
            raise ValueError(f"opponent_strategy of seat {k} must have {P} entries")
        if _stationary_mixed(data):
            probs = fixed
            out["my_nash"][k, : s.alice.n_sequences] = s.payoff @ (fixed @ plans)
        else:
            probs = normal_form_image(s.opponent, s.opponent_nash, plans)
        out["nash_cdf"][k, :P] = np.cumsum(probs)
        out["fixed_b"][k] = int(fixed.argmax())
        uniform = s.alice.reach(s.alice.uniform())
        out["fp0"][k, :P] = uniform @ out["my_pure"][k, : s.alice.n_sequences, :P]
        rounds = max(1, len(range(k, data.T, n)))
        out["nr_eta"][k] = math.sqrt(2.0 * math.log(P) / (P * rounds))
    return out


def _stationary_mixed(data) -> bool:
    """Whether the opponent samples a fixed mixed strategy other than its Nash strategy
    (``random-fixed``, or ``fixed`` with a mixed ``opponent_strategy``)."""
    if data.opponent == "random-fixed":
        return True
    return data.opponent == "fixed" and any(
        np.asarray(x).max() < 1.0 - 1e-12 for x in data.opponent_strategy
    )


def opponent_mode(data) -> int:
    """The kernel's code for ``data.opponent`` (see :func:`simulate_batch`)."""
    if _stationary_mixed(data) or data.opponent == "minimax":
        return OPP_STATIONARY
    modes = {
        "best-response": OPP_BEST_RESPONSE,
        "fixed": OPP_FIXED,
        "fictitious-play": OPP_FICTITIOUS,
        "no-regret": OPP_NO_REGRET,
        "bait-and-switch": OPP_BAIT,
    }
    if data.opponent not in modes:
        raise ValueError(f"unknown opponent {data.opponent!r}")
    return modes[data.opponent]


def freedman_width(V: float, b: float, k: int, p: float) -> float:
    """Time-uniform Freedman width W_k(V) of the certified phase test (module docstring).

    Parameters
    ----------
    V : float
        Sum over the phase of the predictable variance bounds v_t (loss units squared), >= 0.
    b : float
        Upper bound of the centred increments, > 0.
    k : int
        Phase number, >= 1 (union bound over phases).
    p : float
        Failure probability, in (0, 1).

    Returns
    -------
    float
        sqrt(2 v_j L) + 2 b L / 3 with v_j = b^2 2^j the smallest level >= V and
        L = ln(pi^4 k^2 (j + 1)^2 / (36 p)).
    """
    return _width(V, b, k, p)


def _width(V, b, k, p):
    v0 = b * b
    j = 0
    if v0 < V:
        j = math.ceil(math.log2(V / v0))
    v = v0 * 2.0**j
    L = math.log(math.pi**4 * k * k * (j + 1) * (j + 1) / (36.0 * p))
    return math.sqrt(2.0 * v * L) + 2.0 * b * L / 3.0


def _variance(xc, xa, xp, qb, n_opp, n_seq, alpha):
    """a^2 max over opponent pure plans y of sum_s q_y(s) (x^c(s) - x^A(s))^2 / x_p(s)."""
    best = 0.0
    for b in range(n_opp):
        acc = 0.0
        for s in range(n_seq):
            q = qb[b, s]
            if q > 0.0 and xp[s] > 0.0:
                d = xc[s] - xa[s]
                acc += q * d * d / xp[s]
        if acc > best:
            best = acc
    return alpha * alpha * best


def variance_bound(
    data, seat: int, xa: np.ndarray, alpha: float, arrays: dict | None = None
) -> float:
    """The predictable bound v_t >= Var_t(D_t) of the certified test for learner plan ``xa``.

    Parameters
    ----------
    data : GameData
    seat : int
    xa : ndarray of float, shape (n_sequences,)
        The learner's realisation plan x^A.
    alpha : float
        Mixing weight, in [0, 1).
    arrays : dict, optional
        :func:`seat_arrays` of ``data`` (computed when omitted).

    Returns
    -------
    float
        alpha^2 max_y sum_s q_y(s) (x^c(s) - x^A(s))^2 / x_p(s), loss units squared.
    """
    arrays = arrays or seat_arrays(data)
    n_seq = int(arrays["n_seq"][seat])
    xc = arrays["xc"][seat, :n_seq]
    xp = (1.0 - alpha) * xc + alpha * np.asarray(xa)
    return _variance(
        xc, np.asarray(xa), xp, arrays["qb"][seat], int(arrays["n_opp"][seat]), n_seq, alpha
    )


def _kernel(
    T, n_seats, opp_mode,
    inf_parent, inf_nch, inf_ch, seq_inf, xc_all, my_pure, my_nash, opp_chosen, rows, n_rows,
    qb, plan_cols, n_plans, nash_cdf, fixed_b, n_opp, n_inf, n_seq, fp0, nr_eta, switch_tv,
    alpha0, R, test, reset, eta, gamma, use_weights, p_conf, var_scale, guard, var_mode,
    horizon, deals, u_alice, u_bob,
    expected, realised, alpha_out, b_exp, b_samp, switches,
):  # fmt: skip
    n_seq_max = xc_all.shape[1]
    pi = np.zeros((n_seats, n_seq_max))
    for s in range(n_seats):
        for i in range(n_inf[s]):
            for a in range(inf_nch[s, i]):
                pi[s, inf_ch[s, i, a]] = 1.0 / inf_nch[s, i]
    xa = np.zeros(n_seq_max)
    xp = np.zeros(n_seq_max)
    chosen = np.zeros(n_seq_max, dtype=np.bool_)
    plan_vals = np.zeros((n_seats, plan_cols.shape[2]))
    mins = np.zeros(n_seats)
    alpha = alpha0
    k = 1
    Sc = 0.0
    G = 0.0
    V = 0.0
    G_all = 0.0
    n_switch = 0
    testing = test != 0 and np.inf > R and alpha < 1.0
    # opponent state: fictitious play's cumulative values of each pure plan (Alice's payoff
    # against her sampled plans, starting from her uniform plan), EXP3's log-weights and
    # distribution over pure plans, bait-and-switch's flag
    fp = fp0.copy()
    logw = np.zeros(fp0.shape)
    nu = np.zeros(fp0.shape)
    for s in range(n_seats):
        for j in range(n_opp[s]):
            nu[s, j] = 1.0 / n_opp[s]
    switched = False
    for t in range(T):
        s = t % n_seats
        ns = n_seq[s]
        # learner's realisation plan and the played mixture
        for i in range(n_inf[s]):
            p = inf_parent[s, i]
            base = 1.0 if p < 0 else xa[p]
            for a in range(inf_nch[s, i]):
                c = inf_ch[s, i, a]
                xa[c] = base * pi[s, c]
        a_t = alpha
        if alpha >= 1.0:
            for q in range(ns):
                xp[q] = xa[q]
        else:
            for q in range(ns):
                xp[q] = (1.0 - alpha) * xc_all[s, q] + alpha * xa[q]
        if guard >= 0.0 and alpha > 0.0:
            # budget guard: the largest a_t in alpha * 2^-j (j < 40) whose worst next D,
            # -max_s (1 - x^c(s) / x_p(s))^+, keeps G_all >= -guard (1 + t / T); else
            # a_t = 0 (play mu_c)
            a_t = 0.0
            trial = alpha
            for _ in range(40):
                worst = 0.0
                for q in range(ns):
                    mix = (1.0 - trial) * xc_all[s, q] + trial * xa[q]
                    w = 1.0 - xc_all[s, q] / mix if mix > 0.0 else 1.0
                    if w > worst:
                        worst = w
                if G_all - worst >= -guard * (1.0 + (t + 1.0) / horizon):
                    a_t = trial
                    break
                trial *= 0.5
            for q in range(ns):
                xp[q] = (1.0 - a_t) * xc_all[s, q] + a_t * xa[q]
        v_t = 0.0
        if testing and test == 2 and a_t > 0.0:
            if var_mode == 0:
                v_t = var_scale * _variance(xc_all[s], xa, xp, qb[s], n_opp[s], ns, a_t)
            else:
                v_t = var_scale * a_t / (1.0 - a_t)
        # opponent
        P = n_opp[s]
        mode = opp_mode
        if opp_mode == 5:
            # bait-and-switch: always-bet/call until max_s |x_p(s) - x^c(s)| > switch_tv,
            # then the clairvoyant best response for ever
            if not switched:
                for q in range(ns):
                    if abs(xp[q] - xc_all[s, q]) > switch_tv:
                        switched = True
                        break
            mode = 0 if switched else 1
        if mode == 3:
            b = 0
            for j in range(1, P):
                if fp[s, j] < fp[s, b]:
                    b = j
            mode = 1
        elif mode == 4:
            u = u_bob[t]
            acc = 0.0
            b = P - 1
            for j in range(P):
                acc += nu[s, j]
                if u < acc:
                    b = j
                    break
            mode = 1
        elif mode == 1:
            b = fixed_b[s]
        if mode == 0:
            b = 0
            best = np.inf
            for j in range(P):
                acc = 0.0
                for q in range(ns):
                    acc += xp[q] * my_pure[s, q, j]
                if acc < best:
                    best = acc
                    b = j
            col = b
            v = best
        elif mode == 1:
            col = b
            v = 0.0
            for q in range(ns):
                v += xp[q] * my_pure[s, q, b]
        else:
            u = u_bob[t] * nash_cdf[s, P - 1]
            b = P - 1
            for j in range(P):
                if u < nash_cdf[s, j]:
                    b = j
                    break
            col = P
            v = 0.0
            for q in range(ns):
                v += xp[q] * my_nash[s, q]
        # Alice samples one action per reached information set from the behaviour of x_p
        for q in range(ns):
            chosen[q] = False
        for i in range(n_inf[s]):
            p = inf_parent[s, i]
            if p >= 0 and not chosen[p]:
                continue
            base = 1.0 if p < 0 else xp[p]
            r = u_alice[t, i] * base
            acc = 0.0
            nch = inf_nch[s, i]
            pick = inf_ch[s, i, nch - 1]
            for a in range(nch):
                c = inf_ch[s, i, a]
                acc += xp[c]
                if r < acc:
                    pick = c
                    break
            chosen[pick] = True
        d = deals[s, t]
        last = -1
        payoff = 0.0
        for r_ in range(n_rows[s, d]):
            aa = int(rows[s, d, r_, 0])
            bb = int(rows[s, d, r_, 1])
            if (aa < 0 or chosen[aa]) and (bb < 0 or opp_chosen[s, b, bb]):
                last = aa
                payoff = rows[s, d, r_, 2]
                break
        loss = (1.0 - payoff) * 0.5
        if opp_mode == 3:
            for j in range(P):
                for q in range(ns):
                    if chosen[q]:
                        fp[s, j] += my_pure[s, q, j]
        elif opp_mode == 4:
            # EXP3 on the opponent's loss (1 + Alice's payoff) / 2 over its pure plans
            logw[s, b] -= nr_eta[s] * (1.0 + payoff) * 0.5 / nu[s, b]
            top = logw[s, 0]
            for j in range(1, P):
                top = max(top, logw[s, j])
            z = 0.0
            for j in range(P):
                nu[s, j] = math.exp(logw[s, j] - top)
                z += nu[s, j]
            for j in range(P):
                nu[s, j] /= z
        # IXOMD update along Alice's trajectory (bottom-up), loss / (x_p(last) + gamma)
        if last >= 0:
            prob = xp[last]
            L = loss / (prob + gamma[s]) if use_weights else loss
            seq = last
            while seq >= 0:
                inf = seq_inf[s, seq]
                pi[s, seq] *= math.exp(-eta[s] * L)
                z = 0.0
                for a in range(inf_nch[s, inf]):
                    z += pi[s, inf_ch[s, inf, a]]
                for a in range(inf_nch[s, inf]):
                    pi[s, inf_ch[s, inf, a]] /= z
                L = -math.log(z) / eta[s]
                seq = inf_parent[s, inf]
        if last >= 0 and a_t > 0.0:
            G_all += loss * (xc_all[s, last] / xp[last] - 1.0)
        # phase statistics
        if testing and last >= 0:
            switch = False
            if test == 1:
                est = loss / xp[last]
                Sc += xc_all[s, last] * est
                m = np.inf
                for j in range(n_plans[s]):
                    plan_vals[s, j] += plan_cols[s, last, j] * est
                    if plan_vals[s, j] < m:
                        m = plan_vals[s, j]
                mins[s] = m
                tot = 0.0
                for j in range(n_seats):
                    tot += mins[j]
                switch = Sc - tot >= 2.0 * R
            else:
                G += loss * (xc_all[s, last] / xp[last] - 1.0)
                V += v_t
                bnd = alpha / (1.0 - alpha) + alpha
                switch = G - _width(V, bnd, k, p_conf) >= alpha * R
            if switch:
                k += 1
                alpha = min(1.0, 2.0 ** (k - 1) / R)
                switches[n_switch] = t + 1
                n_switch += 1
                Sc = 0.0
                G = 0.0
                V = 0.0
                for j in range(n_seats):
                    mins[j] = 0.0
                    for jj in range(plan_vals.shape[1]):
                        plan_vals[j, jj] = 0.0
                if reset:
                    for ss in range(n_seats):
                        for i in range(n_inf[ss]):
                            for a in range(inf_nch[ss, i]):
                                pi[ss, inf_ch[ss, i, a]] = 1.0 / inf_nch[ss, i]
                if alpha >= 1.0:
                    testing = False
        expected[t] = v
        realised[t] = payoff
        alpha_out[t] = a_t if guard >= 0.0 else alpha
        b_exp[t] = col
        b_samp[t] = b
    return n_switch


_COMPILED = None


def _compiled():
    """The kernel compiled by numba (on first use; cached on disk)."""
    global _COMPILED
    if _COMPILED is None:
        import numba

        global _width, _variance
        _width = numba.njit(cache=True)(_width)
        _variance = numba.njit(cache=True)(_variance)
        _COMPILED = numba.njit(cache=True)(_kernel)
    return _COMPILED


def simulate_batch(data, config: FastConfig, seeds, arrays: dict | None = None) -> list:
    """Simulate ``data.T`` rounds for each seed with the compiled kernel.

    Parameters
    ----------
    data : GameData
        Extensive-form game, any opponent: ``best-response`` (clairvoyant to x_p),
        ``fixed`` (pure: that plan; mixed: sampled), ``random-fixed`` and ``minimax``
        (a stationary mixed strategy, sampled; expected values use its realisation plan),
        ``fictitious-play`` (the pure plan that minimises Alice's payoff against her sampled
        plans so far, starting from her uniform plan), ``no-regret`` (EXP3 over the
        opponent's pure plans, eta = sqrt(2 ln P / (P T_seat)); expected values use its sampled
        plan) and ``bait-and-switch`` (``fixed`` until max_s |x_p(s) - x^c(s)| > switch_tv,
        then ``best-response``).
    config : FastConfig
    seeds : iterable of int
    arrays : dict, optional
        :func:`seat_arrays` of ``data`` (reused across calls).

    Returns
    -------
    list of PlayOutput
        One per seed, as :func:`harness_bandit_safe_regret._sequence_form.simulate_sequence_form`
        returns (``alpha`` is alpha_k after round t's update).

    Raises
    ------
    ValueError
        On an unknown opponent or test.
    """
    from harness_bandit_safe_regret._sequence_form import _sequence_form_values

    mode = opponent_mode(data)
    tests = {"none": TEST_NONE, "paper": TEST_PAPER, "freedman": TEST_FREEDMAN}
    if config.test not in tests:
        raise ValueError(f"test must be one of {sorted(tests)}, got {config.test!r}")
    if config.variance not in ("exact", "crude"):
        raise ValueError(f"variance must be 'exact' or 'crude', got {config.variance!r}")
    if not 0.0 < config.confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {config.confidence}")
    arrays = arrays or seat_arrays(data)
    kernel = _compiled()
    seats = data.extensive.seats
    n_seats, T = len(seats), data.T
    MY = [
        np.hstack(
            [s.payoff @ s.opponent_plans.T, arrays["my_nash"][k, : s.alice.n_sequences, None]]
        )
        for k, s in enumerate(seats)
    ]
    view = _AgentView(
        xc=[s.alice.reach(s.comparator) for s in seats], plans=[s.alice_plans for s in seats]
    )
    outputs = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        deals = np.array([rng.integers(int(n), size=T) for n in arrays["n_deals"]])
        u_alice = rng.random((T, int(arrays["n_inf"].max())))
        u_bob = rng.random(T)
        expected, realised, alpha = np.empty(T), np.empty(T), np.empty(T)
        b_exp, b_samp = np.empty(T, dtype=np.int64), np.empty(T, dtype=np.int64)
        switches = np.zeros(256, dtype=np.int64)
        n_switch = kernel(
            T, n_seats, mode,
            arrays["inf_parent"], arrays["inf_nch"], arrays["inf_ch"], arrays["seq_inf"],
            arrays["xc"], arrays["my_pure"], arrays["my_nash"], arrays["opp_chosen"],
            arrays["rows"], arrays["n_rows"], arrays["qb"], arrays["plan_cols"],
            arrays["n_plans"], arrays["nash_cdf"], arrays["fixed_b"], arrays["n_opp"],
            arrays["n_inf"], arrays["n_seq"], arrays["fp0"], arrays["nr_eta"],
            arrays["switch_tv"],
            float(config.alpha0), float(config.R), tests[config.test], bool(config.reset),
            np.asarray(config.eta, dtype=np.float64), np.asarray(config.gamma, dtype=np.float64),
            bool(config.use_weights), float(config.confidence), float(config.variance_scale),
            float(config.guard), {"exact": 0, "crude": 1}[config.variance],
            int(config.horizon or T),
            deals, u_alice, u_bob, expected, realised, alpha, b_exp, b_samp, switches,
        )  # fmt: skip
        view.switches = switches[:n_switch].tolist()
        outputs.append(
            _sequence_form_values(data, view, MY, b_exp, b_samp, expected, realised, alpha, 65_536)
        )
    return outputs


@dataclass
class _AgentView:
    xc: list
    plans: list
    switches: list | None = None
