"""YAML suite -> validated model -> effective suite (overrides, selection) -> cells.

A suite file (format in docs/design.md, 'Suites') is read defensively: at most
:data:`MAX_FILE_BYTES` bytes of UTF-8 text, YAML nested at most :data:`MAX_YAML_DEPTH` levels
and expanding (anchors and aliases counted at every use) to at most :data:`MAX_YAML_NODES`
values, no duplicate mapping keys, ``yaml.safe_load`` semantics only. Its structure is checked
with pydantic, every component name and param against the registry; command-line overrides
and selections (:class:`Overrides`) are applied; the cells are *counted* before they are
expanded (at most ``max_cells``, :data:`MAX_CELLS` by default) and then expanded into
:class:`Cell` objects: the cartesian product of dataset configurations, method configurations
and seeds. Every error names the file and the place inside it
(``suites/fair.yaml: runs[0].methods[1].grid.alpha[1]: expected float, got 'high'.``), or the
command-line option it came from (``--set dataset.n=abc: expected int, got 'abc'.``), and
never echoes the content of a file that is not a suite.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pydantic
import yaml

from harness.components import _adapter, params_as_dict, params_fields, validate_params
from harness.errors import ParamsError, SuiteError
from harness.registry import Registry
from harness.secrets import shown

__all__ = [
    "MAX_CELLS",
    "MAX_FILE_BYTES",
    "MAX_INCLUDE_DEPTH",
    "MAX_SEED",
    "MAX_SUITE_FILES",
    "MAX_TIMEOUT_S",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "NAME_MAX",
    "Cell",
    "EffectiveRun",
    "EffectiveSuite",
    "Overrides",
    "Suite",
    "check_name",
    "load_logged_suite",
    "load_suite",
    "parse_duration",
    "safe_name",
]

#: Default cap on the cells of one suite (after includes, overrides and selection), checked
#: by counting before anything is expanded; ``harness run --max-cells N`` raises it.
MAX_CELLS = 100_000
#: A suite file is hand-written text; anything larger is refused before it is parsed.
MAX_FILE_BYTES = 1_000_000
#: Deepest nesting of YAML sequences and mappings (a suite needs about 8).
MAX_YAML_DEPTH = 32
#: Most YAML values a file may expand to, aliases counted at every use ("billion laughs").
MAX_YAML_NODES = 250_000
#: Seeds are integers in [0, MAX_SEED] (numpy's legacy seeding takes 32-bit integers).
MAX_SEED = 2**32 - 1
#: Longest timeout of a cell (a year): a longer one overflows the timers and timestamps a
#: cell's limit is kept in (``setitimer`` refused 1e17 hours after the run had started).
MAX_TIMEOUT_S = 365 * 24 * 3600.0
#: Most suite files one suite may read (itself and its includes, a file included twice counted
#: twice) and the deepest chain of includes.
MAX_SUITE_FILES = 256
MAX_INCLUDE_DEPTH = 16
#: Suite names: 1 to NAME_MAX letters, digits, '.', '_' or '-', starting with a letter or digit.
NAME_MAX = 100
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{NAME_MAX - 1}}}")
_SUFFIXES = (".yaml", ".yml")
_DOCS = "See docs/design.md, 'Suites'."
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Model(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", strict=True)


class _Entry(_Model):
    name: str = pydantic.Field(min_length=1)
    params: dict[str, Any] = {}
    grid: dict[str, list[Any]] = {}


class _MetricEntry(_Model):
    name: str = pydantic.Field(min_length=1)
    params: dict[str, Any] = {}


class _Run(_Model):
    task: str
    datasets: list[_Entry] = pydantic.Field(min_length=1)
    methods: list[_Entry] = pydantic.Field(min_length=1)
    metrics: list[_MetricEntry] = []
    seeds: Any = None  # checked by _seeds / _timeout, which name each element
    repetitions: Any = None
    timeout: Any = None


class _SuiteFile(_Model):
    name: str
    description: str = ""
    seeds: Any = None
    repetitions: Any = None
    timeout: Any = None
    include: list[str] = []
    runs: list[_Run] = []


class EffectiveRun(pydantic.BaseModel):
    """One run of the effective suite as ``harness run`` logs it: every configuration
    spelled out (``[name, full params]``), its seeds, its timeout in seconds and the
    experiment (the name of the suite file that declares the run) it is logged to."""

    model_config = pydantic.ConfigDict(extra="forbid")
    file: str = ""
    run: int = 0
    experiment: str = ""  # empty in suites logged before 2 Dec. 2026: the top suite's
    task: str
    seeds: list[int]
    timeout: float | None = None
    metrics: list[tuple[str, dict[str, Any]]] = []
    datasets: list[tuple[str, dict[str, Any]]]
    methods: list[tuple[str, dict[str, Any]]]


class EffectiveSuite(pydantic.BaseModel):
    """The effective suite (:attr:`Suite.expanded`): includes resolved, overrides and
    selections applied (``overrides``, as options), defaults filled in. ``harness run`` logs
    ``model_dump(mode="json")`` as ``suite.yaml``; :func:`load_logged_suite` reads it back."""

    model_config = pydantic.ConfigDict(extra="forbid")
    name: str
    description: str = ""
    overrides: list[str] = []
    runs: list[EffectiveRun] = []


# The model that applies at a place, by the string parts of the place (for unknown keys).
_MODEL_AT = {
    (): _SuiteFile,
    ("runs",): _Run,
    ("runs", "datasets"): _Entry,
    ("runs", "methods"): _Entry,
    ("runs", "metrics"): _MetricEntry,
}


@dataclass(frozen=True)
class Overrides:
    """Command-line changes to a suite, applied after it is read and before it is counted.

    Every field holds the option's text as typed, so an error can name the option.

    Attributes
    ----------
    seeds : str or None
        ``--seeds 0,1,2``: these seeds for every run (replaces ``seeds``/``repetitions``).
    repetitions : int or None
        ``--repetitions N``: seeds ``0 .. N-1`` for every run.
    timeout : str or None
        ``--timeout 20m``: this per-cell limit for every run.
    set : tuple of str
        ``--set KEY=VALUE`` (VALUE is YAML): ``runs[i].datasets[j].params.P``,
        ``runs[i].methods[j].grid.P`` (a list), ``runs[i].metrics[j].params.P``,
        ``runs[i].seeds``/``repetitions``/``timeout``, ``seeds``/``repetitions``/``timeout``
        (every run), or ``dataset.P``/``method.P``/``metric.P`` (every entry whose component
        has param ``P``). ``runs[i]`` counts the runs after includes are resolved, in order.
    methods, datasets : tuple of str
        ``--method NAME[param=value,...]``/``--dataset ...``: keep only these entries
        (repeatable, OR within a kind, AND across kinds); params pick configurations.
    add_methods : tuple of str
        ``--add-method NAME[param=value,...]``: add the method to every run of its task
        that keeps one of its own methods (or the added one, named by ``--method``) and a
        dataset after the selections.
    max_cells : int
        Refuse a suite with more cells than this (:data:`MAX_CELLS` by default).
    """

    seeds: str | None = None
    repetitions: int | None = None
    timeout: str | None = None
    set: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    add_methods: tuple[str, ...] = ()
    max_cells: int = MAX_CELLS

    def options(self) -> list[str]:
        """The overrides as command-line options, in the order they are applied."""
        out = [f"--seeds {self.seeds}"] if self.seeds is not None else []
        out += [f"--repetitions {self.repetitions}"] if self.repetitions is not None else []
        out += [f"--timeout {self.timeout}"] if self.timeout is not None else []
        out += [f"--set {s}" for s in self.set]
        out += [f"--dataset {s}" for s in self.datasets]
        out += [f"--method {s}" for s in self.methods]
        out += [f"--add-method {s}" for s in self.add_methods]
        out += [f"--max-cells {self.max_cells}"] if self.max_cells != MAX_CELLS else []
        return out


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
    experiment : str
        The MLflow experiment the cell is logged to: the ``name`` of the suite file that
        declares its run (an included suite keeps its own experiment, so each paper's runs
        are compared alone). Not part of the identity.
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
    experiment: str = ""
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
        MLflow experiment name and report folder name (checked by :func:`check_name`).
    path : Path
    description : str
    cells : list of Cell
    expanded : dict
        The effective suite: includes resolved, overrides and selections applied (listed
        under ``overrides``), defaults filled in; logged on the parent run as ``suite.yaml``.
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


# -- names, durations, seeds -----------------------------------------------------------------


def _short(value: Any, limit: int = 60) -> str:
    """``value`` quoted, escaped and cut to ``limit`` characters with its length stated
    (errors never print a 600,000-character name); see :func:`harness.secrets.shown`."""
    return shown(value, limit)


def check_name(name: str) -> str | None:
    """Why ``name`` is not a valid suite name, or None when it is.

    A suite name is an identifier, never a path: 1 to :data:`NAME_MAX` characters from
    ``A-Z a-z 0-9 . _ -``, starting with a letter or a digit. It names the MLflow experiment
    and the report folder ``<report dir>/<name>/``.
    """
    if isinstance(name, str) and _NAME.fullmatch(name):
        return None
    return (
        f"{_short(name)} is not a valid suite name: use 1 to {NAME_MAX} letters, digits, '.',"
        " '_' or '-', starting with a letter or a digit (it names the MLflow experiment and"
        " the report folder, it is not a path)."
    )


def safe_name(name: str) -> str:
    """``name`` itself when it is a valid suite name, else a valid name derived from it.

    Used to build folder names from names read out of a (possibly shared) store, so that no
    name (``../../x``, ``a/b``, one with a NUL) can point outside its parent folder.

    :returns: a string matching the rule of :func:`check_name`; different invalid names give
        different results (an 8-hex-digit SHA-256 suffix of the original name).
    """
    if _NAME.fullmatch(name):
        return name
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).lstrip("._-")[: NAME_MAX - 9]
    tag = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{stem}-{tag}" if stem else f"suite-{tag}"


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")


def parse_duration(value: str | float | None) -> float | None:
    """Seconds in ``"90s"``, ``"10m"``, ``"1.5h"``, ``"250ms"`` or a number of seconds.

    :returns: None for None (no limit), else a positive, finite number of seconds.
    :raises ValueError: if the value is not such a duration, or is 0, negative, NaN or
        infinite (``timeout: 0`` would kill every cell, ``.nan`` never fires).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"expected a duration like '30s', '10m' or '1h', got {_short(value)}")
    if isinstance(value, str):
        match = _DURATION.match(value)
        if not match:
            raise ValueError(f"expected a duration like '30s', '10m' or '1h', got {_short(value)}")
        scale = {"ms": 1e-3, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0}[match.group(2)]
        seconds = float(match.group(1)) * scale
    else:
        try:
            seconds = float(value)
        except OverflowError:
            seconds = math.inf
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(
            f"a timeout is a positive, finite duration like '30s' or '10m', got {_short(value)}"
            " (leave 'timeout' out for no limit)"
        )
    if seconds > MAX_TIMEOUT_S:
        raise ValueError(
            f"a timeout is at most {MAX_TIMEOUT_S / 86400:.0f} days ({MAX_TIMEOUT_S:,.0f} s),"
            f" got {_short(value)} (leave 'timeout' out for no limit)"
        )
    return seconds


