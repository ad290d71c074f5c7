"""The claims of margin-qml: the statistic, each rival and control failing, a wrong variant
of each claim failing, and the README's tables rebuilt from the committed evidence."""

from __future__ import annotations

import ast
from pathlib import Path

import harness_margin_qml
import numpy as np
import pandas as pd
import pytest
from harness_margin_qml import _claims as mc
from harness_margin_qml import claims
from harness_margin_qml._reference import authors_results

from harness.claims import Greater, Status, TSample, evaluate_claims, verdicts_markdown

PLUGIN = Path(__file__).parents[1]
RESULTS = PLUGIN / "results"
SOURCE = PLUGIN / "src" / "harness_margin_qml"
PAPER = [c for c in claims.CLAIMS if not c.exploratory]


def evidence() -> pd.DataFrame:
    return pd.read_parquet(RESULTS / "margin-qml.parquet")


def verdicts(results: pd.DataFrame, only=None, family=claims.CLAIMS) -> dict:
    """Verdicts of ``only`` (default: every claim), Holm over ``family``."""
    asked = only or claims.CLAIMS
    return {v.claim: v for v in evaluate_claims(asked, results, registered=family)}


def alone(results: pd.DataFrame, claim) -> object:
    """``claim``'s verdict evaluated as a family of one (a wrong variant's test)."""
    return verdicts(results, [claim], [claim])[claim.name]


def section(marker: str) -> str:
    text = (PLUGIN / "README.md").read_text()
    start = text.index(f"<!-- {marker}:begin -->") + len(f"<!-- {marker}:begin -->")
    return text[start : text.index(f"<!-- {marker}:end -->")].strip()


@pytest.fixture(scope="module")
def committed() -> dict:
    return verdicts(evidence())


def test_plugin_contributes_every_claim_once_in_one_family():
    names = [c.name for c in harness_margin_qml.harness_claims()]
    assert names == [c.name for c in claims.CLAIMS] and len(set(names)) == len(names)
    assert {c.family_name() for c in PAPER} == {"harness_margin_qml"}
    assert all(c.declaration_problems() == [] for c in claims.CLAIMS)


def test_claims_are_declarations_without_an_import_circle():
    """claims.py is at most 250 lines; claims and reports do not import each other, and
    _engine does not import methods (which imports it)."""

    def imports(module: str) -> set[str]:
        tree = ast.parse((SOURCE / f"{module}.py").read_text())
        return {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}

    assert len((SOURCE / "claims.py").read_text().splitlines()) <= 250
    assert "harness_margin_qml.reports" not in imports("claims")
    assert "harness_margin_qml.claims" not in imports("reports")
    assert "harness_margin_qml.methods" not in imports("_engine")


def test_readme_claim_table_is_the_verdicts_of_the_committed_evidence(committed):
    assert section("claims") == verdicts_markdown(list(committed.values())).strip()
    status = {name: v.status for name, v in committed.items()}
    assert Status.ERROR not in status.values()
    assert status["mean-margin-beats-parameters-cluster-10q-r1"] == Status.NOT_RUN
    assert status["q1-beats-parameters-tfim-10q"] == Status.NOT_RUN


def test_one_claim_asked_alone_gets_the_verdict_of_the_family(committed):
    """Holm counts the whole family whichever claims a command asks for."""
    alone = verdicts(evidence(), [claims.NqeRaisesTraceDistance])
    assert alone["nqe-raises-trace-distance"] == committed["nqe-raises-trace-distance"]


def test_every_control_of_the_committed_evidence_is_a_distribution_that_fails(committed):
    for name in ("mean-margin-beats-parameters-cluster-8q-r1", "nqe-raises-trace-distance"):
        control = committed[name].control
        assert control.draws >= 20, name
        assert control.status == Status.NOT_REPRODUCED, (name, control.summary)
        assert control.failed >= 0.95, name


def test_nqe_rival_fails_and_the_claim_is_reproduced(committed):
    v = committed["nqe-raises-trace-distance"]
    (rival,) = v.rivals.values()
    assert rival.status == Status.NOT_REPRODUCED and rival.estimate.estimate < 0
    assert v.status == Status.REPRODUCED


def test_nqe_claim_fails_when_the_nqe_gains_less_than_the_margin():
    """Wrong variant: an NQE whose trace distance is the IQP's + 0.01 (below 0.05)."""
    rows = evidence()
    iqp = rows[rows["method"].eq("iqp-embedding")].set_index("seed")["trace-distance"]
    nqe = rows["method"].eq("nqe") & rows["method.pretrain_steps"].eq("1000")
    rows.loc[nqe, "trace-distance"] = rows.loc[nqe, "seed"].map(iqp).to_numpy() + 0.01
    assert alone(rows, claims.NqeRaisesTraceDistance).status == Status.NOT_REPRODUCED


