"""Executors under real faults: timeouts, crashes and segfaults on the local and dask
executors; workers that die with their driver; tracking overlapped with the work; data
loaded once per data key; in-process runs; a real dask scheduler with two workers."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import fault_plugin
import mlflow
import psutil
import pytest
import toy_plugin
from fake_plugins import install_fake_plugin
from helpers import SUITE, run_args, run_within

from harness.plugins.registry import build_registry
from harness.runs import cell as cell_module
from harness.runs.executors import auto_jobs, worker
from harness.runs.executors.base import Router, route
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
    methods: {methods}
    metrics: [value]
"""


@pytest.fixture(scope="module")
def faults():
    return build_registry({"faults": fault_plugin, "toy": toy_plugin}, entry_points=False)


@pytest.fixture(scope="module")
def cluster():
    """A dask LocalCluster of two single-threaded worker processes, shared by the module
    (the executor talks to it by address, as with ``--scheduler``)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as local:
        yield local.scheduler_address


@pytest.fixture(params=["local", "dask"])
def executor(request, faults):
    if request.param == "local":
        return LocalExecutor(faults, 2)
    return DaskExecutor(faults, 2, scheduler=request.getfixturevalue("cluster"))


def _cells(registry, write_suite, methods, seeds=(0, 1), timeout="1m"):
    text = FAULTS.format(seeds=list(seeds), timeout=timeout, methods=methods)
    return load_suite(write_suite(text), registry).cells


def _run(executor, cells, on_result=None):
    results = {}

    def keep(cell, result):
        assert cell.cell_hash not in results, "a cell got two results"
        results[cell.cell_hash] = (cell, result)
        return on_result(cell, result) if on_result else None

    executor.run(cells, keep)
    assert set(results) == {c.cell_hash for c in cells}, "every cell gets exactly one result"
    return list(results.values())


def test_timeout_counts_from_the_start_of_the_cell_not_its_queueing(executor, faults, write_suite):
    # 2 workers, 6 cells of 0.5 s and 2 of 30 s with a 1.2 s timeout: most cells wait in
    # the queue for longer than the timeout, and only the two 30 s cells may time out.
    methods = "[{name: sleep, params: {seconds: 0.5}}]"
    quick = _cells(faults, write_suite, methods, seeds=range(6), timeout="1.2s")
    methods = "[{name: sleep, params: {seconds: 30}}]"
    slow = _cells(faults, write_suite, methods, seeds=[10, 11], timeout="1.2s")
    tic = time.monotonic()
    results = _run(executor, slow + quick)
    assert time.monotonic() - tic < 20
    status = {c.cell_hash: r.status for c, r in results}
    assert [status[c.cell_hash] for c in quick] == ["ok"] * 6
    assert [status[c.cell_hash] for c in slow] == ["timeout"] * 2
    timed_out = next(r for c, r in results if r.status == "timeout")
    assert "1.2 s" in timed_out.reason
    assert 1000 <= timed_out.end_ms - timed_out.start_ms < 5000


def test_cell_after_a_killed_one_of_its_data_key_still_runs(executor, faults, write_suite):
    # The 0 s cell shares the 30 s cell's data and was already sent to the worker that
    # gets killed: it must be handed to the fresh worker, not lost or left waiting.
    methods = "[{name: sleep, grid: {seconds: [30, 0]}}]"
    cells = _cells(faults, write_suite, methods, seeds=[0], timeout="1s")
    outcome = []
    thread = threading.Thread(target=lambda: outcome.extend(_run(executor, cells)))
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the executor never finished"
    assert [r.status for _, r in outcome] == ["timeout", "ok"]


def test_crash_and_segfault_are_failed_with_the_cause_and_the_suite_goes_on(
    executor, faults, write_suite
):
    cells = _cells(faults, write_suite, "[crash, segfault, sleep]")
    results = _run(executor, cells)
    by_method = {}
    for cell, result in results:
        by_method.setdefault(cell.method, []).append(result)
    assert [r.status for r in by_method["sleep"]] == ["ok", "ok"]
    assert all(r.status == "failed" and "exit code 3" in r.reason for r in by_method["crash"])
    assert all(r.status == "failed" and "SIGSEGV" in r.reason for r in by_method["segfault"])


def test_dask_worker_killed_under_a_cell_gets_it_failed_with_the_cause(faults, write_suite):
    distributed = pytest.importorskip("distributed")
    import dask

    cells = _cells(faults, write_suite, "[kill-parent]", seeds=[0]) + _cells(
        faults, write_suite, "[sleep]", seeds=[1]
    )
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
        ) as local,
    ):
        results = _run(DaskExecutor(faults, 1, scheduler=local.scheduler_address), cells)
    # every cell has its one result (_run checks it); the bystander queued on the same
    # worker may be failed with it (allowed-failures 0), so only the killer is asserted
    status = {c.method: (r.status, r.reason) for c, r in results}
    assert status["kill-parent"][0] == "failed" and "KilledWorker" in status["kill-parent"][1]


def test_a_dask_worker_killed_again_and_again_fails_only_its_cell(faults, write_suite):
    """The killer is retried on the restarted worker (allowed-failures 3) until dask gives
    up; the other cells still run. Before: the registry was scattered to the workers, died
    with them, and healthy cells failed with FutureCancelledError ("already forgotten")."""
    distributed = pytest.importorskip("distributed")
    import dask

    cells = _cells(faults, write_suite, "[kill-parent]", seeds=[0]) + _cells(
        faults, write_suite, "[{name: sleep, params: {seconds: 0.5}}]", seeds=range(1, 9)
    )
    with (
        # one task at a time per worker thread: a bystander queued on a dying worker is
        # moved, not counted as a suspect (dask's own KilledWorker for it is not at issue)
        dask.config.set({"distributed.scheduler.worker-saturation": 1.0}),
        distributed.LocalCluster(  # one worker: it is the only holder of what it holds
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
        ) as local,
    ):
        results = _run(DaskExecutor(faults, 1, scheduler=local.scheduler_address), cells)
    by_method: dict[str, list] = {}
    for cell, result in results:
        by_method.setdefault(cell.method, []).append(result)
    assert [r.status for r in by_method["sleep"]] == ["ok"] * 8, [
        r.reason for r in by_method["sleep"]
    ]
    assert by_method["kill-parent"][0].status == "failed"


def test_fail_fast_stops_handing_out_results(executor, faults, write_suite):
    cells = _cells(faults, write_suite, "[crash]", seeds=range(6))
    seen = []
    executor.run(cells, lambda c, r: seen.append(r) or r.status == "failed")
    assert len(seen) == 1


def test_error_in_the_writer_reaches_the_driver(faults, write_suite):
    cells = _cells(faults, write_suite, "[sleep]", seeds=range(4))

    def broken(cell, result):
        raise OSError("store is gone")

    with pytest.raises(OSError, match="store is gone"):
        LocalExecutor(faults, 2).run(cells, broken)


@pytest.mark.parametrize("jobs", [1, 2])
def test_data_is_loaded_once_per_data_key_and_worker(faults, write_suite, jobs):
    # 1 dataset x 2 methods x 8 seeds, ordered dataset x method x seed by the suite: a
    # one-slot cache would load 16 times; routing by data key loads 8 times.
    methods = "[{name: sleep, grid: {seconds: [0.0, 0.001]}}]"
    cells = _cells(faults, write_suite, methods, seeds=range(8))
    assert [c.seed for c in cells[:3]] == [0, 1, 2]
    loads = sum("load" in r.seconds for _, r in _run(LocalExecutor(faults, jobs), cells))
    assert loads == 8


def test_dask_loads_each_data_key_once(faults, write_suite, cluster):
    methods = "[{name: sleep, grid: {seconds: [0.0, 0.001]}}]"
    cells = _cells(faults, write_suite, methods, seeds=range(8))
    results = _run(DaskExecutor(faults, 2, scheduler=cluster), cells)
    assert sum("load" in r.seconds for _, r in results) == 8


def test_router_groups_by_data_key_and_keeps_workers_busy(faults, write_suite):
    methods = "[{name: sleep, grid: {seconds: [0.0, 0.001, 0.002]}}]"
    cells = _cells(faults, write_suite, methods, seeds=range(2))
    assert [c.seed for c in route(cells)] == [0, 0, 0, 1, 1, 1]
    router = Router(cells)
    first, second = router.take(None), router.take(None)
    assert first.seed == 0 and second.seed == 1  # two workers start two groups
    assert router.take(first.data_key).seed == 0
    assert router.take(None).seed == 1  # nothing fresh left: a busy group is shared
    assert router.take(None) is None  # ... but not its owner's one cell left
    assert router.take(first.data_key).seed == 0 and router.take(second.data_key).seed == 1
    assert len(router) == 0


def test_worker_starts_its_next_cell_while_the_driver_writes(faults, write_suite):
    # 6 cells of 0.2 s and a 0.2 s write each: 2.4 s if the worker waited for each write,
    # about 1.4 s when writes overlap the next cell.
    cells = _cells(faults, write_suite, "[{name: sleep, params: {seconds: 0.2}}]", range(6))
    tic = time.monotonic()
    _run(LocalExecutor(faults, 1), cells, lambda c, r: time.sleep(0.2))
    assert time.monotonic() - tic < 2.0


def test_in_process_runs_here_with_the_same_metrics_and_a_timeout(faults, write_suite):
    methods = "[{name: sleep, grid: {seconds: [0.0, 30]}}]"
    cells = _cells(faults, write_suite, methods, timeout="0.5s")
    here = {c.cell_hash: r for c, r in _run(InProcessExecutor(faults), cells)}
    assert sorted(r.status for r in here.values()) == ["ok", "ok", "timeout", "timeout"]
    quick = [c for c in cells if c.method_params["seconds"] == 0.0]
    forked = {c.cell_hash: r.metrics for c, r in _run(LocalExecutor(faults, 1), quick)}
    assert forked == {c.cell_hash: here[c.cell_hash].metrics for c in quick}


def test_auto_jobs_is_the_usable_core_count():
    assert auto_jobs() == len(os.sched_getaffinity(0))


# -- real processes ------------------------------------------------------------------------

SLEEPY = """
name: sleepy
seeds: [0, 1, 2, 3]
timeout: 5m
runs:
  - task: toy
    datasets: [noise]
    methods: [{name: sleepy, params: {seconds: 120}}]
    metrics: [abs-error]
