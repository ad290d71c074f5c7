"""The reading commands (``harness results``, ``report``): the options that shaped a run,
suites made of includes, never-run and stale cells told apart, spreadsheet-safe CSV, only
current cells in a report."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import FRAGILE_RUN, TWO_SEEDS, call_main, run_tracked

from harness import cli


@pytest.fixture(scope="module")
def ran(toy_claims_run):
    """The session's run of the toy claims suite: ``(suite path, store URI)``."""
    return toy_claims_run


def test_the_csv_export_of_the_cli_is_spreadsheet_safe(ran, registry, capsys, monkeypatch):
    suite, store = ran

    real = pd.DataFrame.to_csv

    def with_formula(self, *args, **kwargs):
        assert self["task"].iloc[0] == "'=toy"
        return real(self, *args, **kwargs)

    from harness.reports import aggregates as summary

    tidy = summary.tidy_results
    monkeypatch.setattr(summary, "tidy_results", lambda rows: tidy(rows).assign(task="=toy"))
    monkeypatch.setattr(pd.DataFrame, "to_csv", with_formula)
    code, _, err = call_main(registry, capsys, "results", suite, "--tracking-uri", store)
    assert code == 0, err


def test_report_without_suite_covers_a_suite_made_of_includes(harness, store, tmp_path):
    """Before: only 'paper-b' was reported; 'everything' (includes only) was skipped."""
    (tmp_path / "b.yaml").write_text(f"name: paper-b\nseeds: [0, 1]\nruns:\n{FRAGILE_RUN}")
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


def test_report_of_every_suite_shows_only_current_cells(
    registry, write_suite, store, tmp_path, capsys
):
    """`harness report` without TWO_SEEDS: each experiment's cells as its last logged suite
    defines them with the code now, never runs of an older metric list pooled in as more
    seeds (it used to show 8 rows here, half with the old scale)."""
    import pandas as pd

    tracker, first, _ = run_tracked(registry, write_suite(TWO_SEEDS.replace("SCALE", "1.0")), store)
    run_tracked(registry, write_suite(TWO_SEEDS.replace("SCALE", "1000.0")), store)
    capsys.readouterr()
    cli.main(["report", "--tracking-uri", store, "--out", str(tmp_path / "r")], registry=registry)
    printed = capsys.readouterr()
    assert "integrity: 4 cells ->" in printed.out and "integrity" not in printed.err, printed
    stats = pd.read_csv(tmp_path / "r" / "integrity" / "toy-summary.csv").set_index(
        ["method", "metric"]
    )["mean"]
    for method in ("mean", "fragile"):
        assert stats[method, "scaled"] == pytest.approx(1000.0 * stats[method, "abs-error"])
    assert len(tracker.results(first.experiment_id)) == 8  # what is stored: both lists


HARNESS = str(Path(sys.executable).with_name("harness"))


@pytest.fixture(scope="module")
def finished(daily_run):
    """The session's `harness run` of the daily suite (tests/conftest.py)."""
    return daily_run


def test_results_export_numbers_status_and_provenance(finished):
    base = [HARNESS, "results", str(finished["suite"]), "--tracking-uri", finished["store"]]
    csv = subprocess.run(base, env=finished["env"], capture_output=True, text=True, timeout=120)
    assert csv.returncode == 0, csv.stderr
    table = pd.read_csv(pd.io.common.StringIO(csv.stdout))
    assert len(table) == 24
    assert {"seed", "status", "run_id", "plugin_version", "dataset.n", "time.run"} <= set(
        table.columns
    )
    assert table["abs-error"].dtype == float
    out = finished["tmp"] / "daily.parquet"
    subprocess.run(
        [*base, "--format", "parquet", "--out", str(out)], env=finished["env"], check=True
    )
    assert pd.read_parquet(out)["status"].value_counts().to_dict() == {
        "ok": 12,
        "skipped": 6,
        "failed": 6,
    }
    blob = subprocess.run(
        [*base, "--format", "json"], env=finished["env"], capture_output=True, text=True
    )
    data = json.loads(blob.stdout)
    assert data["suite"] == "daily" and len(data["rows"]) == 24 and data["config"]["runs"]


def test_results_and_report_take_the_options_that_shaped_the_run(tmp_path, _empty_store):
    """Cells added by --add-method or --seeds are exported and reported when the same
    options are given; a report of the suite without them shows the suite's own cells."""

    from fake_plugins import toy_environment

    shutil.copy(_empty_store, tmp_path / "mlflow.db")
    store, env = f"sqlite:///{tmp_path}/mlflow.db", toy_environment(tmp_path / "site")
    suite = tmp_path / "small.yaml"
    suite.write_text(
        "name: small\nseeds: [0]\nruns:\n  - task: toy\n    datasets: [noise]\n"
        "    methods: [mean]\n    metrics: [abs-error]\n"
    )
    shape = ["--add-method", "mean[shift=2.0]", "--seeds", "0,1"]
    common = ["--tracking-uri", store]

    def harness(*args):
        return subprocess.run(
            [HARNESS, *args], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
        )

    assert harness("run", str(suite), *common, *shape).returncode == 0
    shaped = harness("results", str(suite), *common, *shape)
    plain = harness("results", str(suite), *common)
    assert shaped.returncode == 0 and plain.returncode == 0, shaped.stderr + plain.stderr
    shaped_rows = pd.read_csv(pd.io.common.StringIO(shaped.stdout))
    assert len(shaped_rows) == 4 and sorted(shaped_rows["method.shift"]) == [0, 0, 2, 2]
    assert len(pd.read_csv(pd.io.common.StringIO(plain.stdout))) == 1
    report = harness("report", str(suite), *common, "--out", str(tmp_path / "r"), *shape)
    assert report.returncode == 0, report.stderr
    assert (
        "4 cells" in report.stdout and "shift=2.0" in (tmp_path / "r/small/report.md").read_text()
    )
    # the report names the options that chose its cells; so does a report of every suite
    chosen = "Cells selected by --seeds 0,1 --add-method mean[shift=2.0]"
    unescaped = (tmp_path / "r/small/report.md").read_text().replace("\\", "")  # \[ in Markdown
    assert chosen in unescaped
    assert harness("report", *common, "--out", str(tmp_path / "all")).returncode == 0
    assert chosen in (tmp_path / "all/small/report.md").read_text().replace("\\", "")
    # an export says how many of the cells asked for have no result
    wider = harness("results", str(suite), *common, "--seeds", "0,1,2", "--out", "w.csv")
    assert wider.returncode == 0 and "1 of 3 cells have no result" in wider.stderr
    unnamed = harness("report", *common, "--seeds", "0,1")
    assert unnamed.returncode == 2 and "--seeds shape a suite: name it" in unnamed.stderr
