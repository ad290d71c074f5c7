"""The claims: re-evaluated from the committed evidence, and each one shown failing on a
deliberately wrong variant of that evidence."""

from pathlib import Path

import pandas as pd
import pytest
from harness_icl_gmm import claims

from harness.claims import Status, evaluate_claims, verdicts_markdown

PLUGIN = Path(__file__).resolve().parents[1]
EVIDENCE = PLUGIN / "results" / "icl-gmm.parquet"


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return pd.read_parquet(EVIDENCE)


@pytest.fixture(scope="module")
def verdicts(results):
    return {v.claim: v for v in evaluate_claims(claims.CLAIMS, results)}


def test_readme_claim_table_is_the_committed_evidence(verdicts):
    readme = (PLUGIN / "README.md").read_text()
    table = readme.split("<!-- claims:begin -->\n")[1].split("<!-- claims:end -->")[0]
    expected = verdicts_markdown(list(verdicts.values()))
    assert table.strip() == expected.strip()


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.name)
def test_every_claim_runs_and_its_control_fails(verdicts, claim):
    verdict = verdicts[claim.name]
    assert verdict.status not in (Status.ERROR, Status.NOT_RUN), verdict.reason
    assert verdict.control["status"] != Status.REPRODUCED


def _decide(claim, rows: pd.DataFrame) -> Status:
    return claim.hypothesis.decide(claim().statistic(rows))


def _power(frame: pd.DataFrame, column: str, along: str, exponent: float) -> pd.DataFrame:
    """``column`` replaced by ``x ** exponent`` times a per-seed constant: a wrong rate."""
    x = frame[f"dataset.{along}"].astype(float)
    return frame.assign(**{column: x**exponent * (1 + frame["seed"].astype(float) / 10)})


def _copy_errors(frame: pd.DataFrame, source: str, target: str) -> pd.DataFrame:
    """``target``'s test errors replaced by ``source``'s in the same seed and dataset."""
    key = ["seed", "dataset.mean_scale"]
    errors = frame[frame["method"].eq(source)].set_index(key)["test-error"]
    out = frame.copy()
    mine = out["method"].eq(target)
    out.loc[mine, "test-error"] = errors.loc[pd.MultiIndex.from_frame(out.loc[mine, key])].values
    return out


def _shift_helps(frame: pd.DataFrame) -> pd.DataFrame:
    """The shifted cells' error gap about 0.01 below the unshifted cells' of the same seed."""
    out = frame.copy()
    base = out[out["dataset.covariance_mix"].astype(float) == 0.0].set_index("seed")["error-gap"]
    shifted = out["dataset.covariance_mix"].astype(float) == 1.0
    seeds = out.loc[shifted, "seed"]
    out.loc[shifted, "error-gap"] = base.loc[seeds].values - 0.01 * (1 + seeds.astype(float) / 10)
    return out


WRONG = {
    # a sublinear (plateauing) GD: half the predicted rate
    "gd-linear-rate": lambda f: f.assign(**{"gd-rate.ratio": f["gd-rate.ratio"] * 0.5}),
    # W* approaching its limit like 1/sqrt(N), not 1/N
    "limit-one-over-n": lambda f: _power(f, "limit-distance.paired", "train_length", -0.5),
    "limit-one-over-n-multiclass": lambda f: _power(
        f, "limit-distance.paired", "train_length", -0.5
    ),
    "gap-rate-in-n": lambda f: _power(f, "limit-posterior-gap.paired", "train_length", -0.5),
    # a gap that stops shrinking with M
    "gap-rate-in-m": lambda f: _power(f, "posterior-gap", "test_length", 0.0),
    # a learner that ignores its context: the shuffled-label model in the trained one's place
    "beats-context-logistic-regression": claims._swap_shuffled,
    # a 3-layer model identical to the 1-layer one: no difference to find
    "one-layer-robust-to-mean-shift": lambda f: _copy_errors(f, claims.GD, "softmax-transformer"),
    # a model that gains from the covariance shift
    "covariance-shift-hurts-linear-attention": lambda f: _shift_helps(f),
}


@pytest.mark.parametrize("claim", claims.CLAIMS, ids=lambda c: c.name)
def test_claim_is_not_reproduced_on_a_wrong_variant(results, claim):
    rows, _ = claim().selected(results)
    assert _decide(claim, WRONG[claim.name](rows.copy())) != Status.REPRODUCED
