"""A run's progress: the bar and the timed lines of a log file (running cells, one ETA from
each configuration's cost), and what Ctrl-C says it kept and how to resume."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import fault_plugin
import pytest
import toy_plugin
from fake_plugins import install_fake_plugin
from helpers import HARNESS, RUN

from harness.plugins.registry import build_registry


def test_ctrl_c_says_how_many_cells_are_kept_and_how_to_resume(
    harness_main, store, tmp_path, monkeypatch
):
    """Before: 'Interrupted: finished cells are kept in the store.' and nothing more."""
    import harness.runs.runner

    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\nseeds: [0, 1, 2, 3]\nruns:\n" + RUN)

    def interrupted_run(spec, registry, tracker, *, listeners, **kwargs):
        from harness.runs.cell import CellResult
        from harness.runs.events import CellReport, run_events

        hook = run_events(listeners).hook
        hook.harness_run_start(total=4, todo=3, cells=spec.cells[1:])  # one finished before
        for cell, status in ((spec.cells[1], "ok"), (spec.cells[2], "failed")):
            hook.harness_cell_logreport(report=CellReport(cell, CellResult(cell.cell_hash, status)))
        raise KeyboardInterrupt

    monkeypatch.setattr(harness.runs.runner, "run_suite", interrupted_run)
    args = ["run", str(suite), "--tracking-uri", store, "--force", "--report-dir", "r"]
    code, out, err = harness_main(*args)
    assert code == 130, (code, out, err)
    err = " ".join(err.split())
    assert "Interrupted: finished cells are kept in the store (3 of 4 cells; resume with:" in err
    assert f"harness run {suite} --tracking-uri {store} --report-dir r)" in err  # no --force


BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def faults():
    return build_registry({"faults": fault_plugin, "toy": toy_plugin}, entry_points=False)


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
    source = (Path(__file__).parents[1] / "fault_plugin.py").read_text()
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


def test_a_log_file_gets_progress_lines_with_running_cells_and_eta(toy_env, tmp_path, store):
    suite = tmp_path / "slow.yaml"
    suite.write_text(
        textwrap.dedent("""
        name: slow
        timeout: 3s
        runs:
          - task: toy
            datasets: [noise]
            methods: [mean, {name: sleepy, params: {seconds: 30}}]
            metrics: [abs-error]
        """)
    )
    env = dict(toy_env, HARNESS_PROGRESS_EVERY_S="1")  # 15 s by default
    run = subprocess.run(
        [HARNESS, "run", str(suite), "--tracking-uri", store, "--report-dir", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout + run.stderr  # sleepy timed out
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("cells 1/2")]
    assert any("running: noise/sleepy s0" in ln and "eta" in ln for ln in lines), run.stdout
    # a timeout is told apart from a failure, as in the closing tally
    assert any(ln.startswith("cells 2/2, 0 failed, 1 timed out") for ln in run.stdout.splitlines())
