"""The claims, re-evaluated from the committed evidence: each rival and each control fails,
each k-NN claim fails on the other k's data, each DP claim fails the half-way mix, and a
wrong variant of every claim's results is not reproduced."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from harness_fair_regression import _claims, claims, harness_claims

from harness.claims import Select, Status, evaluate_claims, swap, verdicts_markdown

PLUGIN = Path(__file__).resolve().parents[1]
RESULTS = PLUGIN / "results"
BEGIN, END = "<!-- claims:begin -->", "<!-- claims:end -->"
DECIDED = {c.name for c in claims.CLAIMS}  # every claim is decided on the main evidence


@functools.cache
def _evidence(name: str = "fair-regression") -> pd.DataFrame:
    return pd.read_parquet(RESULTS / f"{name}.parquet")


@functools.cache
def _verdicts(name: str = "fair-regression") -> tuple:
    """The verdicts of the claims whose cells the evidence holds (as ``harness claims``
    gives them for the suite that made it)."""
    frame = _evidence(name)
    touched = [cls for cls in harness_claims() if not cls().selected(frame)[1]]
    return tuple(evaluate_claims(touched, frame, registered=list(harness_claims())))


def _table(readme: str, begin: str = BEGIN, end: str = END) -> str:
    return readme.split(begin, 1)[1].split(end, 1)[0].strip("\n") + "\n"


def test_readme_claim_table_is_the_evidence_verdicts():
    readme = (PLUGIN / "README.md").read_text()
    assert _table(readme) == verdicts_markdown(_verdicts())


def test_paper_scale_table_is_the_paper_evidence_verdicts():
    readme = (PLUGIN / "README.md").read_text()
    begin, end = "<!-- claims-rates:begin -->", "<!-- claims-rates:end -->"
    assert _table(readme, begin, end) == verdicts_markdown(_verdicts("fair-regression-rates"))


def test_every_claim_reproduces_with_each_rival_and_control_failing():
    verdicts = _verdicts()
    assert {v.claim for v in verdicts} == DECIDED
    for v in verdicts:
        assert v.status == Status.REPRODUCED, (v.claim, v.reason)
        assert v.control.status == Status.NOT_REPRODUCED, v.claim
        for name, rival in v.rivals.items():
            assert rival.status == Status.NOT_REPRODUCED, (v.claim, name)


def _status(cls, rows: pd.DataFrame) -> Status:
    return cls().evaluate(rows).status


def _rows(cls) -> pd.DataFrame:
    rows, missing = cls().selected(_evidence())
    assert not missing
    return rows.copy()


@pytest.mark.parametrize(
    ("cls", "other"),
    [(claims.FairRateKNNBalanced, claims.CLASS), (claims.FairRateKNNClass, claims.BALANCED)],
    ids=["balanced-on-class-data", "class-on-balanced-data"],
)
def test_knn_claim_is_not_reproduced_on_the_other_k_data(cls, other):
    assert _status(cls, swap(_rows(cls), other, cls.subject)) == Status.NOT_REPRODUCED


@pytest.mark.parametrize("cls", [claims.DemographicParityCrime, claims.DemographicParityLaw])
def test_dp_claim_is_not_reproduced_by_the_half_way_mix(cls):
    rows = swap(_rows(cls), claims.HALFWAY.select(), claims.POST)
    assert _status(cls, rows) == Status.NOT_REPRODUCED


# -- wrong variants: each corruption keeps its claim from "reproduced" -------------------


def _scale(rows: pd.DataFrame, select: Select, metric: str, factor: float) -> None:
    mask = select.mask(rows)
    rows.loc[mask, metric] = rows.loc[mask, metric] * factor


def _ks_doubled(rows):  # a post-processor that leaves the groups twice as apart
    _scale(rows, claims.POST, "ks-unfairness", 2.0)


def _moved_too_far(rows):  # a fair predictor 40% further from the base than the projection
    _scale(rows, claims.POST, "cost-to-base", 1.4)


def _fair_risk_flat(rows):  # fair risk that does not fall with n: its smallest-n value
    ordered = rows.assign(_n=rows["dataset.n_train"].astype(float)).sort_values("_n")
    keys = ["seed", "method.regressor", "method.map_rows"]
    first = ordered.groupby(keys, dropna=False)["fair-risk"].transform("first")
    rows.loc[first.index, "fair-risk"] = first


def _fair_risk_tenfold_at_largest_n(rows):  # the bound's ratio broken at the largest n
    n = rows["dataset.n_train"].astype(float)
    largest = n.eq(n.groupby(rows["dataset.model"]).transform("max"))
    rows.loc[largest, "fair-risk"] = rows.loc[largest, "fair-risk"] * 10


def _balanced_too_slow(rows):  # k = n^(3/4) at the class rate: fair risk times n^(1/8)
    mask = claims.BALANCED.mask(rows)
    n = rows.loc[mask, "dataset.n_train"].astype(float)
    rows.loc[mask, "fair-risk"] = rows.loc[mask, "fair-risk"] * (n / 500) ** 0.125


def _class_too_fast(rows):  # k = n^(2/3) at the balanced rate: fair risk times n^(-1/8)
    mask = claims.CLASS.mask(rows)
    n = rows.loc[mask, "dataset.n_train"].astype(float)
    rows.loc[mask, "fair-risk"] = rows.loc[mask, "fair-risk"] * (n / 500) ** -0.125


def _alpha_ignored(rows):  # a learner that ignores alpha: the fully fair excess risk
    rows["excess-risk"] = rows["dataset.cost_of_fairness"].astype(float)


def _port_off(rows):  # a port one part in 10^6 off
    _scale(rows, claims.PORT, "mse", 1 + 1e-6)


WRONG = {
    "dp-by-post-processing-crime": _ks_doubled,
    "dp-by-post-processing-law": _ks_doubled,
    "cost-identity-crime": _moved_too_far,
    "cost-identity-law": _moved_too_far,
    "meta-theorem-bound-knn": _fair_risk_tenfold_at_largest_n,
    "meta-theorem-bound-ridge": _fair_risk_tenfold_at_largest_n,
    "fair-rate-ridge": _fair_risk_flat,
    "fair-rate-knn-balanced": _balanced_too_slow,
    "fair-rate-knn-class": _class_too_fast,
    "alpha-trade-off": _alpha_ignored,
    "equipy-port-fidelity": _port_off,
}


@pytest.mark.parametrize("cls", claims.CLAIMS, ids=lambda c: c.name)
def test_claim_fails_on_a_wrong_variant(cls):
    rows = _rows(cls)
    WRONG[cls.name](rows)
    assert _status(cls, rows) != Status.REPRODUCED


def test_dp_threshold_is_the_ks_quantile_of_calibration_and_test_noise():
    # 1.358 sqrt(1/205 + 1/194 + 1/205 + 1/194): groups of the 60/20/20 split of crime
    expected = 1.358 * np.sqrt(2 * (1 / 205 + 1 / 194))
    assert pytest.approx(expected) == claims.DemographicParityCrime.threshold
    assert pytest.approx(2 * 1.3**2) == _claims.BOUND_C
