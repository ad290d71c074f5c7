"""Results you can trust (issue 11): each test provokes the fault for real and fails on the
harness before the fix (cell identity without code or metrics, tables taking the latest
*finished* run, NaN passing as ok, RUNNING runs after a kill, SIGTERM not handled).
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from fake_plugins import install_fake_plugin

from harness.components import Curve
from harness.errors import StoreError
from harness.reports.tables import summary_table
from harness.runs.cell import execute_cell
from harness.runs.executors.local import LocalExecutor
from harness.runs.runner import planned_states, run_suite
from harness.store.tracking import Tracker
from harness.suites.loading import load_suite

HARNESS = str(Path(sys.executable).with_name("harness"))

SUITE = """
name: integrity
seeds: [0, 1]
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 4}}]
    methods: [mean, fragile]
    metrics: [abs-error, {name: scaled, params: {scale: SCALE}}]
"""


def _run(registry, path, store, force=False):
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


# -- 1. cell identity: metrics and code ---------------------------------------------------


def test_changing_a_metric_param_reruns_the_cells_and_recomputes_it(registry, write_suite, store):
    tracker, first, _ = _run(registry, write_suite(SUITE.replace("SCALE", "1.0")), store)
    path = write_suite(SUITE.replace("SCALE", "1000.0"))
    tracker, second, notices = _run(registry, path, store)
    assert second.ran == first.ran == 4  # before the fix: 0 ran, the old values stayed
    assert any("4 cell(s): metrics changed" in line for line in notices)
    suite = load_suite(path, registry)
    rows = tracker.results(first.experiment_id, [c.cell_hash for c in suite.cells])
    assert (rows["scaled"] == 1000.0 * rows["abs-error"]).all()


def test_adding_a_metric_computes_it(registry, write_suite, store):
    tracker, first, _ = _run(registry, write_suite(SUITE.replace("SCALE", "1.0")), store)
    added = SUITE.replace("SCALE", "1.0").replace("metrics: [", "metrics: [stats, ")
    suite = load_suite(write_suite(added), registry)
    _, second, _ = _run(registry, suite.path, store)
    assert second.ran == 4
    rows = tracker.results(first.experiment_id, [c.cell_hash for c in suite.cells])
    assert rows["stats.max"].notna().all() and len(rows) == 4


EXTRA = '''
"""A second toy plugin: one method for the toy task (its code is edited by the test)."""
from harness import Method, hookimpl


class Half(Method):
    """Half the sample mean.

    Source: test fixture.
    """

    name = "half"
    task = "toy"

    def run(self, data, params, seed) -> float:
        return float(data.y.mean()) / 2  # EDIT-ME


@hookimpl
def harness_methods():
    return [Half]
'''


def test_editing_a_plugin_reruns_only_the_cells_that_use_it(toy_env, tmp_path, store):
    """A real `harness run` with two plugins installed in a temporary folder; the second
    plugin's source is edited between runs."""
    site = Path(toy_env["PYTHONPATH"].split(os.pathsep)[0])
    install_fake_plugin(site, "toy-extra", "toy_extra", EXTRA)
    suite = tmp_path / "two.yaml"
    suite.write_text(
        textwrap.dedent("""
        name: two-plugins
        seeds: [0, 1, 2]
        runs:
          - task: toy
            datasets: [{name: noise, params: {n: 4}}]
            methods: [mean, half]
            metrics: [abs-error]
        """)
    )
    cmd = [HARNESS, "run", str(suite), "--tracking-uri", store, "--report-dir", str(tmp_path)]
    first = subprocess.run(cmd, env=toy_env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "6 to run" in first.stdout
    again = subprocess.run(cmd, env=toy_env, capture_output=True, text=True, timeout=300)
    assert "6 already finished, 0 to run" in again.stdout
    (site / "toy_extra.py").write_text(EXTRA.replace("/ 2  # EDIT-ME", "/ 4  # fixed"))
    dry = subprocess.run(
        [*cmd, "--dry-run"], env=toy_env, capture_output=True, text=True, timeout=300
    )
    assert "6 cells: 3 done, 3 to run; 3 cell(s): code of plugin toy-extra changed" in dry.stdout
    edited = subprocess.run(cmd, env=toy_env, capture_output=True, text=True, timeout=300)
    assert edited.returncode == 0, edited.stdout + edited.stderr
    # before the fix: "6 already finished, 0 to run" with the old numbers
    assert "3 already finished, 3 to run" in edited.stdout, edited.stdout
    assert "3 cell(s): code of plugin toy-extra changed" in edited.stdout


# -- 2. one truth per cell ------------------------------------------------------------------


def test_a_failed_forced_rerun_is_shown_failed_never_the_older_success(
    registry, write_suite, store, monkeypatch
):
    path = write_suite(SUITE.replace("SCALE", "1.0"))
    tracker, first, _ = _run(registry, path, store)
    assert not first.problems
    monkeypatch.setenv("TOY_FRAGILE_FAIL", "1")  # inherited by the forked worker
    _, second, notices = _run(registry, path, store, force=True)
    assert len(second.problems) == 2
    suite = load_suite(path, registry)
    rows = tracker.results(first.experiment_id, [c.cell_hash for c in suite.cells])
    fragile = rows[rows["method"] == "fragile"]
    assert set(fragile["status"]) == {"failed"}  # before the fix: the older "ok" runs
    table = summary_table(rows, registry)
    assert table.loc[("noise", "fragile"), "abs-error ↓"] == "failed"
    assert table.loc[("noise", "fragile"), "seeds"] == "0 of 2 (2 failed)"
    # and the next run retries exactly those cells
    monkeypatch.delenv("TOY_FRAGILE_FAIL")
    _, third, notices = _run(registry, path, store)
    assert third.ran == 2 and any("2 cell(s): last run failed" in n for n in notices)


def test_dry_run_states_are_what_the_next_run_does(registry, write_suite, store, monkeypatch):
    """``harness run --dry-run`` reads per cell what a run would do; checked against what
    the runs then do (a dry run that called a failed cell done, or read identity by params
    only, fails here)."""
    path = write_suite(SUITE.replace("SCALE", "1.0"))
    suite = load_suite(path, registry)
    method = {c.cell_hash: c.method for c in suite.cells}
    assert set(planned_states(suite, None).values()) == {"never run with these settings"}
    monkeypatch.setenv("TOY_FRAGILE_FAIL", "1")
    tracker, _, _ = _run(registry, path, store)
    monkeypatch.delenv("TOY_FRAGILE_FAIL")
    states = planned_states(suite, tracker)
    assert {method[h]: s for h, s in states.items()} == {
        "mean": "done",
        "fragile": "last run failed",
    }
    assert set(planned_states(suite, tracker, force=True).values()) == {"--force"}
    _, second, _ = _run(registry, path, store)
    assert second.ran == sum(s != "done" for s in states.values()) == 2
    assert set(planned_states(suite, tracker).values()) == {"done"}
    rescaled = load_suite(write_suite(SUITE.replace("SCALE", "2.0")), registry)
    assert set(planned_states(rescaled, tracker).values()) == {"metrics changed"}
    # where a run would be refused, the dry run is refused with the run's reason
    experiment = tracker.experiment_id("integrity")
    live = tracker.start_suite(experiment, suite, {}, None)
    with pytest.raises(StoreError, match="Suite 'integrity' is already running"):
        planned_states(suite, tracker)
    tracker.end_suite(live, "FINISHED")
    tracker.client.delete_experiment(experiment)
    with pytest.raises(StoreError, match="is deleted"):
        planned_states(suite, Tracker(store))


# -- 3. non-finite values -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shape", "reason"),
    [
        (".nan", "scalar", "metric 'bad-value' returned nan"),
        (".inf", "scalar", "metric 'bad-value' returned inf"),
        ("-.inf", "dict", "metric 'bad-value.broken' returned -inf"),
        (".nan", "curve", "metric 'bad-value' returned a curve with nan at step 2"),
    ],
)
def test_a_non_finite_metric_fails_the_cell(
    registry, write_suite, monkeypatch, value, shape, reason
):
    """A NaN param is refused by the suite itself (it equals no value), so a NaN comes from
    the metric: ``bad-value`` returns NaN where its param says 1.0."""
    import toy_plugin

    if value == ".nan":
        value, real = "1.0", toy_plugin.BadValue.compute

        def nan_for_one(self, data, output):
            if shape == "scalar":
                return np.nan
            curve = real(self, data, output)  # [0.5, 1.0, 1.0]: NaN from the second point
            return Curve(np.where(curve.values == 1.0, np.nan, curve.values))

        monkeypatch.setattr(toy_plugin.BadValue, "compute", nan_for_one)
    suite = load_suite(
        write_suite(f"""
        name: nan
        runs:
          - task: toy
            datasets: [noise]
            methods: [mean]
            metrics: [abs-error, {{name: bad-value, params: {{value: {value}, shape: {shape}}}}}]
        """),
        registry,
    )
    result = execute_cell(suite.cells[0], registry)
    assert result.status == "failed"  # before the fix: "ok", and inf stored as 1.797e308
    assert result.reason == reason
    assert all(math.isfinite(v) for v in result.metrics.values())


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2.0", "metric 'm' returned '2.0' (str), not a real number"),
        ({}, "metric 'm' returned an empty dict: no value"),
        ({"a": "1"}, "metric 'm.a' returned '1' (str), not a real number"),
        (np.array("0.15"), "metric 'm' returned array('0.15', dtype='<U4') (ndarray)"),
        (np.complex128(0.15 + 5j), "metric 'm' returned"),
    ],
)
def test_a_metric_value_that_is_no_number_fails(value, reason):
    """A string (which float() would take) or an empty dict is no metric value."""
    from harness.plugins.metric_values import MetricValueError, metric_values

    with pytest.raises(MetricValueError, match=re.escape(reason)):
        metric_values("m", value)


