"""Power curves and the n reaching power 0.9, on a hand-made results table."""

import numpy as np
import pandas as pd
import pytest
from harness_gmm_testing.reports import (
    NForPower,
    PowerCurves,
    n_for_power,
    power_table,
    rate_slopes,
)

from harness import Skip


def _results():
    rows = []
    grid = {"hermite-moment-test": [0.2, 0.95, 1.0], "mardia": [0.05, 0.04, 0.06]}
    for method, powers in grid.items():
        for seed in (0, 1):
            for n, power in zip((1000, 3000, 10000), powers, strict=True):
                rows.append(
                    {
                        "cell_hash": f"{method}{n}{seed}",
                        "task": "gmm-testing",
                        "dataset": "pancakes-uniform",
                        "method": method,
                        "seed": str(seed),
                        "status": "ok",
                        "dataset.n": str(n),
                        "dataset.k": "8",
                        "dataset.trials": "100",
                        "dataset.predicted_n90": "7030",
                        "method.calibration_trials": "200",
                        "power.rate": power + (0.02 if seed else -0.02),
                        "type1-error.rate": 0.05,
                    }
                )
    return pd.DataFrame(rows)


def test_table_gives_smallest_grid_n_with_mean_power_at_least_0_9():
    table = power_table(_results()).set_index("method")
    assert table.loc["hermite-moment-test", "n_power_0.9"] == 3000
    assert pd.isna(table.loc["mardia", "n_power_0.9"])
    assert table.loc["mardia", "max_power"] == pytest.approx(0.06)
    assert table.loc["mardia", "predicted_n90"] == 7030
    assert table.loc["mardia", "dataset"] == "pancakes-uniform (k=8)"


def test_figure_has_log_n_axis_and_labelled_units():
    out = PowerCurves().build(_results(), {})
    ax = out["power-vs-n"].axes[0]
    assert ax.get_xscale() == "log"
    assert "n" in ax.get_xlabel() and "power" in ax.get_ylabel()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"hermite-moment-test", "mardia"} <= set(labels)
    assert any("predicted" in label for label in labels)
    assert isinstance(out["n-power-0.9"], pd.DataFrame)


def test_report_skips_without_power_results():
    with pytest.raises(Skip):
        PowerCurves().build(_results().drop(columns=["power.rate"]), {})


# -- n-for-power: n_0.9 against d -------------------------------------------------------

Z90 = 1.2815515655446004


def _rate_rows(n90_of_d, grid_factors=(0.5, 0.7, 1.0, 1.4), trials=200, test="hermite-moment-test"):
    """Cells whose power follows Phi(z_0.9 + 3 ln(n / n90)) exactly (rounded to 1/trials)."""
    from scipy.stats import norm

    rows = []
    for d, n90 in n90_of_d.items():
        for factor in grid_factors:
            n = round(n90 * factor)
            power = float(np.rint(norm.cdf(Z90 + 3 * np.log(factor)) * trials) / trials)
            rows.append(
                {
                    "cell_hash": f"{test}{d}{n}",
                    "task": "gmm-testing",
                    "dataset": "pancakes-uniform",
                    "method": test,
                    "seed": "0",
                    "status": "ok",
                    "dataset.n": str(n),
                    "dataset.d": str(d),
                    "dataset.k": "8",
                    "dataset.trials": str(trials),
                    "dataset.predicted_n90": str(n90),
                    "power.rate": power,
                    "type1-error.rate": 0.05,
                }
            )
    return rows


def test_n_for_power_recovers_a_known_probit_curve():
    table = n_for_power(pd.DataFrame(_rate_rows({4: 1500, 8: 7000})))
    assert (table["bracketed"] == "yes").all()
    assert np.allclose(table["ratio"], 1.0, atol=0.03)
    assert (
        (table["ci_low"] < table["closed_form"]) & (table["closed_form"] < table["ci_high"])
    ).all()
    assert list(table.columns[:5]) == ["test", "k", "d", "n_for_power", "closed_form"]