def _seeds(seeds: Any, repetitions: Any, prefix: str, problems: list[str]) -> Sequence[int] | None:
    """The seeds given by ``seeds`` or ``repetitions`` (None when neither is given or one is
    invalid, with the problem appended). ``prefix`` starts each place (``'a.yaml: runs[1].'``)."""
    if seeds is not None and repetitions is not None:
        problems.append(f"{prefix}seeds: give either 'seeds' or 'repetitions', not both.")
        return None
    if repetitions is not None:
        if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
            problems.append(
                f"{prefix}repetitions: expected a whole number >= 1 (seeds 0 to N-1),"
                f" got {_short(repetitions)}."
            )
            return None
        if repetitions - 1 > MAX_SEED:
            problems.append(f"{prefix}repetitions: at most {MAX_SEED + 1:,} seeds exist.")
            return None
        return range(repetitions)  # counted, never listed, before the cell cap is checked
    if seeds is None:
        return None
    if not isinstance(seeds, list) or not seeds:
        problems.append(
            f"{prefix}seeds: expected a non-empty list of seeds like [0, 1, 2],"
            f" got {_short(seeds)}."
        )
        return None
    first: dict[int, int] = {}
    for j, seed in enumerate(seeds):
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            problems.append(
                f"{prefix}seeds[{j}]: a seed is a whole number from 0 to {MAX_SEED},"
                f" got {_short(seed)}."
            )
            return None
        if seed in first:
            problems.append(
                f"{prefix}seeds[{j}]: seed {seed} is listed twice (seeds[{first[seed]}])."
            )
            return None
        first[seed] = j
    return list(seeds)


