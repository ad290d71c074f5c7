"""The driver loop: which cells of a suite run and why, handing them to an executor, and
logging each result to the store as it arrives (the driver is the only writer).

:func:`run_suite` runs a suite; :func:`planned_states` says what it would do
(``--dry-run``); a cell itself runs in :mod:`harness.runs.cell`, on the workers of
:mod:`harness.runs.executors`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Protocol

import pluggy

from harness.errors import StoreError
from harness.plugins.registry import Registry
from harness.runs.cell import CellResult
from harness.runs.events import CellReport, listener, run_events
from harness.runs.executors.base import Executor
from harness.runs.executors.local import LocalExecutor
from harness.store.current import rerun_reason, rerun_reasons
from harness.suites.identity import Cell
from harness.suites.loading import Suite

if TYPE_CHECKING:
    from harness.store.tracking import Tracker

__all__ = [
    "SHOWN_REASONS",
    "CellLogger",
    "SuiteOutcome",
    "Terminated",
    "mark_killed",
    "planned_states",
    "raise_on_sigterm",
    "rerun_reason",
    "rerun_reasons",
    "run_suite",
    "signals_deferred",
]


class Terminated(KeyboardInterrupt):
    """SIGTERM (what ``timeout``, ``kill`` and batch schedulers send), handled like Ctrl-C:
    the parent run is marked KILLED, finished cells are kept; ``harness`` exits 143."""

    signum = signal.SIGTERM


def raise_on_sigterm() -> None:
    """Make SIGTERM raise :class:`Terminated` in the main thread (call once, in the CLI)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated

    signal.signal(signal.SIGTERM, handler)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM until the block ends, then raise them (main thread only;
    else a no-op): a cell is logged whole or not at all."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {
        signum: signal.signal(signum, lambda signum, frame: caught.append(signum))
        for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if signal.SIGTERM in caught:
        if not callable(previous[signal.SIGTERM]):  # default action: die as asked, now
            os.kill(os.getpid(), signal.SIGTERM)
        raise Terminated
    if caught:
        raise KeyboardInterrupt


def _refused(cell: Cell, result: CellResult, err: Exception) -> CellResult:
    """The cell as ``failed`` when the tracking store refused its results (MLflow's limits:
    a metric key over 250 characters, a param value over 6,000, ...)."""
    reason = f"the tracking store refused this cell's results: {type(err).__name__}: {err}"
    return CellResult(
        cell.cell_hash,
        "failed",
        reason=reason[:2000],
        error=reason,
        seconds=result.seconds,
        start_ms=result.start_ms,
        end_ms=result.end_ms,
    )


@dataclass
class SuiteOutcome:
    """What :func:`run_suite` did: the experiments and parent runs it wrote to, the cells it
    ran, the failed or timed-out ones, and why cells that have run before ran again.

    ``experiments`` maps each experiment name of the suite (its own and its included
    suites', see :meth:`harness.suites.loading.Suite.experiments`) to ``(experiment_id,
    parent_run_id)``; ``experiment_id`` and ``parent_run_id`` are the first of them.
    """

    experiment_id: str
    parent_run_id: str
    ran: int = 0
    problems: list[tuple[Cell, CellResult]] = field(default_factory=list)
    rerun_reasons: dict[str, int] = field(default_factory=dict)
    experiments: dict[str, tuple[str, str]] = field(default_factory=dict)

    def harness_cell_logreport(self, report: CellReport) -> None:
        """Count a logged cell (a listener of the run, :mod:`harness.runs.events`)."""
        self.ran += 1
        if report.result.status in ("failed", "timeout"):
            self.problems.append((report.cell, report.result))


