"""Executes cells: seeding, per-cell timeouts, failure isolation and worker processes.

:func:`execute_cell` runs one cell (load, run, every metric) and returns a picklable
:class:`CellResult`; it never raises for a failing cell. :class:`LocalExecutor` runs cells
in ``n_jobs`` worker processes (forked, so the registry travels with them), kills a worker
whose cell passes its timeout and starts a fresh one, and hands each result to a callback
in the driver process, which is the only MLflow writer.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import signal
import sys
import threading
import time
import traceback
import warnings
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np

from harness.components import Curve, Skip, validate_params
from harness.registry import Registry
from harness.suite import Cell

__all__ = [
    "CellResult",
    "DaskExecutor",
    "LocalExecutor",
    "SuiteOutcome",
    "execute_cell",
    "run_suite",
    "seed_everything",
]


@dataclass
class CellResult:
    """What one cell produced, sent from a worker to the driver.

    Attributes
    ----------
    cell_hash : str
    status : {"ok", "failed", "timeout", "skipped"}
    metrics : dict[str, float]
        Scalars by logged name (``<metric>.<key>`` for dict metrics).
    curves : dict[str, Curve]
    skipped_metrics : dict[str, str]
        Metric name -> the reason it was skipped.
    reason : str
        Why the cell was skipped, failed or timed out ("" when ok).
    error : str
        The full traceback of a failed cell ("" otherwise).
    described : dict[str, str]
        ``Dataset.describe(data)``, logged as ``dataset.<key>`` params.
    warnings : list of str
        Distinct warnings the cell raised, with counts (logged as ``warnings.txt``).
    seconds : dict[str, float]
        Wall time of ``load``, ``run`` and the metrics, in seconds.
    start_ms, end_ms : int
        Wall-clock start and end, milliseconds since the epoch.
    """

    cell_hash: str
    status: str
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, Curve] = field(default_factory=dict)
    skipped_metrics: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    error: str = ""
    described: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    start_ms: int = 0
    end_ms: int = 0


def seed_everything(seed: int) -> None:
    """Seed numpy's global generator, ``random`` and torch (when it is imported)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


class _DataCache:
    """The last loaded data of this process: consecutive cells of one dataset reuse it."""

    key: str | None = None
    data: Any = None
    described: dict[str, str] = {}  # noqa: RUF012 - replaced, never mutated


def execute_cell(cell: Cell, registry: Registry) -> CellResult:
    """Run one cell: load (or reuse) the data, run the method, compute every metric.

    A ``Skip`` from load or run gives status ``skipped``; any other exception gives
    ``failed`` with its traceback; a ``Skip`` from a metric leaves that metric out.
    """
    result = CellResult(cell.cell_hash, "ok", start_ms=int(time.time() * 1000))
    with warnings.catch_warnings(record=True) as caught:  # kept with the cell, not printed
        warnings.simplefilter("always")
        _execute(cell, registry, result)
    counts = Counter(
        f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in caught
    )
    result.warnings = [f"{n} x {text}" for text, n in counts.items()]
    result.end_ms = int(time.time() * 1000)
    return result


def _execute(cell: Cell, registry: Registry, result: CellResult) -> None:
    try:
        data = _load(cell, registry, result)
        method = registry.get("method", cell.task, cell.method).cls
        params = validate_params(method, cell.method_params)
        seed_everything(cell.method_seed)
        tic = time.perf_counter()
        output = method(params).run(data, params, cell.method_seed)
        result.seconds["run"] = time.perf_counter() - tic
        tic = time.perf_counter()
        for name, metric_params in cell.metrics:
            metric = registry.get("metric", cell.task, name).cls
            try:
                value = metric(validate_params(metric, metric_params)).compute(data, output)
            except Skip as reason:
                result.skipped_metrics[name] = str(reason)
                continue
            _store(result, name, value)
        result.seconds["metrics"] = time.perf_counter() - tic
    except Skip as reason:
        result.status, result.reason = "skipped", str(reason) or "skipped"
    except Exception as err:  # a failing cell is recorded and the suite goes on
        result.status, result.reason = "failed", f"{type(err).__name__}: {err}"
        result.error = traceback.format_exc()


def _load(cell: Cell, registry: Registry, result: CellResult) -> Any:
    if _DataCache.key != cell.data_key:
        dataset = registry.get("dataset", cell.task, cell.dataset).cls
        params = validate_params(dataset, cell.dataset_params)
        _DataCache.key = None  # stays invalid if load raises
        seed_everything(cell.dataset_seed)
        tic = time.perf_counter()
        data = dataset(params).load(params, cell.dataset_seed)
        result.seconds["load"] = time.perf_counter() - tic
        described = {k: str(v) for k, v in dataset(params).describe(data).items()}
        _DataCache.key, _DataCache.data, _DataCache.described = cell.data_key, data, described
    result.described = _DataCache.described
    return _DataCache.data


