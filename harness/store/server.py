"""Starting, watching and stopping ``mlflow server`` / ``mlflow ui`` for ``harness server``
and ``harness ui``.

The server runs in its own process group, so a stop (SIGTERM, SIGINT, SIGHUP to harness)
reaches it and every worker it started. harness prints the URL only once the server
answers ``/health``, and drops upstream deprecation warnings from the server's output.
Source of the MLflow server options: ``mlflow server --help`` (MLflow 3).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from harness.errors import StoreError
from harness.redaction import mask

__all__ = ["READY_TIMEOUT_S", "MlflowProcess", "mlflow_executable", "port_in_use"]

READY_TIMEOUT_S = 180.0
"""How long a server may take to answer /health (MLflow's workers start slowly)."""

_NOISE = re.compile(r"\b\w*(DeprecationWarning|FutureWarning)\b")


def mlflow_executable() -> str:
    """The ``mlflow`` command of this Python environment."""
    beside = Path(sys.executable).with_name("mlflow")
    return str(beside) if beside.exists() else "mlflow"


def port_in_use(host: str, port: int) -> bool:
    """Whether something already listens on ``host:port``."""
    with socket.socket() as probe:
        probe.settimeout(1.0)
        return probe.connect_ex((host if host not in ("0.0.0.0", "::") else "127.0.0.1", port)) == 0


def _answers(url: str, timeout_s: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


class MlflowProcess:
    """One ``mlflow`` server process group, its output relayed line by line; a context
    manager that stops the whole group on exit.

    From construction until exit, SIGTERM, SIGINT and SIGHUP to harness are caught and end
    :meth:`wait_ready` / :meth:`serve_until_stopped`, which then stop the group.

    :param argv: the command (``[mlflow, "server", ...]``).
    :param health_url: polled until it answers 200.
    :param out: where the server's lines go (deprecation warnings dropped, passwords
        masked); ``None`` keeps them only for the error message of a failed start.
    """

    _SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def __init__(
        self,
        argv: Sequence[str],
        health_url: str,
        out: TextIO | None,
        env: dict[str, str] | None = None,
    ) -> None:
        env = dict(os.environ, **(env or {}))
        env["PYTHONWARNINGS"] = "ignore::DeprecationWarning,ignore::FutureWarning"
        env.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
        self.health_url = health_url
        self.tail: deque[str] = deque(maxlen=40)
        self.signals: list[int] = []
        self._out = out
        self._previous = {s: signal.signal(s, self._on_signal) for s in self._SIGNALS}
        self.process = subprocess.Popen(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            env=env,
            start_new_session=True,  # its own process group: one signal reaches every worker
        )
        self._relay = threading.Thread(target=self._pump, daemon=True, name="mlflow-output")
        self._relay.start()

    def _on_signal(self, signum: int, frame: object) -> None:
        self.signals.append(signum)

    def __enter__(self) -> MlflowProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.stop()
        for signum, old in self._previous.items():
            signal.signal(signum, old)

    def _pump(self) -> None:
        skip_source_line = False
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if skip_source_line and line.startswith((" ", "\t")):
                skip_source_line = False  # the code line Python prints under a warning
                continue
            skip_source_line = False
            if _NOISE.search(line):
                skip_source_line = True
                continue
            line = mask(line)
            self.tail.append(line)
            if self._out is not None:
                self._out.write(line)
                self._out.flush()

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> bool:
        """Block until the server answers its health URL (True), or a stop signal came
        (False; the group is stopped).

        :raises StoreError: the server exited first (with the end of its output) or did
            not answer within ``timeout_s`` (it is stopped then).
        """
        deadline = time.monotonic() + timeout_s
        while not _answers(self.health_url):
            if self.signals:
                self.stop()
                return False
            if self.process.poll() is not None:
                self._relay.join(2.0)
                raise StoreError(
                    f"mlflow exited with code {self.process.returncode} before it answered."
                    " Its last lines:\n" + "".join(self.tail).rstrip()
                )
            if time.monotonic() > deadline:
                self.stop()
                raise StoreError(f"mlflow did not answer {timeout_s:.0f} s after its start.")
            time.sleep(0.25)
        return True

    def serve_until_stopped(self) -> int:
        """Wait until the server exits or a stop signal comes (then stop the whole group).
        Returns 0 after a requested stop, else the server's exit code."""
        while not self.signals and self.process.poll() is None:
            time.sleep(0.2)
        if self.signals:
            self.stop()
            return 0
        self._relay.join(2.0)
        return self.process.returncode

    def stop(self, grace_s: float = 15.0) -> int:
        """SIGTERM to the whole process group, SIGKILL after ``grace_s``; returns the
        server's exit code."""
        for signum in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, signum)
            except ProcessLookupError:
                break
            try:
                self.process.wait(grace_s)
                break
            except subprocess.TimeoutExpired:
                continue
        code = self.process.wait()
        with contextlib.suppress(ProcessLookupError):  # workers that outlived the server
            os.killpg(self.process.pid, signal.SIGKILL)
        self._relay.join(2.0)
        return code
