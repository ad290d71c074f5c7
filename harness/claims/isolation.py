"""Claim code run where it cannot take the harness down, nor move another claim's verdict:
a forked process per call, with a time limit, its output discarded, every process it
started killed at the end.

Calls are served by one forked server process (:func:`call_isolated_each`), which runs no
claim code itself: for each call it forks a fresh child from its own, still pristine,
memory, so that whatever a call's code changes (a monkeypatched core, a module global, a
cache) dies with its child and the next call starts from the state the harness forked.
The server is the children's subreaper (Linux ``PR_SET_CHILD_SUBREAPER``): a process a
call's code started, even one that left with a double fork and ``setsid``, stays its
descendant; after each call every descendant is killed (listed from
``/proc/<pid>/task/*/children``), and one still running after the call returned makes the
call an error.

``os._exit``, ``sys.exit``, a fork, ``os.chdir``, a hang or megabytes of output in a
statistic, a control or a claim's construction end only the call's child; the caller gets
:class:`Isolated` with the error in words. A fork the code left behind, a changed working
directory or more than :data:`MAX_OUTPUT` bytes of output are errors too (what would harm
the harness if the code ran in its process); a forked copy that goes on never answers.
Where ``fork`` is missing (or ``HARNESS_CLAIM_ISOLATION=0``) the call runs in this
process, with no time limit.

A fork of a 130 MB harness process and its exit cost about 8 ms of CPU (2 cores at load
8), more than a declared claim's evaluation: consecutive calls marked ``trusted`` (claims
made of the core's parts alone, :func:`harness.claims.contract.core_only`) share a child,
and the server freezes its garbage collector's objects (``gc.freeze``) so that a child
copies fewer of its pages (benchmarks/test_claims_speed.py).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import pickle
import select
import signal
import struct
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from harness.threads import fork  # a Ctrl-C during the fork is not lost

__all__ = ["DEFAULT_TIMEOUT", "Isolated", "call_isolated", "call_isolated_each", "claim_timeout"]

DEFAULT_TIMEOUT = 60.0
"""Seconds a claim's evaluation may take (``HARNESS_CLAIM_TIMEOUT`` sets it)."""

MAX_OUTPUT = 1_000_000
"""Bytes of output (stdout and stderr) past which a claim's evaluation is an error."""

GRACE = 10.0
"""Seconds the caller waits for the server beyond a call's own limit (the server enforces
the limit; this is for a server that stopped answering)."""

SHARED_IMPORTS = ("scipy", "statsmodels", "sklearn", "numpy", "pandas", "pyarrow", "harness")
"""Packages whose modules a call imported the server imports too, once, so that the next
calls' children start with them (an import made in a child is lost with it; scipy.stats
costs a second), and so does the caller once the calls are done, so that the next family's
server starts with them (the main job's decide look: 29 s with each family importing
scipy.stats afresh, against 4 s in one process): third-party libraries and the core, never a
plugin's or a claim's code."""

_HEADER = struct.Struct("!Q")
_EXIT = os._exit  # the child's own exit, whatever a call's code does to ``os``
_SUBREAPER = 36  # prctl(2) PR_SET_CHILD_SUBREAPER
_PARENT_DEATH_SIGNAL = 1  # prctl(2) PR_SET_PDEATHSIG


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


def _in_process() -> bool:
    return not hasattr(os, "fork") or os.environ.get("HARNESS_CLAIM_ISOLATION") == "0"


def call_isolated(function: Callable[..., Any], *args: Any, timeout: float) -> Isolated:
    """``function(*args)`` in a forked child, its result pickled back within ``timeout``
    seconds; never raises for what the child does (KeyboardInterrupt excepted)."""
    if _in_process():
        try:
            return Isolated(True, function(*args))
        except (KeyboardInterrupt, GeneratorExit):
            raise
        except BaseException:
            return Isolated(False, error=traceback.format_exc())
    return call_isolated_each(function, [args], timeout)[0]


