"""Issue 20's speed table, one benchmark per figure (ratios measured in one run).

Every figure is printed at the end of the run (``issue-20 speed figures``). Under
``make bench`` the sizes are the table's and each goal is asserted; with benchmarks
disabled (``make test``) each runs once at a small size and only has to work.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from figures import record

from harness.runs.executors.local import LocalExecutor
from harness.runs.runner import run_suite
from harness.store.tracking import Tracker
from harness.suites.loading import load_suite

HARNESS = str(Path(sys.executable).parent / "harness")
START_UP_RUNS = 5  # whole-process start-up timings: the median of this many

PROBE = """
name: {name}
repetitions: {n}
timeout: 10m
runs:
  - task: probe
    datasets: [numbers]
    methods: [{methods}]
    metrics: [value]
"""


def _suite(probe, suite_file, name, n, methods="noop"):
    return load_suite(suite_file(PROBE.format(name=name, n=n, methods=methods)), probe)


class _EachCell:
    """A run's listener calling ``on_cell(cell, result)`` for each cell logged."""

    def __init__(self, on_cell):
        self.on_cell = on_cell

    def harness_cell_logreport(self, report):
        self.on_cell(report.cell, report.result)


def _run(suite, probe, uri, jobs=1, on_cell=None):
    """Seconds to run ``suite`` into the store at ``uri`` with ``jobs`` workers."""
    tracker = Tracker(uri)
    tic = time.perf_counter()
    listeners = [_EachCell(on_cell)] if on_cell else []
    executor = LocalExecutor(probe, jobs)
    outcome = run_suite(suite, probe, tracker, executor=executor, listeners=listeners)
    seconds = time.perf_counter() - tic
    assert not outcome.problems
    return seconds


def _once(benchmark, fn):
    """Run ``fn`` once under pytest-benchmark (its timing is the benchmark's figure)."""
    return benchmark.pedantic(fn, rounds=1, iterations=1)


def test_overhead_per_cell_on_20ms_cells(benchmark, full, probe, suite_file, new_store):
    """(T(510 cells) - T(10 cells)) / 500 - 20 ms: start-up and fixed costs cancel."""
    small, large = (10, 510) if full else (4, 24)
    sleepy = "{name: sleep, params: {ms: 20}}"

    def measure():
        t_small = _run(_suite(probe, suite_file, "s20a", small, sleepy), probe, new_store())
        t_large = _run(_suite(probe, suite_file, "s20b", large, sleepy), probe, new_store())
        return (t_large - t_small) / (large - small) - 0.020

    overhead = _once(benchmark, measure)
    record(
        f"overhead per 20 ms cell ({small} vs {large} cells, -j 1)",
        f"{overhead * 1000:.2f} ms",
        "<= 2 ms",
    )
    if full:
        assert overhead <= 0.002


def _bare_loop(uri: str, n: int) -> float:
    """Seconds for ``n`` cells' worth of the bare MLflow client loop: create a run, one
    ``log_batch`` (a metric and four params), terminate (the reference of the table)."""
    from mlflow.entities import Metric, Param

    client = Tracker(uri).client
    experiment = client.create_experiment("bare")
    tic = time.perf_counter()
    for i in range(n):
        run = client.create_run(experiment)
        now = int(time.time() * 1000)
        client.log_batch(
            run.info.run_id,
            metrics=[Metric("value", float(i), now, 0)],
            params=[Param(k, str(i)) for k in ("task", "dataset", "method", "seed")],
        )
        client.set_terminated(run.info.run_id)
    return time.perf_counter() - tic


def test_noop_cell_against_the_bare_mlflow_loop(benchmark, full, probe, suite_file, new_store):
    n = 200 if full else 10

    def measure():
        bare = _bare_loop(new_store(), n)
        ours = _run(_suite(probe, suite_file, "noop", n), probe, new_store())
        return ours / bare, ours / n, bare / n

    ratio, ours, bare = _once(benchmark, measure)
    record(
        f"no-op cell vs bare MLflow loop ({n} cells, same run)",
        f"{ratio:.2f}x ({ours * 1000:.1f} vs {bare * 1000:.1f} ms)",
        "<= 1.1x",
    )
    if full:
        assert ratio <= 1.1


