"""Whether a suite run's driver lives: after ``kill -9`` the next run marks the dead parent
KILLED."""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap

from helpers import HARNESS, SLOW, start_slow_run, suite_parents


def test_after_kill_9_the_next_run_marks_the_dead_parent_killed(toy_env, tmp_path, store):
    process, tracker, experiment, suite = start_slow_run(toy_env, tmp_path, store)
    dead_parent = tracker.latest_suite_run(experiment)
    # what a kill while a cell is being logged leaves: a RUNNING cell run with no status
    half = tracker.client.create_run(
        experiment,
        tags={"mlflow.parentRunId": dead_parent, "harness.kind": "cell", "harness.cell_hash": "x"},
    )
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert suite_parents(tracker, experiment) == ["RUNNING"]  # what kill -9 leaves behind
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
