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

__all__ = ["mean_ci", "metric_columns", "summary_table", "write_report"]

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
        if c not in META and not c.startswith(PARAM_PREFIXES) and not c.startswith("time.")
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


def summary_table(results: pd.DataFrame, registry: Registry | None = None) -> pd.DataFrame:
    """Methods by metric for one task: ``"mean ± half-width"`` strings.

    :param results: rows of one task (see :meth:`harness.tracking.Tracker.results`).
    :param registry: tells declared params from described facts in row labels.
    :returns: a DataFrame indexed by (dataset, method) labels, one column per metric plus
        ``seeds`` (the number of ok cells).
    """
    ok = results[results["status"] == "ok"]
    if ok.empty:
        return pd.DataFrame()
    frame = ok.assign(
        _dataset=_labels(ok, "dataset", registry), _method=_labels(ok, "method", registry)
    )
    rows = {}
    for key, group in frame.groupby(["_dataset", "_method"], sort=False):
        row = {"seeds": str(len(group))}
        for metric in [m for m in metric_columns(ok) if ok[m].notna().any()]:
            mean, half, n = mean_ci(group[metric])
            row[metric] = "" if n == 0 else f"{mean:.4g}" + ("" if n < 2 else f" ± {half:.2g}")
        rows[key] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["dataset", "method"])
    return table


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
