"""Reports: aggregation over seeds, labelled axes, fitted log-log slope."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from harness_fair_regression.reports import FairRiskRate, RiskUnfairness, fitted_slope


def _results() -> pd.DataFrame:
    rows = []
    for seed in range(3):
        for method, reg, mse, ks in [
            ("unconstrained", "ridge", 1.0, 0.7),
            ("wasserstein-barycenter", "ridge", 1.8, 0.05),
            ("adversarial", "mlp", 1.4, 0.35),
        ]:
            for n in (500, 2000, 8000):
                rows.append({
                    "cell_hash": f"{method}{seed}{n}", "task": "fair-regression",
                    "dataset": "synthetic-linear", "method": method, "seed": seed,
                    "status": "ok", "dataset.n_train": str(n), "method.regressor": reg,
                    "mse": mse + 0.1 * seed, "ks-unfairness": ks,
                    "fair-risk": 3.0 / n * (1 + 0.01 * seed),
                })  # fmt: skip
    rows.append({**rows[0], "status": "failed", "mse": 99.0})
    return pd.DataFrame(rows)


def test_risk_unfairness_means_over_seeds_and_labels_axes():
    out = RiskUnfairness().build(_results(), {})
    table = out["risk-unfairness-table"]
    row = table[(table["method"] == "unconstrained")].iloc[0]
    assert row["mse mean"] == pytest.approx(1.1)  # seeds 0, 1, 2 add 0, 0.1, 0.2; failed out
    assert row["mse count"] == 3  # 3 seeds; each n_train is its own panel
    assert sorted(table["panel"].unique()) == [
        f"synthetic-linear (n_train={n})" for n in ("2000", "500", "8000")
    ]
    assert len(out["risk-unfairness"].axes) == 3
    ax = out["risk-unfairness"].axes[0]
    assert "ks-unfairness" in ax.get_xlabel() and "mse" in ax.get_ylabel()
    assert len(out["risk-unfairness"].legends[0].get_texts()) == 3


def test_fair_risk_rate_recovers_slope_minus_one():
    out = FairRiskRate().build(_results(), {})
    slopes = out["fair-risk-rate-table"].set_index("method / regressor")["slope"]
    np.testing.assert_allclose(slopes.to_numpy(), -1.0, atol=1e-9)
    ax = out["fair-risk-rate"].axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "n_train" in ax.get_xlabel()


def test_reports_return_nothing_without_their_metrics():
    empty = _results().drop(columns=["fair-risk", "ks-unfairness"])
    assert RiskUnfairness().build(empty, {}) == {}
    assert FairRiskRate().build(empty, {}) == {}


def test_fitted_slope_of_power_law():
    n = np.array([10.0, 100.0, 1000.0])
    assert fitted_slope(n, 5 * n**-0.5) == pytest.approx(-0.5)
