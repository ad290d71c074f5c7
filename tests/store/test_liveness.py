"""Whether a suite run's driver lives: after ``kill -9`` the next run marks the dead parent
KILLED."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.store.tracking import Tracker

HARNESS = str(Path(sys.executable).with_name("harness"))


SLOW = """
name: killed
timeout: 2m
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 3}}]
    methods: [mean, {name: sleepy, params: {seconds: 60}}]
    metrics: [abs-error]
"""


def _start(toy_env, tmp_path, store):
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


def _parents(tracker, experiment):
    runs = tracker.client.search_runs([experiment], "tags.`harness.kind` = 'suite'")
    return [r.info.status for r in runs]


def test_after_kill_9_the_next_run_marks_the_dead_parent_killed(toy_env, tmp_path, store):
    process, tracker, experiment, suite = _start(toy_env, tmp_path, store)
    dead_parent = tracker.latest_suite_run(experiment)
    # what a kill while a cell is being logged leaves: a RUNNING cell run with no status
    half = tracker.client.create_run(
        experiment,
        tags={"mlflow.parentRunId": dead_parent, "harness.kind": "cell", "harness.cell_hash": "x"},
    )
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert _parents(tracker, experiment) == ["RUNNING"]  # what kill -9 leaves behind
    assert "x" not in set(tracker.results(experiment)["cell_hash"])  # readers ignore it
    again = subprocess.run(
        [HARNESS, "run", str(suite), "--tracking-uri", store, "--dry-run"],
        env=toy_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0
    suite.write_text(textwrap.dedent(SLOW).replace("seconds: 60", "seconds: 0"))
    rerun = subprocess.run(
        [HARNESS, "run", str(suite), "--tracking-uri", store, "--report-dir", str(tmp_path)],
        env=toy_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"Marked run {dead_parent} KILLED" in rerun.stdout
    statuses = {r.info.run_id: r.info.status for r in tracker.client.search_runs([experiment])}
    assert statuses[dead_parent] == "KILLED"
    assert tracker.client.get_run(half.info.run_id).info.lifecycle_stage == "deleted"
