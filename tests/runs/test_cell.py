"""A cell cannot change what another cell or metric reads, nor end the run: the loaded data
are read-only and checked after every cell, a method's output is read-only before its
metrics, a wrong output type and a raising metric are named, sys.exit and KeyboardInterrupt
in a cell fail that cell."""

from __future__ import annotations

import functools
import math
import time
import types
from collections import deque
from dataclasses import dataclass

import numpy as np
import psutil
import pytest
import toy_plugin
from helpers import run_within
from toy_plugin import Draws

from harness import Dataset, Method, Metric, hookimpl
from harness.components import Curve
from harness.errors import PluginError
from harness.plugins.readonly import changed_parts, part_hashes, read_only
from harness.plugins.registry import build_registry
from harness.plugins.testing import run_checks
from harness.runs.cell import execute_cell
from harness.runs.executors.local import LocalExecutor
from harness.suites.loading import load_suite

SUITE = """
name: protect
seeds: [0]
runs:
  - task: toy
    datasets: [noise]
    methods: [{first}, mean]
    metrics: [{metrics}]
"""


class Zeroing(Method):
    """Writes zeros into the data it was given (the bug under test).

    Source: test fixture.
    """

    name = "zeroing"
    task = "toy"

    def run(self, data, params: Method.Params, seed: int) -> float:
        data.y[:] = 0.0
        return 0.0


class Sneaky(Method):
    """Makes the data writable again, then writes into them (only the digest sees it).

    Source: test fixture.
    """

    name = "sneaky"
    task = "toy"

    def run(self, data, params: Method.Params, seed: int) -> float:
        data.y.flags.writeable = True
        data.y[:] = 0.0
        return 0.0


class WrongType(Method):
    """Returns a string where the toy task's output is a number.

    Source: test fixture.
    """

    name = "wrong-type"
    task = "toy"

    def run(self, data, params: Method.Params, seed: int) -> float:
        return "0.5"  # type: ignore[return-value]


class Dividing(Metric):
    """Divides by zero.

    Source: test fixture.
    """

    name = "dividing"
    task = "toy"

    def compute(self, data, output: float) -> float:
        return 1.0 / (len(data.y) - len(data.y))


class Exiting(Method):
    """Calls sys.exit(0), as a library's command-line entry point would.

    Source: test fixture.
    """

    name = "exiting"
    task = "toy"

    def run(self, data, params: Method.Params, seed: int) -> float:
        raise SystemExit(0)


class Interrupting(Method):
    """Raises KeyboardInterrupt itself.

    Source: test fixture.
    """

    name = "interrupting"
    task = "toy"

    def run(self, data, params: Method.Params, seed: int) -> float:
        raise KeyboardInterrupt


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise ValueError("no str")


class RaisingUnprintable(Method):
    """Raises an exception whose ``__str__`` raises.

    Source: test fixture.
    """

    name = "raising-unprintable"
    task = "toy"

    def run(self, data, params: Method.Params, seed: int) -> float:
        raise UnprintableError


class Spawning(Method):
    """Starts a subprocess that outlives it, writes its pid to ``pid_file``, then hangs.

    Source: test fixture.
    """

    name = "spawning"
    task = "toy"
    test_params = {"pid_file": ""}  # noqa: RUF012 - check-plugin: no subprocess

    @dataclass
    class Params:
        pid_file: str = ""

    def run(self, data, params: Params, seed: int) -> float:
        if params.pid_file:
            import subprocess
            import sys
            import time
            from pathlib import Path

            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
            orphan = f"{sys.executable} -c 'import time; time.sleep(121)' >/dev/null 2>&1 & echo $!"
            shell = subprocess.run(orphan, shell=True, capture_output=True, text=True)
            pids = f"{child.pid} {shell.stdout.strip()}"  # the second one's parent has exited
            Path(params.pid_file).write_text(pids)
            time.sleep(120)
        return 0.0


class Plugin:
    @hookimpl
    def harness_datasets(self):
        return [Cached]

    @hookimpl
    def harness_methods(self):
        return [Zeroing, Sneaky, WrongType, Exiting, RaisingUnprintable, Spawning]

    @hookimpl
    def harness_metrics(self):
        return [Dividing]


class InterruptingPlugin:
    @hookimpl
    def harness_methods(self):
        return [Interrupting]


