"""Functions and constants the test modules share (fixtures are in conftest.py); the heavy
harness modules are imported where used, so importing this module costs nothing."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

HARNESS = str(Path(sys.executable).with_name("harness"))

TOY_CLAIMS_SUITE = """
name: toy-claims
description: "A toy suite"
seeds: [0, 1, 2, 3, 4, 5]
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 40}}]
    methods:
      - {name: mean, grid: {shift: [0.0, 1.0]}}
      - {name: mean, params: {kind: noisy}}
    metrics: [abs-error]
"""


def call_main(registry, capsys, *args: str) -> tuple[int, str, str]:
    """``harness ARGS`` in this process: ``(exit code, stdout, stderr)``."""
    from harness import cli

    code = 0
    try:
        cli.main(args, registry=registry)
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


RUN = "  - {task: toy, datasets: [noise], methods: [mean]}\n"

SUITE = f"name: s\nruns:\n{RUN}"

FRAGILE_RUN = (
    "  - {task: toy, datasets: [{name: noise, params: {n: 4}}], methods: [mean, fragile]}\n"
)


def run_args(suite: Path, store: str, reports: Path | str) -> list[str]:
    return ["run", str(suite), "--tracking-uri", store, "--report-dir", str(reports), "-j", "0"]


TWO_SEEDS = """
name: integrity
seeds: [0, 1]
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 4}}]
    methods: [mean, fragile]
    metrics: [abs-error, {name: scaled, params: {scale: SCALE}}]
"""


def run_tracked(registry, path, store, force=False):
    """Run the suite at ``path`` in this process: ``(tracker, outcome, notices)``."""
    from harness.runs.executors.local import LocalExecutor
    from harness.runs.runner import run_suite
    from harness.store.tracking import Tracker
    from harness.suites.loading import load_suite

    tracker = Tracker(store)
    notices: list[str] = []
    outcome = run_suite(
        load_suite(path, registry),
        registry,
        tracker,
        executor=LocalExecutor(registry, 1),
        force=force,
        listeners=[SimpleNamespace(harness_run_notice=lambda line: notices.append(line))],
    )
    return tracker, outcome, notices


SLOW = """
name: killed
timeout: 2m
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 3}}]
    methods: [mean, {name: sleepy, params: {seconds: 60}}]
    metrics: [abs-error]
"""


def start_slow_run(toy_env, tmp_path, store):
    """A `harness run` of SLOW in a subprocess, returned once its first (mean) cell is logged:
    ``(process, tracker, experiment, suite path)``."""
    from harness.store.tracking import Tracker

    suite = tmp_path / "killed.yaml"
    suite.write_text(textwrap.dedent(SLOW))
    cmd = [HARNESS, "run", str(suite), "--tracking-uri", store, "--report-dir", str(tmp_path)]
    process = subprocess.Popen(
        cmd, env=toy_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    tracker = Tracker(store)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # until the first (mean) cell is logged
        experiment = tracker.experiment_id("killed")
        if experiment and tracker.finished_hashes(experiment):
            return process, tracker, experiment, suite
        assert process.poll() is None, process.stdout.read()
        time.sleep(0.3)
    process.kill()
    pytest.fail("the first cell was not logged within 120 s")


def suite_parents(tracker, experiment):
    """The statuses of an experiment's suite (parent) runs."""
    runs = tracker.client.search_runs([experiment], "tags.`harness.kind` = 'suite'")
    return [r.info.status for r in runs]


def run_within(executor, cells, limit_s=90.0):
    """``{cell_hash: result}``, every cell with one result, within ``limit_s``."""
    results: dict = {}

    def keep(cell, result):
        assert cell.cell_hash not in results, "a cell got two results"
        results[cell.cell_hash] = result

    thread = threading.Thread(target=executor.run, args=(cells, keep), daemon=True)
    thread.start()
    thread.join(limit_s)
    assert not thread.is_alive(), f"the executor hung; results so far: {results}"
    assert set(results) == {c.cell_hash for c in cells}, "every cell gets exactly one result"
    return results


#: Headless chromium for a look at the MLflow UI (add ``--user-data-dir``).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,900",  # wide enough that the grid renders the metric columns
    "--virtual-time-budget=20000",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_ui(uri: str, port: int, log) -> subprocess.Popen:
    """`harness ui` of ``uri`` on ``port`` in a subprocess, its stderr to the open file ``log``."""
    harness = str(Path(sys.executable).parent / "harness")
    return subprocess.Popen(
        [harness, "ui", "--tracking-uri", uri, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
