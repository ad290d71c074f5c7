"""Reports of the ``fair-regression`` task: risk-unfairness trade-off and fair-risk rates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from harness import Curve, Report

__all__ = ["FairRiskRate", "RiskUnfairness"]

TASK = "fair-regression"


def _ok(results: pd.DataFrame) -> pd.DataFrame:
    df = results
    if "task" in df:
        df = df[df["task"] == TASK]
    if "status" in df:
        df = df[df["status"] == "ok"]
    df = df.copy()
    if "method.regressor" not in df:
        df["method.regressor"] = "-"
    df["method.regressor"] = df["method.regressor"].fillna("-").astype(str)
    df["label"] = df["method"].astype(str) + " / " + df["method.regressor"]
    df["panel"] = _dataset_labels(df)
    return df


def _dataset_labels(df: pd.DataFrame) -> pd.Series:
    """``dataset`` plus the dataset params that vary within it (``synthetic-linear
    (n_train=250)``), so that configurations are not averaged together."""
    labels = df["dataset"].astype(str)
    columns = [c for c in df.columns if c.startswith("dataset.")]
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


_MARKERS = {"ridge": "o", "random-forest": "s", "kernel-ridge": "D", "knn": "v", "mlp": "^"}


def _style(method: str, regressor: str, methods: list[str]) -> dict[str, Any]:
    """One colour per method, one marker per base regressor."""
    import matplotlib

    color = matplotlib.colormaps["tab10"](methods.index(method) % 10)
    return {"color": color, "marker": _MARKERS.get(regressor, "x")}


def _legend(fig: Any, ax: Any) -> None:
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)


class RiskUnfairness(Report):
    """Risk against unfairness: one point per (method, regressor), mean over seeds.

    Source: Chzhen et al., NeurIPS 2020, Table 1 layout (RMSE vs KS per method) drawn as
    the risk-fairness plane of Chzhen & Schreuder, Ann. Statist. 2022, Figure 1.

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

    def build(self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        """Aggregate over seeds per (dataset, method, regressor) and plot."""
        risk, unfair = self.params.risk, self.params.unfairness
        df = _ok(results)
        if df.empty or risk not in df or unfair not in df:
            return {}
        df = df.dropna(subset=[risk, unfair])
        table = (
            df.groupby(["panel", "method", "method.regressor"])[[risk, unfair]]
            .agg(["mean", "std", "count"])
            .reset_index()
        )
        table.columns = [" ".join(c).strip() if isinstance(c, tuple) else c for c in table.columns]
        datasets = sorted(df["panel"].unique())
        methods = sorted(df["method"].unique())
        fig, axes = _figure(len(datasets))
        for ax, dataset in zip(axes, datasets, strict=True):
            for _, row in table[table["panel"] == dataset].iterrows():
                ax.errorbar(
                    row[f"{unfair} mean"], row[f"{risk} mean"],
                    xerr=np.nan_to_num(row[f"{unfair} std"]),
                    yerr=np.nan_to_num(row[f"{risk} std"]),
                    linestyle="none", capsize=3,
                    label=f"{row['method']} / {row['method.regressor']}",
                    **_style(row["method"], row["method.regressor"], methods),
                )  # fmt: skip
            ax.set_title(dataset, fontsize=9)
            ax.set_xlabel(f"{unfair} (unitless, lower is fairer)")
            ax.set_ylabel(f"{risk} (squared target units)" if risk == "mse" else risk)
        _legend(fig, axes[0])
        fig.tight_layout(rect=(0, 0.12, 1, 1))
        return {"risk-unfairness": fig, "risk-unfairness-table": table}


def fitted_slope(n: np.ndarray, risk: np.ndarray) -> float:
    """Least-squares slope of log(risk) on log(n): the empirical rate exponent.

    Examples
    --------
    >>> round(fitted_slope(np.array([100, 1000]), np.array([1e-2, 1e-3])), 6)
    -1.0
    """
    return float(np.polyfit(np.log(n), np.log(risk), 1)[0])


class FairRiskRate(Report):
    """Fair risk against training size on log-log axes, with the fitted slope.

    Source: Fukuchi & Sakuma, NeurIPS 2023, Theorem 1 (rate d M / n for the linear model);
    Fukuchi, ICML 2025, meta-theorem (fair risk <= regression risk + transport cost).

    Returns
    -------
    dict
        ``fair-risk-rate`` (Figure, ``synthetic-linear`` cells only: mean fair-risk per
        n_train and its slope per (method, regressor)) and ``fair-risk-rate-table``
        (DataFrame of slopes), or ``{}`` when there are fewer than two training sizes.
    """

    name = "fair-risk-rate"
    task = TASK

    def build(self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        """Plot mean fair-risk per n_train and fit log-log slopes."""
        df = _ok(results)
        if df.empty or "fair-risk" not in df or "dataset.n_train" not in df:
            return {}
        df = df[(df["dataset"] == "synthetic-linear")].dropna(subset=["fair-risk"])
        df = df.assign(n_train=pd.to_numeric(df["dataset.n_train"], errors="coerce"))
        if df["n_train"].nunique() < 2:
            return {}
        fig, axes = _figure(1)
        ax = axes[0]
        rows: list[dict[str, Any]] = []
        methods = sorted(df["method"].unique())
        for (method, regressor), part in df.groupby(["method", "method.regressor"]):
            mean = part.groupby("n_train")["fair-risk"].mean()
            if mean.size < 2 or (mean <= 0).any():
                continue
            slope = fitted_slope(mean.index.to_numpy(float), mean.to_numpy(float))
            label = f"{method} / {regressor}"
            ax.loglog(mean.index, mean.to_numpy(), label=f"{label} (slope {slope:.2f})",
                      **_style(method, regressor, methods))  # fmt: skip
            rows.append({"method / regressor": label, "slope": slope, "sizes": mean.size})
        sizes = np.sort(df["n_train"].unique())
        ax.set_xticks(sizes, [str(int(n)) for n in sizes])
        ax.minorticks_off()
        ax.set_xlabel("n_train (labeled rows)")
        ax.set_ylabel("fair-risk E(g - g*)^2 (squared target units)")
        ax.set_title("synthetic-linear: fair risk vs n")
        ax.legend(fontsize=6)
        fig.tight_layout()
        return {"fair-risk-rate": fig, "fair-risk-rate-table": pd.DataFrame(rows)}
