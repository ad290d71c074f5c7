"""Reports of the ``weak-features`` task: error vs epsilon, paired gains, accuracy per method.

matplotlib and scipy are imported when a report is built, so registering the plugin stays
light.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness import LazyModule, Report
from harness.reports.aggregates import mean_ci

pd = LazyModule("pandas")

__all__ = ["AccuracyByMethod", "ErrorVsEpsilon", "PairedGain"]

TASK = "weak-features"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _finished(results: pd.DataFrame) -> pd.DataFrame:
    if "status" in results:
        results = results[results["status"] == "ok"]
    results = results[results["accuracy"].notna()] if "accuracy" in results else results.iloc[:0]
    return _label_weak_columns(results)


def _label_weak_columns(rows: pd.DataFrame) -> pd.DataFrame:
    """Tell apart configurations of one dataset that differ in ``weak_columns``.

    Where a dataset was run with several ``dataset.weak_columns`` values, its name becomes
    ``"adult[workclass,education]"`` so tables and plots keyed by dataset do not pool them.
    """
    if rows.empty or "dataset.weak_columns" not in rows:
        return rows
    columns = rows["dataset.weak_columns"].astype(str)
    several = columns.groupby(rows["dataset"]).transform("nunique") > 1
    if not several.any():
        return rows
    rows = rows.copy()
    rows.loc[several, "dataset"] = rows.loc[several, "dataset"] + "[" + columns[several] + "]"
    return rows


def _ci95(x: pd.Series) -> float:
    """Half-width of a Student-t 95% interval of the mean (NaN for one seed)."""
    return mean_ci(x)[1]


def _variants(rows: pd.DataFrame) -> pd.Series:
    """``method`` or ``method(p=v, ...)`` with the ``method.*`` params that vary per method."""
    labels = rows["method"].astype(str).copy()
    for name, group in rows.groupby("method"):
        cols = [c for c in group.columns if c.startswith("method.") and group[c].nunique() > 1]
        if cols:
            text = (
                group[cols]
                .astype(str)
                .apply(lambda r, cols=cols: ", ".join(f"{c[7:]}={r[c]}" for c in cols), axis=1)
            )
            labels.loc[group.index] = f"{name}(" + text + ")"
    return labels


class ErrorVsEpsilon(Report):
    """Downstream test error and logistic loss against the feature-estimation error rate epsilon,
    with the paper's bound on the logistic loss.

    Source: Sugiyama & Uchida, ICML 2025, experiments (``est_error_rate``): downstream error
    grows with the WF-estimation error. The bound (metric ``wfl-bound``, the authors'
    ``calc_bound.ipynb``) bounds the logistic-loss risk, so it is drawn in the logistic-loss
    panel, next to the measured test logistic loss (metric ``logistic-loss``), never on the
    0-1 error panel.

    Returns
    -------
    dict
        ``error-vs-epsilon`` (Figure: left, downstream 0-1 error; right, where logged, the test
        logistic loss and the bound, log scale; one line per dataset and label model, mean and
        Student-t 95% CI over seeds), ``error-vs-epsilon-table`` (DataFrame: mean error, CI,
        seed count, and where logged the mean logistic loss, mean bound and the number of seeds
        whose loss is above their bound) and ``error-vs-epsilon-per-seed`` (DataFrame: every
        cell's measured error, WF-estimation error, logistic loss and bound with its two
        parts); empty without ``emulated-estimator`` cells.
    """

    name = "error-vs-epsilon"
    task = TASK

    def build(self, results: pd.DataFrame, curves: Mapping[str, Any]) -> dict[str, Any]:
        """Aggregate ``emulated-estimator`` cells by dataset, label model and epsilon."""
        rows = _finished(results)
        if "method.epsilon" not in rows or rows.empty:
            return {}
        rows = rows[rows["method"] == "emulated-estimator"].copy()
        if rows.empty:
            return {}
        rows["epsilon"] = rows["method.epsilon"].astype(float)
        rows["label_model"] = (
            rows["method.label_model"].fillna("logistic")
            if "method.label_model" in rows
            else "logistic"
        )
        rows["error"] = 1.0 - rows["accuracy"].astype(float)
        rows["wf_error"] = (
            1.0 - rows["wf-accuracy"].astype(float) if "wf-accuracy" in rows else np.nan
        )
        extra = {
            "logistic_loss": "logistic-loss",
            "bound": "wfl-bound.bound",
            "complexity": "wfl-bound.complexity",
            "estimation": "wfl-bound.estimation",
        }
        for col, metric in extra.items():
            rows[col] = rows[metric].astype(float) if metric in rows else np.nan
        has_bound = bool(rows["bound"].notna().any() and rows["logistic_loss"].notna().any())
        keys = ["dataset", "label_model", "epsilon"]
        cols = ["error", "wf_error", *(extra if has_bound else [])]
        per_seed = rows[[*keys, "seed", *cols]].sort_values([*keys, "seed"])
        grouped = rows.groupby(keys)
        table = grouped["error"].agg(error="mean", ci95=_ci95, n="count")
        if has_bound:
            table["logistic_loss"] = grouped["logistic_loss"].mean()
            table["loss_ci95"] = grouped["logistic_loss"].agg(_ci95)
            table["bound"] = grouped["bound"].mean()
            table["seeds_above_bound"] = (
                (rows["logistic_loss"] > rows["bound"]).groupby([rows[k] for k in keys]).sum()
            )
        table = table.reset_index()
        return {
            "error-vs-epsilon": _epsilon_figure(table, has_bound),
            "error-vs-epsilon-table": table,
            "error-vs-epsilon-per-seed": per_seed.reset_index(drop=True),
        }


def _short_dataset(name: str) -> str:
    """``adult[a,b,c,d]`` -> ``adult[4 weak columns]`` for legends; short names unchanged."""
    if "[" in name and name.endswith("]"):
        base, inner = name[:-1].split("[", 1)
        if inner.count(",") >= 2:
            return f"{base}[{inner.count(',') + 1} weak columns]"
    return name


def _epsilon_figure(table: pd.DataFrame, has_bound: bool):
    """Left: 0-1 error against epsilon. Right (with the bound): logistic loss and bound.

    Colour: dataset; line style: label model h (solid logistic, dashed MLP); the bound (dotted,
    triangles) depends on the data and the estimates, not on h, so it is drawn once per
    dataset (mean over the label models' cells).
    """
    plt = _pyplot()
    from matplotlib.lines import Line2D

    ncols = 2 if has_bound else 1
    fig, axes = plt.subplots(1, ncols, figsize=(7.5 + 4.5 * (ncols - 1), 4), squeeze=False)
    datasets = sorted(table["dataset"].unique())
    colour = {d: f"C{i % 10}" for i, d in enumerate(datasets)}
    dashes = {"logistic": "-", "mlp": "--"}
    for (dataset, label_model), part in table.groupby(["dataset", "label_model"]):
        style = {"color": colour[dataset], "ls": dashes.get(label_model, "-.")}
        axes[0, 0].errorbar(
            part["epsilon"],
            part["error"],
            yerr=part["ci95"].fillna(0.0),
            marker="o",
            capsize=3,
            label=f"{_short_dataset(dataset)}, h = {label_model}",
            **style,
        )
        if has_bound:
            axes[0, 1].errorbar(
                part["epsilon"],
                part["logistic_loss"],
                yerr=part["loss_ci95"].fillna(0.0),
                marker="o",
                capsize=3,
                **style,
            )
    if has_bound:
        for dataset, part in table.groupby("dataset"):
            bound = part.groupby("epsilon")["bound"].mean()
            axes[0, 1].plot(
                bound.index, bound.to_numpy(), marker="^", color=colour[dataset], ls=":", lw=1.5
            )
    ax = axes[0, 0]
    ax.set_xlabel("WF-estimation error rate ε (fraction of wrong values)")
    ax.set_ylabel("downstream test error (1 − accuracy)")
    ax.set_title("Downstream 0-1 error (mean, 95% CI over seeds)", fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    if has_bound:
        ax = axes[0, 1]
        ax.set_yscale("log")
        ax.set_xlabel("WF-estimation error rate ε (fraction of wrong values)")
        ax.set_ylabel("test logistic loss (nats), log scale")
        ax.set_title(
            "Test logistic loss (o, 95% CI) and the paper's bound on it\n"
            "(dotted ▲; authors' constants δ = 1e-4, B = 1, U_l = 2, R* = 0)",
            fontsize=10,
        )
        handles.append(Line2D([], [], color="grey", ls=":", marker="^"))
        labels.append("bound (one per dataset)")
    fig.legend(
        handles,
        labels,
        loc="upper left",
        bbox_to_anchor=(0.99, 0.95),
        fontsize=8,
        title="dataset, label model h",
    )
    fig.tight_layout()
    return fig


class PairedGain(Report):
    """Paired-seed accuracy gain of every method over a baseline, with a 95% CI and p-value.

    Source: paired comparison over seeds (same data, split and corruption per seed): the
    difference ``accuracy(method) - accuracy(baseline)`` per seed, its mean, Student-t 95%
    confidence interval and two-sided paired t-test p-value (``scipy.stats.ttest_rel``).

    Parameters
    ----------
    baseline : str, default="naive"
        Method (name, default params) every other method is compared with.
    metric : str, default="accuracy"
        Metric column compared.

    Returns
    -------
    dict
        ``paired-gain-table`` (DataFrame: dataset, weak_kind, rate, method, mean gain,
        ci_low, ci_high, p_value, n_seeds); empty when no seed has both methods.
    """

    name = "paired-gain"
    task = TASK

    @dataclass
    class Params:
        baseline: str = "naive"
        metric: str = "accuracy"

    @staticmethod
    def interval(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
        """Mean of ``a - b`` (paired by position), Student-t 95% CI half-width, paired t-test
        p-value (``scipy.stats.ttest_rel``; 0 or 1 when every difference is equal)."""
        from scipy import stats

        diff = a - b
        mean, half, _ = mean_ci(diff)
        if diff.std() == 0:
            return mean, 0.0, 0.0 if mean != 0 else 1.0
        return mean, half, float(stats.ttest_rel(a, b).pvalue)

    def build(self, results: pd.DataFrame, curves: Mapping[str, Any]) -> dict[str, Any]:
        """Pair cells by (dataset config, seed) and summarise the differences."""
        rows = _finished(results)
        metric, base = self.params.metric, self.params.baseline
        if rows.empty or metric not in rows:
            return {}
        rows = rows[rows["method"] != "emulated-estimator"].copy()
        rows["variant"] = _variants(rows)
        rows["weak_kind"] = rows.get("dataset.weak_kind", "?")
        rows["rate"] = rows.get("dataset.rate", "?")
        rows["value"] = rows[metric].astype(float)
        keys = ["dataset", "weak_kind", "rate"]
        wide = rows.pivot_table(index=[*keys, "seed"], columns="variant", values="value")
        if base not in wide:
            return {}
        out = []
        for key, part in wide.groupby(level=keys):
            for variant in part.columns:
                if variant == base:
                    continue
                both = part[[variant, base]].dropna()
                if len(both) < 2:
                    continue
                mean, half, p = self.interval(both[variant].to_numpy(), both[base].to_numpy())
                out.append((*key, variant, mean, mean - half, mean + half, p, len(both)))
        if not out:
            return {}
        table = pd.DataFrame(
            out, columns=[*keys, "method", "gain", "ci_low", "ci_high", "p_value", "n_seeds"]
        )
        return {"paired-gain-table": table.round(4)}


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
        rows["method"] = _variants(rows)
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


def _bars(rows: pd.DataFrame, keys: list[str]):
    """One panel per dataset, bars per (weak kind, rate) group; one shared legend below."""
    plt = _pyplot()
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
        ax.set_xlabel("weak kind and corruption rate (complementary: bias towards v + 1)")
        ax.set_ylabel("test accuracy")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours]
    ncol = min(len(methods), 5)
    nrows = -(-len(methods) // ncol) if methods else 1
    fig.legend(handles, methods, loc="lower center", ncol=ncol, fontsize=8, title="method")
    fig.tight_layout(rect=(0, (0.35 + 0.2 * nrows) / fig.get_figheight(), 1, 1))
    return fig


def _group_label(key: object) -> str:
    """``("noisy", 0.3)`` -> ``"noisy\nrate 0.3"`` (two lines); complementary rates are biases."""
    parts = key if isinstance(key, tuple) else (key,)
    if len(parts) != 2:
        return " ".join(str(p) for p in parts)
    kind, rate = parts
    rate = f"{rate:g}" if isinstance(rate, float) else str(rate)
    word = {"complementary": "bias", "partial": "q"}.get(str(kind), "rate")
    return f"{kind}\n{word} {rate}"
