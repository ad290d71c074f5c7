"""Claim code run where it cannot take the harness down: a forked child per call, with a
time limit, its output discarded, its process group killed at the end.

``os._exit``, ``sys.exit``, a fork, ``os.chdir``, a hang or megabytes of output in a
statistic, a control or a claim's construction end only the child; the caller gets
:class:`Isolated` with the error in words. A fork the code left behind, a changed working
directory or more than :data:`MAX_OUTPUT` bytes of output are errors too (what would harm
the harness if the code ran in its process); a forked copy that goes on never answers.
Where ``fork`` is missing (or ``HARNESS_CLAIM_ISOLATION=0``) the call runs in this
process, with no time limit.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_TIMEOUT", "Isolated", "call_isolated", "call_isolated_each", "claim_timeout"]

DEFAULT_TIMEOUT = 60.0
"""Seconds a claim's evaluation may take (``HARNESS_CLAIM_TIMEOUT`` sets it)."""

MAX_OUTPUT = 1_000_000
"""Bytes of output (stdout and stderr) past which a claim's evaluation is an error."""

_HEADER = struct.Struct("!Q")


@dataclass(frozen=True)
class Isolated:
    """The outcome of an isolated call: ``value`` when ``ok``, else ``error`` in words."""

    ok: bool
    value: Any = None
    error: str = ""


def claim_timeout() -> float:
    """The time limit of one claim in seconds: ``HARNESS_CLAIM_TIMEOUT`` or 60.

    :raises ValueError: ``HARNESS_CLAIM_TIMEOUT`` is not a positive number.
    """
    raw = os.environ.get("HARNESS_CLAIM_TIMEOUT", "")
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"HARNESS_CLAIM_TIMEOUT must be a positive number of seconds, got {raw!r}")
    return value


def call_isolated(function: Callable[..., Any], *args: Any, timeout: float) -> Isolated:
    """``function(*args)`` in a forked child, its result pickled back within ``timeout``
    seconds; never raises for what the child does (KeyboardInterrupt excepted)."""
    if not hasattr(os, "fork") or os.environ.get("HARNESS_CLAIM_ISOLATION") == "0":
        try:
            return Isolated(True, function(*args))
        except (KeyboardInterrupt, GeneratorExit):
            raise
        except BaseException:
            return Isolated(False, error=traceback.format_exc())
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        _child(function, args, write_end)
    os.close(write_end)
    try:
        return _receive(pid, read_end, timeout)
    finally:
        os.close(read_end)
        _end(pid)


def call_isolated_each(
    function: Callable[..., Any], calls: Sequence[tuple], timeout: float
) -> list[Isolated]:
    """``function(*args)`` for each ``args`` of ``calls``, in order, in one forked child
    that streams each result back, each call within ``timeout`` seconds: one fork for many
    calls, with the guarantees of :func:`call_isolated` for each. A call that runs past its
    time or ends the child is an error, and a new child goes on with the next call; a call
    whose code left a fork, changed the working directory or wrote too much is an error,
    and its child, no longer as it was forked, ends (the next call gets a new one)."""
    if not hasattr(os, "fork") or os.environ.get("HARNESS_CLAIM_ISOLATION") == "0":
        return [call_isolated(function, *args, timeout=timeout) for args in calls]
    out: list[Isolated] = []
    while len(out) < len(calls):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read_end)
            _serve(function, calls[len(out) :], write_end)
        os.close(write_end)
        stream = _Stream(pid, read_end)
        try:
            while len(out) < len(calls):
                outcome, goes_on = stream.receive(timeout)
                out.append(outcome)
                if not goes_on:
                    break
        finally:
            os.close(read_end)
            _end(pid)
    return out


def _serve(function: Callable[..., Any], calls: Sequence[tuple], write_end: int) -> None:
    """The child of :func:`call_isolated_each`: each call's ``(Isolated, goes_on)``
    written back as soon as it is known."""
    me = os.getpid()
    try:
        os.setpgid(0, 0)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
            signal.signal(sig, signal.SIG_DFL)
        output = _Discarded()
        where = os.getcwd()
        for args in calls:
            before = output.settle()
            try:
                result = Isolated(True, function(*args))
            except BaseException:
                result = Isolated(False, error=traceback.format_exc())
            if os.getpid() != me:  # a copy the claim's code forked, going on: it never answers
                os._exit(0)
            fault = _fault(where, output, before, last=False)
            _send(write_end, (Isolated(False, error=fault) if fault else result, not fault))
            if fault:
                break
    finally:
        os._exit(0)


def _send(write_end: int, message: Any) -> None:
    payload = pickle.dumps(message)
    os.write(write_end, _HEADER.pack(len(payload)))
    view = memoryview(payload)
    while view:
        view = view[os.write(write_end, view) :]


def _child(function: Callable[..., Any], args: tuple, write_end: int) -> None:
    me = os.getpid()
    try:
        os.setpgid(0, 0)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
            signal.signal(sig, signal.SIG_DFL)
        output = _Discarded()
        where = os.getcwd()
        try:
            result = Isolated(True, function(*args))
        except BaseException:
            result = Isolated(False, error=traceback.format_exc())
        if os.getpid() != me:  # a copy the claim's code forked, going on: it never answers
            os._exit(0)
        fault = _fault(where, output)
        payload = pickle.dumps(Isolated(False, error=fault) if fault else result)
        os.write(write_end, _HEADER.pack(len(payload)))
        view = memoryview(payload)
        while view:
            view = view[os.write(write_end, view) :]
    finally:
        os._exit(0)


