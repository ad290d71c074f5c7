"""Commands that read the store: ``harness results``, ``claims``, ``report`` and
``validate`` (which reads only the suite)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from harness.cli.common import (
    ExitCode,
    claim_cells,
    claim_timeout_option,
    console,
    err_console,
    existing_store,
    get_registry,
    literal,
    load,
    overrides,
    report_folder,
    suite_options,
)
from harness.cli.summary import claims_fail, print_verdicts, verdicts_of
from harness.errors import SuiteError

if TYPE_CHECKING:
    import pandas as pd

    from harness.plugins.registry import Registry
    from harness.store.tracking import Tracker
    from harness.suites.loading import Suite


@click.command()
@click.argument("suite", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "parquet", "json"]),
    default="csv",
    show_default=True,
    help="File format (json: {suite, config, rows}).",
)
@click.option("--out", "out", default=None, type=click.Path(), help="File [default: stdout].")
@click.option("--tracking-uri", default=None, help="MLflow tracking URI.")
@suite_options
def results(suite: str, fmt: str, out: str | None, tracking_uri: str | None, **shape: Any) -> None:
    """Export SUITE's results as data: one row per cell (its latest run) with params,
    metrics, status, seconds, run id, plugin versions and git commit. The options that
    shaped the run (--seeds, --add-method, ...) select the same cells.

    CSV is safe to open in a spreadsheet: a text cell starting with =, +, -, @, a tab or a
    carriage return (a formula) is written with a leading ' (OWASP's advice against CSV
    injection; a number such as -0.5 is left as it is), and 'harness claims --results'
    removes it again. JSON keeps every digit of each float.

    Example: harness results suites/smoke.yaml --format parquet --out smoke.parquet
    """
    import json

    from harness.claims.evidence import spreadsheet_safe
    from harness.components import visible
    from harness.reports.aggregates import tidy_results

    _, spec = load(suite, overrides(shape))
    tracker = existing_store(tracking_uri)
    rows = tracker.suite_results(spec)
    table = tidy_results(rows)
    if table.empty:
        raise SuiteError(f"Suite '{spec.name}' has no runs in {tracker.uri}; run it first.")
    if fmt == "parquet" and out is None:
        raise click.UsageError("--format parquet needs --out FILE (it is a binary format).")
    if fmt == "csv":  # formula-leading text prefixed with ' (OWASP): a spreadsheet shows it
        text = spreadsheet_safe(table).to_csv(index=False)
    elif fmt == "json":
        records = [{k: _json_value(v) for k, v in r.items()} for r in table.to_dict("records")]
        text = json.dumps({"suite": spec.name, "config": spec.expanded, "rows": records}, indent=1)
    else:
        table.to_parquet(out, index=False)
    if fmt != "parquet":
        if out is None:  # on a terminal, a value's escape sequence is shown, never obeyed
            click.echo(visible(text) if sys.stdout.isatty() else text, nl=False)
        else:
            Path(out).write_text(text)
    if out is not None:
        err_console.print(f"{len(table)} cells of {literal(spec.name)} -> {literal(str(out))}")
    warn_missing(tracker, spec, rows, suite, "export")


def _json_value(value: Any) -> Any:
    """A cell of the JSON export: a float whole (``repr``, every digit: pandas' ``to_json``
    keeps 10, and a claim read back from the export would differ from the store's), a
    missing value as ``null``, numpy scalars as Python's."""
    import pandas as pd

    if value is None or (not isinstance(value, str | list | dict) and pd.isna(value)):
        return None
    return value.item() if hasattr(value, "item") else value


@click.command()
@click.argument("suite", type=click.Path(dir_okay=False))
@click.option(
    "--results",
    "results_files",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Evaluate from this 'harness results' export (parquet, csv, json), not the store;"
    " repeat it for the exports of included suites.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "json"]),
    default="table",
    show_default=True,
)
@click.option("--claim", "claim_names", multiple=True, metavar="NAME", help="Only this claim.")
@click.option(
    "--strict-claims",
    is_flag=True,
    help="Exit 3 when a claim is not reproduced, uninformative, not run or in error, or"
    " when a task of the suite has no claim evaluated at all.",
)
@click.option("--tracking-uri", default=None, help="MLflow tracking URI.")
@claim_timeout_option
@suite_options
def claims(
    suite: str,
    results_files: tuple[str, ...],
    fmt: str,
    claim_names: tuple[str, ...],
    strict_claims: bool,
    tracking_uri: str | None,
    **shape: Any,
) -> None:
    """Give the verdict of every claim SUITE touches, from the store (runs nothing) or from
    a 'harness results' export (--results, no store needed). The options that shaped the
    run (--seeds, --add-method, ...) select the same cells.

    Example: harness claims suites/all.yaml --format markdown
    """
    import pandas as pd

    from harness.claims.evidence import check_results, of_cells, read_results

    registry, spec = load(suite, overrides(shape))
    if results_files:
        frames = []
        for file in results_files:
            matched = check_results(read_results(file), registry, spec.cells, f"--results {file}")
            if matched.note:
                err_console.print(f"[yellow]{literal(matched.note)}[/]")
            frames.append(matched.rows)
        rows = of_cells(pd.concat(frames, ignore_index=True), spec.cells)
    else:
        tracker = existing_store(tracking_uri)
        rows = tracker.suite_results(spec)
        if rows.empty:
            raise SuiteError(
                f"Suite '{spec.name}' has no runs in {tracker.display_uri}; run it first"
                f" (harness run {suite}), or give --results FILE."
            )
    verdicts = verdicts_of(registry, spec, rows, claim_names)
    if not verdicts:
        err_console.print(f"No installed plugin's claim needs a cell of '{literal(spec.name)}'.")
    else:
        print_verdicts(verdicts, fmt)
    if strict_claims and claims_fail(verdicts, spec):
        sys.exit(ExitCode.CLAIMS_FAILED)


def warn_missing(
    tracker: Tracker, spec: Suite, results: pd.DataFrame, suite: str, what: str
) -> None:
    """On stderr: how many of the suite's cells have no result for the current code and
    suite, which the report or export leaves out, told apart
    (:func:`harness.store.current.missing_cells`)."""
    from harness.store.current import missing_cells  # the store's package: not at start-up

    missing, why = missing_cells(tracker, spec.cells, results)
    if missing:
        err_console.print(
            f"[yellow]{missing} of {len(spec.cells)} cells have no result for the current"
            f" code and suite: {literal(why)}; the {what} leaves them out (harness run"
            f" {literal(suite)}, with the same options, computes them).[/]"
        )


@click.command()
@click.argument("suite", type=click.Path(dir_okay=False))
@suite_options
def validate(suite: str, **shape: Any) -> None:
    """Check SUITE (names, params, types, includes, overrides) without running it."""
    _, spec = load(suite, overrides(shape))
    tasks = ", ".join(spec.tasks())
    console.print(f"[green]OK[/] {literal(suite)}: {len(spec.cells)} cells ({literal(tasks)}).")


@click.command()
@click.argument("suite", required=False, type=click.Path(dir_okay=False))
@click.option("--tracking-uri", default=None, help="MLflow tracking URI.")
@click.option(
    "--out",
    "--report-dir",
    "out",
    default="reports",
    show_default=True,
    type=click.Path(),
    help="Folder for the reports (one subfolder per suite; --report-dir as for harness run).",
)
@click.option(
    "--decided",
    metavar="CLAIMS_JSON",
    default=None,
    type=click.Path(dir_okay=False, exists=True),
    help="Only print, as Markdown, what the decide pass of this report's claims.json decided"
    " (the claims each batch decided; those left inconclusive, with the units that would"
    " decide them); no store is read.",
)
@suite_options
def report(
    suite: str | None, tracking_uri: str | None, out: str, decided: str | None, **shape: Any
) -> None:
    """Write result tables (mean and 95% CI over seeds) and plots for SUITE and log them to
    the suite's latest parent runs. The options that shaped the run (--seeds, --add-method,
    ...) select the same cells of SUITE. Without SUITE: every suite in the store, each with
    the cells its latest 'harness run' selected (the report names those options)."""
    if decided:
        from harness.cli.decide import decided_file

        click.echo(decided_file(Path(decided)), nl=False)
        return
    if not suite and any(shape.values()):
        options = click.get_current_context().command.params
        given = ", ".join(o.opts[0] for o in options if shape.get(o.name or ""))
        raise SuiteError(f"{given} shape a suite: name it (harness report SUITE {given} ...).")
    tracker = existing_store(tracking_uri)
    if suite:
        registry, spec = load(suite, overrides(shape))
        results = tracker.suite_results(spec)
        if results.empty:
            raise SuiteError(
                f"Suite '{spec.name}' has no result for its {len(spec.cells)} cells as the"
                f" code and suite are now in {tracker.uri} (runs made with other plugin code,"
                f" params or metrics are not shown: docs/design.md 'Resume'). Run"
                f" 'harness run {suite}' first."
            )
        warn_missing(tracker, spec, results, suite, "report")
        targets = [(spec.name, results, spec.expanded.get("overrides", []), len(spec.cells))]
    else:
        registry = get_registry()
        targets = _stored_suites(tracker, registry)
    if not targets:
        raise SuiteError(f"No suite runs in the store {tracker.uri}; run 'harness run' first.")
    for target in targets:
        _write(tracker, registry, target, Path(out))


def _write(
    tracker: Tracker, registry: Registry, target: tuple[str, Any, list[str], int], out: Path
) -> None:
    """Write one suite's report (``(name, rows, selection, number of cells)``) under ``out``
    and log it to its latest parent runs."""
    from harness.reports.folder import write_report
    from harness.store.layout import ui_link

    def link(experiment_id: str, run_id: str) -> str:
        return ui_link(tracker.uri, experiment_id, run_id)

    name, results, selection, cells = target
    claims = tuple(o.split(" ", 1)[1] for o in selection if o.startswith("--claim "))
    folder = report_folder(out, name, selection, claims)  # a store's name is not a path
    args = (results, registry, tracker, name, folder, link, selection)
    for problem in write_report(*args, cells=cells):
        err_console.print(f"[red]{literal(problem)}[/]")
    for experiment in dict.fromkeys(results["experiment_id"]):
        tracker.log_folder(tracker.latest_suite_run(experiment), folder, "report")
    console.print(
        f"{literal(name)}: {len(results)} cells -> {literal(str(folder))}/report.md, report.html"
    )


def _stored_suites(tracker: Tracker, registry: Registry) -> list[tuple[str, Any, list[str], int]]:
    """``(name, rows, selection, cells)`` of every suite in the store, as its latest ``harness
    run`` logged it: each experiment with a suite run, and each suite such a run was of (a
    suite made only of includes has no experiment of its own, and a suite that includes
    others reports their cells too)."""
    targets: dict[str, tuple[str, Any, list[str], int]] = {}
    tops: dict[str, Any] = {}  # the suites the runs were of
    experiments = tracker.experiments()
    for name, experiment_id in experiments.items():
        if not tracker.latest_suite_run(experiment_id):
            continue
        spec, rows, cells, problem = _current_results(tracker, registry, experiment_id, name)
        if problem:
            err_console.print(f"[yellow]{literal(name)}: {literal(problem)}[/]")
        if spec is not None and not rows.empty:
            targets[name] = (name, rows, list(spec.expanded.get("overrides") or []), cells)
        if spec is not None and spec.name not in experiments:
            tops.setdefault(spec.name, spec)
    for name, spec in tops.items():
        rows = tracker.suite_results(spec)
        if not rows.empty:
            selection = list(spec.expanded.get("overrides") or [])
            targets[name] = (name, rows, selection, len(spec.cells))
    return list(targets.values())


def _current_results(
    tracker: Tracker, registry: Registry, experiment_id: str, name: str
) -> tuple[Any, Any, int, str]:
    """The results of an experiment as its suite is now: the suite its latest ``harness
    run`` logged (``suite.yaml`` of the newest parent run) is read back through the model
    that wrote it (:func:`harness.suites.loading.load_logged_suite`) with the installed plugins, and
    only its cells' latest runs are kept ("one truth per cell": runs made with other code,
    params or metrics are not pooled in as extra seeds). Returns ``(suite, rows, cells,
    problem)``: ``cells`` the experiment's cells in that suite, ``suite`` and ``rows`` None
    when that suite no longer loads, ``problem`` what is left out and why."""
    from harness.suites.loading import load_logged_suite

    run_id = tracker.latest_suite_run(experiment_id)
    text = tracker.suite_text(run_id)
    if text is None:
        return None, None, 0, "its latest run logged no suite.yaml; run 'harness report SUITE'."
    try:
        spec = load_logged_suite(text, f"suite.yaml of run {run_id}", registry)
    except SuiteError as err:
        return None, None, 0, f"left out: its last suite no longer loads ({err})".replace("\n", " ")
    claims = [
        o.split(" ", 1)[1] for o in spec.expanded.get("overrides") or [] if o[:8] == "--claim "
    ]
    if claims:  # the run's --claim: the cells it chose (claims no longer installed: an error)
        try:
            spec = claim_cells(registry, spec, claims)
        except SuiteError as err:
            return None, None, 0, f"left out: {err}".replace("\n", " ")
    included = {c.experiment for c in spec.cells} - {spec.name, ""}
    mine = [c for c in spec.cells if c.experiment == name] if name in included else spec.cells
    if name in included or not any(c.experiment for c in spec.cells):  # an included suite,
        rows = tracker.results(experiment_id, [c.cell_hash for c in mine])  # or logged < 2 Dec.
    else:  # the suite itself (renamed or not): every cell, from each experiment it logs to
        rows = tracker.suite_results(spec, {spec.name: experiment_id})
    ids = {spec.name: experiment_id, "": experiment_id}
    from harness.store.current import missing_cells

    missing, why = missing_cells(tracker, mine, rows, ids)
    problem = ""
    if missing > 0:
        problem = (
            f"{missing} of {len(mine)} cells have no result for the current code ({why}); the"
            " report leaves them out (harness run computes them)."
        )
    return spec, rows, len(mine), problem