@pytest.fixture
def registry():
    plugins = {"toy": toy_plugin, "meddler": Plugin(), "interrupter": InterruptingPlugin()}
    return build_registry(plugins, entry_points=False)


def _results(registry, write_suite, first, metrics="abs-error, stats"):
    cells = load_suite(write_suite(SUITE.format(first=first, metrics=metrics)), registry).cells
    out = {}
    LocalExecutor(registry, 1).run(cells, lambda c, r: out.__setitem__(c.method, r))
    return out


def test_a_method_writing_into_the_data_fails_and_the_next_cell_reads_them_intact(
    registry, write_suite
):
    results = _results(registry, write_suite, "zeroing")
    assert results["zeroing"].status == "failed"
    assert results["zeroing"].reason.startswith("ValueError: assignment destination is read-only")
    assert "copy an array before changing it" in results["zeroing"].reason
    clean = _results(registry, write_suite, "zeroing", metrics="stats")  # resumed nothing:
    assert results["mean"].metrics["abs-error"] != 0.0  # new executor, same data
    assert results["mean"].metrics == _results(registry, write_suite, "mean")["mean"].metrics
    assert clean["mean"].metrics["stats.max"] > 0  # stats read the data, not zeros


def test_a_write_the_flag_does_not_stop_is_caught_by_the_digest(registry, write_suite):
    results = _results(registry, write_suite, "sneaky")
    assert results["sneaky"].status == "failed"
    assert "changed the task's data in place (data.y)" in results["sneaky"].reason
    assert results["sneaky"].metrics == {}
    honest = _results(registry, write_suite, "mean")["mean"]
    assert results["mean"].status == "ok" and results["mean"].metrics == honest.metrics


def test_read_only_and_digest_reach_nested_arrays():
    @dataclass
    class Nested:
        parts: tuple
        table: dict

    data = Nested((np.zeros(3), [np.ones(2)]), {"w": np.arange(4.0)})
    before = part_hashes(data)
    read_only(data)
    for array in (data.parts[0], data.parts[1][0], data.table["w"]):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 7.0
    data.table["w"].flags.writeable = True
    data.table["w"][0] = 7.0
    assert changed_parts(before, data) == ["data.table['w']"]


def _deep(levels: int, leaf):
    for _ in range(levels):
        leaf = {"next": leaf}
    return leaf


def _writes():
    """(data, a write into it) pairs that a breaker got past the first version (the flag
    and a digest of arrays in dataclasses and containers to 5 levels)."""
    import types

    import pandas as pd
    import scipy.sparse
    import torch

    class Holder:
        def __init__(self):
            self.arr = np.arange(5.0)

    holder, space = Holder(), types.SimpleNamespace(arr=np.arange(5.0))
    frame, floats = pd.DataFrame({"a": [1.0, 2.0]}), [1.0, 2.0, 3.0]
    deep, sparse = _deep(8, np.arange(3.0)), scipy.sparse.csr_matrix(np.eye(3))
    half = torch.ones(4, dtype=torch.bfloat16)
    boxed = np.empty(1, dtype=object)
    boxed[0] = [1, 2]

    def write_deep():
        leaf = deep
        for _ in range(8):
            leaf = leaf["next"]
        leaf.flags.writeable = True
        leaf[:] = 0

    def write_sparse():
        sparse.data.flags.writeable = True
        sparse.data[:] = 0

    def write_holder():
        holder.arr.flags.writeable = True
        holder.arr[:] = 0

    return {
        "plain object": (holder, write_holder),
        "SimpleNamespace": (space, lambda: setattr(space, "arr", np.zeros(5))),
        "DataFrame column": (frame, lambda: frame.__setitem__("a", 0.0)),
        "list of floats": (floats, lambda: floats.__setitem__(0, 0.0)),
        "8 levels down": (deep, write_deep),
        "scipy sparse": (sparse, write_sparse),
        "bfloat16 tensor": (half, lambda: half.mul_(0)),
        "object array": (boxed, lambda: boxed[0].append(3)),
    }


@pytest.mark.parametrize("case", list(_writes()))
def test_the_digest_sees_writes_the_flag_cannot_stop(case):
    data, write = _writes()[case]
    read_only(data)
    before = part_hashes(data)
    assert changed_parts(before, data) == []  # stable when nothing is written
    write()
    assert changed_parts(before, data), case


