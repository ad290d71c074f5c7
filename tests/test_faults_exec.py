"""Faults an adversarial tester found in the execution core (issue 30, items 1, 2, 6 and the
ETA of item 8): a forked child's message landing on another cell, writes into shared data
that neither the read-only flags nor the digest saw, a double-forked daemon outliving its
cell, and two ETAs at once. Each test failed on the code before its fix; the docstrings
say what it showed then."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import types
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import fault_plugin
import numpy as np
import psutil
import pytest
import toy_plugin
from fake_plugins import install_fake_plugin

from harness import Dataset, Method, Metric, hookimpl
from harness.plugins.registry import build_registry
from harness.runs import cell as cell_module
from harness.runs.executors import worker
from harness.runs.executors.dask import DaskExecutor
from harness.runs.executors.inprocess import InProcessExecutor
from harness.runs.executors.local import LocalExecutor
from harness.suites.loading import load_suite

BIN = Path(sys.executable).parent
FAULTS = """
name: faults
seeds: {seeds}
timeout: {timeout}
runs:
  - task: faults
    datasets: [draw]
    methods: [{method}]
    metrics: [value]
"""


@pytest.fixture(scope="module")
def faults():
    return build_registry({"faults": fault_plugin, "toy": toy_plugin}, entry_points=False)


@pytest.fixture(scope="module")
def cluster():
    """A dask LocalCluster of one single-threaded worker process, shared by the module."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as local:
        yield local.scheduler_address


def _cells(registry, write_suite, method, seeds=range(4), timeout="30s"):
    text = FAULTS.format(seeds=list(seeds), timeout=timeout, method=method)
    return load_suite(write_suite(text), registry).cells


def _run(executor, cells, limit_s=90.0):
    """``{cell_hash: result}``, every cell with one result, within ``limit_s``."""
    results: dict = {}

    def keep(cell, result):
        assert cell.cell_hash not in results, "a cell got two results"
        results[cell.cell_hash] = result

    thread = threading.Thread(target=executor.run, args=(cells, keep), daemon=True)
    thread.start()
    thread.join(limit_s)
    assert not thread.is_alive(), f"the executor hung; results so far: {results}"
    assert set(results) == {c.cell_hash for c in cells}, "every cell gets exactly one result"
    return results


# -- item 1: a cell's result is its own ------------------------------------------------------


@pytest.mark.parametrize("child", ["returns", "raises"])
@pytest.mark.parametrize("where", ["local", "dask"])
def test_a_forked_child_that_returns_or_raises_leaves_every_cell_its_own_value(
    faults, write_suite, request, child, where
):
    """Before (local): cell 0 was logged ok with the child's -1000, cell 1 with cell 0's
    number, ...; with a raising child, cells were logged failed with the child's error."""
    cells = _cells(faults, write_suite, f"{{name: fork-child, params: {{child: {child}}}}}")
    executor = (
        LocalExecutor(faults, 1)
        if where == "local"
        else DaskExecutor(faults, 1, scheduler=request.getfixturevalue("cluster"))
    )
    results = _run(executor, cells)
    logged = [(results[c.cell_hash].status, results[c.cell_hash].metrics) for c in cells]
    assert logged == [("ok", {"value": float(c.dataset_seed % 1000)}) for c in cells]


@pytest.mark.parametrize("child", ["returns", "raises"])
def test_in_process_a_forked_child_that_returns_or_raises_never_goes_on_as_the_driver(
    faults, write_suite, tmp_path, child
):
    """``-j 0``: each cell is logged once with its own value, and the driver's process is
    the only one that gets back from the executor. Before: the child went on as a copy of
    the driver (ran the next cells, finished the run: the parent run marked FINISHED
    mid-run, cells run twice); the last cell's child got back here."""
    method = f"{{name: fork-child, params: {{child: {child}, seconds: 1.0}}}}"
    cells = _cells(faults, write_suite, method, seeds=range(2))
    driver, results = os.getpid(), {}
    try:
        InProcessExecutor(faults).run(
            cells, lambda c, r: results.setdefault(c.cell_hash, []).append(r)
        )
    finally:
        if os.getpid() != driver:  # a copy of this test: leave a mark, end before pytest
            (tmp_path / f"copy-{os.getpid()}").touch()
            os._exit(0)
    time.sleep(0.5)  # a copy would have marked by now
    assert sorted(p.name for p in tmp_path.glob("copy-*")) == [], "a child finished the run"
    logged = [[(r.status, r.metrics) for r in results[c.cell_hash]] for c in cells]
    assert logged == [[("ok", {"value": float(c.dataset_seed % 1000)})] for c in cells]


