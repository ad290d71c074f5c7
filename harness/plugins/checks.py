"""The conformance checks themselves: ``check_<what>(component, registry)``, each raising
``AssertionError`` with what to fix, or :class:`harness.Skip` where it does not apply.

:mod:`harness.plugins.testing` runs them (``parametrize_with_checks``, ``harness
check-plugin``); :data:`CHECKS` lists them in the order they run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import re
import sys
import typing
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from harness.claims import Claim, Select
from harness.components import (
    Component,
    Curve,
    Dataset,
    Method,
    Metric,
    Report,
    Skip,
    params_as_dict,
    params_fields,
    validate_params,
)
from harness.plugins.catalog import claim_selects
from harness.plugins.metric_values import MetricValueError, NonFiniteMetricError, metric_values
from harness.plugins.readonly import READ_ONLY_HINT, changed_parts, part_hashes, read_only
from harness.plugins.registry import Registry, unknown_references

__all__ = ["CHECKS", "KIND_OF_CHECK", "Check", "check_results"]


Check = Callable[[type[Component], Registry], None]


def _params(cls: type[Component]) -> Any:
    return validate_params(cls, getattr(cls, "test_params", {}))


# -- checks on every component --------------------------------------------------------


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
    """The dataset's data at ``test_params``, read-only as the runner hands it to cells."""
    params = _params(cls)
    data = cls(params).load(params, seed)
    read_only(data)
    return data


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
    """Every dataset of the method's tasks, loaded at its smallest configuration
    (``test_params``) and seed 0; datasets that skip are left out."""
    for task in method.tasks():
        for dataset in registry.classes("dataset", task):
            try:
                yield dataset, _loaded(dataset, 0)
            except Skip:
                continue


@functools.cache
def _output(method: type[Method], dataset: type[Dataset], seed: int = 0) -> Any:
    """The method's output on the dataset, read-only as the runner hands it to metrics.

    Raises AssertionError [run-keeps-data] when run changed the data in place."""
    params = _params(method)
    data = _loaded(dataset, seed)
    before = part_hashes(data)
    output = method(params).run(data, params, seed)
    if changed_parts(before, data):
        _loaded.cache_clear()  # the other checks load the data afresh
        raise AssertionError(
            f"method '{method.name}' [run-keeps-data]: run changed the data of dataset"
            f" '{dataset.name}' in place; {READ_ONLY_HINT}"
        )
    read_only(output)
    return output


def _return_annotation(cls: type[Method]) -> Any:
    try:  # the class namespace resolves ``params: Params`` under postponed annotations
        return typing.get_type_hints(cls.run, localns=dict(vars(cls))).get("return")
    except NameError as err:
        raise AssertionError(
            f"method '{cls.name}' [run-annotation]: run has an unresolvable annotation: {err}"
        ) from err


def check_run_annotation_names_output_type(cls: type[Component], registry: Registry) -> None:
    """``Method.run`` has a return annotation, and it is the task's output type (the type
    the task's metrics take as ``output``; :meth:`Registry.output_type`) or a subclass."""
    if not issubclass(cls, Method):
        raise Skip("not a method")
    annotation = _return_annotation(cls)
    for task in cls.tasks():
        expected = registry.output_type(task)
        shown = expected.__qualname__ if expected is not None else "the task's output type"
        assert annotation is not None, (
            f"method '{cls.name}' [run-annotation]: run has no return annotation; annotate"
            f" it '-> {shown}' (task '{task}')"
        )
        if expected is not None:
            assert isinstance(annotation, type) and issubclass(annotation, expected), (
                f"method '{cls.name}' [run-annotation]: run is annotated '-> {annotation!r}'"
                f" but task '{task}' takes {expected.__module__}.{expected.__qualname__}"
            )


def check_run_returns_output_type(cls: type[Component], registry: Registry) -> None:
    """``Method.run`` returns an instance of the task's output type on **every** dataset
    of its task at the dataset's smallest configuration (a dataset may ``Skip`` it)."""
    if not issubclass(cls, Method):
        raise Skip("not a method")
    annotation = _return_annotation(cls)
    ran = 0
    for dataset, _ in _pairs(cls, registry):
        expected = registry.output_type(dataset.task) or annotation
        try:
            output = _output(cls, dataset)
        except Skip:
            continue
        except AssertionError:
            raise
        except Exception as err:
            hint = f" ({READ_ONLY_HINT})" if "read-only" in str(err) else ""
            raise AssertionError(
                f"method '{cls.name}' [run-on-every-dataset]: run failed on dataset"
                f" '{dataset.name}': {type(err).__name__}: {err}{hint}"
            ) from err
        ran += 1
        if isinstance(expected, type):
            assert isinstance(output, expected), (
                f"method '{cls.name}' [run-returns-output-type]: run returned"
                f" {type(output).__name__} on dataset '{dataset.name}'; the task's output"
                f" type is {expected.__name__}"
            )
    if not ran:
        raise Skip(f"every dataset of {cls.tasks()} skips method '{cls.name}' at test_params")


