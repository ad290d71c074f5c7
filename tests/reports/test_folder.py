from __future__ import annotations

import json
import subprocess
import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness.reports.aggregates import mean_ci
from harness.reports.folder import write_report
from harness.reports.tables import shared_settings, summary_table


def _rows():
    return pd.DataFrame({
        "cell_hash": list("abcd"), "run_id": list("abcd"), "artifact_uri": [""] * 4,
        "task": ["toy"] * 4, "dataset": ["noise"] * 4, "method": ["mean"] * 4,
        "seed": ["0", "1", "0", "1"], "status": ["ok"] * 4,
        "dataset.n": ["5", "5", "9", "9"],
        "dataset.n_drawn": ["5", "6", "9", "10"],  # a described fact that varies by seed
        "method.shift": ["0.0"] * 4,
        "abs-error": [1.0, 3.0, 2.0, 2.0],
    })  # fmt: skip


def test_summary_groups_by_declared_params_not_described_facts(registry):
    table = summary_table(_rows(), registry)
    assert list(table.index) == [("noise(n=5)", "mean"), ("noise(n=9)", "mean")]
    # abs-error (1, 3): sd sqrt(2), n = 2, so the half-width is t(0.975, 1) * sqrt(2) / sqrt(2)
    half = stats.t.ppf(0.975, 1)
    assert table.loc[("noise(n=5)", "mean"), "abs-error ↓"] == f"2 ± {half:.2g}"
    assert table.loc[("noise(n=9)", "mean"), "seeds"] == "2"


def test_failed_cells_are_left_out_of_the_mean_and_counted(registry):
    rows = _rows().assign(status=["ok", "failed", "ok", "ok"])
    table = summary_table(rows, registry)
    assert table.loc[("noise(n=5)", "mean"), "seeds"] == "1 of 2 (1 failed)"
    assert table.loc[("noise(n=5)", "mean"), "abs-error ↓"] == "1"  # the failed 3.0 is out


def test_a_configuration_whose_cells_all_failed_shows_failed_not_a_number(registry):
    rows = _rows().assign(status=["failed", "timeout", "ok", "ok"])
    table = summary_table(rows, registry)
    assert table.loc[("noise(n=5)", "mean"), "abs-error ↓"] == "failed"
    assert table.loc[("noise(n=5)", "mean"), "seeds"] == "0 of 2 (1 failed, 1 timeout)"
    timed_out = summary_table(_rows().assign(status=["timeout", "timeout", "ok", "ok"]), registry)
    assert timed_out.loc[("noise(n=5)", "mean"), "abs-error ↓"] == "timed out"


def test_rows_follow_suite_order_and_columns_carry_the_direction(registry):
    rows = pd.concat([_rows().iloc[2:], _rows().iloc[:2]], ignore_index=True)
    table = summary_table(rows, registry)
    assert list(table.index) == [("noise(n=9)", "mean"), ("noise(n=5)", "mean")]
    assert "abs-error ↓" in table.columns  # AbsError.higher_is_better = False


def test_mean_ci_ignores_nan_and_handles_one_value():
    assert mean_ci([2.0, float("nan")])[0] == pytest.approx(2.0)
    assert mean_ci([])[2] == 0


def test_metrics_of_other_tasks_are_left_out(registry):
    rows = _rows().assign(**{"regret": float("nan")})  # a column from another task's cells
    assert "regret" not in summary_table(rows, registry).columns


def test_a_rerun_report_never_keeps_files_of_an_earlier_one(tmp_path, registry):
    write_report(_rows(), registry, None, "t", tmp_path)
    manifest = tmp_path / ".harness-report-files"
    assert "toy-summary.csv" in manifest.read_text()
    (tmp_path / "gone-task-summary.csv").write_text("an earlier report's table")
    manifest.write_text(manifest.read_text() + "gone-task-summary.csv\n")
    (tmp_path / "notes.txt").write_text("mine")  # not the report's: left alone
    write_report(_rows(), registry, None, "t", tmp_path)
    assert not (tmp_path / "gone-task-summary.csv").exists()
    assert (tmp_path / "toy-summary.csv").exists() and (tmp_path / "notes.txt").exists()


def test_a_task_whose_cells_all_failed_still_gets_a_table(registry):
    rows = _rows().assign(status="failed")
    table = summary_table(rows, registry)
    assert list(table["seeds"]) == ["0 of 2 (2 failed)", "0 of 2 (2 failed)"]


def test_runs_that_differ_only_in_metric_params_are_not_pooled(registry):
    rows = _rows().iloc[:2].assign(**{"metric.abs-error.scale": ["1", "100"]})
    table = summary_table(rows, registry)
    assert len(table) == 2 and set(table["seeds"]) == {"1"}


