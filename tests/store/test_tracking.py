from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import mlflow
import numpy as np
import pytest
import toy_plugin
from helpers import TOY_CLAIMS_SUITE, call_main

from harness import Metric, cli, hookimpl
from harness.components import Curve
from harness.plugins.registry import build_registry
from harness.runs.cell import CellResult
from harness.runs.executors.local import LocalExecutor
from harness.runs.runner import run_suite
from harness.store.layout import CURVE_POINTS
from harness.store.tracking import Tracker
from harness.suites.loading import load_suite

SUITE = """
name: tracked
seeds: [0, 1]
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 1500}}]
    methods: [mean, boom]
    metrics: [abs-error, stats, path, never]
"""


@pytest.fixture(scope="module")
def tracked(tmp_path_factory, _empty_store):
    import shutil
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1]))
    import toy_plugin

    from harness.plugins.registry import build_registry

    registry = build_registry({"toy": toy_plugin}, entry_points=False)
    folder = tmp_path_factory.mktemp("tracked")
    shutil.copy(_empty_store, folder / "mlflow.db")
    store = f"sqlite:///{folder}/mlflow.db"
    (folder / "suite.yaml").write_text(SUITE)
    suite = load_suite(folder / "suite.yaml", registry)
    tracker = Tracker(store)
    experiment = tracker.experiment_id(suite.name, create=True)
    parent = tracker.start_suite(experiment, suite, {"jobs": 1})

    def log(cell, result):
        tracker.log_cell(experiment, parent, cell, result, registry.plugins, "abc123")

    LocalExecutor(registry, 1).run(suite.cells, log)
    tracker.end_suite(parent, "FINISHED")
    return suite, tracker, experiment, parent, store


def test_layout_has_parent_and_child_runs_with_params_metrics_tags(tracked, monkeypatch):
    _, _, experiment, parent, store = tracked
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    runs = mlflow.search_runs([experiment], output_format="pandas")
    parents = runs[runs["tags.harness.kind"] == "suite"]
    cells = runs[runs["tags.harness.kind"] == "cell"]
    assert list(parents["run_id"]) == [parent] and len(cells) == 4
    assert set(cells["tags.mlflow.parentRunId"]) == {parent}
    ok = cells[cells["tags.harness.status"] == "ok"]
    assert len(ok) == 2 and set(ok["status"]) == {"FINISHED"}
    row = ok.iloc[0]
    assert row["params.task"] == "toy" and row["params.dataset"] == "noise"
    assert row["params.dataset.n"] == "1500" and row["params.method.kind"] == "plain"
    assert row["params.dataset.n_drawn"] == "1500" and row["params.seed"] in {"0", "1"}
    assert {"metrics.abs-error", "metrics.stats.min", "metrics.path"} <= set(ok.columns)
    assert row["tags.harness.plugin"] == "toy" and len(row["tags.harness.cell_hash"]) == 20
    assert row["tags.harness.skipped.never"] == "never applies to toy data"
    assert row["tags.mlflow.source.git.commit"] == "abc123"
    failed = cells[cells["tags.harness.status"] == "failed"]
    assert set(failed["status"]) == {"FAILED"} and "boom" in failed.iloc[0]["tags.harness.reason"]


def test_curve_is_logged_thinned_and_whole(tracked):
    _, tracker, experiment, _, _ = tracked
    results = tracker.results(experiment)
    run_id = results[results["status"] == "ok"]["run_id"].iloc[0]
    history = tracker.client.get_metric_history(run_id, "path")
    assert len(history) == CURVE_POINTS <= 1000  # 1,500 points thinned; DESIGN allows 1,000
    curve = tracker.curves(run_id)["path"]
    assert curve.values.size == 1500 and curve.steps[-1] == 1500
    assert history[-1].value == pytest.approx(curve.values[-1])


def test_failed_cell_keeps_its_traceback(tracked):
    _, tracker, experiment, _, _ = tracked
    runs = tracker.client.search_runs([experiment], "tags.`harness.status` = 'failed'")
    path = tracker.client.download_artifacts(runs[0].info.run_id, "error.txt")
    with open(path) as text:
        assert "RuntimeError: boom" in text.read()