def test_the_driver_fails_a_cell_whose_channel_carries_another_process_message(
    faults, write_suite, monkeypatch
):
    """The driver's own check, with the worker's guards off (its channel left open in
    forked children, which then send their result): the cell fails naming the stray
    message, and no cell is logged ok with a value that is not its own. Before: ok with
    the child's number."""
    monkeypatch.setattr(worker, "_seal", lambda conn: None)
    monkeypatch.setattr(cell_module, "_end_if_forked", lambda pid: None)
    cells = _cells(faults, write_suite, "fork-child")
    results = _run(LocalExecutor(faults, 1), cells)
    for cell in cells:
        result = results[cell.cell_hash]
        assert result.status == "failed" or result.metrics == {
            "value": float(cell.dataset_seed % 1000)
        }
    stray = [r.reason for r in results.values() if r.status == "failed"]
    assert stray and all("stray 'done' message from process" in r for r in stray), stray


def test_a_message_of_another_cell_fails_the_running_cell_naming_it(faults, write_suite):
    """A worker that answers with another cell's hash: the running cell fails naming that
    cell, the message is dropped (before: the driver logged whatever came next)."""
    cells = _cells(faults, write_suite, "sleep", seeds=[0, 1])
    executor = LocalExecutor(faults, 1)
    seal = worker._seal

    def misaddress(conn):  # in the worker: its 'done' messages name the other cell
        seal(conn)
        send = conn.send
        conn.send = lambda m: send(
            m._replace(cell_hash=cells[1].cell_hash) if m[0] == "done" else m
        )

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(worker, "_seal", misaddress)
        results = _run(executor, cells[:1])
    reason = results[cells[0].cell_hash].reason
    assert results[cells[0].cell_hash].status == "failed"
    assert f"about cell {cells[1].cell_hash[:12]}" in reason and "stray 'done'" in reason


# -- item 6: a cell's whole process tree ends with it ---------------------------------------


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_dead(pids, seconds=5.0):
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


