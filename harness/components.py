"""Component base classes of the plugin API: Dataset, Method, Metric, Report.

A plugin contributes *classes* (not instances) through the hooks of
:mod:`harness.plugins.hookspecs`. Each class has a kebab-case ``name``, the ``task`` it belongs to
(a method may declare several), a docstring whose ``Source:`` line names the paper or library,
and a nested ``Params`` (a dataclass or a pydantic model) whose typed, defaulted fields are
everything a suite may set. The runner instantiates a component as ``cls(params)``.

Contract (docs/design.md, "Plugin API"):

- ``Dataset.load(params, seed) -> data``: same params and seed give the same data.
- ``Method.run(data, params, seed) -> output``; a method must not mutate ``data``
  (one loaded data object may be reused by several cells of the same worker).
- ``Metric.compute(data, output) -> float | dict[str, float] | Curve``.
- ``Report.build(results, curves) -> dict[str, Figure | DataFrame]`` over a finished suite.

Any of ``load``, ``run`` and ``compute`` may raise :class:`Skip` with a reason.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pydantic

from harness.errors import ParamsError

__all__ = [
    "NAME_MAX",
    "RESERVED_METRIC_NAMES",
    "RESULT_COLUMNS",
    "Component",
    "Curve",
    "Dataset",
    "Method",
    "Metric",
    "Report",
    "Skip",
    "describe_type",
    "params_as_dict",
    "params_fields",
    "type_adapter",
    "validate_params",
    "visible",
]

# Columns every results table holds besides the metrics (``Tracker.results``): a metric may
# not be named one of them, nor "seeds" (the summary's count), or a prefix of other columns:
# "time" (``time.<phase>``), "metric" (metric params), "skipped" (skipped metrics)
RESULT_COLUMNS = (
    "cell_hash",
    "run_id",
    "experiment_id",
    "artifact_uri",
    "status",
    "reason",
    "plugin",
    "plugin_version",
    "plugin_fingerprint",
    "dataset_plugin",
    "git_commit",
    "start_time",
    "task",
    "dataset",
    "method",
    "seed",
)
#: The longest suite name; a new plugin's name names its package, folder and suite (an MLflow
#: experiment), so ``harness new-plugin`` keeps to it too.
NAME_MAX = 100
RESERVED_METRIC_NAMES = frozenset({*RESULT_COLUMNS, "seeds", "time", "metric", "skipped"})

# What a terminal or a document could obey in a text from a plugin, a suite or a store: C0
# controls but tab and newline (ESC starts ANSI and OSC sequences), DEL, C1 (CSI, OSC, ST as
# single characters), the bidirectional overrides and isolates (a right-to-left override
# reorders the rest of the line), zero-width characters and the line and paragraph separators
_OBEYED = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]"
)


def visible(text: str) -> str:
    """``text`` with every character a terminal or a viewer would obey rather than show
    written as its Python escape (``\\x1b``, ``\\u202e``): shown, never obeyed. Tab and
    newline are kept. Every text from a plugin, a suite or a store passes here before it is
    printed (``harness.cli.common``) or written into a report.

    >>> visible("ok\\x1b]0;title\\x07 \\u202eevil\\n")
    'ok\\\\x1b]0;title\\\\x07 \\\\u202eevil\\n'
    """
    return _OBEYED.sub(lambda m: ascii(m.group())[1:-1], text)


class Skip(Exception):  # noqa: N818 - the name is the contract (benchopt's skip())
    """A component does not apply here; the reason is logged, and it is not a failure.

    Raised by ``Metric.compute``: the metric is left out of the cell. Raised by
    ``Dataset.load`` or ``Method.run``: the whole cell is recorded with status ``skipped``.

    Examples
    --------
    >>> raise Skip("ks-unfairness needs two groups; 'toy-linear' has one")
    Traceback (most recent call last):
    ...
    harness.components.Skip: ks-unfairness needs two groups; 'toy-linear' has one
    """


@dataclass(frozen=True)
class Curve:
    """Values of a metric over steps (e.g. cumulative regret over rounds).

    Parameters
    ----------
    values : array-like of float, shape (n_steps,)
        The metric at each step, in the metric's units.
    steps : array-like of int, shape (n_steps,), optional
        Strictly increasing step indices; defaults to ``1 .. n_steps``.

    Raises
    ------
    ValueError
        If ``values`` is not one-dimensional and non-empty, or ``steps`` does not match it
        or is not strictly increasing.

    Examples
    --------
    >>> Curve([0.0, 0.5, 0.75]).steps.tolist()
    [1, 2, 3]
    """

    values: np.ndarray
    steps: np.ndarray = None  # type: ignore[assignment]  # filled in __post_init__

    def __post_init__(self) -> None:
        given = np.asarray(self.values)
        if given.dtype.kind not in "biuf":
            raise ValueError(f"Curve values must be real numbers, got dtype {given.dtype}")
        values = given.astype(float)
        if values.ndim != 1 or values.size == 0:
            raise ValueError(f"Curve values must be a non-empty 1-D array, got {values.shape}")
        steps = np.arange(1, values.size + 1) if self.steps is None else np.asarray(self.steps)
        if steps.shape != values.shape:
            raise ValueError(f"Curve steps shape {steps.shape} != values shape {values.shape}")
        if steps.dtype.kind not in "iu" and not (
            steps.dtype.kind == "f" and np.all(np.isfinite(steps) & (steps == np.round(steps)))
        ):
            raise ValueError(f"Curve steps must be whole numbers, got {steps[:5].tolist()}")
        if steps.size > 1 and not np.all(np.diff(steps) > 0):
            at = int(np.argmax(np.diff(steps) <= 0))
            raise ValueError(
                f"Curve steps must be strictly increasing (its last value is the final one),"
                f" got {steps[at]} then {steps[at + 1]} at positions {at} and {at + 1}"
            )
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "steps", steps.astype(np.int64))

    @property
    def final(self) -> float:
        """The last value, used where one number per cell is needed (tables)."""
        return float(self.values[-1])

    def thinned(self, max_points: int = 1000) -> Curve:
        """At most ``max_points`` evenly spaced points, always keeping the first and last."""
        if self.values.size <= max_points:
            return self
        index = np.unique(np.linspace(0, self.values.size - 1, max_points).round().astype(int))
        return Curve(self.values[index], self.steps[index])


class Component:
    """Common base: ``name``, ``task``, a nested ``Params`` and ``self.params``.

    Parameters
    ----------
    params : Params, optional
        Validated parameters; defaults to ``Params()``.
    """

    name: ClassVar[str]
    task: ClassVar[str | tuple[str, ...]]

    @dataclass
    class Params:
        """No parameters."""

    def __init__(self, params: Any = None) -> None:
        self.params = params if params is not None else self.Params()

    @classmethod
    def tasks(cls) -> tuple[str, ...]:
        """The tasks this component belongs to, as a tuple."""
        return (cls.task,) if isinstance(cls.task, str) else tuple(cls.task)


class Dataset(Component):
    """Base class of datasets: ``load(params, seed)`` returns the task's data object."""

    def load(self, params: Any, seed: int) -> Any:
        """Build the data; deterministic given ``params`` and ``seed``."""
        raise NotImplementedError(f"{type(self).__name__}.load is not implemented")

    def describe(self, data: Any) -> dict[str, float | int | str]:
        """Derived facts about loaded data, logged as ``dataset.<key>`` params of the cell.

        Summary tables tell configurations apart by ``Params`` fields only, so a fact may
        vary with the seed (e.g. group proportions of a random split).

        Override to record what the suite did not set but a reader needs (matched
        moment degree, group proportions, ...). Default: nothing.
        """
        return {}


