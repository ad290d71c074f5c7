"""The claims: their statistics on synthetic results (each flips on a deliberately wrong
variant), and their verdicts re-evaluated from the committed evidence, which the README's
tables must equal."""

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from harness_bandit_safe_regret import claims
from harness_bandit_safe_regret.claims import CLAIMS, OPPONENTS

from harness.claims import Status, evaluate_claims, verdicts_markdown
from harness.evidence import read_results

PLUGIN = Path(__file__).resolve().parents[1]
EVIDENCE = PLUGIN / "results" / "bandit-safe-regret-claims.parquet"
HORIZONS = (10_000, 100_000, 1_000_000)


def _rows(dataset, method, params, dataset_params, regret_c, regret_best, n=12, rng=None):
    """A synthetic ``harness results`` table: one row per (opponent, T, seed)."""
    rows = []
    for opponent in OPPONENTS:
        for T in HORIZONS:
            for seed in range(n):
                row = {
                    "task": "bandit-safe-regret",
                    "dataset": dataset,
                    "method": method,
                    "seed": seed,
                    "status": "ok",
                    "run_id": f"{dataset}-{method}-{opponent}-{T}-{seed}",
                    "dataset.T": str(T),
                    "dataset.opponent": opponent,
                    **{f"dataset.{k}": str(v) for k, v in dataset_params.items()},
                    **{f"method.{k}": str(v) for k, v in params.items()},
                }
                noise = rng.normal()
                row["regret-vs-comparator"] = regret_c(T) + noise * 0.05 * (1 + regret_c(T))
                row["regret-vs-comparator-peak"] = max(0.0, row["regret-vs-comparator"])
                row["regret-vs-best"] = regret_best(T) * (1 + 0.05 * noise)
                rows.append(row)
    return rows


def _synthetic(subject_c=lambda T: 0.4, subject_best=lambda T: 30 * math.sqrt(T)):
    """Both forms: the subject as given, the learner alone with Reg(mu_c) = 0.7 sqrt T, the
    comparator alone with Reg(best) = 0.13 T."""
    rng = np.random.default_rng(0)
    rows = []
    for form in (claims._NormalForm, claims._SequenceForm):
        dp = form.game_params
        rows += _rows(
            form.game, form.subject, form.subject_params, dp, subject_c, subject_best, rng=rng
        )
        rows += _rows(
            form.game, form.learner, {}, dp, lambda T: 0.7 * math.sqrt(T), math.sqrt, rng=rng
        )
        rows += _rows(form.game, "minimax", {}, dp, lambda T: 0.0, lambda T: 0.13 * T, rng=rng)
    return pd.DataFrame(rows)


def _statuses(frame):
    return {v.claim: v.status for v in evaluate_claims(CLAIMS, frame)}


def test_every_claim_is_reproduced_on_a_safe_and_exploiting_method():
    verdicts = evaluate_claims(CLAIMS, _synthetic())
    assert {v.claim: v.status for v in verdicts} == {c.name: Status.REPRODUCED for c in CLAIMS}
    for v in verdicts:  # and each claim's negative control is not
        assert v.control["status"] == Status.NOT_REPRODUCED


def test_safety_claims_flip_on_a_method_whose_regret_to_mu_c_grows():
    # a learner whose importance weights use q_t, or the learner alone: Reg(mu_c) ~ sqrt T
    statuses = _statuses(_synthetic(subject_c=lambda T: 0.5 * math.sqrt(T)))
    for name in ("safety-normal-form", "safety-sequence-form", "both-normal-form"):
        assert statuses[name] == Status.NOT_REPRODUCED
    assert statuses["exploitation-normal-form"] == Status.REPRODUCED


def test_safety_claims_flip_when_one_opponent_alone_breaks_them():
    frame = _synthetic()
    bad = frame["dataset.opponent"].eq("bait-and-switch") & frame["method"].str.startswith("phased")
    frame.loc[bad, "regret-vs-comparator"] += 5.0
    statuses = _statuses(frame)
    assert statuses["safety-normal-form"] == statuses["safety-sequence-form"]
    assert statuses["safety-normal-form"] == Status.NOT_REPRODUCED


def test_exploitation_claims_flip_on_a_learner_that_ignores_feedback():
    # a frozen learner never leaves mu_c: Reg(best) = g T, slope 1
    statuses = _statuses(_synthetic(subject_best=lambda T: 0.13 * T))
    for name in ("exploitation-normal-form", "exploitation-sequence-form", "both-sequence-form"):
        assert statuses[name] == Status.NOT_REPRODUCED
    assert statuses["safety-normal-form"] == Status.REPRODUCED


def test_too_few_seeds_is_not_run():
    frame = _synthetic()
    frame = frame[frame["seed"] < 3]
    assert set(_statuses(frame).values()) == {Status.NOT_RUN}


def test_slope_is_fitted_on_per_t_means():
    # per-T means 1, 10, 100 at T = 1e4, 1e5, 1e6 -> slope 1 whatever the per-seed scatter
    rows = []
    for T, mean in zip(HORIZONS, (1.0, 10.0, 100.0), strict=True):
        for seed, x in enumerate((0.5, 1.5) if HORIZONS[0] == T else (0.1, 1.9)):
            rows.append(
                {
                    "dataset.opponent": "fixed",
                    "dataset.T": str(T),
                    "seed": seed,
                    "regret-vs-best": x * mean,
                }
            )
    e = claims.slope_estimate(pd.DataFrame(rows))
    assert e.estimate == pytest.approx(1.0, abs=1e-12)


def _between(text, tag):
    match = re.search(f"<!-- {tag}:begin -->\n(.*?)<!-- {tag}:end -->", text, re.S)
    assert match, f"README has no {tag} markers"
    return match.group(1)


@pytest.mark.skipif(not EVIDENCE.exists(), reason="no committed evidence")
def test_readme_tables_are_the_verdicts_and_tails_of_the_committed_evidence():
    # read as `harness claims --results` reads it (params as strings, missing ones "nan")
    frame = read_results(EVIDENCE)
    verdicts = evaluate_claims(CLAIMS, frame)
    readme = (PLUGIN / "README.md").read_text()
    assert _between(readme, "claims") == verdicts_markdown(verdicts)
    assert _between(readme, "tails") == claims.tails_markdown(frame)


MAIN = PLUGIN / "results" / "bandit-safe-regret.parquet"


@pytest.mark.skipif(not MAIN.exists(), reason="no committed main-suite export")
def test_main_suite_export_evaluates_every_claim():
    # the file `make claims` reads: every claim finds its cells and computes a verdict
    verdicts = evaluate_claims(CLAIMS, read_results(MAIN))
    bad = {Status.ERROR, Status.NOT_RUN}
    assert not [(v.claim, v.status, v.reason[-300:]) for v in verdicts if v.status in bad]
