"""The store's reading side: a failed forced rerun is shown failed, never the older success."""

from __future__ import annotations

from types import SimpleNamespace

from harness.reports.tables import summary_table
from harness.runs.executors.local import LocalExecutor
from harness.runs.runner import run_suite
from harness.store.tracking import Tracker
from harness.suites.loading import load_suite

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
