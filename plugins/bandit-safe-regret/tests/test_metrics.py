"""Metrics on hand-built outputs with known answers, and on a simulated run."""

import numpy as np
import pytest
from harness_bandit_safe_regret._data import PlayOutput
from harness_bandit_safe_regret.datasets import RockPaperScissors
from harness_bandit_safe_regret.methods import Exp3Method
from harness_bandit_safe_regret.metrics import (
    CumulativePayoff,
    FinalAlpha,
    MaxPrefixLoss,
    RegretVsBest,
    RegretVsComparator,
    RegretVsComparatorPeak,
    thin_curve,
)

from harness import Curve


def _output():
    # 4 rounds: Alice's expected payoffs, the comparator's, and the best action's cumulative.
    return PlayOutput(
        expected_payoff=np.array([-1.0, -0.5, 1.0, 1.0]),
        realised_payoff=np.array([-1.0, 0.0, 1.0, 0.0]),
        comparator_payoff=np.array([0.0, 0.0, 0.0, 0.0]),
        comparator_realised=np.array([0.5, 0.0, 0.0, 0.0]),
        best_cumulative=np.array([0.5, 1.0, 2.0, 3.0]),
        best_cumulative_realised=np.array([1.0, 1.0, 2.0, 2.0]),
        alpha=np.array([0.1, 0.1, 0.2, 0.4]),
        phase_switches=np.array([2, 3]),
    )


def test_regret_vs_comparator_curve_is_cumulative_gap():
    curve = RegretVsComparator().compute(None, _output())
    assert isinstance(curve, Curve)
    np.testing.assert_allclose(curve.values, [1.0, 1.5, 0.5, -0.5])
    realised = RegretVsComparator(RegretVsComparator.Params(values="realised", curve=False))
    # gaps 1.5, 0, -1, 0
    assert realised.compute(None, _output()) == pytest.approx(0.5)


def test_regret_vs_best_subtracts_alice_cumulative_from_best_cumulative():
    curve = RegretVsBest().compute(None, _output())
    np.testing.assert_allclose(curve.values, [1.5, 2.5, 2.5, 2.5])
    realised = RegretVsBest(RegretVsBest.Params(values="realised", curve=False))
    assert realised.compute(None, _output()) == pytest.approx(2.0)


def test_cumulative_payoff_and_max_prefix_loss():
    assert CumulativePayoff().compute(None, _output()) == pytest.approx(0.5)
    assert MaxPrefixLoss().compute(None, _output()) == pytest.approx(1.5)  # after round 2
    assert MaxPrefixLoss(MaxPrefixLoss.Params(values="realised")).compute(
        None, _output()
    ) == pytest.approx(1.0)


def test_regret_vs_comparator_peak_is_the_running_maximum():
    # Reg_t(mu_c) = 1, 1.5, 0.5, -0.5: the final value hides the peak 1.5 after round 2
    assert RegretVsComparatorPeak().compute(None, _output()) == pytest.approx(1.5)
    realised = RegretVsComparatorPeak(RegretVsComparatorPeak.Params(values="realised"))
    assert realised.compute(None, _output()) == pytest.approx(1.5)  # gaps 1.5, 0, -1, 0


def test_final_alpha_reports_alpha_and_switches():
    value = FinalAlpha().compute(None, _output())
    assert value == {"alpha": 0.4, "n_switches": 2.0, "first_switch": 2.0}


def test_thin_curve_keeps_first_and_last_round():
    values = np.arange(100_000, dtype=float)
    curve = thin_curve(values, 1000)
    assert curve.values.size <= 1000
    assert curve.steps[0] == 1 and curve.steps[-1] == 100_000
    assert curve.final == 99_999.0
    assert thin_curve(values, 0).values.size == 100_000


def test_regret_params_reject_negative_max_points():
    with pytest.raises(ValueError, match="max_points"):
        RegretVsComparator.Params(max_points=-1)


def test_metrics_on_a_run_are_consistent():
    data = RockPaperScissors().load(RockPaperScissors.Params(T=3000, opponent="fixed"), 0)
    out = Exp3Method().run(data, Exp3Method.Params(), 0)
    # vs always-rock the comparator gets 0 and the best action (paper) +1 per round, so
    # regret-vs-best = T - C_T and regret-vs-comparator = -C_T exactly.
    payoff = CumulativePayoff().compute(data, out)
    assert RegretVsComparator().compute(data, out).final == pytest.approx(-payoff)
    assert RegretVsBest().compute(data, out).final == pytest.approx(3000 - payoff)
    assert 0 < payoff < 3000


def test_exploitation_slope_on_hand_values_and_on_always_rock():
    from harness_bandit_safe_regret.metrics import ExploitationSlope

    # last 2 of 4 rounds: Alice 1, 1; comparator 0, 0; best cumulative 1 -> 3
    metric = ExploitationSlope(ExploitationSlope.Params(fraction=0.5))
    assert metric.compute(None, _output()) == {"gain": 1.0, "best_gain": 1.0}
    # EXP3 against always-Rock: the best response (paper) gains exactly 1 per round over the
    # uniform comparator; EXP3's late gain is below it but positive
    data = RockPaperScissors().load(RockPaperScissors.Params(T=3000, opponent="fixed"), 0)
    value = ExploitationSlope().compute(data, Exp3Method().run(data, Exp3Method.Params(), 0))
    assert value["best_gain"] == pytest.approx(1.0, abs=1e-12)
    assert 0 < value["gain"] < 1.0
    with pytest.raises(ValueError, match="fraction"):
        ExploitationSlope.Params(fraction=0.0)


def test_play_output_rejects_non_finite_values_naming_the_field():
    import dataclasses

    good = _output()
    bad = np.array([0.0, np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"PlayOutput\.alpha must be finite"):
        dataclasses.replace(good, alpha=bad)
    with pytest.raises(ValueError, match=r"PlayOutput\.best_cumulative must have shape"):
        dataclasses.replace(good, best_cumulative=np.zeros(3))