def planned_states(suite: Suite, tracker: Tracker | None, force: bool = False) -> dict[str, str]:
    """What :func:`run_suite` would do with each cell, read from the store without writing
    to it (``harness run --dry-run``).

    :param suite: a :class:`harness.suites.loading.Suite`.
    :param tracker: a :class:`harness.store.tracking.Tracker`, or ``None`` when the store does not
        exist yet (every cell is then new).
    :param force: as for :func:`run_suite`.
    :returns: ``{cell_hash: state}``: ``"done"`` for a cell a run would resume from the
        store (docs/design.md "Resume"), else the reason it would run (as in the run's
        "Cells to run" line: ``"never run with these settings"``, ``"code of plugin X
        changed"``, ``"last run failed"``, ``"--force"`` ...).
    :raises StoreError: where a run would be refused before any cell: an experiment of the
        suite is deleted, or another live ``harness run`` is running the suite (the same
        message a run gives).
    """
    states: dict[str, str] = {}
    for name, members in suite.experiments().items():
        experiment = None
        if tracker is not None:
            experiment = tracker.experiment_id(name, refuse_deleted=True)
        for other in tracker.running_suites(experiment) if experiment is not None else []:
            if other.alive:
                raise StoreError(
                    tracker.already_running(
                        other,
                        "A run started now would be refused. Wait for it to finish (or stop"
                        " it), then run again.",
                        name,
                    )
                )
        done: set[str] = set()
        previous: Mapping[str, Mapping[str, str]] = {}
        if experiment is not None and not force:
            done = tracker.finished_hashes(experiment)
            previous = tracker.latest_by_config(experiment)
        for cell in members:
            if force:
                states[cell.cell_hash] = "--force"
            elif cell.cell_hash in done and cell.fingerprinted:
                states[cell.cell_hash] = "done"
            else:
                reason = rerun_reason(cell, previous)
                states[cell.cell_hash] = SHOWN_REASONS.get(reason, reason)
    return states


# How a reason of :func:`rerun_reasons` reads in the run's "Cells to run" line.
SHOWN_REASONS = {"new": "never run with these settings"}


class _Heartbeat(Protocol):
    def stop(self) -> None: ...


def mark_killed(
    tracker: Tracker,
    parents: Mapping[str, tuple[str, str]],
    heartbeats: Iterable[_Heartbeat] = (),
) -> None:
    """Ctrl-C or SIGTERM: stop the heartbeats and mark every parent run opened KILLED (also
    once its cells have ended, while its claims are evaluated: ``harness run``)."""
    for beat in heartbeats:
        beat.stop()
    with signals_deferred():
        for _, parent in parents.values():
            with contextlib.suppress(Exception):
                tracker.end_suite(parent, "KILLED")


def run_suite(
    suite: Suite,
    registry: Registry,
    tracker: Tracker,
    *,
    executor: Executor | None = None,
    force: bool = False,
    fail_fast: bool = False,
    settings: Mapping[str, object] | None = None,
    listeners: Iterable[object] = (),
) -> SuiteOutcome:
    """Run a suite's cells that have no usable result and log each to the store as it ends.

    A cell is done when the latest complete run with its ``cell_hash`` is ``ok`` or
    ``skipped`` (docs/design.md "Resume"); every other cell runs. Before running, parent
    runs of this suite left RUNNING by a dead process are marked KILLED and half-written
    cell runs are deleted (:meth:`harness.store.tracking.Tracker.reap_dead_suites`). Each result
    is emitted to the store writer (:class:`CellLogger`), then to ``listeners``
    (:mod:`harness.runs.events`: ``harness_run_start``, ``harness_run_notice``,
    ``harness_cell_logreport``).

    :param executor: defaults to ``LocalExecutor(registry, 1)``.
    :param force: run every cell, done or not.
    :param fail_fast: stop after the first failed or timed-out cell.
    :param settings: logged with each parent run (``jobs``, ``executor``, ...).
    :raises KeyboardInterrupt: (:class:`Terminated` for SIGTERM) after marking the parent run
        KILLED; logged cells are kept.
    """
    from harness.store.tracking import git_commit

    events = run_events(listeners)
    commit = git_commit()
    notice = events.hook.harness_run_notice
    parents, todo, reasons = _open_parents(
        suite, tracker, dict(settings or {}), commit, force, lambda line: notice(line=line)
    )
    heartbeats: list[_Heartbeat] = []
    outcome = SuiteOutcome(*next(iter(parents.values())), rerun_reasons=dict(reasons))
    outcome.experiments = parents
    try:
        events.hook.harness_run_start(total=len(suite.cells), todo=len(todo), cells=list(todo))
        # Why cells run, whenever something was done before (a first run needs no reason).
        if any(r != "new" for r in reasons) or (todo and len(todo) < len(suite.cells)):
            notice(line=_reasons_line(reasons))
        where = {c.cell_hash: parents[c.experiment or suite.name] for c in suite.cells}
        events.register(CellLogger(tracker, registry, commit))
        events.register(outcome)
        emit = _emitter(events.hook, where, outcome, fail_fast)
        heartbeats = [tracker.heartbeat(parent) for _, parent in parents.values()]
        (executor or LocalExecutor(registry, 1)).run(todo, emit)
    except KeyboardInterrupt:
        mark_killed(tracker, parents, heartbeats)
        raise
    for beat in heartbeats:
        beat.stop()
    failed = {where[c.cell_hash] for c, _ in outcome.problems}
    for pair in parents.values():
        tracker.end_suite(pair[1], "FAILED" if pair in failed else "FINISHED")
    return outcome


