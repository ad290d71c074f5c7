"""Reports of the ``ftrl-shocks`` task: the distance to the boundary over time."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from harness import Curve, Report

if TYPE_CHECKING:  # pandas loads when a report is built, not at start-up
    import pandas as pd

__all__ = ["BoundaryOverTime"]

METRIC = "boundary-curve"


def _label(row: pd.Series) -> str:
    parts = [row["method"], f"sigma={row.get('method.sigma', '')}"]
    if isinstance(row.get("method.mean_reversion"), str):
        parts.append(f"theta={row['method.mean_reversion']}")
    if row.get("method.regularizer") not in (None, "entropic") and isinstance(
        row.get("method.regularizer"), str
    ):
        parts.append(row["method.regularizer"])
    return " ".join(parts)


class BoundaryOverTime(Report):
    """Mean distance to the boundary (smallest action probability) against time, one panel
    per game, one line per method configuration (mean over seeds of each seed's mean over
    paths), with the table of the values at the start and the end.

    Source: Cauvin, Legacci, Mertikopoulos, ICML 2025 (arXiv 2506.13286), abstract (read):
    shocks make the dynamics "drift toward the boundary on average".
    """

    name = "boundary-over-time"
    task = "ftrl-shocks"

    def build(self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        import matplotlib.pyplot as plt

        ok = results[results["status"].eq("ok")]
        ok = ok[[METRIC in curves.get(h, {}) for h in ok["cell_hash"]]]
        if ok.empty:
            return {}
        ok = ok.assign(label=ok.apply(_label, axis=1))
        datasets = sorted(ok["dataset"].unique())
        fig, axes = plt.subplots(
            1, len(datasets), figsize=(4.5 * len(datasets), 3.6), squeeze=False
        )
        rows = []
        for ax, dataset in zip(axes[0], datasets, strict=True):
            for label, cells in ok[ok["dataset"].eq(dataset)].groupby("label"):
                values = np.stack([curves[h][METRIC].values for h in cells["cell_hash"]])
                horizon = float(cells["method.horizon"].iloc[0])
                t = np.linspace(0.0, horizon, values.shape[1])
                ax.plot(t, values.mean(axis=0), label=label)
                rows.append((dataset, label, len(cells), values[:, 0].mean(), values[:, -1].mean()))
            ax.set(title=dataset, xlabel="time t", ylabel="mean smallest action probability")
            ax.legend(fontsize=7)
        fig.tight_layout()
        import pandas as pd

        table = pd.DataFrame(rows, columns=["dataset", "method", "seeds", "start", "final"])
        return {"boundary-over-time": fig, "boundary-start-final": table}
