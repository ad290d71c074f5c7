"""Reports: aggregation over seeds, labelled axes, fitted log-log slope."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from harness_fair_regression.reports import (
    FairRiskRate,
    RiskUnfairness,
    TradeOff,
    fitted_slope,
    slope_table,
)


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
    table = out["fair-risk-rate-table"].set_index("method / regressor")
    np.testing.assert_allclose(table["fair-risk slope"].to_numpy(), -1.0, atol=1e-9)
    assert (table["seeds"] == 3).all() and (table["sizes"] == 3).all()
    ax = out["fair-risk-rate"].axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "n_train" in ax.get_xlabel()
    # The legend is the figure's (below the panels), not one drawn inside the axes.
    assert ax.get_legend() is None and len(out["fair-risk-rate"].legends) == 1


def _rate_frame(fair_slope: float, seeds: int = 8) -> pd.DataFrame:
    """Risks c n^slope with 10% multiplicative noise per (seed, n); regression slope -1."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(seeds):
        for n in (250, 500, 1000, 2000, 4000):
            noise = np.exp(rng.normal(0, 0.1, 3))
            rows.append({"panel": "p", "label": "m / ridge", "seed": seed, "n": n,
                         "regression-risk": 5 / n * noise[0],
                         "fair-risk": 8 * n**fair_slope * noise[1],
                         "transport-risk": 3 / n * noise[2]})  # fmt: skip
    return pd.DataFrame(rows)


def test_slope_table_gives_paired_confidence_intervals():
    row = slope_table(_rate_frame(-1.0), size="n").iloc[0]
    for metric in ("regression-risk", "fair-risk", "transport-risk"):
        assert row[f"{metric} lo"] < -1 < row[f"{metric} hi"]
        assert row[f"{metric} hi"] - row[f"{metric} lo"] < 0.2  # 10% noise, 8 seeds
    assert row["fair - regression lo"] < 0 < row["fair - regression hi"]
    # Wrong variant: a fair risk falling as n^-0.7 is told apart from the regression rate.
    slow = slope_table(_rate_frame(-0.7), size="n").iloc[0]
    assert slow["fair - regression lo"] > 0


def test_method_variants_are_not_averaged_together():
    rows = _results()
    rows = rows[rows["method"] == "wasserstein-barycenter"].copy()
    other = rows.assign(**{"method.jitter": "0.1", "mse": rows["mse"] + 1.0})
    rows["method.jitter"] = "1e-05"
    both = pd.concat([rows, other], ignore_index=True)
    table = RiskUnfairness().build(both, {})["risk-unfairness-table"]
    assert sorted(table["variant"].unique()) == ["jitter=0.1", "jitter=1e-05"]
    means = table.groupby("variant")["mse mean"].mean()
    assert means["jitter=0.1"] - means["jitter=1e-05"] == pytest.approx(1.0)


def test_trade_off_draws_the_closed_form_curve():
    rows = []
    u_star = 0.42
    for seed in range(2):
        for alpha in (0.0, 0.25, 1.0):
            rows.append({"cell_hash": f"{alpha}{seed}", "task": "fair-regression",
                         "dataset": "synthetic-unequal-variance", "method": "partial-fairness",
                         "seed": seed, "status": "ok", "method.regressor": "oracle",
                         "method.alpha": str(alpha), "dataset.cost_of_fairness": u_star,
                         "w2-unfairness": alpha * u_star,
                         "excess-risk": (1 - np.sqrt(alpha)) ** 2 * u_star})  # fmt: skip
    out = TradeOff().build(pd.DataFrame(rows), {})
    table = out["trade-off-table"]
    assert table["alpha"].tolist() == [0.0, 0.25, 1.0]
    ax = out["trade-off"].axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    closed = next(v for k, v in lines.items() if k.startswith("closed form"))
    # The measured points lie on the closed-form curve (sqrt(U*) - sqrt(U))^2.
    u, risk = closed.get_data()
    np.testing.assert_allclose(np.interp(table["w2-unfairness"], u, risk), table["excess-risk"],
                               atol=1e-3)  # fmt: skip
    assert "excess-risk" in ax.get_ylabel() and ax.get_legend() is None


def test_reports_return_nothing_without_their_metrics():
    empty = _results().drop(columns=["fair-risk", "ks-unfairness"])
    assert RiskUnfairness().build(empty, {}) == {}
    assert FairRiskRate().build(empty, {}) == {}
    assert TradeOff().build(empty, {}) == {}


def test_fitted_slope_of_power_law():
    n = np.array([10.0, 100.0, 1000.0])
    assert fitted_slope(n, 5 * n**-0.5) == pytest.approx(-0.5)
