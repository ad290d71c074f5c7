"""The ``harness`` command. The only module that prints or exits.

Exit codes: 0 every cell ok or skipped; 1 some cells failed or timed out; 2 bad input
(suite, arguments, unknown plugin or component), with nothing written to the store;
130 interrupted (Ctrl-C), every finished cell kept.
"""

from __future__ import annotations

import inspect
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from harness.errors import HarnessError, PluginError, SuiteError

# Wide tables stay readable in log files (rich would wrap them at 80 columns).
console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, highlight=False)

EXIT_OK, EXIT_CELLS_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def main() -> None:
    """Console-script entry point: map harness errors to exit codes once, here."""
    try:
        cli(standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt):  # click turns Ctrl-C into Abort
        err_console.print("[yellow]Interrupted: finished cells are kept in the store.[/]")
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as err:
        err.show()
        sys.exit(EXIT_BAD_INPUT)
    except (SuiteError, PluginError) as err:
        err_console.print(f"[bold red]error:[/] {escape(str(err))}", soft_wrap=True)
        sys.exit(EXIT_BAD_INPUT)
    except HarnessError as err:
        err_console.print(f"[bold red]error:[/] {escape(str(err))}", soft_wrap=True)
        sys.exit(EXIT_CELLS_FAILED)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="harness")
def cli() -> None:
    """Run research-paper benchmarks from plugins and track them in MLflow."""


def _registry() -> Any:
    from harness.registry import build_registry

    return build_registry()


def _suite(path: str) -> tuple[Any, Any]:
    from harness.suite import load_suite

    registry = _registry()
    return registry, load_suite(Path(path), registry)


def _cell_table(cells: list[Any], title: str) -> Table:
    table = Table(title=title, show_lines=False)
    for col in ("#", "task", "dataset", "dataset params", "method", "method params", "seed"):
        table.add_column(col, overflow="fold")
    for i, c in enumerate(cells, 1):
        dp = ", ".join(f"{k}={v}" for k, v in c.dataset_params.items())
        mp = ", ".join(f"{k}={v}" for k, v in c.method_params.items())
        table.add_row(str(i), c.task, c.dataset, dp, c.method, mp, str(c.seed))
    return table


# -- run ---------------------------------------------------------------------------------


