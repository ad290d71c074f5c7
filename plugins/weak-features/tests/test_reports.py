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


def _legend_texts(fig):
    return [t.get_text() for t in fig.legends[0].get_texts()]


def test_error_vs_epsilon_means_per_seed_and_no_stand_in_bound():
    out = ErrorVsEpsilon().build(_results(), {})
    table = out["error-vs-epsilon-table"]
    assert isinstance(out["error-vs-epsilon"], Figure)
    syn = table[table["dataset"] == "synthetic"].set_index("epsilon")
    assert syn.loc[0.4, "error"] == pytest.approx(1 - (0.8 - 0.1 + 0.01))  # mean seed offset
    # Without the wfl-bound metric logged, no column, panel or line stands in for the bound.
    assert not [c for c in table.columns if "bound" in c or "plus" in c]
    fig = out["error-vs-epsilon"]
    assert len(fig.axes) == 1
    assert _legend_texts(fig) == ["affairs, h = logistic", "synthetic, h = logistic"]
    ax = fig.axes[0]
    assert "ε" in ax.get_xlabel() and "error" in ax.get_ylabel()
    per_seed = out["error-vs-epsilon-per-seed"]
    assert len(per_seed) == 2 * 3 * 3  # datasets x epsilons x seeds, one row per cell


def test_error_vs_epsilon_draws_the_bound_beside_the_logistic_loss():
    res = _results()
    emu = res["method"] == "emulated-estimator"
    eps = res["method.epsilon"].astype(float)
    res.loc[emu, "logistic-loss"] = 0.5 + eps[emu] / 4
    res.loc[emu, "wfl-bound.bound"] = 2.0 + 10 * eps[emu]
    res.loc[emu, "wfl-bound.complexity"] = 2.0
    res.loc[emu, "wfl-bound.estimation"] = 10 * eps[emu]
    # One cell above its bound (seed 2, synthetic, eps 0): the table must count it.
    bad = emu & (res["seed"] == 2) & (res["dataset"] == "synthetic") & (eps == 0.0)
    res.loc[bad, "logistic-loss"] = 2.5
    out = ErrorVsEpsilon().build(res, {})
    table = out["error-vs-epsilon-table"].set_index(["dataset", "epsilon"])
    assert table.loc[("synthetic", 0.0), "seeds_above_bound"] == 1
    assert table.loc[("affairs", 0.0), "seeds_above_bound"] == 0
    assert table.loc[("affairs", 0.4), "bound"] == pytest.approx(6.0)
    assert table.loc[("affairs", 0.4), "logistic_loss"] == pytest.approx(0.6)
    per_seed = out["error-vs-epsilon-per-seed"]
    assert {"logistic_loss", "bound", "complexity", "estimation"} <= set(per_seed.columns)
    fig = out["error-vs-epsilon"]
    assert len(fig.axes) == 2
    right = fig.axes[1]
    assert right.get_yscale() == "log" and "logistic loss" in right.get_ylabel()
    drawn = [line.get_ydata() for line in right.get_lines() if line.get_linestyle() == ":"]
    assert any(np.allclose(y, [2.0, 4.0, 6.0]) for y in drawn)  # the bound, per epsilon
    # The 0-1 error panel carries no bound.
    assert all(line.get_linestyle() != ":" for line in fig.axes[0].get_lines())


def test_error_vs_epsilon_legend_outside_axes():
    fig = ErrorVsEpsilon().build(_results(), {})["error-vs-epsilon"]
    fig.canvas.draw()
    legend = fig.legends[0].get_window_extent()
    assert all(legend.x0 >= ax.get_window_extent().x1 for ax in fig.axes)  # right of the data


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
