"""The per-suite report folder: ``report.md``, a self-contained ``report.html`` (PNG plots
embedded), and the PNG and CSV files beside them.

:func:`write_report` computes each task's statistics once (:mod:`harness.reports.aggregates`), its
tables (:mod:`harness.reports.tables`), runs every plugin :class:`harness.Report` of the suite's
tasks (each figure drawn and saved once), and renders one :class:`harness.reports.render.Document`
to both formats (:mod:`harness.reports.render`).
"""

from __future__ import annotations

import base64
import datetime
import io
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.claims.verdicts import Verdict, count_line
from harness.components import Curve, Skip
from harness.lazy import LazyModule
from harness.plugins.registry import Registry
from harness.reports.aggregates import summary_stats, tally
from harness.reports.render import Document, Part, Section, anchor, markdown_cell, render
from harness.reports.tables import best_methods, problem_lines, shared_settings, table_of

pd = LazyModule("pandas")  # imported when a table is built (light plugin imports)

__all__ = [
    "claims_note",
    "coverage_line",
    "forest_plot",
    "sequences_plot",
    "source_files",
    "write_report",
]

log = logging.getLogger(__name__)
MANIFEST = ".harness-report-files"  # the files the last report wrote to its folder


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


def coverage_line(results: pd.DataFrame, cells: int | None) -> str:
    """How many of the suite's ``cells`` have no result in ``results`` (one row per cell):
    ``"2 of 6 cells have no result (...)"`` or ``"All 6 cells have a result."``; ``""``
    when ``cells`` is not known.

    Examples
    --------
    >>> import pandas as pd
    >>> coverage_line(pd.DataFrame({"status": ["ok"] * 4}), 6)[:30]
    '2 of 6 cells have no result (n'
    >>> coverage_line(pd.DataFrame({"status": ["ok"] * 4}), 4)
    'All 4 cells have a result.'
    """
    if cells is None:
        return ""
    missing = max(cells - len(results), 0)
    if not missing:
        return f"All {cells:,} cells have a result."
    return (
        f"{missing:,} of {cells:,} cells have no result (never run, stopped before they ran,"
        f" or run with other code or settings): the tables show the other {len(results):,}."
    )


def _provenance(results: pd.DataFrame) -> str:
    """``24 ok, 0 skipped, ... · latest cell 2026-12-01 12:40 UTC · commit 1a2b3c4d5e``."""
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


def _chosen(selection: Sequence[str]) -> str:
    """The sentence naming the options that chose or changed the cells (not ``--timeout``,
    ``--max-cells``), or ``""``."""
    shaping = [o for o in selection if not o.startswith(("--timeout", "--max-cells"))]
    if not shaping:
        return ""
    return (
        f"Cells selected by {' '.join(shaping)}: the cells of the suite file as these"
        " options shape it, not as it is written."
    )


def _figure(item: Any, task: str, name: str, out: Path) -> Part:
    """A plugin report's matplotlib figure saved once as ``<task>-<name>.png`` and closed;
    the same bytes are embedded in the HTML."""
    import matplotlib.pyplot as plt  # loaded already by the report's figure

    stem = f"{task}-{name}"
    buffer = io.BytesIO()
    item.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    plt.close(item)
    (out / f"{stem}.png").write_bytes(buffer.getvalue())
    data = base64.b64encode(buffer.getvalue()).decode()
    return Part(name, anchor(task, name), image=f"{stem}.png", data=data)


def _plugin_parts(
    rows: pd.DataFrame, registry: Registry, tracker: Any, task: str, out: Path
) -> tuple[list[Part], list[str]]:
    """Every plugin report of ``task`` built on its rows: its tables (also as
    ``<task>-<name>.csv``) and figures, or a note that it was skipped or failed; and the
    problems met (a broken report never loses the others)."""
    parts: list[Part] = []
    problems: list[str] = []
    curves = _LazyCurves(tracker, rows)
    for name in registry.names("report", task):
        report_cls = registry.entries["report"][(task, name)].cls
        try:
            items = report_cls().build(rows, curves)
        except Skip as reason:
            parts.append(Part(name, note=f"Report `{name}` skipped: {reason}"))
            continue
        except Exception as err:  # a broken report must not lose the others
            log.exception("report %s failed", name)
            problems.append(f"report '{name}' (task '{task}') failed: {err!r}")
            parts.append(Part(name, note=f"Report `{name}` failed: {err!r}"))
            continue
        for item_name, item in items.items():
            stem = f"{task}-{item_name}"
            if isinstance(item, pd.DataFrame):
                item.to_csv(out / f"{stem}.csv")
                parts.append(Part(item_name, anchor(task, item_name), table=item))
            else:
                parts.append(_figure(item, task, item_name, out))
    return parts, problems


