"""The claims: on synthetic results each rival and each control fails, each wrong variant of
the subject fails its claim, a missing cell is not run; and the committed evidence gives the
README's tables."""

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from harness_bandit_safe_regret import claims, reports
from harness_bandit_safe_regret.claims import CLAIMS, GRID, SEEDS

from harness.claims import Status, evaluate_claims, verdicts_markdown
from harness.claims.evidence import read_results

PLUGIN = Path(__file__).resolve().parents[1]
EVIDENCE = PLUGIN / "results" / "bandit-safe-regret.parquet"
NORMAL = ("safety-normal-form", "exploitation-normal-form")
SEQUENCE = ("safety-sequence-form", "exploitation-sequence-form")
SAFETY = ("safety-normal-form", "safety-sequence-form")
EXPLOITATION = ("exploitation-normal-form", "exploitation-sequence-form")

# per form: game, its params, best fixed strategy's gain per round against the fixed
# opponent, subject (method, params), learner alone, comparator alone
FORMS = (
    ("rock-paper-scissors", {}, 1.0, ("phased-aggression", {"c0": 1.0, "fixed_alpha": -1.0}),
     ("exp3-ix", {}), ("minimax", {})),
    ("kuhn-poker", {"comparator_form": "behavioural"}, 0.132,
     ("phased-aggression-sequence-form", {"c0": 1.0, "test": "paper", "fixed_alpha": -1.0}),
     ("ixomd", {}), ("phased-aggression-sequence-form",
                     {"c0": 1.0, "test": "paper", "fixed_alpha": 0.0})),
)  # fmt: skip


def _against(best, T, regret_best):
    """(Reg(mu_c), Reg(best)) against the fixed opponent: their difference is what the best
    fixed strategy gains over mu_c, best per round, whatever the method."""
    return regret_best - best * T, regret_best


def _safe(opponent, T, best, k=50.0, power=0.5):
    """Phased aggression: Reg(mu_c) 0.4; against fixed, Reg(best) k best T^power (half the
    best's gain banked at T = 1e4 with the defaults)."""
    if opponent == "fixed":
        return _against(best, T, k * best * T**power)
    return 0.4, 30 * math.sqrt(T)


def _learner(opponent, T, best):
    """The learner alone: exploits (Reg(best) 3 best sqrt T) but Reg(mu_c) 0.7 sqrt T."""
    if opponent == "fixed":
        return _against(best, T, 3 * best * math.sqrt(T))
    return 0.7 * math.sqrt(T), 3 * math.sqrt(T)


def _comparator(opponent, T, best):
    """mu_c alone: Reg(mu_c) 0, Reg(best) linear against fixed."""
    return 0.0, (best * T if opponent == "fixed" else 1.0)