class Cached(Dataset):
    """Hands out one cached object from load, so a cell's write cannot be undone.

    Source: test fixture.
    """

    name = "cached"
    task = "toy"

    def load(self, params: Dataset.Params, seed: int) -> Draws:
        return _cached_draws()


@functools.cache
def _cached_draws() -> Draws:
    return Draws(np.arange(1.0, 6.0))


def test_a_dataset_that_hands_out_a_cached_object_fails_after_a_write_instead_of_serving_it(
    registry, write_suite
):
    """A breaker's case: the write was caught, but the reload returned the same changed
    object and its digest became the new reference; the next cell was ok on zeros."""
    text = SUITE.format(first="sneaky", metrics="abs-error").replace("[noise]", "[cached]")
    cells = load_suite(write_suite(text), registry).cells
    out = {}
    LocalExecutor(registry, 1).run(cells, lambda c, r: out.__setitem__(c.method, r))
    assert out["sneaky"].status == "failed"
    assert out["mean"].status == "failed"
    assert "returned data that differ from what it returned before" in out["mean"].reason
    _cached_draws.cache_clear()


def test_a_wrong_output_type_names_the_method_not_the_first_metric(registry, write_suite):
    reason = _results(registry, write_suite, "wrong-type")["wrong-type"].reason
    assert reason == "method 'wrong-type' returned str; the task's output type is numbers.Real"


def test_a_raising_metric_is_named_in_the_reason(registry, write_suite):
    reason = _results(registry, write_suite, "mean", metrics="abs-error, dividing")["mean"].reason
    assert reason == "metric 'dividing' raised ZeroDivisionError: float division by zero"


def test_a_params_value_without_annotation_is_refused_naming_the_fix():
    class Unannotated(Method):
        """Its param has no type annotation.

        Source: test fixture.
        """

        name = "unannotated"
        task = "toy"

        @dataclass
        class Params:
            regressor: str = "ridge"
            strength = 1.0

        def run(self, data, params, seed: int) -> float:
            return 0.0

    class Broken:
        @hookimpl
        def harness_methods(self):
            return [Unannotated]

    registry = build_registry({"toy": toy_plugin, "broken": Broken()}, entry_points=False)
    fault = registry.broken["broken"]
    assert "Params.strength = 1.0 has no type annotation" in fault
    assert "strength: float = 1.0" in fault
    with pytest.raises(PluginError, match="no type annotation"):
        build_registry({"toy": toy_plugin, "broken": Broken()}, entry_points=False, strict=True)


def test_check_plugin_fails_a_plugin_that_contributes_nothing():
    class Undecorated:
        def harness_methods(self):  # no @hookimpl: pluggy never calls it
            return [Zeroing]

    registry = build_registry({"toy": toy_plugin, "empty": Undecorated()}, entry_points=False)
    [(check, outcome, message)] = run_checks("empty", registry)
    assert (check, outcome) == ("contributes-components", "failed")
    assert "@hookimpl" in message
    with pytest.raises(Exception, match="contributing nothing: empty"):
        registry.get("method", "toy", "zeroing")


def test_check_plugin_names_a_method_that_writes_into_its_data():
    registry = build_registry({"toy": toy_plugin, "meddler": Plugin()}, entry_points=False)
    messages = {c: m for c, outcome, m in run_checks("meddler", registry) if outcome == "failed"}
    assert any("read-only" in m and "copy an array" in m for m in messages.values()), messages
    sneaky = messages["sneaky-check_run_returns_output_type"]
    assert "[run-keeps-data]" in sneaky
    assert messages["exiting-check_run_returns_output_type"].startswith("SystemExit: 0")


@pytest.mark.parametrize(
    ("method", "reason"),
    [
        ("exiting", "SystemExit: 0 (the cell called sys.exit; raise an exception or harness.Skip)"),
        (
            "interrupting",
            "KeyboardInterrupt (raised by the cell's code: Ctrl-C stops the driver, not a cell)",
        ),
        ("raising-unprintable", "UnprintableError: <str() of this exception raised ValueError>"),
    ],
)
def test_a_cell_that_exits_or_interrupts_fails_alone_in_a_worker(
    registry, write_suite, method, reason
):
    """Before: the worker died ('out of memory or a crash in C code?', no traceback)."""
    results = _results(registry, write_suite, method)
    assert (results[method].status, results[method].reason) == ("failed", reason)
    assert method in results[method].error or "Traceback" in results[method].error
    assert results["mean"].status == "ok"


