"""Cells in forked worker processes on this machine (``harness run -j N``)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from multiprocessing.connection import wait

from harness.plugins.registry import Registry
from harness.runs.cell import CellResult
from harness.runs.executors.base import (
    OnResult,
    ResultWriter,
    Router,
    died,
    stray_message,
    timed_out,
)
from harness.runs.executors.worker import Message, Worker
from harness.suites.identity import Cell
from harness.threads import threads_per_worker

__all__ = ["LocalExecutor"]


class LocalExecutor:
    """Run cells in ``n_jobs`` forked worker processes on this machine.

    Each worker holds its running cell and the next one (so it starts the next one the
    moment the last ends), reports each cell's start so the timeout counts from there,
    and is replaced after a timeout, a crash or a message that is not its running cell's.
    Keeps the contract of :mod:`harness.runs.executors.base`.

    Parameters
    ----------
    registry : Registry
        Inherited by the workers through ``fork``.
    n_jobs : int, default=1
        Worker processes; each gets :func:`harness.threads.threads_per_worker` BLAS/torch
        threads (usable cores // n_jobs, at most the user's ``OMP_NUM_THREADS``).
    """

    def __init__(self, registry: Registry, n_jobs: int = 1) -> None:
        self.registry = registry
        self.n_jobs = max(1, n_jobs)
        self.threads = threads_per_worker(self.n_jobs)
        self.ahead = 2  # cells held by one worker: the running one and the next
        self._slots: list[Worker] = []

    def _spawn(self, slots: list[Worker]) -> Worker:
        return Worker(self.registry, self.threads, [s.conn for s in slots])

    def running(self) -> list[tuple[Cell, float]]:
        """The cells executing now, each with its seconds since it started (for progress
        lines; read from another thread, so a snapshot that may be a moment old)."""
        now = time.monotonic()
        out = []
        for slot in list(self._slots):
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
        slots: list[Worker] = []
        self._slots = slots  # read by running() (progress lines)
        writer = ResultWriter(on_result)
        try:
            for _ in range(min(self.n_jobs, len(router))):
                slots.append(self._spawn(slots))
            self._loop(router, slots, writer)
        finally:
            for slot in slots:  # first stop the work, then write what came back
                slot.kill()
            writer.close()

    def _hand_out(self, router: Router, slots: list[Worker], writer: ResultWriter) -> bool:
        """Send cells to the workers with room; False when no cell is out and none left."""
        limit = 2 * self.n_jobs  # results waiting for the writer before we hold back
        if writer.backlog < limit:
            for slot in slots:
                while len(slot.sent) < self.ahead and (
                    cell := router.take(slot.last_key, steal=not slot.sent)
                ):
                    slot.send(cell)
        if any(s.sent for s in slots):
            return True
        if not len(router):
            return False
        if writer.backlog < limit:  # every worker idle: any cell left will do
            cell = router.take(None, force=True)
            assert cell is not None
            slots[0].send(cell)
        else:
            time.sleep(0.005)  # the writer is behind: let it catch up
        return True

    def _loop(self, router: Router, slots: list[Worker], writer: ResultWriter) -> None:
        while not writer.stopped:
            writer.check()
            if not self._hand_out(router, slots, writer):
                return
            busy = [s for s in slots if s.sent]
            if not busy:
                continue
            wait_s = min(s.deadline for s in busy) - time.monotonic()
            if writer.backlog >= 2 * self.n_jobs:
                wait_s = min(wait_s, 0.005)
            ready = wait([s.conn for s in busy], timeout=max(0.0, min(wait_s, 1.0)))
            for i, slot in enumerate(slots):
                if slot.sent and not self._poll(slot, ready, router, writer):
                    slots[i] = self._spawn([s for s in slots if s is not slot])

    def _poll(
        self, slot: Worker, ready: list[object], router: Router, writer: ResultWriter
    ) -> bool:
        """Read what ``slot`` sent; False when it had to be killed or died."""
        if slot.conn in ready:
            try:
                while slot.conn.poll():
                    message = slot.conn.recv()
                    if not isinstance(message, Message) or not message.is_from(
                        slot.sent[0], slot.pid
                    ):
                        stray = stray_message(slot.sent[0], *Message.describe(message))
                        return self._replace(slot, router, writer, stray)
                    if message.kind == "start":
                        assert isinstance(message.value, float)
                        slot.started = message.value
                        timeout = slot.sent[0].timeout
                        slot.deadline = message.value + timeout if timeout else float("inf")
                        continue
                    slot.deadline = float("inf")
                    assert isinstance(message.value, CellResult)
                    writer.put(slot.sent.popleft(), message.value)
                    if not slot.sent:
                        break
            except (EOFError, OSError):
                cell = slot.sent.popleft()
                router.put_back(slot.sent)
                writer.put(cell, died(cell, slot.reap(timeout=5)))
                return False
        if time.monotonic() >= slot.deadline:
            cell = slot.sent[0]
            return self._replace(slot, router, writer, timed_out(cell, slot.started))
        return True

    @staticmethod
    def _replace(slot: Worker, router: Router, writer: ResultWriter, result: CellResult) -> bool:
        """Kill ``slot`` (and every process under it), record ``result`` for its running
        cell and hand its other cells back to the router; False (the slot needs a fresh
        worker)."""
        cell = slot.sent.popleft()
        router.put_back(slot.sent)
        slot.kill()
        writer.put(cell, result)
        return False
