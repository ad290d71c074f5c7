"""A forked worker process and its channel to the driver (used by the local and dask
executors).

The channel carries the cell to the worker, and back ``(kind, cell_hash, value)``: a
``"start"`` message with the worker's monotonic clock when the cell starts executing and a
``"done"`` message with its :class:`~harness.runs.cell.CellResult`. Every message names its cell,
so the driver can reject one that is not the running cell's (:class:`Message`).

What a cell starts stays inside it:

- a process the method forks cannot write into the channel: the worker closes its end in
  every child forked from it (``os.register_at_fork``), and a forked child that returns
  into the harness's code instead of calling ``os._exit`` ends there;
- the worker is a *subreaper* (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): a daemon a cell
  starts by forking twice is re-parented to the worker, not to init, so the worker kills
  every process left under it when the cell ends (:func:`kill_descendants`), and the driver
  kills the worker's whole tree at a timeout (:meth:`Worker.kill`);
- workers die with the driver: each closes the pipe ends it inherited and, on Linux, asks
  for ``SIGKILL`` when its parent dies (``prctl(PR_SET_PDEATHSIG)``).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Collection, Iterable
from multiprocessing.connection import Connection
from typing import NamedTuple

from harness.plugins.registry import Registry
from harness.runs.cell import CellResult, execute_cell, forget_data
from harness.suites.identity import Cell
from harness.threads import fork, limit_process_threads

__all__ = ["Message", "Worker", "descendants", "kill_descendants", "reap_orphans"]

PR_SET_PDEATHSIG = 1  # linux/prctl.h
PR_SET_CHILD_SUBREAPER = 36


class Message(NamedTuple):
    """What a worker sends the driver: ``kind`` ("start" or "done"), the hash of the cell
    it is about, the process that sent it, and the value (the monotonic start time, or
    the cell's result)."""

    kind: str
    cell_hash: str
    pid: int
    value: float | CellResult

    def is_from(self, cell: Cell, pid: int) -> bool:
        """Whether this is a well-formed message of ``cell`` sent by the worker ``pid``."""
        if self.cell_hash != cell.cell_hash or self.pid != pid:
            return False
        if self.kind == "start":
            return isinstance(self.value, float)
        return isinstance(self.value, CellResult) and self.value.cell_hash == cell.cell_hash

    @staticmethod
    def describe(message: object) -> tuple[str, str]:
        """``(what, cell hash)`` of a message, for the reason of a cell it is not from."""
        if not isinstance(message, Message):
            return f"{type(message).__name__} object", ""
        return f"'{message.kind}' message from process {message.pid}", message.cell_hash


def _prctl(option: int, value: int) -> None:
    """``prctl(option, value)`` on Linux; elsewhere (or where it fails) nothing."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(option, value, 0, 0, 0)


def reap_orphans(on: bool = True) -> None:
    """Make this process the *subreaper* of its descendants (Linux
    ``prctl(PR_SET_CHILD_SUBREAPER)``), or stop being one: an orphan under it (a daemon
    started by forking twice) is re-parented here rather than to init, so
    :func:`kill_descendants` finds it."""
    _prctl(PR_SET_CHILD_SUBREAPER, int(on))


def _die_with_parent(parent_pid: int) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux only; else a
    no-op: the closed pipe still ends the worker when it is idle)."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (children first), read from ``/proc`` (psutil where
    there is none); ``[]`` where it cannot be read."""
    if not os.path.isdir("/proc/self/task"):
        import psutil

        try:
            return [p.pid for p in psutil.Process(pid).children(recursive=True)]
        except psutil.Error:
            return []
    out: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{parent}/task/{tid}/children") as listing:
                    found = [int(p) for p in listing.read().split()]
            except OSError:
                continue
            out += found
            todo += found
    return out


def kill_descendants(keep: Collection[int] = (), rounds: int = 3) -> None:
    """SIGKILL every process under this one but those in ``keep``, and reap those that are
    (or, this process being their subreaper, became) its children; again while new ones
    appear (a daemon forking as it is killed), at most ``rounds`` times."""
    me = os.getpid()
    for _ in range(rounds):
        found = [pid for pid in descendants(me) if pid not in keep]
        if not found:
            return
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        pending, deadline = set(found), time.monotonic() + 2.0
        while pending and time.monotonic() < deadline:
            for pid in list(pending):
                try:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        pending.discard(pid)
                except ChildProcessError:  # not ours (yet): its parent reaps it, or we do next
                    if pid not in descendants(me):
                        pending.discard(pid)
            if pending:
                time.sleep(0.005)


def _worker_loop(conn: Connection, registry: Registry, threads: int) -> None:
    """Loop of a worker: receive a cell, say when it starts, send its result; after each
    cell, kill what the cell left running."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver handles Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the driver's handler
    limit_process_threads(threads)  # -j workers share the cores: no oversubscription
    forget_data()  # not the driver's, should it have run cells in its own process
    _seal(conn)
    reap_orphans()  # a cell's double-forked daemon stays under us
    while True:
        try:
            cell = conn.recv()
        except (EOFError, OSError):  # the driver closed the pipe or died
            return
        conn.send(Message("start", cell.cell_hash, os.getpid(), time.monotonic()))
        result = execute_cell(cell, registry)  # a child the cell forked ends in there
        kill_descendants()
        conn.send(Message("done", cell.cell_hash, os.getpid(), result))  # the sender's pid


def _seal(conn: Connection) -> None:
    """Close ``conn`` in every process forked from this one: a method's forked child
    cannot write into the worker's channel."""
    os.register_at_fork(after_in_child=conn.close)


class Worker:
    """One forked worker process and the driver's end of its channel.

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
        pid = fork()  # a Ctrl-C during the fork is not lost
        if pid == 0:  # the worker
            code = 0
            try:
                os.setpgid(0, 0)  # its own process group: kill() takes what its cells start
                _die_with_parent(driver)
                parent_end.close()
                for conn in others:
                    with contextlib.suppress(OSError):
                        conn.close()
                _worker_loop(child_end, registry, threads)
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

    def send(self, cell: Cell) -> None:
        """Queue ``cell`` on this worker."""
        self.sent.append(cell)
        self.last_key = cell.data_key
        self.conn.send(cell)

    def kill(self) -> int | None:
        """SIGKILL the worker and every process its cell started (a subprocess, a loky or
        DataLoader pool, a shell's ``cmd &``, a double-forked daemon: left alone they
        outlive the cell and hold the run's stdout open): its process group and its
        descendants. Reap it and return its exit code (negative: a signal)."""
        tree = descendants(self.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # the worker's group: orphans of `cmd &` too
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        for pid in tree:  # those that left the group but not the tree
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        return self.reap()

    def reap(self, timeout: float | None = None) -> int | None:
        """Wait for the worker to end (at most ``timeout`` s) and return its exit code;
        ``None`` if it has not ended (or is not this process's child)."""
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
                if end is not None and time.monotonic() >= end:
                    return None
                time.sleep(0.01)
        with contextlib.suppress(OSError):
            self.conn.close()
        return self.exitcode