def test_in_the_drivers_process_sys_exit_fails_the_cell_and_ctrl_c_stops_the_run(
    registry, write_suite
):
    """-j 0: a cell's sys.exit is a failed cell (before: harness run exited 0 mid-suite);
    a KeyboardInterrupt is the user's Ctrl-C and ends the run."""
    cells = {
        c.method: c
        for first in ("exiting", "interrupting")
        for c in load_suite(
            write_suite(SUITE.format(first=first, metrics="abs-error")), registry
        ).cells
    }
    assert execute_cell(cells["exiting"], registry).reason.startswith("SystemExit: 0")
    with pytest.raises(KeyboardInterrupt):
        execute_cell(cells["interrupting"], registry)


def test_a_timed_out_cell_takes_the_processes_it_started_with_it(registry, write_suite, tmp_path):
    """Before: the cell's subprocess outlived the kill (ppid 1), holding stdout open."""

    pid_file = tmp_path / "pid"
    suite = write_suite(
        f"""
        name: spawn
        timeout: 3s
        runs:
          - task: toy
            datasets: [noise]
            methods: [{{name: spawning, params: {{pid_file: "{pid_file}"}}}}]
            metrics: [abs-error]
        """
    )
    out = {}
    cells = load_suite(suite, registry).cells
    LocalExecutor(registry, 1).run(cells, lambda c, r: out.__setitem__(c.method, r))
    assert out["spawning"].status == "timeout"
    deadline = time.monotonic() + 5
    for pid in map(int, pid_file.read_text().split()):
        while psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline, f"the cell's subprocess {pid} is still running"
            time.sleep(0.1)


def test_an_output_annotation_that_checks_nothing_fails_no_cell():
    """``output: Any`` (copied from the base class) or a Protocol that is not
    runtime-checkable: isinstance raised TypeError and failed every cell of the task."""
    import typing

    from harness.runs.cell import WrongOutputError, check_output

    class Predictions(typing.Protocol):  # not runtime_checkable
        y_pred: typing.Any

    for annotation in (typing.Any, Predictions):
        check_output("mean", object(), annotation)
    with pytest.raises(WrongOutputError, match="method 'mean' returned object"):
        check_output("mean", object(), float)  # the same call does check a real type


def test_params_may_hold_descriptors_and_inherit_a_plain_mixins_constants():
    """A breaker's cases the unannotated-value check refused: a cached_property, and a
    constant of a base that is not a dataclass."""

    class Choices:
        CHOICES = ("x", "y")

    @dataclass
    class Params(Choices):
        scale: float = 1.0

        @functools.cached_property
        def double(self) -> float:
            return 2 * self.scale

    from harness.components import no_unannotated_attributes, params_fields

    no_unannotated_attributes(Params)  # raised TypeError for both before
    assert list(params_fields(Params)) == ["scale"]


class Slotted:
    __slots__ = ("arr",)

    def __init__(self, arr):
        self.arr = arr


def _nested(levels, leaf):
    for _ in range(levels):
        leaf = {"next": leaf}
    return leaf


def _dig(data, kind):
    """The array ``[1, 2, 3]`` inside ``data`` of ``kind`` (see :class:`Holder`)."""
    if kind == "slots":
        return data.arr
    if kind == "deque":
        return data[0]
    if kind == "mapping-proxy":
        return data["arr"]
    if kind == "long-list":
        return data[-1]
    for _ in range({"deep-14": 14, "deep-40": 40}[kind]):
        data = data["next"]
    return data


class Holder(Dataset):
    """The array [1, 2, 3] held in a container of ``kind``: a ``__slots__`` object, a
    deque, a MappingProxyType, the end of a list of 100,001 arrays, 14 or 40 levels down.

    Source: test fixture.
    """

    name = "holder"
    task = "toy"

    @dataclass
    class Params:
        kind: str = "slots"

    def load(self, params: Params, seed: int):
        arr = np.arange(1.0, 4.0)
        return {
            "slots": lambda: Slotted(arr),
            "deque": lambda: deque([arr]),
            "mapping-proxy": lambda: types.MappingProxyType({"arr": arr}),
            "long-list": lambda: [np.zeros(1) for _ in range(100_001)] + [arr],
            "deep-14": lambda: _nested(14, arr),
            "deep-40": lambda: _nested(40, arr),
        }[params.kind]()


