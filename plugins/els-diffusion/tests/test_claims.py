"""The claims: re-evaluated from the committed evidence, the results README's table checked
against them, and each claim shown failing on a deliberately wrong variant of that evidence."""

from pathlib import Path

import pandas as pd
import pytest
from harness_els_diffusion import claims

from harness.claims import Select, Status, evaluate_claims, swap
from harness.plugins.testing import assert_claims_table, evidence_verdicts

PLUGIN = Path(__file__).resolve().parents[1]
EVIDENCE = PLUGIN / "results" / "els-diffusion.parquet"


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return pd.read_parquet(EVIDENCE)


@pytest.fixture(scope="module")
def verdicts():
    return evidence_verdicts(PLUGIN, claims.CLAIMS)


def test_results_readme_claim_table_is_the_committed_evidence(verdicts):
    assert_claims_table(PLUGIN / "results" / "README.md", verdicts)


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.name)
def test_every_claim_is_reproduced_and_its_rivals_and_control_fail(verdicts, claim):
    verdict = verdicts[claim.name]
    assert verdict.status == Status.REPRODUCED, verdict.reason
    assert verdict.control.status == Status.NOT_REPRODUCED
    assert all(o.status == Status.NOT_REPRODUCED for o in verdict.rivals.values())


def _in_place_of(source: Select, target: Select):
    return lambda frame: swap(frame, source, target)


WRONG = {
    # ELS without equivariance: LS's samples in its place
    "els-predicts-trained-network": _in_place_of(claims.LS, claims.ELS),
    "els-beats-local-score": _in_place_of(claims.LS, claims.ELS),
    # ELS with the whole image as its patch: no locality
    "els-beats-non-local-machines": _in_place_of(claims.WHOLE_IMAGE, claims.ELS),
    # an ideal machine that mixes patches (ELS) does not copy
    "ideal-score-memorises": _in_place_of(claims.ELS, Select("ideal-score")),
    # a network that memorised: nearest-neighbour copies in its place
    "trained-network-is-novel": _in_place_of(
        Select("nearest-neighbour"), Select("trained-network")
    ),
}


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.name)
def test_claim_is_not_reproduced_on_a_wrong_variant(results, claim):
    verdict = evaluate_claims([claim], WRONG[claim.name](results))[0]
    assert verdict.status == Status.NOT_REPRODUCED, verdict.reason