def test_n_for_power_flags_a_test_that_ignores_n():
    # Wrong variant: power flat at 0.3 (or 1.0) whatever n is: no n_0.9, said so.
    rows = pd.DataFrame(_rate_rows({4: 1500, 8: 7000}))
    flat = rows.assign(**{"power.rate": 0.3})
    assert (n_for_power(flat)["bracketed"] == "above n_max").all()
    assert n_for_power(flat)["n_for_power"].isna().all()
    assert (n_for_power(rows.assign(**{"power.rate": 1.0}))["bracketed"] == "below n_min").all()


def test_slope_of_n90_against_d_is_recovered_and_a_flat_rate_fails():
    dims = {4: 1500, 8: 1500 * 2**2.5, 16: 1500 * 4**2.5}
    slopes = rate_slopes(n_for_power(pd.DataFrame(_rate_rows(dims)))).set_index("d_range")
    assert slopes.loc["4-16 (fit)", "slope"] == pytest.approx(2.5, abs=0.05)
    assert slopes.loc["8-16", "slope"] == pytest.approx(2.5, abs=0.05)
    assert slopes.loc["8-16", "ci_low"] < 2.5 < slopes.loc["8-16", "ci_high"]
    # Wrong variant: a measured n_0.9 that does not grow with d (closed form still d^2.5).
    flat = pd.DataFrame(_rate_rows({4: 1500, 8: 1500, 16: 1500}))
    flat["dataset.predicted_n90"] = flat["dataset.d"].map({"4": 1500, "8": "8485", "16": "48000"})
    wrong = rate_slopes(n_for_power(flat)).set_index("d_range")
    assert abs(wrong.loc["8-16", "difference"]) > 2.0


def test_n_for_power_report_needs_two_dimensions_and_names_the_cheaper_test():
    with pytest.raises(Skip, match="two or more dimensions"):
        NForPower().build(pd.DataFrame(_rate_rows({8: 7000})), {})
    hermite = _rate_rows({4: 1500, 8: 7000})
    # Henze-Zirkler: fewer samples at d = 4, power < 0.9 on a grid reaching 2 x 7000 at d = 8.
    hz = _rate_rows({4: 300}, test="henze-zirkler") + [
        {**r, "power.rate": 0.2}
        for r in _rate_rows({8: 10000}, grid_factors=(0.5, 1.4), test="henze-zirkler")
    ]
    out = NForPower().build(pd.DataFrame(hermite + hz), {})
    verdict = out["hermite-vs-others"].set_index("d")["fewer_samples"]
    assert verdict[4] == "henze-zirkler"
    assert verdict[8] == "hermite-moment-test"
    ax = out["n-for-power-vs-d"].axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert any("closed form" in t.get_text() for t in ax.get_legend().get_texts())


def test_two_grid_points_with_one_saturated_rate_give_an_interpolated_bracket():
    # 34/60 at n = 45,000 and 60/60 at 90,000 (the k = 32, d = 8 cells): a probit fit would
    # run its slope to infinity; the report interpolates and gives the two points as interval.
    rows = _rate_rows({8: 64470}, grid_factors=(45000 / 64470, 90000 / 64470), trials=60)
    rows[0]["power.rate"], rows[1]["power.rate"] = 34 / 60, 1.0
    row = n_for_power(pd.DataFrame(rows)).iloc[0]
    assert row["bracketed"].startswith("two points")
    assert (row["ci_low"], row["ci_high"]) == (45000, 90000)
    assert 45000 < row["n_for_power"] < 90000


def test_n_for_power_interval_includes_the_monte_carlo_spread():
    # The binomial-only interval is the GLM's; each grid point's Monte Carlo threshold
    # spread (power.mc_sd) widens it, and a larger spread widens it more.
    rows = pd.DataFrame(_rate_rows({4: 1500}, trials=100))

    def width(frame):
        table = n_for_power(frame)
        return float(table["ci_high"].iloc[0] / table["ci_low"].iloc[0])

    spread = {mc: width(rows.assign(**{"power.mc_sd": mc})) for mc in (0.0, 0.02, 0.08)}
    assert spread[0.0] == pytest.approx(width(rows))  # no mc_sd column: binomial only
    assert spread[0.0] < spread[0.02] < spread[0.08]
