"""Executes cells: seeding, per-cell timeouts, failure isolation and worker processes.

:func:`execute_cell` runs one cell (load, run, every metric) and returns a picklable
:class:`CellResult`; it never raises for a failing cell. :class:`LocalExecutor` runs cells
in ``n_jobs`` worker processes (forked, so the registry travels with them), kills a worker
whose cell passes its timeout and starts a fresh one, and hands each result to a callback
in the driver process, which is the only MLflow writer.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import numbers
import os
import random
import signal
import sys
import threading
import time
import traceback
import types
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.components import Curve, Skip, validate_params
from harness.registry import Registry
from harness.suite import Cell

__all__ = [
    "CellResult",
    "NonFiniteMetricError",
    "SuiteOutcome",
    "Terminated",
    "changed_parts",
    "execute_cell",
    "part_hashes",
    "planned_states",
    "raise_on_sigterm",
    "read_only",
    "rerun_reason",
    "rerun_reasons",
    "run_suite",
    "seed_everything",
    "shared_parts",
]


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
    data: Any = None
    hashes: dict[str, str] = {}  # noqa: RUF012 - part_hashes(data) when loaded, replaced
    #: data key -> its part_hashes before a cell changed the data in place
    pristine: dict[str, dict[str, str]] = {}  # noqa: RUF012
    described: dict[str, str] = {}  # noqa: RUF012 - replaced, never mutated


def execute_cell(cell: Cell, registry: Registry) -> CellResult:
    """Run one cell: load (or reuse) the data, run the method, compute every metric.

    A ``Skip`` from load or run gives status ``skipped``; any other exception gives
    ``failed`` with its traceback; a ``Skip`` from a metric leaves that metric out.
    """
    result = CellResult(cell.cell_hash, "ok", start_ms=int(time.time() * 1000))
    with warnings.catch_warnings(record=True) as caught:  # kept with the cell, not printed
        warnings.simplefilter("always")
        _execute(cell, registry, result)
    counts = Counter(
        f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})"
        for w in caught
        if not str(w.message).startswith(_OURS)
    )
    result.warnings = [f"{n} x {text}" for text, n in counts.items()]
    result.end_ms = int(time.time() * 1000)
    return result


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
        _check_output(cell, registry, output)
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
    except (NonFiniteMetricError, WrongOutputError) as err:
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


#: Appended to the reason of a cell that wrote into a read-only array.
READ_ONLY_HINT = (
    "the task's data and a method's output are read-only, since later cells and metrics"
    " read the same arrays: copy an array before changing it, e.g. y = data.y_train.copy()"
)


class WrongOutputError(TypeError):
    """A method's ``run`` returned something other than its task's output type (the
    annotation of its metrics' ``output`` argument, :meth:`Registry.output_type`)."""


_output_types: dict[tuple[int, str], type | None] = {}


def _check_output(cell: Cell, registry: Registry, output: Any) -> None:
    """Raise :class:`WrongOutputError` naming the method, what it returned and the task's
    output type (otherwise the first metric fails with an AttributeError of its own)."""
    key = (id(registry), cell.task)
    if key not in _output_types:
        _output_types[key] = registry.output_type(cell.task)
    expected = _output_types[key]
    if expected in (float, complex):  # PEP 484's numeric tower: an int is a float here
        expected = numbers.Real if expected is float else numbers.Complex
    try:  # typing.Any and a Protocol that is not runtime_checkable check nothing
        wrong = isinstance(expected, type) and not isinstance(output, expected)
    except TypeError:
        wrong = False
    if wrong:
        raise WrongOutputError(
            f"method '{cell.method}' returned {type(output).__name__}; the task's output type"
            f" is {expected.__module__}.{expected.__qualname__}"
        )


#: Python objects :func:`shared_parts` visits at most in one data object.
MAX_PARTS_VISITED = 100_000

_SCALARS = (str, bytes, int, float, complex, bool)
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def shared_parts(obj: Any) -> dict[str, Any]:
    """The mutable values in ``obj`` that a cell could change in place, by path
    (``data.y_test``, ``data.table['w']``, ``data.parts[1]``): NumPy arrays, torch tensors,
    pandas objects and lists of scalars, found in ``obj`` itself, its dataclass fields,
    tuples, lists, dict values and the attributes of plain objects (a ``SimpleNamespace``,
    a scipy sparse matrix), at most 12 levels down and :data:`MAX_PARTS_VISITED` objects,
    each once (at the first path that reaches it)."""
    parts: dict[str, Any] = {}
    seen: set[int] = set()
    torch = sys.modules.get("torch")

    def walk(value: Any, path: str, depth: int) -> None:
        if value is None or isinstance(value, _SCALARS + _OPAQUE) or id(value) in seen:
            return
        if depth > 12 or len(seen) >= MAX_PARTS_VISITED:
            return
        seen.add(id(value))
        children: Iterable[tuple[str, Any]]
        if isinstance(value, np.ndarray):
            if value.dtype != object:
                parts[path] = value
                return
            children = ((f"[{i}]", v) for i, v in enumerate(value.ravel()))  # what it holds
        elif (torch is not None and isinstance(value, torch.Tensor)) or _is_pandas(value):
            parts[path] = value
            return
        elif isinstance(value, dict):
            children = [(f"[{k!r}]", v) for k, v in value.items()]
        elif isinstance(value, list) and all(isinstance(x, _SCALARS) for x in value):
            parts[path] = value
            return
        elif isinstance(value, (list, tuple)):
            children = ((f"[{i}]", v) for i, v in enumerate(value))
        elif dataclasses.is_dataclass(value):
            children = [
                (f".{f.name}", getattr(value, f.name, None)) for f in dataclasses.fields(value)
            ]
        elif hasattr(value, "__dict__"):
            children = [(f".{k}", v) for k, v in vars(value).items()]
        else:
            return
        for key, child in children:
            walk(child, path + key, depth + 1)

    walk(obj, "data", 0)
    return parts


def _is_pandas(value: Any) -> bool:
    return type(value).__module__.startswith("pandas")


def read_only(obj: Any) -> None:
    """Mark every NumPy array in ``obj`` (see :func:`shared_parts`) read-only, so that
    writing into one raises ``ValueError: assignment destination is read-only`` where it
    is done.

    The runner does this to each loaded dataset, which consecutive cells of a worker share,
    and to each method's output before its metrics read it. Torch tensors, pandas objects
    and lists cannot be marked; :func:`changed_parts` finds writes into them.
    """
    for part in shared_parts(obj).values():
        if isinstance(part, np.ndarray):
            part.flags.writeable = False


def _part_hash(part: Any) -> str:
    """SHA-1 over a part's type, shape and contents ("?" where it cannot be read here, a
    sparse tensor, say: such a part counts as unchanged)."""
    digest = hashlib.sha1(usedforsecurity=False)
    torch = sys.modules.get("torch")
    try:
        if isinstance(part, np.ndarray):
            digest.update(f"{part.dtype.str}{part.shape}".encode())
            digest.update(np.ascontiguousarray(part).view(np.uint8).data)
        elif torch is not None and isinstance(part, torch.Tensor):
            flat = part.detach().cpu().contiguous().reshape(-1)
            digest.update(f"{part.dtype}{tuple(part.shape)}".encode())
            digest.update(flat.view(torch.uint8).numpy().data)  # any dtype, bfloat16 too
        elif isinstance(part, list):
            digest.update(repr(part).encode())
        else:  # pandas: values, index and column labels
            import pandas as pd

            digest.update(repr(getattr(part, "columns", None)).encode())
            digest.update(pd.util.hash_pandas_object(part, index=True).to_numpy().data)
    except Exception:
        return "?"
    return digest.hexdigest()


def part_hashes(obj: Any) -> dict[str, str]:
    """``{path: hash}`` of every part of ``obj`` (:func:`shared_parts`)."""
    return {path: _part_hash(part) for path, part in shared_parts(obj).items()}


def changed_parts(before: Mapping[str, str], obj: Any) -> list[str]:
    """The paths of ``before`` (:func:`part_hashes` taken earlier) whose part is now gone,
    replaced or changed in ``obj``. Parts added since (a cache filled lazily) do not count."""
    return _differ(before, part_hashes(obj)) if before else []


def _differ(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    return [path for path, digest in before.items() if now.get(path, "gone") != digest]


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


def _load(cell: Cell, registry: Registry, result: CellResult) -> Any:
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
        hashes = part_hashes(data)  # hashed once per load
        if _differ(_DataCache.pristine.get(cell.data_key, {}), hashes):
            raise DataChangedError(
                f"dataset '{cell.dataset}' returned data that differ from what it returned"
                " before an earlier cell changed them in place: its load hands out one cached"
                " object. Return fresh data (or copies) from load."
            )
        _DataCache.hashes = hashes
        _DataCache.key, _DataCache.data, _DataCache.described = cell.data_key, data, described
    result.described = _DataCache.described
    return _DataCache.data


class NonFiniteMetricError(ValueError):
    """A metric returned NaN or +-inf: the cell is recorded as ``failed`` with this message
    (a metric that does not apply raises :class:`harness.Skip` instead)."""


def _finite(name: str, value: Any) -> float:
    # float() would take "2.0", np.array("2.0") and the real part of a complex number
    kind = getattr(getattr(value, "dtype", None), "kind", None)  # NumPy; torch has none
    if isinstance(value, (str, bytes, complex)) or (kind is not None and kind not in "biuf"):
        raise NonFiniteMetricError(
            f"metric '{name}' returned {value!r} ({type(value).__name__}), not a real number"
        )
    number = float(value)
    if not np.isfinite(number):
        raise NonFiniteMetricError(f"metric '{name}' returned {number}")
    return number


def _store(result: CellResult, name: str, value: Any) -> None:
    """Check and keep one metric's value; raises :class:`NonFiniteMetricError`."""
    if isinstance(value, Curve):
        bad = ~np.isfinite(value.values)
        if bad.any():
            step = int(value.steps[np.argmax(bad)])
            raise NonFiniteMetricError(
                f"metric '{name}' returned a curve with {value.values[bad][0]} at step {step}"
            )
        result.curves[name] = value
        result.metrics[name] = value.final
    elif isinstance(value, dict):
        if not value:
            raise NonFiniteMetricError(f"metric '{name}' returned an empty dict: no value")
        result.metrics |= {f"{name}.{k}": _finite(f"{name}.{k}", v) for k, v in value.items()}
    else:
        result.metrics[name] = _finite(name, value)


# -- executors (moved to harness.executors) --------------------------------------------

_EXECUTORS = {"LocalExecutor", "DaskExecutor", "InProcessExecutor"}

#: Called with the exception of a failing cell inside its ``except`` block (``--pdb``).
on_cell_error: Callable[[BaseException], None] | None = None


def __getattr__(name: str) -> Any:
    """``from harness.runner import LocalExecutor`` still works (the executors live in
    :mod:`harness.executors`, which imports this module)."""
    if name in _EXECUTORS:
        from harness import executors

        return getattr(executors, name)
    raise AttributeError(f"module 'harness.runner' has no attribute '{name}'")


class Terminated(KeyboardInterrupt):
    """SIGTERM (what ``timeout``, ``kill`` and batch schedulers send), handled like Ctrl-C:
    the parent run is marked KILLED, finished cells are kept; ``harness`` exits 143."""

    signum = signal.SIGTERM


def raise_on_sigterm() -> None:
    """Make SIGTERM raise :class:`Terminated` in the main thread (call once, in the CLI)."""

    def handler(signum: int, frame: Any) -> None:
        raise Terminated

    signal.signal(signal.SIGTERM, handler)


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM until the block ends, then raise them (main thread only;
    else a no-op): a cell is logged whole or not at all."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {
        signum: signal.signal(signum, lambda signum, frame: caught.append(signum))
        for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if signal.SIGTERM in caught:
        if not callable(previous[signal.SIGTERM]):  # default action: die as asked, now
            os.kill(os.getpid(), signal.SIGTERM)
        raise Terminated
    if caught:
        raise KeyboardInterrupt


def _refused(cell: Cell, result: CellResult, err: Exception) -> CellResult:
    """The cell as ``failed`` when the tracking store refused its results (MLflow's limits:
    a metric key over 250 characters, a param value over 6,000, ...)."""
    reason = f"the tracking store refused this cell's results: {type(err).__name__}: {err}"
    return CellResult(
        cell.cell_hash,
        "failed",
        reason=reason[:2000],
        error=reason,
        seconds=result.seconds,
        start_ms=result.start_ms,
        end_ms=result.end_ms,
    )


@dataclass
class SuiteOutcome:
    """What :func:`run_suite` did: the experiments and parent runs it wrote to, the cells it
    ran, the failed or timed-out ones, and why cells that have run before ran again.

    ``experiments`` maps each experiment name of the suite (its own and its included
    suites', see :meth:`harness.suite.Suite.experiments`) to ``(experiment_id,
    parent_run_id)``; ``experiment_id`` and ``parent_run_id`` are the first of them.
    """

    experiment_id: str
    parent_run_id: str
    ran: int = 0
    problems: list[tuple[Cell, CellResult]] = field(default_factory=list)
    rerun_reasons: dict[str, int] = field(default_factory=dict)
    experiments: dict[str, tuple[str, str]] = field(default_factory=dict)


def rerun_reasons(cells: Iterable[Cell], previous: Mapping[str, Mapping[str, str]]) -> Counter:
    """Why each cell to run has no usable result: ``{reason: number of cells}``.

    :param cells: the cells about to run.
    :param previous: ``{config_hash: tags of the latest run of that configuration}``
        (:meth:`harness.tracking.Tracker.latest_by_config`).
    :returns: reasons such as ``"code of plugin fair-regression changed"``, ``"metrics
        changed"``, ``"last run failed"``, ``"forced"`` or ``"new"``.
    """
    return Counter(rerun_reason(cell, previous) for cell in cells)


def rerun_reason(cell: Cell, previous: Mapping[str, Mapping[str, str]]) -> str:
    """Why one cell has no usable result (one of :func:`rerun_reasons`' reasons)."""
    tags = previous.get(cell.config_hash)
    if tags is None:
        return "new"
    changed = [p for p, fp in cell.code if tags.get(f"harness.code.{p}") not in (None, fp)]
    if changed:
        return f"code of plugin {', '.join(changed)} changed"
    if tags.get("harness.metrics_hash") not in (None, cell.metrics_hash):
        return "metrics changed"
    if tags.get("harness.cell_hash") != cell.cell_hash:
        return "plugin version or code changed"
    if tags.get("harness.status") in ("failed", "timeout"):
        return f"last run {tags['harness.status']}"
    return "forced"


def planned_states(suite: Any, tracker: Any | None, force: bool = False) -> dict[str, str]:
    """What :func:`run_suite` would do with each cell, read from the store without writing
    to it (``harness run --dry-run``).

    :param suite: a :class:`harness.suite.Suite`.
    :param tracker: a :class:`harness.tracking.Tracker`, or ``None`` when the store does not
        exist yet (every cell is then new).
    :param force: as for :func:`run_suite`.
    :returns: ``{cell_hash: state}``: ``"done"`` for a cell a run would resume from the
        store (docs/design.md "Resume"), else the reason it would run (as in the run's
        "Cells to run" line: ``"never run with these settings"``, ``"code of plugin X
        changed"``, ``"last run failed"``, ``"--force"`` ...).
    :raises StoreError: where a run would be refused before any cell: an experiment of the
        suite is deleted, or another live ``harness run`` is running the suite (the same
        message a run gives).
    """
    from harness.errors import StoreError

    states: dict[str, str] = {}
    for name, members in suite.experiments().items():
        experiment = None
        if tracker is not None:
            experiment = tracker.experiment_id(name, refuse_deleted=True)
        for other in tracker.running_suites(experiment) if experiment is not None else []:
            if other.alive:
                raise StoreError(
                    tracker.already_running(
                        other,
                        "A run started now would be refused. Wait for it to finish (or stop"
                        " it), then run again.",
                        name,
                    )
                )
        done: set[str] = set()
        previous: Mapping[str, Mapping[str, str]] = {}
        if experiment is not None and not force:
            done = tracker.finished_hashes(experiment)
            previous = tracker.latest_by_config(experiment)
        for cell in members:
            if force:
                states[cell.cell_hash] = "--force"
            elif cell.cell_hash in done:
                states[cell.cell_hash] = "done"
            else:
                reason = rerun_reason(cell, previous)
                states[cell.cell_hash] = SHOWN_REASONS.get(reason, reason)
    return states


# How a reason of :func:`rerun_reasons` reads in the run's "Cells to run" line.
SHOWN_REASONS = {"new": "never run with these settings"}


def _mark_killed(tracker: Any, parents: dict[str, tuple[str, str]], heartbeats: list) -> None:
    """Ctrl-C or SIGTERM: stop the heartbeats and mark every parent run opened KILLED."""
    for beat in heartbeats:
        beat.stop()
    with _sigint_deferred():
        for _, parent in parents.values():
            with contextlib.suppress(Exception):
                tracker.end_suite(parent, "KILLED")


def run_suite(
    suite: Any,
    registry: Registry,
    tracker: Any,
    *,
    executor: Any = None,
    force: bool = False,
    fail_fast: bool = False,
    settings: dict[str, Any] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_cell: Callable[[Cell, CellResult], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> SuiteOutcome:
    """Run a suite's cells that have no usable result and log each to MLflow as it ends.

    A cell is done when the latest complete run with its ``cell_hash`` is ``ok`` or
    ``skipped`` (docs/design.md "Resume"); every other cell runs. Before running, parent
    runs of this suite left RUNNING by a dead process are marked KILLED and half-written
    cell runs are deleted (:meth:`harness.tracking.Tracker.reap_dead_suites`).

    :param suite: a :class:`harness.suite.Suite`.
    :param tracker: a :class:`harness.tracking.Tracker` (the only writer).
    :param executor: defaults to ``LocalExecutor(registry, 1)``.
    :param force: run every cell, done or not.
    :param on_start: called with (cells in the suite, cells to run) before running.
    :param on_cell: called after each cell is logged (progress bars).
    :param on_notice: called with one line for each thing the user should know before the
        cells run (runs marked KILLED, why cells run again).
    :raises KeyboardInterrupt: (:class:`Terminated` for SIGTERM) after marking the parent run
        KILLED; logged cells are kept.
    """
    from harness.errors import StoreError
    from harness.executors import LocalExecutor
    from harness.tracking import connection_lost, git_commit

    notice = on_notice or (lambda line: None)
    executor = executor or LocalExecutor(registry, 1)
    cells = suite.cells
    commit = git_commit()
    parents: dict[str, tuple[str, str]] = {}  # experiment name -> (experiment id, parent id)
    todo: list[Cell] = []
    reasons: Counter = Counter()
    try:
        for name, members in suite.experiments().items():
            experiment = tracker.experiment_id(name, create=True)
            for line in tracker.reap_dead_suites(experiment):
                notice(line)
            parent = tracker.start_suite(
                experiment, suite, dict(settings or {}, force=force), commit
            )
            parents[name] = (experiment, parent)
            # Another live run of this suite: refuse (StoreError) before reading what is
            # done, so two runs started at once never run a cell twice.
            tracker.claim_suite(experiment, parent, name)
            done = set() if force else tracker.finished_hashes(experiment)
            mine = [c for c in members if c.cell_hash not in done]
            if mine and not force:
                reasons += rerun_reasons(mine, tracker.latest_by_config(experiment))
            todo += mine
    except StoreError:
        for _, parent in parents.values():  # the runs opened before the refusal
            with contextlib.suppress(Exception):
                tracker.delete_run(parent)
        raise
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM before any cell ran
        _mark_killed(tracker, parents, [])
        raise
    heartbeats: list = []
    try:
        if force:
            reasons = Counter({"--force": len(todo)})
        order = {c.cell_hash: i for i, c in enumerate(cells)}
        todo.sort(key=lambda c: order[c.cell_hash])  # suite order across experiments
        first = next(iter(parents.values()))
        outcome = SuiteOutcome(*first, rerun_reasons=dict(reasons), experiments=parents)
        if on_start:
            on_start(len(cells), len(todo))
        # "12 cell(s): code of plugin X changed; 4 cell(s): never run with these settings",
        # whenever something was done before (a first run of a suite needs no reason).
        if any(r != "new" for r in reasons) or (todo and len(todo) < len(cells)):
            notice(
                "Cells to run: "
                + "; ".join(f"{n} cell(s): {SHOWN_REASONS.get(r, r)}" for r, n in reasons.items())
            )
        where = {c.cell_hash: parents[c.experiment or suite.name] for c in cells}

        def handle(cell: Cell, result: CellResult) -> bool:
            experiment, parent = where[cell.cell_hash]
            with _sigint_deferred():  # a cell is logged whole or not at all
                try:
                    tracker.log_cell(experiment, parent, cell, result, registry.plugins, commit)
                except Exception as err:  # the store refused the results: a failed cell
                    if connection_lost(err):  # not this cell's fault: stop the run, say why
                        raise
                    result = _refused(cell, result, err)
                    tracker.log_cell(experiment, parent, cell, result, registry.plugins, commit)
            outcome.ran += 1
            if result.status in ("failed", "timeout"):
                outcome.problems.append((cell, result))
            if on_cell:
                on_cell(cell, result)
            return fail_fast and bool(outcome.problems)

        heartbeats = [tracker.heartbeat(parent) for _, parent in parents.values()]
        executor.run(todo, handle)
    except KeyboardInterrupt:
        _mark_killed(tracker, parents, heartbeats)
        raise
    for beat in heartbeats:
        beat.stop()
    failed = {where[c.cell_hash] for c, _ in outcome.problems}
    for pair in parents.values():
        tracker.end_suite(pair[1], "FAILED" if pair in failed else "FINISHED")
    return outcome
