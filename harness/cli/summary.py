"""What ``harness run`` prints and writes when its cells have ended: the summary tables,
the report, the tally and the verdict of each claim (also printed by ``harness claims``)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from harness.cli.common import (
    console,
    duration,
    err_console,
    literal,
    plain,
    print_frame,
    report_folder,
)

if TYPE_CHECKING:
    import pandas as pd

    from harness.claims.verdicts import Verdict
    from harness.plugins.registry import Registry
    from harness.runs.runner import SuiteOutcome
    from harness.store.tracking import Tracker
    from harness.suites.loading import Suite

_VERDICT_STYLE = {
    "reproduced": "green",
    "not-reproduced": "red",
    "inconclusive": "yellow",
    "uninformative": "magenta",
    "not-run": "dim",
    "error": "bold red",
}


def verdicts_of(
    registry: Registry,
    spec: Suite,
    results: pd.DataFrame,
    names: tuple[str, ...] = (),
    anytime: Any = (),
    trajectories: Any = None,
) -> list:
    """Evaluate the claims ``spec`` touches (or ``names``) on ``results``; those in
    ``anytime`` through their confidence sequences (a decide pass looked at them)."""
    from harness.claims import evaluate_claims
    from harness.claims.evidence import suite_claims
    from harness.reports.aggregates import tidy_results

    claims = suite_claims(registry, spec.cells, names)
    if not claims:
        return []
    from harness.claims.evidence import registered

    frame = tidy_results(results) if not results.empty else results
    verdicts = evaluate_claims(claims, frame, registered(registry), anytime=anytime)
    paths = trajectories or {}
    return [v.replace(trajectory=tuple(paths[v.claim])) if paths.get(v.claim) else v
            for v in verdicts]  # fmt: skip


def claims_fail(verdicts: list[Verdict], spec: Suite) -> bool:
    """Whether ``--strict-claims`` fails: a claim not reproduced, uninformative, not run or
    in error, or a task of ``spec`` with no claim evaluated at all, which is named on stderr
    (a paper's CI must not pass on a claim it could not evaluate, nor on claims that
    vanished)."""
    from harness.claims.verdicts import Status

    failing = (Status.NOT_REPRODUCED, Status.UNINFORMATIVE, Status.NOT_RUN, Status.ERROR)
    tasks = dict.fromkeys(c.task for c in spec.cells)
    bare = [t for t in tasks if t not in {v.task for v in verdicts}]
    if bare:
        err_console.print(
            f"[yellow]--strict-claims: no claim of task {literal(', '.join(bare))} was evaluated"
            f" on suite {literal(spec.name)}: no installed plugin declares one that reads its"
            " cells.[/]",
            soft_wrap=True,
        )
    return bool(bare) or any(v.status in failing for v in verdicts)


TERMINAL_WIDTH = 140
"""The widest the verdict table is printed (a narrower terminal folds it further)."""

_WIDEST = {"estimate [95% CI]": 17, "tested against": 10, "p (Holm)": 8, "MDE": 8,
           "control": 10, "rivals": 9}  # fmt: skip

NOTE_LENGTH = 600
"""The longest note printed under the table (a list of missing cells can run to pages)."""

_SHORT = {"not-reproduced": "fails", "reproduced": "holds", "inconclusive": "undecided",
          "uninformative": "holds", "not-run": "not run", "error": "error"}  # fmt: skip


def print_verdicts(verdicts: list[Verdict], fmt: str = "table") -> None:
    """The verdict table, each paper's claims under its name, folded to fit a terminal;
    then the legend, the notes (each ``why`` the table shortens, whole, numbered as its
    row, and each added method's placing) and the count line.

    The terminal's columns are those of the Markdown table, narrower: ``p (Holm)`` is
    Holm's p alone (the test's own p is in the Markdown and JSON), the control and rivals
    say whether they fail (as they must), ``why`` is a few words."""
    import json

    from rich import box

    from harness.claims.verdicts import HEADER, count_line, legend, notes, verdicts_markdown

    if fmt == "json":
        click.echo(json.dumps([v.as_dict() for v in verdicts], indent=1))
        return
    if fmt == "markdown":
        click.echo(verdicts_markdown(verdicts), nl=False)
        return
    width = min(console.width, TERMINAL_WIDTH)
    rows, lines = [], []
    for v in verdicts:
        why, full = v.why_short, " ".join(v.why.split())
        if full and full != why:
            lines.append(f"[{len(lines) + 1}] {v.claim}: {full}")
            why = f"{why} [{len(lines)}]"
        rows.append((v, _terminal_row(v, why)))
    widths = _widths([row for _, row in rows], width)
    if widths is None:  # too narrow for a why column: each row's number leads to its note
        lines = [f"[{i + 1}] {v.claim}: {' '.join(v.why.split())}" for i, (v, _) in
                 enumerate(rows)]  # fmt: skip
        rows = [(v, [r[0], f"{r[1]} [{i + 1}]", *r[2:-1]]) for i, (v, r) in enumerate(rows)]
    table = Table(title="Claims: verdict per claim (docs/design.md 'Claims')",
                  title_justify="left", box=box.SIMPLE_HEAD, width=width,
                  padding=0)  # fmt: skip
    for i, name in enumerate(HEADER[1:] if widths else HEADER[1:-1]):
        table.add_column(name, overflow="fold", no_wrap=name in ("verdict", "units"),
                         width=widths[i] if widths else None)  # fmt: skip
    paper = None
    for v, row in rows:
        if v.task != paper:
            paper = v.task
            table.add_row(f"[bold]{literal(paper)}[/]")
        style = _VERDICT_STYLE.get(str(v.status), "")
        table.add_row(literal(row[0]), f"[{style}]{literal(row[1])}[/]", *plain(*row[2:]))
    console.print(table)
    console.print(literal(legend(verdicts)), style="dim", width=width)
    for line in [*lines, *notes(verdicts, None)]:
        cut = f"... ({len(line) - NOTE_LENGTH:,} characters more: --format json)"
        shown = line if len(line) <= NOTE_LENGTH else line[:NOTE_LENGTH] + cut
        console.print(f"  {literal(shown)}", soft_wrap=True)
    console.print(f"[bold]{literal(count_line(verdicts))}[/]")


def _terminal_row(v: Any, why: str) -> list[str]:
    """A verdict's cells in the terminal (the columns of HEADER but the paper), as text."""
    from harness.claims.verdicts import table_rows

    (row,) = table_rows([v])
    row[6] = "-" if v.p_adjusted is None else f"{v.p_adjusted:.2g}"
    row[8] = _checks([v.control] if v.control else [])
    row[9] = _checks(list(v.rivals.values()))
    row[10] = why
    return row[1:]


