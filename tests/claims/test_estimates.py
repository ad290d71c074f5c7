"""Sound estimates only (issue 58, item 6): every Estimate a statistic returns is checked and
anything unsound is an ``error`` naming the field; ``min_seeds`` counts each required cell
(each dataset configuration x method configuration), never each method.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from harness.claims import (
    BinomialSample,
    Cells,
    Claim,
    Greater,
    Source,
    Statistic,
    Status,
    UseMetric,
    estimate_problems,
    evaluate_claims,
)
from harness.claims.stats import Estimate

INF = math.inf


def _table(methods=("new",), seeds: int = 8, params: dict | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rows = [{"task": "t", "dataset": "d", "method": m, "seed": s, "status": "ok",
             "score": 1 + rng.normal(0, 0.1), "below": -1.0, "run_id": f"{m}{s}",
             **(params or {})}
            for m in methods for s in range(seeds)]  # fmt: skip
    return pd.DataFrame(rows)


class Given(Claim):
    """Returns the Estimate it is given.

    Source: test fixture.
    """

    name = "given"
    task = "t"
    source = Source("fixture")
    statement = "new scores above 0."
    requires = (Cells("d", ("new",)),)
    hypothesis = Greater(0.0)
    given: Estimate | float = Estimate(1.0, 0.9, 1.1, 0.001, 8, 0.1, "fixed")

    def statistic(self, results):
        return self.given


def _given(estimate) -> type[Claim]:
    return type("Bogus", (Given,), {"name": "bogus", "given": estimate})


SOUND = dict(estimate=1.0, low=0.9, high=1.1, p_value=0.001, n=8, mde=0.1, test="fixed")


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"estimate": INF, "low": INF, "high": INF}, ["Estimate.estimate is inf",
                                                      "Estimate.low is inf",
                                                      "Estimate.high is inf"]),
        ({"low": -INF}, ["Estimate.low is -inf (must be finite)"]),
        ({"estimate": math.nan}, ["Estimate.estimate is nan"]),
        ({"n": 0}, ["Estimate.n is 0 (a verdict needs at least 2 units)"]),
        ({"n": 1}, ["Estimate.n is 1"]),
        ({"estimate": 2.0}, ["Estimate.estimate 2 lies outside its own interval [0.9, 1.1]"]),
        ({"level": 0.1}, ["Estimate.level is 0.1"]),
        ({"p_value": 1.5}, ["Estimate.p_value is 1.5 (must be in [0, 1])"]),
        ({"p_value": -0.1}, ["Estimate.p_value is -0.1"]),
    ],
    ids=["inf", "open-interval", "nan", "n=0", "n=1", "outside", "10%-interval", "p>1", "p<0"],
)  # fmt: skip
def test_an_unsound_estimate_is_an_error_naming_the_field(changes, named):
    bogus = Estimate(**SOUND)
    for name, value in changes.items():  # past Estimate's own checks, as a statistic may
        object.__setattr__(bogus, name, value)
    (sound, verdict) = evaluate_claims([Given, _given(bogus)], _table())
    assert sound.status == Status.REPRODUCED
    assert verdict.status == Status.ERROR and verdict.estimate is None
    assert verdict.reason.startswith("unsound estimate: ")
    for words in named:
        assert words in verdict.reason, verdict.reason
    assert all(words in "; ".join(estimate_problems(bogus)) for words in named)


def test_a_statistic_that_returns_no_estimate_is_an_error_naming_what_it_returned():
    (verdict,) = evaluate_claims([_given(0.5)], _table())
    assert verdict.status == Status.ERROR
    assert "the statistic returned float, not a harness.claims.stats.Estimate" in verdict.reason


def test_a_sound_estimate_has_no_problems_and_a_first_contract_p_may_be_nan():
    assert estimate_problems(Estimate(**SOUND)) == []
    no_p = Estimate(**{**SOUND, "p_value": math.nan})
    assert estimate_problems(no_p, legacy=True) == []
    assert "Estimate.p_value is nan" in estimate_problems(no_p)[0]


def test_a_declared_claim_over_no_units_is_an_error_naming_n():
    class Empty(Given):
        name = "empty"
        metric = "score"
        kind = Statistic(lambda rows, metric, unit, subject: BinomialSample(0, 0), "nothing")
        subject = "new"
        control = UseMetric("below")

    (verdict,) = evaluate_claims([Empty], _table())
    assert verdict.status == Status.ERROR and "n" in verdict.reason, verdict.reason


# -- min_seeds per required cell ------------------------------------------------------------

OPPONENTS = ("a", "b", "c", "d", "e", "f", "g")


class BeatsSeven(Given):
    name = "beats-seven"
    requires = (Cells("d", ("new", *OPPONENTS), min_seeds=3),)


def test_a_claim_over_seven_opponents_with_one_present_is_not_run_naming_each_missing():
    (verdict,) = evaluate_claims([BeatsSeven], _table(("new", "a")))
    assert verdict.status == Status.NOT_RUN
    for missing in OPPONENTS[1:]:
        assert f"d x {missing}: 0 of 3 seeds" in verdict.reason
    assert "d x a:" not in verdict.reason and "d x new:" not in verdict.reason
    (whole,) = evaluate_claims([BeatsSeven], _table(("new", *OPPONENTS)))
    assert whole.status == Status.REPRODUCED


def test_min_seeds_counts_each_configuration_of_a_method_apart():
    class TwoWidths(Given):
        name = "two-widths"
        requires = (Cells("d", ("new",), method_params={"width": [1, 2]}, min_seeds=3),)

    wide = _table(seeds=8, params={"method.width": "1"})
    narrow = _table(seeds=1, params={"method.width": "2"}).assign(run_id="n0")
    (verdict,) = evaluate_claims([TwoWidths], pd.concat([wide, narrow]))
    assert verdict.status == Status.NOT_RUN  # 9 seeds of 'new' in all: counted per method, run
    assert "method.width=2]: 1 of 3 seeds" in verdict.reason, verdict.reason
    (neither,) = evaluate_claims([TwoWidths], wide)
    assert "no cells with method.width=2" in neither.reason


# -- found by a breaker: samples built by hand, and declarations that crashed the registry ----


def _statistic_claim(sample):
    import pandas as pd

    from harness.claims import Cells, Claim, Greater, Source, Statistic, UseMetric

    class ByHand(Claim):
        name = "by-hand"
        task = "t"
        source = Source("fixture")
        statement = "A custom statistic."
        requires = (Cells("d", ("m",), min_seeds=3),)
        metric = "score"
        subject = "m"
        kind = Statistic(lambda rows, metric, unit, subject: sample)
        hypothesis = Greater(0.0)
        control = UseMetric("score")

    rows = pd.DataFrame({"task": "t", "dataset": "d", "method": "m", "seed": range(4),
                         "status": "ok", "score": [1.0, 1.1, 0.9, 1.2]})  # fmt: skip
    return ByHand, rows


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"mean": -0.6, "se": -0.1, "df": 5, "n": 6}, "TSample.se"),
        ({"mean": 0.1, "se": 1.0, "df": 5, "n": 6, "skew": 50.0}, "TSample.skew"),
        ({"mean": 0.1, "se": 1e-9, "df": 1e9, "n": 2}, "df = n - 1"),
    ],
)
def test_a_sample_built_by_hand_that_is_unsound_is_an_error(fields, named):
    from harness.claims import Status, TSample, evaluate_claims

    claim, rows = _statistic_claim(TSample(test="by hand", **fields))
    (verdict,) = evaluate_claims([claim], rows)
    assert verdict.status == Status.ERROR and named in verdict.reason


def test_requires_without_its_trailing_comma_and_a_kind_class_are_refused():
    from harness.claims import Cells, Claim, Greater, Mean, Source, UseMetric

    class NoComma(Claim):
        name = "no-comma"
        task = "t"
        source = Source("fixture")
        statement = "s"
        requires = Cells("d", ("m",))
        metric = "score"
        subject = "m"
        kind = Mean()
        hypothesis = Greater(0.0)
        control = UseMetric("score")

    class KindClass(NoComma):
        name = "kind-class"
        requires = (Cells("d", ("m",)),)
        kind = Mean

    assert any("trailing comma" in p for p in NoComma.declaration_problems())
    assert any("not the class" in p for p in KindClass.declaration_problems())
