"""The contract every executor keeps, and the parts they share.

Every executor has ``run(cells, on_result)`` and ``running()``, with the same guarantees:

- ``on_result(cell, result)`` is called once per cell that ran, in the driver, from one
  background *writer* thread (:class:`ResultWriter`), so a worker never waits for the
  driver's store write before it starts its next cell; the driver stays the only writer,
  and a result is handed over whole. ``on_result`` returning ``True`` stops the run
  (``--fail-fast``).
- Cells sharing a data key (dataset, its params and seed) run back to back on one worker,
  so ``Dataset.load`` runs once per data key per worker (:class:`Router`).
- A cell's timeout counts from the moment the cell starts executing; a cell past it is
  killed, with every process it started, and recorded as ``timeout``; a worker that dies
  (segfault, ``os._exit``, the OOM killer) gets its cell recorded as ``failed`` with the
  exit code or signal, and a fresh worker takes over. Every cell ends with exactly one
  result, and that result is the cell's own (:func:`stray_message`).
"""

from __future__ import annotations

import contextlib
import queue
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from harness.runs.cell import CellResult
from harness.suites.identity import Cell

__all__ = [
    "Executor",
    "OnResult",
    "ResultWriter",
    "Router",
    "died",
    "result_writer",
    "route",
    "stray_message",
    "timed_out",
]

#: What an executor calls with each cell's result; ``True`` stops the run.
OnResult = Callable[[Cell, CellResult], "bool | None"]


class Executor(Protocol):
    """Where cells run (:mod:`harness.runs.executors`)."""

    def run(self, cells: Iterable[Cell], on_result: OnResult) -> None:
        """Run every cell; call ``on_result(cell, result)`` in this process for each.

        :raises KeyboardInterrupt: after stopping the work and writing the results already
            received.
        """

    def running(self) -> list[tuple[Cell, float]]:
        """The cells executing now, each with its seconds since it started (for progress
        lines; read from another thread, so a snapshot that may be a moment old)."""


# -- the writer thread -----------------------------------------------------------------


class ResultWriter:
    """Calls ``on_result`` in one background thread, in the order results arrive.

    ``put`` never blocks; ``backlog`` tells the executor how many results wait, so it can
    stop handing out cells while the writer is behind (memory and Ctrl-C stay bounded).
    An exception in ``on_result`` stops the writer and is raised by the next ``put`` or
    ``check`` in the driver's main thread. After ``on_result`` returned ``True`` the rest
    are dropped.
    """

    def __init__(self, on_result: OnResult) -> None:
        self.on_result = on_result
        self.stopped = False
        self.error: BaseException | None = None
        self._queue: queue.SimpleQueue[tuple[Cell, CellResult] | None] = queue.SimpleQueue()
        self._pending = 0
        self._abandon = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="harness-writer")
        self._thread.start()

    @property
    def backlog(self) -> int:
        """Results handed over and not written yet."""
        return self._pending

    def put(self, cell: Cell, result: CellResult) -> None:
        """Hand over one cell's result (raises what ``on_result`` raised before)."""
        self.check()
        with self._lock:
            self._pending += 1
        self._queue.put((cell, result))

    def check(self) -> None:
        """Raise the exception ``on_result`` raised, if any."""
        if self.error is not None:
            raise self.error

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None or self._abandon:
                return
            try:
                if not self.stopped and self.on_result(*item):
                    self.stopped = True
            except BaseException as err:  # handed to the main thread
                self.error, self.stopped = err, True
            finally:
                with self._lock:
                    self._pending -= 1

    def close(self) -> None:
        """Write every result already handed over, then stop; a second Ctrl-C while
        waiting stops after the cell being written (which is still written whole)."""
        self._queue.put(None)
        try:
            self._thread.join()
        except KeyboardInterrupt:
            self._abandon = True
            self._thread.join()
            raise
        self.check()


@contextlib.contextmanager
def result_writer(on_result: OnResult) -> Iterator[ResultWriter]:
    """A :class:`ResultWriter`, closed (every result written) when the block ends."""
    writer = ResultWriter(on_result)
    try:
        yield writer
    finally:
        writer.close()


# -- routing cells by their data -----------------------------------------------------------


