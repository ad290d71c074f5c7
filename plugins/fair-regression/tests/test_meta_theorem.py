"""Chzhen & Schreuder's trade-off against its closed form on synthetic data."""

from __future__ import annotations

import numpy as np
import pytest
from harness_fair_regression import datasets, methods, metrics

# The meta-theorem's bound and rates are claims (``claims.py``), decided by equivalence
# tests on the committed evidence with a wrong variant each (``test_claims.py``); round 2's
# "slopes equal when the interval covers 0" checks are gone.


@pytest.mark.parametrize("alpha", [0.0, 0.25, 0.64, 1.0])
def test_partial_fairness_risk_follows_the_closed_form(alpha):
    # Chzhen & Schreuder 2022: f_alpha = sqrt(alpha) f* + (1 - sqrt(alpha)) g* has
    # E(f_alpha - f*)^2 = (1 - sqrt(alpha))^2 U(f*) and U(f_alpha) = alpha U(f*). With the
    # oracle base and 20,000 calibration rows the estimated g is within a few 1e-3 of g*
    # (transport risk 0.0015 at this size); U(f*) = 0.42 is exact for the default model.
    ds = datasets.SyntheticUnequalVariance()
    data = ds.load(ds.Params(n_train=100, n_calib=20_000, n_test=20_000), seed=0)
    u_star = data.cost_of_fairness
    assert u_star == pytest.approx(0.7 * 0.3 * (1 + 1), rel=1e-12)  # closed form, p0 p1 sum
    p = methods.PartialFairness.Params(regressor="oracle", alpha=alpha)
    out = methods.PartialFairness(p).run(data, p, seed=0)
    excess = metrics.ExcessRisk().compute(data, out)
    unfair = metrics.W2Unfairness().compute(data, out)
    assert excess == pytest.approx((1 - np.sqrt(alpha)) ** 2 * u_star, abs=0.01)
    assert unfair == pytest.approx(alpha * u_star, abs=0.01)
    # Wrong variant: mixing with alpha instead of sqrt(alpha) misses the closed form.
    if 0 < alpha < 1:
        # recover g from the output, then mix with alpha
        wrong = alpha * out.base_pred + (1 - alpha) * (
            (out.y_pred - np.sqrt(alpha) * out.base_pred) / (1 - np.sqrt(alpha))
        )
        wrong_excess = float(np.mean((wrong - data.f_star_test) ** 2))
        assert abs(wrong_excess - (1 - np.sqrt(alpha)) ** 2 * u_star) > 0.03
