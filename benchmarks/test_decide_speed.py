"""Issue 44's speed goal for ``harness run --decide``: the bookkeeping of one batch (every
claim of the main job evaluated through its confidence sequence, Holm within its family, the
next batch's cells and the cells later batches may run chosen) costs at most 2 s. A batch's
look evaluates the claims still in play (inconclusive at the last look), as ``run_decide``
does; the first look, over every claim, is the verdict pass any run makes and is recorded
apart.

Measured on the committed evidence of every plugin (``plugins/*/results/<plugin>.parquet``,
what ``make claims`` reads) with ``suites/all.yaml``'s cells: one look of
:func:`harness.cli.decide.look`. Under ``make bench`` the goal is asserted; in ``make test``
it runs once, unchecked.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
from figures import record

ROOT = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 2.0


def test_one_bookkeeping_step_of_the_main_job(benchmark, full):
    from harness.claims.evidence import (
        check_results,
        of_cells,
        read_results,
        registered,
        suite_claims,
    )
    from harness.cli.common import load
    from harness.cli.decide import eligible, look
    from harness.errors import SuiteError
    from harness.reports.aggregates import tidy_results

    registry, spec = load(str(ROOT / "suites" / "all.yaml"))
    files = sorted(ROOT.glob("plugins/*/results/*.parquet"))
    files = [f for f in files if f.stem == f.parent.parent.name]
    plugins = {p.name for p in ROOT.glob("plugins/*") if (p / "pyproject.toml").is_file()}
    if plugins - set(registry.plugins):
        pytest.skip("not every paper plugin is installed here")
    try:
        frames = [check_results(read_results(f), registry, spec.cells, str(f)).rows for f in files]
    except SuiteError as err:  # a plugin's code changed since its evidence was made
        pytest.skip(f"committed evidence out of date: {str(err)[:200]}")
    results = tidy_results(of_cells(pd.concat(frames, ignore_index=True), spec.cells))
    claims, _ = eligible(suite_claims(registry, spec.cells))
    claims = claims if full else claims[:3]  # make test: a few, to stay working
    every = registered(registry)
    next_seed = max(c.seed for c in spec.cells) + 1

    tic = time.perf_counter()  # the first look: every claim (the run's own verdicts)
    first = look(claims, results, every, spec.cells, next_seed)
    record(f"decide, first look: {len(claims)} claims, {len(first.undecided)} continue",
           f"{time.perf_counter() - tic:.2f} s", "(the verdicts any run computes)")  # fmt: skip
    undecided = [cls for cls, _ in first.undecided] or claims[:1]

    def measure():  # each later batch's look: the claims still in play (as run_decide does)
        tic = time.perf_counter()
        step = look(undecided, results, every, spec.cells, next_seed)
        return time.perf_counter() - tic, step

    seconds, step = benchmark.pedantic(measure, rounds=1, iterations=1)
    assert len(step.verdicts) == len(undecided)
    record(f"decide bookkeeping per batch: {len(undecided)} undecided claims",
           f"{seconds:.2f} s per batch", f"<= {GOAL_SECONDS:g} s")  # fmt: skip
    if full:
        assert seconds <= GOAL_SECONDS
