"""The MLflow UI over a store written by a suite run: the REST API and a headless page."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from helpers import CHROMIUM_FLAGS, free_port, start_ui

from harness.runs.runner import run_suite
from harness.store.layout import ui_path
from harness.store.tracking import Tracker
from harness.suites.loading import load_suite

SUITE = """
name: ui-toy
seeds: [0, 1]
runs:
  - task: toy
    datasets: [{name: noise, grid: {n: [3, 30]}}]
    methods: [mean]
    metrics: [abs-error, stats, path]
"""


def _api(base: str, endpoint: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{base}/api/2.0/mlflow/{endpoint}", data=data, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def server(tmp_path_factory, _empty_store):
    sys.path.insert(0, str(Path(__file__).parents[1]))
    import toy_plugin

    from harness.plugins.registry import build_registry

    folder = tmp_path_factory.mktemp("ui")
    shutil.copy(_empty_store, folder / "mlflow.db")
    uri = f"sqlite:///{folder}/mlflow.db"
    (folder / "suite.yaml").write_text(SUITE)
    registry = build_registry({"toy": toy_plugin}, entry_points=False)
    outcome = run_suite(load_suite(folder / "suite.yaml", registry), registry, Tracker(uri))
    port = free_port()
    log = (folder / "ui.err").open("w")
    process = start_ui(uri, port, log)
    base = f"http://127.0.0.1:{port}"
    try:
        first = process.stdout.readline()  # harness ui prints its URL once the UI answers
        if not first:
            process.wait(10)
            errors = (folder / "ui.err").read_text()
            pytest.fail(f"harness ui exited {process.returncode}: {errors}")
        assert first.startswith(f"MLflow UI on {base}/#/experiments"), first
        with urllib.request.urlopen(f"{base}/health", timeout=5) as answer:  # answering now
            assert answer.status == 200
        group = psutil.Process(process.pid).children(recursive=True)
        assert group, "harness ui started no server"
    except BaseException:  # stop the UI whatever went wrong
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        raise
    yield base, outcome, uri
    process.send_signal(signal.SIGTERM)  # as a service manager or `timeout` would stop it
    process.wait(30)
    _, alive = psutil.wait_procs(group, timeout=10)
    log.close()
    assert process.returncode == 0 and not alive, f"left running: {alive}"
    errors = (folder / "ui.err").read_text()
    assert "DeprecationWarning" not in errors and "Traceback" not in errors, errors


def test_ui_of_a_tracking_server_prints_its_address(server):
    base = server[0]
    harness = str(Path(sys.executable).parent / "harness")
    result = subprocess.run(
        [harness, "ui", "--tracking-uri", base.replace("http://", "http://ann:pw-77ab@")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert f"{base}/#/experiments" in result.stdout and "pw-77ab" not in result.stdout


def test_ui_of_an_unreachable_server_exits_2(tmp_path):
    harness = str(Path(sys.executable).parent / "harness")
    tic = time.monotonic()
    result = subprocess.run(
        [harness, "ui", "--tracking-uri", f"http://127.0.0.1:{free_port()}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and time.monotonic() - tic < 15
    assert "Cannot reach" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_rest_api_shows_experiment_parent_and_child_runs(server):
    base, outcome, _ = server
    experiment = _api(base, "experiments/get-by-name?experiment_name=ui-toy")["experiment"]
    assert experiment["experiment_id"] == outcome.experiment_id
    runs = _api(
        base, "runs/search", {"experiment_ids": [outcome.experiment_id], "max_results": 100}
    )["runs"]
    tags = [{t["key"]: t["value"] for t in r["data"].get("tags", [])} for r in runs]
    parents = [r for r, t in zip(runs, tags, strict=True) if t["harness.kind"] == "suite"]
    cells = [(r, t) for r, t in zip(runs, tags, strict=True) if t["harness.kind"] == "cell"]
    assert [p["info"]["run_id"] for p in parents] == [outcome.parent_run_id]
    assert len(cells) == 4
    for run, tag in cells:
        assert tag["mlflow.parentRunId"] == outcome.parent_run_id
        params = {p["key"]: p["value"] for p in run["data"]["params"]}
        assert params["dataset"] == "noise" and params["method"] == "mean"
        assert params["dataset.n"] in {"3", "30"}
        metrics = {m["key"] for m in run["data"]["metrics"]}
        assert {"abs-error", "stats.min", "stats.max", "path"} <= metrics


@pytest.mark.slow
def test_ui_experiment_page_renders_in_headless_chromium(server, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    base, outcome, _ = server
    flags = [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    page = base + ui_path(outcome.experiment_id)
    shot = tmp_path / "experiment.png"
    subprocess.run(
        [chromium, *flags, f"--screenshot={shot}", page],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert shot.exists() and shot.stat().st_size > 10_000
    dom = subprocess.run(
        [chromium, *flags, "--dump-dom", page],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    parent = _api(base, f"runs/get?run_id={outcome.parent_run_id}")["run"]["info"]["run_name"]
    assert parent in dom  # the runs table (not the GenAI overview) lists the suite's parent run


def test_ui_logs_beside_the_store_not_in_the_temporary_folder(server):
    """Fails with the log in /tmp (harness-ui-PORT.log), where it used to go."""
    import tempfile

    base, _, uri = server
    port = base.rsplit(":", 1)[1]
    log = Path(uri.removeprefix("sqlite:///")).parent / f"ui-{port}.log"
    assert log.is_file() and "Traceback" not in log.read_text()
    assert not (Path(tempfile.gettempdir()) / f"harness-ui-{port}.log").exists()
