"""What ``harness run`` prints and writes when its cells have ended: the summary tables,
the report, the tally and the verdict of each claim (also printed by ``harness claims``)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from harness.cli.common import console, duration, plain, print_frame, report_folder

_VERDICT_STYLE = {
    "reproduced": "green",
    "not-reproduced": "red",
    "inconclusive": "yellow",
    "uninformative": "magenta",
    "not-run": "dim",
    "error": "bold red",
}


def verdicts_of(registry: Any, spec: Any, results: Any, names: tuple[str, ...] = ()) -> list:
    """Evaluate the claims ``spec`` touches (or ``names``) on ``results``."""
    from harness.claims import evaluate_claims
    from harness.evidence import suite_claims
    from harness.summary import tidy_results

    claims = suite_claims(registry, spec.cells, names)
    if not claims:
        return []
    from harness.evidence import registered

    frame = tidy_results(results) if not results.empty else results
    return evaluate_claims(claims, frame, registered(registry))


def claims_fail(verdicts: list[Any]) -> bool:
    """Whether ``--strict-claims`` fails: a claim not reproduced, uninformative, not run or
    in error (a paper's CI must not pass on a claim it could not evaluate)."""
    from harness.verdicts import Status

    failing = (Status.NOT_REPRODUCED, Status.UNINFORMATIVE, Status.NOT_RUN, Status.ERROR)
    return any(v.status in failing for v in verdicts)


def print_verdicts(verdicts: list[Any], fmt: str = "table") -> None:
    """The verdict table (one line per claim), its notes and the count line."""
    import json

    from harness.verdicts import HEADER, count_line, table_rows, verdicts_markdown

    if fmt == "json":
        click.echo(json.dumps([v.as_dict() for v in verdicts], indent=1))
        return
    if fmt == "markdown":
        click.echo(verdicts_markdown(verdicts), nl=False)
        return
    table = Table(title="Claims: verdict per claim (docs/design.md 'Claims')", title_justify="left")
    for name in HEADER:
        table.add_column(name, overflow="fold")
    for row in table_rows(verdicts):
        style = _VERDICT_STYLE.get(row[2], "")
        table.add_row(*plain(*row[:2]), f"[{style}]{escape(row[2])}[/]", *plain(*row[3:]))
    console.print(table)
    for v in verdicts:
        _print_notes(v)
    console.print(f"[bold]{escape(count_line(verdicts))}[/]")


def _print_notes(v: Any) -> None:
    """A verdict's reason, and where each added method placed the estimate."""
    if v.reason:
        first = v.reason.strip().splitlines()[-1 if v.status == "error" else 0]
        console.print(f"  {escape(v.claim)}: {escape(first)}", soft_wrap=True)
    for method, placed in v.added.items():
        e = placed.estimate
        where = placed.reason or (f"{e.estimate:.3g} [{e.low:.3g}, {e.high:.3g}]" if e else "")
        console.print(
            f"  {escape(v.claim)} with {escape(method)} in {escape(str(v.subject))}'s"
            f" place: {escape(str(placed.status))} {escape(where)}",
            soft_wrap=True,
        )


def summarise(
    tracker: Any,
    registry: Any,
    spec: Any,
    outcome: Any,
    report_dir: Path,
    elapsed: float,
    claim_names: tuple[str, ...] = (),
) -> list[Any]:
    """Print the tables, write the report, print the tally and the verdicts; return them."""
    from harness.layout import ui_link
    from harness.summary import tally

    results = tracker.suite_results(spec)
    _print_tables(tracker, registry, spec, results)
    verdicts = verdicts_of(registry, spec, results, claim_names)
    if not results.empty:
        selection = spec.expanded.get("overrides", [])
        out = report_folder(report_dir, spec.name, selection, claim_names)  # a part: apart
        _write_report(tracker, registry, spec, outcome, results, verdicts, out)
        for _, parent in outcome.experiments.values():
            tracker.log_folder(parent, out, "report")
            tracker.set_tags(parent, {f"claim.{v.claim}": str(v.status) for v in verdicts})
    if not tracker.uri.startswith(("http://", "https://")):
        console.print(f"Open the UI with: harness ui --tracking-uri '{escape(tracker.uri)}', then")
    for name, (experiment_id, _) in outcome.experiments.items():
        console.print(f"  {escape(name)}: {escape(ui_link(tracker.uri, experiment_id))}")
    not_run = len(spec.cells) - len(results)  # --fail-fast stopped before them
    also = f", {not_run:,} not run" if not_run > 0 else ""
    console.print(f"[bold]{tally(results)}{also} in {duration(elapsed)}[/]")
    if verdicts:
        print_verdicts(verdicts)
    return verdicts


def _print_tables(tracker: Any, registry: Any, spec: Any, results: Any) -> None:
    """Per task: the summary table, the settings every row shares and the problem lines."""
    from harness.layout import ui_link
    from harness.tables import problem_lines, shared_settings, summary_table

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
            console.print(f"  {escape(settings)}", soft_wrap=True)
        for line in problem_lines(rows, registry, link):
            colour = "yellow" if line.startswith(("skipped", "metric")) else "red"
            console.print(f"  [{colour}]{escape(line)}[/]", soft_wrap=True)


def _write_report(
    tracker: Any,
    registry: Any,
    spec: Any,
    outcome: Any,
    results: Any,
    verdicts: list[Any],
    out: Path,
) -> None:
    """Write the suite's report in ``out`` unless the one there is current."""
    from harness.layout import ui_link
    from harness.report import write_report

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
            console.print(f"[red]{escape(problem)}[/]")
        stamp.write_text(key)
    note = " (current: same cells, runs and verdicts; not rebuilt)" if current else ""
    console.print(f"Report: {escape(str(out))}/report.html{note}")


def _report_key(
    name: str,
    results: Any,
    verdicts: list[Any],
    selection: list[str],
    registry: Any,
    cells: int,
) -> str:
    """A digest of what a suite's report shows: its cells' latest runs (cell hashes cover
    the plugins' code), the verdicts, the options that chose the cells, the harness code
    that draws it and the source of every plugin report. Equal keys mean the report on disk
    is what this code computes."""
    import hashlib
    import json

    from harness import __version__, claims, report
    from harness import verdicts as verdict_module

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
