"""End to end: ``harness run suites/smoke.yaml`` through the CLI with the installed paper
plugins, against a temporary store; then what landed in MLflow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import mlflow
import pytest

ROOT = Path(__file__).resolve().parents[1]
TASKS = {
    "fair-regression",
    "gmm-testing",
    "weak-features",
    "margin-qml",
    "bandit-safe-regret",
    "label-noise",
    "icl-gmm",
    "ftrl-shocks",
    "lsmooth-gd",
    "equivariant-ntk",
    "els-diffusion",
}


@pytest.mark.slow
def test_smoke_suite_runs_every_plugin_end_to_end(tmp_path, store):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MLFLOW_TRACKING_URI", "HARNESS_DISABLE_PLUGINS")
    }
    harness = str(Path(sys.executable).parent / "harness")
    result = subprocess.run(
        [
            harness,
            "run",
            str(ROOT / "suites" / "smoke.yaml"),
            "-j",
            "2",
            "--tracking-uri",
            store,
            "--report-dir",
            str(tmp_path / "reports"),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    client = mlflow.MlflowClient(store)
    # smoke.yaml only includes: each plugin's smoke suite is its own experiment
    experiments = {e.name: e.experiment_id for e in client.search_experiments()}
    assert {f"{task}-smoke" for task in TASKS} <= set(experiments)
    assert "smoke" not in experiments
    runs = client.search_runs(list(experiments.values()), max_results=1000)
    cells = [r for r in runs if r.data.tags["harness.kind"] == "cell"]
    assert {r.data.params["task"] for r in cells} == TASKS
    assert {r.data.tags["harness.status"] for r in cells} <= {"ok", "skipped"}
    ok = [r for r in cells if r.data.tags["harness.status"] == "ok"]
    assert {r.data.params["task"] for r in ok} == TASKS  # every plugin produced results
    assert all(r.data.metrics for r in ok)
    parents = [r for r in runs if r.data.tags["harness.kind"] == "suite"]
    assert len(parents) == len(TASKS) and {p.info.status for p in parents} == {"FINISHED"}
    report = tmp_path / "reports" / "smoke"
    assert (report / "report.html").stat().st_size > 1000 and (report / "report.md").exists()
    assert list(report.glob("*.png")), "no plugin report produced a plot"
    for parent in parents:
        artifacts = {a.path for a in client.list_artifacts(parent.info.run_id)}
        assert {"suite.yaml", "report"} <= artifacts
    # the first minute checks something: at least two claims decided, none in error
    verdicts = json.loads((report / "claims.json").read_text())
    decided = [v["claim"] for v in verdicts if v["status"] in ("reproduced", "not-reproduced")]
    assert len(decided) >= 2, [(v["claim"], v["status"]) for v in verdicts]
    assert not [v for v in verdicts if v["status"] == "error"]


def test_the_readme_quotes_one_time_per_make_command_and_tallies_from_its_logs():
    """Each ``make X: T`` and tally line the README quotes is one that make printed (the
    logs committed under docs/figures), at most one time per command, and the smoke's tally
    counts the smoke suite's cells. Fails on the README before: ``2,289 ok, 90 skipped``
    against a suite of other size, printed by no committed run."""
    import re

    from harness.plugins.registry import build_registry
    from harness.suites.loading import load_suite

    readme = " ".join((ROOT / "README.md").read_text().split())
    logs = " ".join(
        " ".join(p.read_text().split()) for p in (ROOT / "docs" / "figures").glob("make-*.log")
    )
    times = re.findall(r"make (smoke|run|claims|test): (\d+ min \d+ s|\d+ s)", readme)
    assert times, "the README quotes no time make printed"
    commands = [command for command, _ in times]
    assert len(commands) == len(set(commands)), times
    for command, took in times:
        assert f"make {command}: {took}" in logs, (command, took)
    tallies = re.findall(r"[\d,]+ ok, \d+ skipped, \d+ failed, \d+ timed out in [\d.]+ s", readme)
    assert tallies and all(t in logs for t in tallies), tallies
    smoke_log = (ROOT / "docs" / "figures" / "make-smoke.log").read_text()
    logged = re.search(r"([\d,]+) ok, (\d+) skipped, (\d+) failed, (\d+) timed out", smoke_log)
    registry = build_registry()
    suite = load_suite(ROOT / "suites" / "smoke.yaml", registry)
    assert sum(int(n.replace(",", "")) for n in logged.groups()) == len(suite.cells)
    assert f"its {len(suite.cells)} cells" in readme
    run_log = (ROOT / "docs" / "figures" / "make-run.log").read_text()
    every = len(load_suite(ROOT / "suites" / "all.yaml", registry).cells)
    assert f"all: {every} cells, 0 already finished" in run_log
    assert f"the {every:,} cells of `suites/all.yaml`" in readme
