"""Report of the ``label-noise`` task: the paper's synthetic figure (coefficients on top,
training and test accuracies below, one column per data configuration) for the two-layer CNN,
and a table of peak, final and returned test accuracy per configuration and method.

Source: Han et al., ICML 2025, synthetic figure (with and without label noise).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from harness import Curve, LazyModule, Report, Skip

pd = LazyModule("pandas")

__all__ = ["StageCurves"]

# metric: (legend label, colour), the same colour for the same quantity in every panel
_TOP = {"signal-coefficient": ("max gamma", "C0"), "noise-coefficient-noisy": ("rho (flipped)",
        "C1"), "noise-coefficient-clean": ("rho (clean)", "C2")}  # fmt: skip
_BOTTOM = {"train-accuracy-clean": ("train, clean", "C0"), "train-accuracy-noisy":
           ("train, flipped", "C1"), "test-accuracy": ("test", "C3")}  # fmt: skip
_CONFIG = ("dataset.pair", "dataset.signal_norm", "dataset.tau")


def _pyplot():
    """matplotlib.pyplot with the Agg backend, imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _mean_curve(cells: list[Curve]) -> tuple[np.ndarray, np.ndarray]:
    """Mean over cells at the steps every cell recorded."""
    steps = set(cells[0].steps.tolist())
    for c in cells[1:]:
        steps &= set(c.steps.tolist())
    keep = np.array(sorted(steps))
    values = [c.values[np.searchsorted(c.steps, keep)] for c in cells]
    return keep, np.mean(values, axis=0)


def _label(row: pd.Series) -> str:
    parts = [f"{c.split('.')[1]}={row[c]}" for c in _CONFIG if c in row and isinstance(row[c], str)]
    return f"{row['dataset']} " + ", ".join(parts)


class StageCurves(Report):
    """Mean curves of the two-layer CNN per data configuration, and test accuracies.

    Source: Han et al., ICML 2025, synthetic figure; Theorems 4.1-4.2.

    Returns
    -------
    dict
        ``stages-<k>``: a figure per dataset (columns: configurations with curves; top: max gamma
        and mean max rho on flipped and clean samples; bottom: training accuracy on clean and
        flipped samples against the observed labels, and test accuracy; log iteration
        axis, mean over seeds); ``test-accuracy``: a table of mean peak, final and
        returned test accuracy per configuration and method.
    """

    name = "stage-curves"
    task = "label-noise"

    def build(self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        ok = results[results["status"].eq("ok")].copy()
        if ok.empty:
            raise Skip("no finished cells")
        ok["config"] = ok.apply(_label, axis=1)
        out = {}
        cnn = ok[ok["method"].eq("two-layer-cnn")]
        for k, (dataset, cells) in enumerate(cnn.groupby("dataset")):
            figure = self._figure(cells, curves)
            if figure is not None:  # a dataset whose cells logged no curve draws none
                out[f"stages-{k}-{dataset}"] = figure
        columns = [c for c in ("test-summary.peak", "test-summary.final", "test-summary.returned")
                   if c in ok]  # fmt: skip
        if columns:
            table = ok.groupby(["config", "method"])[columns].mean().round(4)
            table["seeds"] = ok.groupby(["config", "method"])["seed"].nunique()
            out["test-accuracy"] = table.reset_index()
        return out

    def _figure(self, cells: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]):
        plt = _pyplot()
        drawn = {*_TOP, *_BOTTOM}
        configs = [c for c in sorted(cells["config"].unique())
                   if any(drawn & set(curves.get(h, {}))
                          for h in cells.loc[cells["config"].eq(c), "cell_hash"])]  # fmt: skip
        if not configs:
            return None
        fig, axes = plt.subplots(2, len(configs), figsize=(4.2 * len(configs), 6.4),
                                 squeeze=False, sharex=True)  # fmt: skip
        for col, config in enumerate(configs):
            hashes = cells.loc[cells["config"].eq(config), "cell_hash"]
            for row, names in enumerate((_TOP, _BOTTOM)):
                ax = axes[row, col]
                for metric, (label, colour) in names.items():
                    found = [curves[h][metric] for h in hashes if metric in curves.get(h, {})]
                    if found:
                        steps, mean = _mean_curve(found)
                        ax.plot(np.maximum(steps, 0.5), mean, label=label, color=colour)
                ax.set_xscale("log")
                if ax.lines:
                    ax.legend(fontsize=7)
            axes[0, col].set_title(config, fontsize=8)
            axes[1, col].set_xlabel("iteration")
        axes[0, 0].set_ylabel("coefficient")
        axes[1, 0].set_ylabel("accuracy (train: observed labels)")
        fig.tight_layout()
        return fig
