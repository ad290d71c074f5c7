"""The experiment link harness prints opens a runs table with metric columns, no clicks.

MLflow 3's runs table hides metric columns until they are picked; harness saves a view
(experiment tag ``mlflow.sharedViewState.harness-metrics``) that picks them and links to it
(``viewStateShareKey``). The page is rendered in headless Chromium and its DOM searched.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess

import pytest
from helpers import CHROMIUM_FLAGS, free_port, start_ui

from harness.runs.runner import run_suite
from harness.store import layout, tracking
from harness.suites.loading import load_suite

SUITE = """
name: ui-columns
seeds: [0]
runs:
  - task: toy
    datasets: [{name: noise, grid: {n: [3, 30]}}]
    methods: [mean]
    metrics: [abs-error, stats]
"""


def _view(tracker: tracking.Tracker, experiment_id: str) -> dict:
    """The saved view ``ui_path`` links to, as the MLflow UI reads it from the experiment."""
    key = "mlflow.sharedViewState." + layout.ui_path(experiment_id).split("viewStateShareKey=")[1]
    envelope = json.loads(tracker.client.get_experiment(experiment_id).tags[key])
    return json.loads(envelope["state"])


def test_saved_view_picks_every_metric_and_exists_before_any(registry, store, write_suite):
    tracker = tracking.Tracker(store)
    failing = SUITE.replace("ui-columns", "all-fail").replace("[mean]", "[boom]")
    outcome = run_suite(load_suite(write_suite(failing), registry), registry, tracker)
    view = _view(tracker, outcome.experiment_id)  # no metric logged, yet the link's view exists
    assert view["selectedColumns"] == [] and view["orderByKey"] != "attributes.start_time"
    outcome = run_suite(load_suite(write_suite(SUITE), registry), registry, tracker)
    view = _view(tracker, outcome.experiment_id)
    metrics = ["metrics.`abs-error`", "metrics.`stats.max`", "metrics.`stats.min`"]
    assert view["selectedColumns"] == metrics  # time.* left out
    # sorted by anything but start time, MLflow lists the cells flat, not under the suite run
    assert view["orderByKey"] == "tags.`mlflow.runName`"


@pytest.mark.slow
def test_printed_link_shows_metric_columns_of_the_runs(registry, store, write_suite, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    tracker = tracking.Tracker(store)
    outcome = run_suite(load_suite(write_suite(SUITE), registry), registry, tracker)
    results = tracker.results(outcome.experiment_id)
    value = float(results.loc[results["dataset.n"].astype(str) == "3", "abs-error"].iloc[0])

    port = free_port()
    log = (tmp_path / "ui.err").open("w")
    ui = start_ui(store, port, log)
    try:
        ready = ui.stdout.readline()  # printed once the UI answers
        assert ready.startswith("MLflow UI on"), (tmp_path / "ui.err").read_text()
        base = f"http://127.0.0.1:{port}"
        # the link `harness run` and `harness status` print, pointed at this UI's port
        link = layout.ui_link(base, outcome.experiment_id)
        profile = tmp_path / "profile"
        dom = subprocess.run(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", link],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        ).stdout
    finally:
        ui.send_signal(signal.SIGTERM)
        ui.wait(30)
        log.close()
    assert "Run Name" in dom, f"no runs table on {link}"
    for column in ("abs-error", "stats.min", "stats.max"):
        assert f">{column}<" in dom, f"no {column} column header on {link}"
    assert "noise[n=3," in dom, f"the n=3 cell has no row on {link} (under a collapsed parent?)"
    # the cell's value, as the grid writes it (JavaScript's shortest round-trip decimal)
    assert repr(value)[:8] in dom, f"abs-error {value!r} of the n=3 run not shown on {link}"
