"""Checks that catch a wrong learner: the importance weight pinned to the *played* probability
p_t (not the learner's q_t) in normal and sequence form, and a safety check that reaches later
phases. Each wrong variant named in a comment was run by breaking the code by hand and fails
the test it names (README, "Tests")."""

import math

import numpy as np
import pytest
from harness_bandit_safe_regret import _efg_fast as efg_fast
from harness_bandit_safe_regret._agents import PhasedAggression
from harness_bandit_safe_regret._sequence_form import (
    SequenceFormPhasedAggression,
    simulate_sequence_form,
)
from harness_bandit_safe_regret._simulate import simulate
from harness_bandit_safe_regret.claims import OPPONENTS
from harness_bandit_safe_regret.datasets import KuhnPoker, RockPaperScissors, WeightedRps
from harness_bandit_safe_regret.methods import (
    PhasedAggressionBandit,
    PhasedAggressionSequenceForm,
    SequenceFormIxomd,
)


def _kuhn(T, opponent, seed=0):
    params = KuhnPoker.Params(T=T, opponent=opponent, comparator_form="behavioural")
    return KuhnPoker().load(params, seed)


def test_normal_form_update_divides_by_the_played_probability():
    # Weighted RPS: mu_c = (0.4, 0.4, 0.2) and the fresh learner's q = (1/3, 1/3, 1/3), so
    # with alpha = 0.5 the played p(Rock) = 0.3667 differs from q(Rock) = 0.3333. One round
    # with loss 1 on Rock must give w(Rock) = exp(-eta / (p(Rock) + gamma)), the others 1.
    # Fails: the estimate divided by q_t(a) (the pitfall of the notes, §7); no division
    # (ignores weights); exp(+eta ...) (wrong sign); no update (frozen learner).
    data = WeightedRps().load(WeightedRps.Params(T=100), 0)
    agent = PhasedAggression(data, "exp3-ix", "bandit", fixed_alpha=0.5)
    learner = agent.learners[0]
    p = agent.play(0).copy()
    q = learner.dist().copy()
    assert abs(p[0] - q[0]) > 0.03
    agent.observe(0, 0, payoff=-1.0, b=1)  # loss (1 - payoff) / 2 = 1
    w = np.array([math.exp(-learner.eta / (p[0] + learner.gamma)), 1.0, 1.0])
    np.testing.assert_allclose(learner.dist(), w / w.sum(), rtol=1e-12)
    # a second round compounds on the first (the learner keeps what it learned)
    p = agent.play(0).copy()
    agent.observe(0, 0, payoff=-1.0, b=1)
    w[0] *= math.exp(-learner.eta / (p[0] + learner.gamma))
    np.testing.assert_allclose(learner.dist(), w / w.sum(), rtol=1e-12)


def test_sequence_form_update_divides_by_the_mixture_reach():
    # Kuhn, seat 0, alpha = 0.5: at Q's check-bet-call sequence (7) the mixture reach
    # x_p = 0.5 x^c + 0.5 x^A differs from the learner's x^A. After a round ending there
    # with loss 1, the leaf information set's behaviour must be pi(7) exp(-eta L) / Z with
    # L = 1 / (x_p(7) + gamma), its sibling pi / Z. Fails: dividing by x^A(7) (the q_t
    # variant); no division; the wrong sign; no update.
    data = _kuhn(100, "fixed")
    agent = SequenceFormPhasedAggression(data.extensive.seats, data.T, fixed_alpha=0.5)
    learner = agent.learners[0]
    last = 7
    before = list(learner.pi)
    xa = learner.reach()
    x = agent.play(0)
    assert abs(x[last] - xa[last]) > 0.01
    agent.observe(0, last, payoff=-1.0)
    tree = data.extensive.seats[0].alice
    siblings = list(tree.children[int(tree.infoset_of[last])])
    factor = {s: 1.0 for s in siblings}
    factor[last] = math.exp(-learner.eta / (x[last] + learner.gamma))
    z = sum(before[s] * factor[s] for s in siblings)
    for s in siblings:
        assert learner.pi[s] == pytest.approx(before[s] * factor[s] / z, rel=1e-12)


@pytest.mark.parametrize("opponent", ["fixed", "best-response"])
def test_compiled_kernel_learns_like_the_reference_at_alpha_one_half(opponent):
    # The kernel's own IXOMD update (the method's) against the Python reference, which the
    # test above pins: alpha fixed at 0.5, 300 rounds, exact. Fails: the kernel dividing
    # by x^A(last) instead of x_p(last); the wrong sign; a frozen learner.
    data = _kuhn(300, opponent)
    agent = SequenceFormPhasedAggression(data.extensive.seats, data.T, fixed_alpha=0.5)
    fast = efg_fast.simulate_batch(data, agent.fast_config(), [3])[0]
    slow = simulate_sequence_form(data, agent, 3)
    np.testing.assert_allclose(fast.expected_payoff, slow.expected_payoff, atol=1e-12)
    np.testing.assert_allclose(fast.realised_payoff, slow.realised_payoff, atol=1e-12)


def test_safety_holds_through_later_phases_against_bait_and_switch():
    # RPS, c0 = 1, T = 2e4 and 4e4: bait-and-switch plays Rock until Alice's p_t leaves
    # mu_c by more than 0.1 in total variation, then best-responds. Phased aggression must
    # reach later phases (>= 2 switches) and keep Reg(mu_c) below the claim's margin of 2
    # at both horizons. Measured (seeds 0, 1): 6 switches, Reg(mu_c) -157 .. -138.
    # Fails: the learner's estimate divided by q_t(a) instead of p_t(a) (Reg(mu_c) 54-122);
    # the wrong sign (11,750-27,800). A frozen learner passes (p_t = mu_c, the bait never
    # switches, Reg = 0: safe by doing nothing); the exploitation checks catch it.
    for T in (20_000, 40_000):
        data = RockPaperScissors().load(
            RockPaperScissors.Params(T=T, opponent="bait-and-switch"), 0
        )
        for seed in (0, 1):
            out = PhasedAggressionBandit().run(data, PhasedAggressionBandit.Params(), seed)
            assert out.phase_switches.size >= 2
            assert float((out.comparator_payoff - out.expected_payoff).sum()) < 2.0


@pytest.mark.parametrize("opponent", OPPONENTS)
def test_every_method_accepts_every_opponent(opponent):
    rps = RockPaperScissors().load(RockPaperScissors.Params(T=300, opponent=opponent), 1)
    kuhn = _kuhn(300, opponent, seed=1)
    outputs = [simulate(rps, PhasedAggression(rps, "exp3-ix", "bandit"), 0)]
    for method in (PhasedAggressionSequenceForm, SequenceFormIxomd):
        outputs.append(method().run(kuhn, method.Params() if method.Params else None, 0))
    for out in outputs:
        assert np.isfinite(out.expected_payoff).all() and out.expected_payoff.size == 300


def test_random_fixed_opponent_is_a_seeded_mixed_strategy():
    one = _kuhn(10, "random-fixed", seed=1).opponent_strategy
    two = _kuhn(10, "random-fixed", seed=2).opponent_strategy
    for a, b in zip(one, two, strict=True):
        assert a.sum() == pytest.approx(1.0) and (a > 0).sum() > 1
        assert not np.allclose(a, b)