def _fault(where: str, output: _Discarded, before: int = 0, last: bool = True) -> str:
    """What the claim's code did to the process it ran in that a claim must not do: fork a
    process it left behind, change the working directory, write more than
    :data:`MAX_OUTPUT` bytes of output (past the ``before`` counted earlier; ``last``: the
    process answers no more calls, output is closed); ``""`` when nothing."""
    try:
        done, _ = os.waitpid(-1, os.WNOHANG)
        left = f"process {done}, ended" if done else "a process still running"
    except ChildProcessError:  # none: nothing forked, or reaped (subprocess.run)
        left = ""
    if left:
        return (
            f"the claim's code forked a process it did not wait for ({left}); a claim must not fork"
        )
    try:
        now = os.getcwd()
    except OSError as err:
        now = f"unreadable ({err})"
    if now != where:
        return f"the claim's code changed the working directory (to {now}; it was {where})"
    written = (output.close() if last else output.settle()) - before
    if written > MAX_OUTPUT:
        return (f"the claim's code wrote {written / 1e6:.1f} MB of output (more than"
                f" {MAX_OUTPUT / 1e6:g} MB): a claim computes, it does not print")  # fmt: skip
    return ""


class _Discarded:
    """The child's stdin read from /dev/null and its stdout and stderr drained by a thread
    that counts the bytes and keeps none (what a claim prints is never shown)."""

    def __init__(self) -> None:
        import threading

        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        self.read_end, write_end = os.pipe()
        for fd in (1, 2):
            os.dup2(write_end, fd)
        os.close(write_end)
        os.close(devnull)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - for the child's life
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        self.count = 0
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while chunk := os.read(self.read_end, 1 << 16):
            self.count += len(chunk)

    def settle(self) -> int:
        """The bytes written so far, once what was flushed is counted."""
        import fcntl
        import termios

        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        waiting = struct.pack("i", 0)
        for _ in range(1000):  # at most 1 s for the drain to catch up
            if not struct.unpack("i", fcntl.ioctl(self.read_end, termios.FIONREAD, waiting))[0]:
                break
            time.sleep(0.001)
        return self.count

    def close(self) -> int:
        """Stop counting (stdout and stderr to /dev/null); the bytes written."""
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(devnull, fd)
        self.thread.join(timeout=5)
        return self.count


class _Stream:
    """The results a :func:`_serve` child writes, read one at a time."""

    def __init__(self, pid: int, read_end: int) -> None:
        self.pid, self.read_end, self.buffer = pid, read_end, bytearray()

    def receive(self, timeout: float) -> tuple[Isolated, bool]:
        """``(the next call's outcome, whether the child goes on)`` within ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(self.buffer)
                if len(self.buffer) >= _HEADER.size + size:
                    payload = bytes(self.buffer[_HEADER.size : _HEADER.size + size])
                    del self.buffer[: _HEADER.size + size]
                    try:
                        return pickle.loads(payload)
                    except Exception as err:
                        return Isolated(
                            False, error=f"its result could not be read back ({err})"
                        ), False
            left = deadline - time.monotonic()
            if left <= 0:
                return Isolated(
                    False, error=f"took longer than {timeout:g} s (HARNESS_CLAIM_TIMEOUT)"
                ), False
            ready, _, _ = select.select([self.read_end], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(self.read_end, 1 << 20)
            if not chunk:
                status = _status(self.pid)
                return Isolated(False, error=f"the claim's code ended its process ({status})"
                                " before returning a verdict"), False  # fmt: skip
            self.buffer += chunk


def _receive(pid: int, read_end: int, timeout: float) -> Isolated:
    deadline = time.monotonic() + timeout
    buffer = bytearray()
    size = None
    while size is None or len(buffer) < _HEADER.size + size:
        left = deadline - time.monotonic()
        if left <= 0:
            return Isolated(False, error=f"took longer than {timeout:g} s (HARNESS_CLAIM_TIMEOUT)")
        ready, _, _ = select.select([read_end], [], [], min(left, 1.0))
        if not ready:
            continue
        chunk = os.read(read_end, 1 << 20)
        if not chunk:
            status = _status(pid)
            return Isolated(False, error=f"the claim's code ended its process ({status})"
                            " before returning a verdict")  # fmt: skip
        buffer += chunk
        if size is None and len(buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(buffer)
    try:
        return pickle.loads(bytes(buffer[_HEADER.size :]))
    except Exception as err:
        return Isolated(False, error=f"its result could not be read back ({err})")


def _status(pid: int) -> str:
    for _ in range(50):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFEXITED(status):
                return f"exit status {os.WEXITSTATUS(status)}"
            return f"signal {os.WTERMSIG(status)}"
        time.sleep(0.01)
    return "still running"


def _end(pid: int) -> None:
    """Kill the child's process group (what it forked too) and reap the child."""
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            target()
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
