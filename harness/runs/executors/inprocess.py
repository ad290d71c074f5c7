"""Cells one after another in this process (``harness run -j 0``, ``--in-process``,
``--pdb``), so a debugger sees the cell's frames."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterable
from types import FrameType

from harness.plugins.registry import Registry
from harness.runs import cell as cell_module
from harness.runs.cell import CellResult, execute_cell
from harness.runs.executors.base import OnResult, result_writer, route, timed_out
from harness.runs.executors.worker import descendants, kill_descendants, reap_orphans
from harness.suites.identity import Cell

__all__ = ["InProcessExecutor"]


class _CellTimeout(BaseException):
    """Raised by SIGALRM inside an in-process cell (a BaseException, so the cell's own
    ``except Exception`` does not record it as a failure)."""


class InProcessExecutor:
    """Run cells one after another in this process (``-j 0``, ``--in-process``), so a
    debugger sees the cell's frames; results are still written from the writer thread.

    Timeouts use ``SIGALRM`` (main thread only) and are best effort: C code that never
    returns to Python is not interrupted. The processes a cell starts (daemons included:
    this process is their subreaper while cells run) are killed when it ends. With
    ``pdb=True`` a failing cell stops in ``pdb.post_mortem`` at the frame
    that raised, before it is recorded.
    """

    def __init__(self, registry: Registry, pdb: bool = False) -> None:
        self.registry = registry
        self.pdb = pdb
        self._current: tuple[Cell, float] | None = None

    def running(self) -> list[tuple[Cell, float]]:
        """The cell executing now, with its seconds since it started (progress lines)."""
        current = self._current
        return [] if current is None else [(current[0], time.monotonic() - current[1])]

    def run(self, cells: Iterable[Cell], on_result: OnResult) -> None:
        """Same contract as :meth:`harness.runs.executors.local.LocalExecutor.run`."""
        hook = _post_mortem if self.pdb else None
        previous, cell_module.on_cell_error = cell_module.on_cell_error, hook
        reap_orphans()
        try:
            with result_writer(on_result) as writer:
                for cell in route(cells):
                    if writer.stopped:
                        break
                    self._current = (cell, time.monotonic())
                    writer.put(cell, self._one(cell))
                    self._current = None
        finally:
            self._current = None
            cell_module.on_cell_error = previous
            reap_orphans(False)

    def _one(self, cell: Cell) -> CellResult:
        before = set(descendants(os.getpid()))  # this process's own, kept
        try:
            return self._timed(cell)
        finally:
            kill_descendants(keep=before)

    def _timed(self, cell: Cell) -> CellResult:
        alarm = cell.timeout and threading.current_thread() is threading.main_thread()
        if not alarm:
            return execute_cell(cell, self.registry)

        def expire(signum: int, frame: FrameType | None) -> None:
            raise _CellTimeout

        started = time.monotonic()
        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, cell.timeout)
        try:
            return execute_cell(cell, self.registry)
        except _CellTimeout:
            return timed_out(cell, started)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def _post_mortem(err: BaseException) -> None:
    """Stop the cell's timer and open pdb at the frame that raised ``err``."""
    import pdb

    if threading.current_thread() is threading.main_thread():
        signal.setitimer(signal.ITIMER_REAL, 0)
    print(f"\n{type(err).__name__}: {err}\n(pdb: the frame that raised; 'c' records the cell)")
    pdb.post_mortem(err.__traceback__)
