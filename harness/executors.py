"""Where cells run: forked worker processes, a dask cluster, or the current process.

Every executor has one method, ``run(cells, on_result)``, and the same guarantees:

- ``on_result(cell, result)`` is called once per cell that ran, in the driver, from one
  background *writer* thread, so a worker never waits for the driver's MLflow write
  before it starts its next cell; the driver stays the only writer, and a result is
  handed over whole. ``on_result`` returning ``True`` stops the run (``--fail-fast``).
- Cells sharing a data key (dataset, its params and seed) run back to back on one worker,
  so ``Dataset.load`` runs once per data key per worker (:class:`Router`).
- A cell's timeout counts from the moment the cell starts executing; a cell past it is
  killed and recorded as ``timeout``; a worker that dies (segfault, ``os._exit``, the OOM
  killer) gets its cell recorded as ``failed`` with the exit code or signal, and a fresh
  worker takes over. Every cell ends with exactly one result.
- Workers die with the driver: each closes the pipe ends it inherited and, on Linux, asks
  for ``SIGKILL`` when its parent dies (``prctl(PR_SET_PDEATHSIG)``).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection, wait
from typing import Any

from harness.cell import CellResult, execute_cell
from harness.registry import Registry
from harness.suite import Cell

__all__ = [
    "DaskExecutor",
    "InProcessExecutor",
    "LocalExecutor",
    "Router",
    "auto_jobs",
    "make_executor",
    "route",
]

OnResult = Callable[[Cell, CellResult], "bool | None"]


def auto_jobs() -> int:
    """``-j auto``: the number of CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def make_executor(
    registry: Registry,
    jobs: int,
    *,
    executor: str = "local",
    scheduler: str | None = None,
    pdb: bool = False,
) -> Any:
    """The executor for ``harness run``: ``jobs == 0`` (or ``pdb``) runs in this process,
    ``executor='dask'`` (or a ``scheduler`` address) on dask, else forked workers."""
    if executor == "dask" or scheduler:
        return DaskExecutor(registry, max(jobs, 1), scheduler=scheduler)
    if jobs == 0 or pdb:
        return InProcessExecutor(registry, pdb=pdb)
    return LocalExecutor(registry, jobs)


# -- the writer thread -----------------------------------------------------------------


class _Writer:
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
        return self._pending

    def put(self, cell: Cell, result: CellResult) -> None:
        self.check()
        with self._lock:
            self._pending += 1
        self._queue.put((cell, result))

    def check(self) -> None:
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
def _writer(on_result: OnResult) -> Any:
    writer = _Writer(on_result)
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


