"""The ``harness`` command. The only module that prints or exits.

Exit codes: 0 every cell ok or skipped; 1 some cells failed or timed out; 2 bad input
(suite, arguments, unknown plugin or component), with nothing written to the store;
3 with --strict-claims, a claim not reproduced or uninformative (every cell ok);
130 interrupted (Ctrl-C), 143 terminated (SIGTERM), every finished cell kept.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import tempfile
import time
import typing
from collections import Counter
from enum import IntEnum
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

from harness.errors import HarnessError, PluginError, StoreError, SuiteError

# Wide tables stay readable in log files (rich would wrap them at 80 columns).
console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, highlight=False)


class ExitCode(IntEnum):
    """What ``harness`` exits with: one meaning each, mapped from errors in :func:`main`."""

    OK = 0
    FAILED = 1  # cells failed or timed out, check-plugin failed, the UI or server failed
    BAD_INPUT = 2  # a bad suite, option, plugin or store: nothing was run
    CLAIMS_FAILED = 3  # --strict-claims: a claim not reproduced or uninformative
    INTERRUPTED = 130  # Ctrl-C
    TERMINATED = 143  # 128 + SIGTERM, as shells report a process ended by it


def main() -> None:
    """Console-script entry point: map harness errors to exit codes once, here."""
    try:
        cli(standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt) as err:  # click: Ctrl-C is Abort
        from harness.runner import Terminated

        terminated = isinstance(err, Terminated) or isinstance(err.__context__, Terminated)
        what = "Terminated (SIGTERM)" if terminated else "Interrupted"
        note = getattr(err, "harness_note", None) or getattr(err.__context__, "harness_note", "")
        err_console.print(
            f"[yellow]{what}: finished cells are kept in the store{escape(note)}.[/]",
            soft_wrap=True,
        )
        sys.exit(ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED)
    except click.ClickException as err:
        err.show()
        sys.exit(ExitCode.BAD_INPUT)
    except (SuiteError, PluginError) as err:
        text = "".join(c if c.isprintable() or c == "\n" else ascii(c)[1:-1] for c in str(err))
        err_console.print(f"[bold red]error:[/] {escape(text)}", soft_wrap=True)  # no invisible
        sys.exit(ExitCode.BAD_INPUT)
    except HarnessError as err:
        err_console.print(f"[bold red]error:[/] {escape(str(err))}", soft_wrap=True)
        sys.exit(ExitCode.FAILED)
    except PermissionError as err:  # the driver's own files (a cell's errors stay in the cell)
        where = err.filename or "a file"
        err_console.print(
            f"[bold red]error:[/] cannot write {escape(str(where))}: {escape(err.strerror or '')}."
            " Fix its permissions, or pass another --tracking-uri or --report-dir;"
            " finished cells are kept in the store.",
            soft_wrap=True,
        )
        sys.exit(ExitCode.BAD_INPUT)
    except Exception as err:
        from harness.tracking import connection_lost

        if not connection_lost(err):
            raise
        first = str(err).strip().splitlines()[0][:300] if str(err).strip() else type(err).__name__
        err_console.print(
            "[bold red]error:[/] the tracking server stopped answering while harness was"
            f" using it ({escape(first)}). Cells logged before are kept in the store; when"
            " it answers again, run the same command: it resumes (a parent run left RUNNING"
            " is marked KILLED). MLflow retries each request first:"
            " MLFLOW_HTTP_REQUEST_MAX_RETRIES and MLFLOW_HTTP_REQUEST_TIMEOUT set how long.",
            soft_wrap=True,
        )
        sys.exit(ExitCode.BAD_INPUT)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="harness")
def cli() -> None:
    """Run research-paper benchmarks from plugins and track them in MLflow."""


def _registry() -> Any:
    """Every installed plugin; each one left out as broken is reported here, once."""
    from harness.registry import build_registry

    registry = build_registry()
    for name, fault in registry.broken.items():
        err_console.print(f"[yellow]warning:[/] plugin '{name}' left out: {escape(fault)}")
    return registry


def _suite(path: str, overrides: Any = None) -> tuple[Any, Any]:
    from harness.suite import load_suite

    registry = _registry()
    return registry, load_suite(Path(path), registry, overrides)


def _suite_options(command: Any) -> Any:
    """The options that shape the suite before it runs (issue 13/14): overrides, selection
    and the cell cap; errors in them exit 2 naming the option (see harness.suite.Overrides)."""
    options = [
        click.option("--seeds", metavar="0,1,...", help="Run these seeds in every run."),
        click.option(
            "--repetitions",
            type=click.IntRange(min=1),
            metavar="N",
            help="Run seeds 0 to N-1 in every run.",
        ),
        click.option(
            "--timeout",
            metavar="DURATION",
            help="Per-cell limit for every run, e.g. 20m or 90s ('none': no limit).",
        ),
        click.option(
            "--set",
            "set_",
            multiple=True,
            metavar="KEY=VALUE",
            help="Change one value (YAML): runs[0].datasets[0].params.n=500, or dataset.n=500"
            " for every dataset with param n (also method.P, metric.P, seeds, timeout).",
        ),
        click.option(
            "--dataset",
            "datasets",
            multiple=True,
            metavar="NAME[p=v,...]",
            help="Keep only these datasets (repeatable); [p=v] picks configurations.",
        ),
        click.option(
            "--method",
            "methods",
            multiple=True,
            metavar="NAME[p=v,...]",
            help="Keep only these methods (repeatable); [p=v] picks configurations.",
        ),
        click.option(
            "--add-method",
            "add_methods",
            multiple=True,
            metavar="NAME[p=v,...]",
            help="Add this method to every run of its task that keeps a method and a dataset"
            " after --method/--dataset (repeatable).",
        ),
        click.option(
            "--max-cells",
            type=click.IntRange(min=1),
            metavar="N",
            default=None,
            help="Refuse suites with more cells than this [default: 100,000].",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _overrides(shape: dict[str, Any]) -> Any:
    from harness.suite import MAX_CELLS, Overrides

    return Overrides(
        seeds=shape["seeds"],
        repetitions=shape["repetitions"],
        timeout=shape["timeout"],
        set=tuple(shape["set_"]),
        methods=tuple(shape["methods"]),
        datasets=tuple(shape["datasets"]),
        add_methods=tuple(shape["add_methods"]),
        max_cells=shape["max_cells"] or MAX_CELLS,
    )


def _cell_table(cells: list[Any], title: str, states: dict[str, str] | None = None) -> Table:
    table = Table(title=escape(title), show_lines=False)
    columns = ["#", "task", "dataset", "dataset params", "method", "method params", "seed"]
    for col in [*columns, *(["state"] if states is not None else [])]:
        table.add_column(col, overflow="fold")
    for i, c in enumerate(cells, 1):
        dp = ", ".join(f"{k}={v}" for k, v in c.dataset_params.items())
        mp = ", ".join(f"{k}={v}" for k, v in c.method_params.items())
        state = [] if states is None else [_state(states[c.cell_hash])]
        cells = (str(i), c.task, c.dataset, dp, c.method, mp, str(c.seed))
        table.add_row(*_plain(*cells), *state)
    return table


def _state(state: str) -> str:
    return "[green]done[/]" if state == "done" else f"runs: {escape(state)}"


def _plain(*values: Any) -> list[str]:
    """``values`` as table cells shown as they are: rich reads ``[word]`` in a string as
    markup, so a docstring's ``[a, b]`` or a param value's ``[x]`` would vanish and a
    ``[/]`` would raise ``MarkupError``; escaped, every bracket is printed."""
    return [escape(str(v)) for v in values]


def _check_writable_folder(folder: Path, option: str) -> None:
    """``folder`` is, or can be created as, a folder this process can write (checked, not
    created). Raises :class:`SuiteError` (exit 2) naming ``option``."""
    from harness.store import unwritable_folder

    if folder.exists() and not folder.is_dir():
        raise SuiteError(f"{option} {folder}: is a file, not a folder; pass a folder.")
    blocked = unwritable_folder(folder)
    if blocked is not None:
        raise SuiteError(f"{option} {folder}: cannot write in {blocked}; pass another folder.")


def _check_report_folder(folder: Path, suite: str) -> None:
    """``--report-dir`` and its ``<suite>`` entry can take the report: checked before the
    first cell (not found after every cell ran). Raises :class:`SuiteError` (exit 2)."""
    from harness.suite import safe_name

    out = folder / safe_name(suite)
    for path in (*reversed(out.parents), out):
        if path.is_symlink() and not path.exists():
            raise SuiteError(
                f"--report-dir {folder}: {path} is a link to {os.readlink(path)}, which does not"
                " exist; create it, remove the link or pass another folder."
            )
    _check_writable_folder(folder, "--report-dir")
    if out.exists() and not out.is_dir():
        raise SuiteError(
            f"--report-dir {folder}: {out} (the suite's report folder) is a file, not a folder;"
            " move it or pass another --report-dir."
        )
    if out.is_dir():
        _check_writable_folder(out, "--report-dir")


def _check_scheduler(address: str) -> None:
    """``--scheduler``: a dask address ``[SCHEME://]HOST:PORT`` as dask reads it, checked
    before anything is written. Raises :class:`SuiteError` (exit 2)."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    from harness.secrets import shown

    try:
        scheme, location = parse_address(address)
        get_backend(scheme)
        if scheme in ("tcp", "tls", "ws", "wss"):
            _, port = parse_host_port(location)
            if not 0 < int(port) < 65536:
                raise ValueError(f"port {port} is not in 1-65535")
    except (ValueError, TypeError) as err:
        reason = str(err) if len(str(err)) <= 200 else f"{str(err)[:150]}..."
        raise SuiteError(
            f"--scheduler {shown(address, 200)}: not a dask scheduler address ({reason});"
            " give one like tcp://HOST:8786."
        ) from None


def _existing_store(tracking_uri: str | None) -> Any:
    """The store at ``tracking_uri``, which must exist already: reading results never
    creates one (a mistyped path would answer 'no runs' from a new, empty store)."""
    from harness.tracking import Tracker, resolve_uri, sqlite_store_missing

    uri = resolve_uri(tracking_uri)
    if sqlite_store_missing(uri):
        raise StoreError(f"No store at {uri}: check --tracking-uri, or run 'harness run' first.")
    return Tracker(uri)


DRY_RUN_SHOWN = 5  # cells shown per task by --dry-run without -v


def _dry_run(spec: Any, tracking_uri: str | None, force: bool, verbose: bool = False) -> None:
    """``harness run --dry-run``: per task, how many cells a run would resume from the
    store and how many it would run and why, then the first cells of each task (every cell
    with ``verbose``); read without writing to the store (a store that does not exist yet is
    not created)."""
    from harness.runner import planned_states
    from harness.tracking import Tracker, resolve_uri, sqlite_store_missing

    uri = resolve_uri(tracking_uri)
    missing = sqlite_store_missing(uri)
    states = planned_states(spec, None if missing else Tracker(uri), force=force)
    counts = Table(title=escape(f"{spec.name}: {len(spec.cells)} cells by task and state"))
    for column in ("task", "cells", "done", "to run (why)"):
        counts.add_column(column, overflow="fold")
    shown: list[Any] = []
    for task in spec.tasks():
        cells = [c for c in spec.cells if c.task == task]
        per = Counter(states[c.cell_hash] for c in cells)
        todo = "; ".join(f"{n}: {reason}" for reason, n in per.items() if reason != "done")
        counts.add_row(*_plain(task, str(len(cells)), str(per["done"]), todo or "0"))
        shown += cells if verbose else cells[:DRY_RUN_SHOWN]
    console.print(counts)
    title = (
        f"every cell of {spec.name}"
        if verbose
        else (f"the first {DRY_RUN_SHOWN} cells of each task (-v shows every cell)")
    )
    console.print(_cell_table(shown, title, states))
    done = sum(state == "done" for state in states.values())
    reasons = Counter(state for state in states.values() if state != "done")
    why = "".join(f"; {n} cell(s): {escape(reason)}" for reason, n in reasons.items())
    console.print(
        f"{len(spec.cells)} cells: {done} done, {len(spec.cells) - done} to run{why}"
        + (f"; no store at {escape(uri)} yet" if missing else "")
    )


class _Jobs(click.ParamType):
    """``-j``: a count of worker processes >= 0, or ``auto`` (one per usable core)."""

    name = "N|auto"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        if str(value).strip().lower() == "auto":
            from harness.executors import auto_jobs

            return auto_jobs()
        try:
            jobs = int(value)
        except ValueError:
            jobs = -1
        if jobs < 0:
            self.fail(f"'{value}' is not a number of workers >= 0 or 'auto'.", param, ctx)
        return jobs


# -- run ---------------------------------------------------------------------------------


@cli.command()
@click.argument("suite", type=click.Path(dir_okay=False))
@click.option(
    "-j",
    "--jobs",
    default="1",
    show_default=True,
    type=_Jobs(),
    help="Worker processes; 'auto': one per usable core; 0: run cells in this process.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="Where cells run: local worker processes or dask (a LocalCluster of -j workers, "
    "or the cluster at --scheduler; needs dask[distributed]).",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    default=None,
    help="Run on the existing dask cluster at ADDRESS (tcp://host:8786); implies "
    "--executor dask. The plugins must be installed on its workers.",
)
@click.option("--in-process", is_flag=True, help="Run cells in this process (same as -j 0).")
@click.option(
    "--pdb",
    is_flag=True,
    help="Run cells in this process and open pdb where a cell raises (implies -j 0).",
)
@click.option(
    "--tracking-uri",
    default=None,
    help="MLflow tracking URI [default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow/mlflow.db].",
)
@click.option("--force", is_flag=True, help="Run cells even if they already finished.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print every cell and what a run would do with it (done, or why it runs); run nothing.",
)
@click.option("--fail-fast", is_flag=True, help="Stop at the first failed or timed-out cell.")
@click.option("-v", "--verbose", is_flag=True, help="With --dry-run: list every cell.")
@click.option(
    "--report-dir",
    default="reports",
    show_default=True,
    type=click.Path(),
    help="Folder for the report written at the end (one subfolder per suite).",
)
@click.option(
    "--claim",
    "claim_names",
    multiple=True,
    metavar="NAME",
    help="Run only the cells this claim needs (repeatable); see 'harness list'.",
)
@click.option(
    "--strict-claims",
    is_flag=True,
    help="Exit 3 when a claim is not reproduced, uninformative, not run or in error"
    " (a paper's CI).",
)
@_suite_options
def run(
    suite: str,
    jobs: int,
    executor: str,
    scheduler: str | None,
    in_process: bool,
    pdb: bool,
    tracking_uri: str | None,
    force: bool,
    dry_run: bool,
    fail_fast: bool,
    verbose: bool,
    report_dir: str,
    claim_names: tuple[str, ...],
    strict_claims: bool,
    **shape: Any,
) -> None:
    """Run every cell of SUITE with a progress bar, then summarise, give a verdict per claim
    the suite touches and write the report."""
    registry, spec = _suite(suite, _overrides(shape))
    if claim_names:
        spec = _claim_cells(registry, spec, claim_names)
    if dry_run:
        _dry_run(spec, tracking_uri, force, verbose)
        return
    from harness.runner import raise_on_sigterm, run_suite
    from harness.tracking import Tracker

    raise_on_sigterm()  # a scheduler's or `timeout`'s SIGTERM is handled like Ctrl-C

    if in_process or pdb:
        jobs = 0
    if scheduler:
        executor = "dask"
    runner = _executor(executor, registry, jobs, scheduler, pdb)
    if scheduler:
        _check_scheduler(scheduler)  # before the store is written
    _check_report_folder(Path(report_dir), spec.name)  # not after hours of cells
    tracker = Tracker(tracking_uri).open()  # an unusable store exits 2 before anything starts
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[red]{task.fields[problems]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    tic = time.perf_counter()
    with Progress(*columns, console=console, disable=pdb) as progress:
        bar = progress.add_task("cells", total=None, problems=_problems(Counter()))
        ended: Counter = Counter()
        before: list[int] = []  # cells finished before this run, once known

        def on_start(total: int, todo: int) -> None:
            before.append(total - todo)
            console.print(
                f"[bold]{escape(spec.name)}[/]: {total} cells, {total - todo} already"
                f" finished, {todo} to run "
                + (
                    f"on the dask cluster at {scheduler}."
                    if scheduler
                    else "in this process."
                    if jobs == 0
                    else f"with {jobs} worker(s)."
                )
            )
            progress.update(bar, total=todo)

        ticker = _ProgressLines(progress, runner, every_s=PROGRESS_EVERY_S)

        def on_cell(cell: Any, result: Any) -> None:
            ended[result.status] += 1
            ticker.problems = _problems(ended)
            progress.update(bar, advance=1, problems=ticker.problems)

        if not console.is_terminal and not pdb:  # no live bar in a log file: timed lines
            ticker.start()
        try:
            outcome = run_suite(
                spec,
                registry,
                tracker,
                executor=runner,
                force=force,
                fail_fast=fail_fast,
                settings={"jobs": jobs, "executor": executor, "scheduler": scheduler},
                on_start=on_start,
                on_cell=on_cell,
                on_notice=lambda line: console.print(escape(line)),
            )
        except KeyboardInterrupt as err:  # Ctrl-C, SIGTERM: main() says what is kept
            kept = f"{sum(before) + sum(ended.values()):,} of {len(spec.cells):,} cells; "
            err.harness_note = f" ({kept if before else ''}{_resume_command()})"
            raise
        finally:
            ticker.stop()
    elapsed = time.perf_counter() - tic
    verdicts = _summarise(tracker, registry, spec, outcome, Path(report_dir), elapsed, claim_names)
    if outcome.problems:
        sys.exit(ExitCode.FAILED)
    if strict_claims and _claims_fail(verdicts):
        sys.exit(ExitCode.CLAIMS_FAILED)


def _resume_command() -> str:
    """``resume with: harness run ...``: this command as typed, less ``--force`` (which
    would run the kept cells again)."""
    import shlex

    args = [a for a in sys.argv[1:] if a != "--force"]
    return f"resume with: {shlex.join(['harness', *args])}"


def _claim_cells(registry: Any, spec: Any, names: tuple[str, ...]) -> Any:
    """``spec`` with only the cells the claims ``names`` need (``--claim``)."""
    import dataclasses

    from harness.evidence import cells_of, suite_claims

    added = [
        option.split(" ", 1)[1].split("[", 1)[0].strip()
        for option in spec.expanded.get("overrides") or []
        if option.startswith("--add-method ")
    ]
    cells = cells_of(suite_claims(registry, spec.cells, names), spec.cells, added)
    if not cells:
        raise SuiteError(
            f"Suite '{spec.name}' has no cell that claim {', '.join(names)} needs; its"
            " requirements are in 'harness claims SUITE --format json'."
        )
    return dataclasses.replace(spec, cells=cells)


def _claims_fail(verdicts: list[Any]) -> bool:
    """Whether ``--strict-claims`` fails: a claim not reproduced, uninformative, not run or
    in error (a paper's CI must not pass on a claim it could not evaluate)."""
    from harness.verdicts import Status

    failing = (Status.NOT_REPRODUCED, Status.UNINFORMATIVE, Status.NOT_RUN, Status.ERROR)
    return any(v.status in failing for v in verdicts)


def _verdicts(registry: Any, spec: Any, results: Any, names: tuple[str, ...] = ()) -> list[Any]:
    """Evaluate the claims ``spec`` touches (or ``names``) on ``results``."""
    from harness.claims import evaluate_claims
    from harness.evidence import suite_claims
    from harness.report import tidy_results

    claims = suite_claims(registry, spec.cells, names)
    if not claims:
        return []
    return evaluate_claims(claims, tidy_results(results) if not results.empty else results)


_VERDICT_STYLE = {
    "reproduced": "green",
    "not-reproduced": "red",
    "inconclusive": "yellow",
    "uninformative": "magenta",
    "not-run": "dim",
    "error": "bold red",
}


def _print_verdicts(verdicts: list[Any], fmt: str = "table") -> None:
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
        table.add_row(*_plain(*row[:2]), f"[{style}]{escape(row[2])}[/]", *_plain(*row[3:]))
    console.print(table)
    for v in verdicts:
        if v.reason:
            first = v.reason.strip().splitlines()[-1 if v.status == "error" else 0]
            console.print(f"  {escape(v.claim)}: {escape(first)}", soft_wrap=True)
        for method, placed in v.added.items():
            where = placed.get("reason") or (
                f"{placed['estimate']:.3g} [{placed['low']:.3g}, {placed['high']:.3g}]"
            )
            console.print(
                f"  {escape(v.claim)} with {escape(method)} in {escape(str(v.subject))}'s"
                f" place: {escape(placed['status'])} {escape(where)}",
                soft_wrap=True,
            )
    console.print(f"[bold]{escape(count_line(verdicts))}[/]")


PROGRESS_EVERY_S = float(os.environ.get("HARNESS_PROGRESS_EVERY_S", "15"))


def _problems(ended: Counter) -> str:
    """'2 failed' or '2 failed, 1 timed out': the progress line's tally of cells that did
    not end ok, with timeouts apart as in the closing tally."""
    text = f"{ended['failed']} failed"
    return text + (f", {ended['timeout']} timed out" if ended["timeout"] else "")


class _ProgressLines:
    """In a log file (no live bar): a line every ``every_s`` seconds with the cells done,
    failed, elapsed time, an ETA and the cells running now (and for how long), whether or
    not a cell ended in between; and one line when the run ends."""

    def __init__(self, progress: Any, runner: Any, every_s: float) -> None:
        import threading

        self.progress, self.runner, self.every_s = progress, runner, every_s
        self.problems = _problems(Counter())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join(5)
            self.line()

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self.line()

    def line(self) -> None:
        task = self.progress.tasks[0]
        done, total, elapsed = task.completed, task.total, task.elapsed or 0.0
        if total is None:
            return
        eta = (
            _duration(elapsed / done * (total - done))
            if done and total > done
            else ("0 s" if done >= total else "unknown")
        )
        text = (
            f"cells {done:.0f}/{total:.0f}, {self.problems}, {_duration(elapsed)} elapsed,"
            f" eta {eta}"
        )
        running = getattr(self.runner, "running", None)
        cells = running() if callable(running) else []
        if cells and done < total:
            shown = "; ".join(
                f"{c.dataset}/{c.method} s{c.seed} ({_duration(sec)})" for c, sec in cells[:4]
            )
            more = f" and {len(cells) - 4} more" if len(cells) > 4 else ""
            text += f"; running: {shown}{more}"
        console.print(escape(text), soft_wrap=True)


def _executor(name: str, registry: Any, jobs: int, scheduler: str | None, pdb: bool) -> Any:
    from harness.executors import make_executor

    return make_executor(registry, jobs, executor=name, scheduler=scheduler, pdb=pdb)


def _summarise(
    tracker: Any,
    registry: Any,
    spec: Any,
    outcome: Any,
    report_dir: Path,
    elapsed: float,
    claim_names: tuple[str, ...] = (),
) -> list[Any]:
    """Print the tables, write the report, print the tally and the verdicts; return them."""
    from harness.report import (
        problem_lines,
        shared_settings,
        summary_table,
        tally,
        write_report,
    )
    from harness.suite import safe_name
    from harness.tracking import ui_link

    def link(experiment_id: str, run_id: str) -> str:
        return ui_link(tracker.uri, experiment_id, run_id)

    results = tracker.suite_results(spec)
    for task in spec.tasks():
        rows = results[results["task"] == task] if not results.empty else results
        if rows.empty:
            continue
        table = summary_table(rows, registry)
        _print_frame(table, f"{task}: mean ± 95% CI over ok seeds (latest run of each cell)")
        settings = shared_settings(rows, registry) if not table.empty else ""
        if settings:
            console.print(f"  {escape(settings)}", soft_wrap=True)
        for line in problem_lines(rows, registry, link):
            colour = "yellow" if line.startswith(("skipped", "metric")) else "red"
            console.print(f"  [{colour}]{escape(line)}[/]", soft_wrap=True)
    verdicts = _verdicts(registry, spec, results, claim_names)
    if not results.empty:
        # a run of some claims' cells (--claim) reports apart from the whole suite's
        part = f"-claim-{'-'.join(claim_names)}" if claim_names else ""
        out = report_dir / safe_name((spec.name + part)[:100])
        selection = spec.expanded.get("overrides", [])
        key = _report_key(spec.name, results, verdicts, selection, registry)
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
                results, registry, tracker, spec.name, out, link, selection, verdicts
            )
            for problem in written:
                console.print(f"[red]{escape(problem)}[/]")
            stamp.write_text(key)
        for _, parent in outcome.experiments.values():
            tracker.log_folder(parent, out, "report")
            tracker.set_tags(parent, {f"claim.{v.claim}": str(v.status) for v in verdicts})
        note = " (current: same cells, runs and verdicts; not rebuilt)" if current else ""
        console.print(f"Report: {escape(str(out))}/report.html{note}")
    if not tracker.uri.startswith(("http://", "https://")):
        console.print(f"Open the UI with: harness ui --tracking-uri '{escape(tracker.uri)}', then")
    for name, (experiment_id, _) in outcome.experiments.items():
        console.print(f"  {escape(name)}: {escape(ui_link(tracker.uri, experiment_id))}")
    not_run = len(spec.cells) - len(results)  # --fail-fast stopped before them
    also = f", {not_run:,} not run" if not_run > 0 else ""
    console.print(f"[bold]{tally(results)}{also} in {_duration(elapsed)}[/]")
    if verdicts:
        _print_verdicts(verdicts)
    return verdicts


def _report_key(
    name: str, results: Any, verdicts: list[Any], selection: list[str], registry: Any
) -> str:
    """A digest of what a suite's report shows: its cells' latest runs (cell hashes cover
    the plugins' code), the verdicts, the options that chose the cells, the harness code
    that draws it and the source of every plugin report. Equal keys mean the report on disk
    is what this code computes."""
    import hashlib
    import json

    from harness import __version__, claims, report
    from harness import verdicts as verdict_module

    files = {Path(m.__file__) for m in (report, claims, verdict_module)}
    for entry in registry.entries["report"].values():
        source = inspect.getsourcefile(entry.cls)
        if source:
            files.add(Path(source))
    code = sorted(f"{f}:{hashlib.sha256(f.read_bytes()).hexdigest()}" for f in files)
    runs = sorted(zip(results.get("cell_hash", []), results.get("run_id", []), strict=True))
    body = [name, __version__, code, list(selection), runs, [v.as_dict() for v in verdicts]]
    return hashlib.sha256(json.dumps(body, default=str).encode()).hexdigest()


def _duration(seconds: float) -> str:
    """``8 min 42 s``, ``1 h 3 min``, ``12.3 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def _print_frame(table: Any, title: str, per_table: int = 6) -> None:
    """Print a summary table about ``per_table`` metric columns at a time (many metrics
    would squeeze every column to a few characters), never splitting a dict metric's keys
    (``power.rate``, ``power.high``) across two tables."""
    if table.empty:
        return
    metrics = [c for c in table.columns if c != "seeds"]
    chunks: list[list[str]] = [[]]
    for col in metrics:
        family = col.split(".", 1)[0].split(" ", 1)[0]
        last = chunks[-1][-1].split(".", 1)[0].split(" ", 1)[0] if chunks[-1] else None
        if len(chunks[-1]) >= per_table and family != last:
            chunks.append([])
        chunks[-1].append(col)
    for i, chunk in enumerate(chunks):
        rich_table = Table(title=escape(title) if i == 0 else None)
        for name in _plain(*table.index.names):
            rich_table.add_column(name, overflow="fold")
        for col in _plain("seeds", *chunk):
            rich_table.add_column(col, justify="right", overflow="fold")
        for index, row in table[["seeds", *chunk]].iterrows():
            keys = index if isinstance(index, tuple) else (index,)
            rich_table.add_row(*_plain(*keys, *row))
        console.print(rich_table)


@cli.command()
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
@_suite_options
def results(suite: str, fmt: str, out: str | None, tracking_uri: str | None, **shape: Any) -> None:
    """Export SUITE's results as data: one row per cell (its latest run) with params,
    metrics, status, seconds, run id, plugin versions and git commit. The options that
    shaped the run (--seeds, --add-method, ...) select the same cells.

    Example: harness results suites/smoke.yaml --format parquet --out smoke.parquet
    """
    import json

    from harness.report import tidy_results

    _, spec = _suite(suite, _overrides(shape))
    tracker = _existing_store(tracking_uri)
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
    _warn_missing(spec, len(table), suite, "export")


@cli.command()
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
@_suite_options
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

    registry, spec = _suite(suite, _overrides(shape))
    if results_files:
        frames = []
        for file in results_files:
            frames.append(read_results(file))
            check_results(frames[-1], registry, spec.cells, f"--results {file}")
        rows = of_cells(pd.concat(frames, ignore_index=True), spec.cells)
    else:
        tracker = _existing_store(tracking_uri)
        rows = tracker.suite_results(spec)
        if rows.empty:
            raise SuiteError(
                f"Suite '{spec.name}' has no runs in {tracker.display_uri}; run it first"
                f" (harness run {suite}), or give --results FILE."
            )
    verdicts = _verdicts(registry, spec, rows, claim_names)
    if not verdicts:
        err_console.print(f"No installed plugin's claim needs a cell of '{escape(spec.name)}'.")
        return
    _print_verdicts(verdicts, fmt)
    if strict_claims and _claims_fail(verdicts):
        sys.exit(ExitCode.CLAIMS_FAILED)


def _warn_missing(spec: Any, found: int, suite: str, what: str) -> None:
    """On stderr: how many of the suite's cells have no result for the current code and
    suite, which the report or export leaves out."""
    missing = len(spec.cells) - found
    if missing:
        err_console.print(
            f"[yellow]{missing} of {len(spec.cells)} cells have no result for the current"
            f" code and suite; the {what} leaves them out (harness run {escape(suite)},"
            " with the same options, computes them).[/]"
        )


# -- validate, list, report, ui --------------------------------------------------------------


@cli.command()
@click.argument("suite", type=click.Path(dir_okay=False))
@_suite_options
def validate(suite: str, **shape: Any) -> None:
    """Check SUITE (names, params, types, includes, overrides) without running it."""
    _, spec = _suite(suite, _overrides(shape))
    tasks = ", ".join(spec.tasks())
    console.print(f"[green]OK[/] {escape(suite)}: {len(spec.cells)} cells ({escape(tasks)}).")


@cli.command("list")
@click.option(
    "--task",
    "tasks",
    multiple=True,
    metavar="TASK",
    help="Only this task (repeatable), with its data and output types and their fields.",
)
def list_(tasks: tuple[str, ...]) -> None:
    """Plugins with versions; each task's components with their params (types and
    defaults); with --task, the task's data and output types too.

    Example: harness list --task fair-regression
    """
    registry = _registry()
    for task in tasks:
        if task not in registry.tasks():
            registry.get("dataset", task, "", where="--task")  # lists the known tasks
    plugins = Table(title="Plugins")
    plugins.add_column("plugin")
    plugins.add_column("version")
    for name, version in sorted(registry.plugins.items()):
        plugins.add_row(*_plain(name, version))
    if not tasks:
        console.print(plugins)
    for task in tasks or registry.tasks():
        if tasks:
            _print_task_types(registry, task)
        table = Table(title=f"task: {escape(task)}")
        for col in ("kind", "name", "plugin", "what it is", "params: type = default"):
            table.add_column(col, overflow="fold")
        for kind, entries in registry.entries.items():
            for (t, name), entry in sorted(entries.items()):
                if t != task:
                    continue
                summary = (inspect.getdoc(entry.cls) or "").split("\n", 1)[0]
                params = _params_text(entry.cls)
                if kind == "claim":  # what it states, and what would make it hold
                    summary = getattr(entry.cls, "statement", summary)
                    hypothesis = getattr(entry.cls, "hypothesis", "")
                    params = f"estimate {hypothesis}; {getattr(entry.cls, 'source', '')}"
                table.add_row(*_plain(kind, name, entry.plugin, summary, params))
        console.print(table)


def _params_text(cls: Any) -> str:
    """``n: int = 100, alpha: float (required)`` for a component's ``Params``."""
    import dataclasses

    from harness.components import describe_type, params_fields

    out = []
    for key, (annotation, default) in params_fields(cls.Params).items():
        required = default is dataclasses.MISSING or repr(default) == "PydanticUndefined"
        tail = " (required)" if required else f" = {default!r}"
        out.append(f"{key}: {describe_type(annotation)}{tail}")
    return ", ".join(out)


def _print_task_types(registry: Any, task: str) -> None:
    """The task's data and output types (docs/design.md 'Plugin API'), field by field,
    with each field's line from the type's numpydoc ``Attributes`` section."""
    import dataclasses

    from harness.components import describe_type

    for role, kind in (("data", registry.data_type(task)), ("output", registry.output_type(task))):
        if kind is None:
            console.print(f"[yellow]task {task}: no annotated {role} type[/]")
            continue
        doc = (inspect.getdoc(kind) or "") if kind.__module__ != "builtins" else ""
        console.print(
            f"[bold]task {escape(task)}, {role} type[/] {escape(_type_name(kind))}:"
            f" {escape(doc.split(chr(10))[0])}",
            soft_wrap=True,
        )
        if not dataclasses.is_dataclass(kind):
            continue
        documented = _attributes(doc)
        table = Table(show_header=True)
        for col in ("field", "type", "documented as"):
            table.add_column(col, overflow="fold")
        hints = typing.get_type_hints(kind)
        for f in dataclasses.fields(kind):
            kind_text = describe_type(hints.get(f.name, f.type))
            table.add_row(*_plain(f.name, kind_text, documented.get(f.name, "")))
        console.print(table)


def _type_name(kind: type) -> str:
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def _attributes(doc: str) -> dict[str, str]:
    """``{field: "type, shape (n,): its description"}`` from a numpydoc ``Attributes``
    section; the description is every indented line under the field, joined."""
    out: dict[str, str] = {}
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"^(\w+(?:, \w+)*) : (.+)$", line)
        if not match:
            continue
        follow = []
        for below in lines[i + 1 :]:
            if not below[:1].isspace() or not below.strip():
                break
            follow.append(below.strip())
        text = " ".join(follow)
        for name in match.group(1).split(", "):
            out[name] = match.group(2) + (f": {text}" if text else "")
    return out


