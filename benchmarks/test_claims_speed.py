"""Issue 58's speed goal for claims: 1,000 declared claims in at most 20 s.

Each synthetic claim is a paired gain of a subject over a baseline on 10 seeds, with a
rival in the subject's place and a 20-draw :class:`Permute` control, over a results table
of 20 configurations (the rows a real plugin's export holds beside a claim's own): what
``harness claims`` does per claim, isolation included. Under ``make bench`` the 1,000 are
timed and the goal asserted; in ``make test`` 3 claims run once.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
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
        tic = time.perf_counter()
        verdicts = evaluate_claims(claims, results)
        return time.perf_counter() - tic, verdicts

    seconds, verdicts = benchmark.pedantic(measure, rounds=1, iterations=1)
    faults = {v.claim: v.reason for v in verdicts if str(v.status) in ("error", "not-run")}
    assert not faults, list(faults.items())[:3]
    record(f"{count} declared claims (rival + 20-draw Permute)", f"{seconds:.1f} s",
           f"<= {GOAL_SECONDS:g} s for 1,000")  # fmt: skip
    if full:
        assert seconds <= GOAL_SECONDS
