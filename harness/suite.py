"""YAML suite -> validated model -> expanded cells.

A suite file (format in DESIGN.md) is read with ``yaml.safe_load`` only, its structure is
checked with pydantic, every component name and param is checked against the registry,
and the runs are expanded into :class:`Cell` objects: the cartesian product of dataset
configurations, method configurations and seeds. Every error names the file and the path
inside it (``suites/fair.yaml: runs[0].methods[1].grid.alpha: expected float, got 'high'.``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pydantic
import yaml

from harness.components import params_as_dict, validate_params
from harness.errors import ParamsError, SuiteError
from harness.registry import Registry

__all__ = ["Cell", "Suite", "load_suite", "parse_duration"]


class _Entry(pydantic.BaseModel, extra="forbid"):
    name: str
    params: dict[str, Any] = {}
    grid: dict[str, list[Any]] = {}


class _MetricEntry(pydantic.BaseModel, extra="forbid"):
    name: str
    params: dict[str, Any] = {}


class _Run(pydantic.BaseModel, extra="forbid"):
    task: str
    datasets: list[_Entry] = pydantic.Field(min_length=1)
    methods: list[_Entry] = pydantic.Field(min_length=1)
    metrics: list[_MetricEntry] = []


class _SuiteFile(pydantic.BaseModel, extra="forbid"):
    name: str = pydantic.Field(min_length=1)
    description: str = ""
    seeds: list[int] | None = None
    repetitions: int | None = pydantic.Field(default=None, ge=1)
    timeout: str | float | None = None
    include: list[str] = []
    runs: list[_Run] = []


@dataclass(frozen=True)
class Cell:
    """One (dataset with params, method with params, seed) of a suite.

    Attributes
    ----------
    task, dataset, method : str
        Component names.
    dataset_params, method_params : dict
        Full parameter values (defaults filled in), JSON-serialisable.
    seed : int
        The suite seed; ``dataset_seed`` and ``method_seed`` are derived from it and the
        cell identity with ``numpy.random.SeedSequence``, so every method of one suite seed
        sees the same data.
    metrics : tuple of (name, params dict)
    timeout : float or None
        Hard limit in seconds.
    versions : tuple of (plugin, version)
        The dataset's and the method's plugins.
    code : tuple of (plugin, fingerprint)
        :meth:`harness.registry.Registry.fingerprint` of every plugin that contributes a
        component (dataset, method or metric) to the cell, sorted by plugin name.
    cell_hash : str
        Hex digest of everything that determines the result (the resume key, docs/design.md
        "Resume"): task, component names and params, seed, the metric list with metric
        params, plugin versions and ``code``. A change in any of them makes a new cell.
    config_hash : str
        Hex digest of task, names, params and seed only: the same experiment before and
        after a code or metric change (used to say *why* a cell runs again).
    metrics_hash : str
        Hex digest of the metric list with its params.
    """

    task: str
    dataset: str
    dataset_params: dict[str, Any]
    method: str
    method_params: dict[str, Any]
    seed: int
    metrics: tuple[tuple[str, dict[str, Any]], ...]
    timeout: float | None
    versions: tuple[tuple[str, str], ...]
    code: tuple[tuple[str, str], ...] = ()
    dataset_seed: int = field(init=False)
    method_seed: int = field(init=False)
    cell_hash: str = field(init=False)
    config_hash: str = field(init=False)
    metrics_hash: str = field(init=False)

    def __post_init__(self) -> None:
        data_id = _canonical([self.task, self.dataset, self.dataset_params])
        cell_id = _canonical(
            [self.task, self.dataset, self.dataset_params, self.method, self.method_params]
        )
        object.__setattr__(self, "dataset_seed", _derive_seed(self.seed, data_id))
        object.__setattr__(self, "method_seed", _derive_seed(self.seed, cell_id))
        config = _digest([cell_id, self.seed])
        metrics = _digest([list(m) for m in self.metrics])
        identity = [cell_id, self.seed, self.versions, metrics, self.code]
        object.__setattr__(self, "config_hash", config)
        object.__setattr__(self, "metrics_hash", metrics)
        object.__setattr__(self, "cell_hash", _digest(identity))

    @property
    def data_key(self) -> str:
        """Identity of the loaded data: cells sharing it can reuse one ``load``."""
        return _canonical([self.task, self.dataset, self.dataset_params, self.dataset_seed])

    def params(self) -> dict[str, str]:
        """MLflow params of the cell: task, names, seed and ``dataset.<p>``/``method.<p>``."""
        out = {
            "task": self.task,
            "dataset": self.dataset,
            "method": self.method,
            "seed": str(self.seed),
        }
        out |= {f"dataset.{k}": _param_str(v) for k, v in self.dataset_params.items()}
        out |= {f"method.{k}": _param_str(v) for k, v in self.method_params.items()}
        for name, params in self.metrics:
            out |= {f"metric.{name}.{k}": _param_str(v) for k, v in params.items()}
        return out


@dataclass
class Suite:
    """A validated, expanded suite.

    Attributes
    ----------
    name : str
        MLflow experiment name.
    path : Path
    description : str
    cells : list of Cell
    expanded : dict
        The suite with includes resolved and defaults filled in (logged as an artifact).
    """

    name: str
    path: Path
    description: str
    cells: list[Cell]
    expanded: dict[str, Any]

    def tasks(self) -> list[str]:
        """Tasks of the suite's cells, in order of appearance."""
        return list(dict.fromkeys(cell.task for cell in self.cells))


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))


