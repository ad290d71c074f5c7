"""``harness.store.sqlite_direct`` writes what MLflow would: the same suite tracked once through
MLflow's client (``HARNESS_DIRECT_SQLITE=0``) and once directly reads back identically
through ``MlflowClient`` (runs, tags, params, latest metrics, metric histories, artifacts,
searches by metric, the experiment and its tags)."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from harness.runs.executors.local import LocalExecutor
from harness.runs.runner import run_suite
from harness.store import sqlite_direct
from harness.store.sqlite_direct import (
    SCHEMA_REVISION,
    DirectSqlite,
    UnsupportedWriteError,
    plain_key,
)
from harness.store.sqlite_store import SqliteStore
from harness.store.tracking import Tracker
from harness.suites.loading import load_suite

SUITE = """
name: direct
seeds: [0, 1]
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 600}}]
    methods: [mean, boom, skipper]
    metrics: [abs-error, stats, path, never]
"""

# Differ between any two runs by construction (ids, times, the driver's process).
_VOLATILE_TAGS = {"mlflow.parentRunId", "harness.pid", "harness.pid_start", "harness.heartbeat"}


def test_schema_revision_is_the_installed_mlflows_head():
    """An MLflow upgrade that changes the schema must fail here, not write wrong rows."""
    from mlflow.store.db.utils import _get_latest_schema_revision

    assert _get_latest_schema_revision() == SCHEMA_REVISION


def _track(folder: Path, template: Path, registry, monkeypatch, direct: bool) -> str:
    folder.mkdir()
    shutil.copy(template, folder / "mlflow.db")
    (folder / "suite.yaml").write_text(SUITE)
    monkeypatch.setenv("HARNESS_DIRECT_SQLITE", "1" if direct else "0")
    uri = f"sqlite:///{folder}/mlflow.db"
    tracker = Tracker(uri)
    assert isinstance(tracker.store, SqliteStore) == direct
    suite = load_suite(folder / "suite.yaml", registry)
    run_suite(suite, registry, tracker, executor=LocalExecutor(registry, 1))
    report = folder / "report"
    (report / "figures").mkdir(parents=True)
    (report / "report.md").write_text("# report\n")
    (report / "figures" / "a.svg").write_text("<svg/>")
    tracker.log_folder(tracker.latest_suite_run(tracker.experiment_id("direct")), report, "report")
    return uri


def _snapshot(uri: str) -> dict:
    """Everything MLflow's client shows of the store, minus ids and times."""
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("direct")
    runs = client.search_runs([experiment.experiment_id], max_results=1000)
    out = {
        "experiment": (experiment.lifecycle_stage, sorted(experiment.tags)),
        "artifact_location": experiment.artifact_location.rsplit("/", 2)[-1],
        "by_metric": len(
            client.search_runs([experiment.experiment_id], "metrics.`abs-error` >= 0")
        ),
        "runs": {},
    }
    for run in runs:
        info, data = run.info, run.data
        key = data.tags.get("mlflow.runName", "")[:-7] + data.tags["harness.kind"]
        if data.tags["harness.kind"] == "suite":
            key = "suite"
        history = {
            k: [(m.step, m.value) for m in client.get_metric_history(info.run_id, k)]
            for k in data.metrics
        }
        artifacts = sorted(
            f.path
            for top in client.list_artifacts(info.run_id)
            for f in ([top] if not top.is_dir else client.list_artifacts(info.run_id, top.path))
        )
        out["runs"][key] = {
            "info": (
                info.status,
                info.lifecycle_stage,
                info.user_id,
                info.run_name[:-7],
                info.artifact_uri.endswith(f"/{info.run_id}/artifacts"),
                info.end_time is not None and info.end_time >= info.start_time,
            ),
            "tags": {
                k: (v if k not in _VOLATILE_TAGS else "*")
                for k, v in data.tags.items()
                if k != "mlflow.runName" and k != "harness.suite_file"
            },
            "params": {k: v for k, v in data.params.items() if k != "suite"},
            "metrics": {k: v for k, v in data.metrics.items() if not k.startswith("time.")},
            "history": {k: v for k, v in history.items() if not k.startswith("time.")},
            "artifacts": artifacts,
        }
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory, _empty_store):
    sys.path.insert(0, str(Path(__file__).parents[1]))
    import toy_plugin

    from harness.plugins.registry import build_registry

    registry = build_registry({"toy": toy_plugin}, entry_points=False)
    root = tmp_path_factory.mktemp("direct")
    with pytest.MonkeyPatch.context() as monkeypatch:
        via_mlflow = _track(root / "mlflow", _empty_store, registry, monkeypatch, direct=False)
        direct = _track(root / "direct", _empty_store, registry, monkeypatch, direct=True)
    return _snapshot(via_mlflow), _snapshot(direct), direct