def test_run_and_check_plugin_take_the_same_metric_values():
    """A 0-d NumPy array or a torch scalar is a number to ``harness run`` and to
    ``check-plugin`` alike (check-plugin refused what run logged); NaN fails both."""
    import torch
    import toy_plugin

    from harness import Metric, hookimpl
    from harness.plugins.metric_values import NonFiniteMetricError, metric_values
    from harness.plugins.registry import build_registry
    from harness.plugins.testing import run_checks

    values = {"zero-d": np.array(0.5), "torch-scalar": torch.tensor(0.5), "nan": np.nan}

    def metric(name: str) -> type[Metric]:
        def compute(self, data: toy_plugin.Draws, output: float) -> float:
            return values[name]

        doc = "A fixed value.\n\nSource: test fixture."
        return type(
            name, (Metric,), {"name": name, "task": "toy", "compute": compute, "__doc__": doc}
        )

    class Plugin:
        @hookimpl
        def harness_metrics(self):
            return [metric(name) for name in values]

    registry = build_registry({"toy": toy_plugin, "values": Plugin()}, entry_points=False)
    outcomes = {
        check.split("-check_")[0]: (outcome, message)
        for check, outcome, message in run_checks("values", registry)
        if check.endswith("check_compute_returns_valid_value")
    }
    assert outcomes["zero-d"][0] == outcomes["torch-scalar"][0] == "passed", outcomes
    assert outcomes["nan"][0] == "failed" and "[finite-metric]" in outcomes["nan"][1]
    assert metric_values("m", values["zero-d"]) == metric_values("m", values["torch-scalar"])
    with pytest.raises(NonFiniteMetricError):
        metric_values("m", values["nan"])


