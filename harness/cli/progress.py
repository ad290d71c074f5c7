"""``harness run`` while its cells run: the progress bar, or timed lines in a log file,
and what Ctrl-C keeps."""

from __future__ import annotations

import os
import shlex
import threading
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from harness.cli.common import console, duration, session
from harness.runs.eta import Eta

if TYPE_CHECKING:
    from harness.plugins.registry import Registry
    from harness.store.tracking import Tracker
    from harness.suites.loading import Suite

PROGRESS_EVERY_S = float(os.environ.get("HARNESS_PROGRESS_EVERY_S", "15"))


def run_with_progress(
    spec: Suite,
    registry: Registry,
    tracker: Tracker,
    runner: Any,
    settings: dict[str, Any],
    **how: Any,
) -> Any:
    """Run ``spec``'s cells with ``runner`` under a progress bar (timed lines in a log
    file); ``how``: ``force``, ``fail_fast`` and ``pdb`` (no bar). Returns the runner's
    outcome. Ctrl-C or SIGTERM: the :class:`KeyboardInterrupt` raised carries a
    ``harness_note`` with the cells kept and the command that resumes."""
    eta = Eta(settings["jobs"], getattr(runner, "running", None))
    with Progress(*_columns(eta), console=console, disable=how["pdb"]) as progress:
        shown = _Shown(progress, spec.name, settings)
        ticker = _ProgressLines(progress, runner, PROGRESS_EVERY_S, lambda: shown.problems, eta)
        if not console.is_terminal and not how["pdb"]:  # no live bar in a log file
            ticker.start()
        try:
            return _run(spec, registry, tracker, runner, settings, shown, [shown, eta], how)
        finally:
            ticker.stop()


def _columns(eta: Eta) -> tuple[ProgressColumn, ...]:
    return (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[red]{task.fields[problems]}"),
        TimeElapsedColumn(),
        _EtaColumn(eta),
    )


def _run(
    spec: Suite,
    registry: Registry,
    tracker: Tracker,
    runner: Any,
    settings: dict[str, Any],
    shown: _Shown,
    listeners: list[Any],
    how: dict[str, Any],
) -> Any:
    from harness.runs.runner import run_suite

    try:
        return run_suite(
            spec,
            registry,
            tracker,
            executor=runner,
            force=how.get("force", False),
            fail_fast=how["fail_fast"],
            settings=settings,
            listeners=listeners,
        )
    except KeyboardInterrupt as err:  # Ctrl-C, SIGTERM: main() says what is kept
        kept = f"{shown.kept():,} of {len(spec.cells):,} cells; " if shown.started else ""
        err.harness_note = f" ({kept}{_resume_command()})"  # type: ignore[attr-defined]
        raise


class PassProgress:
    """One progress bar and one ETA for runs in turn: the batches of a decide pass
    (:mod:`harness.cli.decide`). The bar counts the pass's cells: those run, those of the
    batch running and those later batches may still run (at most every claim continued to
    its ``max_units``: the total falls as claims are decided). The ETA is the measured cost
    of those cells (:class:`~harness.runs.eta.Eta`), at most the time left to ``deadline`` (a
    monotonic time: the pass's budget). In a log file, timed lines instead of the bar."""

    def __init__(
        self,
        name: str,
        runner: Any,
        settings: dict[str, Any],
        deadline: float | None = None,
        pdb: bool = False,
    ) -> None:
        self.runner, self.pdb = runner, pdb
        self.eta = _PassEta(settings["jobs"], getattr(runner, "running", None), deadline)
        self.progress = Progress(*_columns(self.eta), console=console, disable=pdb)
        self.shown = _Shown(self.progress, name, settings, quiet=True, title="decide")
        self.ticker = _ProgressLines(
            self.progress, runner, PROGRESS_EVERY_S, lambda: self.shown.problems, self.eta
        )
        self._started = False

    def __enter__(self) -> PassProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._started:  # the pass is over: the cells it ran are all it runs
            task = self.progress.tasks[0]
            self.progress.update(self.shown.bar, total=task.completed)
            self.eta.later = []
            self.eta.harness_run_start([])
        self.ticker.stop()
        if self._started:
            self.progress.stop()

    def print(self, line: str) -> None:
        """A line above the bar (plain text: no markup)."""
        console.print(line, soft_wrap=True, markup=False)

    def run(
        self,
        spec: Suite,
        registry: Registry,
        tracker: Tracker,
        runner: Any,
        settings: dict[str, Any],
        later: list[Any],
        **how: Any,
    ) -> Any:
        """Run ``spec``'s cells (one batch) under the pass's bar; ``later``: the cells later
        batches may run. ``how``: ``fail_fast``, ``batch`` (its number, for its line)."""
        if not self._started:  # the bar appears with the first batch
            self._started = True
            self.progress.start()
            if not console.is_terminal and not self.pdb:
                self.ticker.start()
        self.shown.later, self.shown.batch = len(later), how.get("batch", 0)
        self.eta.later = list(later)
        return _run(spec, registry, tracker, runner, settings, self.shown,
                    [self.shown, self.eta], how)  # fmt: skip


