"""Reports of the ``fair-regression`` task: risk-unfairness trade-off and fair-risk rates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness import Curve, Report

__all__ = ["FairRiskRate", "RiskUnfairness", "TradeOff", "fitted_slope", "slope_table"]

TASK = "fair-regression"


def _ok(results):
    df = results
    if "task" in df:
        df = df[df["task"] == TASK]
    if "status" in df:
        df = df[df["status"] == "ok"]
    df = df.copy()
    if "method.regressor" not in df:
        df["method.regressor"] = "-"
    df["method.regressor"] = df["method.regressor"].fillna("-").astype(str)
    df["variant"] = _method_variants(df)
    df["label"] = (
        df["method"].astype(str)
        + " / "
        + df["method.regressor"]
        + df["variant"].map(lambda v: f" ({v})" if v else "")
    )
    df["panel"] = _dataset_labels(df)
    return df


def _method_variants(df):
    """Per row, the method params other than ``regressor`` that vary within its method
    (``alpha=0.25``), so that a method's configurations are not averaged together."""
    out = df["method"].astype(str).map(lambda _: "")
    columns = [c for c in df.columns if c.startswith("method.") and c != "method.regressor"]
    for _, part in df.groupby("method"):
        varying = [c for c in columns if part[c].astype(str).nunique() > 1]
        if varying:
            out.loc[part.index] = (
                part[varying]
                .astype(str)
                .apply(
                    lambda row, cols=varying: ", ".join(
                        f"{c.removeprefix('method.')}={row[c]}" for c in cols
                    ),
                    axis=1,
                )
            )
    return out


_FACTS = {"dataset.n_features", "dataset.groups", "dataset.cost_of_fairness"}


def _dataset_labels(df, skip: tuple[str, ...] = ()):
    """``dataset`` plus the dataset params that vary within it (``synthetic-linear
    (n_train=250)``), so that configurations are not averaged together; params in ``skip``
    (and described facts such as the split sizes) are left out."""
    labels = df["dataset"].astype(str)
    skipped = {f"dataset.{k}" for k in skip}
    if "dataset.n_train" in skipped:  # described sizes follow the declared ones
        skipped |= {"dataset.n_calib", "dataset.n_test"}
    columns = [
        c
        for c in df.columns
        if c.startswith("dataset.")
        and c not in skipped
        and c not in _FACTS
        and not c.startswith("dataset.p_")
    ]
    for name, part in df.groupby("dataset"):
        varying = [c for c in columns if part[c].astype(str).nunique() > 1]
        if varying:
            extra = (
                part[varying]
                .astype(str)
                .apply(
                    lambda row, cols=varying: ", ".join(
                        f"{c.removeprefix('dataset.')}={row[c]}" for c in cols
                    ),
                    axis=1,
                )
            )
            labels.loc[part.index] = f"{name} (" + extra + ")"
    return labels


