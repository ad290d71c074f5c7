"""``call_isolated_each``: calls served by one forked server, each in a child of its own
forked from the server's untouched memory, each within its own time; what a call changes
in its process, or starts, ends with it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.claims.isolation import call_isolated_each


def _pid() -> tuple[int, int]:
    return os.getpid(), os.getppid()


def _exits() -> None:
    os._exit(0)


def _system_exit() -> None:
    sys.exit(3)


def _hangs() -> None:
    time.sleep(60)


def _moves() -> int:
    os.chdir("/")
    return os.getpid()


def _kills_the_server() -> None:
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(60)


def _run(*functions, timeout: float = 2.0):
    return call_isolated_each(lambda f: f(), [(f,) for f in functions], timeout=timeout)


def test_each_call_has_a_child_of_its_own_from_one_server():
    first, second = _run(_pid, _pid)
    assert first.ok and second.ok
    (one, server), (other, same) = first.value, second.value
    assert one != other and server == same != os.getpid()


def test_a_call_that_ends_or_hangs_its_child_is_an_error_and_the_rest_go_on():
    before, ended, raised, hung, after = _run(_pid, _exits, _system_exit, _hangs, _pid)
    assert before.ok and after.ok
    assert "ended its process" in ended.error
    assert "SystemExit" in raised.error
    assert "took longer than 2 s" in hung.error
    assert after.value[1] == before.value[1]  # the same server throughout


def test_a_call_that_changes_its_process_is_an_error_and_the_next_is_untouched():
    here = os.getcwd()
    before, moved, after = _run(_pid, _moves, _pid)
    assert not moved.ok and "changed the working directory" in moved.error
    assert after.ok and after.value[0] != before.value[0]
    assert os.getcwd() == here


def test_a_call_that_kills_the_server_is_an_error_and_a_new_server_serves_the_rest():
    before, killer, after = _run(_pid, _kills_the_server, _pid)
    assert before.ok and after.ok
    assert not killer.ok and "ended its process" in killer.error, killer.error
    assert after.value[1] != before.value[1]


# -- a call's changes to module globals end with it ------------------------------------------

STATE = {"calls": 0}


def _counts() -> int:
    STATE["calls"] += 1
    return STATE["calls"]


def test_what_a_call_changes_in_its_process_is_not_seen_by_the_next():
    """Without a child per call (one child serving every call, as before), the second call
    saw the first's change and returned 2."""
    first, second = _run(_counts, _counts)
    assert first.value == second.value == 1


# -- no process a call started outlives it --------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _escapes(marker: str, then_hang: bool) -> int:
    """Start a sleeper with a double fork and ``setsid`` (it leaves the process group),
    write its pid to ``marker``; then hang or return."""
    sleeper = subprocess.Popen(  # setsid and a fork: its parent (the shell) exits at once
        ["/bin/sh", "-c", f"setsid sleep 300 & echo $! > {marker}.tmp; mv {marker}.tmp {marker}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    sleeper.wait()
    while not os.path.exists(marker):
        time.sleep(0.01)
    if then_hang:
        time.sleep(300)
    return 0


needs_setsid = pytest.mark.skipif(
    not shutil.which("setsid") or not os.path.isdir("/proc/self/task"),
    reason="needs setsid(1) and /proc (Linux)",
)


@needs_setsid
def test_a_double_forked_setsid_sleeper_is_killed_with_a_call_that_hangs(tmp_path):
    """Killing the call's process group (as before) left the setsid sleeper running."""
    marker = str(tmp_path / "sleeper")
    (outcome,) = call_isolated_each(_escapes, [(marker, True)], timeout=3.0)
    assert not outcome.ok and "took longer than 3 s" in outcome.error
    sleeper = int(Path(marker).read_text())
    deadline = time.monotonic() + 5
    while _alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(sleeper), f"the sleeper {sleeper} survived its claim"


@needs_setsid
def test_a_call_that_returns_leaving_a_setsid_process_is_an_error(tmp_path):
    marker = str(tmp_path / "sleeper")
    left, after = call_isolated_each(_escapes, [(marker, False), (marker + "2", False)],
                                     timeout=10.0)  # fmt: skip
    assert not left.ok and "forked 1 process(es) still running" in left.error, left.error
    assert not _alive(int(Path(marker).read_text()))
    assert not after.ok  # the second leaves one too: each call is judged on its own


def test_a_call_that_waits_for_its_own_process_is_fine():
    (outcome,) = _run(lambda: subprocess.run(["true"], check=True).returncode)
    assert outcome.ok and outcome.value == 0, outcome.error


# -- calls of the core's code alone share a child; imports are learned ----------------------


def test_trusted_calls_share_a_child_each_within_its_time():
    calls = [(_pid,), (_pid,), (_hangs,), (_pid,), (_pid,)]
    outcomes = call_isolated_each(lambda f: f(), calls, 2.0, trusted=[True] * 4 + [False])
    first, second, hung, after, alone = outcomes
    assert first.value == second.value  # one child for the first two
    assert "took longer than 2 s" in hung.error
    assert after.ok and after.value[0] != first.value[0]  # a new child after the hang
    assert alone.ok and alone.value[0] != after.value[0]  # an untrusted call: its own child


def _imports_odr() -> bool:
    known = "scipy.odr" in sys.modules
    import scipy.odr  # noqa: F401

    return known


def test_what_a_call_imports_of_a_library_the_next_child_has():
    if "scipy.odr" in sys.modules:
        pytest.skip("scipy.odr is imported in this process already")
    first, second = call_isolated_each(lambda f: f(), [(_imports_odr,), (_imports_odr,)], 30.0)
    assert first.value is False and second.value is True  # the server imported it between
    # and the caller once the calls are done: the next family's server starts with it (fails
    # when only the server imports: each family of the main job paid scipy.stats, 29 s vs 4 s)
    assert "scipy.odr" in sys.modules
    (third,) = call_isolated_each(lambda f: f(), [(_imports_odr,)], 30.0)
    assert third.value is True


_INTERRUPTED = """
import os, subprocess, sys, time
from harness.claims.isolation import call_isolated_each

def escapes(marker):
    line = f"setsid sleep 300 & echo $! > {marker}.tmp; mv {marker}.tmp {marker}"
    subprocess.Popen(["/bin/sh", "-c", line], stdout=subprocess.DEVNULL).wait()
    time.sleep(300)

call_isolated_each(escapes, [(sys.argv[1],)], timeout=120.0)
"""


@needs_setsid
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_a_caller_ended_mid_call_leaves_no_setsid_process(tmp_path, how):
    """Ctrl-C in the caller, or the caller killed outright, while a call runs: the server
    kills what the call left, those that left with setsid too (before, the sleeper outlived
    the harness: found by a breaker; kill -9 fails without PR_SET_PDEATHSIG)."""
    marker = tmp_path / "sleeper"
    caller = subprocess.Popen([sys.executable, "-c", _INTERRUPTED, str(marker)])
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    sleeper = int(marker.read_text())
    caller.send_signal(how)
    caller.wait(timeout=30)
    deadline = time.monotonic() + 5
    while _alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(sleeper)
    if alive:
        os.kill(sleeper, signal.SIGKILL)
    assert not alive, f"the sleeper {sleeper} outlived its interrupted caller"
