"""The tables as text: round-off noise prints as zero, sub-keys stay together, one huge value
does not zero the others, a Monte Carlo spread is never ranked."""

from __future__ import annotations

import pandas as pd
import toy_plugin

import harness
from harness.plugins.registry import build_registry
from harness.reports.aggregates import format_number, summary_stats
from harness.reports.tables import summary_table


def test_round_off_noise_prints_as_zero_and_sub_keys_stay_together(registry):
    rows = pd.DataFrame(
        {
            "cell_hash": list("ab"),
            "run_id": list("ab"),
            "task": ["toy"] * 2,
            "dataset": ["noise"] * 2,
            "method": ["mean"] * 2,
            "seed": ["0", "1"],
            "status": ["ok"] * 2,
            "stats.min": [-2.22e-13, 2.22e-13],
            "abs-error": [1.0, 1.0],
            "stats.max": [3.0, 3.0],
        }
    )
    table = summary_table(rows, registry)
    assert list(table.columns) == ["seeds", "stats.min", "stats.max", "abs-error ↓"]
    assert table.iloc[0]["stats.min"].startswith("0 ± ")
    assert table.iloc[0]["abs-error ↓"] == "1 ± 0"
    assert summary_stats(rows, registry)["std_error"].iloc[1] == 0.0
    assert format_number(0.03799711350757817) == "0.038"


def test_one_huge_value_does_not_print_real_values_as_zero(registry):
    """The noise floor follows the column's typical magnitude, not its largest: next to
    1e308, a real 1.5e9 is shown (it printed "0" when the floor was 1e-9 of the maximum),
    while round-off next to values of order 1 still prints as 0."""
    rows = pd.DataFrame(
        {
            "cell_hash": list("abcd"),
            "run_id": list("abcd"),
            "task": ["toy"] * 4,
            "dataset": ["noise"] * 4,
            "method": ["mean"] * 4,
            "seed": ["0"] * 4,
            "status": ["ok"] * 4,
            "method.shift": ["0", "1", "2", "3"],
            "abs-error": [1e308, 1.5e9, 1.0, -2.2e-13],
        }
    )
    texts = list(summary_table(rows, registry)["abs-error ↓"])
    assert texts == ["1e+308", "1.5e+09", "1", "0"], texts


def test_a_monte_carlo_spread_is_never_ranked():
    from harness.reports.aggregates import direction

    class Power(toy_plugin.Stats):
        name = "power"
        higher_is_better = True

    class Spread:
        @harness.hookimpl
        def harness_metrics(self):
            return [Power]

    built = build_registry({"toy": toy_plugin, "spread": Spread()}, entry_points=False)
    assert direction("power.rate", "toy", built) is True
    assert direction("power.mc_sd", "toy", built) is None
    assert direction("power.se", "toy", built) is None