def test_only_finished_cells_count_for_resume(tracked):
    suite, tracker, experiment, _, _ = tracked
    ok = {c.cell_hash for c in suite.cells if c.method == "mean"}
    assert tracker.finished_hashes(experiment) == ok


def test_many_metrics_are_logged_in_batches_within_mlflow_limits(store, registry, write_suite):
    suite = load_suite(write_suite(SUITE), registry)
    tracker = Tracker(store)
    experiment = tracker.experiment_id("batches", create=True)
    parent = tracker.start_suite(experiment, suite, {})
    metrics = {f"m{i}": float(i) for i in range(2500)}
    curves = {"long": Curve(np.arange(5000.0))}
    result = CellResult(
        suite.cells[0].cell_hash, "ok", metrics=metrics, curves=curves, start_ms=1, end_ms=2
    )
    run_id = tracker.log_cell(experiment, parent, suite.cells[0], result, {}, None)
    data = tracker.client.get_run(run_id).data
    assert len([k for k in data.metrics if k.startswith("m")]) == 2500


SLEEPY_SUITE = """
name: twice
seeds: [0, 1, 2, 3]
runs:
  - task: toy
    datasets: [noise]
    methods: [{name: sleepy, params: {seconds: 1.5}}]
    metrics: [abs-error]
"""


