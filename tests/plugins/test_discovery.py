"""Installed plugins found and imported, each import guarded: a plugin that raises, exits,
calls ``os._exit`` or raises KeyboardInterrupt at import is left out and the others work; a
real Ctrl-C while plugins load still stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import toy_plugin
from fake_plugins import install_fake_plugin

from harness.plugins.registry import build_registry

HARNESS = str(Path(sys.executable).with_name("harness"))


class _EntryPoint:
    def __init__(self, name: str, load) -> None:
        self.name, self.value, self.dist, self.load = name, f"{name}_module", None, load


def test_a_plugin_raising_keyboard_interrupt_at_import_is_left_out(monkeypatch):
    """Before: the KeyboardInterrupt ended every command (exit 130, 'Interrupted')."""

    def load():
        raise KeyboardInterrupt

    monkeypatch.setattr(
        "harness.plugins.discovery.entry_points", lambda group: [_EntryPoint("ki", load)]
    )
    registry = build_registry({"toy": toy_plugin})
    assert "raised KeyboardInterrupt while imported (no Ctrl-C" in registry.broken["ki"]
    assert "mean" in registry.names("method", "toy")


def test_a_real_ctrl_c_while_plugins_load_still_stops(monkeypatch):
    def load():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the signal arrives first

    monkeypatch.setattr(
        "harness.plugins.discovery.entry_points", lambda group: [_EntryPoint("slow", load)]
    )
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            build_registry({"toy": toy_plugin})
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_plugin_calling_os_exit_at_import_is_left_out(monkeypatch):
    """Before: os._exit(0) ended harness at once, exit 0 and no word (pytest too: this test
    killed the test run)."""
    real = os._exit

    def load():
        os._exit(0)

    monkeypatch.setattr(
        "harness.plugins.discovery.entry_points", lambda group: [_EntryPoint("ex", load)]
    )
    registry = build_registry({"toy": toy_plugin})
    assert "called os._exit(0) while imported" in registry.broken["ex"]
    assert os._exit is real


def test_plugins_broken_at_import_in_every_way_leave_the_others_working(toy_env, tmp_path):
    """Through a real `harness list` with installed plugins. Before: exit 0 and nothing
    printed (os._exit at import), or exit 130 (KeyboardInterrupt), or a traceback (the
    generator hook)."""
    site = Path(toy_env["PYTHONPATH"].split(os.pathsep)[0])
    install_fake_plugin(site, "exiter", "exiter_plugin", "import os\nos._exit(0)\n")
    install_fake_plugin(site, "ctrl-c", "ctrl_c_plugin", "raise KeyboardInterrupt\n")
    generator = (
        "from harness import hookimpl\n\n\n@hookimpl\ndef harness_methods():\n"
        "    yield from ()\n    raise RuntimeError('weights not found')\n"
    )
    install_fake_plugin(site, "gen", "gen_plugin", generator)
    result = subprocess.run(
        [HARNESS, "list"], env=toy_env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    err = " ".join(result.stderr.split())
    assert "plugin 'exiter' left out" in err and "os._exit(0)" in err
    assert "plugin 'ctrl-c' left out" in err and "KeyboardInterrupt" in err
    assert "plugin 'gen' left out" in err and "weights not found" in err
    assert "mean" in result.stdout and "noise" in result.stdout


def test_a_plugin_that_exits_on_import_is_reported_and_the_suite_still_runs(
    toy_env, tmp_path, store
):
    site = Path(toy_env["PYTHONPATH"].split(os.pathsep)[0])
    install_fake_plugin(site, "exits", "exits_plugin", "import sys\nsys.exit(3)\n")
    listing = subprocess.run(
        [HARNESS, "list"], env=toy_env, capture_output=True, text=True, timeout=120
    )
    assert listing.returncode == 0  # before: exit 3, silently
    assert "plugin 'exits' left out" in listing.stderr and "SystemExit" in listing.stderr
    assert "HARNESS_DISABLE_PLUGINS=exits" in listing.stderr
    assert listing.stderr.count("plugin 'exits' left out") == 1
    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\nruns:\n  - {task: toy, datasets: [noise], methods: [mean]}\n")
    run = subprocess.run(
        [HARNESS, "run", str(suite), "--tracking-uri", store, "--report-dir", str(tmp_path)],
        env=toy_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 ok" in run.stdout.splitlines()[-1]
