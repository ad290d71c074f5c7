"""``harness run --decide``: more seeds only for the claims still undecided, read through
confidence sequences; bad budgets refused before any cell runs."""

from __future__ import annotations

import json
import math

import pytest
from fake_plugins import harness

DECIDE_SUITE = """
name: toy-decide
seeds: [0, 1, 2, 3, 4]
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 40}}]
    methods:
      - {name: mean, grid: {shift: [0.0, 1.0]}}
      - {name: mean, params: {kind: noisy}}
    metrics: [abs-error]
"""


@pytest.fixture(scope="module")
def decided(tmp_path_factory):
    from fake_plugins import toy_environment

    folder = tmp_path_factory.mktemp("decide")
    env = toy_environment(folder / "site")
    path = folder / "suite.yaml"
    path.write_text(DECIDE_SUITE)
    store = f"sqlite:///{folder}/mlflow.db"
    out = harness(env, "run", str(path), "-j", "0", "--tracking-uri", store, "--decide",
                  cwd=folder)  # fmt: skip
    return env, path, store, folder, out


def test_the_decide_pass_adds_seeds_only_where_a_claim_is_undecided(decided):
    _, _, _, folder, out = decided
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr
    assert "decide: shift-rival-noise: " in out.stdout and "+2 seed(s)" in out.stdout
    for claim in ("needs-fragile", "broken-claim"):  # not run, error: no seeds for them
        assert f"decide: {claim}" not in out.stdout
    assert "legacy-shift-raises-error: computes its own statistic" in out.stdout
    verdicts = json.loads((folder / "reports" / "toy-decide" / "claims.json").read_text())
    rival = next(v for v in verdicts if v["claim"] == "shift-rival-noise")
    assert rival["status"] != "inconclusive" or rival["estimate"]["n"] == 20
    assert "confidence sequence" in rival["estimate"]["test"]
    assert rival["estimate"]["n"] > 5
    units = [step[0] for step in rival["trajectory"]]
    assert units[0] == 5 and units == sorted(units) and units[-1] <= rival["estimate"]["n"]
    assert (folder / "reports" / "toy-decide" / "sequences.png").stat().st_size > 1000
    assert (
        "confidence sequences of the claims"
        in (folder / "reports" / "toy-decide" / "report.html").read_text()
    )


def test_a_rerun_of_the_decide_pass_resumes_its_batches(decided):
    env, path, store, folder, _ = decided
    again = harness(env, "run", str(path), "-j", "0", "--tracking-uri", store, "--decide",
                    cwd=folder)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "0 to run" in again.stdout or "already finished" in again.stdout


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--decide", "--decide-budget", "0s"], "must be a positive duration"),
        (["--decide", "--decide-budget", "soon"], "--decide-budget soon: the budget must be"),
        (["--decide-budget", "5m"], "--decide-budget needs --decide"),
    ],
)
def test_bad_budgets_exit_2_before_any_cell(options, message, tmp_path):
    from fake_plugins import toy_environment

    env = toy_environment(tmp_path / "site")
    path = tmp_path / "suite.yaml"
    path.write_text(DECIDE_SUITE)
    store = f"sqlite:///{tmp_path}/mlflow.db"
    out = harness(env, "run", str(path), "-j", "0", "--tracking-uri", store, *options,
                  cwd=tmp_path)  # fmt: skip
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert not (tmp_path / "mlflow.db").exists() or "ok" not in out.stdout


