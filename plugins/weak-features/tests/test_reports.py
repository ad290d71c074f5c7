"""Reports on a small hand-made results table."""

import numpy as np
import pandas as pd
from harness_weak_features.reports import AccuracyByMethod, ErrorVsEpsilon
from matplotlib.figure import Figure


def _results():
    rows = []
    for seed in range(3):
        for dataset in ("synthetic", "affairs"):
            for eps in (0.0, 0.2, 0.4):
                rows.append(
                    {
                        "dataset": dataset,
                        "method": "emulated-estimator",
                        "seed": seed,
                        "status": "ok",
                        "dataset.weak_kind": "noisy",
                        "dataset.rate": "0.3",
                        "method.epsilon": str(eps),
                        "accuracy": 0.8 - eps / 4 + seed / 100,
                    }
                )
            for method, acc in (("oracle", 0.8), ("naive", 0.7)):
                rows.append(
                    {
                        "dataset": dataset,
                        "method": method,
                        "seed": seed,
                        "status": "ok",
                        "dataset.weak_kind": "noisy",
                        "dataset.rate": "0.3",
                        "method.epsilon": np.nan,
                        "accuracy": acc,
                        "wf-accuracy": 0.7,
                    }
                )
    return pd.DataFrame(rows)


def test_error_vs_epsilon_means_and_bound_shape():
    out = ErrorVsEpsilon().build(_results(), {})
    table = out["error-vs-epsilon-table"]
    assert isinstance(out["error-vs-epsilon"], Figure)
    syn = table[table["dataset"] == "synthetic"].set_index("epsilon")
    assert syn.loc[0.4, "error"] == np.float64(1 - (0.8 - 0.1 + 0.01))  # mean seed offset 0.01
    assert syn.loc[0.2, "err0_plus_epsilon"] == syn.loc[0.0, "error"] + 0.2
    ax = out["error-vs-epsilon"].axes[0]
    assert "ε" in ax.get_xlabel() and "error" in ax.get_ylabel()


def test_accuracy_by_method_pivots_means():
    out = AccuracyByMethod().build(_results(), {})
    table = out["accuracy-by-method"]
    assert list(table["oracle"]) == [0.8, 0.8]
    assert "emulated-estimator" not in table.columns
    fig = out["accuracy-by-method-plot"]
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["noisy 0.3"]
    assert all(t.get_rotation() == 0 for t in ax.get_xticklabels())
    assert ax.get_legend() is None and len(fig.legends) == 1


def test_reports_are_empty_without_cells():
    empty = _results().iloc[:0]
    assert ErrorVsEpsilon().build(empty, {}) == {}
    assert AccuracyByMethod().build(empty, {}) == {}
