"""Runs one cell in the current process: seeding, the data loaded once per data key and
kept read-only, the method, every metric with its value checked; never raises for a
failing cell.

:func:`execute_cell` returns a picklable :class:`CellResult`, which the executors
(:mod:`harness.runs.executors`) send to the driver (:mod:`harness.runs.runner`).
:func:`metric_values` is the one check of a metric's value, used by ``harness run`` and
``harness check-plugin`` alike.
"""

from __future__ import annotations

import copy
import numbers
import os
import random
import signal
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from harness.components import Curve, Skip, validate_params
from harness.plugins.metric_values import MetricValueError, NonFiniteMetricError, metric_values
from harness.plugins.readonly import (
    READ_ONLY_HINT,
    changed_parts,
    differing_paths,
    fully_covered,
    part_hashes,
    read_only,
)
from harness.plugins.registry import Registry
from harness.suites.identity import Cell

__all__ = [
    "CellResult",
    "DataChangedError",
    "MetricValueError",
    "NonFiniteMetricError",
    "WrongOutputError",
    "check_output",
    "execute_cell",
    "forget_data",
    "metric_values",
    "seed_everything",
]

#: Called with the exception of a failing cell inside its ``except`` block (``--pdb``).
on_cell_error: Callable[[BaseException], None] | None = None


@dataclass
class CellResult:
    """What one cell produced, sent from a worker to the driver.

    Attributes
    ----------
    cell_hash : str
    status : {"ok", "failed", "timeout", "skipped"}
    metrics : dict[str, float]
        Scalars by logged name (``<metric>.<key>`` for dict metrics).
    curves : dict[str, Curve]
    skipped_metrics : dict[str, str]
        Metric name -> the reason it was skipped.
    reason : str
        Why the cell was skipped, failed or timed out ("" when ok).
    error : str
        The full traceback of a failed cell ("" otherwise).
    described : dict[str, str]
        ``Dataset.describe(data)``, logged as ``dataset.<key>`` params.
    warnings : list of str
        Distinct warnings the cell raised, with counts (logged as ``warnings.txt``).
    seconds : dict[str, float]
        Wall time of ``load``, ``run`` and the metrics, in seconds.
    start_ms, end_ms : int
        Wall-clock start and end, milliseconds since the epoch.
    """

    cell_hash: str
    status: str
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, Curve] = field(default_factory=dict)
    skipped_metrics: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    error: str = ""
    described: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    start_ms: int = 0
    end_ms: int = 0


def seed_everything(seed: int) -> None:
    """Seed numpy's global generator, ``random`` and torch (when it is imported)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


class _DataCache:
    """The last loaded data of this process: consecutive cells of one dataset reuse it."""

    key: str | None = None
    data: object = None
    hashes: dict[str, str] = {}  # noqa: RUF012 - part_hashes(data) when loaded, replaced
    #: data key -> its part_hashes before a cell changed the data in place
    pristine: dict[str, dict[str, str]] = {}  # noqa: RUF012
    described: dict[str, str] = {}  # noqa: RUF012 - replaced, never mutated
    #: the data reach past what read-only flags and the digest cover (isolation.fully_covered):
    #: each cell gets a copy, and ``data`` itself is never handed out
    copied: bool = False


def forget_data() -> None:
    """Drop the data this process holds loaded: a worker forked from a process that ran
    cells itself (``-j 0`` earlier in the same process) loads its own."""
    _DataCache.key, _DataCache.data, _DataCache.hashes, _DataCache.copied = None, None, {}, False


def execute_cell(cell: Cell, registry: Registry) -> CellResult:
    """Run one cell: load (or reuse) the data, run the method, compute every metric.

    A ``Skip`` from load or run gives status ``skipped``; any other exception gives
    ``failed`` with its traceback; a ``Skip`` from a metric leaves that metric out.
    A process the method or a metric forked that returns or raises instead of calling
    ``os._exit`` ends here (``os._exit(0)``), whatever the executor: it never gets back to
    the caller's code as a copy of it.
    """
    result = CellResult(cell.cell_hash, "ok", start_ms=int(time.time() * 1000))
    started_in = os.getpid()
    with warnings.catch_warnings(record=True) as caught:  # kept with the cell, not printed
        warnings.simplefilter("always")
        try:
            _execute(cell, registry, result)
        finally:
            _end_if_forked(started_in)
    counts = Counter(
        f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})"
        for w in caught
        if not str(w.message).startswith(_OURS)
    )
    result.warnings = [f"{n} x {text}" for text, n in counts.items()]
    result.end_ms = int(time.time() * 1000)
    return result


def _end_if_forked(pid: int) -> None:
    """End this process (``os._exit(0)``, nothing flushed or sent) if it is not ``pid``,
    the process that started the cell: a child the cell's code forked."""
    if os.getpid() != pid:
        os._exit(0)


