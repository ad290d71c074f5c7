"""``harness run --dry-run`` a person can read: counts per task and state, then the first
cells of each task; ``-v`` lists every cell."""

from __future__ import annotations

import pytest
from fake_plugins import harness
from helpers import call_main

MANY = """
name: many-cells
seeds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
runs:
  - task: toy
    datasets: [{name: noise, grid: {n: [3, 6]}}]
    methods: [mean]
    metrics: [abs-error]
"""


def test_dry_run_counts_per_task_and_shows_the_first_cells(toy_env, write_suite, tmp_path):
    path = str(write_suite(MANY))
    short = harness(toy_env, "run", path, "--dry-run", cwd=tmp_path)
    assert short.returncode == 0, short.stderr
    assert "20 cells by task and state" in short.stdout
    assert "20: never run with these settings" in short.stdout
    rows = [line for line in short.stdout.splitlines() if "│ noise" in line]
    assert len(rows) == 5 and "-v shows every cell" in short.stdout
    assert "20 cells: 0 done, 20 to run" in short.stdout
    every = harness(toy_env, "run", path, "--dry-run", "-v", cwd=tmp_path)
    assert len([line for line in every.stdout.splitlines() if "│ noise" in line]) == 20


@pytest.fixture(scope="module")
def ran(toy_claims_run):
    """The session's run of the toy claims suite: ``(suite path, store URI)``."""
    return toy_claims_run


def test_dry_run_counts_an_added_methods_cells_apart(ran, registry, capsys, monkeypatch):
    from harness.cli.common import console

    suite, store = ran
    monkeypatch.setattr(console, "width", 200)
    code, out, _ = call_main(registry, capsys, "run", suite, "--dry-run", "--add-method", "skipper",
                             "--tracking-uri", store)  # fmt: skip
    assert code == 0
    rows = {line.split("│")[2].strip(): line for line in out.splitlines() if line.count("│") > 4}
    assert "6: never run" in rows["skipper"] and " 18 " in rows["mean"]
