"""The claims: re-evaluated from the committed evidence (and the README table checked against
them), and each one shown to flip on a deliberately wrong variant of the statistic it rests
on, run for real on small instances (a broken test, not a rescaled p-value)."""

from __future__ import annotations

import dataclasses
import math
import pathlib

import numpy as np
import pandas as pd
import pytest
from harness_gmm_testing import _statistics as st
from harness_gmm_testing import claims, methods
from harness_gmm_testing._calibration import apply_test
from harness_gmm_testing.datasets import UniformPancakes
from harness_gmm_testing.metrics import Power, TypeOneError, threshold_spread

from harness.claims import Cells, Status, evaluate_claims, verdicts_markdown

PLUGIN = pathlib.Path(__file__).resolve().parents[1]
EVIDENCE = PLUGIN / "results" / "gmm-testing.parquet"


def cell_row(dataset: dict, method: type, params: dict, run=None, seed: int = 0) -> dict:
    """One ``harness results`` row of a pancakes-uniform cell, computed here: ``run`` (a
    ``(data, params, seed) -> TestOutput``) replaces the method's own ``run`` for a broken
    variant that keeps the method's name and params."""
    dp = UniformPancakes.Params(**dataset)
    component = UniformPancakes(dp)
    data = component.load(dp, seed)
    mp = method.Params(**params)
    output = (run or method(mp).run)(data, mp, seed)
    row = {"task": "gmm-testing", "dataset": "pancakes-uniform", "method": method.name,
           "seed": seed, "status": "ok", "run_id": f"test-{method.name}"}  # fmt: skip
    row |= {f"dataset.{k}": str(v) for k, v in dataclasses.asdict(dp).items()}
    row |= {f"dataset.{k}": str(v) for k, v in component.describe(data).items()}
    row |= {f"method.{k}": str(v) for k, v in dataclasses.asdict(mp).items()}
    for metric in (TypeOneError, Power):
        values = metric(metric.Params()).compute(data, output)
        row |= {f"{metric.name}.{k}": v for k, v in values.items()}
    return row


def verdict(claim: type, rows: list[dict]) -> Status:
    return claim().evaluate(pd.DataFrame(rows)).status


# -- the committed evidence ----------------------------------------------------------------


@pytest.fixture(scope="module")
def evidence() -> list:
    frame = pd.read_parquet(EVIDENCE)
    return evaluate_claims(claims.CLAIMS, frame)


def test_every_claim_evaluates_from_the_committed_evidence(evidence):
    assert [v.claim for v in evidence] == [c.name for c in claims.CLAIMS]
    for v in evidence:
        assert v.status not in (Status.ERROR, Status.NOT_RUN), (v.claim, v.reason)
        assert v.control is not None and v.control["status"] != Status.REPRODUCED, v.claim


def test_readme_claim_table_is_the_evidence_verdicts(evidence):
    text = (PLUGIN / "README.md").read_text()
    table = text.split("<!-- claims:begin -->\n", 1)[1].split("<!-- claims:end -->", 1)[0]
    assert table.strip() == verdicts_markdown(evidence).strip()


def test_evidence_readme_names_suite_commit_and_command():
    notes = (PLUGIN / "results" / "README.md").read_text()
    assert "suites/gmm-testing.yaml" in notes and "harness results" in notes
    commits = set(pd.read_parquet(EVIDENCE)["git_commit"])
    assert commits and all(commit[:7] in notes for commit in commits)


# -- each claim flips on a wrong variant ----------------------------------------------------

THIN = {"k": 8, "delta": 0.95, "d": 2}  # m = 5; closed-form n_0.9 = 449 in d = 2


def hermite_cells(at: dict, *params: dict) -> tuple[Cells, ...]:
    return tuple(Cells("pancakes-uniform", ("hermite-moment-test",), at, p, 1) for p in params)


class TinyBlind(claims.LowDegreeTestsStayAtLevel):
    requires = hermite_cells({**THIN, "n": 640}, claims.ORACLE, {"max_degree": 5})