def _timeout(value: Any, place: str, problems: list[str]) -> float | None:
    try:
        return parse_duration(value)
    except ValueError as err:
        problems.append(f"{place}: {err}.")
        return None


# -- reading files ---------------------------------------------------------------------------


def _read_text(path: Path, where: str) -> str:
    """The UTF-8 text of suite file ``path``; ``where`` (the including file and
    ``include[i]``) prefixes the errors about the file itself. Never echoes the content."""
    at = f"{where}: " if where else ""
    named = _short(str(path), 200)
    if path.suffix.lower() not in _SUFFIXES:
        raise SuiteError(
            f"{at}{named} is not a suite file: a suite file's name ends in .yaml or .yml."
        )
    try:  # a link is judged by the file it leads to (a.yaml -> /etc/passwd is no suite)
        target = path.resolve()
    except (OSError, ValueError, RuntimeError):  # a loop of links, a NUL: stat() says which
        target = path
    if target.suffix.lower() not in _SUFFIXES:
        raise SuiteError(
            f"{at}{named} is not a suite file: it links to a file whose name does not end in"
            " .yaml or .yml."
        )
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SuiteError(f"{at}suite file {named} does not exist.") from None
    except (OSError, ValueError) as err:  # ValueError: a NUL in the path
        reason = getattr(err, "strerror", None) or str(err)
        raise SuiteError(f"{at}cannot read suite file {named}: {reason}.") from None
    if stat.S_ISDIR(info.st_mode):
        raise SuiteError(f"{at}{named} is a directory, not a suite file.")
    if not stat.S_ISREG(info.st_mode):
        raise SuiteError(f"{at}{named} is not a regular file (a device or a pipe?).")
    if info.st_size > MAX_FILE_BYTES:
        raise SuiteError(
            f"{at}{named} has {info.st_size:,} bytes; a suite file has at most"
            f" {MAX_FILE_BYTES:,}. {_DOCS}"
        )
    try:
        data = path.read_bytes()
    except OSError as err:
        raise SuiteError(f"{at}cannot read suite file {named}: {err.strerror}.") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - data.rfind(b"\n", 0, err.start)
        raise SuiteError(
            f"{path}: line {line}, column {column}: not UTF-8 text (byte"
            f" 0x{data[err.start]:02x}); save the file as UTF-8."
        ) from None
    return text.removeprefix("\ufeff")


