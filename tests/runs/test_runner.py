from __future__ import annotations

import os
import signal

import pytest
from helpers import TWO_SEEDS, run_tracked, start_slow_run, suite_parents

from harness.errors import StoreError
from harness.runs.cell import execute_cell
from harness.runs.executors.local import LocalExecutor
from harness.runs.runner import planned_states
from harness.store.tracking import Tracker
from harness.suites.loading import load_suite

SUITE = """
name: runner
seeds: [0, 1, 2]
timeout: {timeout}
runs:
  - task: toy
    datasets: [{{name: noise, grid: {{n: [4, 8]}}}}]
    methods:
      - name: mean
        params: {{kind: noisy}}
      - {extra}
    metrics: [abs-error, stats, path, never]
"""


def _cells(registry, write_suite, extra="mean", timeout="1m"):
    return load_suite(write_suite(SUITE.format(extra=extra, timeout=timeout)), registry).cells


def _run(registry, cells, n_jobs):
    results = {}
    LocalExecutor(registry, n_jobs).run(cells, lambda c, r: results.__setitem__(c.cell_hash, r))
    return results


def test_cell_computes_scalar_dict_and_curve_metrics_and_skips(registry, write_suite):
    result = execute_cell(_cells(registry, write_suite)[0], registry)
    assert result.status == "ok"
    assert set(result.metrics) == {"abs-error", "stats.min", "stats.max", "path"}
    assert result.curves["path"].values.size == 4
    assert result.skipped_metrics == {"never": "never applies to toy data"}
    assert result.described == {"n_drawn": "4"}


def test_same_seed_gives_same_metrics(registry, write_suite):
    cell = _cells(registry, write_suite)[0]
    assert execute_cell(cell, registry).metrics == execute_cell(cell, registry).metrics


def test_one_and_two_workers_give_identical_metrics(registry, write_suite):
    cells = _cells(registry, write_suite)
    one, two = _run(registry, cells, 1), _run(registry, cells, 2)
    assert len(one) == len(cells) == 12
    assert {h: r.metrics for h, r in one.items()} == {h: r.metrics for h, r in two.items()}


def test_failing_cell_is_isolated_with_its_traceback(registry, write_suite):
    results = _run(registry, _cells(registry, write_suite, extra="boom"), 2)
    statuses = sorted(r.status for r in results.values())
    assert statuses == ["failed"] * 6 + ["ok"] * 6
    failed = next(r for r in results.values() if r.status == "failed")
    assert "RuntimeError: boom" in failed.reason and "Traceback" in failed.error


def test_cell_past_its_timeout_is_killed_and_the_suite_goes_on(registry, write_suite):
    cells = _cells(
        registry, write_suite, extra="{name: sleepy, params: {seconds: 30}}", timeout="0.5s"
    )
    results = _run(registry, cells, 2)
    assert sorted(r.status for r in results.values()) == ["ok"] * 6 + ["timeout"] * 6
    assert all("0.5 s" in r.reason for r in results.values() if r.status == "timeout")


def test_skip_in_method_marks_the_cell_skipped(registry, write_suite):
    results = _run(registry, _cells(registry, write_suite, extra="skipper"), 1)
    skipped = [r for r in results.values() if r.status == "skipped"]
    assert len(skipped) == 6 and skipped[0].reason == "skipper never applies"


def test_fail_fast_stops_after_first_failure(registry, write_suite):
    cells = [c for c in _cells(registry, write_suite, extra="boom") if c.method == "boom"]
    seen = []
    LocalExecutor(registry, 1).run(cells, lambda c, r: seen.append(r) or r.status == "failed")
    assert len(seen) == 1


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_every_cell_gets_exactly_one_result(registry, write_suite, n_jobs):
    cells = _cells(registry, write_suite)
    assert sorted(_run(registry, cells, n_jobs)) == sorted(c.cell_hash for c in cells)


def test_dask_executor_gives_the_same_metrics_as_local(registry, write_suite):
    from harness.runs.executors.dask import DaskExecutor

    cells = _cells(registry, write_suite)[:4]
    local = _run(registry, cells, 1)
    results = {}
    DaskExecutor(registry, 2).run(cells, lambda c, r: results.__setitem__(c.cell_hash, r))
    assert {h: r.metrics for h, r in results.items()} == {h: r.metrics for h, r in local.items()}


