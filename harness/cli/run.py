"""``harness run``: its options, the checks made before the first cell, and the run."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from harness.cli.common import (
    ExitCode,
    claim_cells,
    claim_timeout_option,
    family_cells,
    load,
    overrides,
    report_folder,
    suite_options,
)
from harness.errors import SuiteError

if TYPE_CHECKING:
    from harness.plugins.registry import Registry


class Jobs(click.ParamType):
    """``-j``: a count of worker processes >= 0, or ``auto`` (one per usable core)."""

    name = "N|auto"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        if str(value).strip().lower() == "auto":
            from harness.runs.executors import auto_jobs

            return auto_jobs()
        try:
            jobs = int(value)
        except ValueError:
            jobs = -1
        if jobs < 0:
            self.fail(f"'{value}' is not a number of workers >= 0 or 'auto'.", param, ctx)
        return jobs


@click.command()
@click.argument("suite", type=click.Path(dir_okay=False))
@click.option(
    "-j",
    "--jobs",
    default="1",
    show_default=True,
    type=Jobs(),
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
    help="Run only the cells this claim needs (repeatable); its verdict is the whole"
    " suite's, from the store's results of its family's cells; see 'harness list'.",
)
@click.option(
    "--strict-claims",
    is_flag=True,
    help="Exit 3 when a claim is not reproduced, uninformative, not run or in error, or a"
    " task of the suite has no claim evaluated at all (a paper's CI).",
)
@click.option(
    "--decide",
    is_flag=True,
    help="After the suite's seeds, give every inconclusive claim more seeds (its cells only)"
    " until it is decided or at its max_units, reading it through anytime-valid confidence"
    " sequences; see docs/design.md 'Deciding'.",
)
@click.option(
    "--decide-budget",
    metavar="DURATION",
    default=None,
    help="With --decide: the most wall time the decide pass may take, e.g. 90s or 5m.",
)
@claim_timeout_option
@suite_options
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
    decide: bool,
    decide_budget: str | None,
    **shape: Any,
) -> None:
    """Run every cell of SUITE with a progress bar, then summarise, give a verdict per claim
    the suite touches and write the report."""
    from harness.cli.plan import print_plan
    from harness.cli.progress import run_with_progress
    from harness.cli.summary import claims_fail, summarise

    budget = _decide_budget(decide, decide_budget)
    registry, spec = load(suite, overrides(shape))
    evidence = None  # the cells the verdicts read: the suite's, or --claim's families'
    if claim_names:
        evidence = family_cells(registry, spec, claim_names)
        spec = claim_cells(registry, spec, claim_names)
    if dry_run:
        print_plan(spec, tracking_uri, force, verbose)
        return
    from harness.store.tracking import Tracker

    jobs = 0 if in_process or pdb else jobs
    settings = {"jobs": jobs, "executor": "dask" if scheduler else executor, "scheduler": scheduler}
    out = report_folder(
        Path(report_dir), spec.name, spec.expanded.get("overrides", []), claim_names
    )
    runner = _prepare(registry, settings, pdb, Path(report_dir), out)
    tracker = Tracker(tracking_uri).open()  # an unusable store exits 2 before anything starts
    tic = time.perf_counter()
    outcome = run_with_progress(
        spec, registry, tracker, runner, settings, force=force, fail_fast=fail_fast, pdb=pdb
    )
    anytime: set[str] = set()
    trajectories: dict[str, list] = {}
    if decide and not outcome.problems:
        from harness.cli.decide import decide as decide_pass

        done = decide_pass(tracker, registry, spec, runner, settings, budget, fail_fast, evidence)
        spec, anytime, trajectories = done.spec, done.anytime, done.trajectories
        if evidence is not None:  # --claim: the verdicts read the family's cells and the added
            evidence = dataclasses.replace(evidence, cells=[*evidence.cells, *done.added])
    elapsed = time.perf_counter() - tic
    try:
        verdicts = summarise(
            tracker,
            registry,
            spec,
            outcome,
            Path(report_dir),
            elapsed,
            claim_names,
            evidence,
            anytime=anytime,
            trajectories=trajectories,
        )
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM while the claims are evaluated
        from harness.runs.runner import mark_killed

        mark_killed(tracker, outcome.experiments)
        raise
    if outcome.problems:
        sys.exit(ExitCode.FAILED)
    if strict_claims and claims_fail(verdicts, spec):
        sys.exit(ExitCode.CLAIMS_FAILED)


def _decide_budget(decide: bool, budget: str | None) -> float | None:
    """``--decide-budget`` in seconds (None: no limit). Raises :class:`SuiteError` (exit 2)
    for a budget that is not a positive duration, or one given without ``--decide``."""
    if budget is None:
        return None
    if not decide:
        raise SuiteError("--decide-budget needs --decide.")
    from harness.suites.schema import parse_duration

    try:
        seconds = parse_duration(budget)
    except ValueError:
        seconds = None
    if seconds is None or not seconds > 0:
        raise SuiteError(
            f"--decide-budget {budget}: the budget must be a positive duration like 90s or 5m."
        )
    return seconds


def _prepare(
    registry: Registry, settings: dict[str, Any], pdb: bool, report_dir: Path, out: Path
) -> Any:
    """The executor of the run, every late failure checked first: a bad scheduler address
    or report folder exits 2 before the store is written."""
    from harness.runs.executors import make_executor
    from harness.runs.runner import raise_on_sigterm

    raise_on_sigterm()  # a scheduler's or `timeout`'s SIGTERM is handled like Ctrl-C
    scheduler = settings["scheduler"]
    runner = make_executor(
        registry, settings["jobs"], executor=settings["executor"], scheduler=scheduler, pdb=pdb
    )
    if scheduler:
        _check_scheduler(scheduler)  # before the store is written
    _check_report_folder(report_dir, out)  # not after hours of cells
    return runner


def _check_writable_folder(folder: Path, option: str) -> None:
    """``folder`` is, or can be created as, a folder this process can write (checked, not
    created). Raises :class:`SuiteError` (exit 2) naming ``option``."""
    from harness.store.preflight import unwritable_folder

    if folder.exists() and not folder.is_dir():
        raise SuiteError(f"{option} {folder}: is a file, not a folder; pass a folder.")
    blocked = unwritable_folder(folder)
    if blocked is not None:
        raise SuiteError(f"{option} {folder}: cannot write in {blocked}; pass another folder.")


def _check_report_folder(folder: Path, out: Path) -> None:
    """``--report-dir`` and its entry ``out`` for this suite can take the report: checked
    before the first cell (not found after every cell ran). Raises :class:`SuiteError`
    (exit 2)."""
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

    from harness.redaction import shown

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