"""


def _children(pid):
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_workers_exit_when_the_driver_is_killed(toy_env, write_suite, store, tmp_path, signum):
    path = write_suite(SLEEPY)
    driver = subprocess.Popen(
        [BIN / "harness", "run", path, "-j", "2", "--tracking-uri", store],
        env=toy_env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while len(workers := _children(driver.pid)) < 2:
            assert time.monotonic() < deadline and driver.poll() is None, "no workers started"
            time.sleep(0.1)
        time.sleep(1.0)  # the workers are inside their 120 s cells
        driver.send_signal(signum)  # the driver alone, not its process group
        driver.wait(30)
        _, alive = psutil.wait_procs(workers, timeout=5)
        assert not alive, f"workers outlived the driver: {[p.pid for p in alive]}"
    finally:
        for process in _children(driver.pid):
            process.kill()
        driver.kill()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _cell_metrics(store: str, name: str) -> dict[str, dict[str, float]]:
    client = mlflow.MlflowClient(store)
    experiment = client.get_experiment_by_name(name)
    runs = client.search_runs([experiment.experiment_id], "tags.`harness.kind` = 'cell'")
    return {
        r.data.tags["harness.cell_hash"]: {
            k: v for k, v in r.data.metrics.items() if not k.startswith("time.")
        }
        for r in runs
    }


CLUSTER_SUITE = """
name: cluster
seeds: [0, 1, 2]
timeout: 1m
runs:
  - task: toy
    datasets: [{name: noise, grid: {n: [3, 6]}}]
    methods: [{name: mean, grid: {kind: [plain, noisy]}}]
    metrics: [abs-error, stats, path]
