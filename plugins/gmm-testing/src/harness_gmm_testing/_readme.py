"""The plugin README's tables, rendered from stored results (``harness results`` frames):
the main suite's cells, the n_0.9 rate table, the HZ / Hermite ratios and the model check,
and the per-cell type-I bands. ``tests/test_readme.py`` checks each table in the README
(between ``<!-- name:begin -->`` and ``<!-- name:end -->``) against these functions applied
to the committed files under ``results/``.
"""

from __future__ import annotations

import math

import numpy as np

from harness import LazyModule
from harness_gmm_testing import _power_model as model
from harness_gmm_testing._comparison import HERMITE, oracle_rows, uniform_law
from harness_gmm_testing.reports import n_for_power, rate_slopes

pd = LazyModule("pandas")

__all__ = [
    "level_markdown",
    "model_check_markdown",
    "rate_markdown",
    "ratio_markdown",
    "results_markdown",
]


def _n(value: float) -> str:
    if not math.isfinite(value):
        return "-"
    return f"{value:,.0f}" if value < 1e6 else f"{value:.2g}".replace("e+0", "e").replace("e+", "e")


def ratio_markdown(measured: pd.DataFrame, modelled: pd.DataFrame) -> str:
    """The README's two ratio tables: measured (with 95% intervals and the model's ratio
    alongside) and modelled (k, delta rows; d columns)."""
    lines = [
        "| k (m) | delta | d | Hermite n_0.9 (95% CI) | HZ n_0.9 (95% CI) | ratio HZ / Hermite "
        "(95% CI) | model ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in measured.itertuples():
        lines.append(
            f"| {r.k} ({r.m}) | {r.delta:g} | {r.d} | {_n(r.hermite_n90)} ({_n(r.hermite_low)}-"
            f"{_n(r.hermite_high)}) | {_n(r.hz_n90)} ({_n(r.hz_low)}-{_n(r.hz_high)}) | "
            f"{r.ratio:.2f} ({r.ratio_low:.2f}-{r.ratio_high:.2f}) | {r.model_ratio:.2f} |"
        )
    ds = sorted(modelled["d"].unique())
    lines += [
        "",
        "| k (m) | delta | " + " | ".join(f"d = {d}" for d in ds) + " |",
        "|---|---|" + "---|" * len(ds),
    ]
    for (k, delta), rows in modelled.groupby(["k", "delta"], sort=True):
        by_d = rows.set_index("d")
        cells = [
            f"{by_d.loc[d, 'ratio']:.2f} ({_n(by_d.loc[d, 'hz_n90'])} / "
            f"{_n(by_d.loc[d, 'hermite_n90'])})"
            for d in ds
        ]
        lines.append(f"| {k} ({int(rows['m'].iloc[0])}) | {delta:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def model_check_markdown(check: pd.DataFrame) -> str:
    """The README's model check: per test, how many measured powers hold the model's value in
    their 95% interval, and the largest gaps."""
    lines = [
        "| test | cells | model inside the 95% interval | mean model - measured | largest gap "
        "(k, delta, d, n: measured / model) |",
        "|---|---|---|---|---|",
    ]
    for test, rows in check.groupby("test", sort=True):
        gap = rows["model"] - rows["power"]
        worst = rows.loc[gap.abs().idxmax()]
        lines.append(
            f"| {test} | {len(rows)} | {int(rows['inside'].sum())} | {gap.mean():+.3f} | "
            f"{worst['k']}, {worst['delta']:g}, {worst['d']}, {worst['n']:,}: "
            f"{worst['power']:.2f} / {worst['model']:.2f} |"
        )
    return "\n".join(lines)


def rate_markdown(results: pd.DataFrame) -> str:
    """The README's n_0.9 table of the oracle Hermite test (delta = 0.95 rows of
    ``results``): grid, closed form, the normal model with the H1 variance, the measured
    n_0.9 (95% interval with the Monte Carlo spread) and measured / closed form; then the
    fitted slopes of ln n_0.9 on ln d against the closed form's."""
    df = oracle_rows(results)
    df = df[df["method"] == HERMITE]
    lines = [
        "| k (m) | d | grid n | closed form | model | measured n_0.9 (95% CI) | measured / "
        "closed form |",
        "|---|---|---|---|---|---|---|",
    ]
    slopes = []
    for (k, delta), instance in df.groupby(["dataset.k", "dataset.delta"]):
        law = uniform_law(int(float(k)), float(delta))
        table = n_for_power(instance)
        for r in table.itertuples():
            modelled = model.n_at_power(model.hermite_power, law, r.d)
            lines.append(
                f"| {r.k} ({law.matched_degree}) | {r.d} | {r.n_min:,}-{r.n_max:,} | "
                f"{_n(r.closed_form)} | {_n(modelled)} | {_n(r.n_for_power)} ({_n(r.ci_low)}-"
                f"{_n(r.ci_high)}) | {r.ratio:.2f} |"
            )
        for r in rate_slopes(table).itertuples():
            slopes.append(
                f"k = {r.k}, d = {r.d_range}: {r.slope:.2f} ({r.ci_low:.2f}-{r.ci_high:.2f}) "
                f"against the closed form's {r.closed_form_slope:.2f}"
            )
    return "\n".join(lines) + "\n\nSlope of ln n_0.9 on ln d: " + "; ".join(slopes) + "."


def level_markdown(bands: pd.DataFrame) -> str:
    """Per test: cells, the (n, d) range, how many type-I rates lie in their band, the rates'
    range and pooled rate, and each cell outside its band."""
    lines = [
        "| test | cells | n | d | inside the 99% band | type-I range | pooled | outside |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for method, rows in bands.groupby("method", sort=True):
        pooled = float(np.average(rows["rate"], weights=rows["trials"]))
        outside = rows[~rows["inside"]]
        listed = "; ".join(
            f"n = {r.n:,}, d = {r.d}: {r.rate:.3f} (band {r.low:.3f}-{r.high:.3f})"
            for r in outside.itertuples()
        )
        lines.append(
            f"| {method} | {len(rows)} | {rows['n'].min():,}-{rows['n'].max():,} | "
            f"{rows['d'].min()}-{rows['d'].max()} | {int(rows['inside'].sum())} | "
            f"{rows['rate'].min():.3f}-{rows['rate'].max():.3f} | {pooled:.3f} | "
            f"{listed or '-'} |"
        )
    return "\n".join(lines)


def _test_label(row: pd.Series) -> str:
    """The README's name of a method variant: the oracle, or the degrees it is limited to."""
    top = int(float(row.get("method.max_degree", 0) or 0)) if pd.notna(
        row.get("method.max_degree")
    ) else 0  # fmt: skip
    if row["method"] == HERMITE:
        return f"Hermite degrees 1-{top}" if top else "Hermite degree m+1"
    if row["method"] == "moment-tensor-test" and top:
        return f"moment tensor orders 1-{top}"
    return str(row["method"])


def results_markdown(results: pd.DataFrame) -> str:
    """The table of the main suite: one row per configuration (instance, n and test), sorted
    by instance, n and test, with the closed-form n_0.9, trials / null draws per seed, the
    seeds, and type-I, power (mean and s.d. over seeds), AUC and seconds per test (means)."""
    df = results[results["status"] == "ok"].copy()
    for col in ("k", "d", "n", "trials"):
        df[col] = pd.to_numeric(df[f"dataset.{col}"]).astype(int)
    df["delta"] = pd.to_numeric(df["dataset.delta"])
    df["test"] = [_test_label(r) for _, r in df.iterrows()]
    df["draws"] = pd.to_numeric(df["method.calibration_trials"]).astype(int)
    df["n90"] = pd.to_numeric(df["dataset.predicted_n90"])
    keys = ["k", "delta", "d", "n", "test", "trials", "draws", "n90"]
    lines = [
        "| k | delta | d | n | closed-form n_0.9 | test | trials / null draws | seeds | type-I "
        "| power (s.d.) | AUC | s per test |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, g in df.groupby(keys, sort=True):
        k, delta, d, n, test, trials, draws, n90 = key
        power = g["power.rate"].astype(float)
        lines.append(
            f"| {k} | {delta:g} | {d} | {n:,} | {n90:,.0f} | {test} | {trials} / {draws} "
            f"| {g['seed'].nunique()} | {g['type1-error.rate'].astype(float).mean():.3f} "
            f"| {power.mean():.3f} ({power.std(ddof=1):.3f}) | {g['auc'].astype(float).mean():.2f} "
            f"| {g['seconds-per-test.mean'].astype(float).mean():.3f} |"
        )
    return "\n".join(lines)