def test_a_curve_whose_steps_do_not_increase_is_refused():
    """Its last value would not be its final one (the table shows ``Curve.final``)."""
    with pytest.raises(ValueError, match=r"strictly increasing.*got 3 then 2"):
        Curve([0.1, 0.2, 0.3], steps=[1, 3, 2])
    with pytest.raises(ValueError, match="whole numbers"):  # int64 would make them 0, 0, 0
        Curve([1.0, 2.0, 0.15], steps=[0.2, 0.5, 0.9])
    with pytest.raises(ValueError, match="real numbers"):
        Curve(["1.0", "0.15"])
    assert Curve([1.0, 2.0], steps=[1.0, 2.0]).steps.tolist() == [1, 2]
    assert Curve([0.1, 0.2], steps=[5, 9]).final == 0.2


# -- 4. run states after kill -9 and SIGTERM ----------------------------------------------------

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


def test_sigterm_is_handled_like_ctrl_c(toy_env, tmp_path, store):
    process, tracker, experiment, _ = _start(toy_env, tmp_path, store)
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 143, out  # before the fix: -15, the parent left RUNNING
    assert "finished cells are kept" in out
    assert _parents(tracker, experiment) == ["KILLED"]
    assert len(tracker.finished_hashes(experiment)) == 1


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


