"""An in-test plugin whose methods fail the hard way (task 'faults'); no paper behind it.

Used by tests/runs/test_executors.py and tests/runs/test_cell.py to provoke timeouts, crashes,
segfaults, stray forked children and daemons for real on
every executor.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from dataclasses import dataclass

from harness import Dataset, Method, Metric, hookimpl


class Draw(Dataset):
    """One number drawn from the seed (a stand-in for data that is costly to load).

    Source: test fixture.
    """

    name = "draw"
    task = "faults"

    @dataclass
    class Params:
        size: int = 1

    def load(self, params: Params, seed: int) -> float:
        return float(seed % 1000) * params.size


class Sleep(Method):
    """Sleeps ``seconds`` (in Python), then returns the data.

    Source: test fixture.
    """

    name = "sleep"
    task = "faults"

    @dataclass
    class Params:
        seconds: float = 0.0

    def run(self, data: float, params: Params, seed: int) -> float:
        time.sleep(params.seconds)
        return data + params.seconds


class Crash(Method):
    """Ends its process with ``os._exit(3)`` (a C extension calling exit()).

    Source: test fixture.
    """

    name = "crash"
    task = "faults"

    def run(self, data: float, params: Method.Params, seed: int) -> float:
        os._exit(3)


class Segfault(Method):
    """Reads address 0: SIGSEGV in C code.

    Source: test fixture.
    """

    name = "segfault"
    task = "faults"

    def run(self, data: float, params: Method.Params, seed: int) -> float:
        print(EXPECTED_CRASH, file=sys.stderr, flush=True)  # in the test log, before it
        ctypes.string_at(0)
        return 0.0


EXPECTED_CRASH = (
    "harness tests: a deliberate crash test (tests/fault_plugin.py, method 'segfault') is"
    " about to segfault; the 'Fatal Python error: Segmentation fault' traceback that"
    " follows is expected."
)


class KillParent(Method):
    """SIGKILLs the process that started the cell's process (a dask worker, as the OOM
    killer would).

    Source: test fixture.
    """

    name = "kill-parent"
    task = "faults"

    def run(self, data: float, params: Method.Params, seed: int) -> float:
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(30)
        return 0.0


class ForkChild(Method):
    """Forks; the child returns the negated data (``child: returns``) or raises
    (``child: raises``) instead of calling ``os._exit``; the parent returns the data after
    ``seconds``.

    Source: test fixture (issue 30: a forked child's result landed on another cell).
    """

    name = "fork-child"
    task = "faults"

    @dataclass
    class Params:
        child: str = "returns"
        seconds: float = 0.3

    def run(self, data: float, params: Params, seed: int) -> float:
        if os.fork() == 0:
            if params.child == "raises":
                raise RuntimeError("raised in the forked child")
            return -1000.0 - data
        time.sleep(params.seconds)  # the child's message, if any, gets out first
        return data


class Daemon(Method):
    """Starts a daemon by forking twice (``setsid`` between), which writes its pid to
    ``pid_file`` and sleeps 120 s holding the process's stdout; then sleeps ``seconds``.

    Source: test fixture (issue 30: a double-forked daemon outlived its cell's timeout).
    """

    name = "daemon"
    task = "faults"

    @dataclass
    class Params:
        pid_file: str = ""
        seconds: float = 0.0

    def run(self, data: float, params: Params, seed: int) -> float:
        first = os.fork()
        if first == 0:
            os.setsid()
            daemon = os.fork()
            if daemon == 0:
                time.sleep(120)
                os._exit(0)
            with open(params.pid_file, "a") as out:
                out.write(f"{daemon}\n")
            os._exit(0)
        os.waitpid(first, 0)
        time.sleep(params.seconds)
        return data


class Value(Metric):
    """The method's output.

    Source: test fixture.
    """

    name = "value"
    task = "faults"

    def compute(self, data: float, output: float) -> float:
        return output


@hookimpl
def harness_datasets():
    return [Draw]


@hookimpl
def harness_methods():
    return [Sleep, Crash, Segfault, KillParent, ForkChild, Daemon]


@hookimpl
def harness_metrics():
    return [Value]