def test_hardness_claim_flips_when_a_low_degree_test_reads_degree_m_plus_1():
    # d = 2, n = 640 (1.4 x 449): the degree-6 test has power >= 0.9. Wrong variant: the
    # "degrees 1..5" Hermite test with an off-by-one degree (max_degree + 1, the first
    # unmatched one): labelled low-degree, it sees the signal.
    at = {**THIN, "n": 640, "trials": 100}
    oracle = cell_row(at, methods.HermiteMomentTest, {"calibration_trials": 199})
    assert oracle["power.rate"] >= 0.9
    low = {"max_degree": 5, "calibration_trials": 199}

    def off_by_one(data, params, seed):
        m = params.max_degree + 1
        return apply_test(data, lambda X, rng: st.hermite_z(X, m), seed,
                          calibration_trials=params.calibration_trials)  # fmt: skip

    sound = cell_row(at, methods.HermiteMomentTest, low)
    broken = cell_row(at, methods.HermiteMomentTest, low, run=off_by_one)
    assert sound["power.rate"] < 0.2
    assert verdict(TinyBlind, [oracle, broken]) == Status.NOT_REPRODUCED


class TinyClosedForm(claims.HermitePowerAtClosedForm):
    configurations = ({"k": 4, "d": 2, "n": 170},)  # closed form 2.93 sqrt(10) / 0.233^2
    requires = hermite_cells({"delta": 0.95, **configurations[0]}, claims.ORACLE)


def test_closed_form_claim_flips_when_the_test_uses_the_wrong_degree():
    # Wrong variant: the oracle reads m + 2 (an odd degree the symmetric law matches), so
    # its power at the closed-form n falls to the level.
    at = {"k": 4, "delta": 0.95, "d": 2, "n": 170, "trials": 100}
    sound = cell_row(at, methods.HermiteMomentTest, {"calibration_trials": 99})
    assert sound["dataset.predicted_n90"] == "170"

    def wrong_degree(data, params, seed):
        m = data.law.matched_degree + 2
        return apply_test(data, lambda X, rng: st.hermite_z(X, m), seed,
                          calibration_trials=params.calibration_trials)  # fmt: skip

    broken = cell_row(at, methods.HermiteMomentTest, {"calibration_trials": 99}, wrong_degree)
    assert verdict(TinyClosedForm, [sound]) != Status.NOT_REPRODUCED
    assert verdict(TinyClosedForm, [broken]) == Status.NOT_REPRODUCED


HZ = {"calibration": "mc", "calibration_trials": 99}


class TinyThin(claims.HenzeZirklerAheadOnThinPancakes):
    configurations = ({**THIN, "n": 225},)
    requires = claims._PowerGap._requires(configurations)


def test_henze_zirkler_claim_flips_when_its_bandwidth_is_broken(monkeypatch):
    # Wrong variant: HZ's beta 50 times too small: its kernel then weighs degree j by about
    # beta^j, so it sees little beyond the matched moments of degree <= 5.
    at = {**THIN, "n": 225, "trials": 60}
    hermite = cell_row(at, methods.HermiteMomentTest, {"calibration_trials": 99})
    sound = cell_row(at, methods.HenzeZirkler, HZ)
    assert verdict(TinyThin, [hermite, sound]) == Status.REPRODUCED
    beta = st._henze_zirkler_beta
    monkeypatch.setattr(st, "_henze_zirkler_beta", lambda n, d: beta(n, d) / 50)
    broken = cell_row(at, methods.HenzeZirkler, HZ)
    assert verdict(TinyThin, [hermite, broken]) == Status.NOT_REPRODUCED


@pytest.mark.parametrize(
    "claim", [claims.HermiteAheadOnWidePancakes, claims.HermiteAheadAtDeltaHalf]
)
def test_hermite_claims_flip_when_the_oracle_degree_is_off_by_one(claim):
    # Wrong variant: the oracle test at degree m (matched, so blind) instead of m + 1.
    configurations = ({"k": 4, "delta": 0.8, "d": 4, "n": 900},)
    tiny = type("Tiny", (claim,), {"configurations": configurations,
                                    "requires": claim._requires(configurations)})  # fmt: skip
    at = {**configurations[0], "trials": 60}
    sound = cell_row(at, methods.HermiteMomentTest, {"calibration_trials": 99})
    hz = cell_row(at, methods.HenzeZirkler, HZ)

    def blind(data, params, seed):
        m = data.law.matched_degree
        return apply_test(data, lambda X, rng: st.hermite_z(X, m), seed,
                          calibration_trials=params.calibration_trials)  # fmt: skip

    broken = cell_row(at, methods.HermiteMomentTest, {"calibration_trials": 99}, blind)
    assert verdict(tiny, [sound, hz]) != Status.NOT_REPRODUCED
    assert verdict(tiny, [broken, hz]) == Status.NOT_REPRODUCED