def _parse_yaml(label: str, text: str) -> Any:
    """``yaml.safe_load(text)`` with limits: nesting depth, expanded size (aliases counted at
    every use), one document, no duplicate keys. ``label`` starts every error."""
    try:
        depth = 0
        for event in yaml.parse(text, Loader=_Loader):  # events: no recursion, no expansion
            if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    mark = event.start_mark
                    raise SuiteError(
                        f"{label}: line {mark.line + 1}, column {mark.column + 1}: nested more"
                        f" than {MAX_YAML_DEPTH} levels deep; a suite needs far fewer."
                    )
            elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                depth -= 1
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_nodes(label, node)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = (err.problem or err.context or "").rstrip(".")
        raise SuiteError(f"{label}: {at}not valid YAML: {problem}.") from None
    except yaml.reader.ReaderError as err:  # a control character such as NUL
        line = text.count("\n", 0, err.position) + 1
        column = err.position - text.rfind("\n", 0, err.position)
        raise SuiteError(
            f"{label}: line {line}, column {column}: not valid YAML: character"
            f" #x{err.character:04x} is not allowed ({err.reason})."
        ) from None
    except yaml.YAMLError as err:
        raise SuiteError(f"{label}: not valid YAML: {type(err).__name__}.") from None


def _check_nodes(label: str, root: yaml.Node) -> None:
    """Refuse duplicate mapping keys, self-referencing aliases and documents expanding to
    more than :data:`MAX_YAML_NODES` values. Iterative, each node visited once."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[yaml.Node, str, bool]] = [(root, "", False)]
    while stack:
        node, place, done = stack.pop()
        key = id(node)
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        if done:
            visiting.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > MAX_YAML_NODES:
                raise SuiteError(
                    f"{label}: {place or 'the document'}: expands to more than"
                    f" {MAX_YAML_NODES:,} values (anchors and aliases repeat their content at"
                    " every use); a suite is far smaller."
                )
            continue
        if key in sizes:
            continue
        if key in visiting:
            line = node.start_mark.line + 1
            raise SuiteError(f"{label}: {place}: an alias refers to itself (line {line}).")
        visiting.add(key)
        stack.append((node, place, True))
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
                    line = k.start_mark.line + 1
                    if k.value in seen:
                        raise SuiteError(
                            f"{label}: {_join(place, k.value)}: key {_short(k.value)} is given"
                            f" twice (lines {seen[k.value]} and {line}); keep one."
                        )
                    seen[k.value] = line
                stack.append((k, place, False))
                child = _join(place, k.value) if isinstance(k, yaml.ScalarNode) else place
                stack.append((v, child, False))
        elif isinstance(node, yaml.SequenceNode):
            stack += [(c, f"{place}[{i}]", False) for i, c in enumerate(node.value)]


def _join(place: str, key: str) -> str:
    key = key if key.isascii() and key.isprintable() else ascii(key)[1:-1]  # 'run\u200bs'
    key = key if len(key) <= 40 else key[:37] + "..."
    return f"{place}.{key}" if place else key


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out = f"{out}[{part}]" if isinstance(part, int) else _join(out, str(part))
    return out


def _message(error: dict[str, Any], models: dict[tuple[str, ...], type] = _MODEL_AT) -> str:
    """A pydantic error as one line; ``models`` maps places to the model whose keys apply."""
    kind, loc, value = error["type"], error["loc"], error.get("input")
    if kind == "extra_forbidden":
        model = models.get(tuple(p for p in loc[:-1] if isinstance(p, str)))
        allowed = ", ".join(model.model_fields) if model else "(none)"
        return f"unknown key {_short(loc[-1])}. Allowed here: {allowed}. {_DOCS}"
    if kind == "missing":
        return f"required key '{loc[-1]}' is missing. {_DOCS}"
    if kind == "too_short":
        return f"give at least one entry, got {_short(value)}."
    if len(loc) >= 2 and loc[-2] in ("datasets", "methods", "metrics") and kind == "model_type":
        return f"expected a component name or a mapping with 'name', got {_short(value)}."
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {_short(value)}."
    if kind == "list_type":
        return f"expected a list, got {_short(value)}."
    if kind == "string_type":
        return f"expected a string, got {_short(value)}."
    if kind == "string_too_short":
        return f"expected a non-empty string, got {_short(value)}."
    return f"{error['msg'].lower()}, got {_short(value)}."


def _read(path: Path, where: str) -> _SuiteFile:
    raw = _parse_yaml(str(path), _read_text(path, where))
    if not isinstance(raw, dict):
        holds = "nothing" if raw is None else f"a {type(raw).__name__}"
        raise SuiteError(
            f"{path}: not a suite: a suite file holds a mapping with 'name' and 'runs', this"
            f" one holds {holds}. {_DOCS}"
        )
    if not set(raw) & set(_SuiteFile.model_fields):  # its lines are not ours to print
        raise SuiteError(
            f"{path}: not a suite: a suite file holds a mapping with 'name' and 'runs', this"
            f" one has {len(raw):,} keys and none of {', '.join(_SuiteFile.model_fields)}."
            f" {_DOCS}"
        )
    runs = raw.get("runs")
    for run in runs if isinstance(runs, list) else []:  # a bare name is short for {name: ...}
        for key in ("datasets", "methods", "metrics"):
            if isinstance(run, dict) and isinstance(run.get(key), list):
                run[key] = [{"name": e} if isinstance(e, str) else e for e in run[key]]
    try:
        spec = _SuiteFile.model_validate(raw)
    except pydantic.ValidationError as err:
        lines = [f"{path}: {_path(e['loc'])}: {_message(e)}" for e in err.errors()]
        raise SuiteError("\n".join(dict.fromkeys(lines))) from None
    problem = check_name(spec.name)
    if problem:
        raise SuiteError(f"{path}: name: {problem}")
    return spec


# -- the effective suite: flattened runs -------------------------------------------------------


@dataclass
class _Item:
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
class _FlatRun:
    file: Path
    index: int
    task: str
    datasets: list[_Item]
    methods: list[_Item]
    metrics: list[_Item]
    seeds: Sequence[int]
    timeout: float | None
    experiment: str = ""  # the name of the suite file that declares the run

    @property
    def place(self) -> str:
        return f"{self.file}: runs[{self.index}]"


def _collect(
    path: Path,
    where: str,
    stack: tuple[Path, ...],
    registry: Registry,
    problems: list[str],
    runs: list[_FlatRun],
    files: list[Path],
) -> _SuiteFile:
    """Read ``path`` and its includes (depth first, includes before own runs) into ``runs``;
    ``files`` collects every file read."""
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
    spec = _read(path, where)
    seeds = _seeds(spec.seeds, spec.repetitions, f"{path}: ", problems)
    timeout = _timeout(spec.timeout, f"{path}: timeout", problems)
    for i, include in enumerate(spec.include):
        _collect(
            path.parent / include,
            f"{path}: include[{i}]",
            (*stack, key),
            registry,
            problems,
            runs,
            files,
        )
    tasks = set(registry.tasks())
    for i, run in enumerate(spec.runs):
        run_seeds = _seeds(run.seeds, run.repetitions, f"{path}: runs[{i}].", problems)
        run_timeout = _timeout(run.timeout, f"{path}: runs[{i}].timeout", problems)
        place = f"{path}: runs[{i}]"

        def items(entries: list[Any], kind: str, place: str = place) -> list[_Item]:
            return [
                _Item(e.name, dict(e.params), dict(getattr(e, "grid", {})), f"{place}.{kind}[{j}]")
                for j, e in enumerate(entries)
            ]

        metrics = items(run.metrics, "metrics")
        if not run.metrics and run.task in tasks:  # no list: every metric of the task
            default = f"{place}.metrics (every metric of '{run.task}')"
            metrics = [_Item(n, {}, {}, default) for n in registry.names("metric", run.task)]
        runs.append(
            _FlatRun(
                path,
                i,
                run.task,
                items(run.datasets, "datasets"),
                items(run.methods, "methods"),
                metrics,
                run_seeds if run_seeds is not None else (seeds if seeds is not None else [0]),
                run_timeout if run.timeout is not None else timeout,
                spec.name,
            )
        )
    return spec


# -- overrides and selection -----------------------------------------------------------------

_SET_ITEM = re.compile(
    r"runs\[(\d+)\]\.(datasets|methods|metrics)\[(\d+)\]\.(params|grid)\.([A-Za-z_]\w*)"
)
_SET_RUN = re.compile(r"runs\[(\d+)\]\.(seeds|repetitions|timeout)")
_SET_EVERY = re.compile(r"(dataset|method|metric)\.([A-Za-z_]\w*)")
_SET_KEYS = (
    "runs[i].datasets[j].params.P (also .grid.P, methods[j], metrics[j]), runs[i].seeds,"
    " runs[i].repetitions, runs[i].timeout, seeds, repetitions, timeout, dataset.P, method.P"
    " or metric.P"
)
_SELECTOR = re.compile(r"\s*([a-z0-9]+(?:-[a-z0-9]+)*)\s*(?:\[(.*)\])?\s*", re.DOTALL)


def _option(flag: str, text: str, limit: int = 200) -> str:
    """``--flag TEXT`` as messages name it: non-ASCII and invisible characters escaped, a
    text longer than ``limit`` cut with its length stated."""
    if not (text.isascii() and text.isprintable()):
        text = ascii(text)[1:-1]
    if len(text) > limit:
        text = f"{text[: limit - 50]}... ({len(text):,} characters)"
    return f"{flag} {text}"


def _option_value(option: str, text: str, problems: list[str]) -> tuple[bool, Any]:
    """(ok, value) of a command-line value read as YAML (``500``, ``[1, 2]``, ``ridge``)."""
    try:
        return True, _parse_yaml(option, text)
    except SuiteError as err:
        problems.append(str(err))
        return False, None


def _split_commas(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char in "[{(") - (char in "]})")
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


def _selector(option: str, text: str, problems: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``NAME`` or ``NAME[param=value,...]`` -> (name, {param: value})."""
    match = _SELECTOR.fullmatch(text)
    if not match:
        problems.append(
            f"{option}: expected NAME or NAME[param=value,...] (e.g. 'mean[shift=1.0]')."
        )
        return None
    params: dict[str, Any] = {}
    for part in _split_commas(match.group(2) or ""):
        key, sep, value = part.partition("=")
        if not sep or not key.strip().isidentifier():
            problems.append(f"{option}: expected param=value inside [...], got {_short(part)}.")
            return None
        ok, params[key.strip()] = _option_value(option, value, problems)
        if not ok:
            return None
    return match.group(1), params