def _section(
    rows: pd.DataFrame,
    registry: Registry,
    tracker: Any,
    out: Path,
    link: Callable[[str, str], str] | None,
) -> tuple[Section, list[str]]:
    """One task's section (its statistics computed once) and the problems met; writes
    ``<task>-summary.csv`` (the numbers) and ``<task>-mean-ci.csv`` (the table as shown)."""
    task = str(rows["task"].iloc[0])
    stats = summary_stats(rows, registry)
    table = table_of(stats, rows, registry)
    if not table.empty:
        stats.to_csv(out / f"{task}-summary.csv", index=False)
        table.to_csv(out / f"{task}-mean-ci.csv")
    parts, problems = _plugin_parts(rows, registry, tracker, task, out)
    section = Section(
        task=task,
        anchor=anchor("task", task),
        tally=tally(rows),
        best=best_methods(stats),
        table=table,
        table_anchor=anchor(task, "table"),
        settings=shared_settings(rows, registry) if not table.empty else "",
        problems=problem_lines(rows, registry, link),
        parts=parts,
    )
    return section, problems


_COLOURS = {"reproduced": "#2e7d32", "not-reproduced": "#c62828", "inconclusive": "#ef8f00",
            "uninformative": "#8e24aa", "not-run": "#9e9e9e", "error": "#424242"}  # fmt: skip


def forest_plot(verdicts: Sequence[Verdict], path: Path) -> bytes:
    """Draw the verdicts as a forest plot, save it to ``path`` (PNG) and return its bytes.

    One row per claim, each on its own scale (a claim's statistic has its own units): the
    row spans its interval, its margin and its rivals' and control's estimates, with a
    little room; the values at its ends are written there
    (:data:`harness.reports.render.FOREST_CAPTION`). Claims without an estimate (not run, in
    error) are named with their verdict. About 0.28 inch a row: 60 claims make a figure 18
    inches tall, every label readable.
    """
    import matplotlib.pyplot as plt

    rows = len(verdicts)
    height = 0.9 + 0.28 * rows
    fig, ax = plt.subplots(figsize=(12, height))
    fig.subplots_adjust(left=0.3, right=0.7, bottom=0.3 / height, top=1 - 0.5 / height)
    for y, v in enumerate(reversed(verdicts)):
        colour = _COLOURS.get(str(v.status), "black")
        _forest_row(ax, y, v, colour)
    ax.set_yticks(range(rows))
    ax.set_yticklabels([f"{v.task} · {v.claim}" for v in reversed(verdicts)], fontsize=7)
    for label, v in zip(ax.get_yticklabels(), reversed(verdicts), strict=True):
        label.set_color(_COLOURS.get(str(v.status), "black"))
    ax.set_xlim(-0.02, 1.0)
    ax.set_ylim(-0.7, rows - 0.3)
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    handles = [plt.Line2D([], [], color=c, marker="o", lw=2, label=s) for s, c in _COLOURS.items()]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=6,
              fontsize=7, frameon=False)  # fmt: skip
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)  # not "tight": that draws it twice
    plt.close(fig)
    path.write_bytes(buffer.getvalue())
    return buffer.getvalue()


