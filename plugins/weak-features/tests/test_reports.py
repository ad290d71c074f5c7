"""Reports on a small hand-made results table."""

import numpy as np
import pandas as pd
import pytest
from harness_weak_features.reports import AccuracyByMethod, ErrorVsEpsilon, PairedGain
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


def test_error_vs_epsilon_means_per_seed_and_no_stand_in_bound():
    out = ErrorVsEpsilon().build(_results(), {})
    table = out["error-vs-epsilon-table"]
    assert isinstance(out["error-vs-epsilon"], Figure)
    syn = table[table["dataset"] == "synthetic"].set_index("epsilon")
    assert syn.loc[0.4, "error"] == pytest.approx(1 - (0.8 - 0.1 + 0.01))  # mean seed offset
    # The paper's bound is not computable offline: no column or line stands in for it.
    assert not [c for c in table.columns if "bound" in c or "plus" in c]
    ax = out["error-vs-epsilon"].axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "affairs, h = logistic",
        "synthetic, h = logistic",
    ]  # one line per dataset, none for a bound
    assert "ε" in ax.get_xlabel() and "error" in ax.get_ylabel()
    per_seed = out["error-vs-epsilon-per-seed"]
    assert len(per_seed) == 2 * 3 * 3  # datasets x epsilons x seeds, one row per cell


def test_error_vs_epsilon_legend_outside_axes():
    fig = ErrorVsEpsilon().build(_results(), {})["error-vs-epsilon"]
    ax = fig.axes[0]
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1  # right of the data area


def test_paired_gain_pairs_by_seed():
    out = PairedGain().build(_results(), {})
    table = out["paired-gain-table"].set_index(["dataset", "method"])
    row = table.loc[("synthetic", "oracle")]
    assert row["gain"] == pytest.approx(0.1)  # oracle 0.8 vs naive 0.7 on every seed
    assert row["n_seeds"] == 3 and row["p_value"] == 0.0


class UnpairedGain(PairedGain):
    """Wrong variant: a Welch (unpaired) interval that ignores the pairing by seed."""

    @staticmethod
    def interval(a, b):
        from scipy import stats

        res = stats.ttest_ind(a, b, equal_var=False)
        half = res.confidence_interval(0.95).high - (a.mean() - b.mean())
        return a.mean() - b.mean(), half, float(res.pvalue)


@pytest.mark.parametrize(("report", "should_pass"), [(PairedGain, True), (UnpairedGain, False)])
def test_paired_gain_ci_has_its_level_and_width_under_the_null(report, should_pass):
    """Under no difference, with a strong shared seed effect (sd 0.05) and cell noise 0.01,
    the paired 95% CI covers 0 in 95% ± 3 binomial SE of 100 replicates, and its median
    half-width is near the paired theory, t(0.975, 7)·0.01·√2/√8 ≈ 0.012 (under 0.02). An
    interval that ignores the pairing is about 5 times wider and fails."""
    rng = np.random.default_rng(0)
    covered, halves = 0, []
    for _ in range(100):
        seed_effect = rng.normal(0, 0.05, size=8)  # shared per seed: pairing removes it
        rows = [
            {"dataset": "synthetic", "method": m, "seed": s, "status": "ok",
             "dataset.weak_kind": "noisy", "dataset.rate": "0.3",
             "accuracy": 0.7 + seed_effect[s] + rng.normal(0, 0.01)}
            for s in range(8) for m in ("naive", "wfl-sequential")
        ]  # fmt: skip
        row = report().build(pd.DataFrame(rows), {})["paired-gain-table"].iloc[0]
        covered += row["ci_low"] <= 0 <= row["ci_high"]
        halves.append((row["ci_high"] - row["ci_low"]) / 2)
    level_ok = abs(covered / 100 - 0.95) < 3 * np.sqrt(0.95 * 0.05 / 100)
    assert bool(level_ok and np.median(halves) < 0.02) is should_pass


def test_accuracy_by_method_pivots_means():
    out = AccuracyByMethod().build(_results(), {})
    table = out["accuracy-by-method"]
    assert list(table["oracle"]) == [0.8, 0.8]
    assert "emulated-estimator" not in table.columns
    fig = out["accuracy-by-method-plot"]
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["noisy\nrate 0.3"]
    assert all(t.get_rotation() == 0 for t in ax.get_xticklabels())
    assert ax.get_legend() is None and len(fig.legends) == 1


def test_reports_are_empty_without_cells():
    empty = _results().iloc[:0]
    assert ErrorVsEpsilon().build(empty, {}) == {}
    assert PairedGain().build(empty, {}) == {}
    assert AccuracyByMethod().build(empty, {}) == {}


def test_paired_gain_keeps_weak_column_choices_apart():
    """Two configurations of one dataset that differ only in weak_columns are not pooled."""
    rows = []
    for seed in range(3):
        for columns, gain in (("occupation", 0.0), ("occupation,education", 0.05)):
            for method, acc in (("naive", 0.7 + seed / 100), ("oracle", 0.7 + seed / 100 + gain)):
                rows.append(
                    {
                        "dataset": "adult",
                        "method": method,
                        "seed": seed,
                        "status": "ok",
                        "dataset.weak_kind": "complementary",
                        "dataset.rate": "0.0",
                        "dataset.weak_columns": columns,
                        "accuracy": acc,
                    }
                )
    table = PairedGain().build(pd.DataFrame(rows), {})["paired-gain-table"].set_index("dataset")
    assert table.loc["adult[occupation]", "gain"] == pytest.approx(0.0)
    assert table.loc["adult[occupation,education]", "gain"] == pytest.approx(0.05)
    by_method = AccuracyByMethod().build(pd.DataFrame(rows), {})["accuracy-by-method"]
    assert len(by_method) == 2