def _store(result: CellResult, name: str, value: Any) -> None:
    if isinstance(value, Curve):
        result.curves[name] = value
        result.metrics[name] = value.final
    elif isinstance(value, dict):
        result.metrics |= {f"{name}.{k}": float(v) for k, v in value.items()}
    else:
        result.metrics[name] = float(value)


# -- worker processes ------------------------------------------------------------------


def _worker(conn: Connection, registry: Registry, threads: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver handles Ctrl-C
    _limit_threads(threads)
    while True:
        try:
            cell = conn.recv()
        except EOFError:  # the driver closed the pipe
            return
        conn.send(execute_cell(cell, registry))


def _limit_threads(threads: int) -> None:
    """Keep BLAS and torch to this worker's share of the cores (no oversubscription)."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    except ImportError:  # threadpoolctl is optional: without it BLAS keeps its default
        pass
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)


@dataclass
class _Slot:
    process: multiprocessing.Process
    conn: Connection
    cell: Cell | None = None
    deadline: float = float("inf")


class LocalExecutor:
    """Run cells in ``n_jobs`` forked worker processes on this machine.

    Parameters
    ----------
    registry : Registry
        Inherited by the workers through ``fork``.
    n_jobs : int, default=1
        Worker processes; each gets ``cpu_count // n_jobs`` BLAS/torch threads.
    """

    def __init__(self, registry: Registry, n_jobs: int = 1) -> None:
        self.registry = registry
        self.n_jobs = max(1, n_jobs)
        self.threads = max(1, (os.cpu_count() or 1) // self.n_jobs)
        self._context = multiprocessing.get_context("fork")

    def _spawn(self) -> _Slot:
        parent, child = self._context.Pipe()
        process = self._context.Process(
            target=_worker, args=(child, self.registry, self.threads), daemon=True
        )
        process.start()
        child.close()
        return _Slot(process, parent)

    def run(
        self,
        cells: Iterable[Cell],
        on_result: Callable[[Cell, CellResult], bool | None],
    ) -> None:
        """Run every cell and call ``on_result(cell, result)`` in this process as each ends.

        ``on_result`` returning ``True`` stops the run (``--fail-fast``). On
        ``KeyboardInterrupt`` the workers are killed and the exception propagates; every
        result already handed to ``on_result`` is kept.
        """
        queue = deque(cells)
        slots = [self._spawn() for _ in range(min(self.n_jobs, len(queue)))]
        stop = False
        try:
            while slots and (queue or any(s.cell for s in slots)) and not stop:
                for slot in slots:
                    if slot.cell is None and queue:
                        slot.cell = queue.popleft()
                        timeout = slot.cell.timeout
                        slot.deadline = time.monotonic() + timeout if timeout else float("inf")
                        slot.conn.send(slot.cell)
                busy = [s for s in slots if s.cell is not None]
                wait_s = min(s.deadline for s in busy) - time.monotonic()
                ready = wait([s.conn for s in busy], timeout=max(0.0, min(wait_s, 3600.0)))
                for i, slot in enumerate(slots):
                    if slot.cell is None:
                        continue
                    result = self._collect(slot, ready)
                    if result is None:
                        continue
                    cell, slot.cell = slot.cell, None
                    if result.status in ("timeout", "failed") and not slot.process.is_alive():
                        slots[i] = self._spawn()
                    stop = bool(on_result(cell, result)) or stop
        finally:
            for slot in slots:
                slot.process.kill()
                slot.process.join()

    def _collect(self, slot: _Slot, ready: list[Any]) -> CellResult | None:
        cell = slot.cell
        assert cell is not None
        if slot.conn in ready:
            try:
                return slot.conn.recv()
            except (EOFError, OSError):
                slot.process.join(1)
                return _died(cell, slot.process.exitcode)
        if time.monotonic() >= slot.deadline:
            slot.process.kill()
            slot.process.join()
            return _timed_out(cell)
        return None


class DaskExecutor:
    """Run cells on a dask ``LocalCluster`` of ``n_jobs`` single-threaded worker processes.

    Results come back to the driver, which stays the only MLflow writer. A cell past its
    timeout is recorded as ``timeout`` and the worker running it is restarted.

    Parameters
    ----------
    registry : Registry
        Pickled to the workers (component classes travel by reference).
    n_jobs : int, default=1

    Raises
    ------
    harness.errors.SuiteError
        If ``dask[distributed]`` is not installed (with the command that installs it).
    """

    def __init__(self, registry: Registry, n_jobs: int = 1) -> None:
        try:
            import distributed
        except ImportError as err:
            from harness.errors import SuiteError

            raise SuiteError(
                "--executor dask needs dask's distributed scheduler: "
                "pip install 'dask[distributed]'"
            ) from err
        self._distributed = distributed
        self.registry = registry
        self.n_jobs = max(1, n_jobs)

    def run(
        self, cells: Iterable[Cell], on_result: Callable[[Cell, CellResult], bool | None]
    ) -> None:
        """Same contract as :meth:`LocalExecutor.run`."""
        dd = self._distributed
        with (
            dd.LocalCluster(
                n_workers=self.n_jobs, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            dd.Client(cluster) as client,
        ):
            registry = client.scatter(self.registry, broadcast=True)
            pending = {}
            for cell in cells:
                future = client.submit(execute_cell, cell, registry, pure=False)
                pending[future] = cell
            started: dict[Any, float] = {}
            while pending:
                time.sleep(0.05)  # poll: dask's wait() raises on timeout instead of returning
                done = {f for f in pending if f.done()}
                now = time.monotonic()
                processing = {k for keys in client.processing().values() for k in keys}
                for future, cell in list(pending.items()):
                    if future in done:
                        result = future.result()
                    elif future.key in processing and cell.timeout:
                        started.setdefault(future.key, now)
                        if now - started[future.key] < cell.timeout:
                            continue
                        result = self._kill(client, future, cell)
                    else:
                        continue
                    del pending[future]
                    if on_result(cell, result):
                        client.cancel(list(pending))
                        return

    def _kill(self, client: Any, future: Any, cell: Cell) -> CellResult:
        workers = [w for w, keys in client.processing().items() if future.key in keys]
        client.cancel(future)
        if workers:
            client.restart_workers(workers)
        return _timed_out(cell)


def _timed_out(cell: Cell) -> CellResult:
    now = int(time.time() * 1000)
    return CellResult(
        cell.cell_hash,
        "timeout",
        reason=f"killed after the cell timeout of {cell.timeout:g} s",
        start_ms=now - int(1000 * (cell.timeout or 0)),
        end_ms=now,
    )


def _died(cell: Cell, exitcode: int | None) -> CellResult:
    now = int(time.time() * 1000)
    reason = f"worker process died (exit code {exitcode}); out of memory or a crash in C code?"
    return CellResult(
        cell.cell_hash, "failed", reason=reason, error=reason, start_ms=now, end_ms=now
    )


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C until the block ends, then raise it (main thread only; else a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


@dataclass
class SuiteOutcome:
    """What :func:`run_suite` did: the experiment and parent run ids, the cells it ran and
    the failed or timed-out ones."""

    experiment_id: str
    parent_run_id: str
    ran: int = 0
    problems: list[tuple[Cell, CellResult]] = field(default_factory=list)


def run_suite(
    suite: Any,
    registry: Registry,
    tracker: Any,
    *,
    executor: Any = None,
    force: bool = False,
    fail_fast: bool = False,
    settings: dict[str, Any] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_cell: Callable[[Cell, CellResult], None] | None = None,
) -> SuiteOutcome:
    """Run a suite's unfinished cells and log each to MLflow as it ends.

    :param suite: a :class:`harness.suite.Suite`.
    :param tracker: a :class:`harness.tracking.Tracker` (the only writer).
    :param executor: defaults to ``LocalExecutor(registry, 1)``.
    :param force: run cells that already have a FINISHED run too.
    :param on_start: called with (cells in the suite, cells to run) before running.
    :param on_cell: called after each cell is logged (progress bars).
    :raises KeyboardInterrupt: after marking the parent run KILLED; logged cells are kept.
    """
    from harness.tracking import git_commit

    executor = executor or LocalExecutor(registry, 1)
    cells = suite.cells
    experiment = tracker.experiment_id(suite.name, create=True)
    done = set() if force else tracker.finished_hashes(experiment)
    todo = [c for c in cells if c.cell_hash not in done]
    commit = git_commit()
    parent = tracker.start_suite(experiment, suite, dict(settings or {}, force=force), commit)
    outcome = SuiteOutcome(experiment, parent)
    if on_start:
        on_start(len(cells), len(todo))

    def handle(cell: Cell, result: CellResult) -> bool:
        with _sigint_deferred():  # a cell is logged whole or not at all
            tracker.log_cell(experiment, parent, cell, result, registry.plugins, commit)
        outcome.ran += 1
        if result.status in ("failed", "timeout"):
            outcome.problems.append((cell, result))
        if on_cell:
            on_cell(cell, result)
        return fail_fast and bool(outcome.problems)

    try:
        executor.run(todo, handle)
    except KeyboardInterrupt:
        tracker.end_suite(parent, "KILLED")
        raise
    tracker.end_suite(parent, "FAILED" if outcome.problems else "FINISHED")
    return outcome
