"""``harness run --decide``: more seeds only where a claim is still undecided, read through
anytime-valid confidence sequences (docs/design.md, "Deciding").

After the suite's own seeds, every declared claim whose unit is the seed and whose verdict is
``inconclusive`` gets another batch of seeds for exactly the cells it needs (its rivals'
included), through the same executor; the claims are evaluated again after each batch through
their confidence sequences (:mod:`harness.claims.sequential`), so looking after every batch
keeps each claim's error rate. A claim stops when it is decided, at its ``max_units`` (default
4 x its ``min_seeds``), or when the pass's wall-time budget is spent. Batches are ordinary
runs: Ctrl-C keeps every finished cell and a rerun resumes them.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.cli.common import console, duration

if TYPE_CHECKING:
    from harness.plugins.registry import Registry
    from harness.store.tracking import Tracker
    from harness.suites.loading import Suite

__all__ = ["DecidePass", "decide"]


@dataclass
class DecidePass:
    """What a decide pass did: the suite with the cells it added, the claims it read through
    confidence sequences, each claim's trajectory ``[(units, estimate, low, high), ...]``,
    the notes on claims it could not help, and its batches and seconds."""

    spec: Suite
    anytime: set[str] = field(default_factory=set)
    added: list = field(default_factory=list)
    trajectories: dict[str, list[tuple[int, float, float, float]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    batches: int = 0
    seconds: float = 0.0


def eligible(claims: list[Any]) -> tuple[list[Any], list[str]]:
    """``(claims more seeds can decide, one note per claim they cannot)``."""
    keep, notes = [], []
    for cls in claims:
        if not cls.declared():
            notes.append(f"{cls.name}: computes its own statistic; --decide needs a declared kind")
        elif not _seeded(cls.unit):
            notes.append(f"{cls.name}: its unit is {cls.unit!r}, not the seed; more seeds add no"
                         " units (skipped)")  # fmt: skip
        else:
            keep.append(cls)
    return keep, notes


def _seeded(unit: Any) -> bool:
    """Whether more seeds add units: the unit is the seed, or names it among its columns."""
    return unit == "seed" or (not isinstance(unit, str) and "seed" in tuple(unit))


def decide(
    tracker: Tracker,
    registry: Registry,
    spec: Suite,
    runner: Any,
    settings: dict[str, Any],
    budget: float | None,
    fail_fast: bool = False,
    evidence: Any = None,
) -> DecidePass:
    """Run the decide pass after ``spec``'s cells; returns what it did (its ``spec`` holds
    the added cells, for the summary and the report). ``evidence``: the suite whose cells
    the verdicts read, when not ``spec`` (``--claim``: the claims' families)."""
    from harness.claims import Status, evaluate_claims
    from harness.claims.evidence import registered, suite_claims
    from harness.claims.family import max_units
    from harness.cli.progress import run_with_progress

    tic = time.monotonic()
    claims, notes = eligible(suite_claims(registry, spec.cells))
    done = DecidePass(spec, anytime={c.name for c in claims},
                      trajectories={c.name: [] for c in claims}, notes=notes)  # fmt: skip
    for note in notes:
        console.print(f"  decide: {note}", soft_wrap=True, markup=False)
    by_name = {c.name: c for c in claims}
    next_seed = max((c.seed for c in spec.cells), default=-1) + 1
    every = registered(registry)
    last_batch = 0.0  # seconds the latest batch took: the next one is not started past budget
    while claims:
        read = done.spec if evidence is None else dataclasses.replace(
            evidence, cells=[*evidence.cells, *done.added])  # fmt: skip
        verdicts = evaluate_claims(claims, _results(tracker, read), every,
                                   anytime=done.anytime)  # fmt: skip
        undecided = []
        for v in verdicts:
            if v.estimate is not None:
                done.trajectories[v.claim].append(
                    (v.estimate.n, v.estimate.estimate, v.estimate.low, v.estimate.high)
                )
            cls = by_name[v.claim]
            if v.status != Status.INCONCLUSIVE or v.estimate is None:
                continue
            if v.estimate.n >= max_units(cls):
                console.print(f"  decide: {v.claim}: at its budget of {max_units(cls)} units,"
                              f" {v.interval} vs {v.hypothesis} (inconclusive)",
                              soft_wrap=True, markup=False)  # fmt: skip
                continue
            undecided.append((cls, v))
        spent = time.monotonic() - tic
        if not undecided:
            if not done.batches:
                console.print("  decide: no claim more seeds can decide (none is inconclusive"
                              " below its max_units)", markup=False)  # fmt: skip
            break
        if budget is not None and spent + last_batch > budget:  # the next batch would overrun
            console.print(f"  decide: the next batch would pass the wall-time budget of"
                          f" {duration(budget)} ({duration(spent)} spent, the last batch took"
                          f" {duration(last_batch)}); {len(undecided)} claim(s) left"
                          " inconclusive", markup=False)  # fmt: skip
            break
        batch = max(1, math.ceil(min(v.estimate.n for _, v in undecided) / 4))
        for _, v in undecided:
            why = v.reason.splitlines()[0] if v.reason else "covers the margin"
            console.print(f"  decide: {v.claim}: {v.interval} vs {v.hypothesis} at"
                          f" {v.estimate.n} units ({why}); +{batch} seed(s)",
                          soft_wrap=True, markup=False)  # fmt: skip
        started = time.monotonic()
        cells = _batch_cells(registry, done.spec, [c for c, _ in undecided], next_seed, batch)
        next_seed += batch
        part = dataclasses.replace(done.spec, cells=cells)
        run_with_progress(part, registry, tracker, runner, settings, force=False,
                          fail_fast=fail_fast, pdb=False)  # fmt: skip
        done.spec = dataclasses.replace(done.spec, cells=[*done.spec.cells, *cells])
        done.added += cells
        done.batches += 1
        last_batch = time.monotonic() - started
    done.seconds = time.monotonic() - tic
    return done


def _results(tracker: Tracker, spec: Suite) -> Any:
    from harness.reports.aggregates import tidy_results

    results = tracker.suite_results(spec)
    return tidy_results(results) if not results.empty else results


def _batch_cells(
    registry: Registry, spec: Suite, claims: list[Any], first: int, count: int
) -> list:
    """The cells ``claims`` need (rivals' included) at seeds ``first .. first + count - 1``,
    each once."""
    from harness.claims.evidence import cells_of

    base_seed = min(c.seed for c in spec.cells)
    needed = [c for c in cells_of(claims, spec.cells) if c.seed == base_seed]
    out: dict[str, Any] = {}
    for cell in needed:
        for seed in range(first, first + count):
            new = dataclasses.replace(cell, seed=seed)
            out.setdefault(new.cell_hash, new)
    return list(out.values())
