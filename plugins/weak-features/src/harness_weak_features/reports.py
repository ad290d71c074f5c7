"""Reports of the ``weak-features`` task: error vs estimation error, accuracy per method."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from harness import Report

__all__ = ["AccuracyByMethod", "ErrorVsEpsilon"]

TASK = "weak-features"


def _finished(results: pd.DataFrame) -> pd.DataFrame:
    if "status" in results:
        results = results[results["status"] == "ok"]
    return results[results["accuracy"].notna()] if "accuracy" in results else results.iloc[:0]


def _ci95(x: pd.Series) -> float:
    """Half-width of a normal 95% interval of the mean (0 for one seed)."""
    return float(1.96 * x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else 0.0


class ErrorVsEpsilon(Report):
    """Downstream test error against the feature-estimation error rate epsilon.

    Source: Sugiyama & Uchida, ICML 2025, experiments (``est_error_rate``): downstream error
    grows with the WF-estimation error; the dashed line ``err(0) + epsilon`` is the shape of
    the bound (estimation error + error on clean features), a reconstruction, not the paper's
    exact bound.

    Returns
    -------
    dict
        ``error-vs-epsilon`` (Figure, one line per dataset, mean and 95% CI over seeds) and
        ``error-vs-epsilon-table`` (DataFrame); empty without ``emulated-estimator`` cells.
    """

    name = "error-vs-epsilon"
    task = TASK

    def build(self, results: pd.DataFrame, curves: Mapping[str, Any]) -> dict[str, Any]:
        """Aggregate ``emulated-estimator`` cells by dataset and epsilon."""
        rows = _finished(results)
        if "method.epsilon" not in rows or rows.empty:
            return {}
        rows = rows[rows["method"] == "emulated-estimator"].copy()
        if rows.empty:
            return {}
        rows["epsilon"] = rows["method.epsilon"].astype(float)
        rows["error"] = 1.0 - rows["accuracy"].astype(float)
        table = (
            rows.groupby(["dataset", "epsilon"])["error"]
            .agg(error="mean", ci95=_ci95, n="count")
            .reset_index()
        )
        base = table[table["epsilon"] == table.groupby("dataset")["epsilon"].transform("min")]
        table["err0_plus_epsilon"] = table["dataset"].map(base.set_index("dataset")["error"])
        table["err0_plus_epsilon"] += table["epsilon"]
        fig, ax = plt.subplots(figsize=(6, 4))
        for dataset, part in table.groupby("dataset"):
            line = ax.errorbar(
                part["epsilon"],
                part["error"],
                yerr=part["ci95"],
                marker="o",
                capsize=3,
                label=dataset,
            )
            ax.plot(
                part["epsilon"], part["err0_plus_epsilon"], ls="--", lw=1, color=line[0].get_color()
            )
        ax.set_xlabel("WF-estimation error rate ε (fraction of wrong values)")
        ax.set_ylabel("downstream test error (1 − accuracy)")
        ax.set_title("Downstream error vs estimation error (dashed: err(0) + ε)")
        ax.legend()
        fig.tight_layout()
        return {"error-vs-epsilon": fig, "error-vs-epsilon-table": table}


class AccuracyByMethod(Report):
    """Test accuracy and WF-estimation accuracy per method, dataset, weak kind and rate.

    Source: ``docs/papers/weak-features.md`` §7 ordering (oracle >= WFL >= naive).

    Returns
    -------
    dict
        ``accuracy-by-method`` (DataFrame: mean accuracy over seeds, one column per method),
        ``wf-accuracy-by-method`` (same for wf-accuracy, where estimated) and
        ``accuracy-by-method-plot`` (Figure, one panel per dataset).
    """

    name = "accuracy-by-method"
    task = TASK

    def build(self, results: pd.DataFrame, curves: Mapping[str, Any]) -> dict[str, Any]:
        """Pivot mean accuracies over seeds."""
        rows = _finished(results)
        rows = rows[rows["method"] != "emulated-estimator"].copy()
        if rows.empty:
            return {}
        rows["weak_kind"] = rows.get("dataset.weak_kind", "?")
        rows["rate"] = rows.get("dataset.rate", "?")
        keys = ["dataset", "weak_kind", "rate"]
        out: dict[str, Any] = {}
        for metric in ("accuracy", "wf-accuracy"):
            if metric in rows and rows[metric].notna().any():
                vals = rows.assign(value=rows[metric].astype(float)).dropna(subset=["value"])
                out[f"{metric}-by-method"] = (
                    vals.pivot_table(index=keys, columns="method", values="value", aggfunc="mean")
                    .round(4)
                    .reset_index()
                )
        out["accuracy-by-method-plot"] = _bars(rows, keys)
        return out


def _bars(rows: pd.DataFrame, keys: list[str]) -> plt.Figure:
    """One panel per dataset, bars per (weak kind, rate) group; one shared legend below."""
    rows = rows.assign(accuracy=rows["accuracy"].astype(float))
    datasets = sorted(rows["dataset"].unique())
    methods = sorted(rows["method"].astype(str).unique())
    colours = [f"C{i % 10}" for i in range(len(methods))]
    fig, axes = plt.subplots(len(datasets), 1, figsize=(10, 2.6 * len(datasets)), squeeze=False)
    for ax, dataset in zip(axes[:, 0], datasets, strict=True):
        mean = (
            rows[rows["dataset"] == dataset]
            .pivot_table(index=keys[1:], columns="method", values="accuracy", aggfunc="mean")
            .reindex(columns=methods)
        )
        mean.plot.bar(ax=ax, width=0.85, color=colours, legend=False, rot=0)
        ax.set_xticklabels([_group_label(key) for key in mean.index], fontsize=9)
        low = np.nanmin(mean.to_numpy())
        ax.set_ylim(max(0.0, low - 0.05), min(1.0, np.nanmax(mean.to_numpy()) + 0.02))
        ax.set_title(f"{dataset}: test accuracy (mean over seeds)")
        ax.set_xlabel("weak kind, rate")
        ax.set_ylabel("test accuracy")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours]
    ncol = min(len(methods), 5)
    nrows = -(-len(methods) // ncol) if methods else 1
    fig.legend(handles, methods, loc="lower center", ncol=ncol, fontsize=8, title="method")
    fig.tight_layout(rect=(0, (0.35 + 0.2 * nrows) / fig.get_figheight(), 1, 1))
    return fig


def _group_label(key: object) -> str:
    """``("noisy", 0.3)`` -> ``"noisy 0.3"``."""
    parts = key if isinstance(key, tuple) else (key,)
    return " ".join(f"{p:g}" if isinstance(p, float) else str(p) for p in parts)
