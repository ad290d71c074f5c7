"""Commands that read the store: ``harness results``, ``claims``, ``report`` and
``validate`` (which reads only the suite)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from harness.cli.common import (
    ExitCode,
    console,
    err_console,
    existing_store,
    get_registry,
    load,
    overrides,
    suite_options,
)
from harness.cli.summary import claims_fail, print_verdicts, verdicts_of
from harness.errors import SuiteError


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

    Example: harness results suites/smoke.yaml --format parquet --out smoke.parquet
    """
    import json

    from harness.report import tidy_results

    _, spec = load(suite, overrides(shape))
    tracker = existing_store(tracking_uri)
    table = tidy_results(tracker.suite_results(spec))
    if table.empty:
        raise SuiteError(f"Suite '{spec.name}' has no runs in {tracker.uri}; run it first.")
    if fmt == "parquet" and out is None:
        raise click.UsageError("--format parquet needs --out FILE (it is a binary format).")
    if fmt == "csv":
        text = table.to_csv(index=False)
    elif fmt == "json":
        rows = json.loads(table.to_json(orient="records"))
        text = json.dumps({"suite": spec.name, "config": spec.expanded, "rows": rows}, indent=1)
    else:
        table.to_parquet(out, index=False)
    if fmt != "parquet":
        if out is None:
            click.echo(text, nl=False)
        else:
            Path(out).write_text(text)
    if out is not None:
        err_console.print(f"{len(table)} cells of {escape(spec.name)} -> {escape(str(out))}")
    warn_missing(spec, len(table), suite, "export")


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
    help="Exit 3 when a claim is not reproduced, uninformative, not run or in error.",
)
@click.option("--tracking-uri", default=None, help="MLflow tracking URI.")
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

    from harness.evidence import check_results, of_cells, read_results

    registry, spec = load(suite, overrides(shape))
    if results_files:
        frames = []
        for file in results_files:
            frames.append(read_results(file))
            check_results(frames[-1], registry, spec.cells, f"--results {file}")
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
        err_console.print(f"No installed plugin's claim needs a cell of '{escape(spec.name)}'.")
        return
    print_verdicts(verdicts, fmt)
    if strict_claims and claims_fail(verdicts):
        sys.exit(ExitCode.CLAIMS_FAILED)


def warn_missing(spec: Any, found: int, suite: str, what: str) -> None:
    """On stderr: how many of the suite's cells have no result for the current code and
    suite, which the report or export leaves out."""
    missing = len(spec.cells) - found
    if missing:
        err_console.print(
            f"[yellow]{missing} of {len(spec.cells)} cells have no result for the current"
            f" code and suite; the {what} leaves them out (harness run {escape(suite)},"
            " with the same options, computes them).[/]"
        )


@click.command()
@click.argument("suite", type=click.Path(dir_okay=False))
@suite_options
def validate(suite: str, **shape: Any) -> None:
    """Check SUITE (names, params, types, includes, overrides) without running it."""
    _, spec = load(suite, overrides(shape))
    tasks = ", ".join(spec.tasks())
    console.print(f"[green]OK[/] {escape(suite)}: {len(spec.cells)} cells ({escape(tasks)}).")


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
@suite_options
def report(suite: str | None, tracking_uri: str | None, out: str, **shape: Any) -> None:
    """Write result tables (mean and 95% CI over seeds) and plots for SUITE and log them to
    the suite's latest parent runs. The options that shaped the run (--seeds, --add-method,
    ...) select the same cells of SUITE. Without SUITE: every suite in the store, each with
    the cells its latest 'harness run' selected (the report names those options)."""
    from harness.layout import ui_link
    from harness.report import write_report
    from harness.schema import safe_name

    if not suite and any(shape.values()):
        options = click.get_current_context().command.params
        given = ", ".join(o.opts[0] for o in options if shape.get(o.name or ""))
        raise SuiteError(f"{given} shape a suite: name it (harness report SUITE {given} ...).")
    registry = get_registry() if not suite else None
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
        warn_missing(spec, len(results), suite, "report")
        targets = [(spec.name, results, spec.expanded.get("overrides", []))]
    else:
        targets = []
        for experiment in tracker.client.search_experiments():
            if not tracker.latest_suite_run(experiment.experiment_id):
                continue
            rows, problem, selection = _current_results(
                tracker, registry, experiment.experiment_id, experiment.name
            )
            if problem:
                err_console.print(f"[yellow]{escape(experiment.name)}: {escape(problem)}[/]")
            if rows is not None and not rows.empty:
                targets.append((experiment.name, rows, selection))
    if not targets:
        raise SuiteError(f"No suite runs in the store {tracker.uri}; run 'harness run' first.")

    def link(experiment_id: str, run_id: str) -> str:
        return ui_link(tracker.uri, experiment_id, run_id)

    for name, results, selection in targets:
        folder = Path(out) / safe_name(name)  # a name from the store is not a path
        for problem in write_report(results, registry, tracker, name, folder, link, selection):
            err_console.print(f"[red]{escape(problem)}[/]")
        for experiment in dict.fromkeys(results["experiment_id"]):
            tracker.log_folder(tracker.latest_suite_run(experiment), folder, "report")
        console.print(
            f"{escape(name)}: {len(results)} cells -> {escape(str(folder))}/report.md, report.html"
        )