# -- forked workers --------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent_pid: int) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux only; else a
    no-op: the closed pipe still ends the worker when it is idle)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def _worker(conn: Connection, registry: Registry, threads: int) -> None:
    """Loop of a worker: receive a cell, say when it starts, send its result."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver handles Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the driver's handler
    _limit_threads(threads)
    while True:
        try:
            cell = conn.recv()
        except (EOFError, OSError):  # the driver closed the pipe or died
            return
        conn.send(("start", time.monotonic()))  # CLOCK_MONOTONIC: one clock per machine
        conn.send(("done", execute_cell(cell, registry)))


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


class _Child:
    """One forked worker process and the driver's end of its pipe.

    Forked with ``os.fork`` rather than ``multiprocessing.Process``, so that it also works
    inside daemonic processes (dask's workers). The child closes every pipe end it
    inherited (its own driver end and ``others``), so the only reader of a driver end is
    the driver, and dies with its parent.
    """

    def __init__(self, registry: Registry, threads: int, others: Iterable[Connection] = ()):
        parent_end, child_end = multiprocessing.Pipe()
        driver = os.getpid()
        for stream in (sys.stdout, sys.stderr):  # no buffered text printed twice
            with contextlib.suppress(Exception):
                stream.flush()
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                os.setpgid(0, 0)  # its own process group: kill() takes what its cells start
                _die_with_parent(driver)
                parent_end.close()
                for conn in others:
                    with contextlib.suppress(OSError):
                        conn.close()
                _worker(child_end, registry, threads)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        child_end.close()
        self.pid, self.conn = pid, parent_end
        self.sent: deque[Cell] = deque()  # cells sent, the first one running or next
        self.deadline = float("inf")
        self.started: float | None = None  # monotonic start of the running cell
        self.last_key: str | None = None
        self.exitcode: int | None = None

    def kill(self) -> int | None:
        """SIGKILL the worker and the processes its cell started (a subprocess, a loky or
        DataLoader pool, a shell's ``cmd &``: left alone they outlive the cell and hold the
        run's stdout open): its process group and its descendants. Reap it and return its
        exit code (negative: a signal)."""
        import psutil

        try:
            descendants = psutil.Process(self.pid).children(recursive=True)
        except psutil.Error:  # gone already
            descendants = []
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # the worker's group: orphans of `cmd &` too
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        for process in descendants:  # those that left the group but not the tree
            with contextlib.suppress(psutil.Error):
                process.kill()
        return self.reap()

    def reap(self, timeout: float | None = None) -> int | None:
        if self.exitcode is None:
            end = None if timeout is None else time.monotonic() + timeout
            while True:
                try:
                    pid, status = os.waitpid(self.pid, 0 if end is None else os.WNOHANG)
                except ChildProcessError:
                    return None
                if pid:
                    self.exitcode = os.waitstatus_to_exitcode(status)
                    break
                if time.monotonic() >= end:  # type: ignore[operator]
                    return None
                time.sleep(0.01)
        with contextlib.suppress(OSError):
            self.conn.close()
        return self.exitcode


def _timed_out(cell: Cell, started: float | None = None) -> CellResult:
    now = int(time.time() * 1000)
    ran = (cell.timeout or 0) if started is None else time.monotonic() - started
    return CellResult(
        cell.cell_hash,
        "timeout",
        reason=f"killed after the cell timeout of {cell.timeout:g} s",
        start_ms=now - int(1000 * ran),
        end_ms=now,
    )


def _died(cell: Cell, exitcode: int | None, where: str = "worker process") -> CellResult:
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


class LocalExecutor:
    """Run cells in ``n_jobs`` forked worker processes on this machine.

    Each worker holds its running cell and the next one (so it starts the next one the
    moment the last ends), reports each cell's start so the timeout counts from there,
    and is replaced after a timeout or a crash.

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
        self.ahead = 2  # cells held by one worker: the running one and the next

    def _spawn(self, slots: list[_Child]) -> _Child:
        return _Child(self.registry, self.threads, [s.conn for s in slots])

    def running(self) -> list[tuple[Cell, float]]:
        """The cells executing now, each with its seconds since it started (for progress
        lines; read from another thread, so a snapshot that may be a moment old)."""
        now = time.monotonic()
        out = []
        for slot in list(getattr(self, "_slots", [])):
            sent, started = list(slot.sent), slot.started
            if sent and started is not None and started <= now:
                out.append((sent[0], now - started))
        return out

    def run(self, cells: Iterable[Cell], on_result: OnResult) -> None:
        """Run every cell; call ``on_result(cell, result)`` in this process for each.

        On ``KeyboardInterrupt`` the workers are killed, the results already received are
        written, and the exception propagates.
        """
        router = Router(cells)
        slots: list[_Child] = []
        self._slots = slots  # read by running() (progress lines)
        writer = _Writer(on_result)
        try:
            for _ in range(min(self.n_jobs, len(router))):
                slots.append(self._spawn(slots))
            self._loop(router, slots, writer)
        finally:
            for slot in slots:  # first stop the work, then write what came back
                slot.kill()
            writer.close()

    def _loop(self, router: Router, slots: list[_Child], writer: _Writer) -> None:
        limit = 2 * self.n_jobs  # results waiting for the writer before we hold back
        while not writer.stopped:
            writer.check()
            if writer.backlog < limit:
                for slot in slots:
                    while len(slot.sent) < self.ahead and (
                        cell := router.take(slot.last_key, steal=not slot.sent)
                    ):
                        slot.sent.append(cell)
                        slot.last_key = cell.data_key
                        slot.conn.send(cell)
            busy = [s for s in slots if s.sent]
            if not busy:
                if not len(router):
                    return
                if writer.backlog < limit:  # every worker idle: any cell left will do
                    cell = router.take(None, force=True)
                    assert cell is not None
                    slots[0].sent.append(cell)
                    slots[0].last_key = cell.data_key
                    slots[0].conn.send(cell)
                else:
                    time.sleep(0.005)  # the writer is behind: let it catch up
                continue
            wait_s = min(s.deadline for s in busy) - time.monotonic()
            if writer.backlog >= limit:
                wait_s = min(wait_s, 0.005)
            ready = wait([s.conn for s in busy], timeout=max(0.0, min(wait_s, 1.0)))
            for i, slot in enumerate(slots):
                if slot.sent and not self._poll(slot, ready, router, writer):
                    slots[i] = self._spawn([s for s in slots if s is not slot])

    def _poll(self, slot: _Child, ready: list[Any], router: Router, writer: _Writer) -> bool:
        """Read what ``slot`` sent; False when it had to be killed or died."""
        if slot.conn in ready:
            try:
                while slot.conn.poll():
                    kind, value = slot.conn.recv()
                    if kind == "start":
                        slot.started = value
                        timeout = slot.sent[0].timeout
                        slot.deadline = value + timeout if timeout else float("inf")
                    else:
                        slot.deadline = float("inf")
                        writer.put(slot.sent.popleft(), value)
                        if not slot.sent:
                            break
            except (EOFError, OSError):
                cell = slot.sent.popleft()
                router.put_back(slot.sent)
                writer.put(cell, _died(cell, slot.reap(timeout=5)))
                return False
        if time.monotonic() >= slot.deadline:
            cell = slot.sent.popleft()
            router.put_back(slot.sent)
            slot.kill()
            writer.put(cell, _timed_out(cell, slot.started))
            return False
        return True


# -- in the current process ----------------------------------------------------------------------


class _CellTimeout(BaseException):
    """Raised by SIGALRM inside an in-process cell (a BaseException, so the cell's own
    ``except Exception`` does not record it as a failure)."""


class InProcessExecutor:
    """Run cells one after another in this process (``-j 0``, ``--in-process``), so a
    debugger sees the cell's frames; results are still written from the writer thread.

    Timeouts use ``SIGALRM`` (main thread only) and are best effort: C code that never
    returns to Python is not interrupted. With ``pdb=True`` a failing cell stops in
    ``pdb.post_mortem`` at the frame that raised, before it is recorded.
    """

    def __init__(self, registry: Registry, pdb: bool = False) -> None:
        self.registry = registry
        self.pdb = pdb

    def run(self, cells: Iterable[Cell], on_result: OnResult) -> None:
        """Same contract as :meth:`LocalExecutor.run`."""
        from harness import cell as cell_module

        hook = _post_mortem if self.pdb else None
        previous, cell_module.on_cell_error = cell_module.on_cell_error, hook
        try:
            with _writer(on_result) as writer:
                for cell in route(cells):
                    if writer.stopped:
                        break
                    writer.put(cell, self._one(cell))
        finally:
            cell_module.on_cell_error = previous

    def _one(self, cell: Cell) -> CellResult:
        alarm = cell.timeout and threading.current_thread() is threading.main_thread()
        if not alarm:
            return execute_cell(cell, self.registry)

        def expire(signum: int, frame: Any) -> None:
            raise _CellTimeout

        started = time.monotonic()
        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, cell.timeout)
        try:
            return execute_cell(cell, self.registry)
        except _CellTimeout:
            return _timed_out(cell, started)
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


# -- dask ----------------------------------------------------------------------------------------

_children: dict[int, _Child] = {}  # in a dask worker: one forked child per worker thread


def _run_group(cells: list[Cell], registry: Registry, threads: int | None) -> list[CellResult]:
    """Run the cells of one data key back to back in this dask worker (one dask task, so
    no other cell comes between them and the data is loaded once)."""
    return [_run_isolated(cell, registry, threads) for cell in cells]


def _run_isolated(cell: Cell, registry: Registry, threads: int | None) -> CellResult:
    """Run one cell in a forked child of this (dask worker) process.

    The timeout counts from here, when the task starts executing; a child past it is
    killed (``timeout``), one that dies gets its cell recorded as ``failed`` with the
    signal. The child stays for the next cell, so its data cache lives on.
    """
    if threads is None:  # an existing cluster: this worker's share of its machine
        from distributed import get_worker

        threads = max(1, (os.cpu_count() or 1) // get_worker().state.nthreads)
    key = threading.get_ident()
    child = _children.get(key)
    if child is None or child.exitcode is not None:
        child = _children[key] = _Child(registry, threads, [c.conn for c in _children.values()])
    started = time.monotonic()
    deadline = started + cell.timeout if cell.timeout else None
    try:
        child.conn.send(cell)
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not child.conn.poll(left):
                child.kill()
                return _timed_out(cell, started)
            kind, value = child.conn.recv()
            if kind == "start":
                _announce("start", cell)
                if cell.timeout:
                    deadline = value + cell.timeout
            elif kind == "done":
                return value
    except (EOFError, OSError, BrokenPipeError):
        return _died(cell, child.reap(timeout=5), "the cell's process on a dask worker")
    finally:
        _announce("end", cell)


CELL_TOPIC = "harness-cell"  # dask event topic: a cell started or ended on a worker


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
    dask's reason. The driver stays the only MLflow writer.

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

    def _on_event(self, event: tuple[float, Any]) -> None:
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
    def _client(self) -> Any:
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
        """Same contract as :meth:`LocalExecutor.run`."""
        dd = self._distributed
        threads = None if self.scheduler else max(1, (os.cpu_count() or 1) // self.n_jobs)
        router = Router(cells)
        self._cells = {c.cell_hash: c for group in router.groups.values() for c in group}
        self._started, self._ended = {}, set()
        with self._client() as client, _writer(on_result) as writer:
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
    def _results(future: Any, group: list[Cell]) -> list[CellResult]:
        try:
            return future.result()
        except Exception as err:  # KilledWorker, a lost scheduler, a cancelled future
            reason = f"the dask worker running the cell failed: {type(err).__name__}: {err}"
            results = [_died(cell, None) for cell in group]
            for result in results:
                result.reason = result.error = reason
            return results