def test_report_of_every_suite_shows_only_current_cells(
    registry, write_suite, store, tmp_path, capsys
):
    """`harness report` without SUITE: each experiment's cells as its last logged suite
    defines them with the code now, never runs of an older metric list pooled in as more
    seeds (it used to show 8 rows here, half with the old scale)."""
    import pandas as pd

    from harness import cli

    tracker, first, _ = _run(registry, write_suite(SUITE.replace("SCALE", "1.0")), store)
    _run(registry, write_suite(SUITE.replace("SCALE", "1000.0")), store)
    capsys.readouterr()
    cli.main(["report", "--tracking-uri", store, "--out", str(tmp_path / "r")], registry=registry)
    printed = capsys.readouterr()
    assert "integrity: 4 cells ->" in printed.out and "integrity" not in printed.err, printed
    stats = pd.read_csv(tmp_path / "r" / "integrity" / "toy-summary.csv").set_index(
        ["method", "metric"]
    )["mean"]
    for method in ("mean", "fragile"):
        assert stats[method, "scaled"] == pytest.approx(1000.0 * stats[method, "abs-error"])
    assert len(tracker.results(first.experiment_id)) == 8  # what is stored: both lists


def test_new_settings_next_to_done_cells_say_why_they_run(registry, write_suite, store):
    """A changed setting (here one more seed) runs only the new cells, and says so."""
    _run(registry, write_suite(SUITE.replace("SCALE", "1.0")), store)
    more = SUITE.replace("SCALE", "1.0").replace("seeds: [0, 1]", "seeds: [0, 1, 2]")
    _, outcome, notices = _run(registry, write_suite(more), store)
    assert outcome.ran == 2
    assert "Cells to run: 2 cell(s): never run with these settings" in notices


