"""Reports of the ``margin-qml`` task: do margins predict the generalisation gap?

Source: Hur & Park, ICML 2025, ``QPR/calculate_correlations.py`` (papers file §4): Kendall τ
(``scipy.stats.kendalltau``, nan_policy='omit') and histogram mutual information
(``np.histogram2d`` with round(√n) bins, log base 2) between each measure and the gap.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from harness import Curve, Report

__all__ = ["MEASURES", "MarginCorrelation", "correlation_table", "histogram_mi"]

GAP = "generalization-gap"
# label -> (metric column, family, axis label)
MEASURES: dict[str, tuple[str, str, str]] = {
    "Q1": ("margin-q25", "margin", "training-margin Q1 (misclassified = 0)"),
    "Q2": ("margin-q50", "margin", "training-margin median Q2 (misclassified = 0)"),
    "Q3": ("margin-q75", "margin", "training-margin Q3 (misclassified = 0)"),
    "mean": ("margin-mean", "margin", "mean signed training margin"),
    "#params": ("parameter-count", "parameters", "parameter count μ_param"),
    "eff>0.1": ("effective-parameters.above-0.1", "parameters", "#angles moved > 0.1 rad"),
    "eff>0.01": ("effective-parameters.above-0.01", "parameters", "#angles moved > 0.01 rad"),
}


def histogram_mi(x: np.ndarray, y: np.ndarray) -> float:
    """Mutual information I(x; y) in bits from a 2-D histogram with round(√n) bins per axis.

    Empty cells contribute nothing (the official code clamps them to 1e-10, which changes the
    sum by < 1e-8).

    Examples
    --------
    >>> x = np.repeat([0.0, 1.0], 50)
    >>> round(histogram_mi(x, x), 6)
    1.0
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    bins = max(1, round(np.sqrt(len(x))))
    joint, _, _ = np.histogram2d(x, y, bins=bins)
    pxy = joint / joint.sum()
    px, py = pxy.sum(1, keepdims=True), pxy.sum(0, keepdims=True)
    mask = pxy > 0
    return float((pxy[mask] * np.log2(pxy[mask] / (px @ py)[mask])).sum())


def _stats(df: pd.DataFrame, label: str) -> dict[str, float]:
    column = MEASURES[label][0]
    sub = df[[column, GAP]].dropna()
    x, g = sub[column].to_numpy(float), sub[GAP].to_numpy(float)
    if len(sub) < 3 or np.ptp(x) == 0 or np.ptp(g) == 0:
        return {"n": len(sub), "tau": np.nan, "p_value": np.nan, "mi_bits": np.nan}
    tau = kendalltau(g, x, nan_policy="omit")
    return {
        "n": len(sub),
        "tau": float(tau.statistic),
        "p_value": float(tau.pvalue),
        "mi_bits": histogram_mi(g, x),
    }


def _prepare(results: pd.DataFrame) -> pd.DataFrame:
    df = results[results["status"] == "ok"].copy() if "status" in results else results.copy()
    for column in [GAP] + [m[0] for m in MEASURES.values()]:
        if column in df:
            df[column] = pd.to_numeric(df[column], errors="coerce")
    df["noise"] = pd.to_numeric(df.get("dataset.noise", 0.0), errors="coerce").fillna(0.0)
    df["n_qubits"] = df.get("dataset.n_qubits", "?")
    return df


def correlation_table(results: pd.DataFrame) -> pd.DataFrame:
    """Kendall τ and MI of every measure against the gap, per noise level and pooled.

    Parameters
    ----------
    results : pandas.DataFrame
        One row per cell, with ``dataset``, ``dataset.noise``, ``dataset.n_qubits``, the gap
        and the measure columns of :data:`MEASURES`.

    Returns
    -------
    pandas.DataFrame
        Columns dataset, n_qubits, noise ("pooled" or the level), measure, family, n, tau,
        p_value, mi_bits; τ and MI are NaN where a measure or the gap is constant.
    """
    return _correlations(_prepare(results))


