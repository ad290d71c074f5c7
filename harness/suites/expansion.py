"""A suite's runs, flattened and expanded into cells.

:func:`collect_runs` reads a suite file and its includes (depth first, includes before the
file's own runs) into :class:`FlatRun` objects, one per run, whose entries
(:class:`Item`) remember where each value came from; :mod:`harness.suites.overrides` changes
them; :func:`check_cap` counts the cells before anything is expanded; :func:`expand_run`
validates every configuration against the registry and appends the run's cells.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from harness.components import describe_type, params_fields, type_adapter, validate_params
from harness.errors import ParamsError, SuiteError
from harness.plugins.registry import Registry
from harness.redaction import shown
from harness.suites.identity import Cell, canonical, json_params, param_text
from harness.suites.safe_yaml import SEE_DOCS
from harness.suites.schema import (
    EffectiveRun,
    SuiteFile,
    check_seeds,
    check_timeout,
    read_suite_file,
)

__all__ = [
    "MAX_INCLUDE_DEPTH",
    "MAX_SUITE_FILES",
    "FlatRun",
    "Item",
    "Selection",
    "check_cap",
    "collect_runs",
    "expand_run",
]

#: Most suite files one suite may read (itself and its includes, a file included twice counted
#: twice) and the deepest chain of includes.
MAX_SUITE_FILES = 256
MAX_INCLUDE_DEPTH = 16


@dataclass
class Item:
    """One datasets/methods/metrics entry of the effective suite and where it came from."""

    name: str
    params: dict[str, Any]
    grid: dict[str, list[Any]]
    place: str  # "a.yaml: runs[0].methods[1]", or the option that added it
    origins: dict[str, str] = field(default_factory=dict)  # param -> option that set it
    filters: list[tuple[str, dict[str, Any]]] | None = None  # selections, None: all configs
    added: bool = False

    def at(self, key: str, part: str = "params", index: int | None = None) -> str:
        """Where the value of param ``key`` came from (file place or option)."""
        if key in self.origins:
            return self.origins[key]
        return f"{self.place}.{part}.{key}" + ("" if index is None else f"[{index}]")


@dataclass
class FlatRun:
    """One run of the effective suite: its task, entries, seeds and timeout, and the file,
    index and experiment (the declaring suite's name) it came from."""

    file: Path
    index: int
    task: str
    datasets: list[Item]
    methods: list[Item]
    metrics: list[Item]
    seeds: Sequence[int]
    timeout: float | None
    experiment: str = ""  # the name of the suite file that declares the run

    @property
    def place(self) -> str:
        return f"{self.file}: runs[{self.index}]"


@dataclass
class Selection:
    """What the ``--dataset``/``--method`` selections with params met while expanding:
    ``{option: configurations it matched}`` and ``{option: configurations it was tried on}``."""

    hits: dict[str, list[str]] = field(default_factory=dict)
    seen: dict[str, list[str]] = field(default_factory=dict)


def collect_runs(
    path: Path, registry: Registry, problems: list[str], runs: list[FlatRun]
) -> SuiteFile:
    """Read the suite file ``path`` and its includes into ``runs`` (depth first, includes
    before the file's own runs), appending the problems of seeds and timeouts to ``problems``.

    :returns: the top file's :class:`SuiteFile`.
    :raises SuiteError: for a file that cannot be read or validated, an include cycle, a
        chain of includes deeper than :data:`MAX_INCLUDE_DEPTH` or more than
        :data:`MAX_SUITE_FILES` files read.
    """
    return _collect(path, "", (), registry, problems, runs, [])


def _collect(
    path: Path,
    where: str,
    stack: tuple[Path, ...],
    registry: Registry,
    problems: list[str],
    runs: list[FlatRun],
    files: list[Path],
) -> SuiteFile:
    """:func:`collect_runs` of one file; ``files`` collects every file read."""
    try:
        key = path.resolve()
    except (OSError, ValueError, RuntimeError):
        key = path
    if key in stack:
        chain = " -> ".join(str(p) for p in (*stack, key))
        raise SuiteError(f"{where}: include cycle {chain}.")
    if len(stack) > MAX_INCLUDE_DEPTH:
        raise SuiteError(f"{where}: includes nested more than {MAX_INCLUDE_DEPTH} deep.")
    if len(files) >= MAX_SUITE_FILES:
        raise SuiteError(
            f"{where}: a suite reads at most {MAX_SUITE_FILES} files (itself and its includes,"
            " a file included twice counted twice); this one reads more."
        )
    files.append(key)
    spec = read_suite_file(path, where)
    seeds = check_seeds(spec.seeds, spec.repetitions, f"{path}: ", problems)
    timeout = check_timeout(spec.timeout, f"{path}: timeout", problems)
    for i, include in enumerate(spec.include):
        child, at = path.parent / include, f"{path}: include[{i}]"
        _collect(child, at, (*stack, key), registry, problems, runs, files)
    for i, run in enumerate(spec.runs):
        runs.append(_flat_run(path, i, run, spec, registry, problems, (seeds, timeout)))
    return spec


def _flat_run(
    path: Path,
    index: int,
    run: Any,
    spec: SuiteFile,
    registry: Registry,
    problems: list[str],
    defaults: tuple[Sequence[int] | None, float | None],
) -> FlatRun:
    """Run ``index`` of suite file ``path`` (``spec``) with the file's default seeds and
    timeout (``defaults``) where it gives none; no metric list means every metric."""
    seeds, timeout = defaults
    place = f"{path}: runs[{index}]"
    run_seeds = check_seeds(run.seeds, run.repetitions, f"{place}.", problems)
    run_timeout = check_timeout(run.timeout, f"{place}.timeout", problems)

    def items(entries: list[Any], kind: str) -> list[Item]:
        return [
            Item(e.name, dict(e.params), dict(getattr(e, "grid", {})), f"{place}.{kind}[{j}]")
            for j, e in enumerate(entries)
        ]

    metrics = items(run.metrics, "metrics")
    if not run.metrics and run.task in registry.tasks():  # no list: every metric of the task
        default = f"{place}.metrics (every metric of '{run.task}')"
        metrics = [Item(n, {}, {}, default) for n in registry.names("metric", run.task)]
    return FlatRun(
        path,
        index,
        run.task,
        items(run.datasets, "datasets"),
        items(run.methods, "methods"),
        metrics,
        run_seeds if run_seeds is not None else (seeds if seeds is not None else [0]),
        run_timeout if run.timeout is not None else timeout,
        spec.name,
    )


def _count(items: list[Item]) -> int:
    return sum(math.prod(len(v) for v in item.grid.values()) for item in items)


def check_cap(runs: list[FlatRun], cap: int) -> None:
    """Count the cells of ``runs`` before expanding anything.

    :raises SuiteError: when there are more than ``cap``, naming the largest run.
    """
    sizes = [(_count(r.datasets), _count(r.methods), len(r.seeds), r) for r in runs]
    total = sum(d * m * s for d, m, s, _ in sizes)
    if total <= cap:
        return
    d, m, s, run = max(sizes, key=lambda x: x[0] * x[1] * x[2])
    raise SuiteError(
        f"{run.place}: the suite has {total:,} cells, above the cap of {cap:,} (this run:"
        f" {d:,} dataset x {m:,} method configurations x {s:,} seeds). Use fewer grid values"
        f" or seeds, or raise the cap with --max-cells. {SEE_DOCS}"
    )


def expand_run(
    run: FlatRun,
    registry: Registry,
    problems: list[str],
    cells: list[Cell],
    expanded_runs: list[EffectiveRun],
    selection: Selection,
) -> None:
    """Validate every configuration of ``run`` against ``registry`` and append its cells to
    ``cells`` (dataset x method configurations x seeds) and the run as it expanded to
    ``expanded_runs``; problems (unknown names, params that do not validate) go to
    ``problems``, and nothing is appended for a run that has any."""
    if run.task not in registry.tasks():  # name the task, not its first dataset
        try:
            registry.get("dataset", run.task, "", where=f"{run.place}.task")
        except SuiteError as err:
            problems.append(str(err))
        return
    before = len(problems)
    datasets = _configs(run, "dataset", run.datasets, registry, problems, selection)
    methods = _configs(run, "method", run.methods, registry, problems, selection)
    metrics = _metrics(run, registry, problems)
    if len(problems) > before:
        return
    datasets = list({canonical(d[:2]): d for d in datasets}.values())  # listed twice: once
    methods = list({canonical(m[:2]): m for m in methods}.values())
    expanded_runs.append(
        EffectiveRun(
            file=str(run.file),
            run=run.index,
            experiment=run.experiment,
            task=run.task,
            seeds=list(run.seeds),
            timeout=run.timeout,
            metrics=list(metrics),
            datasets=[d[:2] for d in datasets],
            methods=[m[:2] for m in methods],
        )
    )
    metric_plugins = {registry.get("metric", run.task, m).plugin for m, _ in metrics}
    for (dname, dparams, dver), (mname, mparams, mver), seed in itertools.product(
        datasets, methods, run.seeds
    ):
        plugins = sorted({dver[0], mver[0], *metric_plugins})
        code = tuple((p, registry.fingerprint(p)) for p in plugins)
        cells.append(
            Cell(
                run.task, dname, dparams, mname, mparams, seed, metrics, run.timeout, (dver, mver),
                code, run.experiment,
            )
        )  # fmt: skip


def _params_problems(item: Item, err: ParamsError, places: dict[str, str]) -> list[str]:
    out = []
    for place, whole in err.problems:
        message = whole if len(whole) <= 300 else f"{whole[:250]}... ({len(whole):,} characters)"
        if not place:  # a check in Params itself: the entry, and the options that changed it
            after = sorted(set(item.origins.values()))
            tail = f" (after {', '.join(after)})" if after else ""
            out.append(f"{item.place}: {message}{tail}")
        elif place in places.values():
            out.append(f"{place}: {message}")
        else:  # a required param that is not set
            out.append(f"{item.place}.params.{place}: {message}")
    return out


def _wanted(item: Item, fields: dict[str, Any], problems: list[str]):
    """The item's selection filters with values coerced to the params' types."""
    out = []
    for option, params in item.filters or []:
        want = {}
        for key, value in params.items():
            if key not in fields:
                known = ", ".join(fields) or "(none)"
                problems.append(f"{option}: '{item.name}' has no param '{key}'. Params: {known}.")
                continue
            try:
                coerced = type_adapter(fields[key][0]).validate_python(value)
            except pydantic.ValidationError:
                problems.append(
                    f"{option}: {key}: expected {describe_type(fields[key][0])},"
                    f" got {shown(value)}."
                )
                continue
            want[key] = json.loads(canonical(coerced))
        out.append((option, want))
    return out


def _configs(run, kind, items, registry, problems, selection) -> list:
    """Every (name, params, (plugin, version)) configuration of a datasets/methods list,
    less those a selection (``--method mean[shift=1]``) leaves out."""
    out = []
    for item in items:
        try:
            component = registry.get(kind, run.task, item.name, where=item.place)
        except SuiteError as err:
            problems.append(str(err))
            continue
        overlap = set(item.params) & set(item.grid)
        if overlap:
            problems.append(f"{item.place}: {sorted(overlap)} set in both params and grid.")
            continue
        empty = [k for k, v in item.grid.items() if not v]
        if empty:
            problems.append(
                f"{item.at(empty[0], 'grid')}: an empty list gives no configurations;"
                " give values or remove the key."
            )
            continue
        fields = params_fields(component.cls.Params)
        unknown = [k for k in item.grid if k not in fields]
        if unknown:  # one problem, not one per grid value
            known = ", ".join(fields) or "(none)"
            problems += [
                f"{item.at(k, 'grid')}: unknown param '{k}' of '{item.name}'. Known: {known}."
                for k in unknown
            ]
            continue
        wanted = _wanted(item, fields, problems)
        keys = list(item.grid)
        for combo in itertools.product(*(list(enumerate(item.grid[k])) for k in keys)):
            values = dict(item.params) | {k: v for k, (_, v) in zip(keys, combo, strict=True)}
            places = {k: item.at(k) for k in item.params}
            places |= {k: item.at(k, "grid", i) for k, (i, _) in zip(keys, combo, strict=True)}
            try:
                params = json_params(validate_params(component.cls, values, where=places))
            except ParamsError as err:
                problems += _params_problems(item, err, places)
                continue
            if item.filters is not None:
                matched = False
                for option, want in wanted:
                    label = ", ".join(f"{k}={param_text(params.get(k))}" for k in want)
                    selection.seen.setdefault(option, []).append(label)
                    if all(params.get(k) == v for k, v in want.items()):
                        selection.hits.setdefault(option, []).append(label)
                        matched = True
                if not matched:
                    continue
            out.append((item.name, params, (component.plugin, component.version)))
    return out


def _metrics(run, registry, problems) -> tuple:
    """The run's ``(metric name, params)`` list; a metric listed twice is refused (a metric is
    logged under its name, so a second entry's values would replace the first's)."""
    out = []
    first: dict[str, str] = {}
    for item in run.metrics:
        if item.name in first:
            problems.append(
                f"{item.place}: metric {shown(item.name)} is listed twice ({first[item.name]});"
                " its values are logged under its name, so list it once."
            )
            continue
        first[item.name] = item.place.rpartition(".")[2]
        places = {k: item.at(k) for k in item.params}
        try:
            component = registry.get("metric", run.task, item.name, where=item.place)
            params = validate_params(component.cls, item.params, where=places)
        except SuiteError as err:
            problems.append(str(err))
            continue
        except ParamsError as err:
            problems += _params_problems(item, err, places)
            continue
        out.append((item.name, json_params(params)))
    return tuple(out)
