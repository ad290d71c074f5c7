"""Conformance checks for plugin authors: harness's ``check_estimator``.

Each check is a small function ``check_<what>(component, registry)`` that raises
``AssertionError`` with a message saying what to fix, or :class:`harness.Skip` when it
does not apply. A plugin's test suite runs them all with one decorator::

    from harness.testing import parametrize_with_checks

    @parametrize_with_checks("fair-regression")
    def test_conformance(component, check):
        check(component)

which gives test ids like ``test_conformance[mse-check_compute_returns_valid_value]``.
``harness check-plugin NAME`` runs the same checks from the command line.

Components may set a class attribute ``test_params: dict`` with small parameter values
that the checks use instead of the defaults, so that they run in about a second.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import re
import typing
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from harness.components import (
    Component,
    Curve,
    Dataset,
    Method,
    Metric,
    Skip,
    params_fields,
    validate_params,
)
from harness.registry import KINDS, Registry, build_registry

__all__ = ["CHECKS", "iter_checks", "parametrize_with_checks", "run_checks"]

Check = Callable[[type[Component], Registry], None]


def _params(cls: type[Component]) -> Any:
    return validate_params(cls, getattr(cls, "test_params", {}))


# -- checks on every component --------------------------------------------------------


def check_name_is_kebab_case(cls: type[Component], registry: Registry) -> None:
    """``name`` is lower-case words joined by '-'."""
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", cls.name), f"bad name {cls.name!r}"


def check_docstring_names_source(cls: type[Component], registry: Registry) -> None:
    """The docstring has a ``Source:`` line naming the paper and equation, or the library."""
    doc = inspect.getdoc(cls) or ""
    assert re.search(r"^Source: \S", doc, re.M), (
        f"{cls.__name__} needs a docstring with a 'Source: <paper, equation>' line"
    )


def check_params_are_typed_with_defaults(cls: type[Component], registry: Registry) -> None:
    """Every ``Params`` field has a type annotation and a default; ``Params()`` builds."""
    for name, (annotation, default) in params_fields(cls.Params).items():
        assert annotation is not Any, f"{cls.__name__}.Params.{name} has no type annotation"
        assert default is not dataclasses.MISSING, f"{cls.__name__}.Params.{name} has no default"
    cls.Params()
    _params(cls)


# -- checks per kind ------------------------------------------------------------------


@functools.cache
def _loaded(cls: type[Dataset], seed: int) -> Any:
    params = _params(cls)
    return cls(params).load(params, seed)


def check_load_is_deterministic(cls: type[Component], registry: Registry) -> None:
    """``Dataset.load`` gives equal data for equal params and seed, and differs across seeds
    where the data are random."""
    if not issubclass(cls, Dataset):
        raise Skip("not a dataset")
    params = _params(cls)
    first = _loaded(cls, 0)
    again = cls(params).load(params, 0)
    assert _equal(first, again), f"{cls.name}.load(params, seed=0) differs between two calls"
    description = cls(params).describe(first)
    assert isinstance(description, dict), f"{cls.name}.describe must return a dict"


def _pairs(method: type[Method], registry: Registry) -> Iterator[tuple[type[Dataset], Any]]:
    for task in method.tasks():
        for name in registry.names("dataset", task):
            dataset = registry.entries["dataset"][(task, name)].cls
            try:
                yield dataset, _loaded(dataset, 0)
            except Skip:
                continue


@functools.cache
def _output(method: type[Method], dataset: type[Dataset]) -> Any:
    params = _params(method)
    return method(params).run(_loaded(dataset, 0), params, 0)


def check_run_returns_output_type(cls: type[Component], registry: Registry) -> None:
    """``Method.run`` returns an instance of its annotated return type on some dataset of
    its task (datasets it skips are tried in turn)."""
    if not issubclass(cls, Method):
        raise Skip("not a method")
    try:  # the class namespace resolves ``params: Params`` under postponed annotations
        expected = typing.get_type_hints(cls.run, localns=dict(vars(cls))).get("return")
    except NameError as err:
        raise AssertionError(f"{cls.name}.run has an unresolvable annotation: {err}") from err
    for dataset, _ in _pairs(cls, registry):
        try:
            output = _output(cls, dataset)
        except Skip:
            continue
        if isinstance(expected, type):
            assert isinstance(output, expected), (
                f"{cls.name}.run returned {type(output).__name__}, annotated {expected.__name__}"
            )
        return
    raise Skip(f"every dataset of {cls.tasks()} skips method '{cls.name}' at its test_params")


def check_compute_returns_valid_value(cls: type[Component], registry: Registry) -> None:
    """``Metric.compute`` returns a finite float, a dict of finite floats or a Curve
    (or raises Skip) on the output of some method of its task."""
    if not issubclass(cls, Metric):
        raise Skip("not a metric")
    metric = cls(_params(cls))
    for task in cls.tasks():
        for method_name in registry.names("method", task):
            method = registry.entries["method"][(task, method_name)].cls
            for dataset, data in _pairs(method, registry):
                try:
                    value = metric.compute(data, _output(method, dataset))
                except Skip:
                    continue
                _assert_metric_value(cls.name, value)
                return
    raise Skip(f"metric '{cls.name}' skipped every (dataset, method) pair at test_params")


def _assert_metric_value(name: str, value: Any) -> None:
    if isinstance(value, Curve):
        assert np.all(np.isfinite(value.values)), f"{name} returned a Curve with non-finite values"
    elif isinstance(value, dict):
        assert value, f"{name} returned an empty dict"
        for key, v in value.items():
            assert isinstance(key, str), f"{name} returned a non-string key {key!r}"
            assert isinstance(v, int | float | np.floating | np.integer) and math.isfinite(v), (
                f"{name}[{key!r}] = {v!r} is not a finite number (raise Skip instead of NaN)"
            )
    else:
        assert isinstance(value, int | float | np.floating | np.integer), (
            f"{name} returned {type(value).__name__}; expected float, dict or Curve"
        )
        assert math.isfinite(value), f"{name} returned {value!r}; raise Skip instead of NaN"


def _equal(a: Any, b: Any) -> bool:
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            _equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, np.ndarray) or hasattr(a, "__array__"):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if hasattr(a, "equals"):  # pandas objects
        return bool(a.equals(b))
    try:
        return bool(a == b)
    except Exception:  # objects without equality compare by identity of type only
        return type(a) is type(b)


CHECKS: tuple[Check, ...] = (
    check_name_is_kebab_case,
    check_docstring_names_source,
    check_params_are_typed_with_defaults,
    check_load_is_deterministic,
    check_run_returns_output_type,
    check_compute_returns_valid_value,
)
# Checks that apply to one kind of component only; the others apply to every kind.
_KIND_OF_CHECK = {
    check_load_is_deterministic: "dataset",
    check_run_returns_output_type: "method",
    check_compute_returns_valid_value: "metric",
}


def iter_checks(
    plugin: str, registry: Registry | None = None
) -> Iterator[tuple[str, type[Component], Callable[[type[Component]], None]]]:
    """Yield ``(id, component, check)`` for every component of ``plugin`` and every check
    that applies to its kind; ``check(component)`` runs it.

    :raises harness.errors.PluginError: if no installed plugin is called ``plugin``.
    """
    from harness.errors import PluginError

    registry = registry or build_registry()
    if plugin not in registry.plugins:
        known = ", ".join(sorted(registry.plugins)) or "(none)"
        raise PluginError(f"No installed plugin '{plugin}'. Installed: {known}.")
    for kind in KINDS:
        seen = set()
        for entry in registry.entries[kind].values():
            if entry.plugin != plugin or entry.cls in seen:
                continue
            seen.add(entry.cls)
            for check in CHECKS:
                if _KIND_OF_CHECK.get(check, kind) != kind:
                    continue
                yield (
                    f"{entry.cls.name}-{check.__name__}",
                    entry.cls,
                    functools.partial(_run_check, check, registry=registry),
                )


def _run_check(check: Check, component: type[Component], registry: Registry) -> None:
    try:
        check(component, registry)
    except Skip as reason:
        import pytest

        pytest.skip(str(reason))


def parametrize_with_checks(plugin: str) -> Any:
    """A ``pytest.mark.parametrize`` over every conformance check of an installed plugin.

    The decorated test takes ``component`` and ``check`` and calls ``check(component)``.
    """
    import pytest

    cases = list(iter_checks(plugin))
    return pytest.mark.parametrize(
        ("component", "check"), [(c, f) for _, c, f in cases], ids=[i for i, _, _ in cases]
    )


def run_checks(plugin: str, registry: Registry | None = None) -> list[tuple[str, str, str]]:
    """Run every check of ``plugin`` outside pytest: ``[(id, "passed"|"failed"|"skipped",
    message)]``. Used by ``harness check-plugin``."""
    results = []
    registry = registry or build_registry()
    for check_id, component, _ in iter_checks(plugin, registry):
        check = next(c for c in CHECKS if check_id.endswith(c.__name__))
        try:
            check(component, registry)
        except Skip as reason:
            results.append((check_id, "skipped", str(reason)))
        except Exception as err:  # a failing check reports any error, not just asserts
            results.append((check_id, "failed", f"{type(err).__name__}: {err}"))
        else:
            results.append((check_id, "passed", ""))
    return results
