"""The claims: re-evaluated from the committed evidence, the README's table checked against
them, and each claim shown failing on a deliberately wrong variant of that evidence."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from harness_lsmooth_gd import claims

from harness.claims import Status, evaluate_claims
from harness.plugins.testing import assert_claims_table, evidence_verdicts

PLUGIN = Path(__file__).resolve().parents[1]
EVIDENCE = PLUGIN / "results" / "lsmooth-gd.parquet"


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


def _subject(frame: pd.DataFrame) -> pd.Series:
    return frame["method"].eq(claims.GD) & frame["method.ell_growth"].astype(str).str.lower().eq(
        "true"
    )


def _stalled(frame: pd.DataFrame) -> pd.DataFrame:
    """The paper's step censored at the budget near the barrier's wall, as its rivals are."""
    out = frame.copy()
    out.loc[_subject(out), "evals-to-tolerance.log10_evals"] = 3.0
    return out


def _growing(frame: pd.DataFrame) -> pd.DataFrame:
    """Calls growing like ||grad f(x0)||^0.3 (the rivals' dependence)."""
    out = frame.copy()
    rows = _subject(out) & out["dataset"].eq("power")
    out.loc[rows, "evals-to-tolerance.evals"] = (
        30
        * out.loc[rows, "dataset.start_grad"].astype(float) ** 0.3
        * (1 + out.loc[rows, "seed"].astype(float) / 100)
    )
    return out


def _plateau(column: str):
    """A run that stops improving: a rate near 0 in ``column``."""

    def wrong(frame: pd.DataFrame) -> pd.DataFrame:
        out = frame.copy()
        out.loc[_subject(out), column] = -0.01 * (1 + np.arange(_subject(out).sum()) % 3)
        return out

    return wrong


WRONG = {
    "lsmooth-step-leaves-barrier-wall": _stalled,
    "lsmooth-calls-independent-of-initial-gradient": _growing,
    "lsmooth-convex-rate": _plateau("tail-rate"),
    "lsmooth-nonconvex-gradient-rate": _plateau("gradient-rate"),
}


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.name)
def test_claim_is_not_reproduced_on_a_wrong_variant(results, claim):
    verdict = evaluate_claims([claim], WRONG[claim.name](results))[0]
    assert verdict.status == Status.NOT_REPRODUCED, verdict.reason


def test_slopes_per_starting_point(results):
    rows = results[_subject(results) & results["dataset"].eq("power")]
    slopes = claims.unit_slopes(rows, "evals-to-tolerance.evals", "dataset.start_grad")
    assert len(slopes) == claims.SEEDS
    assert slopes.max() < claims.SLOPE_THRESHOLD
