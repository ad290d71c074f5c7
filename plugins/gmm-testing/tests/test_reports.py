"""Power curves and the n reaching power 0.9, on a hand-made results table."""

import pandas as pd
import pytest
from harness_gmm_testing.reports import PowerCurves, power_table

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
