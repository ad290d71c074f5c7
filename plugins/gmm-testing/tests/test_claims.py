"""The claims: re-evaluated from the committed evidence (the README's table checked against
them), every rival and control shown failing, each claim shown failing on a deliberately
wrong variant of the evidence, and a method added from outside placed in the subject's
place of every claim."""

from __future__ import annotations

import pathlib

import pandas as pd
import pytest
from harness_gmm_testing import claims

from harness.claims import Status, evaluate_claims, verdicts_markdown

PLUGIN = pathlib.Path(__file__).resolve().parents[1]
EVIDENCE = PLUGIN / "results" / "gmm-testing.parquet"
PAPER_CLAIMS = [c for c in claims.CLAIMS if not c.exploratory]


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return pd.read_parquet(EVIDENCE)


@pytest.fixture(scope="module")
def verdicts(results) -> dict:
    return {v.claim: v for v in evaluate_claims(claims.CLAIMS, results)}


def test_readme_claim_table_is_the_committed_evidence(verdicts):
    readme = (PLUGIN / "README.md").read_text()
    table = readme.split("<!-- claims:begin -->\n")[1].split("<!-- claims:end -->")[0]
    assert table.strip() == verdicts_markdown(list(verdicts.values())).strip()


def test_the_scaling_evidence_reproduces_the_hardness_claim_across_d():
    # suites/paper/gmm-testing-scaling.yaml at d = 4, 6, 8, tabled in results/README.md.
    frame = pd.read_parquet(PLUGIN / "results" / "gmm-testing-scaling.parquet")
    assert sorted(pd.to_numeric(frame["dataset.d"]).unique()) == [4, 6, 8]
    asked = [claims.LowDegreeTestsStayAtLevel, claims.HermitePowerAtClosedForm]
    found = evaluate_claims(asked, frame, claims.CLAIMS)
    readme = (PLUGIN / "results" / "README.md").read_text()
    table = readme.split("<!-- scaling-claims:begin -->\n")[1].split("<!-- scaling-claims:end")[0]
    assert table.strip() == verdicts_markdown(found).strip()
    assert found[0].status == Status.REPRODUCED


def test_the_paper_claim_is_reproduced_and_the_others_are_exploratory(verdicts):
    assert [c.name for c in PAPER_CLAIMS] == ["low-degree-tests-stay-at-level"]
    assert verdicts["low-degree-tests-stay-at-level"].status == Status.REPRODUCED


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.name)
def test_every_rival_and_control_fails(verdicts, claim):
    verdict = verdicts[claim.name]
    assert verdict.control.status == Status.NOT_REPRODUCED, verdict.control
    assert len(verdict.rivals) == len(claim.rivals)
    for name, outcome in verdict.rivals.items():
        assert outcome.status == Status.NOT_REPRODUCED, (name, outcome)


def _rows(frame: pd.DataFrame, method: str, **params: float) -> pd.Series:
    keep = frame["method"].eq(method)
    for key, value in params.items():
        column = frame[f"method.{key}"] if key in ("max_degree",) else frame[f"dataset.{key}"]
        keep &= pd.to_numeric(column).eq(value)
    return keep


def _degree_six_read_as_low_degree(frame: pd.DataFrame) -> pd.DataFrame:
    """ "Degrees 1-5" reading degree 6: the oracle's power in the low-degree test's rows."""
    out = frame.copy()
    oracle = out[_rows(out, claims.HERMITE, max_degree=0)].set_index(["seed", "dataset.n"])
    low = _rows(out, claims.HERMITE, max_degree=5)
    keys = list(zip(out.loc[low, "seed"], out.loc[low, "dataset.n"], strict=True))
    out.loc[low, "power.rate"] = oracle.loc[keys, "power.rate"].to_numpy()
    return out


def _oracle_one_degree_high(frame: pd.DataFrame) -> pd.DataFrame:
    """The oracle reading degree m + 2: pilot power at the closed-form n falls to a third."""
    out = frame.copy()
    oracle = _rows(out, claims.HERMITE, max_degree=0)
    out.loc[oracle, "power.rate"] = out.loc[oracle, "power.rate"] / 3
    return out


def _henze_zirkler_blind(frame: pd.DataFrame) -> pd.DataFrame:
    """HZ with a smoothing beta 50 times too small: a kernel that sees nothing (its power is
    its type-I rate)."""
    out = frame.copy()
    hz = out["method"].eq("henze-zirkler")
    out.loc[hz, "power.rate"] = out.loc[hz, "type1-error.rate"]
    return out


WRONG = {
    "low-degree-tests-stay-at-level": _degree_six_read_as_low_degree,
    "hermite-power-at-closed-form-n": _oracle_one_degree_high,
    "henze-zirkler-ahead-at-k8": _henze_zirkler_blind,
}


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.name)
def test_claim_is_not_reproduced_on_a_wrong_variant(results, claim):
    verdict = evaluate_claims([claim], WRONG[claim.name](results), claims.CLAIMS)[0]
    assert verdict.status == Status.NOT_REPRODUCED, verdict.reason


def test_a_rival_that_holds_makes_the_hardness_claim_uninformative(results):
    # Wrong variant of the evidence: pancakes without signal, the degree-6 test blind too.
    out = results.copy()
    oracle = _rows(out, claims.HERMITE, max_degree=0)
    out.loc[oracle, "power.rate"] = out.loc[oracle, "type1-error.rate"]
    verdict = evaluate_claims([claims.LowDegreeTestsStayAtLevel], out, claims.CLAIMS)[0]
    assert verdict.status == Status.UNINFORMATIVE


def test_an_added_method_takes_the_subjects_place_in_every_claim(results):
    # A test from another plugin that sees everything (a k-NN divergence test, say).
    added = results[results["method"].eq(claims.HERMITE)].drop_duplicates(
        ["seed", "dataset.k", "dataset.delta", "dataset.d", "dataset.n"]
    )
    added = added.assign(method="knn-kl", plugin="outsider", **{"power.rate": 1.0})
    added = added.drop(columns=[c for c in added if c.startswith("method.")])
    frame = pd.concat([results, added], ignore_index=True)
    for verdict in evaluate_claims(claims.CLAIMS, frame):
        assert "knn-kl" in verdict.added, verdict.claim
        expected = {
            "low-degree-tests-stay-at-level": Status.NOT_REPRODUCED,
            "hermite-power-at-closed-form-n": Status.REPRODUCED,
            "henze-zirkler-ahead-at-k8": Status.REPRODUCED,
        }[verdict.claim]
        assert verdict.added["knn-kl"].status == expected, verdict.claim


def test_claims_module_is_short():
    assert (
        len((PLUGIN / "src" / "harness_gmm_testing" / "claims.py").read_text().splitlines()) <= 250
    )
