"""The store's reading side: a failed forced rerun is shown failed, never the older success."""

from __future__ import annotations

from helpers import TWO_SEEDS, run_tracked

from harness.reports.tables import summary_table
from harness.suites.loading import load_suite


def test_a_failed_forced_rerun_is_shown_failed_never_the_older_success(
    registry, write_suite, store, monkeypatch
):
    path = write_suite(TWO_SEEDS.replace("SCALE", "1.0"))
    tracker, first, _ = run_tracked(registry, path, store)
    assert not first.problems
    monkeypatch.setenv("TOY_FRAGILE_FAIL", "1")  # inherited by the forked worker
    _, second, notices = run_tracked(registry, path, store, force=True)
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
    _, third, notices = run_tracked(registry, path, store)
    assert third.ran == 2 and any("2 cell(s): last run failed" in n for n in notices)