def _correlations(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`correlation_table` of results already passed through :func:`_prepare`."""
    rows = []
    for (dataset, n_qubits), part in df.groupby(["dataset", "n_qubits"], sort=True):
        scopes = [(f"{r:g}", part[part["noise"] == r]) for r in sorted(part["noise"].unique())]
        for scope, sub in [*scopes, ("pooled", part)]:
            for label, (column, family, _) in MEASURES.items():
                if column in sub and GAP in sub:
                    stats = _stats(sub, label)
                    rows.append(
                        {"dataset": dataset, "n_qubits": n_qubits, "noise": scope}
                        | {"measure": label, "family": family}
                        | stats
                    )
    return pd.DataFrame(rows)


def _claim(table: pd.DataFrame) -> pd.DataFrame:
    pooled = table[table["noise"] == "pooled"]
    rows = []
    for (dataset, n_qubits), part in pooled.groupby(["dataset", "n_qubits"]):
        best = part.groupby("family")["mi_bits"].max()
        margin, params = best.get("margin", np.nan), best.get("parameters", np.nan)
        rows.append(
            {
                "dataset": dataset,
                "n_qubits": n_qubits,
                "best margin MI (bits)": margin,
                "best parameter-count MI (bits)": params,
                "margins win": bool(margin > params),
            }
        )
    return pd.DataFrame(rows)


def _scatter(df: pd.DataFrame) -> plt.Figure:
    """One panel per measure against the gap, in a grid of at most four columns.

    A spare grid cell holds the legend; without one the legend goes below the grid.
    """
    labels = [k for k, v in MEASURES.items() if v[0] in df]
    n = max(len(labels), 1)
    ncols = min(4, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(3.4 * ncols, 3.0 * nrows), sharey=True, squeeze=False
    )
    levels = sorted(df["noise"].unique())
    colours = plt.cm.viridis(np.linspace(0, 0.9, max(len(levels), 1)))
    for ax, label in zip(axes.flat, labels, strict=False):
        for colour, r in zip(colours, levels, strict=True):
            sub = df[df["noise"] == r]
            ax.scatter(sub[MEASURES[label][0]], sub[GAP], s=12, color=colour, label=f"r = {r:g}")
        ax.set_xlabel(MEASURES[label][2], fontsize=8)
        ax.set_title(label)
    for row in axes:
        row[0].set_ylabel("generalisation gap\n(train − test accuracy)")
    spare = list(axes.flat)[len(labels) :]
    for ax in spare:
        ax.set_axis_off()
    handles, names = axes[0, 0].get_legend_handles_labels()
    if spare:
        spare[0].legend(handles, names, title="label noise", loc="center", fontsize=8)
        fig.tight_layout()
    else:
        fig.legend(
            handles, names, title="label noise", loc="lower center", ncol=len(names), fontsize=8
        )
        fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def _accuracy_table(df: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in ("dataset", "method", "method.shared", "method.layers", "noise") if c in df]
    cols = [c for c in ("train-accuracy", "test-accuracy", GAP, "margin-q50") if c in df]
    table = df.groupby(keys)[cols].agg(lambda s: pd.to_numeric(s, errors="coerce").mean())
    table["cells"] = df.groupby(keys).size()
    return table.reset_index()


class MarginCorrelation(Report):
    """Margins vs parameter counts as predictors of the generalisation gap.

    Source: Hur & Park, ICML 2025, Table 1 / ``calculate_correlations.py``: Kendall τ and
    histogram MI (bits) of Q1, Q2, Q3, mean margin, #params, #effective params against the
    gap, per label-noise level and pooled over levels.

    Returns
    -------
    dict
        ``correlations`` (table), ``claim`` (pooled best margin MI vs best parameter-count MI
        per dataset; the paper's claim is that margins win), ``accuracy`` (mean train/test
        accuracy, gap and Q2 per method, layers and noise) and ``scatter`` (figure).
    """

    name = "margin-correlation"
    task = "margin-qml"

    def build(
        self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]
    ) -> dict[str, object]:
        df = _prepare(results)
        if df.empty or GAP not in df:
            return {}
        table = _correlations(df)
        return {
            "correlations": table,
            "claim": _claim(table),
            "accuracy": _accuracy_table(df),
            "scatter": _scatter(df),
        }
