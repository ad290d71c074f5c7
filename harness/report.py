"""Result tables and plots: the run summary and the per-suite report folder.

Tables show, per task, every (dataset configuration, method configuration) by metric as
mean and 95% confidence half-width over seeds (Student t). :func:`write_report` adds every
plugin :class:`harness.Report` of the suite's tasks and writes ``report.md``, a
self-contained ``report.html`` (PNG plots embedded) and the PNG and CSV files to a folder.
"""

from __future__ import annotations

import base64
import html
import json
import logging
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.components import RESULT_COLUMNS, Curve, Skip, params_fields
from harness.lazy import LazyModule
from harness.registry import Registry
from harness.verdicts import HEADER, Verdict, count_line, table_rows, verdicts_markdown

pd = LazyModule("pandas")  # imported when a table is built (light plugin imports)

__all__ = [
    "best_methods",
    "column_label",
    "declared_params",
    "direction",
    "format_number",
    "mean_ci",
    "metric_columns",
    "noise_floor",
    "problem_lines",
    "shared_settings",
    "summary_stats",
    "summary_table",
    "tally",
    "tidy_results",
    "write_report",
]

log = logging.getLogger(__name__)
PARAM_PREFIXES = ("dataset.", "method.", "metric.")
SKIPPED_PREFIX = "skipped."  # why a metric was left out of a cell (Tracker.results)