@pytest.mark.parametrize(
    "variant, expected",
    [("parameter-count", Status.NOT_REPRODUCED), ("minus-gap", Status.NOT_REPRODUCED)],
)
def test_comparison_fails_on_a_wrong_measure(variant, expected):
    """Wrong variants of the margin: the parameter count itself (no advantage: every
    pseudo-value 0) and the gap reversed (the worst predictor)."""
    rows = evidence()
    for layers in (1, 2, 3, 4):
        source = rows[f"{mc.GAP}.L{layers}"]
        if variant == "parameter-count":
            source = rows[f"parameter-count.L{layers}"]
        rows[f"margin-mean.L{layers}"] = -source if variant == "minus-gap" else source
    assert alone(rows, claims.MeanMarginBeatsParametersCluster8q).status == expected


def test_comparison_passes_where_the_measure_is_the_gap_itself():
    """The test can say yes: synthetic architectures where the measure ranks the gap
    perfectly and the parameter count only loosely."""
    rng = np.random.default_rng(0)
    gap = rng.normal(size=12)
    params = gap + rng.normal(scale=1.5, size=12)
    sample = TSample.of(mc.pseudo_values(gap, gap.copy(), params))
    assert Greater(0.0).status(sample) == Status.REPRODUCED


def test_pseudo_values_are_the_direct_leave_one_out_jackknife():
    rng = np.random.default_rng(1)
    gap, measure, rival = rng.normal(size=(3, 9))
    measure[2] = measure[5]  # a tie
    fast = mc.pseudo_values(gap, measure, rival, sign=-1.0)

    def d(keep):
        return -(mc.tau_b(measure[keep], gap[keep]) - mc.tau_b(rival[keep], gap[keep]))

    full = d(np.arange(9))
    slow = [9 * full - 8 * d(np.delete(np.arange(9), i)) for i in range(9)]
    assert fast == pytest.approx(slow, abs=1e-12)
    assert mc.tau_b(measure, gap) == pytest.approx(
        pd.Series(measure).corr(pd.Series(gap), method="kendall"), abs=1e-12
    )


def test_comparison_holds_its_level_when_the_margin_has_no_advantage():
    """300 simulated suites (12 architectures, both measures at tau 0.7 with the gap): the
    claim's test says yes in at most 5% (level 0.025)."""
    rng = np.random.default_rng(2)
    gap, measure, params = np.moveaxis(mc.synthetic_means(0.7, 0.7, 12, rng, 300), 1, 0)
    hits = sum(Greater(0.0).status(TSample.of(p)) == Status.REPRODUCED
               for p in mc.pseudo_values(gap, measure, params))  # fmt: skip
    assert hits <= 15, hits


def test_random_per_architecture_keeps_one_value_per_architecture():
    rows = mc.random_per_architecture(evidence(), "margin-mean", np.random.default_rng(3))
    rows = rows[rows["dataset"].eq("cluster-phases")]
    per = rows.groupby(["method", "method.shared", "method.layers"], dropna=False)["margin-mean"]
    assert (per.nunique() == 1).all() and per.ngroups == 12


def test_readme_power_table_is_the_committed_simulation():
    power = pd.read_csv(RESULTS / "power.csv")
    assert section("power") == mc.power_markdown(power)
    assert set(power["claim"]) == {c.name for c in claims.CLAIMS}
    assert (power["size"] <= 0.05).all()


def test_readme_per_noise_table_is_the_authors_data():
    assert section("per-r") == mc.configuration_markdown(mc.configuration_table(authors_results()))


def test_authors_parquet_is_the_packaged_reference():
    stored = pd.read_parquet(RESULTS / "authors-cluster-10q.parquet")
    pd.testing.assert_frame_equal(stored, authors_results(), check_dtype=False)


def test_architecture_means_refuse_fewer_than_three_architectures():
    rows = mc.expand_groups(evidence())
    two = rows[rows["method"].eq("qcnn") & rows["method.layers"].isin([1, 2])
               & rows["method.shared"].eq("true")]  # fmt: skip
    with pytest.raises(ValueError, match="needs >= 3, got 2"):
        mc.architecture_means(two, (mc.GAP, "margin-mean"))
    with pytest.raises(ValueError, match="no column 'no-such-metric'"):
        mc.architecture_means(rows, (mc.GAP, "no-such-metric"))