def _figure(n_panels: int):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(n_panels, 3)
    rows = -(-n_panels // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 4 * rows), squeeze=False)
    for ax in axes.ravel()[n_panels:]:
        ax.set_visible(False)
    return fig, axes.ravel()[:n_panels]


_MARKERS = {
    "ridge": "o", "random-forest": "s", "kernel-ridge": "D", "knn": "v", "knn-rate": "<",
    "oracle": "*", "mlp": "^",
}  # fmt: skip


def _style(key: str, regressor: str, keys: list[str]) -> dict[str, Any]:
    """One colour per method configuration (``key``), one marker per base regressor."""
    import matplotlib

    color = matplotlib.colormaps["tab20" if len(keys) > 10 else "tab10"](keys.index(key) % 20)
    return {"color": color, "marker": _MARKERS.get(regressor, "x")}


def _keys(df) -> list[str]:
    """Sorted method configurations (method plus varying params) for ``_style``."""
    return sorted((df["method"].astype(str) + df["variant"]).unique())


def _handles(axes) -> tuple[list, list[str]]:
    """Legend entries of every panel, each label once."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    return list(seen.values()), list(seen)


def _legend(fig: Any, axes: Any) -> int:
    """One figure legend below the panels (outside every data area); returns its rows."""
    handles, labels = _handles(axes)
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=7, frameon=False)
    return -(-len(labels) // 2)


def _bottom(fig: Any, legend_rows: int) -> float:
    """Fraction of the figure height to keep free below the panels for the legend."""
    inches = 0.18 * legend_rows + 0.2
    return min(0.6, inches / fig.get_figheight())


class RiskUnfairness(Report):
    """Risk against unfairness: one point per (method, regressor), mean over seeds.

    Source: the risk-fairness plane (risk against a DP unfairness, one point per method);
    no paper's table or figure was read for its layout.

    Parameters
    ----------
    risk : str, default="mse"
        Metric on the vertical axis.
    unfairness : str, default="ks-unfairness"
        Metric on the horizontal axis.

    Returns
    -------
    dict
        ``risk-unfairness`` (Figure: one panel per dataset configuration, error bars =
        one standard deviation over seeds) and ``risk-unfairness-table`` (DataFrame of
        means, stds and seed counts), or ``{}`` when no cell has both metrics.
    """

    name = "risk-unfairness"
    task = TASK

    @dataclass
    class Params:
        risk: str = "mse"
        unfairness: str = "ks-unfairness"

    def build(self, results: Any, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        """Aggregate over seeds per (dataset, method, regressor) and plot."""
        risk, unfair = self.params.risk, self.params.unfairness
        df = _ok(results)
        if df.empty or risk not in df or unfair not in df:
            return {}
        df = df.dropna(subset=[risk, unfair])
        table = (
            df.groupby(["panel", "method", "method.regressor", "variant", "label"])[[risk, unfair]]
            .agg(["mean", "std", "count"])
            .reset_index()
        )
        table.columns = [" ".join(c).strip() if isinstance(c, tuple) else c for c in table.columns]
        datasets = sorted(df["panel"].unique())
        keys = _keys(df)
        fig, axes = _figure(len(datasets))
        for ax, dataset in zip(axes, datasets, strict=True):
            for _, row in table[table["panel"] == dataset].iterrows():
                ax.errorbar(
                    row[f"{unfair} mean"], row[f"{risk} mean"],
                    xerr=np.nan_to_num(row[f"{unfair} std"]),
                    yerr=np.nan_to_num(row[f"{risk} std"]),
                    linestyle="none", capsize=3,
                    label=row["label"],
                    **_style(row["method"] + row["variant"], row["method.regressor"], keys),
                )  # fmt: skip
            ax.set_title(dataset, fontsize=9)
            ax.set_xlabel(f"{unfair} (unitless, lower is fairer)")
            ax.set_ylabel(f"{risk} (squared target units)" if risk == "mse" else risk)
        rows = _legend(fig, axes)
        fig.tight_layout(rect=(0, _bottom(fig, rows), 1, 1))
        return {"risk-unfairness": fig, "risk-unfairness-table": table}


def fitted_slope(n: np.ndarray, risk: np.ndarray) -> float:
    """Least-squares slope of log(risk) on log(n): the empirical rate exponent.

    Examples
    --------
    >>> round(fitted_slope(np.array([100, 1000]), np.array([1e-2, 1e-3])), 6)
    -1.0
    """
    return float(np.polyfit(np.log(n), np.log(risk), 1)[0])


def _t_interval(values: np.ndarray) -> tuple[float, float, float]:
    """Mean and two-sided 95% Student-t interval of ``values`` (seeds as replicates)."""
    from scipy import stats

    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if values.size < 2:
        return mean, float("nan"), float("nan")
    half = float(stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size))
    return mean, mean - half, mean + half


RATE_METRICS = ("regression-risk", "fair-risk", "transport-risk")


def slope_table(df: Any, size: str = "n_train", metrics: tuple[str, ...] = RATE_METRICS) -> Any:
    """Log-log slopes of the meta-theorem's risks against the sample size, with 95% CIs.

    Source: Fukuchi, ICML 2025 (meta-theorem: fair risk <~ regression risk + transport
    cost); the CI is over seeds: each seed gives one least-squares slope across the sizes
    (a paired design, as every size of one seed shares the seed), then a Student-t
    interval over the seeds; ``fair - regression`` is the per-seed paired difference.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows with columns ``panel``, ``label`` (method / regressor and varying params),
        ``seed``, ``size``
        and the metrics (positive values).
    size : str
        Column of the sample size.
    metrics : tuple of str
        Metrics to fit; missing ones are left out.

    Returns
    -------
    pandas.DataFrame
        One row per (panel, method / regressor) with, per metric, ``<metric> slope`` and
        ``<metric> lo`` / ``hi`` (95% CI), the same for ``fair - regression``, and
        ``seeds`` / ``sizes`` (only seeds that have every size are used).
    """
    import pandas as pd

    present = [m for m in metrics if m in df and df[m].notna().any()]
    rows: list[dict[str, Any]] = []
    for (panel, label), part in df.groupby(["panel", "label"]):
        sizes = np.sort(part[size].unique())
        if sizes.size < 2:
            continue
        slopes: dict[str, list[float]] = {m: [] for m in present}
        n_seeds = 0
        for _, one in part.groupby("seed"):
            one = one.groupby(size)[present].mean()
            if one.shape[0] != sizes.size:
                continue
            n_seeds += 1
            for m in present:
                values = one[m].to_numpy(float)
                ok = np.isfinite(values).all() and (values > 0).all()
                slopes[m].append(fitted_slope(sizes, values) if ok else np.nan)
        if n_seeds == 0:
            continue
        row: dict[str, Any] = {"panel": panel, "method / regressor": label}
        for m in present:
            values = np.asarray(slopes[m])
            if np.isnan(values).any():
                continue
            row[f"{m} slope"], row[f"{m} lo"], row[f"{m} hi"] = _t_interval(values)
        if "fair-risk slope" in row and "regression-risk slope" in row:
            diff = np.asarray(slopes["fair-risk"]) - np.asarray(slopes["regression-risk"])
            row["fair - regression"], row["fair - regression lo"], row["fair - regression hi"] = (
                _t_interval(diff)
            )
        row["seeds"], row["sizes"] = n_seeds, int(sizes.size)
        rows.append(row)
    return pd.DataFrame(rows)


_LINES = {"fair-risk": "-", "regression-risk": "--", "transport-risk": ":"}


class FairRiskRate(Report):
    """The meta-theorem's risks against training size, log-log, with slopes and 95% CIs.

    Source: Fukuchi, ICML 2025, meta-theorem (fair risk <~ regression risk + transport
    cost); Fukuchi & Sakuma, NeurIPS 2023, Theorem 1 (rate d M / n for the linear model).

    Returns
    -------
    dict
        ``fair-risk-rate`` (Figure: one panel per dataset configuration; fair risk solid,
        regression risk dashed, transport risk dotted; mean over seeds per n_train) and
        ``fair-risk-rate-table`` (``slope_table``: slopes with 95% CIs over seeds and the
        paired fair - regression difference), or ``{}`` without two training sizes.
    """

    name = "fair-risk-rate"
    task = TASK

    def build(self, results: Any, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        """Plot mean risks per n_train and fit per-seed log-log slopes."""
        import pandas as pd

        df = _ok(results)
        if df.empty or "fair-risk" not in df or "dataset.n_train" not in df:
            return {}
        df = df.dropna(subset=["fair-risk"])
        df = df.assign(
            n_train=pd.to_numeric(df["dataset.n_train"], errors="coerce"),
            panel=_dataset_labels(df, skip=("n_train",)),
        )
        df = df.dropna(subset=["n_train"])
        if df.empty or df.groupby("panel")["n_train"].nunique().max() < 2:
            return {}
        table = slope_table(df)
        if table.empty:
            return {}
        panels = sorted(table["panel"].unique())
        fig, axes = _figure(len(panels))
        keys = _keys(df)
        for ax, panel in zip(axes, panels, strict=True):
            part = df[df["panel"] == panel]
            for (method, variant, regressor, name), one in part.groupby(
                ["method", "variant", "method.regressor", "label"]
            ):
                style = _style(method + variant, regressor, keys)
                for metric, line in _LINES.items():
                    if metric not in one or one[metric].isna().all():
                        continue
                    mean = one.groupby("n_train")[metric].mean()
                    if mean.size < 2 or (mean <= 0).any():
                        continue
                    label = name if metric == "fair-risk" else None
                    ax.loglog(mean.index, mean.to_numpy(), linestyle=line, label=label, **style)
            sizes = np.sort(part["n_train"].unique())
            ax.set_xticks(sizes, [str(int(n)) for n in sizes])
            ax.minorticks_off()
            ax.set_xlabel("n_train = labeled rows (n_calib as configured)")
            ax.set_ylabel("risk (squared target units)")
            ax.set_title(panel, fontsize=9)
        handles, labels = _handles(axes)
        from matplotlib.lines import Line2D

        for metric, line in _LINES.items():
            handles.append(Line2D([], [], color="black", linestyle=line))
            labels.append(f"{metric}: {_RISK_HELP[metric]}")
        fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=7, frameon=False)
        fig.tight_layout(rect=(0, _bottom(fig, -(-len(labels) // 2)), 1, 1))
        return {"fair-risk-rate": fig, "fair-risk-rate-table": table}


_RISK_HELP = {
    "fair-risk": "E(g_hat - g*)^2",
    "regression-risk": "E(f_hat - f*)^2 of the base",
    "transport-risk": "E(G_hat(f*) - g*)^2, maps estimated on f*",
}


class TradeOff(Report):
    """Risk-fairness Pareto curve of ``partial-fairness`` swept over alpha.

    Source: Chzhen & Schreuder, Ann. Statist. 50(4), 2022: the alpha-relative-improvement
    optimum f_alpha = sqrt(alpha) f* + (1 - sqrt(alpha)) g* has unfairness alpha U(f*) and
    excess risk (1 - sqrt(alpha))^2 U(f*), i.e. the curve risk = (sqrt(U(f*)) -
    sqrt(U))^2 drawn where the dataset logs U(f*) (``cost_of_fairness``).

    Returns
    -------
    dict
        ``trade-off`` (Figure: excess risk, or MSE on real data, against w2-unfairness;
        one line per panel and regressor through the alphas, means over seeds) and
        ``trade-off-table`` (means per alpha), or ``{}`` without two alphas.
    """

    name = "trade-off"
    task = TASK

    def build(self, results: Any, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        """Average over seeds per alpha and draw the empirical and closed-form curves."""
        import pandas as pd

        df = _ok(results)
        if df.empty or "method.alpha" not in df or "w2-unfairness" not in df:
            return {}
        df = df[df["method"] == "partial-fairness"].copy()
        df["alpha"] = pd.to_numeric(df["method.alpha"], errors="coerce")
        df = df.dropna(subset=["alpha", "w2-unfairness"])
        if df["alpha"].nunique() < 2:
            return {}
        synthetic = "excess-risk" in df and df["excess-risk"].notna().all()
        risk = "excess-risk" if synthetic else "mse"
        cols = ["w2-unfairness", risk]
        table = (
            df.groupby(["panel", "method.regressor", "alpha"])[cols]
            .mean()
            .reset_index()
            .sort_values(["panel", "method.regressor", "alpha"])
        )
        panels = sorted(table["panel"].unique())
        fig, axes = _figure(len(panels))
        for ax, panel in zip(axes, panels, strict=True):
            part = table[table["panel"] == panel]
            for regressor, one in part.groupby("method.regressor"):
                ax.plot(one["w2-unfairness"], one[risk], marker=_MARKERS.get(regressor, "x"),
                        label=f"partial-fairness / {regressor} (alpha = 0 ... 1)")  # fmt: skip
            cost = df.loc[df["panel"] == panel, "dataset.cost_of_fairness"] if (
                "dataset.cost_of_fairness" in df
            ) else pd.Series(dtype=float)  # fmt: skip
            cost = pd.to_numeric(cost, errors="coerce").dropna()
            if synthetic and not cost.empty:
                u_star = float(cost.mean())
                u = np.linspace(0, u_star, 100)
                ax.plot(u, (np.sqrt(u_star) - np.sqrt(u)) ** 2, color="black", linestyle=":",
                        label="closed form (sqrt(U(f*)) - sqrt(U))^2")  # fmt: skip
            ax.set_title(panel, fontsize=9)
            ax.set_xlabel("w2-unfairness U (squared target units, lower is fairer)")
            ax.set_ylabel(
                "excess-risk E(f - f*)^2 (squared target units)" if synthetic
                else "mse (squared target units)"
            )  # fmt: skip
        rows = _legend(fig, axes)
        fig.tight_layout(rect=(0, _bottom(fig, rows), 1, 1))
        return {"trade-off": fig, "trade-off-table": table}