def call_isolated_each(
    function: Callable[..., Any],
    calls: Sequence[tuple],
    timeout: float,
    trusted: Sequence[bool] = (),
) -> list[Isolated]:
    """``function(*args)`` for each ``args`` of ``calls``, in order, each in a child of
    its own forked from one server process, each within ``timeout`` seconds, with the
    guarantees of :func:`call_isolated` for each: one call's code cannot change what the
    next one sees. A call whose code ends or stops the server is an error, and a new server
    goes on with the next call.

    :param trusted: for each call, whether it runs the core's code alone (a declared claim
        made of the core's kinds, hypotheses and controls with plain values): consecutive
        trusted calls share a child (up to :data:`BATCH`), each still within its own time,
        since nothing they run can change what the next one sees.
    """
    if _in_process():
        return [call_isolated(function, *args, timeout=timeout) for args in calls]
    shared = [bool(t) for t in trusted] + [False] * (len(calls) - len(trusted))
    out: list[Isolated] = []
    while len(out) < len(calls):
        read_end, write_end = os.pipe()
        pid = fork()  # a Ctrl-C during the fork is not lost
        if pid == 0:  # the server: never returns
            os.close(read_end)
            _serve(function, calls[len(out) :], shared[len(out) :], write_end, timeout)
        os.close(write_end)
        stream = _Stream(read_end)
        try:
            while len(out) < len(calls):
                outcome = stream.receive(timeout + GRACE, timeout, pid)
                if outcome is None:  # the server ended or stopped: a new one for the rest
                    out.append(stream.lost)
                    break
                out.append(outcome)
        finally:
            os.close(read_end)
            _end(pid)
        _import_shared(stream.imported)  # the next server forks with them: no cold imports
    return out


BATCH = 50
"""The most trusted calls one child serves in a row."""


# -- the server: forks a child per call, kills what the call left ---------------------------


def _serve(function: Callable[..., Any], calls: Sequence[tuple], shared: Sequence[bool],
           write_end: int, timeout: float) -> None:  # fmt: skip
    """The server of :func:`call_isolated_each`: each call's outcome written back as soon
    as it is known, as ``("ok", the child's pickled Isolated)`` or ``("error", words)``
    (the server never unpickles what a child sent: that would run the child's code here)."""
    try:
        os.setpgid(0, 0)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
            signal.signal(sig, signal.SIG_DFL)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.close(devnull)
        caller = os.getppid()
        reaper = _become_subreaper()
        if reaper:  # the caller's end (its Ctrl-C, a SIGTERM): what the calls left goes too
            signal.signal(signal.SIGTERM, _ended_by_caller)
            _term_when_parent_dies(caller)  # a caller killed outright (SIGKILL) as well
        gc.freeze()  # the children copy fewer pages: their collections skip these objects
        first = 0
        while first < len(calls):
            last = first + 1
            while shared[first] and last < len(calls) and shared[last] and last - first < BATCH:
                last += 1
            batch = calls[first:last]
            for message, imported in _children(function, batch, timeout, write_end, reaper,
                                               checked=not shared[first]):  # fmt: skip
                _send(write_end, (*message, imported))
                _import_shared(imported)
            first = last
    finally:
        _EXIT(0)


_Message = tuple[tuple[str, Any], list[str]]


