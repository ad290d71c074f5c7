"""``harness run --decide``: more seeds only where a claim is still undecided, read through
anytime-valid confidence sequences (docs/design.md, "Deciding").

After the suite's own seeds, every declared claim whose unit is the seed and whose verdict is
``inconclusive`` gets another batch of seeds for exactly the cells it needs (its rivals'
included), through the same executor; the claims are evaluated again after each batch through
their confidence sequences (:mod:`harness.claims.sequential`), so looking after every batch
keeps each claim's error rate. A claim stops when it is decided, at its ``max_units`` (default
4 x its ``min_seeds``), or when the pass's wall-time budget is spent. The batches run under
one progress bar whose total and ETA are the whole pass's. Batches are ordinary runs: Ctrl-C
keeps every finished cell and a rerun resumes them.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.cli.common import console, duration

if TYPE_CHECKING:
    import pandas as pd

    from harness.plugins.registry import Registry
    from harness.store.tracking import Tracker
    from harness.suites.identity import Cell
    from harness.suites.loading import Suite

__all__ = ["DecidePass", "Look", "decide", "decided_file", "decided_table", "look"]


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


@dataclass
class Look:
    """One look of the decide pass (its bookkeeping after a batch): every claim's verdict,
    the claims it continues (each with its verdict), the verdicts of those at their
    ``max_units``, the seeds the next batch adds and its cells, and the cells later batches
    may still run (at most: every claim continued up to its ``max_units``)."""

    verdicts: list
    undecided: list[tuple[Any, Any]]
    at_budget: list
    batch: int = 0
    cells: list = field(default_factory=list)
    later: list = field(default_factory=list)


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


def look(
    claims: list[Any],
    results: pd.DataFrame,
    every: Any,
    cells: list[Cell],
    next_seed: int,
    anytime: Any = None,
) -> Look:
    """The bookkeeping of one look: ``claims`` evaluated on ``results`` through their
    confidence sequences (``anytime``: the names read so, default ``claims``' own), Holm
    within their families (``every``: the registered claims); the inconclusive ones below
    their ``max_units`` continue, and the next batch's cells (seeds from ``next_seed``) and
    the cells later batches may run are chosen among ``cells`` (the suite's so far)."""
    from harness.claims import Status, evaluate_claims
    from harness.claims.family import max_units

    names = {c.name for c in claims} if anytime is None else anytime
    verdicts = evaluate_claims(claims, results, every, anytime=names)
    by_name = {c.name: c for c in claims}
    undecided, at_budget = [], []
    for v in verdicts:
        if v.status != Status.INCONCLUSIVE or v.estimate is None:
            continue
        cls = by_name[v.claim]
        (at_budget if v.estimate.n >= max_units(cls) else undecided).append((cls, v))
    out = Look(verdicts, undecided, [v for _, v in at_budget])
    if not undecided:
        return out
    out.batch = max(1, math.ceil(min(v.estimate.n for _, v in undecided) / 4))
    configs = _configurations(cells)
    nexts: dict[str, Any] = {}
    for cls, v in undecided:
        needed = _claim_configurations(cls, configs)
        seeds = min((len(configs[k][1]) for k in needed), default=1)
        per_seed = max(1.0, v.estimate.n / max(seeds, 1))  # units a seed adds (seed x d: d)
        more = math.ceil((max_units(cls) - v.estimate.n) / per_seed)  # seeds to max_units
        for key in needed:
            nexts[key] = max(nexts.get(key, 0), more)
    for key, more in nexts.items():
        cell = configs[key][0]
        for seed in range(next_seed, next_seed + max(more, out.batch)):
            new = dataclasses.replace(cell, seed=seed)
            (out.cells if seed < next_seed + out.batch else out.later).append(new)
    return out


def _configurations(cells: list[Cell]) -> dict[str, tuple[Any, set[int]]]:
    """Each configuration of ``cells`` (its cells less the seed): its first cell and seeds."""
    from harness.runs.eta import configuration

    out: dict[str, tuple[Any, set[int]]] = {}
    for cell in cells:
        key = f"{cell.experiment}/{configuration(cell)}/{cell.metrics_hash}"
        out.setdefault(key, (cell, set()))[1].add(cell.seed)
    return out


def _claim_configurations(cls: Any, configs: dict[str, tuple[Any, set[int]]]) -> list[str]:
    """The configurations ``cls`` needs (its rivals' included)."""
    from harness.claims.evidence import cells_of

    firsts = [cell for cell, _ in configs.values()]
    wanted = {id(c) for c in cells_of([cls], firsts)}
    return [key for key, (cell, _) in configs.items() if id(cell) in wanted]


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
    from harness.claims import Status
    from harness.claims.evidence import registered, suite_claims
    from harness.cli.progress import PassProgress

    tic = time.monotonic()
    claims, notes = eligible(suite_claims(registry, spec.cells))
    done = DecidePass(spec, anytime={c.name for c in claims},
                      trajectories={c.name: [] for c in claims}, notes=notes)  # fmt: skip
    for note in notes:
        console.print(f"  decide: {note}", soft_wrap=True, markup=False)
    next_seed = max((c.seed for c in spec.cells), default=-1) + 1
    every = registered(registry)
    last_batch = 0.0  # seconds the latest batch took: the next one is not started past budget
    deadline = None if budget is None else tic + budget
    bar = PassProgress(spec.name, runner, settings, deadline, pdb=settings.get("pdb", False))
    with bar:
        while claims:  # the claims in play: inconclusive at the last look, below max_units
            read = done.spec if evidence is None else dataclasses.replace(
                evidence, cells=[*evidence.cells, *done.added])  # fmt: skip
            step = look(claims, _results(tracker, read), every, done.spec.cells, next_seed,
                        done.anytime)  # fmt: skip
            for v in step.verdicts:  # the claims the pass looks at: inconclusive at first
                if v.estimate is not None and (done.batches or v.status == Status.INCONCLUSIVE):
                    done.trajectories.setdefault(v.claim, []).append(
                        (v.estimate.n, v.estimate.estimate, v.estimate.low, v.estimate.high)
                    )
            for v in step.at_budget:
                bar.print(f"  decide: {v.claim}: at its budget of {v.estimate.n} units,"
                          f" {v.interval} vs {v.hypothesis} (inconclusive)")  # fmt: skip
            spent = time.monotonic() - tic
            if not step.undecided:
                if not done.batches:
                    bar.print("  decide: no claim more seeds can decide (none is inconclusive"
                              " below its max_units)")  # fmt: skip
                break
            if budget is not None and spent + last_batch > budget:  # the next would overrun
                bar.print(f"  decide: the next batch would pass the wall-time budget of"
                          f" {duration(budget)} ({duration(spent)} spent, the last batch took"
                          f" {duration(last_batch)}); {len(step.undecided)} claim(s) left"
                          " inconclusive")  # fmt: skip
                break
            for _, v in step.undecided:
                bar.print(f"  decide: {v.claim}: {continues(v)} at {v.estimate.n} units;"
                          f" +{step.batch} seed(s)")  # fmt: skip
            started = time.monotonic()
            part = dataclasses.replace(done.spec, cells=step.cells)
            bar.run(part, registry, tracker, runner, settings, later=step.later,
                    fail_fast=fail_fast, batch=done.batches + 1)  # fmt: skip
            next_seed += step.batch
            done.spec = dataclasses.replace(done.spec, cells=[*done.spec.cells, *step.cells])
            done.added += step.cells
            done.batches += 1
            last_batch = time.monotonic() - started
            claims = [cls for cls, _ in step.undecided]  # a claim decided leaves the pass
    done.seconds = time.monotonic() - tic
    return done


def continues(verdict: Any) -> str:
    """Why the pass gives ``verdict``'s claim more seeds, then its interval against its
    hypothesis: ``covers the margin: 0.004 [-0.001, 0.012] vs > 0.005``, or the check that
    left it undecided (Holm's adjustment, a rival, the control) in its place."""
    why = verdict.reason.splitlines()[0] if verdict.reason else "covers the margin"
    return f"{why}: {verdict.interval} vs {verdict.hypothesis}"


def _results(tracker: Tracker, spec: Suite) -> Any:
    from harness.reports.aggregates import tidy_results

    results = tracker.suite_results(spec)
    return tidy_results(results) if not results.empty else results


def decided_file(path: Any) -> str:
    """:func:`decided_table` of the ``claims.json`` at ``path``.

    :raises SuiteError: (exit 2) a file that is not a report's ``claims.json``.
    """
    import json

    from harness.errors import SuiteError

    try:
        verdicts = json.loads(path.read_text())
        if not isinstance(verdicts, list) or not all(
            isinstance(v, dict) and {"claim", "status", "hypothesis"} <= v.keys() for v in verdicts
        ):
            raise ValueError("not a list of verdicts")
        return decided_table(verdicts)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as err:
        raise SuiteError(f"--decided {path}: not a report's claims.json ({err}).") from err


def decided_table(verdicts: list[dict[str, Any]]) -> str:
    """What a decide pass decided, as Markdown, from its report's ``claims.json`` (the
    verdicts, each claim the pass looked at with its ``trajectory``: one ``[units, estimate,
    low, high]`` per look, the first after the suite's own seeds, the last where it
    stopped): the claims each batch decided, and those inconclusive at the end with the
    units they used and the units that would decide them (``units_needed``).

    >>> text = decided_table([{"claim": "c", "status": "reproduced", "hypothesis": "> 0",
    ...     "trajectory": [[5, 0.1, -0.2, 0.4], [7, 0.3, 0.01, 0.6]], "estimate": None}])
    >>> print(text.splitlines()[-1])
    | 1 | 1 | c (reproduced, 7) |
    """
    looked = [v for v in verdicts if v.get("trajectory")]
    decided = [v for v in looked if v["status"] != "inconclusive"]
    left = [v for v in looked if v["status"] == "inconclusive"]
    lines = [
        f"{len(looked)} claim(s) inconclusive after the suite's own seeds: {len(decided)}"
        f" decided by the decide pass, {len(left)} inconclusive at the end.",
        "",
    ]
    if decided:
        by_batch: dict[int, list[dict[str, Any]]] = {}
        for v in decided:
            by_batch.setdefault(len(v["trajectory"]) - 1, []).append(v)
        lines += ["| batch | decided | claims (verdict, units at stopping) |",
                  "| --- | --- | --- |"]  # fmt: skip
        for batch in sorted(by_batch):
            shown = ", ".join(f"{v['claim']} ({v['status']}, {v['trajectory'][-1][0]})"
                              for v in by_batch[batch])  # fmt: skip
            lines.append(f"| {batch} | {len(by_batch[batch])} | {shown} |")
    if left:
        lines += ["", "| inconclusive | units used | units that would decide it |"
                  " estimate [95% CI] | tested against |",
                  "| --- | --- | --- | --- | --- |"]  # fmt: skip
        for v in left:
            units, estimate, low, high = v["trajectory"][-1][:4]
            needed = v.get("units_needed") or "-"
            interval = f"{_g(estimate)} [{_g(low)}, {_g(high)}]"
            lines.append(f"| {v['claim']} | {units} | {needed} | {interval} | {v['hypothesis']} |")
    return "\n".join(lines).rstrip() + "\n"


def _g(value: float) -> str:
    return f"{value:.3g}"