class Router:
    """Hands out cells so that all cells of one data key run back to back on one worker.

    Groups keep the suite's order of first appearance and the order within a group. A
    free worker takes the next cell of the group it worked on last, else a group no worker
    has started, else (only when every group is taken, the worker is idle and the largest
    group left has two cells or more) the last cell of that group, which costs one extra
    load but keeps every worker busy.
    """

    def __init__(self, cells: Iterable[Cell]) -> None:
        self.groups: dict[str, deque[Cell]] = {}
        for cell in cells:
            self.groups.setdefault(cell.data_key, deque()).append(cell)
        self.started: set[str] = set()

    def __len__(self) -> int:
        return sum(len(g) for g in self.groups.values())

    def take(self, last_key: str | None, steal: bool = True, force: bool = False) -> Cell | None:
        """The next cell for a worker whose last cell had data key ``last_key``; with
        ``steal=False`` (a worker that is still busy) none from another worker's group;
        ``force`` (every worker idle) takes any cell left."""
        if last_key in self.groups:
            return self._pop(last_key)
        for key in self.groups:
            if key not in self.started:
                self.started.add(key)
                return self._pop(key)
        key = max(self.groups, key=lambda k: len(self.groups[k]), default=None)
        if key is None or not steal or (len(self.groups[key]) < 2 and not force):
            return None  # the one cell left of a group is its owner's next one
        cell = self.groups[key].pop()
        if not self.groups[key]:
            del self.groups[key]
        return cell

    def _pop(self, key: str) -> Cell:
        cell = self.groups[key].popleft()
        if not self.groups[key]:
            del self.groups[key]
        return cell

    def put_back(self, cells: Iterable[Cell]) -> None:
        """Return cells that were sent to a worker but never started (the worker was
        killed or died): their group is free for any worker again."""
        for cell in reversed(list(cells)):
            self.groups.setdefault(cell.data_key, deque()).appendleft(cell)
            self.started.discard(cell.data_key)


def route(cells: Iterable[Cell]) -> list[Cell]:
    """The cells in the order one worker runs them: grouped by data key."""
    router = Router(cells)
    out: list[Cell] = []
    last = None
    while (cell := router.take(last)) is not None:
        out.append(cell)
        last = cell.data_key
    return out


# -- results the executor writes for a cell that could not write its own ---------------------


def timed_out(cell: Cell, started: float | None = None) -> CellResult:
    """``timeout``: the cell, started at ``started`` (monotonic clock), was killed."""
    now = int(time.time() * 1000)
    ran = (cell.timeout or 0) if started is None else time.monotonic() - started
    return CellResult(
        cell.cell_hash,
        "timeout",
        reason=f"killed after the cell timeout of {cell.timeout:g} s",
        start_ms=now - int(1000 * ran),
        end_ms=now,
    )


def died(cell: Cell, exitcode: int | None, where: str = "worker process") -> CellResult:
    """``failed``: the process running the cell ended (``exitcode``, negative: a signal)."""
    now = int(time.time() * 1000)
    if exitcode is not None and exitcode < 0:
        with contextlib.suppress(ValueError):
            how = f"killed by {signal.Signals(-exitcode).name}"
    else:
        how = f"exit code {exitcode}"
    reason = f"{where} died ({how}) while running the cell; out of memory or a crash in C code?"
    return CellResult(
        cell.cell_hash, "failed", reason=reason, error=reason, start_ms=now, end_ms=now
    )


def stray_message(cell: Cell, what: str, about: str) -> CellResult:
    """``failed``: while ``cell`` ran, its worker's channel carried ``what`` (a message
    from another process, or about cell ``about``), which is dropped, never logged."""
    now = int(time.time() * 1000)
    whose = "this cell" if about == cell.cell_hash else f"cell {about[:12] or '?'}"
    reason = (
        f"the channel of the worker running this cell ({cell.cell_hash[:12]}) carried a"
        f" stray {what} about {whose}, not the worker's own message: a process the"
        " method forked wrote into it? It was dropped and the worker replaced."
    )
    return CellResult(
        cell.cell_hash, "failed", reason=reason, error=reason, start_ms=now, end_ms=now
    )