@pytest.mark.parametrize("where", ["local", "in-process"])
@pytest.mark.parametrize(("seconds", "status"), [(0.0, "ok"), (60.0, "timeout")])
def test_a_double_forked_daemon_is_killed_with_its_cell(
    faults, write_suite, tmp_path, seconds, status, where
):
    """The daemon is dead when its cell's result arrives, while the run goes on with the
    next cell. Before: the daemon (setsid, forked twice) left the worker's process group
    and tree and slept on, at the cell's end and after its timeout (in-process: the
    daemon was never looked for)."""
    pid_file = tmp_path / "daemons"
    daemon = f'{{name: daemon, params: {{pid_file: "{pid_file}", seconds: {seconds}}}}}'
    method = f"{daemon}, {{name: sleep, params: {{seconds: 4}}}}"
    timeout = "2s" if status == "timeout" else "30s"
    cells = _cells(faults, write_suite, method, seeds=[0], timeout=timeout)
    assert [c.method for c in cells] == ["daemon", "sleep"]
    outlived: list[int] = []

    def check(cell, result):
        if cell.method == "daemon":
            assert result.status == status
            outlived.extend(_wait_dead([int(p) for p in pid_file.read_text().split()], 1.0))

    executor = LocalExecutor(faults, 1) if where == "local" else InProcessExecutor(faults)
    try:
        executor.run(cells, check)  # in the main thread: in-process timeouts need SIGALRM
        assert pid_file.read_text().split() and outlived == [], "the cell's daemon outlived it"
    finally:
        for pid in [int(p) for p in pid_file.read_text().split()] if pid_file.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_harness_run_ends_while_a_cells_daemon_would_hold_its_stdout(
    toy_env, write_suite, store, tmp_path
):
    """Before: ``harness run`` printed its summary, then its stdout stayed open for the
    daemon's 120 s (a pipeline or CI step reading it hung)."""
    site = Path(toy_env["PYTHONPATH"].split(os.pathsep)[0])
    source = (Path(__file__).parent / "fault_plugin.py").read_text()
    install_fake_plugin(site, "faults", "fault_plugin", source)
    pid_file = tmp_path / "daemons"
    method = f'{{name: daemon, params: {{pid_file: "{pid_file}"}}}}'
    path = write_suite(FAULTS.format(seeds=[0], timeout="1m", method=method))
    command = [BIN / "harness", "run", path, "--tracking-uri", store, "--report-dir", tmp_path]
    tic = time.monotonic()
    process = subprocess.Popen(
        command, env=toy_env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        out, _ = process.communicate(timeout=90)
        assert process.returncode == 0, out.decode()
        assert time.monotonic() - tic < 80
    finally:
        process.kill()
        for pid in [int(p) for p in pid_file.read_text().split()] if pid_file.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# -- item 2: shared data protected whatever holds it -----------------------------------------


class Slotted:
    __slots__ = ("arr",)

    def __init__(self, arr):
        self.arr = arr


def _deep(levels, leaf):
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
            "deep-14": lambda: _deep(14, arr),
            "deep-40": lambda: _deep(40, arr),
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
    results = _run(LocalExecutor(registry, 1), cells)
    read = results[cells[1].cell_hash]
    assert (read.status, read.metrics) == ("ok", {"output": 1.0})
    scribble = results[cells[0].cell_hash]
    assert scribble.status == "failed" or scribble.metrics == {"output": 0.0}


# -- item 8: one ETA, from the cost of each configuration ------------------------------------

ETA_SUITE = """
name: eta
timeout: 1m
runs:
  - task: faults
    datasets: [draw]
    methods: [{name: sleep, params: {seconds: 0.0}}]
    metrics: [value]
    seeds: [0, 1, 2, 3, 4, 5]
  - task: faults
    datasets: [{name: draw, params: {size: 2}}]
    methods: [{name: sleep, params: {seconds: 3.0}}]
    metrics: [value]
    seeds: [0, 1]
"""


def test_the_bar_and_the_progress_lines_show_one_eta_from_each_configurations_cost(
    toy_env, write_suite, store, tmp_path
):
    """Six cells of 0 s, then two of 3 s: while the last 3 s cell runs, the estimate is the
    3 s its configuration costs less the time it has run. Before: the line said elapsed
    time over cells done (about 0.5 s) and the bar its own figure in another format
    ('eta 0.0 s' in the line, 'eta 0:00:00' on the bar)."""
    import re

    site = Path(toy_env["PYTHONPATH"].split(os.pathsep)[0])
    source = (Path(__file__).parent / "fault_plugin.py").read_text()
    install_fake_plugin(site, "faults", "fault_plugin", source)
    env = dict(toy_env, HARNESS_PROGRESS_EVERY_S="0.25")
    command = [BIN / "harness", "run", write_suite(ETA_SUITE), "--tracking-uri", store]
    done = subprocess.run(
        [*command, "--report-dir", tmp_path],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    last = [re.search(r"eta (\S+ ?s?)\b", line) for line in lines if line.startswith("cells")]
    shown = {m.group(1) for m in last[-2:] if m}  # the last timed line and the bar's
    assert len(shown) == 1, lines
    etas = [
        float(m.group(1))
        for line in lines
        if line.startswith("cells 7/8") and (m := re.search(r"eta (\d+\.\d) s", line))
    ]
    assert etas and max(etas) >= 1.5, lines