def _set_param(item: _Item, part: str, key: str, value: Any, option: str, problems: list[str]):
    if part == "grid":
        if not isinstance(value, list) or not value:
            problems.append(f"{option}: a grid is a non-empty list of values like [1, 2, 3].")
            return
        item.grid[key] = value
        item.params.pop(key, None)
    else:
        item.params[key] = value
        item.grid.pop(key, None)
    item.origins[key] = option


def _set_run(run: _FlatRun, key: str, value: Any, option: str, problems: list[str]) -> None:
    if key == "timeout":
        before = len(problems)
        timeout = _timeout(value, option, problems)
        if len(problems) == before:
            run.timeout = timeout
        return
    seeds = _seeds(
        value if key == "seeds" else None,
        value if key == "repetitions" else None,
        f"{option}: ",
        problems,
    )
    if seeds is not None:
        run.seeds = seeds


def _apply_set(text: str, runs: list[_FlatRun], registry: Registry, problems: list[str]) -> None:
    option = _option("--set", text)
    key, sep, value_text = text.partition("=")
    key = key.strip()
    if not sep:
        problems.append(f"{option}: expected KEY=VALUE (e.g. --set dataset.n=500).")
        return
    ok, value = _option_value(option, value_text, problems)
    if not ok:
        return
    if key in ("seeds", "repetitions", "timeout"):
        for run in runs:
            _set_run(run, key, value, option, problems)
        return
    if match := _SET_EVERY.fullmatch(key):
        kind, param = match.groups()
        count = 0
        for run in runs:
            for item in getattr(run, f"{kind}s"):
                entry = registry.entries[kind].get((run.task, item.name))
                if entry is not None and param in params_fields(entry.cls.Params):
                    _set_param(item, "params", param, value, option, problems)
                    count += 1
        if not count:
            names = sorted({item.name for run in runs for item in getattr(run, f"{kind}s")})
            problems.append(
                f"{option}: no {kind} of the suite has a param '{param}' (its {kind}s:"
                f" {', '.join(names) or '(none)'}). See 'harness list'."
            )
        return
    match = _SET_ITEM.fullmatch(key) or _SET_RUN.fullmatch(key)
    if match is None:
        problems.append(f"{option}: unknown key {_short(key)}. Use {_SET_KEYS}.")
        return
    i = int(match.group(1))
    if i >= len(runs):
        problems.append(
            f"{option}: the suite has {len(runs)} run(s), runs[0] to runs[{len(runs) - 1}]"
            " (included suites' runs first, in file order)."
        )
        return
    if match.re is _SET_RUN:
        _set_run(runs[i], match.group(2), value, option, problems)
        return
    _, kind, j, part, param = match.groups()
    entries = getattr(runs[i], kind)
    if int(j) >= len(entries):
        problems.append(f"{option}: runs[{i}] has {len(entries)} {kind}.")
    elif kind == "metrics" and part == "grid":
        problems.append(f"{option}: metrics take params only, no grid.")
    else:
        _set_param(entries[int(j)], part, param, value, option, problems)