def _children(function: Callable[..., Any], calls: Sequence[tuple], timeout: float,
              upstream: int, reaper: bool, checked: bool) -> Iterator[_Message]:  # fmt: skip
    """Each call's ``(("ok", payload) or ("error", words), the modules it imported)``, the
    calls run in a child (``checked``: one call, whose faults are looked for), a new child
    after one that ended or ran out of time."""
    done = 0
    while done < len(calls):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the calls' child: never returns
            os.close(read_end)
            os.close(upstream)  # the call's code never talks to the caller
            _child(function, calls[done:], write_end, checked)
        os.close(write_end)
        reader = _Reader(read_end)
        pending: _Message | None = None  # the last answer, given once the next one is read
        failed: _Message | None = None
        try:
            while done + (pending is not None) < len(calls):
                parts, error = reader.parts(2, time.monotonic() + timeout)
                if error:
                    failed = (("error", _failure(error, timeout, pid)), [])
                    break
                if pending is not None:
                    yield pending
                    done += 1
                pending = (("ok", parts[0]), parts[1].decode("utf-8", "replace").split())
        finally:
            os.close(read_end)
        left = _cleanup(pid, reaper)
        if pending is not None:
            if left and checked:
                pending = (("error", f"the claim's code forked {left} process(es) still running"
                                     " when it returned (a double fork or setsid, say): killed;"
                                     " a claim must not fork"), [])  # fmt: skip
            yield pending
            done += 1
        if failed is not None:
            yield failed
            done += 1


def _failure(error: str, timeout: float, pid: int) -> str:
    if error == "timeout":
        return f"took longer than {timeout:g} s (HARNESS_CLAIM_TIMEOUT)"
    return f"the claim's code ended its process ({_status(pid)}) before returning a verdict"


def _cleanup(pid: int, reaper: bool) -> int:
    """Kill the child ``pid`` and, as subreaper, every process below this one; reap them.
    How many processes besides the child were running (what its calls left)."""
    left = _kill_descendants(pid) if reaper else 0  # the child, what it started, what left
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)  # the child itself, whatever /proc said
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    return left


def _child(function: Callable[..., Any], calls: Sequence[tuple], write_end: int,
           checked: bool) -> None:  # fmt: skip
    """The calls' own process: for each call its outcome pickled, then the modules it
    imported (text); ``checked``: the faults of :func:`_fault` looked for."""
    me = os.getpid()
    try:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
            signal.signal(sig, signal.SIG_DFL)
        output = _Discarded()
        where = os.getcwd()
        for args in calls:
            before = set(sys.modules)
            try:
                result = Isolated(True, function(*args))
            except BaseException:
                result = Isolated(False, error=traceback.format_exc())
            if os.getpid() != me:  # a copy the claim's code forked, going on: never answers
                _EXIT(0)
            fault = _fault(where, output) if checked else ""
            try:
                payload = pickle.dumps(Isolated(False, error=fault) if fault else result)
            except Exception as err:
                payload = pickle.dumps(Isolated(False, error=f"its result cannot be sent back"
                                                f" ({type(err).__name__}: {err})"))  # fmt: skip
            imported = " ".join(m for m in sys.modules if m not in before).encode()
            _write(write_end, b"".join(_HEADER.pack(len(p)) + p for p in (payload, imported)))
    finally:
        _EXIT(0)


def _import_shared(names: list[str]) -> None:
    """Import here the modules of :data:`SHARED_IMPORTS` packages a call imported."""
    for name in names:
        if name.split(".")[0] in SHARED_IMPORTS and name not in sys.modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)


def _become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux); whether it is."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        listed = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
        return listed and libc.prctl(_SUBREAPER, 1, 0, 0, 0) == 0  # and its children listed
    except (OSError, AttributeError):
        return False