def _widths(rows: list[list[str]], width: int) -> list[int] | None:
    """Each column's width so that the table is ``width`` wide: the short columns as wide
    as their longest cell (at most :data:`_WIDEST`), the claim's name on one line where the
    rest allows (up to 40), the why the rest; None when that leaves the why under 16."""
    from harness.claims.verdicts import HEADER

    names = HEADER[1:]
    natural = [
        max([*(len(word) for word in n.split()), *(len(r[i]) for r in rows)])
        for i, n in enumerate(names)
    ]  # a header folds between its words only
    fixed = [min(w, _WIDEST.get(n, w)) for n, w in zip(names, natural, strict=True)]
    rest = width - sum(fixed[1:-1]) - (len(names) + 1)  # a space between columns and at ends
    claim = min(natural[0], 40, rest - 16)
    if rest - claim < 16 or claim < 12:
        return None
    return [claim, *fixed[1:-1], rest - claim]


def _checks(outcomes: list[Any]) -> str:
    """``fails`` (``fails 19/20`` for a randomised control) for one outcome, ``3/3 fail``
    for several, ``-`` for none."""
    if not outcomes:
        return "-"
    if len(outcomes) == 1:
        o = outcomes[0]
        draws = f" {round(o.failed * o.draws)}/{o.draws}" if o.draws > 1 and o.failed else ""
        return _SHORT.get(str(o.status), str(o.status)) + draws
    failed = sum(str(o.status) == "not-reproduced" for o in outcomes)
    return f"{failed}/{len(outcomes)} fail"


def summarise(
    tracker: Tracker,
    registry: Registry,
    spec: Suite,
    outcome: SuiteOutcome,
    report_dir: Path,
    elapsed: float,
    claim_names: tuple[str, ...] = (),
    evidence: Any = None,
    anytime: Any = (),
    trajectories: Any = None,
) -> list[Any]:
    """Print the tables, write the report, print the tally and the verdicts; return them.
    ``evidence``: the suite whose cells the verdicts read (default ``spec``)."""
    from harness.reports.aggregates import tally
    from harness.store.layout import ui_link

    results = tracker.suite_results(spec)
    _print_tables(tracker, registry, spec, results)
    claim_rows = results if evidence is None else tracker.suite_results(evidence)
    verdicts = verdicts_of(registry, spec, claim_rows, claim_names, anytime, trajectories)
    if not results.empty:
        selection = spec.expanded.get("overrides", [])
        out = report_folder(report_dir, spec.name, selection, claim_names)  # a part: apart
        _write_report(tracker, registry, spec, outcome, results, verdicts, out)
        for _, parent in outcome.experiments.values():
            tracker.log_folder(parent, out, "report")
            tracker.set_tags(parent, {f"claim.{v.claim}": str(v.status) for v in verdicts})
    if not tracker.uri.startswith(("http://", "https://")):
        console.print(f"Open the UI with: harness ui --tracking-uri '{literal(tracker.uri)}', then")
    for name, (experiment_id, _) in outcome.experiments.items():
        console.print(f"  {literal(name)}: {literal(ui_link(tracker.uri, experiment_id))}")
    not_run = len(spec.cells) - len(results)  # --fail-fast stopped before them
    also = f", {not_run:,} not run" if not_run > 0 else ""
    console.print(f"[bold]{tally(results)}{also} in {duration(elapsed)}[/]")
    if verdicts:
        print_verdicts(verdicts)
    return verdicts


