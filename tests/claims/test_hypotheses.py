"""The hypotheses run the test at their margin: each check passes on the hypothesis and
fails on a wrong variant (a band off its reference, a one-sided test of the wrong side)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.claims import ALPHA, Greater, Less, Status, Within
from harness.claims.samples import BinomialSample, TSample, refusal


def _near(centre: float, n: int = 12, spread: float = 0.05) -> TSample:
    """A symmetric sample centred on ``centre`` (no skewness, so never declined)."""
    steps = np.linspace(-1, 1, n)
    return TSample.of(centre + spread * steps)


class OffBand(Within):
    """Wrong: the band starts at the reference instead of being centred on it."""

    def band(self):
        return self.reference, self.reference + 2 * self.margin


class WrongSide(Greater):
    """Wrong: Greater's p-value taken from the lower side."""

    def p_value(self, sample):
        return sample.p_less(self.margin)


def check_within_is_centred(hypothesis_type: type[Within]) -> None:
    h = hypothesis_type(1.0, 0.25)
    assert h.status(_near(1.0)) == Status.REPRODUCED
    assert h.status(_near(0.85)) == Status.REPRODUCED
    assert h.status(_near(1.6)) == Status.NOT_REPRODUCED
    assert h.status(_near(0.4)) == Status.NOT_REPRODUCED
    assert h.status(_near(1.25, spread=0.3)) == Status.INCONCLUSIVE


def test_within_is_tost_on_the_band_centred_on_the_reference():
    check_within_is_centred(Within)
    with pytest.raises(AssertionError):
        check_within_is_centred(OffBand)


def check_greater_rejects_above(hypothesis_type: type[Greater]) -> None:
    h = hypothesis_type(0.5)
    assert h.status(_near(1.0)) == Status.REPRODUCED
    assert h.status(_near(0.0)) == Status.NOT_REPRODUCED


def test_greater_and_less_test_their_own_side():
    check_greater_rejects_above(Greater)
    with pytest.raises(AssertionError):
        check_greater_rejects_above(WrongSide)
    assert Less(0.5).status(_near(0.0)) == Status.REPRODUCED
    assert Less(0.5).status(_near(1.0)) == Status.NOT_REPRODUCED


@pytest.mark.parametrize("centre", np.linspace(0.3, 0.7, 21))
def test_the_p_value_and_the_95_interval_agree_at_the_margin(centre):
    """At ALPHA = 0.025 a one-sided test rejects exactly when the 95% interval lies on its
    side, for the t and the exact binomial samples."""
    t = _near(centre, spread=0.3)
    low, high = t.interval(1 - 2 * ALPHA)
    assert (Greater(0.5).p_value(t) < ALPHA) == (low > 0.5)
    assert (Less(0.5).p_value(t) < ALPHA) == (high < 0.5)
    b = BinomialSample(round(centre * 40), 40)
    low, high = b.interval(1 - 2 * ALPHA)
    assert (Greater(0.5).p_value(b) < ALPHA) == (low > 0.5)
    assert (Less(0.5).p_value(b) < ALPHA) == (high < 0.5)


def test_a_declined_sample_is_inconclusive_under_every_hypothesis():
    skewed = TSample.of([1.0, 1.1, 1.2, 1.3, 9.0])
    assert skewed.refused and refusal(skewed.test) == skewed.refused
    for h in (Greater(0.0), Less(100.0), Within(2.5, 100.0)):
        assert h.status(skewed) == Status.INCONCLUSIVE


def test_malformed_margins_are_refused_naming_the_field():
    with pytest.raises(TypeError, match=r"Greater\.margin"):
        Greater("0.1")
    with pytest.raises(ValueError, match=r"Within\.margin"):
        Within(1.0, 0.0)
