"""The end of a run: one tally line, failure lines naming the cell in full, a partial run's
report apart from the whole suite's, ``--strict-claims`` with no claim evaluated."""

from __future__ import annotations

import pytest
from helpers import FRAGILE_RUN, call_main


@pytest.fixture(scope="module")
def ran(toy_claims_run):
    """The session's run of the toy claims suite: ``(suite path, store URI)``."""
    return toy_claims_run


def test_strict_claims_exits_3_when_a_suites_task_has_no_claim_evaluated(ran, registry, capsys):
    suite, store = ran
    registry.entries["claim"].clear()  # the paper's claims vanished
    code, _, err = call_main(registry, capsys, "claims", suite, "--tracking-uri", store)
    assert code == 0
    code, _, err = call_main(registry, capsys, "claims", suite, "--tracking-uri", store,
                             "--strict-claims")  # fmt: skip
    assert code == 3
    assert "--strict-claims: no claim of task toy was evaluated" in " ".join(err.split())


def test_a_partial_run_writes_its_report_apart_from_the_whole_suites(harness, store, tmp_path):
    """Before: a run with --method replaced reports/<suite>/ with a report of one method."""
    suite = tmp_path / "daily.yaml"
    suite.write_text(f"name: daily\nseeds: [0, 1]\nruns:\n{FRAGILE_RUN}")
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
        (tmp_path / f"{name}.yaml").write_text(f"name: {name}\nseeds: [0, 1]\nruns:\n{FRAGILE_RUN}")
    whole = harness("run", str(tmp_path / "daily-method-mean.yaml"), "--tracking-uri", store)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    other = tmp_path / "reports" / "daily-method-mean" / "report.md"
    before = other.read_text()
    assert "fragile" in before
    part = harness("run", str(tmp_path / "daily.yaml"), "--tracking-uri", store, "--method", "mean")
    assert part.returncode == 0, part.stdout + part.stderr
    assert other.read_text() == before  # the other suite's report is kept
    assert "fragile" not in (tmp_path / "reports" / "daily+method-mean" / "report.md").read_text()


@pytest.fixture(scope="module")
def finished(daily_run):
    """The session's `harness run` of the daily suite (tests/conftest.py)."""
    return daily_run


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