def sequences_plot(verdicts: Sequence[Verdict], path: Path) -> bytes:
    """Each claim a decide pass looked at (``Verdict.trajectory``): its estimate and
    anytime-valid interval against the units after each batch, its margin drawn; one panel
    a claim, saved to ``path`` (PNG) and returned as bytes. Empty bytes when none has one."""
    import math

    import matplotlib.pyplot as plt

    decided = [v for v in verdicts if v.trajectory]
    if not decided:
        return b""
    columns = min(3, len(decided))
    rows = math.ceil(len(decided) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4 * columns, 2.6 * rows), squeeze=False)
    for ax in axes.ravel()[len(decided) :]:
        ax.set_visible(False)
    for ax, v in zip(axes.ravel(), decided, strict=False):
        units, estimate, low, high = (list(x) for x in zip(*v.trajectory, strict=True))
        colour = _COLOURS.get(str(v.status), "black")
        ax.fill_between(units, low, high, color=colour, alpha=0.25, step="post")
        ax.plot(units, estimate, "o-", color=colour, ms=3)
        for edge in v.band or ():
            if math.isfinite(edge):
                ax.axhline(edge, ls="--", lw=0.8, color="#555")
        ax.set_title(f"{v.claim}: {v.status}", fontsize=8, color=colour)
        ax.set_xlabel("units", fontsize=7)
        ax.tick_params(labelsize=6)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    path.write_bytes(buffer.getvalue())
    return buffer.getvalue()


def _forest_row(ax: Any, y: int, v: Verdict, colour: str) -> None:
    """One claim's row, its values mapped from ``[lo, hi]`` (its own range) to ``[0, 1]``;
    the verdict and interval written right of it."""
    import math

    e = v.estimate
    text = f"{v.status}  {v.interval}  {v.hypothesis}" if e else f"{v.status}  {v.hypothesis}"
    ax.text(1.02, y, text, fontsize=6.5, va="center", color=colour, clip_on=False)
    if e is None:
        return
    marks = {"rival": [o.estimate.estimate for o in v.rivals.values() if o.estimate]}
    marks["control"] = [v.control.estimate.estimate] if v.control and v.control.estimate else []
    low, high = v.band or (-math.inf, math.inf)
    edges = [x for x in (low, high) if math.isfinite(x)]
    values = [e.low, e.high, e.estimate, *edges]  # a far rival or control: at the row's end
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or abs(lo) * 0.1 or 1.0
    lo, hi = lo - pad, hi + pad

    def x(value: float) -> float:
        return min(max((value - lo) / (hi - lo), 0.0), 1.0)

    ax.axhspan(y - 0.5, y + 0.5, color="#f4f4f4" if y % 2 else "white", zorder=0)
    ax.fill_betweenx([y - 0.35, y + 0.35], x(low), x(high), color="#c8e6c9", zorder=1)
    for edge in edges:
        ax.plot([x(edge)] * 2, [y - 0.4, y + 0.4], ls="--", lw=0.8, color="#555", zorder=2)
    ax.plot([x(e.low), x(e.high)], [y, y], color=colour, lw=2, zorder=3)
    ax.plot([x(e.estimate)], [y], "o", color=colour, ms=4, zorder=4)
    for value in marks["rival"]:
        ax.plot([x(value)], [y], "x", color="#333", ms=5, zorder=5)
    for value in marks["control"]:
        ax.plot([x(value)], [y], "D", mfc="none", mec="#333", ms=4, zorder=5)
    for at, value, align in ((0.0, lo, "left"), (1.0, hi, "right")):
        ax.text(at, y - 0.42, f"{value:.3g}", fontsize=5, color="#888", ha=align, va="bottom")


def _off_screen() -> None:
    """Plugin reports' figures are drawn off-screen (matplotlib's Agg backend), set when
    matplotlib is imported by the first report that draws, not before (start-up time)."""
    if "matplotlib" in sys.modules:
        sys.modules["matplotlib"].use("Agg")
    else:
        os.environ.setdefault("MPLBACKEND", "Agg")


def source_files() -> list[Path]:
    """The files whose code decides what a report shows and how: these modules and the
    templates. A report key (``harness run`` keeps a current report) covers them, so that
    editing any of them rebuilds the report."""
    from harness.reports import aggregates as summary
    from harness.reports import render, tables

    modules = [Path(m.__file__) for m in (sys.modules[__name__], render, summary, tables)]
    return [*modules, *sorted((Path(render.__file__).parent / "templates").glob("*.j2"))]