def check_compute_returns_valid_value(cls: type[Component], registry: Registry) -> None:
    """``Metric.compute`` returns a finite float, a dict of finite floats or a Curve of
    finite values (or raises Skip) on the output of **every** method of its task on every
    dataset: NaN on a single pair fails."""
    if not issubclass(cls, Metric):
        raise Skip("not a metric")
    metric = cls(_params(cls))
    computed = 0
    for task in cls.tasks():
        for method in registry.classes("method", task):
            for dataset, data in _pairs(method, registry):
                try:
                    output = _output(method, dataset)
                except Exception:  # a method's own failure is its check's to report
                    continue
                where = f"dataset '{dataset.name}', method '{method.name}'"
                try:
                    value = metric.compute(data, output)
                except Skip:
                    continue
                except Exception as err:
                    raise AssertionError(
                        f"metric '{cls.name}' [compute-on-every-output]: compute failed on"
                        f" {where}: {type(err).__name__}: {err}"
                    ) from err
                _assert_metric_value(cls.name, value, where)
                computed += 1
    if not computed:
        raise Skip(f"metric '{cls.name}' skipped every (dataset, method) pair at test_params")


def _assert_metric_value(name: str, value: Any, where: str = "") -> None:
    """The check ``harness run`` makes (:func:`harness.plugins.metric_values.metric_values`), as an
    AssertionError tagged [finite-metric] (NaN, inf) or [metric-value] (no number)."""
    try:
        metric_values(name, value)
    except NonFiniteMetricError as err:
        raise AssertionError(
            f"[finite-metric]: {err} on {where} (raise Skip where the metric does not apply)"
        ) from None
    except MetricValueError as err:
        raise AssertionError(
            f"[metric-value]: {err} on {where}; expected a real number, a dict of them or a Curve"
        ) from None


def check_results(task: str, registry: Registry, seeds: tuple[int, ...] = (0, 1)) -> tuple:
    """The results a report sees, made from every (dataset, method) pair of ``task`` at
    the smallest configurations and ``seeds``: ``(results DataFrame, curves)`` shaped like
    :meth:`harness.store.tracking.Tracker.results` and the report's ``curves`` mapping."""
    import pandas as pd

    rows, curves = [], {}
    metrics = registry.classes("metric", task)
    for dataset in registry.classes("dataset", task):
        for method in registry.classes("method", task):
            for seed in seeds:
                cell = f"{dataset.name}|{method.name}|{seed}"
                row = {
                    "cell_hash": cell,
                    "run_id": cell,
                    "artifact_uri": "",
                    "task": task,
                    "dataset": dataset.name,
                    "method": method.name,
                    "seed": str(seed),
                    "status": "ok",
                    "reason": "",
                }
                row |= {f"dataset.{k}": str(v) for k, v in params_as_dict(_params(dataset)).items()}
                row |= {f"method.{k}": str(v) for k, v in params_as_dict(_params(method)).items()}
                try:
                    data = _loaded(dataset, seed)
                    output = _output(method, dataset, seed)
                except Skip as reason:
                    rows.append(row | {"status": "skipped", "reason": str(reason)})
                    continue
                except Exception as err:
                    rows.append(row | {"status": "failed", "reason": repr(err)})
                    continue
                curves[cell] = {}
                for metric in metrics:
                    try:
                        value = metric(_params(metric)).compute(data, output)
                    except Exception:  # Skip, or a failure the metric's own check reports
                        continue
                    if isinstance(value, Curve):
                        curves[cell][metric.name] = value
                        row[metric.name] = value.final
                    elif isinstance(value, dict):
                        row |= {f"{metric.name}.{k}": float(v) for k, v in value.items()}
                    else:
                        row[metric.name] = float(value)
                rows.append(row)
    return pd.DataFrame(rows), curves


