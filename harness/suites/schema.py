"""The suite format: its pydantic models, suite names, seeds and durations.

:class:`SuiteFile` is a suite file as written (docs/design.md, 'Suites'); every key is
checked with pydantic and every error names the file and the place inside it
(``suites/fair.yaml: runs[0].methods: give at least one entry, got [].``). The names,
seeds and durations a suite holds are checked by the functions here, each problem naming
its place. :class:`EffectiveSuite` is the suite as it ran, every configuration spelled out:
``harness run`` logs its dump, and :func:`harness.suites.loading.load_logged_suite` reads it back.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pydantic

from harness.components import NAME_MAX
from harness.errors import SuiteError
from harness.redaction import shown
from harness.suites.safe_yaml import SEE_DOCS, join_place, parse_yaml, read_suite_text

__all__ = [
    "MAX_SEED",
    "MAX_TIMEOUT_S",
    "NAME_MAX",
    "EffectiveRun",
    "EffectiveSuite",
    "SuiteFile",
    "check_name",
    "check_seeds",
    "check_timeout",
    "parse_duration",
    "read_suite_file",
    "safe_name",
    "validation_problems",
]

#: Seeds are integers in [0, MAX_SEED] (numpy's legacy seeding takes 32-bit integers).
MAX_SEED = 2**32 - 1
#: Longest timeout of a cell (a year): a longer one overflows the timers and timestamps a
#: cell's limit is kept in (``setitimer`` refused 1e17 hours after the run had started).
MAX_TIMEOUT_S = 365 * 24 * 3600.0
# Suite names: 1 to NAME_MAX letters, digits, '.', '_' or '-', starting with a letter or digit
# (NAME_MAX lives with the components: a new plugin's name names its suite).
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{NAME_MAX - 1}}}")


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
    seeds: Any = None  # checked by check_seeds / check_timeout, which name each element
    repetitions: Any = None
    timeout: Any = None


class SuiteFile(_Model):
    """A suite file as written: its name, description, default seeds (or repetitions) and
    timeout, the suite files it includes and its runs."""

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


# The model whose keys apply at a place, by the string parts of the place (for unknown keys).
_MODEL_AT = {
    (): SuiteFile,
    ("runs",): _Run,
    ("runs", "datasets"): _Entry,
    ("runs", "methods"): _Entry,
    ("runs", "metrics"): _MetricEntry,
}


def check_name(name: str) -> str | None:
    """Why ``name`` is not a valid suite name, or None when it is.

    A suite name is an identifier, never a path: 1 to :data:`NAME_MAX` characters from
    ``A-Z a-z 0-9 . _ -``, starting with a letter or a digit. It names the MLflow experiment
    and the report folder ``<report dir>/<name>/``.
    """
    if isinstance(name, str) and _NAME.fullmatch(name):
        return None
    return (
        f"{shown(name)} is not a valid suite name: use 1 to {NAME_MAX} letters, digits, '.',"
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
        raise ValueError(f"expected a duration like '30s', '10m' or '1h', got {shown(value)}")
    if isinstance(value, str):
        match = _DURATION.match(value)
        if not match:
            raise ValueError(f"expected a duration like '30s', '10m' or '1h', got {shown(value)}")
        scale = {"ms": 1e-3, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0}[match.group(2)]
        seconds = float(match.group(1)) * scale
    else:
        try:
            seconds = float(value)
        except OverflowError:
            seconds = math.inf
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(
            f"a timeout is a positive, finite duration like '30s' or '10m', got {shown(value)}"
            " (leave 'timeout' out for no limit)"
        )
    if seconds > MAX_TIMEOUT_S:
        raise ValueError(
            f"a timeout is at most {MAX_TIMEOUT_S / 86400:.0f} days ({MAX_TIMEOUT_S:,.0f} s),"
            f" got {shown(value)} (leave 'timeout' out for no limit)"
        )
    return seconds


def check_seeds(
    seeds: Any, repetitions: Any, prefix: str, problems: list[str]
) -> Sequence[int] | None:
    """The seeds given by ``seeds`` or ``repetitions`` (None when neither is given or one is
    invalid, with the problem appended). ``prefix`` starts each place (``'a.yaml: runs[1].'``)."""
    if seeds is not None and repetitions is not None:
        problems.append(f"{prefix}seeds: give either 'seeds' or 'repetitions', not both.")
        return None
    if repetitions is not None:
        if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
            problems.append(
                f"{prefix}repetitions: expected a whole number >= 1 (seeds 0 to N-1),"
                f" got {shown(repetitions)}."
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
            f"{prefix}seeds: expected a non-empty list of seeds like [0, 1, 2], got {shown(seeds)}."
        )
        return None
    first: dict[int, int] = {}
    for j, seed in enumerate(seeds):
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            problems.append(
                f"{prefix}seeds[{j}]: a seed is a whole number from 0 to {MAX_SEED},"
                f" got {shown(seed)}."
            )
            return None
        if seed in first:
            problems.append(
                f"{prefix}seeds[{j}]: seed {seed} is listed twice (seeds[{first[seed]}])."
            )
            return None
        first[seed] = j
    return list(seeds)


def check_timeout(value: Any, place: str, problems: list[str]) -> float | None:
    """:func:`parse_duration` of ``value``, or None with the problem (naming ``place``)
    appended to ``problems``."""
    try:
        return parse_duration(value)
    except ValueError as err:
        problems.append(f"{place}: {err}.")
        return None


# -- reading files ---------------------------------------------------------------------------


def _path(loc: tuple[Any, ...]) -> str:
    """A pydantic location as messages name a place: ``runs[0].methods[1].grid``; a
    mapping key's own location (``(..., 1, '[key]')``) names the mapping."""
    if loc and loc[-1] == "[key]":
        loc = loc[:-2]
    out = ""
    for part in loc:
        out = f"{out}[{part}]" if isinstance(part, int) else join_place(out, str(part))
    return out


