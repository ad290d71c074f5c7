"""The claims: re-evaluated from the committed evidence, each control and rival shown
failing (or, where a rival holds, the claim uninformative), and each claim shown failing on a
deliberately wrong variant of its evidence."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from harness_icl_gmm import claims

from harness.claims import Select, Status
from harness.plugins.testing import assert_claims_table, evidence_verdicts

PLUGIN = Path(__file__).resolve().parents[1]
EVIDENCE = PLUGIN / "results" / "icl-gmm.parquet"


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return pd.read_parquet(EVIDENCE)


@pytest.fixture(scope="module")
def verdicts():
    return evidence_verdicts(PLUGIN, claims.CLAIMS)


def test_readme_claim_table_is_the_committed_evidence(verdicts):
    assert_claims_table(PLUGIN / "README.md", verdicts)


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.name)
def test_every_claim_is_decided_and_its_control_fails(verdicts, claim):
    verdict = verdicts[claim.name]
    assert verdict.status not in (Status.ERROR, Status.NOT_RUN, Status.INCONCLUSIVE), verdict.why
    assert verdict.control.status == Status.NOT_REPRODUCED, verdict.control


@pytest.mark.parametrize("claim", [c for c in claims.CLAIMS if c.rivals], ids=lambda c: c.name)
def test_the_model_that_learns_nothing_fails_in_the_subjects_place(verdicts, claim):
    outcome = verdicts[claim.name].rivals[claims.SHUFFLED]
    assert outcome.status == Status.NOT_REPRODUCED, outcome


def test_the_fixed_rule_reproduces_the_m_rate_so_the_claim_is_uninformative(verdicts):
    """W = 2 Lambda^-1, not trained, has the 1/sqrt(M) gap too: the M rate is a property of
    the model class with Lambda^-1 built in, not evidence of training."""
    verdict = verdicts["gap-rate-in-m"]
    assert verdict.rivals[claims.CLOSED_FORM].status == Status.REPRODUCED
    assert verdict.status == Status.UNINFORMATIVE
    assert claims.CLOSED_FORM in verdict.why


def test_the_n_claims_hold_beside_their_rival(verdicts):
    for name in ("limit-one-over-n", "limit-one-over-n-multiclass", "gap-rate-in-n"):
        assert verdicts[name].status == Status.REPRODUCED, verdicts[name].why


def test_the_factored_loss_fails_the_global_rate_from_its_saddle(results):
    """The control's evidence: GD on W = A B from the origin never moves (slowest stretch 0),
    while the merged loss runs at the local rate from every start."""
    rows = results[results["method"].eq(claims.GD) & results["method.solver"].eq("gd")]
    factored = rows[rows["method.parametrisation"].eq("factored")]
    origin = factored[factored["method.init_scale"].astype(float).eq(0.0)]
    assert np.allclose(origin["gd-rate.slowest"], 0.0)
    merged = rows[rows["method.parametrisation"].eq("merged")]
    assert merged["gd-rate.slowest"].min() > 0.9


def _power(frame: pd.DataFrame, column: str, along: str, exponent: float) -> pd.DataFrame:
    """``column`` replaced by ``x ** exponent`` times a per-seed constant: a wrong rate."""
    x = frame[along].astype(float)
    return frame.assign(**{column: x**exponent * (1 + frame["seed"].astype(float) / 10)})


def _stalls_far_away(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs from 4R stall for a stretch (slowest stretch at 0.2 of the local rate)."""
    far = frame["method.init_scale"].astype(float).eq(4.0)
    return frame.assign(**{"gd-rate.slowest": frame["gd-rate.slowest"].where(~far, 0.2)})


N, M = "dataset.train_length", "dataset.test_length"
WRONG = {
    "gd-global-linear-rate": _stalls_far_away,
    # W* approaching its limit like 1/sqrt(N), not 1/N
    "limit-one-over-n": lambda f: _power(f, "limit-distance.paired", N, -0.5),
    "limit-one-over-n-multiclass": lambda f: _power(f, "limit-distance.paired", N, -0.5),
    "gap-rate-in-n": lambda f: _power(f, "limit-posterior-gap.paired", N, -0.5),
    # a gap that stops shrinking with M
    "gap-rate-in-m": lambda f: _power(f, "posterior-gap", M, 0.0),
}


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.name)
def test_claim_is_not_reproduced_on_a_wrong_variant(results, claim):
    rows, _ = claim().selected(results)
    verdict = claim().evaluate(WRONG[claim.name](rows.copy()))
    assert verdict.status == Status.NOT_REPRODUCED, verdict.why


def test_the_global_rate_is_the_worst_start_of_each_seed():
    """A seed is as fast as its slowest start: one stalled start decides it."""
    rows = pd.DataFrame({"method": claims.GD, "seed": [0, 0, 1, 1], "method.parametrisation":
                         "merged", "gd-rate.slowest": [1.0, 0.1, 1.0, 0.9]})  # fmt: skip
    sample = claims._worst_start(rows, "gd-rate.slowest", "seed", Select(claims.GD))
    assert sample.estimate == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no rows"):
        claims._worst_start(rows, "gd-rate.slowest", "seed", Select("other"))