def test_direct_runs_read_back_like_mlflows(both):
    via_mlflow, direct, _ = both
    assert len(direct["runs"]) == 7  # the suite run and 6 cells
    assert direct["by_metric"] == via_mlflow["by_metric"] == 2  # latest_metrics written
    for name in via_mlflow["runs"]:
        for part in ("info", "tags", "params", "metrics", "history", "artifacts"):
            assert direct["runs"][name][part] == via_mlflow["runs"][name][part], (name, part)
    assert direct == via_mlflow
    failed = [
        r for k, r in direct["runs"].items() if k.endswith("cell") and r["info"][0] == "FAILED"
    ]
    assert failed and all("error.txt" in r["artifacts"] for r in failed)


def test_the_direct_path_writes_without_importing_mlflow(both):
    """The point of it: a `harness run` on an existing SQLite store never loads MLflow."""
    _, _, uri = both
    folder = Path(uri.removeprefix("sqlite:///")).parent
    tests, suite = str(Path(__file__).parents[1]), str(folder / "suite.yaml")
    code = (
        f"import sys; sys.path.insert(0, {tests!r}); import toy_plugin\n"
        "from harness.plugins.registry import build_registry\n"
        "from harness.runs.executors.local import LocalExecutor\n"
        "from harness.runs.runner import run_suite\n"
        "from harness.suites.loading import load_suite\n"
        "from harness.store.tracking import Tracker\n"
        "r = build_registry({'toy': toy_plugin}, entry_points=False)\n"
        f"t = Tracker({uri!r}).open()\n"
        f"run_suite(load_suite({suite!r}, r), r, t, executor=LocalExecutor(r, 1), force=True)\n"
        f"t.suite_results(load_suite({suite!r}, r))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mlflow', 'sqlalchemy')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_cell_is_one_transaction(tmp_path, _empty_store, monkeypatch):
    """A failure inside the write (here: the metrics insert) leaves no run at all."""
    shutil.copy(_empty_store, tmp_path / "mlflow.db")
    store = DirectSqlite.open(f"sqlite:///{tmp_path}/mlflow.db")
    assert store is not None
    experiment = store.create_experiment("e", (tmp_path / "art").as_uri(), {})
    real = store.connection

    class Failing:
        def __init__(self, db):
            self.db = db

        def execute(self, sql, args=()):
            if sql.startswith("INSERT INTO latest_metrics"):
                raise sqlite3.OperationalError("disk I/O error (simulated)")
            return self.db.execute(sql, args)

    monkeypatch.setattr(store, "connection", lambda: Failing(real()))
    with pytest.raises(sqlite3.OperationalError):
        store.create_run(
            experiment,
            (tmp_path / "art").as_uri(),
            run_name="r",
            start_time=1,
            tags={"harness.kind": "cell"},
            params={"a": "1"},
            metrics=[("m", 1.0, 1, 0)],
        )
    monkeypatch.undo()
    counts = [
        real().execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
        for t in ("runs", "tags", "params", "metrics")
    ]
    assert counts == [0, 0, 0, 0]


@pytest.mark.parametrize(
    "key", ["a" * 251, "../up", "/abs", "x/./y", "a,b", "name\n", "tab\there", ""]
)
def test_keys_mlflow_might_refuse_are_left_to_mlflow(key, tmp_path, _empty_store):
    shutil.copy(_empty_store, tmp_path / "mlflow.db")
    store = DirectSqlite.open(f"sqlite:///{tmp_path}/mlflow.db")
    experiment = store.create_experiment("e", (tmp_path / "art").as_uri(), {})
    assert not plain_key(key)
    for where in ("tags", "params"):
        given = {"tags": {}, "params": {}} | {where: {key: "v"}}
        with pytest.raises(UnsupportedWriteError):
            store.create_run(
                experiment, (tmp_path / "art").as_uri(), run_name="r", start_time=1, **given
            )
    with pytest.raises(UnsupportedWriteError):
        store.create_run(
            experiment,
            (tmp_path / "art").as_uri(),
            run_name="r",
            start_time=1,
            tags={},
            metrics=[("m", float("nan"), 1, 0)],
        )


def test_other_schema_revisions_and_switch_off_use_mlflow(tmp_path, _empty_store, monkeypatch):
    shutil.copy(_empty_store, tmp_path / "mlflow.db")
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    assert DirectSqlite.open(uri) is not None
    monkeypatch.setenv("HARNESS_DIRECT_SQLITE", "0")
    assert DirectSqlite.open(uri) is None
    monkeypatch.delenv("HARNESS_DIRECT_SQLITE")
    monkeypatch.setattr(sqlite_direct, "SCHEMA_REVISION", "0123456789ab")
    assert DirectSqlite.open(uri) is None
    assert DirectSqlite.open(f"sqlite:///{tmp_path}/absent.db") is None


def _toy_registry():
    sys.path.insert(0, str(Path(__file__).parents[1]))
    import toy_plugin

    from harness.plugins.registry import build_registry

    return build_registry({"toy": toy_plugin}, entry_points=False)


def test_artifacts_land_under_a_store_path_with_a_space(tmp_path, _empty_store):
    """The artifact root is a percent-encoded file URI (``sp%20ace``): decoded, the files
    are where MLflow's client looks for them."""
    folder = tmp_path / "sp ace"
    folder.mkdir()
    shutil.copy(_empty_store, folder / "mlflow.db")
    (folder / "suite.yaml").write_text(SUITE)
    registry = _toy_registry()
    tracker = Tracker(f"sqlite:///{folder}/mlflow.db")
    assert isinstance(tracker.store, SqliteStore)
    run_suite(load_suite(folder / "suite.yaml", registry), registry, tracker)
    client = MlflowClient(tracker.uri)
    runs = client.search_runs([tracker.experiment_id("direct")], max_results=100)
    listed = {
        r.data.tags["harness.kind"] + r.info.status: client.list_artifacts(r.info.run_id)
        for r in runs
    }
    assert [f.path for f in listed["suiteFAILED"]] == ["suite.yaml"]
    assert "error.txt" in [f.path for f in listed["cellFAILED"]]
    assert not list(tmp_path.glob("sp%20ace"))


@pytest.mark.parametrize("direct", ["1", "0"])
def test_a_deleted_experiment_is_refused_with_the_way_out(
    direct, tmp_path, _empty_store, monkeypatch
):
    from harness.errors import StoreError

    monkeypatch.setenv("HARNESS_DIRECT_SQLITE", direct)
    shutil.copy(_empty_store, tmp_path / "mlflow.db")
    tracker = Tracker(f"sqlite:///{tmp_path}/mlflow.db")
    experiment = tracker.experiment_id("gone", create=True)
    MlflowClient(tracker.uri).delete_experiment(experiment)
    again = Tracker(tracker.uri)
    with pytest.raises(StoreError, match=r"is deleted.*experiments restore --experiment-id"):
        again.experiment_id("gone", create=True)
    assert again.experiment_id("gone") is None  # reading: absent, no old numbers


def test_a_signal_before_any_cell_runs_marks_the_parent_killed(tmp_path, _empty_store, monkeypatch):
    """Ctrl-C / SIGTERM between opening the parent run and the first cell: KILLED, not
    left RUNNING."""
    shutil.copy(_empty_store, tmp_path / "mlflow.db")
    (tmp_path / "suite.yaml").write_text(SUITE)
    registry = _toy_registry()
    tracker = Tracker(f"sqlite:///{tmp_path}/mlflow.db")

    def interrupted(experiment_id):
        raise KeyboardInterrupt

    monkeypatch.setattr(tracker, "finished_hashes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_suite(load_suite(tmp_path / "suite.yaml", registry), registry, tracker)
    parents = MlflowClient(tracker.uri).search_runs([tracker.experiment_id("direct")])
    assert [p.info.status for p in parents] == ["KILLED"]
