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

__all__ = ["StageCurves", "configuration_table", "t1_table"]

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


def _number(value: str) -> str:
    return f"{float(value):g}"


def _data_label(row: pd.Series) -> str:
    if row["dataset"] == "digits-binary":
        pair = row["dataset.pair"].replace("-vs-", " vs ")
        return f"digits {pair}, tau {_number(row['dataset.tau'])}"
    names = (("n", "n"), ("d", "d"), ("noise_sd", "sigma_p"), ("signal_norm", "mu"), ("tau", "tau"))
    return ", ".join(f"{label} {_number(row[f'dataset.{key}'])}" for key, label in names)


def _method_label(row: pd.Series) -> str:
    method = row["method"]
    if method == "two-layer-cnn":
        return (f"{method} (eta {_number(row['method.learning_rate'])}, m {row['method.width']},"
                f" {row['method.steps']} steps)")  # fmt: skip
    if method == "linear-logistic":
        return f"{method} (eta {_number(row['method.learning_rate'])})"
    if method == "small-loss-cnn":
        return f"{method} ({row['method.selection']})"
    return method


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def configuration_table(results: pd.DataFrame) -> str:
    """Markdown table of the seeds' mean per configuration (suite order): peak, final and
    returned test accuracy, T_1, the flipped labels fitted at T_1, T_2, those fitted at T_2
    and the test error at T_2 (``-``: a metric the configuration does not read)."""
    ok = results[results["status"].eq("ok")].assign(
        data=lambda f: f.apply(_data_label, axis=1), model=lambda f: f.apply(_method_label, axis=1)
    )
    columns = {"test-summary.peak": "{:.3f}", "test-summary.final": "{:.3f}",
               "test-summary.returned": "{:.3f}", "stage-one.t1": "{:.0f}",
               "stage-one.flipped_fit": "{:.3f}", "stage-two.t2": "{:.0f}",
               "stage-two.flipped_fit": "{:.3f}", "stage-two.test_error": "{:.4f}"}  # fmt: skip
    rows = []
    for (data, model), cells in ok.groupby(["data", "model"], sort=False):
        means = [cells[c].mean() if c in cells else np.nan for c in columns]
        shown = zip(means, columns.values(), strict=True)
        rows.append([data, model, *("-" if np.isnan(v) else f.format(v) for v, f in shown)])
    header = ["data", "method", "peak test", "final test", "returned", "T_1",
              "flipped fitted at T_1", "T_2", "flipped fitted at T_2",
              "test error at T_2"]  # fmt: skip
    return _markdown(header, rows)


def t1_table(results: pd.DataFrame) -> str:
    """Markdown table of T_1 per setting of the time-scale claim (the CNN on synthetic data
    with signal, tau = 0.2), against ``n m / (eta sigma_p^2 d)``: the CNN's mean (range) over
    seeds, its ratio to the theory's value, and the linear model's at the CNN's step."""
    ok = results[results["status"].eq("ok") & results["dataset"].eq("signal-noise-patches")]
    ok = ok[ok["dataset.tau"].astype(float).eq(0.2) & ok["dataset.signal_norm"].astype(float).gt(0)]
    keys = ["dataset.n", "dataset.d", "dataset.noise_sd", "method.learning_rate"]
    cnn = ok[ok["method"].eq("two-layer-cnn")]
    rows = []
    for key, cells in cnn.groupby([*keys, "method.width"]):
        n, d, sd, eta, m = (float(v) for v in key)
        theory = n * m / (eta * sd**2 * d)
        same = (ok[keys] == list(key[:4])).all(axis=1)  # the data and the CNN's step
        linear = ok.loc[ok["method"].eq("linear-logistic") & same, "stage-one.t1"]
        t1 = cells["stage-one.t1"]
        spread = [f"{t.mean():.1f} ({t.min():.0f}-{t.max():.0f})" for t in (t1, linear)]
        rows.append((theory, [*(_number(v) for v in key[:4]), key[4], f"{theory:g}", spread[0],
                              f"{t1.mean() / theory:.2f}", spread[1]]))  # fmt: skip
    header = ["n", "d", "sigma_p", "eta", "m", "n m / (eta sigma_p^2 d)", "CNN T_1 (mean, range)",
              "ratio", "linear T_1"]  # fmt: skip
    return _markdown(header, [row for _, row in sorted(rows, key=lambda r: r[0])])