def _add_methods(runs: list[_FlatRun], texts: Sequence[str], registry, problems) -> None:
    for text in texts:
        option = _option("--add-method", text)
        selected = _selector(option, text, problems)
        if selected is None:
            continue
        name, params = selected
        targets = [r for r in runs if (r.task, name) in registry.entries["method"]]
        if not targets:
            tasks = sorted({r.task for r in runs})
            known = sorted({n for t in tasks for n in registry.names("method", t)})
            owners = [t for t in registry.tasks() if (t, name) in registry.entries["method"]]
            hint = f" '{name}' is a method of task {', '.join(owners)}." if owners else ""
            problems.append(
                f"{option}: no method {shown(name)} for the suite's tasks ({', '.join(tasks)})."
                f"{hint}"
                f" Known: {', '.join(known) or '(none)'}. See 'harness list'."
            )
            continue
        for run in targets:
            origins = dict.fromkeys(params, option)
            run.methods.append(_Item(name, dict(params), {}, option, origins, added=True))


def _select(runs: list[_FlatRun], kind: str, texts: Sequence[str], problems: list[str]) -> bool:
    """Keep the ``kind`` entries named by ``texts``; False when nothing was selected."""
    if not texts:
        return False
    attr = f"{kind}s"
    selectors = []
    for text in texts:
        option = _option(f"--{kind}", text)
        selected = _selector(option, text, problems)
        if selected is not None:
            selectors.append((option, *selected))
    present = sorted({item.name for run in runs for item in getattr(run, attr)})
    for option, name, _ in selectors:
        if name not in present:
            problems.append(
                f"{option}: no {kind} {shown(name)} in the suite. Known: {', '.join(present)}."
            )
    for run in runs:
        kept = []
        for item in getattr(run, attr):
            chosen = [(option, params) for option, name, params in selectors if name == item.name]
            if item.added:  # asked for explicitly: kept whole
                kept.append(item)
            elif chosen:
                item.filters = None if any(not p for _, p in chosen) else chosen
                kept.append(item)
        setattr(run, attr, kept)
    return True