def _frame(subject=_safe, learner=_learner, comparator=_comparator, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for game, game_params, best, *methods in FORMS:
        for (method, params), model in zip(methods, (subject, learner, comparator), strict=True):
            for T, opponents in GRID:
                for opponent in opponents:
                    for s in range(SEEDS[T]):
                        regret_c, regret_best = model(opponent, T, best)
                        rows.append({
                            "task": "bandit-safe-regret", "dataset": game, "method": method,
                            "seed": s, "status": "ok", "run_id": f"{len(rows)}",
                            "dataset.T": str(T), "dataset.opponent": opponent,
                            **{f"dataset.{k}": str(v) for k, v in game_params.items()},
                            **{f"method.{k}": str(v) for k, v in params.items()},
                            "regret-vs-comparator": regret_c + rng.normal(0, 0.02),
                            "regret-vs-best": regret_best * (1 + rng.normal(0, 0.02)),
                        })  # fmt: skip
    return pd.DataFrame(rows)


def _verdicts(frame):
    return {v.claim: v for v in evaluate_claims(CLAIMS, frame)}


def _statuses(frame):
    return {name: v.status for name, v in _verdicts(frame).items()}


def test_claims_hold_for_a_safe_exploiting_method_and_every_rival_and_control_fails():
    verdicts = _verdicts(_frame())
    assert {name: v.status for name, v in verdicts.items()} == dict.fromkeys(
        NORMAL + SEQUENCE, Status.REPRODUCED
    )
    for v in verdicts.values():
        assert v.control.status == Status.NOT_REPRODUCED, v.claim
        assert len(v.rivals) == 2
        assert {o.status for o in v.rivals.values()} == {Status.NOT_REPRODUCED}, v.claim


def test_a_rival_that_passes_makes_the_claim_uninformative():
    # the learner alone made as safe as the subject: it passes, so the claim rules nothing out
    verdicts = _verdicts(_frame(learner=_safe))
    for name in NORMAL + SEQUENCE:
        assert verdicts[name].status == Status.UNINFORMATIVE
        assert "reproduces it too" in verdicts[name].reason


def test_safety_fails_for_a_learner_that_plays_the_comparator():
    # frozen learner (feedback ignored): safe but no gain, Reg(best) linear
    statuses = _statuses(_frame(subject=_comparator))
    assert {statuses[n] for n in NORMAL + SEQUENCE} == {Status.NOT_REPRODUCED}


def test_both_claims_fail_for_a_learner_whose_regret_to_mu_c_grows():
    # importance weights with q_t, or the comparator ignored: Reg(mu_c) ~ sqrt T
    statuses = _statuses(_frame(subject=_learner))
    assert {statuses[n] for n in NORMAL + SEQUENCE} == {Status.NOT_REPRODUCED}


def test_one_unsafe_opponent_alone_fails_both_claims():
    frame = _frame()
    bad = frame["dataset.opponent"].eq("bait-and-switch") & frame["method.fixed_alpha"].eq("-1.0")
    frame.loc[bad, "regret-vs-comparator"] += 5.0
    statuses = _statuses(frame)
    assert {statuses[n] for n in NORMAL + SEQUENCE} == {Status.NOT_REPRODUCED}


def test_exploitation_fails_on_a_regret_to_the_best_that_grows_almost_linearly():
    def slow(opponent, T, best):
        return _safe(opponent, T, best, k=0.05, power=0.9)  # exploits, slower than sqrt T

    statuses = _statuses(_frame(subject=slow))
    assert [statuses[n] for n in EXPLOITATION] == [Status.NOT_REPRODUCED] * 2
    assert [statuses[n] for n in SAFETY] == [Status.REPRODUCED] * 2


def test_safety_fails_on_a_gain_below_a_quarter_of_the_best():
    def timid(opponent, T, best):
        return _safe(opponent, T, best, k=80.0)  # banks a fifth at T = 1e4: too late

    statuses = _statuses(_frame(subject=timid))
    assert [statuses[n] for n in SAFETY] == [Status.NOT_REPRODUCED] * 2
    assert [statuses[n] for n in EXPLOITATION] == [Status.REPRODUCED] * 2


def test_every_opponent_cell_of_the_subject_and_of_each_rival_is_required():
    frame = _frame()
    for method in ("phased-aggression", "minimax"):
        cell = frame["method"].eq(method) & frame["dataset.opponent"].eq("no-regret")
        verdicts = _verdicts(frame[~cell])
        for name in NORMAL:
            assert verdicts[name].status == Status.NOT_RUN
            assert f"{method}" in verdicts[name].reason and "no-regret" in verdicts[name].reason
        assert [verdicts[n].status for n in SEQUENCE] == [Status.REPRODUCED] * 2
    # one opponent at one horizon: best-response at 1e5 gone, at 1e4 and fixed at 1e5 kept
    late = frame["dataset.opponent"].eq("best-response") & frame["dataset.T"].eq("100000")
    verdicts = _verdicts(frame[~(late & frame["method"].eq("phased-aggression"))])
    assert [verdicts[n].status for n in NORMAL] == [Status.NOT_RUN] * 2


def test_min_seeds_is_counted_in_each_cell():
    frame = _frame()
    short = frame["dataset.opponent"].eq("best-response") & frame["dataset.T"].eq("100000")
    statuses = _statuses(frame[~(short & frame["seed"].ge(SEEDS[100_000] - 1))])
    assert set(statuses.values()) == {Status.NOT_RUN}


def test_heavy_tailed_gains_leave_no_safety_part_undecided():
    # gains with a long tail (G1 < -1.8: a t sample declines) count as the margin, -2
    frame = _frame()
    cell = frame["dataset.opponent"].eq("random-fixed") & frame["method.fixed_alpha"].eq("-1.0")
    tail = -np.exp(np.random.default_rng(1).normal(3, 2.5, cell.sum()))
    frame.loc[cell, "regret-vs-comparator"] = np.where(np.arange(cell.sum()) % 6, -5.0, tail)
    assert set(_statuses(frame).values()) == {Status.REPRODUCED}


def test_round_off_of_a_zero_regret_leaves_no_safety_part_undecided():
    # mu_c against the minimax opponent: Reg(mu_c) is 0 up to 1e-14 of floating-point noise
    frame = _frame()
    cell = frame["dataset.opponent"].eq("minimax") & frame["method.fixed_alpha"].eq("-1.0")
    frame.loc[cell, "regret-vs-comparator"] = np.where(frame.loc[cell, "seed"].eq(0), 1e-14, 0)
    assert set(_statuses(frame).values()) == {Status.REPRODUCED}


def test_a_missing_cell_or_a_regret_to_the_best_of_zero_is_named():
    subject = claims._Normal.subject
    with pytest.raises(ValueError, match="against fixed at T = 10,000"):
        claims._of({}, subject, "fixed", 10_000)
    zero = {("fixed", T): (np.arange(3), np.zeros(3)) for T in (10_000, 100_000)}
    with pytest.raises(ValueError, match="positive regret to the best"):
        list(claims._slope(zero, subject))


def test_worst_is_the_part_with_the_largest_p_value():
    held, failed = ("a", [0.1, 0.2, 0.15]), ("b", [3.0, 3.1, 2.9])
    assert claims.worst([held, failed]).estimate == pytest.approx(3.0)
    assert claims.worst([held, ("c", [0.5, 0.6, 0.55])]).estimate == pytest.approx(0.55)


def _between(text, tag):
    match = re.search(f"<!-- {tag}:begin -->\n(.*?)<!-- {tag}:end -->", text, re.S)
    assert match, f"README has no {tag} markers"
    return match.group(1)


@pytest.mark.skipif(not EVIDENCE.exists(), reason="no committed evidence")
def test_readme_tables_are_the_verdicts_grid_and_tails_of_the_committed_evidence():
    # read as `harness claims --results` reads it (params as strings, missing ones "nan")
    frame = read_results(EVIDENCE)
    verdicts = evaluate_claims(CLAIMS, frame)
    assert not [v.claim for v in verdicts if v.status in (Status.ERROR, Status.NOT_RUN)]
    readme = (PLUGIN / "README.md").read_text()
    assert _between(readme, "claims") == verdicts_markdown(verdicts)
    evidence = (PLUGIN / "results" / "README.md").read_text()
    assert _between(evidence, "grid") == reports.grid_markdown(frame)
    assert _between(evidence, "tails") == reports.tails_markdown(frame)
