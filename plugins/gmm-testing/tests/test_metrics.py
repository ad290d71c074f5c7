"""Rates with Wilson intervals, AUC and timing metrics on hand-made outputs."""

import numpy as np
import pytest
from harness_gmm_testing.data import TestOutput
from harness_gmm_testing.metrics import AUC, Power, SecondsPerTest, TypeOneError, wilson_interval


def _output(p_null, p_alt, stat_null=None, stat_alt=None):
    p_null, p_alt = np.asarray(p_null, float), np.asarray(p_alt, float)
    return TestOutput(
        p_null=p_null,
        p_alt=p_alt,
        stat_null=-p_null if stat_null is None else np.asarray(stat_null, float),
        stat_alt=-p_alt if stat_alt is None else np.asarray(stat_alt, float),
        seconds=np.array([0.1, 0.2, 0.3, 0.6]),
        calibration_seconds=2.0,
    )


def test_wilson_interval_matches_statsmodels():
    # Reference: statsmodels.stats.proportion.proportion_confint(k, n, method="wilson").
    from statsmodels.stats.proportion import proportion_confint

    for k, n in [(0, 20), (5, 100), (37, 40), (40, 40)]:
        assert wilson_interval(k, n) == pytest.approx(
            proportion_confint(k, n, alpha=0.05, method="wilson"), abs=1e-12
        )


def test_rates_count_p_values_at_or_below_alpha():
    out = _output([0.01, 0.05, 0.2, 0.9], [0.001, 0.04, 0.06, 0.5])
    t1 = TypeOneError(TypeOneError.Params(alpha=0.05)).compute(None, out)
    power = Power(Power.Params(alpha=0.1)).compute(None, out)
    assert t1["rate"] == 0.5 and power["rate"] == 0.75
    assert t1["low"] < 0.5 < t1["high"]
    assert (power["low"], power["high"]) == pytest.approx(wilson_interval(3, 4))


def test_alpha_outside_unit_interval_is_rejected():
    with pytest.raises(ValueError, match="alpha"):
        Power.Params(alpha=1.5)


def test_auc_is_one_for_separated_half_for_ties_and_mann_whitney_otherwise():
    out = _output([0.5] * 3, [0.5] * 3, stat_null=[0, 1, 2], stat_alt=[3, 4, 5])
    assert AUC().compute(None, out) == 1.0
    out = _output([0.5] * 2, [0.5] * 2, stat_null=[1, 1], stat_alt=[1, 1])
    assert AUC().compute(None, out) == 0.5
    # pairs (alt > null): 2 > 1; 0 > nothing -> 1 of 4 pairs, plus half of the tie 1 = 1
    out = _output([0.5] * 2, [0.5] * 2, stat_null=[1, 3], stat_alt=[2, 1])
    assert AUC().compute(None, out) == pytest.approx((1 + 0.5) / 4)


def test_seconds_per_test_reports_mean_median_and_calibration():
    value = SecondsPerTest().compute(None, _output([0.5], [0.5]))
    assert value == pytest.approx({"mean": 0.3, "median": 0.25, "calibration": 2.0})
