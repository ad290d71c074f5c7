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
