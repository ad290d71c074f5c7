"""``harness run --decide``: more seeds only for the claims still undecided, read through
confidence sequences; bad budgets refused before any cell runs."""

from __future__ import annotations

import json

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
    assert units[0] == 5 and units == sorted(units) and units[-1] == rival["estimate"]["n"]
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