class Method(Component):
    """Base class of methods: ``run(data, params, seed)`` returns the task's output object."""

    def run(self, data: Any, params: Any, seed: int) -> Any:
        """Fit and predict on ``data``; must not mutate it."""
        raise NotImplementedError(f"{type(self).__name__}.run is not implemented")


class Metric(Component):
    """Base class of metrics: ``compute(data, output)`` scores one cell.

    ``higher_is_better`` (``True``, ``False`` or ``None`` for neither) orders tables.
    ``uncertainty`` names the keys of a dict metric that are the spread of its estimate
    (a Monte Carlo standard deviation, a standard error): they are shown as the
    uncertainty they are and never ranked, whatever ``higher_is_better`` says of the
    others; a key ending in ``_sd`` or ``_se`` is one too.
    """

    higher_is_better: ClassVar[bool | None] = None
    uncertainty: ClassVar[frozenset[str]] = frozenset({"sd", "se", "std", "stderr"})

    @classmethod
    def ranks(cls, key: str) -> bool:
        """Whether the dict metric's ``key`` (``""`` for a scalar) may be ranked: not when
        it is an uncertainty (``mc_sd``, ``se``)."""
        return key not in cls.uncertainty and not key.endswith(("_sd", "_se"))

    def compute(self, data: Any, output: Any) -> float | dict[str, float] | Curve:
        """A scalar, several named scalars, or a :class:`Curve`; or raise :class:`Skip`."""
        raise NotImplementedError(f"{type(self).__name__}.compute is not implemented")


