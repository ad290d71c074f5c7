"""Broken plugins and refused results (issue 12, item 6): each fault is reported once with
the plugin, the hook and the way out; a suite that does not use the broken plugin still
runs; a cell whose results MLflow refuses is recorded as failed and the suite goes on."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import toy_plugin
from fake_plugins import install_fake_plugin

from harness import Metric, hookimpl
from harness.errors import PluginError
from harness.plugins.registry import build_registry
from harness.runs.runner import run_suite
from harness.store.tracking import Tracker
from harness.suites.loading import load_suite

HARNESS = str(Path(sys.executable).with_name("harness"))


class RaisingHook:
    @hookimpl
    def harness_methods(self):
        raise RuntimeError("database of weights not found")


class NonIterableHook:
    @hookimpl
    def harness_metrics(self):
        return 42


class BareClassHook:
    @hookimpl
    def harness_datasets(self):
        return dict  # the class itself, not a list of classes (iterable only as a type)


@pytest.mark.parametrize(
    ("plugin", "words"),
    [
        (RaisingHook(), ["'bad'", "harness_methods()", "RuntimeError", "database of weights"]),
        (NonIterableHook(), ["'bad'", "harness_metrics()", "returned 42", "list of classes"]),
        (BareClassHook(), ["harness_datasets()", "list of classes", "e.g. [dict]"]),
    ],
)
def test_a_broken_hook_leaves_its_plugin_out_and_the_others_work(plugin, words):
    registry = build_registry({"toy": toy_plugin, "bad": plugin}, entry_points=False)
    assert "bad" not in registry.plugins and "toy" in registry.plugins
    for word in [*words, "HARNESS_DISABLE_PLUGINS=bad"]:
        assert word in registry.broken["bad"]
    assert "mean" in registry.names("method", "toy")
    with pytest.raises(PluginError, match="harness_"):
        build_registry({"toy": toy_plugin, "bad": plugin}, entry_points=False, strict=True)


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


class LongKey(Metric):
    """A dict metric whose key is longer than MLflow allows (250 characters).

    Source: test fixture.
    """

    name = "long-key"
    task = "toy"

    def compute(self, data, output: float) -> dict[str, float]:
        return {"k" * 300: 1.0}


class LongKeyPlugin:
    @hookimpl
    def harness_metrics(self):
        return [LongKey]


def test_a_cell_whose_results_mlflow_refuses_is_failed_and_the_suite_goes_on(write_suite, store):
    registry = build_registry({"toy": toy_plugin, "long": LongKeyPlugin()}, entry_points=False)
    path = write_suite(
        textwrap.dedent("""
        name: refused
        seeds: [0, 1]
        runs:
          - task: toy
            datasets: [noise]
            methods: [mean]
            metrics: [abs-error]
          - task: toy
            datasets: [noise]
            methods: [{name: mean, params: {shift: 1.0}}]
            metrics: [long-key]
        """)
    )
    tracker = Tracker(store)
    outcome = run_suite(load_suite(path, registry), registry, tracker)
    assert outcome.ran == 4  # before: the driver crashed at the first refused cell
    assert len(outcome.problems) == 2
    assert all("refused" in result.reason for _, result in outcome.problems)
    runs = tracker.client.search_runs([outcome.experiment_id], "tags.`harness.kind` = 'cell'")
    assert sorted(r.info.status for r in runs) == ["FAILED", "FAILED", "FINISHED", "FINISHED"]
    parent = tracker.client.get_run(outcome.parent_run_id)
    assert parent.info.status == "FAILED"  # not left RUNNING


def test_a_tracking_server_lost_mid_run_exits_2_saying_so_and_keeps_what_was_logged(
    registry, write_suite, store, monkeypatch, capsys
):
    """MLflow gives up on a server that stopped answering: before, ~280 lines of traceback
    and exit 1 (read as 'some cells failed'); a refusal of one cell's values stays a failed
    cell. Now exit 2 with one line that says what happened and how to resume."""
    from mlflow.exceptions import MlflowException

    from harness import cli
    from harness.store.tracking import connection_lost

    lost = MlflowException(
        "API request to http://127.0.0.1:55000/api/2.0/mlflow/runs/create failed with"
        " exception HTTPConnectionPool(host='127.0.0.1', port=55000): Max retries exceeded"
    )
    refused = MlflowException("Param value 'x' had length 7000, which exceeded length limit")
    assert connection_lost(lost) and not connection_lost(refused)
    try:
        import requests

        raise RuntimeError("writer") from requests.exceptions.ConnectionError("refused")
    except RuntimeError as err:
        assert connection_lost(err)

    suite = write_suite(
        "name: lost\nseeds: [0, 1, 2]\nruns:\n  - {task: toy, datasets: [noise], methods: [mean]}\n"
    )
    logged = []
    real = Tracker.log_cell

    def log_then_lose(self, *args, **kwargs):
        if logged:
            raise lost
        logged.append(real(self, *args, **kwargs))

    monkeypatch.setattr(Tracker, "log_cell", log_then_lose)
    args = ["run", str(suite), "--tracking-uri", store, "-j", "0"]
    with pytest.raises(SystemExit) as exit_:
        cli.main([*args, "--report-dir", str(suite.parent / "r")], registry=registry)
    err = capsys.readouterr().err
    assert exit_.value.code == 2, err
    assert "the tracking server stopped answering" in " ".join(err.split())
    assert "Max retries exceeded" in err and "Traceback" not in err
    assert len(Tracker(store).results(Tracker(store).experiment_id("lost"))) == 1
