"""What a claim's statistic must show, with its margin written once: the hypothesis runs
the test.

:class:`Greater` and :class:`Less` are one-sided tests against the margin, :class:`Within`
is two one-sided tests (TOST, Schuirmann 1987) on ``[reference - margin, reference +
margin]``. Each asks a :class:`~harness.claims.samples.Sample` for the p-value of its own
margin and for the 95% interval: at ``alpha = 0.025`` a one-sided test rejects exactly when
the 95% interval lies on the claim's side, so the interval shown and the p-value Holm
adjusts say the same thing. A new hypothesis is one class with :meth:`Hypothesis.p_value`,
:meth:`Hypothesis.p_negation` and :meth:`Hypothesis.band`.

>>> from harness.claims.samples import TSample
>>> s = TSample.of([0.9, 1.1, 1.0, 1.05, 0.95])
>>> Greater(0.5).status(s), Less(0.5).status(s), Within(1.0, 0.2).status(s)
(<Status.REPRODUCED: 'reproduced'>, <Status.NOT_REPRODUCED: 'not-reproduced'>, \
<Status.REPRODUCED: 'reproduced'>)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

from harness.claims.samples import Sample
from harness.claims.stats import Estimate
from harness.claims.verdicts import Status

__all__ = ["ALPHA", "Greater", "Hypothesis", "Less", "Within"]

ALPHA = 0.025
"""One-sided level of every claim's test: the side of a two-sided 95% interval."""


class Hypothesis:
    """Base of the hypotheses: a claim about a statistic, decided by its sample."""

    def p_value(self, sample: Sample) -> float:
        """The p-value of the claim's negation at the declared margin (small: the claim
        holds)."""
        raise NotImplementedError

    def p_negation(self, sample: Sample) -> float:
        """The p-value of the claim at the margin (small: the negation holds)."""
        raise NotImplementedError

    def band(self) -> tuple[float, float]:
        """The values of the statistic the claim allows, ``(low, high)`` (infinite ends)."""
        raise NotImplementedError

    def distance(self, estimate: float) -> float:
        """How far ``estimate`` lies inside the claim's side (negative: outside)."""
        low, high = self.band()
        return min(estimate - low, high - estimate)

    def status(self, sample: Sample, alpha: float = ALPHA) -> Status:
        """Reproduced when the claim's test rejects at ``alpha``, not reproduced when the
        negation's does, inconclusive otherwise. A sample without spread (every unit the
        same value) is its statistic: reproduced strictly inside the band (``Within``: its
        closed band), not reproduced elsewhere, the margin itself included (a gain of
        exactly 0 is no gain)."""
        if getattr(sample, "se", None) == 0:  # no spread: the estimate is the statistic
            low, high = self.band()
            inside = low < sample.estimate < high or (
                isinstance(self, Within) and low <= sample.estimate <= high
            )
            return Status.REPRODUCED if inside else Status.NOT_REPRODUCED
        if self.p_value(sample) < alpha:
            return Status.REPRODUCED
        if self.p_negation(sample) < alpha:
            return Status.NOT_REPRODUCED
        return Status.INCONCLUSIVE

    def decide(self, e: Estimate) -> Status:
        """The status of an :class:`Estimate` a claim's own ``statistic`` returned (its
        interval against the band)."""
        low, high = self.band()
        if e.low > low and e.high < high:
            return Status.REPRODUCED
        if e.high <= low or e.low >= high:
            return Status.NOT_REPRODUCED
        return Status.INCONCLUSIVE

    @staticmethod
    def _number(value: object, name: str) -> float:
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
            raise TypeError(f"{name} must be a finite number, got {value!r}")
        return float(value)


@dataclass(frozen=True)
class Greater(Hypothesis):
    """The statistic exceeds ``margin`` (superiority when 0, non-inferiority when below)."""

    margin: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "margin", self._number(self.margin, "Greater.margin"))

    def p_value(self, sample: Sample) -> float:
        return sample.p_greater(self.margin)

    def p_negation(self, sample: Sample) -> float:
        return sample.p_less(self.margin)

    def band(self) -> tuple[float, float]:
        return self.margin, math.inf

    def __str__(self) -> str:
        return f"> {self.margin:g}"


@dataclass(frozen=True)
class Less(Hypothesis):
    """The statistic is below ``margin``."""

    margin: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "margin", self._number(self.margin, "Less.margin"))

    def p_value(self, sample: Sample) -> float:
        return sample.p_less(self.margin)

    def p_negation(self, sample: Sample) -> float:
        return sample.p_greater(self.margin)

    def band(self) -> tuple[float, float]:
        return -math.inf, self.margin

    def __str__(self) -> str:
        return f"< {self.margin:g}"


@dataclass(frozen=True)
class Within(Hypothesis):
    """The statistic equals ``reference`` within ``+- margin`` (equivalence, TOST):
    reproduced when both one-sided tests reject, not reproduced when the statistic lies
    significantly outside the band."""

    reference: float
    margin: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "reference", self._number(self.reference, "Within.reference"))
        object.__setattr__(self, "margin", self._number(self.margin, "Within.margin"))
        if not self.margin > 0:
            raise ValueError(f"Within.margin must be > 0, got {self.margin}")

    def p_value(self, sample: Sample) -> float:
        low, high = self.band()
        return max(sample.p_greater(low), sample.p_less(high))

    def p_negation(self, sample: Sample) -> float:
        low, high = self.band()
        return min(sample.p_less(low), sample.p_greater(high))

    def band(self) -> tuple[float, float]:
        return self.reference - self.margin, self.reference + self.margin

    def decide(self, e: Estimate) -> Status:
        low, high = self.band()
        if e.low >= low and e.high <= high:
            return Status.REPRODUCED
        if e.high < low or e.low > high:
            return Status.NOT_REPRODUCED
        return Status.INCONCLUSIVE

    def __str__(self) -> str:
        return f"within {self.reference:g} +- {self.margin:g}"
