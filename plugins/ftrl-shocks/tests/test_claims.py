"""The claims: re-evaluated from the committed evidence, the README tables checked against
them, and each claim shown failing on a deliberately wrong variant of that evidence."""

from pathlib import Path

import pandas as pd
import pytest
from harness_ftrl_shocks import claims

from harness.claims import Status
from harness.plugins.testing import assert_claims_table, evidence_verdicts

PLUGIN = Path(__file__).resolve().parents[1]
EVIDENCE = PLUGIN / "results" / "ftrl-shocks.parquet"


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return pd.read_parquet(EVIDENCE)


@pytest.fixture(scope="module")
def verdicts():
    return evidence_verdicts(PLUGIN, claims.CLAIMS)


@pytest.mark.parametrize("readme", ["README.md", "results/README.md"])
def test_readme_claim_table_is_the_committed_evidence(verdicts, readme):
    assert_claims_table(PLUGIN / readme, verdicts)


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.name)
def test_every_claim_is_reproduced_and_its_control_and_rivals_fail(verdicts, claim):
    verdict = verdicts[claim.name]
    assert verdict.status == Status.REPRODUCED, verdict.why
    assert verdict.control.status == Status.NOT_REPRODUCED
    assert all(o.status == Status.NOT_REPRODUCED for o in verdict.rivals.values())


# Each wrong variant sets the claim's metric, in every row it reads, to a value on the wrong
# side: half the players never near a pure strategy, no returns, play drifting inward,
# settling nowhere, mass leaving the span.
WRONG = {
    "shocks-reach-pure-strategies": 0.5,
    "shocks-return-to-pure-strategies": 0.3,
    "shocks-drift-to-boundary": 0.05,
    "shocks-drift-to-boundary-rps": 0.3,
    "shocks-settle-only-at-pure-nash": 0.0,
    "closed-span-attracts-under-shocks": 0.6,
}


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.name)
def test_claim_is_not_reproduced_on_a_wrong_variant(results, claim):
    rows, _ = claim().selected(results)
    wrong = rows.assign(**{claim.metric: WRONG[claim.name]})
    verdict = claim().evaluate(wrong)
    assert verdict.status == Status.NOT_REPRODUCED, verdict.why