class Report(Component):
    """Base class of reports: plots and cross-run statistics over a finished suite."""

    def build(self, results: Any, curves: Mapping[str, Mapping[str, Curve]]) -> dict[str, Any]:
        """Build figures and tables from every finished cell of the report's task.

        :param results: a ``pandas.DataFrame``, one row per cell, with columns
            ``cell_hash, task, dataset, method, seed, status``, every param as
            ``dataset.<p>`` / ``method.<p>`` and every metric under its logged name.
        :param curves: ``{cell_hash: {metric name: Curve}}`` for cells that logged curves.
        :returns: ``{name: matplotlib Figure or pandas DataFrame}``; names become file
            names (``<name>.png`` / ``<name>.md``) in the report folder.
        """
        raise NotImplementedError(f"{type(self).__name__}.build is not implemented")


# -- Params: introspection and validation ----------------------------------------------


def params_fields(params_cls: type) -> dict[str, tuple[Any, Any]]:
    """``{field: (annotation, default)}`` of a dataclass or pydantic ``Params``.

    The default is ``dataclasses.MISSING`` where a field has none.

    Raises
    ------
    TypeError
        If ``params_cls`` is neither a dataclass nor a pydantic model.
    """
    if isinstance(params_cls, type) and issubclass(params_cls, pydantic.BaseModel):
        return {
            name: (f.annotation, dataclasses.MISSING if f.is_required() else f.get_default())
            for name, f in params_cls.model_fields.items()
        }
    if dataclasses.is_dataclass(params_cls):
        hints = typing.get_type_hints(params_cls, include_extras=True)  # Annotated kept
        out = {}
        for f in dataclasses.fields(params_cls):
            default = f.default
            if default is dataclasses.MISSING and f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            out[f.name] = (hints.get(f.name, Any), default)
        return out
    raise TypeError(f"Params must be a dataclass or a pydantic model, got {params_cls!r}")


def no_unannotated_attributes(params_cls: type) -> None:
    """Raise TypeError for a plain value in a dataclass ``Params`` body without a type
    annotation (``strength = 1.0``): the dataclass takes it as a class constant, not a field,
    so the param would silently not exist. Checked once per component, when the registry is
    built (:func:`harness.plugins.registry.build_registry`), not on every params lookup."""
    if not dataclasses.is_dataclass(params_cls):
        return
    fields = {f.name for f in dataclasses.fields(params_cls)}
    for klass in params_cls.__mro__[:-1]:
        if "__dataclass_fields__" not in vars(klass):  # a plain mixin's constants are its own
            continue
        annotated = vars(klass).get("__annotations__", {})  # getattr would add one
        for name, value in list(vars(klass).items()):
            if name.startswith("_") or name in fields or name in annotated:
                continue
            if callable(value) or hasattr(type(value), "__get__"):  # methods, properties
                continue
            raise TypeError(
                f"{params_cls.__qualname__}.{name} = {value!r} has no type annotation, so it is"
                f" not a param: write '{name}: {type(value).__name__} = {value!r}'"
                " (or annotate it typing.ClassVar for a constant)"
            )


