"""Loading a suite: YAML file -> validated model -> effective suite -> cells.

A suite file (format in docs/design.md, 'Suites') is read defensively
(:mod:`harness.suites.safe_yaml`), validated (:mod:`harness.suites.schema`), flattened with its
includes
(:mod:`harness.suites.expansion`), changed by the command-line overrides and selections
(:mod:`harness.suites.overrides`), its cells *counted* (at most ``max_cells``) and only then
expanded into :class:`~harness.suites.identity.Cell` objects: the cartesian product of dataset
configurations, method configurations and seeds. Every error names the file and the place
inside it (``suites/fair.yaml: runs[0].methods[1].grid.alpha[1]: expected float, got
'high'.``) or the command-line option it came from, and never echoes the content of a file
that is not a suite. :func:`load_logged_suite` reads back the effective suite a run logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic

from harness.errors import SuiteError
from harness.plugins.registry import Registry
from harness.suites.expansion import FlatRun, Item, Selection, check_cap, collect_runs, expand_run
from harness.suites.identity import Cell
from harness.suites.overrides import Overrides, apply_overrides, unmatched_selections
from harness.suites.safe_yaml import parse_yaml
from harness.suites.schema import (
    EffectiveRun,
    EffectiveSuite,
    check_seeds,
    check_timeout,
    validation_problems,
)

__all__ = ["Suite", "load_logged_suite", "load_suite"]


@dataclass
class Suite:
    """A validated, expanded suite.

    Attributes
    ----------
    name : str
        MLflow experiment name and report folder name (checked by
        :func:`harness.suites.schema.check_name`).
    path : Path
    description : str
    cells : list of Cell
    expanded : dict
        The effective suite (:class:`harness.suites.schema.EffectiveSuite` as JSON values):
        includes resolved, overrides and selections applied (listed under ``overrides``),
        defaults filled in; logged on the parent run as ``suite.yaml``.
    """

    name: str
    path: Path
    description: str
    cells: list[Cell]
    expanded: dict[str, Any]

    def tasks(self) -> list[str]:
        """Tasks of the suite's cells, in order of appearance."""
        return list(dict.fromkeys(cell.task for cell in self.cells))

    def experiments(self) -> dict[str, list[Cell]]:
        """``{experiment name: its cells}`` in order of appearance: the suite's own name for
        its own runs, and each included suite's name for the runs it brings."""
        out: dict[str, list[Cell]] = {}
        for cell in self.cells:
            out.setdefault(cell.experiment or self.name, []).append(cell)
        return out


def load_suite(path: str | Path, registry: Registry, overrides: Overrides | None = None) -> Suite:
    """Read, validate, override, select, count and expand a suite and everything it includes.

    :param path: the YAML file (``.yaml`` or ``.yml``, at most
        :data:`harness.suites.safe_yaml.MAX_FILE_BYTES`).
    :param registry: components to resolve names against.
    :param overrides: command-line overrides and selections; also sets the cell cap.
    :returns: the :class:`Suite` with its cells in file order (a configuration listed twice
        runs once) and the effective suite in ``Suite.expanded``.
    :raises SuiteError: listing every problem found, each naming the file and the place
        inside it (``a.yaml: runs[1].seeds[0]: ...``) or the option it came from; raised
        before any cell is expanded when the cells would exceed the cap.
    """
    path = Path(path)
    overrides = overrides or Overrides()
    problems: list[str] = []
    runs: list[FlatRun] = []
    top = collect_runs(path, registry, problems, runs)
    if not problems:
        apply_overrides(runs, overrides, registry, problems)
    if problems:
        raise _problems(problems)
    check_cap(runs, overrides.max_cells)
    head = EffectiveSuite(name=top.name, description=top.description, overrides=overrides.options())
    return _build(path, head, runs, registry, overrides)


def load_logged_suite(text: str, source: str, registry: Registry) -> Suite:
    """The suite a ``harness run`` logged (the text of its ``suite.yaml``, the dump of
    :class:`~harness.suites.schema.EffectiveSuite`), read back through that model and expanded
    again with the installed plugins: each configuration's params are validated again and
    each cell's plugin versions and code fingerprints are today's, so its ``cell_hash`` is
    the one a run of that suite would give now.

    :param text: the logged YAML text (read with the same limits as a suite file).
    :param source: what the text is, for messages (``"suite.yaml of run 1a2b"``).
    :param registry: components to resolve names against.
    :returns: the :class:`Suite`; each cell's ``experiment`` is its run's (empty for a
        suite logged before runs named their experiment), ``expanded`` the logged suite.
    :raises SuiteError: naming ``source`` and the place, when the text is not such a suite
        or a component or param it names no longer exists or validates.
    """
    raw = parse_yaml(source, text)
    try:
        logged = EffectiveSuite.model_validate(raw)
    except pydantic.ValidationError as err:
        models = {(): EffectiveSuite, ("runs",): EffectiveRun}
        raise _problems(validation_problems(source, err, models)) from None
    problems: list[str] = []
    runs = [_logged_run(source, i, run, problems) for i, run in enumerate(logged.runs)]
    if problems:
        raise _problems(problems)
    suite = _build(Path(source), logged, runs, registry, Overrides())
    suite.expanded = logged.model_dump(mode="json")  # as logged, file names and all
    return suite


def _logged_run(source: str, index: int, run: EffectiveRun, problems: list[str]) -> FlatRun:
    """A logged run as a run of the effective suite (no grid: every configuration listed)."""
    place = f"{source}: runs[{index}]"

    def items(entries: list[tuple[str, dict[str, Any]]], kind: str) -> list[Item]:
        return [
            Item(name, dict(params), {}, f"{place}.{kind}[{j}]")
            for j, (name, params) in enumerate(entries)
        ]

    seeds = check_seeds(run.seeds, None, f"{place}.", problems)
    datasets, methods = items(run.datasets, "datasets"), items(run.methods, "methods")
    return FlatRun(
        Path(source), index, run.task, datasets, methods, items(run.metrics, "metrics"),
        seeds or [], check_timeout(run.timeout, f"{place}.timeout", problems), run.experiment,
    )  # fmt: skip


def _build(
    path: Path, head: EffectiveSuite, runs: list[FlatRun], registry: Registry, ov: Overrides
) -> Suite:
    """Expand ``runs`` into the suite's cells; ``head`` gets the expanded runs."""
    problems: list[str] = []
    cells: list[Cell] = []
    expanded_runs: list[EffectiveRun] = []
    selection = Selection()
    for run in runs:
        expand_run(run, registry, problems, cells, expanded_runs, selection)
    unmatched_selections(ov, selection, problems)
    if problems:
        raise _problems(problems)
    if not cells:
        raise SuiteError(f"{path}: runs: the suite (with its includes) has no cells.")
    cells = list({c.cell_hash: c for c in cells}.values())  # a config listed twice runs once
    effective = head.model_copy(update={"runs": expanded_runs})
    return Suite(head.name, path, head.description, cells, effective.model_dump(mode="json"))


def _problems(problems: list[str], limit: int = 20) -> SuiteError:
    """One error listing each distinct problem once, at most ``limit`` of them."""
    unique = list(dict.fromkeys(problems))
    more = len(unique) - limit
    tail = [f"... and {more:,} more problems like these."] if more > 0 else []
    return SuiteError("\n".join(unique[:limit] + tail))
