"""Cells on a dask.distributed cluster (``harness run --executor dask``, ``--scheduler``),
each in a forked child of a dask worker (:class:`~harness.runs.executors.worker.Worker`)."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from harness.plugins.registry import Registry
from harness.runs.cell import CellResult
from harness.runs.executors.base import (
    OnResult,
    Router,
    died,
    result_writer,
    stray_message,
    timed_out,
)
from harness.runs.executors.worker import Message, Worker
from harness.suites.identity import Cell
from harness.threads import threads_per_worker

if TYPE_CHECKING:
    from distributed import Client, Future

__all__ = ["CELL_TOPIC", "DaskExecutor"]

CELL_TOPIC = "harness-cell"  # dask event topic: a cell started or ended on a worker

_children: dict[int, Worker] = {}  # in a dask worker: one forked child per worker thread


def _run_group(cells: list[Cell], registry: Registry, threads: int | None) -> list[CellResult]:
    """Run the cells of one data key back to back in this dask worker (one dask task, so
    no other cell comes between them and the data is loaded once)."""
    return [_run_isolated(cell, registry, threads) for cell in cells]


def _run_isolated(cell: Cell, registry: Registry, threads: int | None) -> CellResult:
    """Run one cell in a forked child of this (dask worker) process.

    The timeout counts from here, when the task starts executing; a child past it is
    killed (``timeout``), one that dies gets its cell recorded as ``failed`` with the
    signal, one that sends a message of another cell is killed and the cell failed. The
    child stays for the next cell, so its data cache lives on.
    """
    if threads is None:  # an existing cluster: this worker's share of its machine
        from distributed import get_worker

        threads = max(1, (os.cpu_count() or 1) // get_worker().state.nthreads)
    key = threading.get_ident()
    child = _children.get(key)
    if child is None or child.exitcode is not None:
        child = _children[key] = Worker(registry, threads, [c.conn for c in _children.values()])
    started = time.monotonic()
    deadline = started + cell.timeout if cell.timeout else None
    try:
        child.conn.send(cell)
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not child.conn.poll(left):
                child.kill()
                return timed_out(cell, started)
            message = child.conn.recv()
            if not isinstance(message, Message) or not message.is_from(cell, child.pid):
                child.kill()
                return stray_message(cell, *Message.describe(message))
            if message.kind == "start":
                _announce("start", cell)
                if cell.timeout:
                    deadline = float(message.value) + cell.timeout  # type: ignore[arg-type]
            elif isinstance(message.value, CellResult):
                return message.value
    except (EOFError, OSError, BrokenPipeError):
        return died(cell, child.reap(timeout=5), "the cell's process on a dask worker")
    finally:
        _announce("end", cell)


def _announce(kind: str, cell: Cell) -> None:
    """Tell the driver (subscribed to :data:`CELL_TOPIC`) that ``cell`` started or ended
    here, for its progress lines; nothing outside a dask worker."""
    try:
        from distributed import get_worker

        get_worker().log_event(CELL_TOPIC, {"kind": kind, "cell": cell.cell_hash})
    except (ImportError, ValueError):  # not in a dask worker (a test calling directly)
        pass


class DaskExecutor:
    """Run cells on a dask.distributed cluster: an existing one at ``scheduler`` (e.g.
    ``tcp://host:8786``, with the plugins installed on its workers) or a ``LocalCluster``
    of ``n_jobs`` single-threaded worker processes.

    Each cell runs in a forked child of a dask worker (:func:`_run_isolated`), so its
    timeout counts from its start and a crash takes down only that child. The cells of one
    data key form one dask task (:func:`_run_group`), so they run back to back on one
    worker. A dask worker that dies itself gets its cells recorded as ``failed`` with
    dask's reason. The driver stays the only store writer.

    Parameters
    ----------
    registry : Registry
        Pickled to the workers (component classes travel by reference).
    n_jobs : int, default=1
        Worker processes of the LocalCluster (unused with ``scheduler``).
    scheduler : str, optional
        Address of a running ``dask scheduler``.

    Raises
    ------
    harness.errors.SuiteError
        If ``dask[distributed]`` is not installed (with the command that installs it).
    """

    def __init__(self, registry: Registry, n_jobs: int = 1, scheduler: str | None = None):
        try:
            import distributed
        except ImportError as err:
            from harness.errors import SuiteError, missing_dependency

            raise SuiteError(
                missing_dependency(
                    "--executor dask", "dask's distributed scheduler", "'dask[distributed]'"
                )
            ) from err
        self._distributed = distributed
        self.registry = registry
        self.n_jobs = max(1, n_jobs)
        self.scheduler = scheduler
        self._cells: dict[str, Cell] = {}
        self._started: dict[str, float] = {}  # cell hash -> driver's monotonic clock at start
        self._ended: set[str] = set()  # a late "start" event must not revive these

    def running(self) -> list[tuple[Cell, float]]:
        """The cells executing now on the cluster, each with its seconds since its start
        was heard (the workers' ``harness-cell`` events; for progress lines)."""
        now = time.monotonic()
        started = dict(self._started)
        return [(self._cells[h], now - t) for h, t in started.items() if h in self._cells]

    def _on_event(self, event: tuple[float, object]) -> None:
        msg = event[1]
        if not isinstance(msg, dict) or msg.get("cell") not in self._cells:
            return
        if msg.get("kind") == "start" and msg["cell"] not in self._ended:
            self._started[msg["cell"]] = time.monotonic()
        else:
            self._cell_ended(msg["cell"])

    def _cell_ended(self, cell_hash: str) -> None:
        self._ended.add(cell_hash)
        self._started.pop(cell_hash, None)

    @contextlib.contextmanager
    def _client(self) -> Iterator[Client]:
        dd = self._distributed
        if self.scheduler:
            try:
                client = dd.Client(self.scheduler, timeout=15)
            except OSError as err:
                from harness.errors import SuiteError

                raise SuiteError(
                    f"No dask scheduler answers at --scheduler {self.scheduler}: {err}"
                ) from err
            with client:
                yield client
            return
        with (
            dd.LocalCluster(
                n_workers=self.n_jobs,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            ) as cluster,
            dd.Client(cluster) as client,
        ):
            yield client

    def run(self, cells: Iterable[Cell], on_result: OnResult) -> None:
        """Same contract as :meth:`harness.runs.executors.local.LocalExecutor.run`."""
        dd = self._distributed
        threads = None if self.scheduler else threads_per_worker(self.n_jobs)
        router = Router(cells)
        self._cells = {c.cell_hash: c for group in router.groups.values() for c in group}
        self._started, self._ended = {}, set()
        with self._client() as client, result_writer(on_result) as writer:
            client.subscribe_topic(CELL_TOPIC, self._on_event)
            # the registry travels inside each task (about 9 kB), not scattered: scattered
            # data dies with the workers holding it, and every later task that needed it was
            # cancelled ("already forgotten"), failing healthy cells after one worker crash
            futures = {
                client.submit(_run_group, group, self.registry, threads, pure=False): group
                for group in (list(g) for g in router.groups.values())
            }
            try:
                for future in dd.as_completed(list(futures)):
                    group = futures.pop(future)
                    for cell, result in zip(group, self._results(future, group), strict=True):
                        self._cell_ended(cell.cell_hash)
                        writer.put(cell, result)
                    if writer.stopped:
                        break
            finally:
                client.cancel(list(futures))
                client.unsubscribe_topic(CELL_TOPIC)
                self._started = {}
            writer.check()

    @staticmethod
    def _results(future: Future, group: list[Cell]) -> list[CellResult]:
        try:
            return future.result()
        except Exception as err:  # KilledWorker, a lost scheduler, a cancelled future
            reason = f"the dask worker running the cell failed: {type(err).__name__}: {err}"
            results = [died(cell, None) for cell in group]
            for result in results:
                result.reason = result.error = reason
            return results