def test_a_claims_verdict_after_deciding_reads_the_seeds_the_pass_added(tmp_path):
    """With --claim the verdicts read the claim's family: the added seeds count there too."""
    from fake_plugins import toy_environment

    env = toy_environment(tmp_path / "site")
    path = tmp_path / "suite.yaml"
    path.write_text(DECIDE_SUITE)
    store = f"sqlite:///{tmp_path}/mlflow.db"
    out = harness(env, "run", str(path), "-j", "0", "--tracking-uri", store, "--decide",
                  "--claim", "shift-rival-noise", cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr
    saved = tmp_path / "reports" / "toy-decide+claim-shift-rival-noise" / "claims.json"
    (verdict,) = [v for v in json.loads(saved.read_text()) if v["claim"] == "shift-rival-noise"]
    assert verdict["estimate"]["n"] == verdict["trajectory"][-1][0] > 5
    table = (saved.parent / "report.md").read_text()  # the verdict table: units at stopping
    header = next(line for line in table.splitlines() if "| claim |" in line)
    row = next(line for line in table.splitlines() if "| shift-rival-noise |" in line)
    cells = dict(zip(header.split("|"), row.split("|"), strict=True))
    assert cells[" units "].strip() == str(verdict["trajectory"][-1][0])


def test_the_pass_shows_one_bar_and_why_each_claim_continues(decided):
    """One bar for the whole pass (its batches under it, no bar per batch), and per claim
    it continues: why, its interval and what it is tested against."""
    import re

    _, _, _, _, out = decided
    bars = [line for line in out.stdout.splitlines() if "━" in line and " eta " in line]
    assert len(bars) == 2 and bars[-1].startswith("decide "), bars  # the suite's, the pass's
    assert "decide: batch 1: 6 cell(s) to run" in out.stdout
    assert "toy-decide: 6 cells" not in out.stdout  # no batch opens a run line of its own
    done = re.search(r"decide .* (\d+)/(\d+) ", bars[-1])
    assert done and done.group(1) == done.group(2)  # at the end: every cell it ran, no more
    shown = re.search(r"decide: noisy-matches-plain: covers the margin: (\S+) \[(\S+), (\S+)\]"
                      r" vs within 0 \+- 0\.01 at 5 units; \+2 seed\(s\)", out.stdout)  # fmt: skip
    assert shown, out.stdout[:3000]
    low, high = float(shown.group(2)), float(shown.group(3))
    assert low < -0.01 and high > 0.01  # it does cover the margin


def test_the_verdict_table_gives_the_units_at_stopping(decided):
    """The table's n is the units the verdict rests on: the trajectory's last look or more
    (cells other claims' batches added count too)."""
    _, _, _, folder, out = decided
    verdicts = json.loads((folder / "reports" / "toy-decide" / "claims.json").read_text())
    first = next(v for v in verdicts if v["claim"] == "shift-raises-error")
    assert first["trajectory"][-1][0] == 7  # decided after the first batch
    row = next(line for line in out.stdout.splitlines()
               if line.lstrip().startswith("shift-raises-error "))  # fmt: skip
    assert f" {first['estimate']['n']} " in row


def test_the_report_links_and_draws_the_sequences_with_their_margins(decided, monkeypatch):
    from matplotlib.axes import Axes

    from harness.claims.verdicts import Verdict
    from harness.reports.folder import sequences_plot

    _, _, _, folder, _ = decided
    md = (folder / "reports" / "toy-decide" / "report.md").read_text()
    assert "](sequences.png)" in md
    saved = json.loads((folder / "reports" / "toy-decide" / "claims.json").read_text())
    drawn = []
    real = Axes.axhline
    monkeypatch.setattr(
        Axes, "axhline", lambda ax, y=0, *a, **k: drawn.append(y) or real(ax, y, *a, **k)
    )
    looked = [v for v in saved if v["trajectory"]]

    def band(v):  # JSON holds an infinite edge as null
        low, high = v["band"]
        return (-math.inf if low is None else low, math.inf if high is None else high)

    verdicts = [
        Verdict(v["claim"], v["task"], "", "", v["hypothesis"], "seed", v["status"],
                band=band(v), trajectory=tuple(map(tuple, v["trajectory"])))
        for v in looked
    ]  # fmt: skip
    assert sequences_plot(verdicts, folder / "again.png")
    margins = [edge for v in looked for edge in v["band"] if edge is not None]
    assert sorted(drawn) == sorted(margins)


def test_the_pass_eta_counts_later_batches_and_stops_at_the_budget():
    import time

    from harness.cli.progress import _PassEta
    from harness.runs.cell import CellResult
    from harness.runs.events import CellReport
    from harness.suites.identity import Cell

    def cell(seed):
        return Cell("t", "d", {}, "m", {}, seed, (), None, ())

    eta = _PassEta(1, None, deadline=None)
    eta.later = [cell(s) for s in range(10, 20)]  # later batches: 10 cells
    eta.harness_run_start([cell(1), cell(2)])
    result = CellResult(cell(1).cell_hash, "ok", start_ms=0, end_ms=2000)
    eta.harness_cell_logreport(CellReport(cell(1), result, "", ""))
    assert eta.seconds() == pytest.approx(11 * 2.0)  # 1 left of the batch + 10 later, 2 s each
    eta.deadline = time.monotonic() + 5
    assert eta.seconds() <= 5  # never past the pass's budget


def test_decided_prints_what_each_batch_decided(decided):
    env, _, _, folder, _ = decided
    path = folder / "reports" / "toy-decide" / "claims.json"
    out = harness(env, "report", "--decided", str(path), cwd=folder)
    assert out.returncode == 0, out.stderr
    assert "| 1 | 1 | shift-raises-error (reproduced, 7) |" in out.stdout
    assert out.stdout.startswith("4 claim(s) inconclusive after the suite's own seeds")
    (folder / "bad.json").write_text('{"not": "verdicts"}')
    bad = harness(env, "report", "--decided", str(folder / "bad.json"), cwd=folder)
    assert bad.returncode == 2 and "not a report's claims.json" in bad.stderr