def test_per_cell_cost_is_flat_and_resume_is_cheap(benchmark, full, probe, suite_file, new_store):
    """Per-cell cost at a small and a large suite of no-op cells, then the resume of the
    large one (nothing to run) per cell, in this process (start-up excluded)."""
    small, large = (100, 3000) if full else (10, 40)

    def measure():
        t_small = _run(_suite(probe, suite_file, "flat-a", small), probe, new_store())
        uri = new_store()
        suite = _suite(probe, suite_file, "flat-b", large)
        t_large = _run(suite, probe, uri)
        t_resume = _run(suite, probe, uri)
        return t_small / small, t_large / large, t_resume / large

    per_small, per_large, per_resume = _once(benchmark, measure)
    record(
        f"per-cell cost at {small} vs {large} no-op cells",
        f"{per_small * 1000:.1f} vs {per_large * 1000:.1f} ms ({per_large / per_small:.2f}x)",
        "flat, within 20%",
    )
    record(
        f"resume of a finished {large}-cell suite, per cell (+ start-up)",
        f"{per_resume * 1000:.2f} ms/cell",
        "<= 1 ms/cell",
    )
    if full:
        assert per_large / per_small <= 1.2
        assert per_resume <= 0.001


def _whole(env, *args, cwd) -> float:
    tic = time.perf_counter()
    done = subprocess.run([HARNESS, *args], env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - tic
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return seconds


def test_start_up_of_run_and_list(benchmark, full, probe_env, suite_file, new_store, tmp_path):
    """Whole processes, every installed plugin plus the probe, a store that exists: the
    median of ``START_UP_RUNS`` runs of each, alternated, as ``farm-bench`` times commands
    (one run alone read 0.70-1.03 s for the same ``harness list`` on the 2-core machine)."""
    path = suite_file(PROBE.format(name="one", n=1, methods="noop"))
    uri = new_store()
    n = START_UP_RUNS if full else 1

    def measure():
        runs, listings = [], []
        for _ in range(n):
            runs.append(_whole(probe_env, "run", str(path), "--tracking-uri", uri, cwd=tmp_path))
            listings.append(_whole(probe_env, "list", cwd=tmp_path))
        return runs, listings

    runs, listings = _once(benchmark, measure)
    run, listing = statistics.median(runs), statistics.median(listings)
    record(
        "`harness run` of a 1-cell suite, whole process", _median_of(runs), "<= 0.9 s (issue 56)"
    )
    record("`harness list`, whole process", _median_of(listings), "<= 0.35 s (issue 56)")
    if full:
        assert run <= 0.9 and listing <= 0.35


DUMMY_PLUGIN = '''"""Generated plugin {i} for the start-up benchmark: a task of its own.
Importing it leaves a line in imported.log, so the benchmark sees whether a command did."""

from dataclasses import dataclass
from pathlib import Path

from harness import Dataset, Method, Metric, hookimpl

with open(Path(__file__).parent.parent / "imported.log", "a") as log:
    log.write("{i}\\n")


class Numbers(Dataset):
    """Numbers {i} (benchmark fixture)."""

    name = "numbers"
    task = "dummy-{i}"

    @dataclass
    class Params:
        size: int = 1

    def load(self, params, seed):
        return float(seed) * params.size


class Noop(Method):
    """Returns the data (benchmark fixture)."""

    name = "noop"
    task = "dummy-{i}"

    @dataclass
    class Params:
        tag: int = 0

    def run(self, data, params, seed):
        return data


class Value(Metric):
    """The output (benchmark fixture)."""

    name = "value"
    task = "dummy-{i}"

    @dataclass
    class Params:
        pass

    def compute(self, data, output):
        return float(output)


@hookimpl
def harness_datasets():
    return [Numbers]


@hookimpl
def harness_methods():
    return [Noop]


@hookimpl
def harness_metrics():
    return [Value]
'''

ONE_FAIR_CELL = """
name: one-fair-cell
repetitions: 1
runs:
  - task: fair-regression
    datasets: [{name: synthetic-linear, params: {n_train: 200, n_calib: 200, n_test: 200}}]
    methods: [unconstrained]
    metrics: [mse]
"""


def _dummy_site(site: Path, count: int) -> Path:
    """``count`` generated plugins installed in ``site`` (a ``.dist-info`` each, with its
    entry point and ``top_level.txt``), each with a dataset, a method and a metric of a task
    of its own; returns the log their imports write."""
    for i in range(count):
        module = f"harness_dummy_{i:02d}"
        (site / module).mkdir(parents=True)
        (site / module / "__init__.py").write_text(DUMMY_PLUGIN.format(i=i))
        info = site / f"{module}-0.1.0.dist-info"
        info.mkdir()
        name = f"harness-dummy-{i:02d}"
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
        (info / "entry_points.txt").write_text(f"[harness]\ndummy-{i:02d} = {module}\n")
        (info / "top_level.txt").write_text(f"{module}\n")
    return site / "imported.log"


def test_start_up_does_not_grow_with_the_plugins_installed(benchmark, full, new_store, tmp_path):
    """``harness list --task fair-regression`` and a resumed 1-cell fair-regression run,
    whole processes, with the eleven installed plugins alone and with 20 generated plugins
    more: the commands alternated, the median of ``START_UP_RUNS`` of each, and the ratio
    of the medians at most 1.1 (each plugin's cached description is read, no other plugin
    is imported). After the first command of each environment (which describes every
    plugin and fills its cache), no generated plugin may be imported at all: checked under
    ``make test`` too, on ``harness list --task fair-regression`` alone. Fails with the
    registry importing every plugin (as before the cache): the 20 imports are seen in
    ``imported.log``."""
    import os

    log = _dummy_site(tmp_path / "site", 20)
    suite = tmp_path / "one-fair-cell.yaml"
    suite.write_text(ONE_FAIR_CELL)
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MLFLOW_TRACKING_URI")}
    envs = {
        "eleven": {**base, "HARNESS_CACHE_DIR": str(tmp_path / "cache-11")},
        "more": {
            **base,
            "HARNESS_CACHE_DIR": str(tmp_path / "cache-31"),
            "PYTHONPATH": str(tmp_path / "site"),
        },
    }
    if not full:  # make test: that a described plugin is not imported again, untimed
        envs = {"more": envs["more"]}
    stores = {name: new_store() for name in envs}
    wanted = ("list", "run") if full else ("list",)

    def command(name: str, what: str) -> list[str]:
        if what == "list":
            return ["list", "--task", "fair-regression"]
        return ["run", str(suite), "--tracking-uri", stores[name], "--report-dir", "reports"]

    for name, env in envs.items():  # describe every plugin once; the cell runs once
        for what in wanted:
            _whole(env, *command(name, what), cwd=tmp_path)
    assert log.read_text().count("\n") == 20  # each generated plugin described once
    log.unlink()
    n = START_UP_RUNS if full else 1

    def measure():
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(n):
            for what in wanted:
                for name, env in envs.items():
                    seconds = _whole(env, *command(name, what), cwd=tmp_path)
                    times.setdefault((what, name), []).append(seconds)
        return times

    times = _once(benchmark, measure)
    assert not log.exists(), f"generated plugins imported: {log.read_text().split()}"
    if not full:
        return
    for what, label in (("list", "`harness list --task fair-regression`"), ("run", "1-cell run")):
        eleven = statistics.median(times[what, "eleven"])
        more = statistics.median(times[what, "more"])
        record(
            f"{label}, 11 plugins vs 31 (20 generated)",
            f"{more / eleven:.2f}x ({more:.2f} vs {eleven:.2f} s)",
            "<= 1.1x",
        )
        assert more / eleven <= 1.1, (what, times)


def _median_of(seconds: list[float]) -> str:
    if len(seconds) == 1:
        return f"{seconds[0]:.2f} s (one run)"
    low, high = min(seconds), max(seconds)
    return f"{statistics.median(seconds):.2f} s (median of {len(seconds)}, {low:.2f}-{high:.2f})"


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        sum(range(1000))


def _machine_ceiling(total_s: float) -> float:
    """Wall time of ``total_s`` CPU-seconds of the probe's spin loop in one process over
    the same work split across two bare forked processes: what two cores of this machine
    give at best (below 2 where the two are hyperthreads of one core or share a cache)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    tic = time.perf_counter()
    one = context.Process(target=_spin, args=(total_s,))
    one.start()
    one.join()
    sequential = time.perf_counter() - tic
    tic = time.perf_counter()
    pair = [context.Process(target=_spin, args=(total_s / 2,)) for _ in range(2)]
    for process in pair:
        process.start()
    for process in pair:
        process.join()
    return sequential / (time.perf_counter() - tic)


def test_two_jobs_on_cpu_bound_cells(benchmark, full, probe, suite_file, new_store):
    """The parallel part, -j 1 over -j 2, on cells that each burn CPU: from the first
    cell's start to the last cell's end (the cells' own wall-clock stamps), so the fixed
    start and end of a run (store, parent run, forks) is left out, as the table asks.
    Measured beside the machine's own ceiling for the same work in two bare processes
    (:func:`_machine_ceiling`): the goal is 1.8x, or 95% of the ceiling where the machine's
    two cores cannot give 1.8x to anything."""
    n, seconds = (16, 0.25) if full else (4, 0.05)
    spin = f"{{name: spin, params: {{seconds: {seconds}}}}}"

    def parallel_part(jobs: int) -> float:
        results: list = []
        suite = _suite(probe, suite_file, f"cpu-{jobs}", n, spin)
        _run(suite, probe, new_store(), jobs, on_cell=lambda c, r: results.append(r))
        assert len(results) == n
        return (max(r.end_ms for r in results) - min(r.start_ms for r in results)) / 1000

    def measure():
        ceiling = _machine_ceiling(n * seconds)
        return parallel_part(1) / parallel_part(2), ceiling

    speedup, ceiling = _once(benchmark, measure)
    record(
        f"-j 2 vs -j 1 on {n} CPU-bound cells of {seconds} s",
        f"{speedup:.2f}x (two bare processes: {ceiling:.2f}x)",
        ">= 1.8x",
    )
    if full:
        assert speedup >= min(1.8, 0.95 * ceiling)


def test_dataset_loads_once_per_data_key(benchmark, probe, suite_file, new_store):
    """1 dataset x 2 methods x 8 seeds: 8 loads, with one worker and with two."""
    methods = "{name: noop, grid: {tag: [0, 1]}}"

    def measure():
        loads = []
        for jobs in (1, 2):
            seen: list = []
            suite = _suite(probe, suite_file, f"loads-{jobs}", 8, methods)
            _run(suite, probe, new_store(), jobs, on_cell=lambda c, r, seen=seen: seen.append(r))
            assert len(seen) == 16
            loads.append(sum("load" in r.seconds for r in seen))
        return loads

    loads = _once(benchmark, measure)
    record("Dataset.load calls, 1 dataset x 2 methods x 8 seeds", f"{loads} (-j 1, -j 2)", "8")
    assert loads == [8, 8]


def _results_frame(configurations: int, seeds: int = 1):
    """A results table of ``configurations`` (dataset, method) configurations, as
    ``Tracker.results`` gives it: string params, two metrics, one failed cell in 20."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    rows = []
    for c in range(configurations):
        for seed in range(seeds):
            failed = rng.random() < 0.05
            rows.append(
                {
                    "task": "probe",
                    "dataset": "numbers",
                    "method": f"noop-{c % 5}",
                    "seed": str(seed),
                    "status": "failed" if failed else "ok",
                    "reason": "boom" if failed else None,
                    "dataset.n": str(c // 5),
                    "method.shift": str(c % 5),
                    "cell_hash": f"h{c}-{seed}",
                    "run_id": f"r{c}-{seed}",
                    "artifact_uri": "file:///nowhere",
                    "experiment_id": "1",
                    "value": np.nan if failed else rng.normal(),
                    "other": np.nan if failed else rng.normal(),
                }
            )
    return pd.DataFrame(rows)


def test_report_cost_is_linear_in_configurations(benchmark, full, probe, tmp_path):
    """The report (tables, best methods, Markdown and HTML) of 100, 1,000 and 10,000
    configurations, results already loaded: per-configuration cost flat within 2x."""
    from harness.reports.folder import write_report

    sizes = (100, 1000, 10000) if full else (10, 40, 100)
    frames = {n: _results_frame(n) for n in sizes}

    write_report(_results_frame(5), probe, None, "warm-up", tmp_path / "warm-up")  # imports

    def measure():
        seconds = {}
        for n, frame in frames.items():
            tic = time.perf_counter()
            write_report(frame, probe, None, f"report-{n}", tmp_path / str(n))
            seconds[n] = time.perf_counter() - tic
        return seconds

    seconds = _once(benchmark, measure)
    per = {n: seconds[n] / n * 1000 for n in sizes}
    record(
        f"report of {'/'.join(f'{n:,}' for n in sizes)} configurations",
        " / ".join(f"{seconds[n]:.2f} s" for n in sizes),
        "<= 1.0 s at 1,000, <= 5 s at 10,000",
    )
    record(
        "report cost per configuration",
        " / ".join(f"{per[n]:.2f} ms" for n in sizes)
        + f" ({max(per.values()) / min(per.values()):.1f}x)",
        "at 10,000 <= 2x that at 1,000",
    )
    if full:
        assert seconds[1000] <= 1.0 and seconds[10000] <= 5.0
        # linear, not worse: the cost per configuration at 10,000 at most twice that at
        # 1,000 (it falls with size while pandas' fixed cost per call still dominates)
        assert per[10000] / per[1000] <= 2.0
