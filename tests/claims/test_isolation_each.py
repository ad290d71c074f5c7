"""``call_isolated_each``: a family's claims in one forked child, each within its own time,
and a new child for the rest when one call ends, hangs or changes its process."""

from __future__ import annotations

import os
import sys
import time

from harness.claims.isolation import call_isolated_each


def _pid() -> int:
    return os.getpid()


def _exits() -> None:
    os._exit(0)


def _system_exit() -> None:
    sys.exit(3)


def _hangs() -> None:
    time.sleep(60)


def _moves() -> int:
    os.chdir("/")
    return os.getpid()


def _run(*functions):
    return call_isolated_each(lambda f: f(), [(f,) for f in functions], timeout=2.0)


def test_calls_share_one_child():
    first, second = _run(_pid, _pid)
    assert first.ok and second.ok
    assert first.value == second.value != os.getpid()


def test_a_call_that_ends_or_hangs_its_child_is_an_error_and_the_rest_go_on():
    before, ended, raised, hung, after = _run(_pid, _exits, _system_exit, _hangs, _pid)
    assert before.ok and after.ok
    assert "ended its process" in ended.error
    assert "SystemExit" in raised.error
    assert "took longer than 2 s" in hung.error
    assert after.value != before.value  # a new child for the calls after the hang


def test_a_call_that_changes_its_process_is_an_error_and_the_next_gets_a_new_child():
    here = os.getcwd()
    before, moved, after = _run(_pid, _moves, _pid)
    assert not moved.ok and "changed the working directory" in moved.error
    assert after.ok and after.value != before.value
    assert os.getcwd() == here