@cli.command()
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
@_suite_options
def report(suite: str | None, tracking_uri: str | None, out: str, **shape: Any) -> None:
    """Write result tables (mean and 95% CI over seeds) and plots for SUITE and log them to
    the suite's latest parent runs. The options that shaped the run (--seeds, --add-method,
    ...) select the same cells of SUITE. Without SUITE: every suite in the store, each with
    the cells its latest 'harness run' selected (the report names those options)."""
    from harness.report import write_report
    from harness.suite import safe_name
    from harness.tracking import ui_link

    if not suite and any(shape.values()):
        options = click.get_current_context().command.params
        given = ", ".join(o.opts[0] for o in options if shape.get(o.name or ""))
        raise SuiteError(f"{given} shape a suite: name it (harness report SUITE {given} ...).")
    registry = _registry() if not suite else None
    tracker = _existing_store(tracking_uri)
    if suite:
        registry, spec = _suite(suite, _overrides(shape))
        results = tracker.suite_results(spec)
        if results.empty:
            raise SuiteError(
                f"Suite '{spec.name}' has no result for its {len(spec.cells)} cells as the"
                f" code and suite are now in {tracker.uri} (runs made with other plugin code,"
                f" params or metrics are not shown: docs/design.md 'Resume'). Run"
                f" 'harness run {suite}' first."
            )
        _warn_missing(spec, len(results), suite, "report")
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