def _digest(obj: Any) -> str:
    return hashlib.sha256(_canonical(obj).encode()).hexdigest()[:20]


def _derive_seed(seed: int, identity: str) -> int:
    words = np.frombuffer(hashlib.sha256(identity.encode()).digest()[:16], dtype=np.uint32)
    return int(
        np.random.SeedSequence(seed, spawn_key=tuple(int(w) for w in words)).generate_state(1)[0]
    )


def _param_str(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _jsonable(params: Any) -> dict[str, Any]:
    return json.loads(_canonical(params_as_dict(params)))


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")


def parse_duration(value: str | float | None) -> float | None:
    """Seconds in ``"90s"``, ``"10m"``, ``"1.5h"``, ``"250ms"`` or a number of seconds.

    :raises ValueError: if the text is not such a duration.
    """
    if value is None or isinstance(value, int | float):
        return None if value is None else float(value)
    match = _DURATION.match(value)
    if not match:
        raise ValueError(f"expected a duration like '30s', '10m' or '1h', got {value!r}")
    scale = {"ms": 1e-3, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0}[match.group(2)]
    return float(match.group(1)) * scale


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _read(path: Path, stack: tuple[Path, ...]) -> _SuiteFile:
    if path in stack:
        chain = " -> ".join(str(p) for p in (*stack, path))
        raise SuiteError(f"{stack[-1]}: include: include cycle {chain}.")
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        where = f"{stack[-1]}: include: " if stack else ""
        raise SuiteError(f"{where}suite file '{path}' does not exist.") from None
    except yaml.YAMLError as err:
        raise SuiteError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(raw, dict):
        raise SuiteError(f"{path}: a suite is a mapping with 'name' and 'runs', got {raw!r}.")
    for run in raw.get("runs") or []:  # a bare name is short for {name: ...}
        for key in ("datasets", "methods", "metrics"):
            if isinstance(run, dict) and isinstance(run.get(key), list):
                run[key] = [{"name": e} if isinstance(e, str) else e for e in run[key]]
    try:
        return _SuiteFile.model_validate(raw)
    except pydantic.ValidationError as err:
        lines = [f"{path}: {_path(e['loc'])}: {_message(e)}" for e in err.errors()]
        raise SuiteError("\n".join(lines)) from None


def _message(error: dict[str, Any]) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown key. Allowed here: see DESIGN.md 'Suites'."
    return f"{error['msg'].lower()}, got {error.get('input')!r}."


def load_suite(path: str | Path, registry: Registry) -> Suite:
    """Read, validate and expand a suite file and everything it includes.

    :param path: the YAML file.
    :param registry: components to resolve names against.
    :returns: the :class:`Suite` with its cells in file order.
    :raises SuiteError: listing every problem, each with the file and the path inside it.
    """
    path = Path(path)
    top = _read(path, ())
    problems: list[str] = []
    cells: list[Cell] = []
    expanded_runs: list[dict[str, Any]] = []
    _expand(path, top, registry, (), problems, cells, expanded_runs)
    if problems:
        raise SuiteError("\n".join(dict.fromkeys(problems)))
    if not cells:
        raise SuiteError(f"{path}: runs: the suite (with its includes) has no cells.")
    cells = list({c.cell_hash: c for c in cells}.values())  # a config listed twice runs once
    expanded = {"name": top.name, "description": top.description, "runs": expanded_runs}
    return Suite(top.name, path, top.description, cells, expanded)


def _expand(path, spec, registry, stack, problems, cells, expanded_runs) -> None:
    stack = (*stack, path)
    for include in spec.include:
        child = (path.parent / include).resolve()
        _expand(child, _read(child, stack), registry, stack, problems, cells, expanded_runs)
    if spec.seeds is not None and spec.repetitions is not None:
        problems.append(f"{path}: seeds: give either 'seeds' or 'repetitions', not both.")
    seeds = spec.seeds if spec.seeds is not None else list(range(spec.repetitions or 1))
    try:
        timeout = parse_duration(spec.timeout)
    except ValueError as err:
        problems.append(f"{path}: timeout: {err}.")
        timeout = None
    for i, run in enumerate(spec.runs):
        where = f"runs[{i}]"
        if run.task not in registry.tasks():  # name the task, not its first dataset
            try:
                registry.get("dataset", run.task, "", where=f"{path}: {where}.task")
            except SuiteError as err:
                problems.append(str(err))
            continue
        try:
            datasets = _configs(
                path, f"{where}.datasets", "dataset", run.task, run.datasets, registry, problems
            )
            methods = _configs(
                path, f"{where}.methods", "method", run.task, run.methods, registry, problems
            )
            metrics = _metrics(path, where, run, registry, problems)
        except SuiteError as err:  # unknown task: nothing else in this run can be checked
            problems.append(str(err))
            continue
        expanded_runs.append(
            {
                "file": str(path),
                "task": run.task,
                "seeds": seeds,
                "timeout": timeout,
                "metrics": [list(m) for m in metrics],
                "datasets": [d[:2] for d in datasets],
                "methods": [m[:2] for m in methods],
            }
        )
        metric_plugins = {registry.get("metric", run.task, m).plugin for m, _ in metrics}
        for (dname, dparams, dver), (mname, mparams, mver), seed in itertools.product(
            datasets, methods, seeds
        ):
            plugins = sorted({dver[0], mver[0], *metric_plugins})
            code = tuple((p, registry.fingerprint(p)) for p in plugins)
            cells.append(
                Cell(
                    run.task, dname, dparams, mname, mparams, seed, metrics, timeout, (dver, mver),
                    code,
                )
            )  # fmt: skip


def _configs(path, base, kind, task, entries, registry, problems) -> list:
    """Every (name, params, (plugin, version)) configuration of a datasets/methods list."""
    out = []
    for j, entry in enumerate(entries):
        where = f"{base}[{j}]"
        component = registry.get(kind, task, entry.name, where=f"{path}: {where}")
        overlap = set(entry.params) & set(entry.grid)
        if overlap:
            problems.append(f"{path}: {where}: {sorted(overlap)} set in both params and grid.")
            continue
        keys = list(entry.grid)
        for combo in itertools.product(*(list(enumerate(entry.grid[k])) for k in keys)):
            values = dict(entry.params) | {k: v for k, (_, v) in zip(keys, combo, strict=True)}
            paths = {k: f"{where}.params.{k}" for k in entry.params}
            paths |= {
                k: f"{where}.grid.{k}[{idx}]" for k, (idx, _) in zip(keys, combo, strict=True)
            }
            try:
                params = validate_params(component.cls, values, where=paths)
            except ParamsError as err:
                problems += [f"{path}: {p or where}: {m}" for p, m in err.problems]
                continue
            out.append((entry.name, _jsonable(params), (component.plugin, component.version)))
    return out


def _metrics(path, where, run, registry, problems) -> tuple:
    if not run.metrics:  # no list: every metric of the task
        names = registry.names("metric", run.task)
        return tuple(
            (name, _jsonable(registry.get("metric", run.task, name).cls.Params())) for name in names
        )
    out = []
    for j, entry in enumerate(run.metrics):
        at = f"{where}.metrics[{j}]"
        try:
            component = registry.get("metric", run.task, entry.name, where=f"{path}: {at}")
            params = validate_params(
                component.cls, entry.params, where={k: f"{at}.params.{k}" for k in entry.params}
            )
        except SuiteError as err:
            problems.append(str(err))
            continue
        except ParamsError as err:
            problems += [f"{path}: {p or at}: {m}" for p, m in err.problems]
            continue
        out.append((entry.name, _jsonable(params)))
    return tuple(out)