def _current_results(
    tracker: Any, registry: Any, experiment_id: str, name: str
) -> tuple[Any, str, list[str]]:
    """The results of an experiment as its suite is now: the suite its latest ``harness
    run`` logged (``suite.yaml`` of the newest parent run) is loaded with the installed
    plugins, and only its cells' latest runs are kept ("one truth per cell": runs made with
    other code, params or metrics are not pooled in as extra seeds). Returns ``(rows,
    problem, selection)``; ``rows`` is None when that suite no longer loads, ``problem``
    says what is left out and why, and ``selection`` lists the options that shaped that
    run (``--seeds 5,6``, ...)."""
    import tempfile

    from harness.suite import load_suite

    text = tracker.suite_text(tracker.latest_suite_run(experiment_id))
    if text is None:
        return None, "its latest run logged no suite.yaml; run 'harness report SUITE'.", []
    import yaml

    logged = yaml.safe_load(text)
    top = logged["name"]
    by_experiment: dict[str, list[dict[str, Any]]] = {}  # included suites' runs, then top's
    for run in logged["runs"]:
        by_experiment.setdefault(run.get("experiment") or top, []).append(
            {
                "task": run["task"],
                "seeds": run["seeds"],
                **{
                    kind: [{"name": name, "params": params} for name, params in run[kind]]
                    for kind in ("datasets", "methods", "metrics")
                },
            }
        )
    with tempfile.TemporaryDirectory() as folder:
        # each included suite as a file of its own, so its cells keep their experiment
        included = [e for e in by_experiment if e != top]
        for i, experiment in enumerate(included):
            runs = by_experiment[experiment]
            Path(folder, f"{i}.yaml").write_text(
                yaml.safe_dump({"name": experiment, "runs": runs}, sort_keys=False)
            )
        path = Path(folder, "suite.yaml")
        body = {"name": top, "include": [f"{i}.yaml" for i in range(len(included))]}
        path.write_text(yaml.safe_dump(body | {"runs": by_experiment.get(top, [])}))
        try:
            spec = load_suite(path, registry)
        except SuiteError as err:
            problem = f"left out: its last suite no longer loads ({err})".replace("\n", " ")
            return None, problem, []
    if not any("experiment" in run for run in logged["runs"]):  # logged before 2 Dec. 2026
        mine = {c.cell_hash for c in spec.cells}
        rows = tracker.results(experiment_id, list(mine))
    elif name in included:  # a suite it includes: that suite's cells
        mine = {c.cell_hash for c in spec.cells if c.experiment == name}
        rows = tracker.results(experiment_id, list(mine))
    else:  # the suite itself (renamed or not): every cell, from each experiment it logs to
        mine = {c.cell_hash for c in spec.cells}
        rows = tracker.suite_results(spec, {top: experiment_id})
    missing = len(mine) - len(rows)
    problem = ""
    if missing > 0:
        problem = (
            f"{missing} of {len(mine)} cells have no result for the current code; the report"
            " leaves them out (harness run computes them)."
        )
    return rows, problem, list(logged.get("overrides") or [])