def _message(error: dict[str, Any], models: dict[tuple[str, ...], type] = _MODEL_AT) -> str:
    """A pydantic error as one line; ``models`` maps places to the model whose keys apply."""
    kind, loc, value = error["type"], error["loc"], error.get("input")
    if kind == "extra_forbidden":
        model = models.get(tuple(p for p in loc[:-1] if isinstance(p, str)))
        allowed = ", ".join(model.model_fields) if model else "(none)"
        return f"unknown key {shown(loc[-1])}. Allowed here: {allowed}. {SEE_DOCS}"
    if loc and loc[-1] == "[key]":
        return f"key {shown(value)} is not a string; keys are names."
    if kind == "missing":
        return f"required key '{loc[-1]}' is missing. {SEE_DOCS}"
    if kind == "too_short":
        return f"give at least one entry, got {shown(value)}."
    if len(loc) >= 2 and loc[-2] in ("datasets", "methods", "metrics") and kind == "model_type":
        return f"expected a component name or a mapping with 'name', got {shown(value)}."
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {shown(value)}."
    if kind == "list_type":
        return f"expected a list, got {shown(value)}."
    if kind == "string_type":
        return f"expected a string, got {shown(value)}."
    if kind == "string_too_short":
        return f"expected a non-empty string, got {shown(value)}."
    return f"{error['msg'].lower()}, got {shown(value)}."


def validation_problems(
    source: str, err: pydantic.ValidationError, models: dict[tuple[str, ...], type] = _MODEL_AT
) -> list[str]:
    """Each problem of a pydantic validation error as one line ``source: place: what``,
    each once; ``models`` maps places to the model whose keys apply (for unknown keys)."""
    lines = [f"{source}: {_path(e['loc'])}: {_message(e, models)}" for e in err.errors()]
    return list(dict.fromkeys(lines))


def read_suite_file(path: Path, where: str) -> SuiteFile:
    """The validated :class:`SuiteFile` at ``path`` (see :func:`read_suite_text`).

    :param where: the including file and ``include[i]``, for errors about the file itself.
    :raises SuiteError: naming the file and the place of every problem found.
    """
    raw = parse_yaml(str(path), read_suite_text(path, where))
    if not isinstance(raw, dict):
        holds = "nothing" if raw is None else f"a {type(raw).__name__}"
        raise SuiteError(
            f"{path}: not a suite: a suite file holds a mapping with 'name' and 'runs', this"
            f" one holds {holds}. {SEE_DOCS}"
        )
    if not set(raw) & set(SuiteFile.model_fields):  # its lines are not ours to print
        raise SuiteError(
            f"{path}: not a suite: a suite file holds a mapping with 'name' and 'runs', this"
            f" one has {len(raw):,} keys and none of {', '.join(SuiteFile.model_fields)}."
            f" {SEE_DOCS}"
        )
    runs = raw.get("runs")
    for run in runs if isinstance(runs, list) else []:  # a bare name is short for {name: ...}
        for key in ("datasets", "methods", "metrics"):
            if isinstance(run, dict) and isinstance(run.get(key), list):
                run[key] = [{"name": e} if isinstance(e, str) else e for e in run[key]]
    try:
        spec = SuiteFile.model_validate(raw)
    except pydantic.ValidationError as err:
        raise SuiteError("\n".join(validation_problems(str(path), err))) from None
    problem = check_name(spec.name)
    if problem:
        raise SuiteError(f"{path}: name: {problem}")
    return spec
