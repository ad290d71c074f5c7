"""The daily loop (issue 14) through the real CLI: the closing tally, failure lines that name
the cell in full, results as data, and a report you can scan."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from harness.reports.aggregates import format_number, summary_stats
from harness.reports.tables import summary_table

HARNESS = str(Path(sys.executable).with_name("harness"))

SUITE = """
name: daily
seeds: [0, 1, 2]
runs:
  - task: toy
    datasets: [{name: noise, grid: {n: [3, 30]}}]
    methods: [mean, {name: mean, params: {shift: 5.0}}, boom, skipper]
    metrics: [abs-error, stats, never]
"""


@pytest.fixture(scope="module")
def finished(tmp_path_factory, _empty_store):
    """One real `harness run` of SUITE (module-scoped: the tests below read its outputs)."""
    import shutil

    from fake_plugins import toy_environment

    tmp = tmp_path_factory.mktemp("daily")
    shutil.copy(_empty_store, tmp / "mlflow.db")
    store = f"sqlite:///{tmp}/mlflow.db"
    env = toy_environment(tmp / "site")
    suite = tmp / "daily.yaml"
    suite.write_text(textwrap.dedent(SUITE))
    cmd = [HARNESS, "run", str(suite), "--tracking-uri", store, "--report-dir", str(tmp)]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    return {"run": run, "tmp": tmp, "store": store, "env": env, "suite": suite}


def test_the_run_ends_with_one_tally_line(finished):
    run = finished["run"]
    assert run.returncode == 1  # boom fails
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith("12 ok, 6 skipped, 6 failed, 0 timed out in "), last


def test_a_failure_line_names_the_cell_in_full_with_its_run(finished):
    lines = [ln for ln in finished["run"].stdout.splitlines() if "failed: toy" in ln]
    assert len(lines) == 6
    assert len(set(lines)) == 6  # n=3 and n=30 are told apart (before: printed twice)
    line = next(ln for ln in lines if "noise(n=30, scale=1.0)" in ln and "seed=2" in ln)
    assert "boom" in line and "RuntimeError: boom" in line
    assert "(run http://127.0.0.1:5000/#/experiments/" in line


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


def test_the_report_opens_with_contents_and_a_summary_and_writes_numbers(finished):
    folder = finished["tmp"] / "daily"
    page = (folder / "report.html").read_text()
    assert page.index("Contents") < page.index("Summary per task") < page.index("Mean ± 95%")
    assert "Best method per dataset and metric" in page
    assert "12 ok, 6 skipped, 6 failed, 0 timed out · latest cell" in page
    numbers = pd.read_csv(folder / "toy-summary.csv")
    assert {"mean", "std_error", "ci_low", "ci_high", "n"} <= set(numbers.columns)
    assert numbers["mean"].dtype == float


def test_round_off_noise_prints_as_zero_and_sub_keys_stay_together(registry):
    rows = pd.DataFrame(
        {
            "cell_hash": list("ab"),
            "run_id": list("ab"),
            "task": ["toy"] * 2,
            "dataset": ["noise"] * 2,
            "method": ["mean"] * 2,
            "seed": ["0", "1"],
            "status": ["ok"] * 2,
            "stats.min": [-2.22e-13, 2.22e-13],
            "abs-error": [1.0, 1.0],
            "stats.max": [3.0, 3.0],
        }
    )
    table = summary_table(rows, registry)
    assert list(table.columns) == ["seeds", "stats.min", "stats.max", "abs-error ↓"]
    assert table.iloc[0]["stats.min"].startswith("0 ± ")
    assert table.iloc[0]["abs-error ↓"] == "1 ± 0"
    assert summary_stats(rows, registry)["std_error"].iloc[1] == 0.0
    assert format_number(0.03799711350757817) == "0.038"


def test_an_included_suite_logs_to_its_own_experiment_with_unique_run_names(
    registry, write_suite, store, tmp_path, capsys
):
    from harness.runs.runner import run_suite
    from harness.store.tracking import Tracker
    from harness.suites.loading import load_suite

    write_suite(
        """
        name: paper-b
        seeds: [0, 1]
        runs:
          - task: toy
            datasets: [{name: noise, grid: {n: [3, 4]}}]
            methods: [mean]
            metrics: [abs-error]
        """,
        "b.yaml",
    )
    top = write_suite(
        """
        name: everything
        include: [b.yaml]
        runs:
          - task: toy
            datasets: [noise]
            methods: [{name: mean, params: {shift: 1.0}}]
            metrics: [abs-error]
        """,
        "top.yaml",
    )
    suite = load_suite(top, registry)
    tracker = Tracker(store)
    outcome = run_suite(suite, registry, tracker)
    assert list(outcome.experiments) == ["paper-b", "everything"]
    paper = tracker.client.search_runs(
        [tracker.experiment_id("paper-b")], "tags.`harness.kind` = 'cell'"
    )
    assert len(paper) == 4 and all(r.data.params["method.shift"] == "0.0" for r in paper)
    names = [r.info.run_name for r in paper]
    assert len(set(names)) == 4 and any("n=3" in n for n in names)
    assert len(tracker.suite_results(suite)) == 5
    # running the included suite alone resumes the same cells
    again = run_suite(load_suite(suite.path.with_name("b.yaml"), registry), registry, tracker)
    assert again.ran == 0
    # `harness report` of every suite: the top suite's report holds the included suite's
    # cells too, as its run's report does (before: 1 cell, and "4 of 5 cells have no
    # result"); the included suite's holds its own 4
    from harness import cli

    capsys.readouterr()
    cli.main(["report", "--tracking-uri", store, "--out", str(tmp_path / "r")], registry=registry)
    printed = capsys.readouterr()
    assert "everything: 5 cells ->" in printed.out and "paper-b: 4 cells ->" in printed.out
    assert printed.err == "", printed.err


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


def test_results_and_report_take_the_options_that_shaped_the_run(tmp_path, _empty_store):
    """Cells added by --add-method or --seeds are exported and reported when the same
    options are given; a report of the suite without them shows the suite's own cells."""
    import shutil

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


def test_one_huge_value_does_not_print_real_values_as_zero(registry):
    """The noise floor follows the column's typical magnitude, not its largest: next to
    1e308, a real 1.5e9 is shown (it printed "0" when the floor was 1e-9 of the maximum),
    while round-off next to values of order 1 still prints as 0."""
    rows = pd.DataFrame(
        {
            "cell_hash": list("abcd"),
            "run_id": list("abcd"),
            "task": ["toy"] * 4,
            "dataset": ["noise"] * 4,
            "method": ["mean"] * 4,
            "seed": ["0"] * 4,
            "status": ["ok"] * 4,
            "method.shift": ["0", "1", "2", "3"],
            "abs-error": [1e308, 1.5e9, 1.0, -2.2e-13],
        }
    )
    texts = list(summary_table(rows, registry)["abs-error ↓"])
    assert texts == ["1e+308", "1.5e+09", "1", "0"], texts