def _term_when_parent_dies(parent: int) -> None:
    """SIGTERM to this process when its parent ends (Linux ``PR_SET_PDEATHSIG``), so that a
    caller killed with no chance to end its server (SIGKILL, SIGTERM unhandled) still takes
    what its calls left with it; at once if the parent has ended already."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PARENT_DEATH_SIGNAL, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # ended before the request: nothing would signal it
        os.kill(os.getpid(), signal.SIGTERM)


def _descendants(root: int) -> list[int]:
    """Every process below ``root`` (children from ``/proc/<pid>/task/*/children``)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children") as file:
                    children = [int(c) for c in file.read().split()]
            except (OSError, ValueError):
                continue
            found += children
            todo += children
    return found


def _kill_descendants(call: int) -> int:
    """Kill every descendant of this (subreaper) process and reap them but ``call`` (the
    call's own process, waited for by the caller); how many were running besides ``call``
    at the first look (what the call left). A process forked meanwhile is found by the next
    look: its parent killed, it is this process's child."""
    me, left = os.getpid(), None
    for _ in range(1000):
        pids = [p for p in _descendants(me) if not _zombie(p)]
        if left is None:
            left = len([p for p in pids if p != call])
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        _reap_all(call)
        time.sleep(0.001)
    _reap_all(call)
    return left or 0


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True  # gone


def _reap_all(keep: int) -> None:
    """Reap every ended child but ``keep``."""
    for pid in _descendants(os.getpid()):
        if pid != keep and _zombie(pid):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


class _Reader:
    """Length-prefixed parts read from a pipe, what was read beyond them kept."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer = fd, bytearray()

    def parts(self, count: int, deadline: float) -> tuple[list[bytes], str]:
        """``count`` parts by ``deadline``: ``(parts, "")``, or ``(parts so far, "timeout" |
        "eof")``."""
        parts: list[bytes] = []
        while True:
            while len(parts) < count and len(self.buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(self.buffer)
                if len(self.buffer) < _HEADER.size + size:
                    break
                parts.append(bytes(self.buffer[_HEADER.size : _HEADER.size + size]))
                del self.buffer[: _HEADER.size + size]
            if len(parts) == count:
                return parts, ""
            left = deadline - time.monotonic()
            if left <= 0:
                return parts, "timeout"
            ready, _, _ = select.select([self.fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                return parts, "eof"
            self.buffer += chunk


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _send(write_end: int, message: tuple[str, Any, list[str]]) -> None:
    payload = pickle.dumps(message)
    _write(write_end, _HEADER.pack(len(payload)) + payload)


def _fault(where: str, output: _Discarded) -> str:
    """What the claim's code did to the process it ran in that a claim must not do: fork a
    process it left behind, change the working directory, write more than
    :data:`MAX_OUTPUT` bytes of output; ``""`` when nothing."""
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
    written = output.close()
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


# -- the caller's side -------------------------------------------------------------------


class _Stream:
    """The outcomes a :func:`_serve` server writes, read one at a time."""

    def __init__(self, read_end: int) -> None:
        self.reader, self.lost = _Reader(read_end), Isolated(False, error="")
        self.imported: list[str] = []  # modules the calls imported (the server's words)

    def receive(self, wait: float, timeout: float, pid: int) -> Isolated | None:
        """The next call's outcome within ``wait`` seconds, or None when the server ended
        or stopped answering (:attr:`lost` then says what became of the call)."""
        parts, error = self.reader.parts(1, time.monotonic() + wait)
        if error == "timeout":
            self.lost = Isolated(False, error=f"took longer than {timeout:g} s"
                                 " (HARNESS_CLAIM_TIMEOUT)")  # fmt: skip
            return None
        if error:
            self.lost = Isolated(False, error=f"the claim's code ended its process"
                                 f" ({_status(pid)}) before returning a verdict")  # fmt: skip
            return None
        kind, data, imported = pickle.loads(parts[0])  # the server's own message
        self.imported += imported
        if kind == "error":
            return Isolated(False, error=data)
        try:
            outcome = pickle.loads(data)
        except Exception as err:
            return Isolated(False, error=f"its result could not be read back ({err})")
        if not isinstance(outcome, Isolated):
            return Isolated(False, error=f"its result could not be read back (a {type(outcome)})")
        return outcome


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
    """End the server: SIGTERM first, so that it kills every process below it, those that
    left with a double fork and ``setsid`` included (:func:`_ended_by_caller`); then kill its
    process group (the calls' children, unless they left it) and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 2.0
    while not _zombie(pid) and time.monotonic() < deadline:
        time.sleep(0.002)
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            target()
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _ended_by_caller(signum: int, frame: Any) -> None:
    """The server's SIGTERM handler: kill every descendant (as subreaper it has them all),
    then exit."""
    with contextlib.suppress(BaseException):
        _kill_descendants(0)
    _EXIT(128 + signum)
