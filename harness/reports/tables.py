"""The tables a person reads: methods by metric as ``mean ± half-width`` text, the best
method per dataset and metric, and the lines saying what a table leaves out.

Built from :func:`harness.reports.aggregates.summary_stats` with whole-frame operations, so the cost
grows linearly with configurations and metric columns. Printed by ``harness run`` and
written to the report folder by :func:`harness.reports.folder.write_report`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from harness.lazy import LazyModule
from harness.plugins.registry import Registry
from harness.reports.aggregates import (
    SKIPPED_PREFIX,
    direction,
    format_number,
    param_columns,
    row_labels,
    summary_stats,
)

pd = LazyModule("pandas")

__all__ = [
    "BEST_COLUMNS",
    "best_methods",
    "column_label",
    "problem_lines",
    "shared_settings",
    "summary_table",
]

BEST_COLUMNS = ["dataset", "metric", "best", "mean ± 95% CI (n)", "tied"]


def column_label(column: str, task: str, registry: Registry | None) -> str:
    """The metric column with its direction: ``mse ↓``, ``accuracy ↑``, or as is."""
    arrow = {True: " ↑", False: " ↓", None: ""}[direction(column, task, registry)]
    return column + arrow


def _noise_floors(values: pd.Series, by: pd.Series) -> pd.Series:
    """:func:`harness.reports.aggregates.noise_floor` of ``values`` within each group of ``by``, per
    row (one group-by, not one call per group)."""
    x = values.abs()
    x = x.where(np.isfinite(x) & (x > 0))
    typical = x.groupby(by, sort=False).transform("median")
    return np.maximum(1e-9 * typical, 1e-300).fillna(0.0)


def _mean_ci_text(mean: float, half: float, noise: float) -> str:
    """``"2.5 ± 0.31"`` (half-width to 2 significant digits), or the mean alone when the
    half-width is not finite."""
    shown = format_number(mean, noise=noise)
    if not math.isfinite(half):
        return shown
    return f"{shown} ± " + format_number(half, digits=2, noise=max(noise, 1e-9 * abs(mean)))


def _cell_texts(stats: pd.DataFrame) -> list[str]:
    """The text of each row of ``stats`` in the table: ``mean ± half-width``, the mean of
    one seed, or what the cells ended as when none is ok (``failed``, ``timed out``)."""
    noise = _noise_floors(stats["mean"], stats["metric"]).to_numpy()
    half = (stats["ci_high"] - stats["mean"]).to_numpy()
    texts = []
    columns = [stats[c].to_numpy() for c in ("n", "n_ok", "n_failed", "mean")]
    rows = zip(*columns, half, noise, strict=True)
    for n, n_ok, n_failed, mean, h, floor in rows:
        if n == 0:  # no ok cell: what the cells ended as ("timed out" when none failed)
            texts.append("" if n_ok else ("failed" if n_failed else "timed out"))
        else:
            texts.append(_mean_ci_text(mean, h if n >= 2 else math.nan, floor))
    return texts


def _seeds_text(n_ok: int, n_failed: int, n_timeout: int) -> str:
    """``"2"``, or ``"2 of 3 (1 failed)"`` when some seeds did not end ok."""
    failed = {"failed": n_failed, "timeout": n_timeout}
    kinds = ", ".join(f"{n} {s}" for s, n in failed.items() if n)
    return f"{n_ok} of {n_ok + n_failed + n_timeout} ({kinds})" if kinds else str(n_ok)


def _metric_order(metrics: list[str]) -> list[str]:
    """Metric columns with a dict metric's keys (``power.rate``, ``power.high``) together,
    in order of first appearance of the metric."""
    first: dict[str, int] = {}
    for i, col in enumerate(metrics):
        first.setdefault(col.split(".", 1)[0], i)
    ranked = sorted(enumerate(metrics), key=lambda p: (first[p[1].split(".", 1)[0]], p[0]))
    return [col for _, col in ranked]


def summary_table(results: pd.DataFrame, registry: Registry | None = None) -> pd.DataFrame:
    """Methods by metric for one task: ``"mean ± half-width"`` strings, one truth per cell.

    Every row of ``results`` is the latest run of its cell. Means and CIs use the ``ok``
    cells only; a configuration with failed or timed-out cells says so in ``seeds``
    (``"2 of 3 (1 failed)"``), and one with no ok cell shows ``failed`` in every metric
    column: an older success is never shown in its place. Numbers have 3 significant digits
    (half-widths 2); values below the column's :func:`harness.reports.aggregates.noise_floor` print
    as ``0``.

    :param results: rows of one task, in suite order (see
        :meth:`harness.store.tracking.Tracker.results`).
    :param registry: tells declared params from described facts in row labels and gives
        each metric's direction (columns are labelled ``name ↑`` or ``name ↓``).
    :returns: a DataFrame indexed by (dataset, method) labels in suite order, ``seeds``
        then one column per metric, a dict metric's keys side by side.
    """
    return table_of(summary_stats(results, registry), results, registry)


def table_of(
    stats: pd.DataFrame, results: pd.DataFrame, registry: Registry | None = None
) -> pd.DataFrame:
    """:func:`summary_table` from the :func:`harness.reports.aggregates.summary_stats` of
    ``results`` already computed (a report needs both and computes the statistics once)."""
    if stats.empty:
        return _failed_only(results, registry)
    task = str(stats["task"].iloc[0])
    rows, row_codes = _factorize(stats[["dataset", "method"]])
    metric_codes, metrics = pd.factorize(stats["metric"])
    grid = np.full((len(rows), len(metrics)), np.nan, dtype=object)
    grid[row_codes, metric_codes] = _cell_texts(stats)
    firsts = stats.drop_duplicates(["dataset", "method"])
    seeds = [_seeds_text(*c) for c in firsts[["n_ok", "n_failed", "n_timeout"]].to_numpy()]
    index = pd.MultiIndex.from_frame(rows, names=["dataset", "method"])
    # one block of text, however many metric columns (a column per block is slow to write)
    table = pd.DataFrame(grid, index=index, columns=list(metrics), dtype=object)
    table.insert(0, "seeds", seeds)
    ordered = _metric_order(list(metrics))
    table = table[["seeds", *ordered]]
    table.columns = ["seeds", *(column_label(m, task, registry) for m in ordered)]
    return table


def _factorize(keys: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The distinct rows of ``keys`` in order of first appearance and each row's code."""
    codes = keys.groupby(list(keys.columns), sort=False).ngroup().to_numpy()
    return keys.drop_duplicates().reset_index(drop=True), codes


