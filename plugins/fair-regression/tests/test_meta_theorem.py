"""Fukuchi's meta-theorem and Chzhen & Schreuder's trade-off, checked on synthetic data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from harness_fair_regression import datasets, methods, metrics
from harness_fair_regression.reports import slope_table

SIZES = (250, 1000, 4000)


def _rate_rows(model, regressor, n_calib=None, seeds=6, cls=methods.Projection):
    """One row per (size, seed) with the three risks of the meta-theorem."""
    ds = datasets.SyntheticUnequalVariance()
    rows = []
    for n in SIZES:
        for seed in range(seeds):
            params = ds.Params(n_train=n, n_calib=n_calib or n, n_test=3000, model=model,
                               d=5 if model == "linear" else 1)  # fmt: skip
            data = ds.load(params, seed)
            p = cls.Params(regressor=regressor)
            out = cls(p).run(data, p, seed)
            row = {"panel": model, "label": f"{cls.name} / {regressor}", "seed": seed, "n": n}
            for metric in (metrics.RegressionRisk, metrics.FairRisk, metrics.TransportRisk):
                row[metric.name] = metric().compute(data, out)
            rows.append(row)
    return slope_table(pd.DataFrame(rows), size="n").iloc[0]


def _meta_theorem_holds(row) -> bool:
    """Fair-risk slope = regression-risk slope within the paired 95% CI."""
    return row["fair - regression lo"] <= 0 <= row["fair - regression hi"]


@pytest.mark.slow
@pytest.mark.parametrize(("model", "regressor"), [("linear", "ridge"), ("lipschitz", "knn-rate")])
def test_fair_risk_falls_at_the_regression_rate(model, regressor):
    # Meta-theorem: fair risk <~ regression risk + transport cost, and the transport cost
    # (maps estimated on n_calib = n rows) falls about as 1/n, no slower than either base
    # rate (ridge (d + M)/n, k-NN n^(-2/3)); so the fair-risk slope equals the regression
    # slope. 6 seeds x 3 sizes here; the suite runs 20 x 5.
    row = _rate_rows(model, regressor)
    assert _meta_theorem_holds(row), row.to_dict()
    # The transport term falls at least about as fast as 1 / n_calib: its CI reaches -1
    # or below (for Gaussian groups the empirical W2 rate carries a log factor).
    assert row["transport-risk lo"] <= -1, row.to_dict()
    # The base rates: ridge's CI covers -1 ((d + M) / n); k-NN with k ~ n^(2/3) is a
    # nonparametric rate, clearly slower than 1/n (measured -0.56, CI -0.60 to -0.52 here:
    # at these sizes slower than the asymptotic -2/3, see the README).
    if regressor == "ridge":
        assert row["regression-risk lo"] <= -1 <= row["regression-risk hi"], row.to_dict()
    else:
        assert -0.9 < row["regression-risk lo"] <= row["regression-risk hi"] < -0.4, row.to_dict()


@pytest.mark.slow
def test_meta_theorem_check_fails_when_the_maps_stop_improving():
    # Wrong variant: the maps are always estimated on 100 calibration rows while n_train
    # grows; the transport term stays flat and the fair-risk slope falls behind.
    row = _rate_rows("linear", "ridge", n_calib=100)
    assert not _meta_theorem_holds(row), row.to_dict()
    assert row["transport-risk hi"] > -0.3


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
