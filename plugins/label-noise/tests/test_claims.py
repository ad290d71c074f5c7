"""Claims: the README's table is what the committed evidence gives, every control fails
its claim, and every claim fails on a deliberately wrong variant of the results."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from harness_label_noise.claims import CLAIMS

from harness.claims import Status, evaluate_claims, verdicts_markdown

ROOT = Path(__file__).resolve().parents[1]
EVIDENCE = ROOT / "results" / "label-noise.parquet"


@pytest.fixture(scope="module")
def evidence() -> pd.DataFrame:
    return pd.read_parquet(EVIDENCE)


@pytest.fixture(scope="module")
def verdicts(evidence):
    return evaluate_claims(CLAIMS, evidence)


def test_readme_claim_table_is_the_verdicts_of_the_committed_evidence(verdicts):
    text = (ROOT / "README.md").read_text()
    table = text.split("<!-- claims:begin -->\n", 1)[1].split("<!-- claims:end -->", 1)[0]
    assert table.strip() == verdicts_markdown(verdicts).strip()


def test_every_claim_evaluates_and_no_control_is_reproduced(verdicts):
    for v in verdicts:
        assert v.status not in (Status.ERROR, Status.NOT_RUN), (v.claim, v.reason)
        assert v.control["status"] != Status.REPRODUCED, v.claim


def _set(column: str, value: float) -> Callable[[pd.DataFrame], pd.DataFrame]:
    return lambda f: f.assign(**{column: value})


def _copy(target: str, source: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    return lambda f: f.assign(**{target: f[source]})


def _returns_last(method: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The method's returned model replaced by the fixed-horizon CNN's of the same seed
    (a stopping rule or selection that changes nothing)."""

    def wrong(f: pd.DataFrame) -> pd.DataFrame:
        out = f.copy()
        base = f[f["method"].eq("two-layer-cnn") & f["dataset.tau"].astype(float).eq(0.2)]
        final = base.groupby("seed")["test-summary.final"].first()
        rows = out["method"].eq(method)
        out.loc[rows, "test-summary.returned"] = out.loc[rows, "seed"].map(final)
        return out

    return wrong


WRONG = {
    # flipped labels fitted as soon as the clean ones: no Stage I
    "stage-one-rejects-flipped-labels": _copy("stages.noisy_fit_at_t_clean",
                                              "stages.noisy_fit_final"),
    # a model that cannot memorise: no Stage II
    "stage-two-memorises-flipped-labels": _set("stages.memorised", 0.0),
    # rho never overtakes gamma
    "signal-leads-then-noise-overtakes": lambda f: f.assign(**{
        "coefficient-order.both": -np.abs(f["coefficient-order.both"])}),
    "test-accuracy-peaks-then-falls": _set("test-summary.drop", 0.0),
    "final-test-error-at-least-half-tau": _set("test-summary.final", 1.0),
    # a stopping rule that always picks the last iterate
    "early-stopping-recovers-peak": _copy("test-summary.returned", "test-summary.final"),
    "small-loss-selection-recovers-peak": _returns_last("small-loss-cnn"),
    # a threshold that keeps a random half
    "loss-threshold-separates-flipped": _set("selection.balanced", 0.5),
    "digits-test-accuracy-peaks-then-falls": _set("test-summary.drop", 0.0),
    "digits-final-test-error-at-least-half-tau": _set("test-summary.final", 1.0),
}  # fmt: skip


def test_every_claim_has_a_wrong_variant():
    assert set(WRONG) == {c.name for c in CLAIMS}


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.name)
def test_claim_is_not_reproduced_on_its_wrong_variant(claim, evidence):
    verdict = claim().evaluate(WRONG[claim.name](evidence))
    assert verdict.status in (Status.NOT_REPRODUCED, Status.INCONCLUSIVE), verdict.reason
