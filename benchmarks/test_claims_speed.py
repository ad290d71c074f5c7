"""Issue 58's speed goals for claims: 1,000 declared claims in at most 20 s, and ``make
claims`` (every claim of ``suites/all.yaml`` from the committed evidence, every rival and
control) in at most 3 s beyond the command's start-up.

Each synthetic claim is a paired gain of a subject over a baseline on 10 seeds, with a
rival in the subject's place and a 20-draw :class:`Permute` control, over a results table
of 20 configurations (the rows a real plugin's export holds beside a claim's own): what
``harness claims`` does per claim, isolation included. Under ``make bench`` the 1,000 are
timed and the goal asserted; in ``make test`` 3 claims run once. ``make claims`` is timed
as a whole process (the median of 3, alternated with ``harness --version`` for the
start-up) under ``make bench`` only.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from figures import record

from harness.claims import (
    Cells,
    Claim,
    Greater,
    PairedGain,
    Permute,
    Rival,
    Select,
    Source,
    evaluate_claims,
)

SEEDS = 10
CONFIGURATIONS = 20
GOAL_SECONDS = 20.0


def _results() -> pd.DataFrame:
    """A ``harness results`` table: methods subject, rival, baseline x configurations x
    seeds; the subject better than the baseline by 1 (the claim: by more than 0.5), the
    rival not."""
    rng = np.random.default_rng(0)
    rows = []
    for config in range(CONFIGURATIONS):
        for seed in range(SEEDS):
            base = rng.normal(5.0, 1.0)
            for method, gain in (("subject", 1.0), ("rival", 0.0), ("baseline", 0.0)):
                rows.append({"task": "bench", "dataset": "grid", "method": method,
                             "seed": seed, "status": "ok", "dataset.c": str(config),
                             "method.width": "8", "score": base + gain
                             + rng.normal(0, 0.1)})  # fmt: skip
    return pd.DataFrame(rows)


def _claims(count: int) -> list[type[Claim]]:
    """``count`` declared claims, each over one configuration."""
    out = []
    for i in range(count):
        config = i % CONFIGURATIONS
        attributes = {
            "__doc__": "A synthetic claim of the speed benchmark.\n\nSource: benchmark.",
            "__module__": "bench_claims",
            "name": f"gain-{i}",
            "task": "bench",
            "source": Source("benchmark"),
            "statement": "The subject scores above the baseline.",
            "requires": (
                Cells("grid", ("subject", "baseline"), {"c": config}, {"width": 8}, SEEDS),
            ),
            "metric": "score",
            "subject": "subject",
            "kind": PairedGain(Select("baseline", {"width": 8})),
            "hypothesis": Greater(0.5),
            "rivals": (Rival("rival", {"width": 8}, why="no mechanism"),),
            "control": Permute("method", within=("seed",)),
        }
        out.append(type(f"Gain{i}", (Claim,), attributes))
    return out


def test_a_thousand_declared_claims(benchmark, full):
    count = 1000 if full else 3
    claims, results = _claims(count), _results()

    def measure():
        tic, before = time.perf_counter(), os.times()
        verdicts = evaluate_claims(claims, results)
        after = os.times()  # CPU of this process and of the children it waited for
        cpu = sum(getattr(after, f) - getattr(before, f)
                  for f in ("user", "system", "children_user", "children_system"))  # fmt: skip
        return time.perf_counter() - tic, cpu, verdicts

    seconds, cpu, verdicts = benchmark.pedantic(measure, rounds=1, iterations=1)
    faults = {v.claim: v.reason for v in verdicts if str(v.status) in ("error", "not-run")}
    assert not faults, list(faults.items())[:3]
    record(f"{count} declared claims (rival + 20-draw Permute)",
           f"{seconds:.1f} s ({cpu:.1f} s CPU, load {os.getloadavg()[0]:.1f})",
           f"<= {GOAL_SECONDS:g} s for 1,000")  # fmt: skip
    if full:
        assert seconds <= GOAL_SECONDS


ROOT = Path(__file__).resolve().parents[1]
HARNESS = str(Path(sys.executable).with_name("harness"))
MAKE_CLAIMS_GOAL = 3.0


def _seconds(args: list[str]) -> float:
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_DISABLE_PLUGINS"}
    tic = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return time.perf_counter() - tic


def test_make_claims_beyond_start_up(benchmark, full):
    """``harness claims suites/all.yaml --results <each plugin's evidence>`` (what ``make
    claims`` runs) minus ``harness --version`` (the start-up), whole processes."""
    if not full:
        pytest.skip("a whole-command timing: make bench")
    evidence = [f for f in sorted(ROOT.glob("plugins/*/results/*.parquet"))
                if f.stem == f.parent.parent.name]  # fmt: skip
    claims = [HARNESS, "claims", "suites/all.yaml", "--format", "markdown"]
    for file in evidence:
        claims += ["--results", str(file.relative_to(ROOT))]
    _seconds(claims)  # warm the file cache and the plugin catalog

    def measure():
        whole, start = [], []
        for _ in range(3):
            whole.append(_seconds(claims))
            start.append(_seconds([HARNESS, "--version"]))
        return statistics.median(whole), statistics.median(start)

    whole, start = benchmark.pedantic(measure, rounds=1, iterations=1)
    record("`make claims` beyond start-up, whole process", f"{whole - start:.2f} s"
           f" ({whole:.2f} - {start:.2f})", f"<= {MAKE_CLAIMS_GOAL:g} s")  # fmt: skip
    assert whole - start <= MAKE_CLAIMS_GOAL