@functools.lru_cache(maxsize=1024)
def type_adapter(annotation: Any) -> pydantic.TypeAdapter:
    """A (cached) pydantic ``TypeAdapter`` of a param's annotation, to coerce one value."""
    return pydantic.TypeAdapter(annotation)


def describe_type(annotation: Any) -> str:
    """A type as a reader writes it: ``int``, ``one of 'a', 'b'``; ``Annotated`` unwrapped."""
    if typing.get_origin(annotation) is typing.Annotated:
        return describe_type(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(annotation))
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def validate_params(
    component: type[Component], values: Mapping[str, Any], where: Mapping[str, str] | None = None
) -> Any:
    """Check ``values`` against ``component.Params`` and build a ``Params`` instance.

    :param component: the component class whose ``Params`` applies.
    :param values: ``{field: value}`` as read from a suite (unset fields take defaults).
    :param where: optional ``{field: path}`` so errors name where each value came from
        (``params.alpha`` or ``grid.alpha[1]``); defaults to the field name.
    :returns: a ``Params`` instance with values coerced to the annotated types.
    :raises ParamsError: listing every unknown field (with the known ones) and every
        value of the wrong type, or the message of a check in ``Params`` itself.
    """
    where = where or {}
    fields = params_fields(component.Params)
    problems: list[tuple[str, str]] = []
    coerced: dict[str, Any] = {}
    for key, value in values.items():
        path = where.get(key, key)
        if key not in fields:
            known = ", ".join(fields) or "(none)"
            problems.append((path, f"unknown param '{key}' of '{component.name}'. Known: {known}."))
            continue
        annotation = fields[key][0]
        numeric = {int, float} & {annotation, *typing.get_args(annotation)}
        if isinstance(value, bool) and numeric and bool not in typing.get_args(annotation):
            # pydantic takes True as 1; YAML 1.1 reads yes, no, on, off as booleans
            problem = f"expected {describe_type(annotation)}, got {value!r} (YAML reads yes, no,"
            problems.append((path, problem + " on, off, true, false as booleans)."))
            continue
        try:
            coerced[key] = type_adapter(annotation).validate_python(value)
        except pydantic.ValidationError as err:
            problem = f"expected {describe_type(annotation)}, got {value!r}"
            if typing.get_origin(annotation) is typing.Annotated:  # the declared constraint
                message = err.errors()[0]["msg"]  # a validator's own words keep their case
                problem += f" ({message[:1].lower() + message[1:]})"
            problem += "."
            problems.append((path, problem + (_yaml_number_hint(value) if numeric else "")))
    missing = [k for k, (_, d) in fields.items() if d is dataclasses.MISSING and k not in values]
    problems += [(k, f"required param '{k}' of '{component.name}' is not set.") for k in missing]
    if problems:
        raise ParamsError(problems)
    try:
        return component.Params(**coerced)
    except (ValueError, TypeError, pydantic.ValidationError) as err:
        raise ParamsError([("", f"invalid params for '{component.name}': {err}")]) from err


def _yaml_number_hint(value: Any) -> str:
    """A hint for a number YAML read as a string (PyYAML, YAML 1.1: ``1e3`` needs a dot and
    a signed exponent, ``1.0e+3``, to be a float)."""
    if not isinstance(value, str):
        return ""
    try:
        number = float(value)
    except ValueError:
        return ""
    if not math.isfinite(number):
        return ""
    whole = f" or {int(number)}" if number.is_integer() and abs(number) < 1e18 else ""
    return f" YAML reads {value} as a string: write {number!r}{whole}."


def params_as_dict(params: Any) -> dict[str, Any]:
    """A ``Params`` instance as a plain ``{field: value}`` dict (not recursive)."""
    if isinstance(params, pydantic.BaseModel):
        return dict(params)
    return {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