"""


def test_running_lists_the_cells_at_work_for_progress_lines(executor, faults, write_suite):
    """Progress lines name the running cells ("running: draw/sleep s0 (3 s)") on both
    executors; the dask executor hears of them from its workers' events."""
    cells = _cells(faults, write_suite, "[{name: sleep, params: {seconds: 2.0}}]", seeds=(0,))
    seen: list[tuple[str, float]] = []
    thread = threading.Thread(target=_run, args=(executor, cells))
    thread.start()
    while thread.is_alive():
        seen += [(c.cell_hash, sec) for c, sec in executor.running()]
        time.sleep(0.05)
    assert seen and {h for h, _ in seen} == {cells[0].cell_hash}
    assert max(sec for _, sec in seen) > 1.0
    assert executor.running() == []


@pytest.mark.slow
def test_run_on_a_real_dask_scheduler_with_two_workers_matches_one_job(
    toy_env, write_suite, tmp_path, _empty_store
):
    import shutil

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = str(BIN / "dask")
    common = ["--no-dashboard"]
    processes = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), *common],
            env=toy_env,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        for _ in range(2):
            processes.append(
                subprocess.Popen(
                    [dask, "worker", address, "--nthreads", "1", "--nworkers", "1", *common],
                    env=toy_env,
                    stderr=subprocess.DEVNULL,
                )
            )
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        path = write_suite(CLUSTER_SUITE)
        stores = {}
        for label, args in {
            "dask": ["--executor", "dask", "--scheduler", address],
            "one": ["-j", "1"],
        }.items():
            shutil.copy(_empty_store, tmp_path / f"{label}.db")
            stores[label] = f"sqlite:///{tmp_path}/{label}.db"
            done = subprocess.run(
                [BIN / "harness", "run", path, "--tracking-uri", stores[label], *args],
                env=toy_env,
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, done.stdout + done.stderr
        on_cluster, one_job = (
            _cell_metrics(stores["dask"], "cluster"),
            _cell_metrics(stores["one"], "cluster"),
        )
        assert len(one_job) == 12 and all(one_job.values())
        assert on_cluster == one_job
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()


BOOM = """
name: debug
seeds: [0]
timeout: 1m
runs:
  - task: toy
    datasets: [noise]
    methods: [mean, boom]
    metrics: [abs-error]
"""


@pytest.mark.slow
def test_pdb_stops_in_the_frame_that_raised(toy_env, write_suite, store, tmp_path):
    done = subprocess.run(
        [BIN / "harness", "run", write_suite(BOOM), "--pdb", "--tracking-uri", store],
        env=toy_env,
        cwd=tmp_path,
        input="p type(self).__name__, seed\nc\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "(Pdb)" in done.stdout and "('Boom', " in done.stdout  # the method's own frame
    assert "boom: this method always fails" in done.stdout


@pytest.mark.parametrize("value", ["-1", "many", "1.5"])
def test_bad_jobs_value_is_refused_naming_it(value, tmp_path):
    from click.testing import CliRunner

    from harness.cli import cli

    result = CliRunner().invoke(cli, ["run", str(tmp_path / "x.yaml"), "-j", value])
    assert result.exit_code == 2 and f"'{value}' is not a number of workers" in result.output


def test_jobs_auto_and_zero_pick_the_executor(faults):
    from harness.cli.run import Jobs
    from harness.runs.executors import make_executor

    assert Jobs().convert("auto", None, None) == auto_jobs()
    assert isinstance(make_executor(faults, 0), InProcessExecutor)
    assert isinstance(make_executor(faults, 2), LocalExecutor)
    assert isinstance(make_executor(faults, 2, pdb=True), InProcessExecutor)


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("tcp://host:notaport", "invalid literal"),
        ("tcp://:::", "invalid address"),
        ("foo://bar:1", "unknown address scheme 'foo'"),
        ("not an address", "missing port number"),
        ("tcp://localhost:99999", "port 99999 is not in 1-65535"),
    ],
)
def test_a_malformed_scheduler_address_is_refused_before_anything_is_written(
    address, reason, harness_main, tmp_path
):
    """Before: a ValueError traceback, after the store had been created."""
    pytest.importorskip("distributed")
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE)
    store = tmp_path / "store" / "mlflow.db"
    args = [*run_args(suite, f"sqlite:///{store}", tmp_path / "r"), "--scheduler", address]
    code, out, err = harness_main(*args)
    assert code == 2, (code, out, err)
    assert f"--scheduler '{address}': not a dask scheduler address ({reason}" in err
    assert not store.parent.exists() and not (tmp_path / "r").exists()


