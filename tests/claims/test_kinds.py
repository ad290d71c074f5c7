"""The claim kinds measure what they say: each check passes on the kind and fails on a wrong
variant of it (a flipped sign, a slope of the wrong axis, ...)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from harness.claims import LogLogSlope, Mean, PairedGain, Rate, Ratio, Select

SUBJECT = Select("new")


def _rows() -> pd.DataFrame:
    """'new' scores 1 above 'old' on each of 6 seeds (two rows per seed, averaged)."""
    rng = np.random.default_rng(0)
    base = rng.normal(5.0, 1.0, 6)
    rows = []
    for seed, b in enumerate(base):
        for rep in (-0.01, 0.01):
            rows.append({"dataset": "d", "method": "old", "seed": seed, "score": b + rep})
            rows.append({"dataset": "d", "method": "new", "seed": seed,
                         "score": b + 1 + rep * seed})  # fmt: skip
    return pd.DataFrame(rows)


class FlippedGain(PairedGain):
    """Wrong: baseline minus subject."""

    def sample(self, rows, metric, unit, subject):
        return dataclasses.replace(s := super().sample(rows, metric, unit, subject), mean=-s.mean)


def check_gain_is_subject_minus_baseline(kind: PairedGain) -> None:
    rows = _rows()
    per_seed = rows.groupby(["method", "seed"])["score"].mean().unstack(0)
    truth = float((per_seed["new"] - per_seed["old"]).mean())
    assert kind.sample(rows, "score", "seed", SUBJECT).estimate == pytest.approx(truth)


def test_paired_gain_is_subject_minus_baseline_per_seed():
    check_gain_is_subject_minus_baseline(PairedGain("old"))
    with pytest.raises(AssertionError):
        check_gain_is_subject_minus_baseline(FlippedGain("old"))


def test_lower_is_better_flips_the_sign_and_the_pairing_is_per_seed():
    rows = _rows()
    up = PairedGain("old").sample(rows, "score", "seed", SUBJECT)
    down = PairedGain("old", higher_is_better=False).sample(rows, "score", "seed", SUBJECT)
    assert down.estimate == pytest.approx(-up.estimate) and up.n == down.n == 6
    # paired: the seed effect cancels, so the paired se is far below the unpaired one
    assert up.se < 0.1


def test_mean_ratio_and_rate_of_known_values():
    rows = _rows()
    per_seed = rows.groupby(["method", "seed"])["score"].mean().unstack(0)
    assert Mean().sample(rows, "score", "seed", SUBJECT).estimate == pytest.approx(
        per_seed["new"].mean()
    )
    ratio = Ratio("old").sample(rows, "score", "seed", SUBJECT)
    assert ratio.estimate == pytest.approx(np.exp(np.log(per_seed["new"] / per_seed["old"]).mean()))
    rate = Rate(threshold=10.0).sample(rows, "score", "seed", SUBJECT)
    assert rate.successes == int((per_seed["new"] > 10.0).sum()) and rate.n == 6
    below = Rate(threshold=10.0, above=False).sample(rows, "score", "seed", SUBJECT)
    assert below.successes == 6 - rate.successes


def _curves(exponent: float) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for seed in range(5):
        c = rng.uniform(1, 3)
        for n in (10, 20, 40, 80):
            rows.append({"dataset": "d", "method": "new", "seed": seed, "dataset.n": str(n),
                         "method.k": str(seed), "err": c * n**exponent})  # fmt: skip
    return pd.DataFrame(rows)


class SlopeOfWrongAxis(LogLogSlope):
    """Wrong: log metric on the raw x."""

    def sample(self, rows, metric, unit, subject):
        rows = rows.assign(**{self.along: np.exp(rows[self.along].astype(float))})
        return super().sample(rows, metric, unit, subject)


def check_slope_is_the_rate_exponent(kind: LogLogSlope) -> None:
    sample = kind.sample(_curves(-0.5), "err", "seed", SUBJECT)
    assert sample.estimate == pytest.approx(-0.5) and sample.n == 5


def test_loglog_slope_is_the_rate_exponent_per_unit():
    check_slope_is_the_rate_exponent(LogLogSlope("dataset.n"))
    with pytest.raises(AssertionError):
        check_slope_is_the_rate_exponent(SlopeOfWrongAxis("dataset.n"))


def test_kinds_refuse_what_they_cannot_measure():
    rows = _rows()
    with pytest.raises(ValueError, match="no rows"):
        Mean(of=Select("absent")).sample(rows, "score", "seed", SUBJECT)
    with pytest.raises(ValueError, match="positive"):
        LogLogSlope("dataset.n").sample(_curves(-0.5).assign(err=-1.0), "err", "seed", SUBJECT)
    with pytest.raises(ValueError, match="at least 2 units"):
        LogLogSlope("dataset.n").sample(_curves(-0.5).query("seed == 0"), "err", "seed", SUBJECT)
    with pytest.raises(ValueError, match="baseline"):
        PairedGain()


def test_a_rate_refuses_units_with_no_value():
    """A unit whose metric is missing (a skipped metric, a blanked export) is not measured: a
    rate over it is refused, so a rival or control never measured is undecided, never a
    failure (counting NaN as a miss made an unmeasured rival 'fail' and the claim
    reproduced: found by a breaker)."""
    rows = _rows()
    rows.loc[rows["method"] == "new", "score"] = np.nan
    with pytest.raises(ValueError, match="6 of 6 units have no score"):
        Rate(threshold=10.0).sample(rows, "score", "seed", SUBJECT)