@cli.command()
@click.argument("suite", type=click.Path(dir_okay=False))
@click.option(
    "-j",
    "--jobs",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Worker processes.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="Where cells run: local worker processes or a dask "
    "LocalCluster (needs dask[distributed]).",
)
@click.option(
    "--tracking-uri",
    default=None,
    help="MLflow tracking URI [default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow/mlflow.db].",
)
@click.option("--force", is_flag=True, help="Run cells even if they already finished.")
@click.option("--dry-run", is_flag=True, help="Print the cells and their count; run nothing.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first failed or timed-out cell.")
@click.option(
    "--report-dir",
    default="reports",
    show_default=True,
    type=click.Path(),
    help="Folder for the report written at the end (one subfolder per suite).",
)
def run(
    suite: str,
    jobs: int,
    executor: str,
    tracking_uri: str | None,
    force: bool,
    dry_run: bool,
    fail_fast: bool,
    report_dir: str,
) -> None:
    """Run every cell of SUITE with a progress bar, then summarise and write the report."""
    registry, spec = _suite(suite)
    if dry_run:
        console.print(_cell_table(spec.cells, f"{spec.name}: {len(spec.cells)} cells"))
        console.print(f"{len(spec.cells)} cells")
        return
    from harness.runner import run_suite
    from harness.tracking import Tracker

    runner = _executor(executor, registry, jobs)
    tracker = Tracker(tracking_uri)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[red]{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    tic = time.perf_counter()
    with Progress(*columns, console=console) as progress:
        bar = progress.add_task("cells", total=None, failed=0)
        failed = 0

        def on_start(total: int, todo: int) -> None:
            console.print(
                f"[bold]{escape(spec.name)}[/]: {total} cells, {total - todo} already"
                f" finished, {todo} to run with {jobs} worker(s)."
            )
            progress.update(bar, total=todo)

        last_line = time.monotonic()

        def on_cell(cell: Any, result: Any) -> None:
            nonlocal failed, last_line
            failed += result.status in ("failed", "timeout")
            progress.update(bar, advance=1, failed=failed)
            task = progress.tasks[0]
            if not console.is_terminal and (
                time.monotonic() - last_line > 10 or task.completed == task.total
            ):  # no live bar in a log file: a line every 10 s instead
                last_line = time.monotonic()
                console.print(
                    f"cells {task.completed:.0f}/{task.total:.0f}, {failed} failed,"
                    f" {task.elapsed or 0:.0f} s elapsed"
                )

        outcome = run_suite(
            spec,
            registry,
            tracker,
            executor=runner,
            force=force,
            fail_fast=fail_fast,
            settings={"jobs": jobs, "executor": executor},
            on_start=on_start,
            on_cell=on_cell,
        )
    elapsed = time.perf_counter() - tic
    _summarise(tracker, registry, spec, outcome, Path(report_dir), elapsed)
    if outcome.problems:
        sys.exit(EXIT_CELLS_FAILED)


def _executor(name: str, registry: Any, jobs: int) -> Any:
    if name == "dask":
        from harness.runner import DaskExecutor

        return DaskExecutor(registry, jobs)
    from harness.runner import LocalExecutor

    return LocalExecutor(registry, jobs)


def _summarise(
    tracker: Any,
    registry: Any,
    spec: Any,
    outcome: Any,
    report_dir: Path,
    elapsed: float,
) -> None:
    from harness.report import summary_table, write_report
    from harness.tracking import ui_path

    results = tracker.results(outcome.experiment_id, {c.cell_hash for c in spec.cells})
    for task in spec.tasks():
        rows = results[results["task"] == task] if not results.empty else results
        if rows.empty:
            continue
        table = summary_table(rows, registry)
        skipped = rows[rows["status"] == "skipped"]
        _print_frame(table, f"{task}: mean ± 95% CI over seeds")
        for reason, group in skipped.groupby("reason"):
            console.print(f"  [yellow]skipped[/] {len(group)} cell(s): {escape(str(reason))}")
    for cell, result in outcome.problems:
        console.print(
            f"[red]{result.status}[/] {cell.task} {cell.dataset} {cell.method} "
            f"seed={cell.seed}: {escape(result.reason)}"
        )
    if not results.empty:
        out = report_dir / spec.name
        for problem in write_report(results, registry, tracker, spec.name, out):
            console.print(f"[red]{escape(problem)}[/]")
        tracker.log_folder(outcome.parent_run_id, out, "report")
        console.print(f"Report: {out}/report.html")
    console.print(f"Wall time {elapsed:.1f} s. Tracking URI: {tracker.uri}")
    console.print(
        f"Open the UI with: harness ui --tracking-uri '{tracker.uri}', then"
        f" http://127.0.0.1:5000{ui_path(outcome.experiment_id)}"
    )


def _print_frame(table: Any, title: str, per_table: int = 6) -> None:
    """Print a summary table, ``per_table`` metric columns at a time (many metrics would
    squeeze every column to a few characters)."""
    if table.empty:
        return
    metrics = [c for c in table.columns if c != "seeds"]
    for start in range(0, max(len(metrics), 1), per_table):
        chunk = ["seeds", *metrics[start : start + per_table]]
        rich_table = Table(title=title if start == 0 else None)
        for name in table.index.names:
            rich_table.add_column(str(name), overflow="fold")
        for col in chunk:
            rich_table.add_column(str(col), justify="right", overflow="fold")
        for index, row in table[chunk].iterrows():
            keys = index if isinstance(index, tuple) else (index,)
            rich_table.add_row(*(str(k) for k in keys), *(str(v) for v in row))
        console.print(rich_table)


# -- validate, list, report, ui --------------------------------------------------------------


@cli.command()
@click.argument("suite", type=click.Path(dir_okay=False))
def validate(suite: str) -> None:
    """Check SUITE (names, params, types, includes) without running it."""
    _, spec = _suite(suite)
    tasks = ", ".join(spec.tasks())
    console.print(f"[green]OK[/] {suite}: {len(spec.cells)} cells ({tasks}).")


@cli.command("list")
def list_() -> None:
    """Plugins with versions; each task's components with their params and defaults."""
    from harness.components import params_fields

    registry = _registry()
    plugins = Table(title="Plugins")
    plugins.add_column("plugin")
    plugins.add_column("version")
    for name, version in sorted(registry.plugins.items()):
        plugins.add_row(name, version)
    console.print(plugins)
    for task in registry.tasks():
        table = Table(title=f"task: {task}")
        for col in ("kind", "name", "plugin", "what it is", "params (defaults)"):
            table.add_column(col, overflow="fold")
        for kind, entries in registry.entries.items():
            for (t, name), entry in sorted(entries.items()):
                if t != task:
                    continue
                fields = params_fields(entry.cls.Params)
                params = ", ".join(f"{k}={d!r}" for k, (_, d) in fields.items())
                summary = (inspect.getdoc(entry.cls) or "").split("\n", 1)[0]
                table.add_row(kind, name, entry.plugin, summary, params)
        console.print(table)


@cli.command()
@click.argument("suite", required=False, type=click.Path(dir_okay=False))
@click.option("--tracking-uri", default=None, help="MLflow tracking URI.")
@click.option(
    "--out",
    default="reports",
    show_default=True,
    type=click.Path(),
    help="Folder for the reports (one subfolder per suite).",
)
def report(suite: str | None, tracking_uri: str | None, out: str) -> None:
    """Write result tables (mean and 95% CI over seeds) and plots for SUITE (default: every
    suite in the store) and log them to the suite's latest parent run."""
    from harness.report import write_report
    from harness.tracking import Tracker

    if suite:
        registry, spec = _suite(suite)
        targets = [(spec.name, {c.cell_hash for c in spec.cells})]
    else:
        registry = _registry()
        targets = None
    tracker = Tracker(tracking_uri)
    if targets is None:
        targets = [
            (e.name, None)
            for e in tracker.client.search_experiments()
            if tracker.latest_suite_run(e.experiment_id)
        ]
    if not targets:
        raise SuiteError(f"No suite runs in the store {tracker.uri}; run 'harness run' first.")
    for name, hashes in targets:
        experiment = tracker.experiment_id(name)
        if experiment is None:
            raise SuiteError(f"Suite '{name}' has no runs in {tracker.uri}; run it first.")
        results = tracker.results(experiment, hashes)
        if results.empty:
            raise SuiteError(f"Suite '{name}' has no finished cells in {tracker.uri}.")
        folder = Path(out) / name
        for problem in write_report(results, registry, tracker, name, folder):
            err_console.print(f"[red]{escape(problem)}[/]")
        tracker.log_folder(tracker.latest_suite_run(experiment), folder, "report")
        console.print(f"{name}: {len(results)} cells -> {folder}/report.md, report.html")


@cli.command()
@click.option("--tracking-uri", default=None, help="MLflow tracking URI.")
@click.option("--port", default=5000, show_default=True, type=int)
@click.option("--host", default="127.0.0.1", show_default=True)
def ui(tracking_uri: str | None, port: int, host: str) -> None:
    """Open the MLflow UI on the store (default: the local one under mlflow/)."""
    from harness.tracking import resolve_uri

    uri = resolve_uri(tracking_uri)
    mlflow = shutil.which("mlflow") or os.path.join(os.path.dirname(sys.executable), "mlflow")
    console.print(
        f"MLflow UI on http://{host}:{port}/#/experiments?workflowType=machine_learning"
        f" for {uri} (Ctrl-C stops it)"
    )
    os.execv(
        mlflow, [mlflow, "ui", "--backend-store-uri", uri, "--host", host, "--port", str(port)]
    )


# -- plugin authors -----------------------------------------------------------------------------


@cli.command("new-plugin")
@click.argument("name")
@click.option(
    "--dir",
    "parent",
    default="plugins",
    show_default=True,
    type=click.Path(),
    help="Where the package folder is created.",
)
def new_plugin(name: str, parent: str) -> None:
    """Create a ready-to-install plugin package skeleton for task NAME."""
    from harness.scaffold import write_skeleton

    folder = write_skeleton(name, Path(parent))
    console.print(f"Created {folder}. Next: pip install -e {folder} && harness check-plugin {name}")


@cli.command("check-plugin")
@click.argument("name")
def check_plugin(name: str) -> None:
    """Run the conformance checks of harness.testing on the installed plugin NAME."""
    from harness.testing import run_checks

    results = run_checks(name)
    table = Table(title=f"Conformance of '{name}'")
    for col in ("check", "result", "message"):
        table.add_column(col, overflow="fold")
    colour = {"passed": "green", "failed": "red", "skipped": "yellow"}
    for check_id, outcome, message in results:
        table.add_row(check_id, f"[{colour[outcome]}]{outcome}[/]", escape(message))
    console.print(table)
    failed = sum(outcome == "failed" for _, outcome, _ in results)
    console.print(f"{len(results) - failed} passed or skipped, {failed} failed")
    if failed:
        sys.exit(EXIT_CELLS_FAILED)