def mean_ci(values: Any) -> tuple[float, float, int]:
    """Mean, 95% confidence half-width (Student t over the values) and count, NaN dropped.

    Examples
    --------
    >>> m, h, n = mean_ci([1.0, 2.0, 3.0])
    >>> (m, round(h, 3), n)
    (2.0, 2.484, 3)
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan, 0
    if x.size == 1:
        return float(x[0]), math.nan, 1
    half = _t975(x.size) * x.std(ddof=1) / math.sqrt(x.size)
    return float(x.mean()), float(half), int(x.size)


def metric_columns(results: pd.DataFrame) -> list[str]:
    """Metric columns of a results table (not meta, not params, not ``time.*``)."""
    return [
        c
        for c in results.columns
        if c not in RESULT_COLUMNS and not c.startswith((*PARAM_PREFIXES, SKIPPED_PREFIX, "time."))
    ]


def _labels(
    results: pd.DataFrame, kind: str, registry: Registry | None, all_params: bool = False
) -> pd.Series:
    """``name(p=v, ...)`` with the declared params that vary among cells of the same name
    (every declared param with ``all_params``: a cell named in full).

    Facts from ``Dataset.describe`` are logged as ``dataset.<key>`` params too, but may vary
    with the seed; only fields of the component's ``Params`` (when the registry knows the
    component) tell configurations apart.
    """
    labels = results[kind].astype(str).copy()
    for name, group in results.groupby(kind, sort=False):
        cols = [
            c
            for c in _param_columns(group, kind, str(name), registry)
            if all_params or group[c].nunique() > 1
        ]
        if cols:
            parts = [f"{c.split('.', 1)[1]}=" + group[c].astype(str) for c in cols]
            text = parts[0]
            for part in parts[1:]:
                text = text + ", " + part
            labels.loc[group.index] = f"{name}(" + text + ")"
    return labels


def _param_columns(
    group: pd.DataFrame, kind: str, name: str, registry: Registry | None
) -> list[str]:
    """The ``<kind>.<param>`` columns of the rows ``group`` of component ``name`` that hold
    a declared param (any ``<kind>.`` column when the registry does not know it; facts from
    ``Dataset.describe`` are left out) with a value in some row."""
    declared = _declared(registry, kind, str(group["task"].iloc[0]), name)
    return [
        c
        for c in group.columns
        if c.startswith(f"{kind}.")
        and group[c].notna().any()
        and (declared is None or c.split(".", 1)[1] in declared)
    ]


def _declared(registry: Registry | None, kind: str, task: str, name: str) -> set[str] | None:
    entry = registry.entries[kind].get((task, name)) if registry is not None else None
    return None if entry is None else set(params_fields(entry.cls.Params))


def direction(column: str, task: str, registry: Registry | None) -> bool | None:
    """``higher_is_better`` of the metric behind a results column (``name`` or
    ``name.key`` of a dict metric); ``None`` when unknown or neither."""
    if registry is None:
        return None
    for name in (column, column.split(".", 1)[0]):
        entry = registry.entries["metric"].get((task, name))
        if entry is not None:
            return entry.cls.higher_is_better
    return None


def column_label(column: str, task: str, registry: Registry | None) -> str:
    """The metric column with its direction: ``mse ↓``, ``accuracy ↑``, or as is."""
    arrow = {True: " ↑", False: " ↓", None: ""}[direction(column, task, registry)]
    return column + arrow


def format_number(value: float, digits: int = 3, noise: float = 0.0) -> str:
    """``value`` to ``digits`` significant digits; ``"0"`` when ``|value| <= noise``.

    ``noise`` is the level below which a value is numerical noise, not data (e.g.
    ``-2.22e-13`` next to values of order 1): :func:`noise_floor` gives it for a column.

    Examples
    --------
    >>> format_number(0.03799711350757817)
    '0.038'
    >>> format_number(-2.22e-13, noise=1e-9)
    '0'
    >>> format_number(78840.4)
    '7.88e+04'
    """
    if value is None or not math.isfinite(value):
        return "" if value is None or math.isnan(value) else str(value)
    if abs(value) <= noise:
        return "0"
    return f"{value:.{digits}g}"


def noise_floor(values: Any) -> float:
    """The magnitude below which a value of this column is float round-off: ``1e-9`` times
    the largest finite magnitude in it (relative double-precision noise after the
    arithmetic of a metric), and at least ``1e-300``."""
    x = np.abs(np.asarray(values, dtype=float))
    x = x[np.isfinite(x)]
    return max(1e-9 * float(x.max()), 1e-300) if x.size else 0.0


def declared_params(results: pd.DataFrame, kind: str, registry: Registry | None) -> list[str]:
    """The ``<kind>.<p>`` columns of a results table that are declared params of the
    components (``Params`` fields), not facts from ``Dataset.describe`` (which arrive as
    ``dataset.<key>`` too). Without a registry every ``<kind>.`` column counts.

    :param kind: ``"dataset"`` or ``"method"``.
    :returns: column names, in table order.
    """
    cols = [c for c in results.columns if c.startswith(f"{kind}.")]
    if registry is None or results.empty:
        return cols
    declared: set[str] = set()
    for (task, name), _ in results.groupby(["task", kind]):
        fields = _declared(registry, kind, str(task), str(name))
        declared |= set(fields) if fields is not None else {c.split(".", 1)[1] for c in cols}
    return [c for c in cols if c.split(".", 1)[1] in declared]


def summary_stats(results: pd.DataFrame, registry: Registry | None = None) -> pd.DataFrame:
    """Numbers behind the summary table, one row per (dataset, method, metric), one truth
    per cell (see :func:`summary_table`).

    Vectorised: a handful of group-bys over the whole frame, so the cost grows linearly
    with the number of cells, not with cells times configurations.

    :param results: rows of one task, in suite order (:meth:`Tracker.results`).
    :returns: columns ``task, dataset, method, metric, higher_is_better, n, n_ok, n_failed,
        n_timeout, mean, std_error, ci_low, ci_high`` (95% Student-t interval over the ok
        seeds, one value per seed: a configuration in two runs of a suite is not counted
        twice), in suite order; empty when no configuration has an ok or failed cell.
    """
    if results.empty:
        return pd.DataFrame()
    keys = ["_dataset", "_method"]
    frame = results.assign(
        _dataset=_labels(results, "dataset", registry),
        _method=_labels(results, "method", registry) + _metric_params_label(results),
    )
    task = str(results["task"].iloc[0])
    metrics = [m for m in metric_columns(results) if results[m].notna().any()]
    ok = frame[frame["status"] == "ok"]
    # A seed failed only where no cell of it is ok (one configuration can be in two runs of
    # a suite with other metric lists: two cells per seed, counted once)
    ok_seeds = pd.MultiIndex.from_frame(ok[[*keys, "seed"]])
    bad = frame[frame["status"].isin(["failed", "timeout"])]
    bad = bad[~pd.MultiIndex.from_frame(bad[[*keys, "seed"]]).isin(ok_seeds)]
    order = pd.MultiIndex.from_frame(frame[keys].drop_duplicates())  # suite order
    shown = pd.MultiIndex.from_frame(pd.concat([ok[keys], bad[keys]]).drop_duplicates())
    groups = order[order.isin(shown)]
    if groups.empty:  # only skipped cells: listed under the table instead
        return pd.DataFrame()
    counts = pd.DataFrame(index=groups)
    counts["n_ok"] = ok.groupby(keys, sort=False)["seed"].nunique()
    for status in ("failed", "timeout"):
        rows = bad[bad["status"] == status]
        counts[f"n_{status}"] = rows.groupby(keys, sort=False)["seed"].nunique()
    counts = counts.fillna(0).astype(int)
    per_seed = ok.groupby([*keys, "seed"], sort=False)[metrics].first()  # first non-missing
    per_seed = per_seed.astype(float).replace([np.inf, -np.inf], np.nan)
    by_config = per_seed.groupby(level=[0, 1], sort=False)
    long = pd.DataFrame(
        {
            "mean": by_config.mean().reindex(groups).stack(future_stack=True),
            "std": by_config.std(ddof=1).reindex(groups).stack(future_stack=True),
            "n": by_config.count().reindex(groups).fillna(0).stack(future_stack=True),
        }
    )
    long.index.names = ["dataset", "method", "metric"]
    out = long.reset_index()
    n = out["n"].astype(int).to_numpy()
    half = _t975_many(n) * out["std"].to_numpy() / np.sqrt(np.maximum(n, 1))
    two = n >= 2
    out["n"] = n
    out["mean"] = np.where(n >= 1, out["mean"], np.nan)
    out["std_error"] = np.where(two, out["std"] / np.sqrt(np.maximum(n, 1)), np.nan)
    out["ci_low"] = np.where(two, out["mean"] - half, np.nan)
    out["ci_high"] = np.where(two, out["mean"] + half, np.nan)
    out = out.join(counts, on=["dataset", "method"])
    out.insert(0, "task", task)
    out.insert(4, "higher_is_better", out["metric"].map(lambda m: direction(m, task, registry)))
    columns = ["task", "dataset", "method", "metric", "higher_is_better", "n", "n_ok"]
    columns += ["n_failed", "n_timeout", "mean", "std_error", "ci_low", "ci_high"]
    return out[columns]


def _t975_many(n: np.ndarray) -> np.ndarray:
    """:func:`_t975` of each count (NaN below 2)."""
    from scipy.special import stdtrit

    n = np.asarray(n, dtype=float)
    return np.where(n >= 2, stdtrit(np.maximum(n - 1, 1), 0.975), np.nan)


def tidy_results(results: pd.DataFrame) -> pd.DataFrame:
    """One row per cell for export (``harness results``): identity, status, params,
    metrics, seconds (``time.<phase>``), then provenance (run id, cell hash, plugin and
    version, git commit, start time in ms since the epoch). Metric values are floats;
    params stay as MLflow stores them (strings)."""
    if results.empty:
        return results
    first = ["task", "dataset", "method", "seed", "status", "reason"]
    params = [c for c in results.columns if c.startswith(PARAM_PREFIXES)]
    metrics = metric_columns(results)
    seconds = [c for c in results.columns if c.startswith("time.")]
    skipped = [c for c in results.columns if c.startswith(SKIPPED_PREFIX)]
    last = ["run_id", "cell_hash", "plugin", "plugin_version", "dataset_plugin"]
    last += ["git_commit", "start_time"]
    order = [*first, *params, *metrics, *seconds, *skipped, *last]
    out = results[[c for c in order if c in results.columns]].copy()
    out["seed"] = pd.to_numeric(out["seed"], errors="coerce").astype("Int64")
    return out.reset_index(drop=True)


def _metric_params_label(results: pd.DataFrame) -> pd.Series:
    """`` [scaled.scale=100]`` for rows whose metric params differ from other rows' (two runs
    of one configuration with other metric params are different cells, never pooled)."""
    cols = [c for c in results.columns if c.startswith("metric.") and results[c].nunique() > 1]
    if not cols:
        return pd.Series("", index=results.index)
    text = (
        results[cols]
        .astype(str)
        .apply(lambda row: ", ".join(f"{c.removeprefix('metric.')}={row[c]}" for c in cols), axis=1)
    )
    return " [" + text + "]"


def _t975(n: int) -> float:
    """The 97.5% quantile of Student's t with ``n - 1`` degrees of freedom
    (``scipy.special.stdtrit``, equal to ``scipy.stats.t.ppf`` at a quarter of the import
    time: start-up counts for small suites)."""
    from scipy.special import stdtrit

    return float(stdtrit(n - 1, 0.975))


def summary_table(results: pd.DataFrame, registry: Registry | None = None) -> pd.DataFrame:
    """Methods by metric for one task: ``"mean ± half-width"`` strings, one truth per cell.

    Every row of ``results`` is the latest run of its cell. Means and CIs use the ``ok``
    cells only; a configuration with failed or timed-out cells says so in ``seeds``
    (``"2 of 3 (1 failed)"``), and one with no ok cell shows ``failed`` in every metric
    column: an older success is never shown in its place. Numbers have 3 significant digits
    (half-widths 2); values below the column's :func:`noise_floor` print as ``0``.

    :param results: rows of one task, in suite order (see
        :meth:`harness.tracking.Tracker.results`).
    :param registry: tells declared params from described facts in row labels and gives
        each metric's direction (columns are labelled ``name ↑`` or ``name ↓``).
    :returns: a DataFrame indexed by (dataset, method) labels in suite order, ``seeds``
        then one column per metric, a dict metric's keys side by side.
    """
    stats = summary_stats(results, registry)
    if stats.empty:
        return _failed_only(results, registry)
    task = str(stats["task"].iloc[0])
    floors = {m: noise_floor(g["mean"]) for m, g in stats.groupby("metric", sort=False)}
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for record in stats.itertuples(index=False):
        key = (record.dataset, record.method)
        if key not in rows:
            failed = {"failed": record.n_failed, "timeout": record.n_timeout}
            total = record.n_ok + sum(failed.values())
            kinds = ", ".join(f"{n} {s}" for s, n in failed.items() if n)
            seeds = f"{record.n_ok} of {total} ({kinds})" if kinds else str(record.n_ok)
            rows[key] = {"seeds": seeds}
        noise = floors[record.metric]
        if record.n == 0:
            # no ok cell: what the cells ended as ("timed out" when none failed otherwise)
            text = "" if record.n_ok else ("failed" if record.n_failed else "timed out")
        elif record.n < 2:
            text = format_number(record.mean, noise=noise)
        else:
            half = record.ci_high - record.mean
            text = f"{format_number(record.mean, noise=noise)} ± " + format_number(
                half, digits=2, noise=max(noise, 1e-9 * abs(record.mean))
            )
        rows[key][record.metric] = text
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["dataset", "method"])
    metrics = sorted(
        (c for c in table.columns if c != "seeds"), key=_metric_order(list(table.columns))
    )
    table = table[["seeds", *metrics]]
    return table.rename(columns={m: column_label(m, task, registry) for m in metrics})


def _failed_only(results: pd.DataFrame, registry: Registry | None) -> pd.DataFrame:
    """The table of a task none of whose cells gave a metric: ``seeds`` only, e.g.
    ``0 of 3 (3 failed)``, one row per configuration with a failed or timed-out cell."""
    if results.empty:
        return pd.DataFrame()
    bad = results[results["status"].isin(["failed", "timeout"])]
    if bad.empty:
        return pd.DataFrame()
    frame = bad.assign(
        _dataset=_labels(bad, "dataset", registry), _method=_labels(bad, "method", registry)
    )
    rows = {}
    for key, group in frame.groupby(["_dataset", "_method"], sort=False):
        kinds = ", ".join(f"{n} {s}" for s, n in group["status"].value_counts().items())
        rows[key] = {"seeds": f"0 of {len(group)} ({kinds})"}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["dataset", "method"])
    return table


def _metric_order(columns: list[str]) -> Any:
    """Sort key keeping a dict metric's keys (``power.rate``, ``power.high``) together, in
    order of first appearance of the metric."""
    first: dict[str, int] = {}
    for i, col in enumerate(columns):
        first.setdefault(col.split(".", 1)[0], i)
    return lambda col: (first[col.split(".", 1)[0]], columns.index(col))


BEST_COLUMNS = ["dataset", "metric", "best", "mean ± 95% CI (n)", "tied"]


def best_methods(stats: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and metric with a direction, the method with the best mean and the
    methods tied with it (their 95% CIs overlap the best's).

    :param stats: :func:`summary_stats` of one task.
    :returns: columns ``dataset, metric, best, mean ± 95% CI (n), tied`` (tied: comma-
        separated method labels, ``""`` when the best is clear), in suite order.
    """
    if stats.empty:
        return pd.DataFrame(columns=BEST_COLUMNS)
    rows = []
    usable = stats[stats["higher_is_better"].notna() & (stats["n"] > 0)]
    for (dataset, metric), group in usable.groupby(["dataset", "metric"], sort=False):
        if group["method"].nunique() < 2:
            continue
        higher = bool(group["higher_is_better"].iloc[0])
        best = group.loc[group["mean"].idxmax() if higher else group["mean"].idxmin()]
        lo = best["ci_low"] if math.isfinite(best["ci_low"]) else best["mean"]
        hi = best["ci_high"] if math.isfinite(best["ci_high"]) else best["mean"]
        others = group[group["method"] != best["method"]]
        overlap = others[
            (others["ci_high"].fillna(others["mean"]) >= lo)
            & (others["ci_low"].fillna(others["mean"]) <= hi)
        ]
        noise = noise_floor(group["mean"])
        shown = format_number(best["mean"], noise=noise)
        if math.isfinite(best["ci_high"]):
            half = best["ci_high"] - best["mean"]
            shown += " ± " + format_number(
                half, digits=2, noise=max(noise, 1e-9 * abs(best["mean"]))
            )
        rows.append(
            {
                "dataset": dataset,
                "metric": metric + (" ↑" if higher else " ↓"),
                "best": best["method"],
                "mean ± 95% CI (n)": f"{shown} ({int(best['n'])})",
                "tied": ", ".join(overlap["method"]),
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
                for c in _param_columns(group, kind, str(name), registry)
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
    datasets = _labels(results, "dataset", registry, all_params=True)
    methods = _labels(results, "method", registry, all_params=True)
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


def tally(results: pd.DataFrame) -> str:
    """pytest's closing line for a suite: ``"2,289 ok, 90 skipped, 0 failed, 0 timed out"``
    over the latest run of each cell."""
    counts = results["status"].value_counts() if not results.empty else pd.Series(dtype=int)
    names = {"ok": "ok", "skipped": "skipped", "failed": "failed", "timeout": "timed out"}
    return ", ".join(f"{int(counts.get(k, 0)):,} {v}" for k, v in names.items())


class _LazyCurves(Mapping):
    """``{cell_hash: {metric: Curve}}`` read from the store on first access."""

    def __init__(self, tracker: Any, results: pd.DataFrame) -> None:
        self._tracker = tracker
        self._runs = dict(
            zip(
                results["cell_hash"],
                zip(results["run_id"], results["artifact_uri"], strict=True),
                strict=True,
            )
        )
        self._cache: dict[str, dict[str, Curve]] = {}

    def __getitem__(self, cell_hash: str) -> dict[str, Curve]:
        if cell_hash not in self._cache:
            self._cache[cell_hash] = self._tracker.curves(*self._runs[cell_hash])
        return self._cache[cell_hash]

    def __iter__(self) -> Iterator[str]:
        return iter(self._runs)

    def __len__(self) -> int:
        return len(self._runs)


def _markdown(table: pd.DataFrame) -> str:
    frame = table.reset_index() if table.index.name or table.index.names[0] else table
    frame = _formatted(frame)
    cols = [_cell_text(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell_text(v) for v in row) + " |")
    return "\n".join(lines)


def _cell_text(value: Any) -> str:
    """A Markdown table cell: ``|`` escaped and line breaks as spaces, so that a label such
    as ``mode=a|b`` stays in its column."""
    return " ".join(str(value).splitlines()).replace("|", "\\|")


def _formatted(frame: pd.DataFrame) -> pd.DataFrame:
    """Float columns as text with 3 significant digits (round-off noise as 0)."""
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            noise = noise_floor(out[col])
            out[col] = [format_number(v, noise=noise) for v in out[col]]
    return out


def _html_table(table: pd.DataFrame, collapse_over: int = 25) -> str:
    """A table as HTML (index as plain columns); one longer than ``collapse_over`` rows is
    folded (click to open)."""
    named = any(name is not None for name in table.index.names)
    frame = table.reset_index() if named else table
    text = _formatted(frame).to_html(border=0, index=False)
    if len(table) <= collapse_over:
        return text
    return f"<details><summary>{len(table)} rows (click to open)</summary>{text}</details>"


def _provenance(results: pd.DataFrame) -> str:
    """``24 ok, 0 skipped, ... · latest cell 2026-12-01 12:40 UTC · commit 1a2b3c4d5e``."""
    import datetime

    text = tally(results)
    if "start_time" in results and results["start_time"].notna().any():
        ms = float(results["start_time"].max())
        when = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
        text += f" · latest cell {when:%Y-%m-%d %H:%M} UTC"
    if "git_commit" in results:
        commits = sorted(set(results["git_commit"].dropna()))
        if commits:
            text += " · commit " + ", ".join(c[:10] for c in commits[:3])
    return text


def _anchor(*parts: str) -> str:
    return "-".join("".join(ch if ch.isalnum() else "-" for ch in p) for p in parts)


def _verdicts_html(verdicts: Sequence[Verdict]) -> str:
    """The verdict table in HTML, with each reason (an error's traceback) folded below."""
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
        for row in table_rows(verdicts)
    )
    header = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER)
    notes = "".join(
        f"<details><summary>{html.escape(v.claim)}: {html.escape(str(v.status))}</summary>"
        f"<pre>{html.escape(v.reason)}</pre></details>"
        for v in verdicts
        if v.reason
    )
    count = html.escape(count_line(verdicts))
    return f"<h2>Claims</h2><table><tr>{header}</tr>{rows}</table><p>{count}</p>{notes}"