#: torch.as_tensor on the arrays :func:`read_only` marked warns once per process: our doing,
#: not the cell's, so it is not kept with the cell's warnings.
_OURS = "The given NumPy array is not writable"


def _execute(cell: Cell, registry: Registry, result: CellResult) -> None:
    stage = ""  # the metric computing, named in a failure's reason
    try:
        data = _load(cell, registry, result)
        method = registry.get("method", cell.task, cell.method).cls
        params = validate_params(method, cell.method_params)
        seed_everything(cell.method_seed)
        tic = time.perf_counter()
        output = method(params).run(data, params, cell.method_seed)
        result.seconds["run"] = time.perf_counter() - tic
        check_output(cell.method, output, _output_type(registry, cell.task))
        read_only(output)  # one metric cannot change what the next one reads
        tic = time.perf_counter()
        for name, metric_params in cell.metrics:
            stage = f"metric '{name}' raised "
            metric = registry.get("metric", cell.task, name).cls
            try:
                value = metric(validate_params(metric, metric_params)).compute(data, output)
            except Skip as reason:
                result.skipped_metrics[name] = str(reason)
                continue
            _store(result, name, value)
        stage = ""
        result.seconds["metrics"] = time.perf_counter() - tic
    except Skip as reason:
        result.status, result.reason = "skipped", str(reason) or "skipped"
    except (MetricValueError, WrongOutputError) as err:
        result.status, result.reason = "failed", str(err)
        result.error = traceback.format_exc()
    except (Exception, SystemExit, KeyboardInterrupt) as err:  # recorded; the suite goes on
        if isinstance(err, KeyboardInterrupt) and not _sigint_ignored():
            raise  # Ctrl-C in the driver's process (-j 0): the user stops the run
        if on_cell_error is not None:  # --pdb: the debugger at the frame that raised
            on_cell_error(err)
        text = _text(err)
        result.status, result.reason = "failed", f"{stage}{type(err).__name__}: {text}"
        if isinstance(err, SystemExit):
            result.reason = result.reason.rstrip(": ")
            result.reason += " (the cell called sys.exit; raise an exception or harness.Skip)"
        if isinstance(err, KeyboardInterrupt):
            result.reason = result.reason.rstrip(": ")
            result.reason += " (raised by the cell's code: Ctrl-C stops the driver, not a cell)"
        if isinstance(err, ValueError) and "read-only" in text:
            result.reason += f" ({READ_ONLY_HINT})"
        result.error = traceback.format_exc()
    _check_data_unchanged(cell, result)


def _sigint_ignored() -> bool:
    """True in a worker process, which ignores SIGINT (the driver handles Ctrl-C): a
    KeyboardInterrupt there was raised by the cell's own code."""
    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def _text(err: BaseException) -> str:
    """``str(err)``, or a note when the exception's own ``__str__`` raises."""
    try:
        return str(err)
    except Exception as inner:
        return f"<str() of this exception raised {type(inner).__name__}>"


class WrongOutputError(TypeError):
    """A method's ``run`` returned something other than its task's output type (the
    annotation of its metrics' ``output`` argument, :meth:`Registry.output_type`)."""


_output_types: dict[tuple[int, str], type | None] = {}


def _output_type(registry: Registry, task: str) -> type | None:
    """:meth:`Registry.output_type`, looked up once per registry and task."""
    key = (id(registry), task)
    if key not in _output_types:
        _output_types[key] = registry.output_type(task)
    return _output_types[key]