class TinyCalibration(claims.MonteCarloTestsHoldLevel):
    requires = hermite_cells({}, {})


def test_calibration_claim_flips_on_a_statistic_with_the_wrong_null_mean():
    # Wrong variant: the Hermite statistic with the diagonal i = j left in the sum (a
    # V-statistic, null mean N_m / (n - 1) instead of 0) but the U-statistic's null law
    # N(0, 2 N_m / (n (n - 1))) for its p-value: it rejects N(0, I) far above 0.05. The
    # same normal p-value on the sound U-statistic keeps the level.
    from harness_gmm_testing._hermite import chaos_dimension, hermite_features
    from scipy import stats

    at = {"k": 4, "delta": 0.95, "d": 3, "n": 300, "trials": 400}

    def v_statistic(X, rng):
        n, d = X.shape
        total = hermite_features(X, 4).sum(axis=0)
        return float(total @ total) / (n * (n - 1)) / math.sqrt(2 * chaos_dimension(d, 4)
                                                               / (n * (n - 1)))  # fmt: skip

    def normal_p(statistic):
        def run(data, params, seed):
            return apply_test(data, statistic, seed, calibration_trials=1,
                              analytic_p=stats.norm.sf)  # fmt: skip

        return run

    params = {"calibration_trials": 1}
    sound = cell_row(at, methods.HermiteMomentTest, params,
                     normal_p(lambda X, rng: st.hermite_z(X, 4)))  # fmt: skip
    broken = cell_row(at, methods.HermiteMomentTest, params, normal_p(v_statistic))
    assert broken["type1-error.mc_sd"] == 0.0  # an analytic null: no threshold spread
    assert verdict(TinyCalibration, [sound]) != Status.NOT_REPRODUCED
    assert verdict(TinyCalibration, [broken]) == Status.NOT_REPRODUCED


# -- the statistic's pieces -----------------------------------------------------------------


def test_every_is_an_intersection_union_test():
    # Two configurations: the claim holds only if both intervals clear the margin, and the
    # p-value is the larger one-sided p-value.
    clear = claims._Unit("a", 0.5, 0.4, 0.6, 0.05)
    shaky = claims._Unit("b", 0.1, -0.05, 0.25, 0.08)
    both = claims.every([clear, shaky], claims.Greater(0.0), "gap")
    assert (both.low, both.high) == (-0.05, 0.25)
    assert both.p_value == pytest.approx(1 - 0.5 * (1 + math.erf(0.1 / 0.08 / math.sqrt(2))))
    assert "least favourable b" in both.test
    assert claims.Greater(0.0).decide(both) == Status.INCONCLUSIVE
    assert claims.Greater(0.0).decide(claims.every([clear], claims.Greater(0.0), "g")) == (
        Status.REPRODUCED
    )
    # "every configuration within a band" is refuted by one configuration surely outside it
    band = claims.Within(0.05, 0.04)
    inside = claims._Unit("in", 0.05, 0.03, 0.07, 0.01)
    outside = claims._Unit("out", 0.5, 0.4, 0.6, 0.05)
    assert band.decide(claims.every([inside, outside], band, "rate")) == Status.NOT_REPRODUCED
    assert band.decide(claims.every([inside], band, "rate")) == Status.REPRODUCED
    with pytest.raises(ValueError, match="no configuration"):
        claims.every([], claims.Less(0.1), "x")


def test_rate_interval_widens_by_the_monte_carlo_spread():
    plain = claims._rate_unit("r", 0.9, 200, 0.0)
    wide = claims._rate_unit("r", 0.9, 200, 0.02)
    assert wide.low < plain.low and wide.high > plain.high
    assert plain.high - plain.low == pytest.approx(0.0839, abs=1e-3)  # Wilson, 180 of 200
    assert threshold_spread(0.05, 200, 0.05, 400) == pytest.approx(0.0109, abs=5e-4)
    assert threshold_spread(0.9, 200, 0.05, 0) == 0.0
    assert np.isclose(wide.high - 0.9, math.hypot(plain.high - 0.9, 1.96 * 0.02), atol=1e-3)