def _apply(runs: list[_FlatRun], ov: Overrides, registry: Registry, problems: list[str]):
    """Apply the overrides, added methods and selections to ``runs`` (in place)."""
    if ov.seeds is not None and ov.repetitions is not None:
        both = f"{_option('--seeds', ov.seeds)} --repetitions {ov.repetitions}"
        problems.append(f"{both}: give one, not both.")
    elif ov.seeds is not None:
        option = _option("--seeds", ov.seeds)
        try:
            values = [int(part) for part in ov.seeds.split(",")]
        except ValueError:
            problems.append(f"{option}: expected whole numbers separated by commas, like 0,1,2.")
        else:
            for run in runs:
                _set_run(run, "seeds", values, option, problems)
    elif ov.repetitions is not None:
        for run in runs:
            _set_run(
                run, "repetitions", ov.repetitions, f"--repetitions {ov.repetitions}", problems
            )
    if ov.timeout is not None:
        option = _option("--timeout", ov.timeout)
        for run in runs:
            if ov.timeout.strip().lower() == "none":
                run.timeout = None
            else:
                _set_run(run, "timeout", ov.timeout, option, problems)
    for text in ov.set:
        _apply_set(text, runs, registry, problems)
    _add_methods(runs, ov.add_methods, registry, problems)
    selected = _select(runs, "dataset", ov.datasets, problems)
    selected = _select(runs, "method", ov.methods, problems) or selected
    if selected:
        # An added method joins only the runs that keep one of their own methods (or the
        # added one, named by --method): a run whose methods --method removed is dropped,
        # not run with the added method alone (its cells doubled another run's).
        named = {m.group(1) for t in ov.methods if (m := _SELECTOR.fullmatch(t))}
        for run in runs:
            if not any(not item.added or item.name in named for item in run.methods):
                run.methods = []
        runs[:] = [run for run in runs if run.datasets and run.methods]
        if not runs and not problems:
            options = [_option("--dataset", d) for d in ov.datasets] + [
                _option("--method", m) for m in ov.methods
            ]
            problems.append(
                f"{' '.join(options)}: no run of the suite has both a selected dataset and a"
                " selected method."
            )


def _count(items: list[_Item]) -> int:
    return sum(math.prod(len(v) for v in item.grid.values()) for item in items)


def _check_cap(path: Path, runs: list[_FlatRun], cap: int) -> None:
    """Count the cells before expanding anything; refuse more than ``cap``."""
    sizes = [(_count(r.datasets), _count(r.methods), len(r.seeds), r) for r in runs]
    total = sum(d * m * s for d, m, s, _ in sizes)
    if total <= cap:
        return
    d, m, s, run = max(sizes, key=lambda x: x[0] * x[1] * x[2])
    raise SuiteError(
        f"{run.place}: the suite has {total:,} cells, above the cap of {cap:,} (this run:"
        f" {d:,} dataset x {m:,} method configurations x {s:,} seeds). Use fewer grid values"
        f" or seeds, or raise the cap with --max-cells. {_DOCS}"
    )


# -- expansion --------------------------------------------------------------------------------


def load_suite(path: str | Path, registry: Registry, overrides: Overrides | None = None) -> Suite:
    """Read, validate, override, select, count and expand a suite and everything it includes.

    :param path: the YAML file (``.yaml`` or ``.yml``, at most :data:`MAX_FILE_BYTES`).
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
    runs: list[_FlatRun] = []
    top = _collect(path, "", (), registry, problems, runs, [])
    if not problems:
        _apply(runs, overrides, registry, problems)
    if problems:
        raise _problems(problems)
    _check_cap(path, runs, overrides.max_cells)
    head = EffectiveSuite(name=top.name, description=top.description, overrides=overrides.options())
    return _build(path, head, runs, registry, overrides)


def load_logged_suite(text: str, source: str, registry: Registry) -> Suite:
    """The suite a ``harness run`` logged (the text of its ``suite.yaml``, the dump of
    :class:`EffectiveSuite`), read back through that model and expanded again with the
    installed plugins: each configuration's params are validated again and each cell's
    plugin versions and code fingerprints are today's, so its ``cell_hash`` is the one a
    run of that suite would give now.

    :param text: the logged YAML text (read with the same limits as a suite file).
    :param source: what the text is, for messages (``"suite.yaml of run 1a2b"``).
    :param registry: components to resolve names against.
    :returns: the :class:`Suite`; each cell's ``experiment`` is its run's (empty for a
        suite logged before runs named their experiment), ``expanded`` the logged suite.
    :raises SuiteError: naming ``source`` and the place, when the text is not such a suite
        or a component or param it names no longer exists or validates.
    """
    raw = _parse_yaml(source, text)
    try:
        logged = EffectiveSuite.model_validate(raw)
    except pydantic.ValidationError as err:
        models = {(): EffectiveSuite, ("runs",): EffectiveRun}
        lines = [f"{source}: {_path(e['loc'])}: {_message(e, models)}" for e in err.errors()]
        raise SuiteError("\n".join(dict.fromkeys(lines[:20]))) from None
    problems: list[str] = []
    runs = [_logged_run(source, i, run, problems) for i, run in enumerate(logged.runs)]
    if problems:
        raise _problems(problems)
    suite = _build(Path(source), logged, runs, registry, Overrides())
    suite.expanded = logged.model_dump(mode="json")  # as logged, file names and all
    return suite


def _logged_run(source: str, index: int, run: EffectiveRun, problems: list[str]) -> _FlatRun:
    """A logged run as a run of the effective suite (no grid: every configuration listed)."""
    place = f"{source}: runs[{index}]"

    def items(entries: list[tuple[str, dict[str, Any]]], kind: str) -> list[_Item]:
        return [
            _Item(name, dict(params), {}, f"{place}.{kind}[{j}]")
            for j, (name, params) in enumerate(entries)
        ]

    seeds = _seeds(run.seeds, None, f"{place}.", problems)
    datasets, methods = items(run.datasets, "datasets"), items(run.methods, "methods")
    return _FlatRun(
        Path(source), index, run.task, datasets, methods, items(run.metrics, "metrics"),
        seeds or [], _timeout(run.timeout, f"{place}.timeout", problems), run.experiment,
    )  # fmt: skip


def _build(
    path: Path, head: EffectiveSuite, runs: list[_FlatRun], registry: Registry, ov: Overrides
) -> Suite:
    """Expand ``runs`` into the suite's cells; ``head`` gets the expanded runs."""
    problems: list[str] = []
    cells: list[Cell] = []
    expanded_runs: list[EffectiveRun] = []
    hits: dict[str, list[str]] = {}  # selection option -> configurations it matched
    seen: dict[str, list[str]] = {}  # selection option -> configurations it was tried on
    tasks = set(registry.tasks())
    for run in runs:
        _expand(run, registry, tasks, problems, cells, expanded_runs, (hits, seen))
    for text in ov.datasets + ov.methods:
        kind = "dataset" if text in ov.datasets else "method"
        option = _option(f"--{kind}", text)
        if "[" in text and option not in hits and not any(p.startswith(option) for p in problems):
            tried = "; ".join(dict.fromkeys(seen.get(option, [])).keys()) or "none"
            problems.append(
                f"{option}: no configuration in the suite matches these params (it has:"
                f" {tried[:300]})."
            )
    if problems:
        raise _problems(problems)
    if not cells:
        raise SuiteError(f"{path}: runs: the suite (with its includes) has no cells.")
    cells = list({c.cell_hash: c for c in cells}.values())  # a config listed twice runs once
    effective = head.model_copy(update={"runs": expanded_runs})
    expanded = effective.model_dump(mode="json")
    return Suite(head.name, path, head.description, cells, expanded)


