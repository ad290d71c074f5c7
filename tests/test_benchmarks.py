"""Harness overhead (issue 2): a 200-cell suite of no-op cells on a local sqlite store.

Targets: at most 30 ms of harness overhead per cell, and a fully resumed second run of
the same suite in at most 5 s. Measure with ``pytest tests/test_benchmarks.py
--benchmark-enable``; with benchmarks disabled (``make test``) each runs once.
"""

from __future__ import annotations

import shutil

from harness.runner import LocalExecutor, run_suite
from harness.suite import load_suite
from harness.tracking import Tracker

SUITE = """
name: overhead
repetitions: 20
runs:
  - task: toy
    datasets: [{name: noise, grid: {n: [1, 2, 3, 4, 5]}}]
    methods: [{name: mean, grid: {shift: [0.0, 1.0]}}]
    metrics: [abs-error]
"""


def test_overhead_of_200_noop_cells(benchmark, registry, write_suite, tmp_path, _empty_store):
    suite = load_suite(write_suite(SUITE), registry)
    assert len(suite.cells) == 200
    counter = iter(range(10**6))

    def fresh_store():
        path = tmp_path / f"store-{next(counter)}.db"
        shutil.copy(_empty_store, path)
        return (Tracker(f"sqlite:///{path}"),), {}

    def run(tracker):
        return run_suite(suite, registry, tracker, executor=LocalExecutor(registry, 1))

    outcome = benchmark.pedantic(run, setup=fresh_store, rounds=3)
    assert outcome.ran == 200 and not outcome.problems


def test_fully_resumed_run_of_200_cells(benchmark, registry, write_suite, store):
    suite = load_suite(write_suite(SUITE), registry)
    tracker = Tracker(store)
    assert run_suite(suite, registry, tracker).ran == 200
    outcome = benchmark.pedantic(lambda: run_suite(suite, registry, tracker), rounds=3)
    assert outcome.ran == 0