@cli.command()
@click.option(
    "--tracking-uri",
    default=None,
    help="MLflow tracking URI [default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow/mlflow.db]."
    " An http(s):// tracking server is only checked and its URL printed.",
)
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option(
    "--workers", default=1, show_default=True, type=click.IntRange(min=1), help="UI workers."
)
def ui(tracking_uri: str | None, port: int, host: str, workers: int) -> None:
    """Open the MLflow UI on the store (default: the local one under mlflow/).

    Prints the URL once the UI answers; Ctrl-C or SIGTERM stops it with its workers.
    """
    from harness import secrets
    from harness.server import MlflowProcess, mlflow_executable, port_in_use
    from harness.store import check_store
    from harness.tracking import resolve_uri, sqlite_store_missing

    uri = secrets.move_http_credentials(resolve_uri(tracking_uri))
    secrets.watch(uri)
    runs_page = "/#/experiments?workflowType=machine_learning"
    if uri.startswith(("http://", "https://")):
        check_store(uri)  # exit 2 within seconds if it does not answer
        shown = secrets.mask(uri.rstrip("/"))
        console.print(escape(f"MLflow UI of the tracking server: {shown}{runs_page}"))
        return
    if sqlite_store_missing(uri):
        raise StoreError(f"No store at {uri} yet: run 'harness run SUITE' first.")
    check_store(uri)  # a missing database driver or an unreachable database: exit 2
    if port_in_use(host, port):
        raise StoreError(f"Port {port} on {host} is in use (another UI?): pass --port.")
    log = Path(tempfile.gettempdir()) / f"harness-ui-{port}.log"
    argv = [mlflow_executable(), "ui", "--backend-store-uri", uri, "--host", host]
    argv += ["--port", str(port), "--workers", str(workers)]
    err_console.print(
        escape(f"Starting the MLflow UI on {secrets.mask(uri)} (log: {log}) ..."), soft_wrap=True
    )
    health = f"http://{_local(host)}:{port}/health"
    with log.open("w") as out, MlflowProcess(argv, health, out) as process:
        if not process.wait_ready():
            return
        console.print(f"MLflow UI on http://{host}:{port}{runs_page} (Ctrl-C stops it)")
        code = process.serve_until_stopped()
    err_console.print("MLflow UI stopped." if code == 0 else f"The MLflow UI exited with {code}.")
    if code:
        sys.exit(ExitCode.FAILED)