class _PassEta(Eta):
    """The pass's remaining time: the cells of the batch running and of ``later``, at most
    the time left to ``deadline``."""

    def __init__(self, workers: int, running: Any, deadline: float | None) -> None:
        super().__init__(workers, running)
        self.deadline = deadline
        self.later: list[Any] = []

    def harness_run_start(self, cells: Any) -> None:
        super().harness_run_start([*cells, *self.later])

    def seconds(self) -> float | None:
        import time

        estimate = super().seconds()
        if self.deadline is None:
            return estimate
        left = max(0.0, self.deadline - time.monotonic())
        return left if estimate is None else min(estimate, left)


def _resume_command() -> str:
    """``resume with: harness run ...``: this command as typed, less ``--force`` (which
    would run the kept cells again)."""
    args = [a for a in session().argv if a != "--force"]
    return f"resume with: {shlex.join(['harness', *args])}"


def problems_text(ended: Counter) -> str:
    """'2 failed' or '2 failed, 1 timed out': the progress line's tally of cells that did
    not end ok, with timeouts apart as in the closing tally."""
    text = f"{ended['failed']} failed"
    return text + (f", {ended['timeout']} timed out" if ended["timeout"] else "")


class _Shown:
    """The run's listener (:mod:`harness.runs.events`) that shows it: the opening line, the
    notices, one step of the bar per cell."""

    def __init__(
        self,
        progress: Progress,
        name: str,
        settings: dict[str, Any],
        quiet: bool = False,
        title: str = "cells",
    ) -> None:
        self.progress, self.name, self.settings = progress, name, settings
        self.quiet = quiet  # runs in turn under one bar (a decide pass): one line per batch
        self.ended: Counter = Counter()
        self.problems = problems_text(self.ended)
        self.bar = progress.add_task(title, total=None, problems=self.problems)
        self.before: int | None = None  # cells finished before this run, once known
        self.at_start = 0  # cells that ended under the bar before this run
        self.later = 0  # cells later runs under this bar may run
        self.batch = 0

    @property
    def started(self) -> bool:
        return self.before is not None

    def kept(self) -> int:
        return (self.before or 0) + sum(self.ended.values()) - self.at_start

    def harness_run_notice(self, line: str) -> None:
        console.print(escape(line))

    def harness_run_start(self, total: int, todo: int) -> None:
        self.before = total - todo
        self.at_start = sum(self.ended.values())
        if self.quiet:
            done = self.progress.tasks[0].completed
            self.progress.update(self.bar, total=done + todo + self.later)
            kept = f", {total - todo} already finished" if total > todo else ""
            console.print(f"  decide: batch {self.batch}: {todo} cell(s) to run{kept}",
                          markup=False)  # fmt: skip
            return
        scheduler, jobs = self.settings["scheduler"], self.settings["jobs"]
        where = (
            f"on the dask cluster at {scheduler}."
            if scheduler
            else "in this process."
            if jobs == 0
            else f"with {jobs} worker(s)."
        )
        console.print(
            f"[bold]{escape(self.name)}[/]: {total} cells, {total - todo} already"
            f" finished, {todo} to run {where}"
        )
        self.progress.update(self.bar, total=todo)

    def harness_cell_logreport(self, report: Any) -> None:
        self.ended[report.result.status] += 1
        self.problems = problems_text(self.ended)
        self.progress.update(self.bar, advance=1, problems=self.problems)


def eta_text(eta: Eta) -> str:
    """The one ETA the bar and the lines show: ``12.3 s``, ``8 min 42 s``, ``unknown``."""
    seconds = eta.seconds()
    return "unknown" if seconds is None else duration(seconds)


class _EtaColumn(ProgressColumn):
    """The bar's ``eta ...``, the same text as the progress lines'."""

    def __init__(self, eta: Eta) -> None:
        super().__init__()
        self.eta = eta

    def render(self, task: Task) -> Text:
        return Text(f"eta {eta_text(self.eta)}", style="progress.remaining")


class _ProgressLines:
    """In a log file (no live bar): a line every ``every_s`` seconds with the cells done,
    failed, elapsed time, an ETA and the cells running now (and for how long), whether or
    not a cell ended in between; and one line when the run ends."""

    def __init__(
        self,
        progress: Progress,
        runner: Any,
        every_s: float,
        problems: Callable[[], str],
        eta: Eta,
    ) -> None:
        self.progress, self.runner, self.every_s = progress, runner, every_s
        self.problems, self.eta = problems, eta
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
        text = (
            f"cells {done:.0f}/{total:.0f}, {self.problems()}, {duration(elapsed)} elapsed,"
            f" eta {eta_text(self.eta)}"
        )
        running = getattr(self.runner, "running", None)
        cells = running() if callable(running) else []
        if cells and done < total:
            shown = "; ".join(
                f"{c.dataset}/{c.method} s{c.seed} ({duration(sec)})" for c, sec in cells[:4]
            )
            more = f" and {len(cells) - 4} more" if len(cells) > 4 else ""
            text += f"; running: {shown}{more}"
        console.print(escape(text), soft_wrap=True)