@pytest.mark.slow
def test_same_suite_started_twice_on_a_fresh_store_runs_each_cell_once(toy_env, tmp_path):
    """Two real ``harness run`` at once on a store that does not exist yet: the store is
    created once (no crash in MLflow's schema migration), and one run refuses (exit 2)
    naming the other's pid and host, so no cell runs twice."""
    import socket
    import sys
    from pathlib import Path

    (tmp_path / "suite.yaml").write_text(SLEEPY_SUITE)
    store = f"sqlite:///{tmp_path}/store/mlflow.db"  # created by the runs themselves
    harness = str(Path(sys.executable).parent / "harness")
    runs = [
        subprocess.Popen(
            [harness, "run", "suite.yaml", "--tracking-uri", store, "--report-dir", f"r{i}"],
            env=toy_env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    codes = [run.returncode for run in runs]
    for out, err in outputs:
        assert "Traceback" not in out + err, out + err
    assert sorted(codes) == [0, 2], outputs
    winner, loser = (0, 1) if codes[0] == 0 else (1, 0)
    refusal = outputs[loser][1]
    assert "Suite 'twice' is already running" in " ".join(refusal.split())
    assert f"pid {runs[winner].pid} on {socket.gethostname()}" in refusal
    client = mlflow.MlflowClient(store)
    experiment = client.get_experiment_by_name("twice").experiment_id
    cells = client.search_runs([experiment], "tags.`harness.kind` = 'cell'", max_results=100)
    hashes = [run.data.tags["harness.cell_hash"] for run in cells]
    assert len(hashes) == 4 and len(set(hashes)) == 4  # every cell ran exactly once
    parents = client.search_runs([experiment], "tags.`harness.kind` = 'suite'")
    assert [p.info.status for p in parents] == ["FINISHED"]  # the refused run left nothing


def test_two_suites_started_at_once_on_a_fresh_store_both_land_whole(toy_env, tmp_path):
    """Two different suites started together on a store that does not exist yet: both
    write every cell and close their parent runs, and the database is sound. (Before the
    store was created in a child process, the creating run kept writing through the
    temporary file's write-ahead index after the rename: cells went missing and the file
    could end up malformed.)"""
    import sqlite3
    import sys

    store = f"sqlite:///{tmp_path}/store/mlflow.db"
    harness = str(Path(sys.executable).parent / "harness")
    runs = []
    for name in ("first", "second"):
        (tmp_path / f"{name}.yaml").write_text(SLEEPY_SUITE.replace("name: twice", f"name: {name}"))
        runs.append(
            subprocess.Popen(
                [
                    harness,
                    "run",
                    f"{name}.yaml",
                    "-j",
                    "2",
                    "--tracking-uri",
                    store,
                    "--report-dir",
                    f"r-{name}",
                ],
                env=toy_env,
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    with sqlite3.connect(f"{tmp_path}/store/mlflow.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    client = mlflow.MlflowClient(store)
    for name in ("first", "second"):
        experiment = client.get_experiment_by_name(name).experiment_id
        cells = client.search_runs([experiment], "tags.`harness.kind` = 'cell'")
        assert len(cells) == 4, name
        parents = client.search_runs([experiment], "tags.`harness.kind` = 'suite'")
        assert [p.info.status for p in parents] == ["FINISHED"], name


def test_losing_the_experiment_creation_race_returns_the_winners_id(store):
    """get-then-create is not atomic (MLflow #4123): a create that fails because another
    process created the experiment in between returns that experiment's id."""
    first, second = Tracker(store), Tracker(store)
    assert second.experiment_id("raced") is None  # second looked: not there yet
    created = first.experiment_id("raced", create=True)  # the other process wins
    real = second.client.get_experiment_by_name
    calls = []

    def stale_then_real(name):  # second's own get-then-create sees the stale answer first
        calls.append(name)
        return None if len(calls) == 1 else real(name)

    second.client.get_experiment_by_name = stale_then_real
    assert second.experiment_id("raced", create=True) == created


def test_a_store_killed_while_being_created_leaves_no_half_store(tmp_path, monkeypatch):
    """MLflow's SQLite migrations are not transactional: a kill during them used to leave a
    store that every later run refused. Now the store appears only once it is whole: the
    migrating child process is SIGKILLed once the temporary file has tables in it."""
    import signal
    import sqlite3

    from harness.store import mlflow_store
    from harness.store.tracking import Tracker

    uri = f"sqlite:///{tmp_path}/store/mlflow.db"

    class Killed(BaseException):
        pass

    def killed_during_migration(args, **kwargs):
        child = subprocess.Popen(args, env=kwargs.get("env"))
        partial = Path(args[-1].removeprefix("sqlite:///"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None:
            try:
                with sqlite3.connect(f"file:{partial}?mode=ro", uri=True) as db:
                    if db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] > 3:
                        break
            except sqlite3.Error:
                pass
            time.sleep(0.01)
        assert child.poll() is None, "the migration ended before it could be killed"
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(mlflow_store.subprocess, "run", killed_during_migration)
        with pytest.raises(Killed):
            Tracker(uri).client  # noqa: B018 - opening the store is the point
    assert list((tmp_path / "store").glob(".mlflow.db.creating-*"))  # the half schema
    assert not (tmp_path / "store" / "mlflow.db").exists()
    assert Tracker(uri).client.search_experiments()  # the next run creates it whole
    assert not list((tmp_path / "store").glob(".mlflow.db.creating-*"))


def test_a_described_fact_never_replaces_a_param():
    """``describe()`` returning a key that is also a param, with another value, is logged
    apart: two configurations (n=10, n=10000) stay two in every table."""
    from harness.store.layout import logged_params

    for n in (10, 10000):
        logged = logged_params({"dataset.n": n, "method.k": 1}, {"n": "sample", "rows": "7"})
        assert logged["dataset.n"] == n
        assert logged["dataset.described.n"] == "sample" and logged["dataset.rows"] == "7"
    same = logged_params({"dataset.n": 10}, {"n": "10"})
    assert same == {"dataset.n": 10}  # the same value: one column


def test_a_lost_race_on_the_ui_view_tag_is_retried_and_never_ends_the_run(store, monkeypatch):
    """Two runs starting at once on a tracking server can both insert the experiment's
    UI-view tag; the loser's insert failed with UniqueViolation and crashed its run
    (seen once in 13 concurrent starts on PostgreSQL). Now: retried once, then left for
    the next cell."""
    from mlflow.exceptions import MlflowException

    from harness.store.mlflow_store import MlflowStore

    monkeypatch.setenv("HARNESS_DIRECT_SQLITE", "0")  # as on a server: MLflow's client
    tracker = Tracker(store).open()
    assert isinstance(tracker.store, MlflowStore)
    experiment = tracker.client.create_experiment("race")
    calls = []
    real = tracker.client.set_experiment_tag

    def flaky(experiment_id, key, value):
        calls.append(key)
        if len(calls) == 1:
            raise MlflowException("duplicate key value violates unique constraint")
        real(experiment_id, key, value)

    tracker.client.set_experiment_tag = flaky
    assert tracker.store.set_experiment_tag(experiment, "k", "v") and len(calls) == 2
    assert tracker.client.get_experiment(experiment).tags["k"] == "v"
    tracker.client.set_experiment_tag = lambda *args: (_ for _ in ()).throw(MlflowException("down"))
    assert not tracker.store.set_experiment_tag(experiment, "k", "w")  # twice: no exception


@pytest.mark.parametrize("direct", ["1", "0"])
def test_a_run_logged_with_a_clock_behind_is_still_the_latest(
    direct, registry, write_suite, store, monkeypatch
):
    """Issue 30: the latest run of a cell is the one harness logged last (its
    ``harness.sequence``), not the one with the latest start time. A machine whose clock is
    a day behind logs a failure after a success; before, the older success hid it (the
    cell read ok and was never rerun)."""
    monkeypatch.setenv("HARNESS_DIRECT_SQLITE", direct)  # both backends
    suite = load_suite(write_suite(SUITE), registry)
    cell = suite.cells[0]
    tracker = Tracker(store)
    experiment = tracker.experiment_id(suite.name, create=True)
    parent = tracker.start_suite(experiment, suite, {})
    now = int(time.time() * 1000)
    ok = CellResult(cell.cell_hash, "ok", metrics={"abs-error": 1.0}, start_ms=now, end_ms=now)
    behind = now - 86_400_000
    failed = CellResult(cell.cell_hash, "failed", reason="boom", start_ms=behind, end_ms=behind)
    tracker.log_cell(experiment, parent, cell, ok, {}, None)
    tracker.log_cell(experiment, parent, cell, failed, {}, None)
    assert tracker.results(experiment)["status"].tolist() == ["failed"]
    assert cell.cell_hash not in tracker.finished_hashes(experiment)
    assert Tracker(store).finished_hashes(experiment) == set()  # a later command reads the same
    tracker = Tracker(store)  # a later command numbers after what is stored
    tracker.log_cell(experiment, parent, cell, ok, {}, None)
    assert tracker.finished_hashes(experiment) == {cell.cell_hash}


def test_ui_run_names_lead_with_the_method(registry, write_suite):
    """Issue 30: a dataset's runs differ at the start of their names (the UI cuts long
    names at the end, so names that began with the dataset looked alike)."""
    from harness.store.layout import run_name

    suite = load_suite(write_suite(SUITE), registry)
    names = {cell.method: run_name(cell) for cell in suite.cells}
    assert names["mean"].startswith("mean[kind=plain,shift=0.0]-noise[n=1500,scale=1.0]-s")
    assert names["boom"].startswith("boom-noise[n=1500,scale=1.0]-s")


def test_the_export_names_the_plugin_version_and_fingerprint(tracked):
    """Issue 30: `harness results` names each cell's plugin, its version and its code
    fingerprint; before, it named the git commit of the harness repository the driver ran
    in (``abc123`` here), which says nothing of the plugin's code."""
    from harness.reports.aggregates import tidy_results

    suite, tracker, experiment, _, _ = tracked
    table = tidy_results(tracker.results(experiment))
    fingerprint = dict(suite.cells[0].code)["toy"]
    assert set(table["plugin"]) == {"toy"} and table["plugin_version"].notna().all()
    assert set(table["plugin_fingerprint"]) == {fingerprint}
    assert "git_commit" not in table.columns


@pytest.mark.parametrize("direct", ["1", "0"], ids=["direct-sqlite", "mlflow"])
def test_experiments_describe_their_suite_and_parent_runs_their_verdicts(
    registry, capsys, tmp_path, monkeypatch, _empty_store, direct
):
    """Each experiment's description (``mlflow.note.content``) is its suite file's, an
    included suite's too, shown as text; the parent run's is the claims table. Fails
    without the fix: no experiment or run had the tag (descriptions were empty)."""
    monkeypatch.setenv("HARNESS_DIRECT_SQLITE", direct)
    shutil.copy(_empty_store, tmp_path / "mlflow.db")
    store = f"sqlite:///{tmp_path}/mlflow.db"
    (tmp_path / "inner.yaml").write_text(TOY_CLAIMS_SUITE)
    (tmp_path / "top.yaml").write_text(
        "name: toy-top\ndescription: 'All [toy](javascript:alert(1)) suites'\n"
        "include: [inner.yaml]\n"
    )
    code, _, err = call_main(registry, capsys, "run", str(tmp_path / "top.yaml"), "-j", "0",
                             "--tracking-uri", store,
                             "--report-dir", str(tmp_path / "r"))  # fmt: skip
    assert code == 0, err
    import mlflow

    client = mlflow.MlflowClient(store)
    inner = client.get_experiment_by_name("toy-claims")
    assert inner.tags["mlflow.note.content"] == "A toy suite"
    (parent,) = client.search_runs(
        [inner.experiment_id], "tags.`harness.kind` = 'suite'", max_results=5
    )
    note = parent.data.tags["mlflow.note.content"]
    assert note.startswith("| claim | status | estimate [interval] |\n| --- | --- | --- |\n")
    stored = json.loads((tmp_path / "r" / "toy-top" / "claims.json").read_text())
    assert len(stored) >= 2
    for verdict in stored:
        row = next(line for line in note.splitlines() if line.startswith(f"| {verdict['claim']}"))
        assert f"| {verdict['status']}" in row
    assert "claims.md" in {a.path.split("/")[-1] for a in client.list_artifacts(
        parent.info.run_id, "report")}  # fmt: skip
    assert client.get_experiment_by_name("toy-top") is None  # top.yaml only includes


def test_a_long_claims_table_is_cut_to_what_mlflow_accepts_on_whole_lines():
    from harness.store.layout import NOTE_LIMIT, note

    table = "\n".join(f"| claim-{i} | reproduced | 1.0 [0.9, 1.1] |" for i in range(400))
    cut = note(table)
    assert len(cut) <= NOTE_LIMIT and cut.endswith("see the report's claims.md")
    assert all(line.endswith("|") for line in cut.splitlines()[:-2])


def test_a_suite_description_is_shown_in_the_ui_as_text():
    from harness.store.layout import plain

    assert plain("[x](javascript:1) <img> a|b") == r"\[x\](javascript:1) \<img\> a\|b"


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


def test_an_included_suite_logs_to_its_own_experiment_with_unique_run_names(
    registry, write_suite, store, tmp_path, capsys
):
    from harness.runs.runner import run_suite
    from harness.store.tracking import Tracker
    from harness.suites.loading import load_suite

    write_suite(
        """
        name: paper-b
        seeds: [0, 1]
        runs:
          - task: toy
            datasets: [{name: noise, grid: {n: [3, 4]}}]
            methods: [mean]
            metrics: [abs-error]
        """,
        "b.yaml",
    )
    top = write_suite(
        """
        name: everything
        include: [b.yaml]
        runs:
          - task: toy
            datasets: [noise]
            methods: [{name: mean, params: {shift: 1.0}}]
            metrics: [abs-error]
        """,
        "top.yaml",
    )
    suite = load_suite(top, registry)
    tracker = Tracker(store)
    outcome = run_suite(suite, registry, tracker)
    assert list(outcome.experiments) == ["paper-b", "everything"]
    paper = tracker.client.search_runs(
        [tracker.experiment_id("paper-b")], "tags.`harness.kind` = 'cell'"
    )
    assert len(paper) == 4 and all(r.data.params["method.shift"] == "0.0" for r in paper)
    names = [r.info.run_name for r in paper]
    assert len(set(names)) == 4 and any("n=3" in n for n in names)
    assert len(tracker.suite_results(suite)) == 5
    # running the included suite alone resumes the same cells
    again = run_suite(load_suite(suite.path.with_name("b.yaml"), registry), registry, tracker)
    assert again.ran == 0
    # `harness report` of every suite: the top suite's report holds the included suite's
    # cells too, as its run's report does (before: 1 cell, and "4 of 5 cells have no
    # result"); the included suite's holds its own 4

    capsys.readouterr()
    cli.main(["report", "--tracking-uri", store, "--out", str(tmp_path / "r")], registry=registry)
    printed = capsys.readouterr()
    assert "everything: 5 cells ->" in printed.out and "paper-b: 4 cells ->" in printed.out
    assert printed.err == "", printed.err
