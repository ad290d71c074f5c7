import numpy as np
import pandas as pd
import pytest
from harness_margin_qml.reports import MarginCorrelation, correlation_table, histogram_mi


def _results(n=60, seed=0):
    rng = np.random.default_rng(seed)
    noise = np.repeat([0.0, 0.5, 1.0], n // 3)
    q1 = rng.uniform(0, 1, n)
    gap = 0.5 - 0.5 * q1 + 0.01 * rng.standard_normal(n)  # gap falls with the margin
    params = rng.choice([45, 195, 555], n).astype(float)  # unrelated to the gap
    return pd.DataFrame(
        {
            "cell_hash": [f"h{i}" for i in range(n)],
            "task": "margin-qml",
            "dataset": "cluster-phases",
            "method": "qcnn",
            "seed": "0",
            "status": "ok",
            "dataset.noise": [f"{r}" for r in noise],
            "dataset.n_qubits": "8",
            "generalization-gap": gap,
            "train-accuracy": 0.9,
            "test-accuracy": 0.9 - gap,
            "margin-q25": q1,
            "margin-q50": q1 + 0.1,
            "margin-q75": q1 + 0.2,
            "margin-mean": q1,
            "parameter-count": params,
            "effective-parameters.above-0.1": params - 1,
            "effective-parameters.above-0.01": params,
        }
    )


def test_histogram_mi_of_a_variable_with_itself_is_its_entropy():
    x = np.repeat([0.0, 1.0, 2.0, 3.0], 25)  # four equally likely values: 2 bits
    assert histogram_mi(x, x) == pytest.approx(2.0)
    rng = np.random.default_rng(0)
    x, z = rng.uniform(size=100), rng.uniform(size=100)
    # The plug-in estimate is biased upward (~(B-1)^2 / (2 n ln 2) = 0.58 bits at 10 bins,
    # n = 100), so independent data score well above 0 but far below dependent data.
    assert 0.3 < histogram_mi(x, z) < 0.9
    assert histogram_mi(x, x + 0.01 * z) > 2.5


def test_table_has_per_noise_and_pooled_rows_and_finds_the_planted_relation():
    table = correlation_table(_results())
    assert set(table["noise"]) == {"0", "0.5", "1", "pooled"}
    pooled = table[table["noise"] == "pooled"].set_index("measure")
    assert pooled.loc["Q1", "tau"] < -0.8  # planted monotone decreasing relation
    assert abs(pooled.loc["#params", "tau"]) < 0.3
    assert pooled.loc["Q1", "mi_bits"] > pooled.loc["#params", "mi_bits"]
    assert pooled.loc["Q1", "n"] == 60


def test_report_builds_claim_table_and_labelled_scatter():
    out = MarginCorrelation().build(_results(), {})
    assert set(out) == {"correlations", "claim", "accuracy", "scatter"}
    assert bool(out["claim"]["margins win"].iloc[0])
    ax = out["scatter"].axes[0]
    assert "gap" in ax.get_ylabel() and ax.get_xlabel()
    rows = {round(a.get_position().y0, 3) for a in out["scatter"].axes if a.axison}
    assert len(rows) > 1  # a grid, not a single row of panels


def test_report_ignores_failed_cells():
    df = _results()
    df.loc[:9, "status"] = "failed"
    table = correlation_table(df)
    assert table[table["noise"] == "pooled"]["n"].max() == 50
