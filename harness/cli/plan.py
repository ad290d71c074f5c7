"""``harness run --dry-run``: what a run would do with each cell, read without writing."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from harness.cli.common import console, plain

if TYPE_CHECKING:
    from harness.suites.identity import Cell
    from harness.suites.loading import Suite

DRY_RUN_SHOWN = 5  # cells shown per task by --dry-run without -v


def cell_table(cells: list[Cell], title: str, states: dict[str, str] | None = None) -> Table:
    """A table of ``cells`` (task, dataset and method with their params, seed), with each
    one's state (``done``, or why it runs) when ``states`` maps cell hashes to them."""
    table = Table(title=escape(title), show_lines=False)
    columns = ["#", "task", "dataset", "dataset params", "method", "method params", "seed"]
    for col in [*columns, *(["state"] if states is not None else [])]:
        table.add_column(col, overflow="fold")
    for i, c in enumerate(cells, 1):
        dp = ", ".join(f"{k}={v}" for k, v in c.dataset_params.items())
        mp = ", ".join(f"{k}={v}" for k, v in c.method_params.items())
        state = [] if states is None else [_state(states[c.cell_hash])]
        row = (str(i), c.task, c.dataset, dp, c.method, mp, str(c.seed))
        table.add_row(*plain(*row), *state)
    return table


def _state(state: str) -> str:
    return "[green]done[/]" if state == "done" else f"runs: {escape(state)}"


def print_plan(spec: Suite, tracking_uri: str | None, force: bool, verbose: bool = False) -> None:
    """Per task, how many cells a run would resume from the store and how many it would run
    and why, then the first cells of each task (every cell with ``verbose``); read without
    writing to the store (a store that does not exist yet is not created)."""
    from harness.runs.runner import planned_states
    from harness.store.tracking import Tracker, resolve_uri, sqlite_store_missing

    uri = resolve_uri(tracking_uri)
    missing = sqlite_store_missing(uri)
    states = planned_states(spec, None if missing else Tracker(uri), force=force)
    counts = Table(
        title=escape(f"{spec.name}: {len(spec.cells)} cells by task and state, then by method")
    )
    for column in ("task", "method", "cells", "done", "to run (why)"):
        counts.add_column(column, overflow="fold")
    shown: list[Any] = []
    for task in spec.tasks():
        cells = [c for c in spec.cells if c.task == task]
        counts.add_row(*_count_row(task, "(every method)", cells, states))
        methods = dict.fromkeys(c.method for c in cells)
        for method in methods if len(methods) > 1 else ():  # an --add-method's cells shown
            counts.add_row(
                *_count_row("", method, [c for c in cells if c.method == method], states)
            )
        shown += cells if verbose else cells[:DRY_RUN_SHOWN]
    console.print(counts)
    title = (
        f"every cell of {spec.name}"
        if verbose
        else (f"the first {DRY_RUN_SHOWN} cells of each task (-v shows every cell)")
    )
    console.print(cell_table(shown, title, states))
    done = sum(state == "done" for state in states.values())
    reasons = Counter(state for state in states.values() if state != "done")
    why = "".join(f"; {n} cell(s): {escape(reason)}" for reason, n in reasons.items())
    console.print(
        f"{len(spec.cells)} cells: {done} done, {len(spec.cells) - done} to run{why}"
        + (f"; no store at {escape(uri)} yet" if missing else "")
    )


def _count_row(task: str, method: str, cells: list[Cell], states: dict[str, str]) -> list[str]:
    """One row of the dry run's counts: the cells, those done, those to run and why."""
    per = Counter(states[c.cell_hash] for c in cells)
    todo = "; ".join(f"{n}: {reason}" for reason, n in per.items() if reason != "done")
    return plain(task, method, str(len(cells)), str(per["done"]), todo or "0")
