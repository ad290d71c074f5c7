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
def test_fair_risk_falls_at_the_ridge_rate():
    # Meta-theorem: fair risk <~ regression risk + transport cost. Ridge on the linear
    # model has rate (d + M)/n and the maps (estimated on n_calib = n rows) about 1/n, so
    # the fair-risk slope equals the regression slope (suite, 20 seeds x 5 sizes: -1.00
    # vs -0.95, paired difference -0.05, CI -0.15 to 0.06). 6 seeds x 3 sizes here.
    row = _rate_rows("linear", "ridge")
    assert _meta_theorem_holds(row), row.to_dict()
    # The transport term falls at least about as fast as 1 / n_calib: its CI reaches -1.
    assert row["transport-risk lo"] <= -1, row.to_dict()
    assert row["regression-risk lo"] <= -1 <= row["regression-risk hi"], row.to_dict()


@pytest.mark.slow
def test_knn_fair_risk_is_bounded_by_regression_plus_transport():
    # k-NN (k = n^(2/3)) on the Lipschitz model: a nonparametric rate, and the bound
    # fair <= C (regression + transport) with the measured C <= 1.42 (suite, 20 seeds).
    # The slopes themselves need not match at these sizes (suite: fair -0.63, regression
    # -0.77, paired difference 0.14, CI 0.08 to 0.20): the barycenter map scales group s's
    # errors by about (sbar / scale_s)^2 (1.69 and 0.42 here), so the fair risk weighs the
    # groups differently from the regression risk, and their errors fall at different
    # speeds at these sizes. 6 seeds x 3 sizes here.
    ds = datasets.SyntheticUnequalVariance()
    for n in SIZES:
        data = ds.load(ds.Params(model="lipschitz", d=1, n_train=n, n_calib=n, n_test=3000), 0)
        p = methods.Projection.Params(regressor="knn-rate")
        out = methods.Projection(p).run(data, p, 0)
        fair = metrics.FairRisk().compute(data, out)
        bound = metrics.RegressionRisk().compute(data, out)
        bound += metrics.TransportRisk().compute(data, out)
        assert fair <= 2 * bound, (n, fair, bound)
    # Both slopes lie within 0.3 of the suite's -0.63 / -0.77 (the half-width of a 6-seed,
    # 3-size CI is about 0.1-0.2): slower than 1/n, a nonparametric rate.
    row = _rate_rows("lipschitz", "knn-rate")
    assert -0.95 < row["fair-risk lo"] <= row["fair-risk hi"] < -0.33, row.to_dict()
    assert -1.07 < row["regression-risk lo"] <= row["regression-risk hi"] < -0.47, row.to_dict()
    assert row["transport-risk lo"] <= -1, row.to_dict()


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