def check_output(method: str, output: object, expected: object) -> None:
    """Raise :class:`WrongOutputError` naming the method, what it returned and the task's
    output type ``expected`` (otherwise the first metric fails with an AttributeError of its
    own). An ``expected`` that checks nothing (``typing.Any``, a Protocol that is not
    runtime-checkable) passes every output."""
    if expected in (float, complex):  # PEP 484's numeric tower: an int is a float here
        expected = numbers.Real if expected is float else numbers.Complex
    try:  # typing.Any and a Protocol that is not runtime_checkable check nothing
        wrong = isinstance(expected, type) and not isinstance(output, expected)
    except TypeError:
        wrong = False
    if wrong:
        raise WrongOutputError(
            f"method '{method}' returned {type(output).__name__}; the task's output type"
            f" is {expected.__module__}.{expected.__qualname__}"
        )


class DataChangedError(RuntimeError):
    """A dataset's ``load`` returned data that differ from what it returned before a cell
    changed them: it hands out one cached object, so the data cannot be restored."""


def _check_data_unchanged(cell: Cell, result: CellResult) -> None:
    """Fail the cell if its data changed while it ran (its method or a metric wrote into
    them) and drop the cached data, so the next cell loads them afresh."""
    if not _DataCache.hashes or _DataCache.key != cell.data_key:  # nothing it could change
        return
    changed = changed_parts(_DataCache.hashes, _DataCache.data)
    if not changed:
        return
    _DataCache.pristine[cell.data_key] = _DataCache.hashes
    _DataCache.key = None
    more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
    reason = (
        f"method '{cell.method}' or one of its metrics changed the task's data in place"
        f" ({changed[0]}{more}); {READ_ONLY_HINT}"
    )
    if result.status == "failed":
        result.reason = f"{reason}. First error: {result.reason}"
    else:
        result.status, result.reason = "failed", reason
    result.metrics, result.curves = {}, {}


def _load(cell: Cell, registry: Registry, result: CellResult) -> object:
    if _DataCache.key != cell.data_key:
        dataset = registry.get("dataset", cell.task, cell.dataset).cls
        params = validate_params(dataset, cell.dataset_params)
        _DataCache.key = None  # stays invalid if load raises
        seed_everything(cell.dataset_seed)
        tic = time.perf_counter()
        data = dataset(params).load(params, cell.dataset_seed)
        result.seconds["load"] = time.perf_counter() - tic
        described = {k: str(v) for k, v in dataset(params).describe(data).items()}
        read_only(data)
        copied = not fully_covered(data)
        hashes = {} if copied else part_hashes(data)  # hashed once per load
        if differing_paths(_DataCache.pristine.get(cell.data_key, {}), hashes):
            raise DataChangedError(
                f"dataset '{cell.dataset}' returned data that differ from what it returned"
                " before an earlier cell changed them in place: its load hands out one cached"
                " object. Return fresh data (or copies) from load."
            )
        _DataCache.hashes, _DataCache.copied = hashes, copied
        _DataCache.key, _DataCache.data, _DataCache.described = cell.data_key, data, described
    result.described = _DataCache.described
    return _hand_out()


def _hand_out() -> object:
    """The cached data for one cell: the object itself, or a copy where the data are not
    fully covered by the read-only flags and the digest (nesting deeper than
    ``isolation.MAX_DEPTH``, more objects than ``isolation.MAX_PARTS_VISITED``); data that
    cannot be copied are handed out and loaded afresh for the next cell."""
    if not _DataCache.copied:
        return _DataCache.data
    try:
        return copy.deepcopy(_DataCache.data)
    except Exception:  # a lock, a generator, an open file: no copy; the next cell reloads
        _DataCache.key = None
        return _DataCache.data


def _store(result: CellResult, name: str, value: object) -> None:
    """Check and keep one metric's value (:func:`metric_values`)."""
    result.metrics |= metric_values(name, value)
    if isinstance(value, Curve):
        result.curves[name] = value