def _local(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


@cli.command(context_settings={"ignore_unknown_options": True})
@click.option(
    "--store",
    envvar="HARNESS_SERVER_STORE",
    required=True,
    help="Backend store URI, e.g. postgresql://mlflow:PASSWORD@localhost/mlflow"
    " [env: HARNESS_SERVER_STORE].",
)
@click.option(
    "--artifacts",
    default="mlflow/server-artifacts",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Local folder for the artifacts of every run; clients upload and download them"
    " through the server (no shared disk).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to bind; 0.0.0.0 exposes the server to the network (see README).",
)
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--workers", default=4, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--basic-auth",
    is_flag=True,
    help="Require a user name and password (MLflow's basic-auth app; see README).",
)
@click.argument("mlflow_args", nargs=-1, type=click.UNPROCESSED)
def server(
    store: str,
    artifacts: str,
    host: str,
    port: int,
    workers: int,
    basic_auth: bool,
    mlflow_args: tuple[str, ...],
) -> None:
    """Start a shared MLflow tracking server (PostgreSQL store, local artifacts) for a team.

    Clients run 'harness run SUITE --tracking-uri http://HOST:PORT'. Arguments after '--'
    go to 'mlflow server' as they are (e.g. -- --allowed-hosts mlflow.example.org).
    """
    from harness import secrets
    from harness.server import MlflowProcess, mlflow_executable, port_in_use
    from harness.store import check_store

    secrets.watch(store)
    check_store(store)  # the driver is installed and the database answers, or exit 2
    if basic_auth:
        import importlib.util

        if importlib.util.find_spec("flask_wtf") is None:
            from harness.errors import missing_dependency

            raise StoreError(missing_dependency("--basic-auth", "Flask-WTF", "'mlflow[auth]'"))
    if port_in_use(host, port):
        raise StoreError(f"Port {port} on {host} is in use: pass --port.")
    folder = Path(artifacts).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    # The store URI (and any password in it) goes by environment, never on a command line
    # that `ps` shows: mlflow server reads MLFLOW_BACKEND_STORE_URI.
    argv = [mlflow_executable(), "server"]
    argv += ["--serve-artifacts", "--artifacts-destination", folder.as_uri()]
    argv += ["--host", host, "--port", str(port), "--workers", str(workers)]
    if basic_auth:
        argv += ["--app-name", "basic-auth"]
    argv += list(mlflow_args)
    shown = secrets.mask(store)
    err_console.print(
        escape(f"Starting the MLflow tracking server on {shown} (artifacts: {folder}) ..."),
        soft_wrap=True,
    )
    health = f"http://{_local(host)}:{port}/health"
    store_env = {"MLFLOW_BACKEND_STORE_URI": store}
    with MlflowProcess(argv, health, sys.stderr, env=store_env) as process:
        if not process.wait_ready():
            return
        console.print(
            escape(
                f"Tracking server on http://{host}:{port} (store {shown}, artifacts {folder})."
                f" Clients: harness run SUITE --tracking-uri http://{host}:{port}"
            )
        )
        code = process.serve_until_stopped()
    err_console.print("Tracking server stopped." if code == 0 else f"mlflow exited with {code}.")
    if code:
        sys.exit(ExitCode.FAILED)