def _emitter(
    hook: pluggy.HookRelay,
    where: Mapping[str, tuple[str, str]],
    outcome: SuiteOutcome,
    fail_fast: bool,
) -> Callable[[Cell, CellResult], bool]:
    """The executors' ``on_result``: emit the cell's report to the run's listeners, and say
    whether to stop (``--fail-fast`` after a failed or timed-out cell)."""

    def emit(cell: Cell, result: CellResult) -> bool:
        hook.harness_cell_logreport(report=CellReport(cell, result, *where[cell.cell_hash]))
        return fail_fast and bool(outcome.problems)

    return emit


def _open_parents(
    suite: Suite,
    tracker: Tracker,
    settings: dict[str, object],
    commit: str,
    force: bool,
    notice: Callable[[str], None],
) -> tuple[dict[str, tuple[str, str]], list[Cell], Counter[str]]:
    """Open a parent run in each experiment of the suite, refuse a second live run of it
    and read what is done: ``(parents, cells to run in suite order, why they run)``, where
    ``parents`` maps each experiment name to ``(experiment id, parent run id)``.

    A refusal (:class:`StoreError`) deletes the parent runs opened; Ctrl-C or SIGTERM marks
    them KILLED.
    """
    parents: dict[str, tuple[str, str]] = {}
    todo: list[Cell] = []
    reasons: Counter[str] = Counter()
    try:
        for name, members in suite.experiments().items():
            experiment = tracker.experiment_id(name, create=True)
            for line in tracker.reap_dead_suites(experiment):
                notice(line)
            parent = tracker.start_suite(experiment, suite, dict(settings, force=force), commit)
            parents[name] = (experiment, parent)
            # Another live run of this suite: refuse (StoreError) before reading what is
            # done, so two runs started at once never run a cell twice.
            tracker.claim_suite(experiment, parent, name)
            done = set() if force else tracker.finished_hashes(experiment)
            mine = [c for c in members if c.cell_hash not in done or not c.fingerprinted]
            if mine and not force:
                reasons += rerun_reasons(mine, tracker.latest_by_config(experiment))
            todo += mine
        if force:
            reasons = Counter({"--force": len(todo)})
        order = {c.cell_hash: i for i, c in enumerate(suite.cells)}
        todo.sort(key=lambda c: order[c.cell_hash])  # suite order across experiments
    except StoreError:
        for _, parent in parents.values():  # the runs opened before the refusal
            with contextlib.suppress(Exception):
                tracker.delete_run(parent)
        raise
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM before any cell ran
        mark_killed(tracker, parents, [])
        raise
    return parents, todo, reasons


def _reasons_line(reasons: Mapping[str, int]) -> str:
    """``Cells to run: 12 cell(s): code of plugin X changed; 4 cell(s): never run with these
    settings``."""
    shown = (f"{n} cell(s): {SHOWN_REASONS.get(r, r)}" for r, n in reasons.items())
    return "Cells to run: " + "; ".join(shown)


class CellLogger:
    """The store's subscription to a run: logs each cell's result whole under its parent
    run, as a ``failed`` cell when the store refuses the results (the report then carries
    that result), and stops the run when the store's connection is lost."""

    def __init__(self, tracker: Tracker, registry: Registry, commit: str) -> None:
        self.tracker, self.registry, self.commit = tracker, registry, commit

    @listener(tryfirst=True)
    def harness_cell_logreport(self, report: CellReport) -> None:
        """Log ``report`` (replacing its result with the refusal where refused)."""
        from harness.store.tracking import connection_lost

        log = self.tracker.log_cell
        where = (report.experiment_id, report.parent_run_id)
        with signals_deferred():  # a cell is logged whole or not at all
            try:
                log(*where, report.cell, report.result, self.registry.plugins, self.commit)
            except Exception as err:  # the store refused the results: a failed cell
                if connection_lost(err):  # not this cell's fault: stop the run, say why
                    raise
                report.result = _refused(report.cell, report.result, err)
                log(*where, report.cell, report.result, self.registry.plugins, self.commit)