def _clear(out: Path) -> set[str]:
    """Delete the files an earlier report listed in the folder's manifest (never mixed into
    this one; other files are left alone) and return the names still there."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / MANIFEST
    if manifest.exists():
        for name in manifest.read_text().split("\n"):
            if name and "/" not in name and name not in (".", ".."):
                (out / name).unlink(missing_ok=True)
    return {p.name for p in out.iterdir()}


def claims_note(verdicts: Sequence[Verdict]) -> str:
    """The verdicts as a short Markdown table (claim, status, estimate [interval]) and the
    count line: ``claims.md`` of the report, which :meth:`harness.store.tracking.Tracker.log_folder`
    also makes the parent run's description in the MLflow UI."""
    lines = ["| claim | status | estimate [interval] |", "| --- | --- | --- |"]
    for v in verdicts:
        name = f"{v.claim} (exploratory)" if v.exploratory else v.claim
        cells = (name, str(v.status), v.interval)
        lines.append("| " + " | ".join(markdown_cell(c) for c in cells) + " |")
    return "\n".join(lines) + f"\n\n{count_line(verdicts)}\n"


def write_report(
    results: pd.DataFrame,
    registry: Registry,
    tracker: Any,
    title: str,
    out: Path,
    link: Callable[[str, str], str] | None = None,
    selection: Sequence[str] = (),
    verdicts: Sequence[Verdict] = (),
    cells: int | None = None,
) -> list[str]:
    """Write the report folder of one suite and return the problems met (report errors).

    Both files open with the title, the tally, how many of the suite's cells have no result
    (with ``cells``) and the options that chose the cells. With ``verdicts``
    (:func:`harness.claims.evaluate_claims`) the verdict table follows, an error's traceback
    below it, ``claims.json`` holds them all and ``claims.md`` their short table
    (:func:`claims_note`).

    ``report.html`` then has a table of contents and, per task, a short summary: the cell
    tally and the best method per dataset and metric by the metric's direction, ties by
    overlapping 95% CIs. Then, per task, the mean ± CI table (folded when long), what it
    leaves out (failed cells, skipped metrics), and every plugin report's figures and
    tables. ``<task>-summary.csv`` holds the numbers (mean, standard error, CI bounds, n);
    ``<task>-mean-ci.csv`` the table as shown.

    :param results: every cell of the suite with a result (:meth:`Tracker.results`, its
        latest run), in suite order.
    :param out: the folder; created, files in it overwritten.
    :param link: ``(experiment_id, run_id) -> URL`` for failed cells' run pages.
    :param selection: the command-line options of the run (``--seeds 5,6``, ``--dataset
        x``, ...); those that choose or change cells (not ``--timeout``, ``--max-cells``) are
        stated under the title, so a report of part of a suite says so.
    :param cells: how many cells the suite holds (as the options shape it); the report
        says how many of them have no row in ``results`` (:func:`coverage_line`).
    """
    _off_screen()
    before = _clear(out)
    forest = sequences = ""
    if verdicts:
        (out / "claims.json").write_text(json.dumps([v.as_dict() for v in verdicts], indent=1))
        (out / "claims.md").write_text(claims_note(verdicts))
        forest = base64.b64encode(forest_plot(verdicts, out / "claims.png")).decode()
        sequences = base64.b64encode(sequences_plot(verdicts, out / "sequences.png")).decode()
    sections, problems = [], []
    for task in dict.fromkeys(results["task"].dropna()):
        rows = results[results["task"] == task].reset_index(drop=True)
        section, met = _section(rows, registry, tracker, out, link)
        sections.append(section)
        problems += met
    document = Document(
        title=title,
        tally=tally(results),
        provenance=_provenance(results),
        coverage=coverage_line(results, cells),
        chosen=_chosen(selection),
        verdicts=verdicts,
        forest=forest,
        sequences=sequences,
        sections=sections,
    )
    md, page = render(document)
    (out / "report.md").write_text(md)
    (out / "report.html").write_text(page)
    written = sorted({p.name for p in out.iterdir()} - before)
    (out / MANIFEST).write_text("\n".join([*written, "report.md", "report.html"]) + "\n")
    return problems