@pytest.fixture(scope="module")
def single_worker_cluster():
    """A dask LocalCluster of one single-threaded worker process, shared by the module."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as local:
        yield local.scheduler_address


def _fault_cells(registry, write_suite, method, seeds=range(4), timeout="30s"):
    """The cells of one fault ``method`` (the FAULTS suite with a 30 s timeout)."""
    return _cells(registry, write_suite, f"[{method}]", seeds, timeout)


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


@pytest.mark.parametrize("child", ["returns", "raises"])
@pytest.mark.parametrize("where", ["local", "dask"])
def test_a_forked_child_that_returns_or_raises_leaves_every_cell_its_own_value(
    faults, write_suite, request, child, where
):
    """Before (local): cell 0 was logged ok with the child's -1000, cell 1 with cell 0's
    number, ...; with a raising child, cells were logged failed with the child's error."""
    cells = _fault_cells(faults, write_suite, f"{{name: fork-child, params: {{child: {child}}}}}")
    executor = (
        LocalExecutor(faults, 1)
        if where == "local"
        else DaskExecutor(faults, 1, scheduler=request.getfixturevalue("single_worker_cluster"))
    )
    results = run_within(executor, cells)
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
    cells = _fault_cells(faults, write_suite, method, seeds=range(2))
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
    cells = _fault_cells(faults, write_suite, "fork-child")
    results = run_within(LocalExecutor(faults, 1), cells)
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
    cells = _fault_cells(faults, write_suite, "sleep", seeds=[0, 1])
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
        results = run_within(executor, cells[:1])
    reason = results[cells[0].cell_hash].reason
    assert results[cells[0].cell_hash].status == "failed"
    assert f"about cell {cells[1].cell_hash[:12]}" in reason and "stray 'done'" in reason


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
    cells = _fault_cells(faults, write_suite, method, seeds=[0], timeout=timeout)
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
    source = (Path(__file__).parents[1] / "fault_plugin.py").read_text()
    install_fake_plugin(site, "faults", "fault_plugin", source)
    pid_file = tmp_path / "daemons"
    method = f'{{name: daemon, params: {{pid_file: "{pid_file}"}}}}'
    path = write_suite(FAULTS.format(seeds=[0], timeout="1m", methods=f"[{method}]"))
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
