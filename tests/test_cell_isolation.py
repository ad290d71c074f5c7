"""A cell cannot change what another cell or metric reads, nor end the run: the loaded data
are read-only and checked after every cell, a method's output is read-only before its
metrics, a wrong output type and a raising metric are named, sys.exit and KeyboardInterrupt
in a cell fail that cell; reordering metrics reruns nothing."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pytest
import toy_plugin

from harness import Method, Metric, hookimpl
from harness.errors import PluginError
from harness.registry import build_registry
from harness.runner import LocalExecutor, data_digest, execute_cell, read_only
from harness.suite import load_suite
from harness.testing import run_checks

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
            Path(params.pid_file).write_text(str(child.pid))
            time.sleep(120)
        return 0.0


class DrawA(Metric):
    """A draw from NumPy's global generator: its value depends on the metrics before it.

    Source: test fixture.
    """

    name = "draw-a"
    task = "toy"

    def compute(self, data, output: float) -> float:
        return float(np.random.random())


class DrawB(DrawA):
    """As draw-a.

    Source: test fixture.
    """

    name = "draw-b"


class Plugin:
    @hookimpl
    def harness_methods(self):
        return [Zeroing, Sneaky, WrongType, Exiting, RaisingUnprintable, Spawning]

    @hookimpl
    def harness_metrics(self):
        return [Dividing, DrawA, DrawB]


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
    assert "changed the task's data in place" in results["sneaky"].reason
    assert results["sneaky"].metrics == {}
    honest = _results(registry, write_suite, "mean")["mean"]
    assert results["mean"].status == "ok" and results["mean"].metrics == honest.metrics


def test_read_only_and_digest_reach_nested_arrays():
    @dataclass
    class Nested:
        parts: tuple
        table: dict

    data = Nested((np.zeros(3), [np.ones(2)]), {"w": np.arange(4.0)})
    before = data_digest(data)
    read_only(data)
    for array in (data.parts[0], data.parts[1][0], data.table["w"]):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 7.0
    data.table["w"].flags.writeable = True
    data.table["w"][0] = 7.0
    assert data_digest(data) != before


def test_a_wrong_output_type_names_the_method_not_the_first_metric(registry, write_suite):
    reason = _results(registry, write_suite, "wrong-type")["wrong-type"].reason
    assert reason == "method 'wrong-type' returned str; the task's output type is numbers.Real"


def test_a_raising_metric_is_named_in_the_reason(registry, write_suite):
    reason = _results(registry, write_suite, "mean", metrics="abs-error, dividing")["mean"].reason
    assert reason == "metric 'dividing' raised ZeroDivisionError: float division by zero"


def test_reordering_metrics_keeps_every_cell_identity(registry, write_suite):
    first = load_suite(
        write_suite(SUITE.format(first="mean", metrics="abs-error, stats")), registry
    )
    again = load_suite(
        write_suite(SUITE.format(first="mean", metrics="stats, abs-error")), registry
    )
    assert [c.cell_hash for c in first.cells] == [c.cell_hash for c in again.cells]
    assert [m for m, _ in again.cells[0].metrics] == ["stats", "abs-error"]  # tables' order
    dropped = load_suite(write_suite(SUITE.format(first="mean", metrics="stats")), registry)
    assert first.cells[0].cell_hash != dropped.cells[0].cell_hash


def test_metrics_compute_in_one_order_whatever_the_suite_says(registry, write_suite):
    a = load_suite(write_suite(SUITE.format(first="mean", metrics="draw-a, draw-b")), registry)
    b = load_suite(write_suite(SUITE.format(first="mean", metrics="draw-b, draw-a")), registry)
    assert a.cells[0].metrics_in_compute_order == b.cells[0].metrics_in_compute_order
    assert execute_cell(a.cells[0], registry).metrics == execute_cell(b.cells[0], registry).metrics


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
        ("interrupting", "KeyboardInterrupt: "),
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
    import psutil

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
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, f"the cell's subprocess {pid} is still running"
        time.sleep(0.1)