def test_settings_the_labels_leave_out_are_stated(registry):
    """Two runs of ``mean`` at different shifts have alike labels; the line tells them apart.
    A param that varies (n) is in the labels, not in the line."""
    head = "Settings the labels leave out (one value in every row of the component): "
    rows = _rows().assign(**{"dataset.scale": ["1.0"] * 4})
    assert summary_table(rows, registry).index[0][1] == "mean"  # shift=0.0 is in no label
    said = shared_settings(rows, registry)
    assert said == head + "dataset noise(scale=1.0); method mean(shift=0.0)."
    other = shared_settings(rows.assign(**{"method.shift": ["2.0"] * 4}), registry)
    assert other == head + "dataset noise(scale=1.0); method mean(shift=2.0)."
    varied = _rows().assign(**{"method.shift": ["0.0", "0.0", "2.0", "2.0"]})
    assert shared_settings(varied, registry) == ""  # every label names what varies


def test_a_configuration_in_two_runs_counts_each_seed_once(registry):
    """The same dataset, method and seeds in a second run (with one more metric) are not a
    second sample: n, the mean and the CI are those of one run."""
    once = _rows()
    twice = pd.concat(
        [once, once.assign(cell_hash=list("efgh"), run_id=list("efgh"), extra=[9.0] * 4)],
        ignore_index=True,
    )
    assert summary_table(twice, registry)["abs-error ↓"].equals(
        summary_table(once, registry)["abs-error ↓"]
    )
    assert list(summary_table(twice, registry)["seeds"]) == ["2", "2"]
    failed_again = twice.assign(status=["ok"] * 4 + ["failed"] * 4)
    assert list(summary_table(failed_again, registry)["seeds"]) == ["2", "2"]


def test_markdown_cells_keep_pipes_and_line_breaks_in_their_column(tmp_path, registry):
    rows = _rows().assign(**{"dataset.n": ["a|b", "a|b", "two\nlines", "two\nlines"]})
    write_report(rows, registry, None, "t", tmp_path)
    lines = (tmp_path / "report.md").read_text().splitlines()
    assert r"| noise(n=a\|b) | mean | 2 | 2 ± 13 |" in lines
    assert "| noise(n=two lines) | mean | 2 | 2 ± 0 |" in lines


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--seeds 5,6", "--timeout 5m"], "Cells selected by --seeds 5,6: the cells"),
        (["--timeout 5m", "--max-cells 10"], None),  # choose no cell: nothing to state
    ],
)
def test_a_report_states_the_options_that_chose_its_cells(tmp_path, registry, options, said):
    write_report(_rows(), registry, None, "t", tmp_path, selection=options)
    text = (tmp_path / "report.md").read_text()
    assert (said in text) if said else ("Cells selected" not in text)


@pytest.mark.parametrize(
    ("cells", "said"),
    [
        (6, "2 of 6 cells have no result (never run, stopped before they ran, or run with"),
        (4, "All 4 cells have a result."),
    ],
)
def test_a_report_states_how_many_of_the_suites_cells_have_no_result(
    tmp_path, registry, cells, said
):
    """A report built from a partial store (4 results of a 6-cell suite) says so under its
    tally, in both files; a complete one says every cell has a result."""
    write_report(_rows(), registry, None, "t", tmp_path, cells=cells)
    md = (tmp_path / "report.md").read_text()
    assert md.splitlines()[4].startswith(said)  # title, tally, then this line
    assert said in (tmp_path / "report.html").read_text()