class Scribble(Method):
    """Makes the array writable and zeroes it (a write the read-only flag cannot stop).

    Source: test fixture.
    """

    name = "scribble"
    task = "toy"

    @dataclass
    class Params:
        kind: str = "slots"

    def run(self, data, params: Params, seed: int) -> float:
        arr = _dig(data, params.kind)
        arr.flags.writeable = True
        arr[:] = 0.0
        return 0.0


class Read(Method):
    """Returns the array's first value (1.0 in data nobody changed).

    Source: test fixture.
    """

    name = "read"
    task = "toy"

    @dataclass
    class Params:
        kind: str = "slots"

    def run(self, data, params: Params, seed: int) -> float:
        return float(_dig(data, params.kind)[0])


class Output(Metric):
    """The method's output.

    Source: test fixture.
    """

    name = "output"
    task = "toy"

    def compute(self, data, output: float) -> float:
        return output


class Containers:
    @hookimpl
    def harness_datasets(self):
        return [Holder]

    @hookimpl
    def harness_methods(self):
        return [Scribble, Read]

    @hookimpl
    def harness_metrics(self):
        return [Output]


KINDS = ["slots", "deque", "mapping-proxy", "long-list", "deep-14", "deep-40"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_write_into_shared_data_in_any_container_never_reaches_the_next_cell(write_suite, kind):
    """Before: the array in a __slots__ object, a deque, a MappingProxyType, after 100,000
    others or 14 levels down was neither read-only nor hashed: the reading cell, run next
    on the same data, was logged ok with 0.0."""
    registry = build_registry({"toy": toy_plugin, "containers": Containers()}, entry_points=False)
    methods = (
        f"{{name: scribble, params: {{kind: {kind}}}}}, {{name: read, params: {{kind: {kind}}}}}"
    )
    text = f"""
    name: containers
    seeds: [0]
    runs:
      - task: toy
        datasets: [{{name: holder, params: {{kind: {kind}}}}}]
        methods: [{methods}]
        metrics: [output]
    """
    cells = load_suite(write_suite(text), registry).cells
    assert [c.method for c in cells] == ["scribble", "read"]  # one data key: one worker
    results = run_within(LocalExecutor(registry, 1), cells)
    read = results[cells[1].cell_hash]
    assert (read.status, read.metrics) == ("ok", {"output": 1.0})
    scribble = results[cells[0].cell_hash]
    assert scribble.status == "failed" or scribble.metrics == {"output": 0.0}


@pytest.mark.parametrize(
    ("value", "shape", "reason"),
    [
        (".nan", "scalar", "metric 'bad-value' returned nan"),
        (".inf", "scalar", "metric 'bad-value' returned inf"),
        ("-.inf", "dict", "metric 'bad-value.broken' returned -inf"),
        (".nan", "curve", "metric 'bad-value' returned a curve with nan at step 2"),
    ],
)
def test_a_non_finite_metric_fails_the_cell(
    registry, write_suite, monkeypatch, value, shape, reason
):
    """A NaN param is refused by the suite itself (it equals no value), so a NaN comes from
    the metric: ``bad-value`` returns NaN where its param says 1.0."""
    import toy_plugin

    if value == ".nan":
        value, real = "1.0", toy_plugin.BadValue.compute

        def nan_for_one(self, data, output):
            if shape == "scalar":
                return np.nan
            curve = real(self, data, output)  # [0.5, 1.0, 1.0]: NaN from the second point
            return Curve(np.where(curve.values == 1.0, np.nan, curve.values))

        monkeypatch.setattr(toy_plugin.BadValue, "compute", nan_for_one)
    suite = load_suite(
        write_suite(f"""
        name: nan
        runs:
          - task: toy
            datasets: [noise]
            methods: [mean]
            metrics: [abs-error, {{name: bad-value, params: {{value: {value}, shape: {shape}}}}}]
        """),
        registry,
    )
    result = execute_cell(suite.cells[0], registry)
    assert result.status == "failed"  # before the fix: "ok", and inf stored as 1.797e308
    assert result.reason == reason
    assert all(math.isfinite(v) for v in result.metrics.values())