# -- plugin authors -----------------------------------------------------------------------------


@cli.command("new-plugin")
@click.argument("name")
@click.option(
    "--task",
    default=None,
    metavar="TASK",
    help="Add one method to this existing task (a method-only package) instead of a new task.",
)
@click.option(
    "--dir",
    "parent",
    default="plugins",
    show_default=True,
    type=click.Path(),
    help="Where the package folder is created.",
)
def new_plugin(name: str, task: str | None, parent: str) -> None:
    """Create a ready-to-install plugin package: a new task NAME, or with --task one method
    NAME for an existing task (typed against its public API, with a suite and a test).

    Examples: harness new-plugin my-paper; harness new-plugin my-method --task fair-regression
    """
    from harness.scaffold import _shown, write_method_plugin, write_skeleton

    if task:
        folder = write_method_plugin(name, task, Path(parent), _registry())
    else:
        folder = write_skeleton(name, Path(parent))
    shown = _shown(folder)
    console.print(
        escape(
            f"Created {shown}. Next: pip install -e {shown} && harness check-plugin {name}"
            f" && harness run {shown}/suites/{name}.yaml"
        )
    )


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
        table.add_row(escape(check_id), f"[{colour[outcome]}]{outcome}[/]", escape(message))
    console.print(table)
    failed = sum(outcome == "failed" for _, outcome, _ in results)
    console.print(f"{len(results) - failed} passed or skipped, {failed} failed")
    if failed:
        sys.exit(ExitCode.FAILED)
