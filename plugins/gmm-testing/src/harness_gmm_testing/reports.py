"""Reports of the ``gmm-testing`` task: power against n, and the n that reaches power 0.9."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from harness import Curve, Report, Skip

__all__ = ["PowerCurves", "power_table"]

_TARGET = 0.9
_UNLABELLED = {"method.calibration_trials"}
_DERIVED = {
    "n",
    "trials",
    "matched_degree",
    "signal",
    "components",
    "w_min",
    "max_centre",
    "min_gap",
    "predicted_n90",
}


def _label(row: pd.Series, columns: list[str], prefix: str) -> str:
    extras = [f"{c.removeprefix(prefix)}={row[c]}" for c in columns if pd.notna(row[c])]
    return f"{row[prefix[:-1]]} ({', '.join(extras)})" if extras else str(row[prefix[:-1]])


def _tidy(results: pd.DataFrame) -> pd.DataFrame:
    """Finished cells with a power rate, labelled by dataset group and method variant."""
    if "power.rate" not in results or "dataset.n" not in results:
        raise Skip("no cell logged power.rate and dataset.n")
    df = results[(results["status"] == "ok") & results["power.rate"].notna()].copy()
    if df.empty:
        raise Skip("no finished cell with a power value")
    df["n"] = df["dataset.n"].astype(float).astype(int)
    group_cols = sorted(
        c for c in df if c.startswith("dataset.") and c.removeprefix("dataset.") not in _DERIVED
    )
    df["group"] = [_label(r, group_cols, "dataset.") for _, r in df.iterrows()]
    df["variant"] = df["method"].astype(str)
    for _, rows in df.groupby("method"):
        varying = sorted(
            c
            for c in rows
            if c.startswith("method.") and c not in _UNLABELLED and rows[c].nunique() > 1
        )
        if varying:
            df.loc[rows.index, "variant"] = [
                _label(r, varying, "method.") for _, r in rows.iterrows()
            ]
    df["predicted"] = (
        df["dataset.predicted_n90"].astype(float) if "dataset.predicted_n90" in df else np.nan
    )
    return df


def power_table(results: pd.DataFrame) -> pd.DataFrame:
    """Smallest grid n whose power (mean over seeds) is >= 0.9, per dataset group and method.

    Returns
    -------
    DataFrame
        Columns ``dataset``, ``method``, ``n_power_0.9`` (NaN if the grid never reaches it),
        ``max_power`` and its ``n``, ``mean_type1_error`` over the grid, and
        ``predicted_n90`` (the Hermite test's normal-approximation prediction).
    """
    return _power_table(_tidy(results))


def _power_table(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`power_table` of an already tidied table (see :func:`_tidy`)."""
    if "type1-error.rate" not in df:
        df = df.assign(**{"type1-error.rate": np.nan})
    rows = []
    for (group, variant), cell in df.groupby(["group", "variant"], sort=True):
        curve = cell.groupby("n")[["power.rate", "type1-error.rate"]].mean().sort_index()
        reached = curve.index[curve["power.rate"] >= _TARGET]
        rows.append(
            {
                "dataset": group,
                "method": variant,
                "n_power_0.9": int(reached[0]) if len(reached) else np.nan,
                "max_power": float(curve["power.rate"].max()),
                "n_max": int(curve.index.max()),
                "mean_type1_error": float(curve["type1-error.rate"].mean()),
                "predicted_n90": float(cell["predicted"].iloc[0]),
            }
        )
    return pd.DataFrame(rows)


class PowerCurves(Report):
    """Power against n (log axis) for every method, one panel per dataset configuration,
    with the predicted n at which the oracle Hermite test reaches power 0.9; and a table of
    the smallest grid n reaching power 0.9 per method.

    Source: shared/papers/gmm-testing.md §5 (n_0.9 and its prediction
    ``2.93 sqrt(2 C(d+m, m+1)) / lambda^2``).

    Returns
    -------
    dict
        ``power-vs-n``: Figure; ``n-power-0.9``: DataFrame (see :func:`power_table`).
    """

    name = "power-curves"
    task = "gmm-testing"

    def build(self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        df = _tidy(results)
        groups = sorted(df["group"].unique())
        fig = Figure(figsize=(7.5, 4.2 * len(groups)))
        axes = fig.subplots(len(groups), 1, squeeze=False)
        for ax, group in zip(axes[:, 0], groups, strict=True):
            _panel(ax, df[df["group"] == group], group)
        fig.tight_layout()
        return {"power-vs-n": fig, "n-power-0.9": _power_table(df)}


def _panel(ax: Any, df: pd.DataFrame, title: str) -> None:
    for variant, cell in df.groupby("variant", sort=True):
        curve = cell.groupby("n")["power.rate"].mean().sort_index()
        ax.plot(curve.index, curve.values, marker="o", label=variant)
    predicted = df["predicted"].dropna()
    # draw the prediction only where it falls near the grid (a control has n_0.9 ~ 2)
    if not predicted.empty and df["n"].min() / 10 <= predicted.iloc[0] <= df["n"].max() * 10:
        ax.axvline(
            predicted.iloc[0], color="grey", linestyle="--", label="predicted n (Hermite, 0.9)"
        )
    ax.axhline(_TARGET, color="black", linewidth=0.6, linestyle=":")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("sample size n (samples per test)")
    ax.set_ylabel("power at level alpha (fraction of H1 samples rejected)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="best")
