"""Whether the driver of a RUNNING parent run is alive: its process tags and heartbeat.

A parent run carries its driver's host, pid and process start time
(:func:`process_tags`) and a heartbeat renewed every :data:`HEARTBEAT_S` seconds
(:class:`Heartbeat`); :class:`SuiteProcess` reads them back.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from harness.store import layout

__all__ = ["HEARTBEAT_S", "STALE_HEARTBEAT_S", "Heartbeat", "SuiteProcess", "process_tags"]

HEARTBEAT_S = 30.0  # a driver tags its parent run this often (harness.heartbeat)
STALE_HEARTBEAT_S = 180.0  # a driver on another host is dead after this long unheard


def process_tags() -> dict[str, str]:
    """This process' ``harness.host``, ``harness.pid`` and ``harness.pid_start`` tags."""
    import psutil

    me = psutil.Process()
    return {
        layout.HOST: socket.gethostname(),
        layout.PID: str(me.pid),
        layout.PID_START: f"{me.create_time():.2f}",
    }


@dataclass(frozen=True)
class SuiteProcess:
    """The driver of a RUNNING parent run.

    Alive when, on this host, its pid exists with the same start time; on another host,
    when its heartbeat is younger than ``STALE_HEARTBEAT_S``.
    """

    run_id: str
    host: str
    pid: int | None
    alive: bool

    @classmethod
    def of(cls, run_id: str, start_time: int | None, tags: Mapping[str, str]) -> SuiteProcess:
        """The driver of run ``run_id`` (started at ``start_time``, ms) from its tags."""
        import psutil

        host = tags.get(layout.HOST, "")
        pid = int(tags[layout.PID]) if tags.get(layout.PID, "").isdigit() else None
        if host == socket.gethostname() and pid is not None:
            try:
                started = psutil.Process(pid).create_time()
                alive = abs(started - float(tags.get(layout.PID_START, started))) < 1.0
            except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
                alive = False
        else:
            beat = float(tags.get(layout.HEARTBEAT, (start_time or 0) / 1000))
            alive = time.time() - beat < STALE_HEARTBEAT_S
        return cls(run_id, host, pid, alive)

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host or 'an unknown host'}"


class Heartbeat:
    """A daemon thread that calls ``set_tag(run_id, harness.heartbeat, <Unix seconds>)``
    every ``every_s`` seconds until :meth:`stop`."""

    def __init__(self, set_tag: Callable[[str, str, str], None], run_id: str, every_s: float):
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, args=(set_tag, run_id, every_s), daemon=True
        )
        self._thread.start()

    def _beat(self, set_tag: Callable[[str, str, str], None], run_id: str, every_s: float):
        while not self._stop.wait(every_s):
            with contextlib.suppress(Exception):  # a missed beat is not worth a crash
                set_tag(run_id, layout.HEARTBEAT, str(int(time.time())))

    def stop(self) -> None:
        self._stop.set()