def test_dask_executor_records_timeout(registry, write_suite):
    from harness.runs.executors.dask import DaskExecutor

    extra = "{name: sleepy, params: {seconds: 30}}"
    cells = [c for c in _cells(registry, write_suite, extra, "1s") if c.method == "sleepy"][:1]
    results = []
    DaskExecutor(registry, 1).run(cells, lambda c, r: results.append(r))
    assert [r.status for r in results] == ["timeout"]


def test_warnings_are_kept_with_the_cell_not_printed(registry, write_suite, monkeypatch):
    import warnings

    import toy_plugin

    def noisy_compute(self, data, output):
        for _ in range(3):
            warnings.warn("estimate is rough", UserWarning, stacklevel=1)
        return abs(output)

    monkeypatch.setattr(toy_plugin.AbsError, "compute", noisy_compute)
    result = execute_cell(_cells(registry, write_suite)[0], registry)
    assert result.status == "ok"
    assert len(result.warnings) == 1 and result.warnings[0].startswith("3 x UserWarning: estimate")


def test_ctrl_c_while_logging_a_cell_waits_for_the_cell(monkeypatch):
    import signal

    from harness.runs.runner import signals_deferred

    # a shell that starts pytest in the background gives it SIGINT ignored: start from Python's
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    finished = []
    with pytest.raises(KeyboardInterrupt), signals_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        finished.append("logged")  # still runs: the interrupt waits for the block's end
    assert finished == ["logged"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    signal.signal(signal.SIGINT, previous)


def test_adding_a_metric_computes_it(registry, write_suite, store):
    tracker, first, _ = run_tracked(registry, write_suite(TWO_SEEDS.replace("SCALE", "1.0")), store)
    added = TWO_SEEDS.replace("SCALE", "1.0").replace("metrics: [", "metrics: [stats, ")
    suite = load_suite(write_suite(added), registry)
    _, second, _ = run_tracked(registry, suite.path, store)
    assert second.ran == 4
    rows = tracker.results(first.experiment_id, [c.cell_hash for c in suite.cells])
    assert rows["stats.max"].notna().all() and len(rows) == 4


def test_dry_run_states_are_what_the_next_run_does(registry, write_suite, store, monkeypatch):
    """``harness run --dry-run`` reads per cell what a run would do; checked against what
    the runs then do (a dry run that called a failed cell done, or read identity by params
    only, fails here)."""
    path = write_suite(TWO_SEEDS.replace("SCALE", "1.0"))
    suite = load_suite(path, registry)
    method = {c.cell_hash: c.method for c in suite.cells}
    assert set(planned_states(suite, None).values()) == {"never run with these settings"}
    monkeypatch.setenv("TOY_FRAGILE_FAIL", "1")
    tracker, _, _ = run_tracked(registry, path, store)
    monkeypatch.delenv("TOY_FRAGILE_FAIL")
    states = planned_states(suite, tracker)
    assert {method[h]: s for h, s in states.items()} == {
        "mean": "done",
        "fragile": "last run failed",
    }
    assert set(planned_states(suite, tracker, force=True).values()) == {"--force"}
    _, second, _ = run_tracked(registry, path, store)
    assert second.ran == sum(s != "done" for s in states.values()) == 2
    assert set(planned_states(suite, tracker).values()) == {"done"}
    rescaled = load_suite(write_suite(TWO_SEEDS.replace("SCALE", "2.0")), registry)
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


def test_sigterm_is_handled_like_ctrl_c(toy_env, tmp_path, store):
    process, tracker, experiment, _ = start_slow_run(toy_env, tmp_path, store)
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 143, out  # before the fix: -15, the parent left RUNNING
    assert "finished cells are kept" in out
    assert suite_parents(tracker, experiment) == ["KILLED"]
    assert len(tracker.finished_hashes(experiment)) == 1


def test_new_settings_next_to_done_cells_say_why_they_run(registry, write_suite, store):
    """A changed setting (here one more seed) runs only the new cells, and says so."""
    run_tracked(registry, write_suite(TWO_SEEDS.replace("SCALE", "1.0")), store)
    more = TWO_SEEDS.replace("SCALE", "1.0").replace("seeds: [0, 1]", "seeds: [0, 1, 2]")
    _, outcome, notices = run_tracked(registry, write_suite(more), store)
    assert outcome.ran == 2
    assert "Cells to run: 2 cell(s): never run with these settings" in notices
