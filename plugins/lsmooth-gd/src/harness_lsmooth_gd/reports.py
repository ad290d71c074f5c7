"""Reports of the ``lsmooth-gd`` task: the benchopt-style convergence plot and table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from harness import Curve, Report

if TYPE_CHECKING:  # pandas is imported by the results, not by start-up
    import pandas as pd

__all__ = ["CallsTable", "ConvergenceCurves"]

TASK = "lsmooth-gd"
CURVE = "suboptimality-per-eval"
FLOOR = 1e-16


def _pyplot():
    """matplotlib.pyplot with the Agg backend, imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label(row: pd.Series) -> str:
    growth = row.get("method.ell_growth")
    if row["method"] == "gd-lsmooth" and str(growth).lower() == "false":
        return "gd-lsmooth (l frozen)"
    return str(row["method"])


def _configuration(row: pd.Series) -> str:
    start = row.get("dataset.start_grad")
    return f"{row['dataset']} (start_grad={float(start):g})" if start == start else row["dataset"]


class ConvergenceCurves(Report):
    """f(x_k) - f* against oracle calls, one panel per dataset configuration that logged the
    ``suboptimality-per-eval`` curve, one thin line per starting point, a colour per method
    (log scale, floored at 1e-16).

    Source: the convergence plots of benchopt benchmarks (objective against time or
    iterations); Tyurin, ICML 2025 (arXiv 2412.11773), abstract, for the quantity.

    Returns
    -------
    dict
        ``convergence``: one Figure.
    """

    name = "convergence-curves"
    task = TASK

    def build(self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        frame = results[results["status"].eq("ok")]
        frame = frame[[CURVE in curves.get(h, {}) for h in frame["cell_hash"]]]
        if frame.empty:
            return {}
        frame = frame.assign(
            _label=frame.apply(_label, axis=1), _panel=frame.apply(_configuration, axis=1)
        )
        panels = sorted(frame["_panel"].unique())
        labels = sorted(frame["_label"].unique())
        colours = {label: f"C{i % 10}" for i, label in enumerate(labels)}
        plt = _pyplot()
        fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False)
        for ax, panel in zip(axes.flat, panels, strict=True):
            for _, row in frame[frame["_panel"].eq(panel)].iterrows():
                curve = curves[row["cell_hash"]][CURVE]
                values = np.maximum(curve.values, FLOOR)
                ax.loglog(curve.steps, values, color=colours[row["_label"]], lw=0.8, alpha=0.6)
            ax.set(title=panel, xlabel="oracle calls", ylabel="f(x_k) - f*")
        handles = [plt.Line2D([], [], color=colours[label], label=label) for label in labels]
        fig.legend(handles=handles, loc="lower center", ncol=min(4, len(labels)), fontsize=8)
        fig.tight_layout(rect=(0, 0.12, 1, 1))
        return {"convergence": fig}


class CallsTable(Report):
    """Oracle calls to the tolerance per dataset configuration and method: median over the
    starting points, and how many reached it (``evals-to-tolerance``).

    Source: Tyurin, ICML 2025 (arXiv 2412.11773), abstract: the complexity to an
    eps-solution, which its theorems bound.

    Returns
    -------
    dict
        ``calls-to-tolerance``: DataFrame, one row per (configuration, method).
    """

    name = "calls-table"
    task = TASK

    def build(self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        frame = results[results["status"].eq("ok")]
        if "evals-to-tolerance.evals" not in frame:
            return {}
        frame = frame[frame["evals-to-tolerance.evals"].notna()]
        frame = frame.assign(configuration=frame.apply(_configuration, axis=1),
                             method_label=frame.apply(_label, axis=1))  # fmt: skip
        table = frame.groupby(["configuration", "method_label"]).agg(
            median_calls=("evals-to-tolerance.evals", "median"),
            reached=("evals-to-tolerance.reached", "sum"),
            starts=("seed", "nunique"),
        )
        return {"calls-to-tolerance": table.reset_index()}
