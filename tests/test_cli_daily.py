"""The daily loop's rough edges (issue 30, item 8), through a real ``harness`` process:
a partial run's report goes apart from the whole suite's, ``harness report`` without SUITE
covers a suite made of includes, and a cell without a result is told 'never run' or
'stale'. Each test failed on the harness before the fix (what it showed is in its doc)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HARNESS = str(Path(sys.executable).parent / "harness")

RUN = "  - {task: toy, datasets: [{name: noise, params: {n: 4}}], methods: [mean, fragile]}\n"


def harness(env, *args, cwd):
    return subprocess.run(
        [HARNESS, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_a_partial_run_writes_its_report_apart_from_the_whole_suites(toy_env, store, tmp_path):
    """Before: a run with --method replaced reports/<suite>/ with a report of one method."""
    suite = tmp_path / "daily.yaml"
    suite.write_text(f"name: daily\nseeds: [0, 1]\nruns:\n{RUN}")
    whole = harness(toy_env, "run", str(suite), "--tracking-uri", store, cwd=tmp_path)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    full = tmp_path / "reports" / "daily" / "report.md"
    before = full.read_text()
    assert "fragile" in before
    for option in (["--method", "mean"], ["--set", "seeds=[2]"], ["--dataset", "noise"]):
        part = harness(toy_env, "run", str(suite), "--tracking-uri", store, *option, cwd=tmp_path)
        assert part.returncode == 0, part.stdout + part.stderr
        assert full.read_text() == before, option  # the whole suite's report is kept
    folders = sorted(p.name for p in (tmp_path / "reports").iterdir())
    assert folders[0] == "daily" and len(folders) == 4, folders  # one apart per selection
    assert all(name.startswith("daily-part-") for name in folders[1:]), folders


def test_report_without_suite_covers_a_suite_made_of_includes(toy_env, store, tmp_path):
    """Before: only 'paper-b' was reported; 'everything' (includes only) was skipped."""
    (tmp_path / "b.yaml").write_text(f"name: paper-b\nseeds: [0, 1]\nruns:\n{RUN}")
    top = tmp_path / "top.yaml"
    top.write_text("name: everything\ninclude: [b.yaml]\n")
    ran = harness(toy_env, "run", str(top), "--tracking-uri", store, cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = tmp_path / "all-reports"
    report = harness(toy_env, "report", "--tracking-uri", store, "--out", str(out), cwd=tmp_path)
    assert report.returncode == 0, report.stdout + report.stderr
    assert "everything: 4 cells ->" in report.stdout and "paper-b: 4 cells ->" in report.stdout
    assert (out / "everything" / "report.md").is_file()


def test_results_tells_never_run_from_stale(toy_env, store, tmp_path):
    """Before: '2 of 3 cells have no result for the current code and suite', whether a cell
    never ran or ran with other metrics."""
    suite = tmp_path / "s.yaml"
    text = (
        "name: s\nruns:\n  - task: toy\n    datasets: [{name: noise, params: {n: 4}}]\n"
        "    methods: [mean]\n    metrics: [abs-error, {name: scaled, params: {scale: SCALE}}]\n"
    )
    suite.write_text(text.replace("SCALE", "1.0"))
    first = harness(
        toy_env, "run", str(suite), "--tracking-uri", store, "--seeds", "0,1", cwd=tmp_path
    )
    assert first.returncode == 0, first.stdout + first.stderr
    suite.write_text(text.replace("SCALE", "2.0"))  # seed 1's result is now stale
    again = harness(
        toy_env, "run", str(suite), "--tracking-uri", store, "--seeds", "0", cwd=tmp_path
    )
    assert again.returncode == 0, again.stdout + again.stderr
    export = harness(
        toy_env, "results", str(suite), "--tracking-uri", store, "--seeds", "0,1,2", cwd=tmp_path
    )
    assert export.returncode == 0, export.stderr
    said = " ".join(export.stderr.split())
    assert "2 of 3 cells have no result" in said, said
    assert "1 never run, 1 stale (metrics changed)" in said, said