def _many_keys(keys: int) -> pd.DataFrame:
    """15 cells (5 methods x 3 seeds) of one dict metric with ``keys`` keys."""
    rows = _rows().iloc[[0]].drop(columns="abs-error")
    rows = pd.concat([rows] * 15, ignore_index=True).assign(
        cell_hash=[f"h{i}" for i in range(15)],
        run_id=[f"r{i}" for i in range(15)],
        method=[f"m{i % 5}" for i in range(15)],
        seed=[str(i // 5) for i in range(15)],
    )
    values = np.random.default_rng(0).normal(size=(15, keys))
    metric = pd.DataFrame(values, columns=[f"power.k{i}" for i in range(keys)])
    return pd.concat([rows, metric], axis=1)


def test_the_report_is_linear_in_metric_keys(tmp_path, registry):
    """One dict metric with 20,000 keys over 15 cells: the report's CPU time is about ten
    times that of 2,000 keys (at most 20x) and a few seconds (at most 8 s; 2.3 s at load 9
    on the 2-core CI machine). The code that made a pandas call per metric column (a
    column per block in the wide table, one column set at a time) took 15.6 CPU-s and
    50-100 s of wall time there."""
    frames = {k: _many_keys(k) for k in (2000, 20000)}
    write_report(_many_keys(10), registry, None, "warm-up", tmp_path / "warm-up")  # imports
    seconds = {}
    for keys, frame in frames.items():
        tic = time.process_time()  # CPU time: what other processes on the machine do not add
        write_report(frame, registry, None, "keys", tmp_path / str(keys))
        seconds[keys] = time.process_time() - tic
    table = pd.read_csv(tmp_path / "20000" / "toy-mean-ci.csv")
    assert table.shape == (5, 2 + 1 + 20000)  # dataset, method, seeds, one column per key
    assert seconds[20000] <= 8.0 and seconds[20000] / seconds[2000] <= 20, seconds


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--hide-scrollbars", "--window-size=1400,900",
                  "--virtual-time-budget=5000"]  # fmt: skip
"""Headless Chromium at a 1,400 px wide, 900 px high window (the screenshot's size)."""

PROBE = """<script>
const tasks = [...document.querySelectorAll("nav > ul > li")];
const split = tasks.filter(li => li.getClientRects().length > 1 || new Set(
  [...li.querySelectorAll("li")].map(e => Math.round(e.getBoundingClientRect().left))).size > 1);
document.body.dataset.probe = JSON.stringify({width: document.documentElement.scrollWidth,
  viewport: window.innerWidth, tasks: tasks.length,
  split: split.map(li => li.querySelector("a").textContent)});
</script>"""
"""Appended to the page: its width, and the tasks whose contents entries do not share one
column (a task split across CSS columns has two client rectangles)."""


def _wide_document():
    """A report as wide as a real one gets: eleven tasks with 1 to 12 contents entries,
    a 16-column table of long method labels, verdicts naming long rivals, and a traceback
    with a 400-character line."""
    from harness.claims.verdicts import Outcome, Verdict
    from harness.reports.render import Document, Part, Section, anchor

    rival = "cnn-ensemble(members=4, steps=10, lr=1.0, width=[64,128,256,512], augment=c2)"
    verdicts = [
        Verdict(claim=f"claim-{i}-" + "long-name-" * 3, task="equivariant-ntk", source="s",
                statement="s", hypothesis="within 0 +- 1e-06", unit="seed", status="not-run",
                rivals={f"{rival}-{j}": Outcome(f"{rival}-{j}", "not-reproduced")
                        for j in range(3)},
                reason="Traceback: " + "x" * 400)
        for i in range(4)
    ]  # fmt: skip
    methods = [f"method-{i}[{','.join(f'param_{k}=value_{k}' for k in range(6))}]"
               for i in range(5)]  # fmt: skip
    wide = pd.DataFrame({f"metric-{c}-with-a-long-name ↓": ["0.123 ± 0.0456"] * 5
                         for c in range(16)}, index=methods)  # fmt: skip
    tasks = ["fair-regression", "gmm-testing", "weak-features", "margin-qml",
             "bandit-safe-regret", "label-noise", "icl-gmm", "ftrl-shocks", "lsmooth-gd",
             "equivariant-ntk", "els-diffusion"]  # fmt: skip
    sections = [
        Section(task=task, anchor=anchor("task", task), tally="40 ok", best=pd.DataFrame(),
                table=wide, table_anchor=anchor(task, "table"),
                parts=[Part(f"{task}-figure-{k}", anchor(task, str(k)), table=wide.iloc[:1])
                       for k in range(parts)])
        for task, parts in zip(tasks, [1, 4, 7, 3, 6, 12, 2, 5, 1, 4, 3], strict=True)
    ]  # fmt: skip
    return Document(title="all", tally="3,522 ok", provenance="p", verdicts=verdicts,
                    sections=sections)  # fmt: skip


def test_the_report_reads_at_1400_px_and_keeps_each_tasks_contents_together(tmp_path):
    """In headless Chromium at 1,400 px: the page is no wider than the window, and each
    task's contents entries stay in one column. Fails with the CSS before the fix
    (``nav{columns:2}``, nothing wrapped: 3,609 px wide, label-noise's entries split across
    the two columns)."""
    import html
    import shutil

    from harness.reports.render import render

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    _, page = render(_wide_document())
    path = tmp_path / "report.html"
    path.write_text(page.replace("</body>", PROBE + "</body>"))
    flags = [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    shot = tmp_path / "report.png"
    subprocess.run([chromium, *flags, f"--screenshot={shot}", path.as_uri()],
                   capture_output=True, timeout=120, check=False)  # fmt: skip
    assert shot.is_file() and shot.stat().st_size > 10_000
    dom = subprocess.run([chromium, *flags, "--dump-dom", path.as_uri()], capture_output=True,
                         text=True, timeout=120, check=False).stdout  # fmt: skip
    probe = json.loads(html.unescape(dom.split('data-probe="', 1)[1].split('"', 1)[0]))
    assert probe["viewport"] == 1400 and probe["tasks"] == 11, probe
    assert probe["width"] <= 1400, probe
    assert probe["split"] == [], probe


def test_the_report_opens_with_contents_and_a_summary_and_writes_numbers(daily_run):
    """Reads the session's one `harness run` of DAILY_SUITE (tests/conftest.py)."""
    folder = daily_run["tmp"] / "daily"
    page = (folder / "report.html").read_text()
    assert page.index("Contents") < page.index("Summary per task") < page.index("Mean ± 95%")
    assert "Best method per dataset and metric" in page
    assert "12 ok, 6 skipped, 6 failed, 0 timed out · latest cell" in page
    numbers = pd.read_csv(folder / "toy-summary.csv")
    assert {"mean", "std_error", "ci_low", "ci_high", "n"} <= set(numbers.columns)
    assert numbers["mean"].dtype == float
