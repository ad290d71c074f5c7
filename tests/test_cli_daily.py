"""The daily loop's rough edges (issue 30, item 8), through ``harness ARGS`` in this
process with the toy plugin: a partial run's report goes apart from the whole suite's,
``harness report`` without SUITE covers a suite made of includes, and a cell without a
result is told 'never run' or 'stale'. Each test failed on the harness before the fix
(what it showed is in its doc)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

RUN = "  - {task: toy, datasets: [{name: noise, params: {n: 4}}], methods: [mean, fragile]}\n"


@pytest.fixture
def harness(registry, monkeypatch, capsys, tmp_path):
    """``harness ARGS`` run in ``tmp_path``: its exit code, stdout and stderr."""
    from harness import cli

    monkeypatch.chdir(tmp_path)

    def call(*args: str) -> SimpleNamespace:
        code = 0
        try:
            cli.main([*args, *(["-j", "0"] if args[0] == "run" else [])], registry=registry)
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return call


def test_a_partial_run_writes_its_report_apart_from_the_whole_suites(harness, store, tmp_path):
    """Before: a run with --method replaced reports/<suite>/ with a report of one method."""
    suite = tmp_path / "daily.yaml"
    suite.write_text(f"name: daily\nseeds: [0, 1]\nruns:\n{RUN}")
    whole = harness("run", str(suite), "--tracking-uri", store)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    full = tmp_path / "reports" / "daily" / "report.md"
    before = full.read_text()
    assert "fragile" in before
    for option in (["--method", "mean"], ["--set", "seeds=[2]"], ["--dataset", "noise"]):
        part = harness("run", str(suite), "--tracking-uri", store, *option)
        assert part.returncode == 0, part.stdout + part.stderr
        assert full.read_text() == before, option  # the whole suite's report is kept
    folders = sorted(p.name for p in (tmp_path / "reports").iterdir())  # one per selection
    assert folders[:3] == ["daily", "daily+dataset-noise", "daily+method-mean"], folders
    assert len(folders) == 4 and folders[3].startswith("daily+set-seeds-2-"), folders


def test_a_partial_runs_report_never_replaces_another_suites(harness, store, tmp_path):
    """Before: 'daily --method mean' wrote reports/daily-method-mean/, the folder of the
    suite named 'daily-method-mean', replacing its whole report with one of a method."""
    for name in ("daily-method-mean", "daily"):
        (tmp_path / f"{name}.yaml").write_text(f"name: {name}\nseeds: [0, 1]\nruns:\n{RUN}")
    whole = harness("run", str(tmp_path / "daily-method-mean.yaml"), "--tracking-uri", store)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    other = tmp_path / "reports" / "daily-method-mean" / "report.md"
    before = other.read_text()
    assert "fragile" in before
    part = harness("run", str(tmp_path / "daily.yaml"), "--tracking-uri", store, "--method", "mean")
    assert part.returncode == 0, part.stdout + part.stderr
    assert other.read_text() == before  # the other suite's report is kept
    assert "fragile" not in (tmp_path / "reports" / "daily+method-mean" / "report.md").read_text()


def test_report_without_suite_covers_a_suite_made_of_includes(harness, store, tmp_path):
    """Before: only 'paper-b' was reported; 'everything' (includes only) was skipped."""
    (tmp_path / "b.yaml").write_text(f"name: paper-b\nseeds: [0, 1]\nruns:\n{RUN}")
    top = tmp_path / "top.yaml"
    top.write_text("name: everything\ninclude: [b.yaml]\n")
    ran = harness("run", str(top), "--tracking-uri", store)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = tmp_path / "all-reports"
    report = harness("report", "--tracking-uri", store, "--out", str(out))
    assert report.returncode == 0, report.stdout + report.stderr
    assert "everything: 4 cells ->" in report.stdout and "paper-b: 4 cells ->" in report.stdout
    assert (out / "everything" / "report.md").is_file()


def test_results_tells_never_run_from_stale(harness, store, tmp_path):
    """Before: '2 of 3 cells have no result for the current code and suite', whether a cell
    never ran or ran with other metrics."""
    suite = tmp_path / "s.yaml"
    text = (
        "name: s\nruns:\n  - task: toy\n    datasets: [{name: noise, params: {n: 4}}]\n"
        "    methods: [mean]\n    metrics: [abs-error, {name: scaled, params: {scale: SCALE}}]\n"
    )
    suite.write_text(text.replace("SCALE", "1.0"))
    first = harness("run", str(suite), "--tracking-uri", store, "--seeds", "0,1")
    assert first.returncode == 0, first.stdout + first.stderr
    suite.write_text(text.replace("SCALE", "2.0"))  # seed 1's result is now stale
    again = harness("run", str(suite), "--tracking-uri", store, "--seeds", "0")
    assert again.returncode == 0, again.stdout + again.stderr
    export = harness("results", str(suite), "--tracking-uri", store, "--seeds", "0,1,2")
    assert export.returncode == 0, export.stderr
    said = " ".join(export.stderr.split())
    assert "2 of 3 cells have no result" in said, said
    assert "1 never run, 1 stale (metrics changed)" in said, said


def test_report_without_suite_selects_the_cells_of_a_runs_claim(harness, store, tmp_path):
    """Before: after 'run --claim X --method mean', 'harness report' rebuilt every cell of
    --method mean (5 never run) under reports/cl+method-mean, the --claim dropped."""
    methods = "[{name: mean, grid: {shift: [0.0, 1.0]}}, {name: mean, params: {kind: noisy}}]"
    suite = tmp_path / "cl.yaml"
    suite.write_text(
        "name: cl\nseeds: [0, 1, 2, 3, 4]\nruns:\n  - task: toy\n"
        f"    datasets: [{{name: noise, params: {{n: 40}}}}]\n    methods: {methods}\n"
    )
    claim = ("--claim", "shift-raises-error", "--method", "mean")
    ran = harness("run", str(suite), "--tracking-uri", store, *claim)
    assert ran.returncode == 0 and "10 cells" in ran.stdout, ran.stdout + ran.stderr
    report = harness("report", "--tracking-uri", store, "--out", str(tmp_path / "out"))
    assert report.returncode == 0, report.stdout + report.stderr
    assert "never run" not in report.stderr and "cl: 10 cells ->" in report.stdout, report
    text = (tmp_path / "out" / "cl+claim-shift-raises-error+method-mean" / "report.md").read_text()
    assert "--method mean --claim shift-raises-error" in " ".join(text.split())
