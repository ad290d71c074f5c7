"""Result tables and plots: the run summary and the per-suite report folder.

Tables show, per task, every (dataset configuration, method configuration) by metric as
mean and 95% confidence half-width over seeds (Student t). :func:`write_report` adds every
plugin :class:`harness.Report` of the suite's tasks and writes ``report.md``, a
self-contained ``report.html`` (PNG plots embedded) and the PNG and CSV files to a folder.
"""

from __future__ import annotations

import base64
import html
import logging
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness.components import Curve, Skip, params_fields
from harness.registry import Registry

__all__ = [
    "column_label",
    "direction",
    "mean_ci",
    "metric_columns",
    "problem_lines",
    "summary_table",
    "write_report",
]

log = logging.getLogger(__name__)
META = (
    "cell_hash",
    "run_id",
    "artifact_uri",
    "status",
    "reason",
    "task",
    "dataset",
    "method",
    "seed",
)
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
    from scipy import stats

    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan, 0
    if x.size == 1:
        return float(x[0]), math.nan, 1
    half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return float(x.mean()), float(half), int(x.size)


def metric_columns(results: pd.DataFrame) -> list[str]:
    """Metric columns of a results table (not meta, not params, not ``time.*``)."""
    return [
        c
        for c in results.columns
        if c not in META and not c.startswith((*PARAM_PREFIXES, SKIPPED_PREFIX, "time."))
    ]


def _labels(results: pd.DataFrame, kind: str, registry: Registry | None) -> pd.Series:
    """``name(p=v, ...)`` with the declared params that vary among cells of the same name.

    Facts from ``Dataset.describe`` are logged as ``dataset.<key>`` params too, but may vary
    with the seed; only fields of the component's ``Params`` (when the registry knows the
    component) tell configurations apart.
    """
    labels = results[kind].astype(str).copy()
    for name, group in results.groupby(kind):
        declared = _declared(registry, kind, str(group["task"].iloc[0]), str(name))
        cols = [
            c
            for c in group.columns
            if c.startswith(f"{kind}.")
            and group[c].nunique() > 1
            and (declared is None or c.split(".", 1)[1] in declared)
        ]
        if cols:
            text = (
                group[cols]
                .astype(str)
                .apply(
                    lambda row, cols=cols: ", ".join(
                        f"{c.split('.', 1)[1]}={row[c]}" for c in cols
                    ),
                    axis=1,
                )
            )
            labels.loc[group.index] = f"{name}(" + text + ")"
    return labels


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


def summary_table(results: pd.DataFrame, registry: Registry | None = None) -> pd.DataFrame:
    """Methods by metric for one task: ``"mean ± half-width"`` strings, one truth per cell.

    Every row of ``results`` is the latest run of its cell. Means and CIs use the ``ok``
    cells only; a configuration with failed or timed-out cells says so in ``seeds``
    (``"2 of 3 (1 failed)"``), and one with no ok cell shows ``failed`` in every metric
    column: an older success is never shown in its place.

    :param results: rows of one task, in suite order (see
        :meth:`harness.tracking.Tracker.results`).
    :param registry: tells declared params from described facts in row labels and gives
        each metric's direction (columns are labelled ``name ↑`` or ``name ↓``).
    :returns: a DataFrame indexed by (dataset, method) labels in suite order, ``seeds``
        then one column per metric.
    """
    if results.empty:
        return pd.DataFrame()
    frame = results.assign(
        _dataset=_labels(results, "dataset", registry),
        _method=_labels(results, "method", registry),
    )
    task = str(results["task"].iloc[0])
    metrics = [m for m in metric_columns(results) if results[m].notna().any()]
    rows = {}
    for key, group in frame.groupby(["_dataset", "_method"], sort=False):
        ok = group[group["status"] == "ok"]
        bad = group[group["status"].isin(["failed", "timeout"])]
        if ok.empty and bad.empty:  # only skipped cells: listed under the table instead
            continue
        seeds = str(len(ok))
        if len(bad):
            kinds = ", ".join(f"{n} {s}" for s, n in bad["status"].value_counts().items())
            seeds = f"{len(ok)} of {len(ok) + len(bad)} ({kinds})"
        row = {"seeds": seeds}
        for metric in metrics:
            mean, half, n = mean_ci(ok[metric]) if len(ok) else (math.nan, math.nan, 0)
            if n == 0:
                row[metric] = "failed" if len(ok) == 0 and len(bad) else ""
            else:
                row[metric] = f"{mean:.4g}" + ("" if n < 2 else f" ± {half:.2g}")
        rows[key] = row
    if not rows:
        return pd.DataFrame()
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["dataset", "method"])
    return table.rename(columns={m: column_label(m, task, registry) for m in metrics})