def _problems(problems: list[str], limit: int = 20) -> SuiteError:
    """One error listing each distinct problem once, at most ``limit`` of them."""
    unique = list(dict.fromkeys(problems))
    more = len(unique) - limit
    tail = [f"... and {more:,} more problems like these."] if more > 0 else []
    return SuiteError("\n".join(unique[:limit] + tail))


def _expand(run, registry, tasks, problems, cells, expanded_runs, selection) -> None:
    if run.task not in tasks:  # name the task, not its first dataset
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
    datasets = list({_canonical(d[:2]): d for d in datasets}.values())  # listed twice: once
    methods = list({_canonical(m[:2]): m for m in methods}.values())
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


def _params_problems(item: _Item, err: ParamsError, places: dict[str, str]) -> list[str]:
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


def _wanted(item: _Item, fields: dict[str, Any], problems: list[str]):
    """The item's selection filters with values coerced to the params' types."""
    from harness.components import describe_type

    out = []
    for option, params in item.filters or []:
        want = {}
        for key, value in params.items():
            if key not in fields:
                known = ", ".join(fields) or "(none)"
                problems.append(f"{option}: '{item.name}' has no param '{key}'. Params: {known}.")
                continue
            try:
                coerced = _adapter(fields[key][0]).validate_python(value)
            except pydantic.ValidationError:
                problems.append(
                    f"{option}: {key}: expected {describe_type(fields[key][0])},"
                    f" got {_short(value)}."
                )
                continue
            want[key] = json.loads(_canonical(coerced))
        out.append((option, want))
    return out


def _configs(run, kind, items, registry, problems, selection) -> list:
    """Every (name, params, (plugin, version)) configuration of a datasets/methods list,
    less those a selection (``--method mean[shift=1]``) leaves out."""
    hits, seen = selection
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
        wanted = _wanted(item, params_fields(component.cls.Params), problems)
        keys = list(item.grid)
        for combo in itertools.product(*(list(enumerate(item.grid[k])) for k in keys)):
            values = dict(item.params) | {k: v for k, (_, v) in zip(keys, combo, strict=True)}
            places = {k: item.at(k) for k in item.params}
            places |= {k: item.at(k, "grid", i) for k, (i, _) in zip(keys, combo, strict=True)}
            try:
                params = _jsonable(validate_params(component.cls, values, where=places))
            except ParamsError as err:
                problems += _params_problems(item, err, places)
                continue
            if item.filters is not None:
                matched = False
                for option, want in wanted:
                    label = ", ".join(f"{k}={_param_str(params.get(k))}" for k in want)
                    seen.setdefault(option, []).append(label)
                    if all(params.get(k) == v for k, v in want.items()):
                        hits.setdefault(option, []).append(label)
                        matched = True
                if not matched:
                    continue
            out.append((item.name, params, (component.plugin, component.version)))
    return out


def _metrics(run, registry, problems) -> tuple:
    out = []
    for item in run.metrics:
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
        out.append((item.name, _jsonable(params)))
    return tuple(out)