def _print_tables(tracker: Tracker, registry: Registry, spec: Suite, results: pd.DataFrame) -> None:
    """Per task: the summary table, the settings every row shares and the problem lines."""
    from harness.reports.tables import problem_lines, shared_settings, summary_table
    from harness.store.layout import ui_link

    def link(experiment_id: str, run_id: str) -> str:
        return ui_link(tracker.uri, experiment_id, run_id)

    for task in spec.tasks():
        rows = results[results["task"] == task] if not results.empty else results
        if rows.empty:
            continue
        table = summary_table(rows, registry)
        print_frame(table, f"{task}: mean ± 95% CI over ok seeds (latest run of each cell)")
        settings = shared_settings(rows, registry) if not table.empty else ""
        if settings:
            console.print(f"  {literal(settings)}", soft_wrap=True)
        for line in problem_lines(rows, registry, link):
            colour = "yellow" if line.startswith(("skipped", "metric")) else "red"
            console.print(f"  [{colour}]{literal(line)}[/]", soft_wrap=True)


def _write_report(
    tracker: Tracker,
    registry: Registry,
    spec: Suite,
    outcome: SuiteOutcome,
    results: pd.DataFrame,
    verdicts: list[Verdict],
    out: Path,
) -> None:
    """Write the suite's report in ``out`` unless the one there is current."""
    from harness.reports.folder import write_report
    from harness.store.layout import ui_link

    def link(experiment_id: str, run_id: str) -> str:
        return ui_link(tracker.uri, experiment_id, run_id)

    selection = spec.expanded.get("overrides", [])
    key = _report_key(spec.name, results, verdicts, selection, registry, len(spec.cells))
    stamp = out / ".harness-report-key"
    current = (
        outcome.ran == 0
        and all((out / name).is_file() for name in ("report.html", "report.md"))
        and (not verdicts or (out / "claims.json").is_file())
        and stamp.is_file()
        and stamp.read_text() == key
    )
    if not current:  # a resumed run with nothing new keeps the report it has
        written = write_report(
            results,
            registry,
            tracker,
            spec.name,
            out,
            link,
            selection,
            verdicts,
            cells=len(spec.cells),
        )
        for problem in written:
            console.print(f"[red]{literal(problem)}[/]")
        stamp.write_text(key)
    note = " (current: same cells, runs and verdicts; not rebuilt)" if current else ""
    console.print(f"Report: {literal(str(out))}/report.html{note}")


def _report_key(
    name: str,
    results: pd.DataFrame,
    verdicts: list[Verdict],
    selection: list[str],
    registry: Registry,
    cells: int,
) -> str:
    """A digest of what a suite's report shows: its cells' latest runs (cell hashes cover
    the plugins' code), the verdicts, the options that chose the cells, the harness code
    that draws it and the source of every plugin report. Equal keys mean the report on disk
    is what this code computes."""
    import hashlib
    import json

    from harness import __version__, claims
    from harness.claims import verdicts as verdict_module
    from harness.reports import folder as report

    files = {*report.source_files(), *(Path(m.__file__) for m in (claims, verdict_module))}
    for entry in registry.entries["report"].values():
        source = inspect.getsourcefile(entry.cls)
        if source:
            files.add(Path(source))
    code = sorted(f"{f}:{hashlib.sha256(f.read_bytes()).hexdigest()}" for f in files)
    runs = sorted(zip(results.get("cell_hash", []), results.get("run_id", []), strict=True))
    body = [name, __version__, code, list(selection), runs, [v.as_dict() for v in verdicts]]
    body.append(cells)  # the report says how many of the suite's cells have no result
    return hashlib.sha256(json.dumps(body, default=str).encode()).hexdigest()