def write_report(
    results: pd.DataFrame,
    registry: Registry,
    tracker: Any,
    title: str,
    out: Path,
    link: Callable[[str, str], str] | None = None,
    selection: Sequence[str] = (),
    verdicts: Sequence[Verdict] = (),
) -> list[str]:
    """Write the report folder of one suite and return the problems met (report errors).

    With ``verdicts`` (:func:`harness.claims.evaluate_claims`), both files open with the
    verdict table, an error's traceback follows it, and ``claims.json`` holds them all.

    ``report.html`` opens with a table of contents and, per task, a short summary: the
    cell tally and the best method per dataset and metric by the metric's direction, ties
    by overlapping 95% CIs. Then, per task, the mean ± CI table (folded when long), what
    it leaves out (failed cells, skipped metrics), and every plugin report's figures and
    tables. ``<task>-summary.csv`` holds the numbers (mean, standard error, CI bounds, n);
    ``<task>-mean-ci.csv`` the table as shown.

    :param results: every cell of the suite (:meth:`Tracker.results`), in suite order.
    :param out: the folder; created, files in it overwritten.
    :param link: ``(experiment_id, run_id) -> URL`` for failed cells' run pages.
    :param selection: the command-line options of the run (``--seeds 5,6``, ``--dataset
        x``, ...); those that choose or change cells (not ``--timeout``, ``--max-cells``) are
        stated under the title, so a report of part of a suite says so.
    """
    if "matplotlib" in sys.modules:  # figures are drawn off-screen
        sys.modules["matplotlib"].use("Agg")
    else:  # imported by the first report that draws, not before (start-up time)
        os.environ.setdefault("MPLBACKEND", "Agg")
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / ".harness-report-files"
    if manifest.exists():  # the files of an earlier report here: never mixed into this one
        for name in manifest.read_text().split("\n"):
            if name and "/" not in name and name not in (".", ".."):
                (out / name).unlink(missing_ok=True)
    before = set(out.iterdir())
    md = [f"# {title}", "", tally(results), ""]
    head = [f"<h1>{html.escape(title)}</h1>", f"<p>{html.escape(_provenance(results))}</p>"]
    shaping = [o for o in selection if not o.startswith(("--timeout", "--max-cells"))]
    if shaping:
        chosen = (
            f"Cells selected by {' '.join(shaping)}: the cells of the suite file as these"
            " options shape it, not as it is written."
        )
        md += [chosen, ""]
        head.append(f"<p><b>{html.escape(chosen)}</b></p>")
    if verdicts:
        md += ["## Claims", "", verdicts_markdown(verdicts)]
        for v in verdicts:
            if v.reason:
                md += [f"`{v.claim}` {v.status}:", "", "```text", v.reason.strip(), "```", ""]
        md.append("")
        head.append(_verdicts_html(verdicts))
        (out / "claims.json").write_text(json.dumps([v.as_dict() for v in verdicts], indent=1))
    summaries: list[str] = ["<h2>Summary per task</h2>"]
    toc: list[str] = []
    body: list[str] = []
    problems = []
    for task in dict.fromkeys(results["task"].dropna()):
        rows = results[results["task"] == task].reset_index(drop=True)
        stats = summary_stats(rows, registry)
        table = summary_table(rows, registry)
        best = best_methods(stats)
        anchor = _anchor("task", task)
        toc.append(f'<li><a href="#{anchor}">{html.escape(task)}</a> ({tally(rows)})<ul>')
        md += [f"## {task}", "", tally(rows), ""]
        body += [f'<h2 id="{anchor}">{html.escape(task)}</h2>', f"<p>{tally(rows)}</p>"]
        summaries.append(
            f'<h3><a href="#{anchor}">{html.escape(task)}</a></h3><p>{tally(rows)}</p>'
        )
        if not best.empty:
            caption = "Best method per dataset and metric (tied: 95% CIs overlap the best's)"
            summaries += [f"<p>{caption}:</p>", _html_table(best, 12)]
            md += [f"{caption}:", "", _markdown(best.set_index("dataset")), ""]
        if not table.empty:
            stats.to_csv(out / f"{task}-summary.csv", index=False)
            table.to_csv(out / f"{task}-mean-ci.csv")
            md += ["Mean ± 95% CI over ok seeds.", "", _markdown(table), ""]
            table_anchor = _anchor(task, "table")
            toc.append(f'<li><a href="#{table_anchor}">mean ± 95% CI table</a></li>')
            body += [
                f'<h3 id="{table_anchor}">Mean ± 95% CI over ok seeds</h3>',
                _html_table(table),
            ]
            settings = shared_settings(rows, registry)
            if settings:
                md += [settings, ""]
                body.append(f"<p>{html.escape(settings)}</p>")
        notes = problem_lines(rows, registry, link)
        if notes:
            md += [f"- {line}" for line in notes] + [""]
            body.append(
                "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in notes) + "</ul>"
            )
        curves = _LazyCurves(tracker, rows)
        for name in registry.names("report", task):
            report_cls = registry.entries["report"][(task, name)].cls
            try:
                items = report_cls().build(rows, curves)
            except Skip as reason:
                md += [f"*Report `{name}` skipped: {reason}*", ""]
                continue
            except Exception as err:  # a broken report must not lose the others
                log.exception("report %s failed", name)
                problems.append(f"report '{name}' (task '{task}') failed: {err!r}")
                md += [f"*Report `{name}` failed: {err!r}*", ""]
                continue
            for item_name, item in items.items():
                stem = f"{task}-{item_name}"
                item_anchor = _anchor(task, item_name)
                toc.append(f'<li><a href="#{item_anchor}">{html.escape(item_name)}</a></li>')
                heading = f'<h3 id="{item_anchor}">{html.escape(item_name)}</h3>'
                if isinstance(item, pd.DataFrame):
                    item.to_csv(out / f"{stem}.csv")
                    md += [f"### {item_name}", "", _markdown(item), ""]
                    body += [heading, _html_table(item)]
                else:
                    import matplotlib.pyplot as plt  # loaded already by the report's figure

                    item.savefig(out / f"{stem}.png", dpi=100, bbox_inches="tight")
                    plt.close(item)
                    md += [f"### {item_name}", "", f"![{item_name}]({stem}.png)", ""]
                    data = base64.b64encode((out / f"{stem}.png").read_bytes()).decode()
                    body += [
                        heading,
                        f'<img alt="{html.escape(item_name)}" src="data:image/png;base64,{data}">',
                    ]
        toc.append("</ul></li>")
    (out / "report.md").write_text("\n".join(md))
    style = (
        "body{font-family:sans-serif;margin:2em;max-width:80em}"
        "table{border-collapse:collapse;font-size:90%}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
        "img{max-width:100%}nav{columns:2;font-size:90%}summary{cursor:pointer}"
    )
    contents = "<nav><h2>Contents</h2><ul>" + "".join(toc) + "</ul></nav>"
    (out / "report.html").write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{style}</style></head><body>{''.join(head)}{contents}{''.join(summaries)}"
        f"{''.join(body)}</body></html>"
    )
    written = sorted({p.name for p in out.iterdir()} - {p.name for p in before})
    manifest.write_text("\n".join([*written, "report.md", "report.html"]) + "\n")
    return problems