def problem_lines(results: pd.DataFrame) -> list[str]:
    """What a table leaves out, one line each: failed and timed-out cells (with their
    reason), skipped cells and skipped metrics grouped by reason."""
    if results.empty:
        return []
    lines = []
    for _, row in results[results["status"].isin(["failed", "timeout"])].iterrows():
        lines.append(
            f"{row['status']}: {row['dataset']} / {row['method']} seed={row['seed']}:"
            f" {row.get('reason', '')}"
        )
    skipped = results[results["status"] == "skipped"]
    for reason, group in skipped.groupby("reason", sort=False):
        lines.append(f"skipped {len(group)} cell(s): {reason}")
    for col in [c for c in results.columns if c.startswith(SKIPPED_PREFIX)]:
        metric = col.removeprefix(SKIPPED_PREFIX)
        for reason, group in results.groupby(col, sort=False):
            lines.append(f"metric '{metric}' skipped on {len(group)} cell(s): {reason}")
    return lines


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
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines)


def write_report(
    results: pd.DataFrame, registry: Registry, tracker: Any, title: str, out: Path
) -> list[str]:
    """Write the report folder of one suite and return the problems met (report errors).

    :param results: every cell of the suite (:meth:`Tracker.results`).
    :param out: the folder; created, files in it overwritten.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    md = [f"# {title}", ""]
    body = [f"<h1>{html.escape(title)}</h1>"]
    problems = []
    for task in sorted(results["task"].dropna().unique()):
        rows = results[results["task"] == task].reset_index(drop=True)
        counts = ", ".join(f"{n} {status}" for status, n in rows["status"].value_counts().items())
        md += [f"## {task}", "", f"Cells: {counts}", ""]
        body += [f"<h2>{html.escape(task)}</h2>", f"<p>Cells: {html.escape(str(counts))}</p>"]
        table = summary_table(rows, registry)
        if not table.empty:
            table.to_csv(out / f"{task}-mean-ci.csv")
            md += ["Mean ± 95% CI over seeds.", "", _markdown(table), ""]
            body.append(table.to_html())
        notes = problem_lines(rows)
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
                if isinstance(item, pd.DataFrame):
                    item.to_csv(out / f"{stem}.csv")
                    md += [f"### {item_name}", "", _markdown(item), ""]
                    body += [f"<h3>{html.escape(item_name)}</h3>", item.to_html()]
                else:
                    item.savefig(out / f"{stem}.png", dpi=110, bbox_inches="tight")
                    plt.close(item)
                    md += [f"### {item_name}", "", f"![{item_name}]({stem}.png)", ""]
                    data = base64.b64encode((out / f"{stem}.png").read_bytes()).decode()
                    body += [
                        f"<h3>{html.escape(item_name)}</h3>",
                        f'<img alt="{html.escape(item_name)}" src="data:image/png;base64,{data}">',
                    ]
    (out / "report.md").write_text("\n".join(md))
    style = (
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px}img{max-width:100%}"
    )
    (out / "report.html").write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{style}</style></head><body>{''.join(body)}</body></html>"
    )
    return problems