def _failed_only(results: pd.DataFrame, registry: Registry | None) -> pd.DataFrame:
    """The table of a task none of whose cells gave a metric: ``seeds`` only, e.g.
    ``0 of 3 (3 failed)``, one row per configuration with a failed or timed-out cell."""
    if results.empty:
        return pd.DataFrame()
    bad = results[results["status"].isin(["failed", "timeout"])]
    if bad.empty:
        return pd.DataFrame()
    frame = bad.assign(
        _dataset=row_labels(bad, "dataset", registry), _method=row_labels(bad, "method", registry)
    )
    rows = {}
    for key, group in frame.groupby(["_dataset", "_method"], sort=False):
        kinds = ", ".join(f"{n} {s}" for s, n in group["status"].value_counts().items())
        rows[key] = {"seeds": f"0 of {len(group)} ({kinds})"}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["dataset", "method"])
    return table


def best_methods(stats: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and metric with a direction, the method with the best mean and the
    methods tied with it (their 95% CIs overlap the best's).

    :param stats: :func:`harness.reports.aggregates.summary_stats` of one task.
    :returns: columns ``dataset, metric, best, mean ± 95% CI (n), tied`` (tied: comma-
        separated method labels, ``""`` when the best is clear), in suite order.
    """
    if stats.empty:
        return pd.DataFrame(columns=BEST_COLUMNS)
    usable = stats[stats["higher_is_better"].notna() & (stats["n"] > 0)]
    usable = usable.reset_index(drop=True)
    groups = usable.groupby(["dataset", "metric"], sort=False)
    usable = usable[groups["method"].transform("nunique") >= 2].reset_index(drop=True)
    if usable.empty:
        return pd.DataFrame(columns=BEST_COLUMNS)
    keys = usable.groupby(["dataset", "metric"], sort=False)
    code = keys.ngroup().to_numpy()
    higher = usable["higher_is_better"].astype(bool)
    score = usable["mean"].where(higher, -usable["mean"])
    best = score.groupby(code, sort=False).idxmax().sort_index().to_numpy()  # first best
    mean = usable["mean"].to_numpy()
    low, high = usable["ci_low"].to_numpy(), usable["ci_high"].to_numpy()
    b = best[code]  # each row's group's best row
    lo = np.where(np.isfinite(low[b]), low[b], mean[b])
    hi = np.where(np.isfinite(high[b]), high[b], mean[b])
    methods = usable["method"].to_numpy()
    tied_rows = (
        (methods != methods[b])
        & (np.where(np.isnan(high), mean, high) >= lo)
        & (np.where(np.isnan(low), mean, low) <= hi)
    )
    tied: list[list[str]] = [[] for _ in best]
    for g, method in zip(code[tied_rows], methods[tied_rows], strict=True):
        tied[g].append(method)
    noise = _noise_floors(usable["mean"], pd.Series(code)).to_numpy()
    rows = []
    for g, i in enumerate(best):
        shown = _mean_ci_text(mean[i], high[i] - mean[i], noise[i])
        rows.append(
            {
                "dataset": usable["dataset"].iat[i],
                "metric": usable["metric"].iat[i] + (" ↑" if higher.iat[i] else " ↓"),
                "best": methods[i],
                "mean ± 95% CI (n)": f"{shown} ({int(usable['n'].iat[i])})",
                "tied": ", ".join(tied[g]),
            }
        )
    return pd.DataFrame(rows, columns=BEST_COLUMNS)


def shared_settings(results: pd.DataFrame, registry: Registry | None = None) -> str:
    """The declared params that the table's labels leave out because every row of a
    component shares one value: ``"Settings the labels leave out (one value in every row
    of the component): method fair-shrink(alpha=0.5); dataset noise(scale=1.0)."``, or
    ``""`` when there are none. Without it, two reports of one method at different settings
    would look alike."""
    if results.empty:
        return ""
    parts = []
    for kind in ("dataset", "method"):
        for name, group in results.groupby(kind, sort=False):
            shared = [
                f"{c.split('.', 1)[1]}={group[c].iloc[0]}"
                for c in param_columns(group, kind, str(name), registry)
                if group[c].notna().all() and group[c].nunique() == 1
            ]
            if shared:
                parts.append(f"{kind} {name}({', '.join(shared)})")
    head = "Settings the labels leave out (one value in every row of the component)"
    return f"{head}: {'; '.join(parts)}." if parts else ""


def problem_lines(
    results: pd.DataFrame,
    registry: Registry | None = None,
    link: Callable[[str, str], str] | None = None,
) -> list[str]:
    """What a table leaves out, one line each: every failed or timed-out cell named in full
    (task, dataset and method with their params, seed, run id and, with ``link``, its UI
    address) with its reason; skipped cells and skipped metrics grouped by reason.

    :param link: ``(experiment_id, run_id) -> URL`` of the run's page, when a UI address
        is known.
    """
    if results.empty:
        return []
    lines = []
    datasets = row_labels(results, "dataset", registry, all_params=True)
    methods = row_labels(results, "method", registry, all_params=True)
    for i, row in results[results["status"].isin(["failed", "timeout"])].iterrows():
        run = link(str(row.get("experiment_id", "")), row["run_id"]) if link else row["run_id"]
        lines.append(
            f"{row['status']}: {row['task']} {datasets[i]} {methods[i]} seed={row['seed']}"
            f" (run {run}): {row.get('reason', '')}"
        )
    skipped = results[results["status"] == "skipped"]
    if "reason" not in skipped:
        skipped = skipped.assign(reason="")
    for reason, group in skipped.groupby("reason", sort=False):
        lines.append(f"skipped {len(group)} cell(s): {reason}")
    for col in [c for c in results.columns if c.startswith(SKIPPED_PREFIX)]:
        metric = col.removeprefix(SKIPPED_PREFIX)
        for reason, group in results.groupby(col, sort=False):
            lines.append(f"metric '{metric}' skipped on {len(group)} cell(s): {reason}")
    return lines