def check_build_on_check_results(cls: type[Component], registry: Registry) -> None:
    """``Report.build`` runs on the results of every (dataset, method) pair of its task
    at the smallest configurations and two seeds, and returns ``{name: Figure or
    DataFrame}`` (or raises Skip)."""
    if not issubclass(cls, Report):
        raise Skip("not a report")
    for task in cls.tasks():
        results, curves = check_results(task, registry)
        try:
            items = cls().build(results, curves)
        except Skip:
            continue
        except Exception as err:
            raise AssertionError(
                f"report '{cls.name}' [build]: build failed on the check results of task"
                f" '{task}': {type(err).__name__}: {err}"
            ) from err
        assert isinstance(items, dict), (
            f"report '{cls.name}' [build]: build returned {type(items).__name__}; expected a"
            " dict of figures and tables"
        )
        for name, item in items.items():
            assert hasattr(item, "savefig") or hasattr(item, "to_csv"), (
                f"report '{cls.name}' [build]: item {name!r} is {type(item).__name__}; expected"
                " a matplotlib Figure or a pandas DataFrame"
            )
        _close_figures(items)


def check_claim_names_existing_components(cls: type[Component], registry: Registry) -> None:
    """Every dataset, method and param a claim names exists in its task: its cells
    (``requires[i]``), ``subject``, ``rivals[i]`` and the selections of its ``kind`` and
    ``control``; a dataset param may also be a key of the dataset's ``describe()``. Each
    problem is named by its field."""
    if not issubclass(cls, Claim):
        raise Skip("not a claim")
    problems = unknown_references(cls, registry) + _unknown_params(cls, registry)
    assert not problems, f"claim '{cls.name}' [claim-names]: " + "; ".join(problems)


def _unknown_params(claim: type[Claim], registry: Registry) -> list[str]:
    """Each param a claim names that the named component lacks, by field (components
    that do not exist are :func:`harness.plugins.registry.unknown_references`'s to report)."""
    named: list[tuple[str, str, str | None, Any]] = []  # (field, kind, component, params)
    for i, need in enumerate(claim.requires):
        named.append((f"requires[{i}].dataset_params", "dataset", need.dataset,
                      need.dataset_params))  # fmt: skip
        named += [(f"requires[{i}].method_params", "method", m, need.method_params)
                  for m in need.methods]  # fmt: skip
    datasets = sorted({need.dataset for need in claim.requires})
    if isinstance(claim.subject, Select):
        named.append(("subject.method_params", "method", claim.subject.method,
                      claim.subject.method_params))  # fmt: skip
        named += [("subject.dataset_params", "dataset", d, claim.subject.dataset_params)
                  for d in datasets]  # fmt: skip
    named += [(f"rivals[{i}].params", "method", r.method, r.params)
              for i, r in enumerate(claim.rivals)]  # fmt: skip
    for where, select in claim_selects(claim):
        named.append((f"{where}.method_params", "method", select.method,
                      select.method_params))  # fmt: skip
        named += [(f"{where}.dataset_params", "dataset", d, select.dataset_params)
                  for d in ([select.dataset] if select.dataset else datasets)]  # fmt: skip
    problems = []
    for field_name, kind, name, params in named:
        known = _param_names(registry, kind, claim.tasks(), name)
        if known is None:
            continue
        for key in params:
            if key not in known:
                problems.append(
                    f"{field_name} names param {key!r}, which {kind} '{name}' does not have"
                    f" (known: {', '.join(sorted(known)) or '(none)'})"
                )
    return list(dict.fromkeys(problems))


def _param_names(
    registry: Registry, kind: str, tasks: tuple[str, ...], name: str | None
) -> set[str] | None:
    """The params of the component ``name`` (a dataset's: its ``Params`` fields and the keys
    of ``describe()`` at its test params and seed 0, logged as params too); None when the
    task has no such component (or no name is given)."""
    entry = next((registry.entries[kind].get((t, name)) for t in tasks
                  if (t, name) in registry.entries[kind]), None)  # fmt: skip
    if entry is None:
        return None
    known = set(params_fields(entry.cls.Params))
    if kind == "dataset":
        with contextlib.suppress(Exception):  # a dataset's failure is its own check's
            known |= set(entry.cls(_params(entry.cls)).describe(_loaded(entry.cls, 0)))
    return known


def _close_figures(items: dict[str, Any]) -> None:
    plt = sys.modules.get("matplotlib.pyplot")
    for item in items.values():
        if plt is not None and hasattr(item, "savefig"):
            plt.close(item)


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
    check_docstring_names_source,
    check_params_are_typed_with_defaults,
    check_load_is_deterministic,
    check_run_annotation_names_output_type,
    check_run_returns_output_type,
    check_compute_returns_valid_value,
    check_build_on_check_results,
    check_claim_names_existing_components,
)
# Checks that apply to one kind of component only; the others apply to every kind.
KIND_OF_CHECK = {
    check_load_is_deterministic: "dataset",
    check_run_annotation_names_output_type: "method",
    check_run_returns_output_type: "method",
    check_compute_returns_valid_value: "metric",
    check_build_on_check_results: "report",
    check_claim_names_existing_components: "claim",
}