def test_the_fingerprint_covers_every_package_of_the_plugin_and_ignores_editor_files(
    tmp_path, monkeypatch
):
    """A plugin whose distribution installs two packages (``harness_two`` with the entry
    point, ``two_core`` with the code it calls): an edit to either changes the fingerprint
    (before, an edit to ``two_core`` kept old numbers); an editor's swap file, a backup or a
    notebook checkpoint changes nothing (before, each reran the plugin's cells)."""
    import importlib

    from harness.plugins import fingerprint

    site = tmp_path / "site"
    info = site / "harness_two-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: harness-two\nVersion: 0.1.0\n")
    companions = ["harness_two", "two_core", "shared_pkg"]  # what build_registry reads
    (info / "top_level.txt").write_text("\n".join(companions))
    other = site / "sloppy-0.1.0.dist-info"  # another one installs 'shared_pkg' (a 'tests')
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: sloppy\nVersion: 0.1.0\n")
    (other / "top_level.txt").write_text("shared_pkg\n")
    packages = (
        ("harness_two", "from two_core import OFFSET\n"),
        ("two_core", ""),
        ("shared_pkg", ""),
    )
    for package, text in packages:
        (site / package).mkdir()
        (site / package / "__init__.py").write_text(text + "OFFSET = 0.0\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    fingerprint.distribution_packages.cache_clear()  # it read sys.path without site
    try:
        first = fingerprint.code_fingerprint(site / "harness_two", companions)
        for stray in (".__init__.py.swp", "__init__.py~", ".ipynb_checkpoints/x.py", ".DS_Store"):
            path = site / "harness_two" / stray
            path.parent.mkdir(exist_ok=True)
            path.write_text("scratch")
        assert fingerprint.code_fingerprint(site / "harness_two", companions) == first
        (site / "shared_pkg" / "__init__.py").write_text("# another distribution's code\n")
        assert fingerprint.code_fingerprint(site / "harness_two", companions) == first
        (site / "two_core" / "__init__.py").write_text("OFFSET = 1000.0\n")
        assert fingerprint.code_fingerprint(site / "harness_two", companions) != first
    finally:
        fingerprint.distribution_packages.cache_clear()


# -- issue 30: a store that locks, goes, fills or turns read-only ------------------------

STORE_FAULTS = """
name: store-faults
seeds: [0, 1, 2, 3, 4, 5, 6, 7]
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 4}}]
    methods: [{name: sleepy, params: {seconds: 0.5}}]
    metrics: [abs-error]
"""


def _cells_logged(db: Path) -> int:
    import contextlib
    import sqlite3

    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
            sql = "SELECT COUNT(*) FROM tags WHERE key = 'harness.status'"
            return connection.execute(sql).fetchone()[0]
    except sqlite3.Error:  # not created yet, or busy
        return 0


def _run_into_fault(env, folder: Path, uri: str, fault) -> tuple[int, str, float]:
    """``harness run`` of 8 half-second cells into ``uri``; once a cell is logged, the
    context manager ``fault(db)`` is entered and held until harness exits. Returns the
    exit code, stderr and the seconds from the fault to the exit."""
    suite = folder / "faults.yaml"
    suite.write_text(STORE_FAULTS)
    db = Path(uri.removeprefix("sqlite:///"))
    args = [HARNESS, "run", str(suite), "--tracking-uri", uri, "--report-dir", str(folder / "r")]
    process = subprocess.Popen(args, env=env, cwd=folder, text=True, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _cells_logged(db) < 1:
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.05)
    with fault(db):
        tic = time.monotonic()
        _, err = process.communicate(timeout=120)
    return process.returncode, err, time.monotonic() - tic


def _the_line(err: str) -> str:
    """The one error line harness printed (no traceback)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


def test_a_store_deleted_mid_run_stops_the_run_with_exit_2(toy_env, tmp_path, store):
    """Before: exit 0, "8 ok", a report, and every result gone with the deleted file."""
    import contextlib

    @contextlib.contextmanager
    def delete(db: Path):
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            path.unlink(missing_ok=True)
        yield

    code, err, _ = _run_into_fault(toy_env, tmp_path, store, delete)
    line = _the_line(err)
    assert code == 2, err
    assert "disappeared (deleted or moved)" in line and "went with it" in line, line
    assert "run the same command again" in line, line


def test_a_rerun_after_the_store_was_deleted_mid_run_sets_its_leftover_log_aside(
    toy_env, tmp_path, store
):
    """The database file deleted mid-run, its ``-wal``/``-shm`` left behind as such a
    deletion leaves them: the same command again exits 0 into a new store holding its own
    cells only, and the leftovers are kept aside under another name, said in one line.
    Before: SQLite replayed the old write-ahead log onto the new file ("database disk
    image is malformed", a traceback, exit 1)."""
    import contextlib

    @contextlib.contextmanager
    def delete_db_only(db: Path):
        db.unlink()
        yield

    code, err, _ = _run_into_fault(toy_env, tmp_path, store, delete_db_only)
    db = Path(store.removeprefix("sqlite:///"))
    assert code == 2 and not db.exists() and Path(f"{db}-wal").exists(), err
    suite, report = tmp_path / "faults.yaml", tmp_path / "r2"
    args = [HARNESS, "run", str(suite), "--tracking-uri", store, "--report-dir", str(report)]
    done = subprocess.run(args, env=toy_env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "8 cells, 0 already finished, 8 to run" in done.stdout, done.stdout
    assert _cells_logged(db) == 8, "the new store holds this run's 8 cells, nothing older"
    aside = sorted(p.name for p in tmp_path.glob("mlflow.db-*.orphaned-*"))
    assert "mlflow.db-wal" in {name.split(".orphaned-")[0] for name in aside}, aside
    said = [line for line in done.stderr.splitlines() if ".orphaned-" in line]
    assert len(said) == 1 and "mlflow.db-wal" in said[0], done.stderr


def test_a_store_locked_mid_run_stops_the_run_with_exit_2(toy_env, tmp_path, store):
    """Another process holds the store (``BEGIN EXCLUSIVE``) past the busy timeout: exit 2
    within seconds, saying what is kept and how to resume; the cells logged before are
    there, and the same command resumes from them once the lock is gone."""
    import contextlib
    import sqlite3

    @contextlib.contextmanager
    def lock(db: Path):
        with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as other:
            other.execute("BEGIN EXCLUSIVE")
            yield
            other.execute("ROLLBACK")

    code, err, seconds = _run_into_fault(toy_env, tmp_path, store, lock)
    line = _the_line(err)
    assert code == 2 and seconds < 30, (seconds, err)
    assert "is locked by another process" in line and "are kept" in line, line
    kept = _cells_logged(Path(store.removeprefix("sqlite:///")))
    assert re.search(rf"\b{kept} cell run\(s\) logged by this command are kept", line), line
    args = [HARNESS, "run", str(tmp_path / "faults.yaml"), "--tracking-uri", store]
    again = subprocess.run(args, env=toy_env, cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert f"{kept} already finished, {8 - kept} to run" in again.stdout + again.stderr


def test_a_store_locked_at_start_is_refused_within_15_s(toy_env, tmp_path, store):
    """Before: 61 s, then a traceback ending in "database is locked"."""
    import contextlib
    import sqlite3

    suite = tmp_path / "faults.yaml"
    suite.write_text(STORE_FAULTS)
    db = Path(store.removeprefix("sqlite:///"))
    args = [HARNESS, "run", str(suite), "--tracking-uri", store]
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as other:
        other.execute("BEGIN EXCLUSIVE")
        tic = time.monotonic()
        done = subprocess.run(args, env=toy_env, cwd=tmp_path, capture_output=True, text=True)
        seconds = time.monotonic() - tic
        other.execute("ROLLBACK")
    line = _the_line(done.stderr)
    assert done.returncode == 2 and seconds < 15, (seconds, done.stderr)
    assert "is locked by another process" in line and "0 cell run(s)" in line, line


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_store_turned_read_only_mid_run_stops_the_run_with_exit_2(toy_env, tmp_path, store):
    """The store's folder and file made read-only while cells run (SQLite keeps writing
    through descriptors it opened before, so only a check of the file tells)."""
    import contextlib

    @contextlib.contextmanager
    def read_only(db: Path):
        db.chmod(0o444)
        db.parent.chmod(0o555)
        try:
            yield
        finally:
            db.parent.chmod(0o755)
            db.chmod(0o644)

    (tmp_path / "store").mkdir()  # the suite and report outside the folder made read-only
    code, err, _ = _run_into_fault(toy_env, tmp_path / "store", store, read_only)
    line = _the_line(err)
    assert code == 2 and "turned read-only" in line and "are kept" in line, line


def test_a_store_whose_file_system_turns_read_only_mid_run_stops_and_resumes(
    toy_env, tmp_path, store
):
    """A real read-only file system, which refuses writes (EROFS) to root as well: the
    store on a tmpfs, a read-only bind mount of it laid over its folder mid-run (``mount
    -o remount,ro`` is refused, "busy", while harness holds the file open for writing;
    the bind keeps the file's device and inode, and the descriptors opened before keep
    writing, as on a remount that went through). Exit 2 with the one line; once the
    folder is writable again the same command runs the cells not kept, none twice.
    Needs the right to mount (e.g. root in a container); skipped otherwise."""
    import contextlib
    import shutil
    import sqlite3

    disk = tmp_path / "disk"
    disk.mkdir()
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(disk)], capture_output=True
    )
    if mount.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs CAP_SYS_ADMIN)")

    @contextlib.contextmanager
    def read_only_file_system(db: Path):
        bind = ["mount", "--bind", "-o", "ro", str(disk), str(disk)]
        subprocess.run(bind, check=True, capture_output=True)
        try:
            assert not os.access(db, os.W_OK), "the bind should refuse writes, even to root"
            yield
        finally:
            subprocess.run(["umount", str(disk)], capture_output=True)

    try:
        db = disk / "mlflow.db"
        shutil.copy(Path(store.removeprefix("sqlite:///")), db)
        uri = f"sqlite:///{db}"
        code, err, _ = _run_into_fault(toy_env, tmp_path, uri, read_only_file_system)
        line = _the_line(err)
        assert code == 2 and "turned read-only" in line, line
        kept = _cells_logged(db)
        assert re.search(rf"\b{kept} cell run\(s\) logged by this command are kept", line), line
        assert "run the same command" in line and 1 <= kept < 8, (kept, line)
        args = [HARNESS, "run", str(tmp_path / "faults.yaml"), "--tracking-uri", uri]
        again = subprocess.run(args, env=toy_env, cwd=tmp_path, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert f"{kept} already finished, {8 - kept} to run" in again.stdout + again.stderr
        with contextlib.closing(sqlite3.connect(db)) as connection:
            sql = "SELECT value, COUNT(*) FROM tags WHERE key = 'harness.status' GROUP BY value"
            statuses = dict(connection.execute(sql).fetchall())
        assert statuses == {"ok": 8}, statuses
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_a_store_whose_disk_fills_mid_run_stops_the_run_with_exit_2(toy_env, tmp_path, store):
    """A real full disk: the store on a tmpfs a little larger than the empty store (needs
    the right to mount one, e.g. root in a container; skipped otherwise)."""
    import shutil

    disk = tmp_path / "disk"
    disk.mkdir()
    db = Path(store.removeprefix("sqlite:///"))
    size = db.stat().st_size + 400_000
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)], capture_output=True
    )
    if mount.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs CAP_SYS_ADMIN)")
    try:
        shutil.copy(db, disk / "mlflow.db")
        uri = f"sqlite:///{disk}/mlflow.db"
        suite = tmp_path / "faults.yaml"
        text = STORE_FAULTS.replace("seeds: [0, 1, 2, 3, 4, 5, 6, 7]", "repetitions: 400")
        suite.write_text(text.replace("seconds: 0.5", "seconds: 0.0"))
        args = [HARNESS, "run", str(suite), "--tracking-uri", uri, "--report-dir", str(tmp_path)]
        done = subprocess.run(args, env=toy_env, cwd=tmp_path, capture_output=True, text=True)
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
    line = _the_line(done.stderr)
    assert done.returncode == 2 and "is full (no space left on its disk)" in line, line
