"""Reports build figures and tables from a synthetic results frame."""

import matplotlib.figure
import numpy as np
import pandas as pd
from harness_bandit_safe_regret.reports import RegretCurves, RegretVsHorizon, mean_ci

from harness import Curve


def _results():
    rows, curves = [], {}
    for T in (1000, 10000):
        for method, slope in (("phased-aggression", 0.0), ("exp3", 1.0)):
            for seed in range(3):
                h = f"{method}-{T}-{seed}"
                values = slope * np.sqrt(np.arange(1, T + 1)) + seed * 0.1
                curves[h] = {"regret-vs-comparator": Curve(values)}
                rows.append(
                    {
                        "cell_hash": h,
                        "task": "bandit-safe-regret",
                        "dataset": "rock-paper-scissors",
                        "method": method,
                        "seed": str(seed),
                        "status": "ok",
                        "dataset.T": str(T),
                        "dataset.opponent": "best-response",
                        "method.c0": "1.0" if method == "phased-aggression" else None,
                        "regret-vs-comparator": values[-1],
                        "regret-vs-best": values[-1] + 1,
                        "cumulative-payoff": -values[-1],
                        "max-prefix-loss": values[-1],
                        "final-alpha.alpha": 1.0,
                    }
                )
    return pd.DataFrame(rows), curves


def test_regret_curves_give_one_figure_per_game_and_horizon():
    results, curves = _results()
    out = RegretCurves().build(results, curves)
    assert set(out) == {
        "regret-curves-rock-paper-scissors-T1000",
        "regret-curves-rock-paper-scissors-T10000",
    }
    fig = out["regret-curves-rock-paper-scissors-T1000"]
    assert isinstance(fig, matplotlib.figure.Figure)
    assert fig.axes[0].get_xlabel() == "round t"
    assert "payoff units" in fig.axes[0].get_ylabel()


def test_regret_vs_horizon_table_has_a_column_per_t_with_mean_and_ci():
    results, curves = _results()
    out = RegretVsHorizon().build(results, curves)
    table = out["regret-vs-horizon"]
    assert list(table.columns) == [
        "dataset",
        "opponent",
        "method",
        "Reg(mu_c) T=1000",
        "Reg(best) T=1000",
        "Reg(mu_c) T=10000",
        "Reg(best) T=10000",
    ]
    exp3 = table[table["method"] == "exp3"].iloc[0]
    # mean over seeds of sqrt(T) + 0.1 seed, seeds 0..2: sqrt(1000) + 0.1; regret-vs-best + 1
    assert exp3["Reg(mu_c) T=1000"].startswith(f"{np.sqrt(1000) + 0.1:.2f} ± ")
    assert exp3["Reg(best) T=1000"].startswith(f"{np.sqrt(1000) + 1.1:.2f} ± ")
    assert isinstance(out["summary"], pd.DataFrame) and len(out["summary"]) == 4
    assert isinstance(out["regret-vs-horizon-plot"], matplotlib.figure.Figure)


def test_regret_vs_horizon_plot_is_a_game_by_opponent_grid_of_bounded_width():
    results, curves = _results()
    other = results.assign(
        dataset="kuhn-poker", cell_hash=results["cell_hash"] + "-k", **{"dataset.opponent": "fixed"}
    )
    frame = pd.concat([results, other], ignore_index=True)
    fig = RegretVsHorizon().build(frame, curves)["regret-vs-horizon-plot"]
    axes = fig.axes
    assert len(axes) == 4  # 2 games x 2 opponents, one grid cell each
    assert fig.get_size_inches()[0] * 110 <= 2000
    assert axes[0].get_xscale() == "log" and "horizon T" in axes[-1].get_xlabel()
    assert "payoff units" in axes[0].get_ylabel()
    assert len(fig.legends) == 1 and not any(ax.get_legend() for ax in axes)


def test_reports_ignore_failed_cells_and_other_tasks():
    results, curves = _results()
    results.loc[0, "status"] = "failed"
    results.loc[1, "task"] = "other"
    out = RegretVsHorizon().build(results, curves)
    summary = out["summary"]
    assert summary.shape[0] == 4


def test_mean_ci_uses_student_t():
    mean, half = mean_ci(np.array([1.0, 2.0, 3.0]))
    # t_{0.975, 2} = 4.303; sd = 1; sem = 1 / sqrt(3)
    assert mean == 2.0
    assert abs(half - 4.302653 / np.sqrt(3)) < 1e-5


def test_exponents_recover_a_power_law_and_refuse_non_positive_regret():
    # Per-seed regret 3 T^0.5 (1 + noise), three horizons, 20 seeds: the log-log slope of
    # the per-T means is 0.5 inside its 95% seed-bootstrap interval; the same data with T^1
    # gives 1 (so the fit follows the data, a wrong constant slope would fail one of the two).
    rng = np.random.default_rng(0)
    rows = []
    for exponent, method in ((0.5, "exp3"), (1.0, "linear")):
        for T in (1000, 10000, 100000):
            for seed in range(20):
                value = 3 * T**exponent * (1 + 0.05 * rng.standard_normal())
                rows.append(
                    {
                        "cell_hash": f"{method}{T}{seed}",
                        "task": "bandit-safe-regret",
                        "dataset": "rock-paper-scissors",
                        "method": method,
                        "status": "ok",
                        "dataset.T": str(T),
                        "dataset.opponent": "fixed",
                        "regret-vs-comparator": value,
                        "regret-vs-best": -value,
                    }
                )
    out = RegretVsHorizon().build(pd.DataFrame(rows), {})
    exponents = out["exponents"].set_index("method")
    for method, exponent in (("exp3", 0.5), ("linear", 1.0)):
        cell = exponents.loc[method, "Reg(mu_c) exponent"]
        slope, low, high = (
            float(x) for x in cell.replace("[", "").replace("]", "").replace(",", "").split()
        )
        assert abs(slope - exponent) < 0.02 and low < exponent < high
        assert exponents.loc[method, "Reg(best) exponent"] == "n/a"  # negative regret
    assert "regret-vs-best-plot" in out


def test_method_labels_spell_out_non_default_params_only():
    from harness_bandit_safe_regret.reports import _method_labels

    frame = pd.DataFrame(
        {
            "method": ["pa", "pa", "pa", "pa", "exp3"],
            "method.c0": ["1.0", "0.3", "1.0", "1.0", None],
            "method.reset": ["true", "True", "false", "true", None],
            "method.fixed_alpha": ["-1.0", "-1.0", "-1.0", "0.05", None],
        }
    )
    assert _method_labels(frame).tolist() == [
        "pa",
        "pa c0=0.3 (threshold scale)",
        "pa no learner reset",
        "pa alpha fixed at 0.05 (no phases)",
        "exp3",
    ]


def test_dataset_params_that_vary_split_the_rows():
    results, curves = _results()
    other = results.assign(
        cell_hash=results["cell_hash"] + "-e", **{"dataset.comparator_epsilon": "0.1"}
    )
    frame = pd.concat([results.assign(**{"dataset.comparator_epsilon": "0.0"}), other])
    table = RegretVsHorizon().build(frame, curves)["regret-vs-horizon"]
    assert set(table["dataset"]) == {
        "rock-paper-scissors (comparator_epsilon=0.0)",
        "rock-paper-scissors (comparator_epsilon=0.1)",
    }
