"""What a claim kind measures, before a hypothesis tests it: a sampling distribution.

A kind (:mod:`harness.claims.kinds`) turns per-unit values into a :class:`Sample`: a t
sample (a mean of per-unit values and its standard error) or a binomial sample (successes
among units). A hypothesis (:mod:`harness.claims.hypotheses`) asks it for one-sided
p-values at its margin and for the interval, both from the same distribution, so the
interval that decides and the p-value that Holm adjusts never disagree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

__all__ = ["BinomialSample", "Sample", "TSample"]


class Sample(Protocol):
    """A sampling distribution of a claim's statistic, in the claim's units."""

    n: int
    test: str

    @property
    def estimate(self) -> float: ...

    def p_greater(self, margin: float) -> float:
        """The p-value of "the statistic is at most ``margin``" (against: above it)."""
        ...

    def p_less(self, margin: float) -> float:
        """The p-value of "the statistic is at least ``margin``" (against: below it)."""
        ...

    def interval(self, level: float) -> tuple[float, float]:
        """The two-sided interval at ``level``."""
        ...

    def mde(self, alpha: float, power: float = 0.8) -> float:
        """The smallest effect (distance from a margin) a one-sided test at ``alpha`` finds
        with ``power`` at this n."""
        ...

    def units_needed(self, distance: float, alpha: float, power: float = 0.8) -> int | None:
        """Units a one-sided test at ``alpha`` needs to find ``distance`` with ``power``,
        at this sample's spread (None when it cannot be said)."""
        ...


@dataclass(frozen=True)
class TSample:
    """A mean of ``n`` per-unit values with standard error ``se`` and ``df`` degrees of
    freedom: Student's t (the per-unit values are the exchangeable units).

    ``scale="log"``: ``mean`` and ``se`` are on the log scale, the estimate, the interval
    and every margin on the ratio scale (a geometric-mean ratio).

    >>> s = TSample.of([1.0, 2.0, 3.0, 4.0])
    >>> round(s.estimate, 3), [round(v, 3) for v in s.interval(0.95)]
    (2.5, [0.446, 4.554])
    >>> round(s.p_greater(0.0), 4)
    0.0127
    """

    mean: float
    se: float
    df: float
    n: int
    test: str
    scale: Literal["identity", "log"] = "identity"

    @classmethod
    def of(cls, values: Sequence[float], test: str = "", scale: str = "identity") -> TSample:
        """The t sample of per-unit ``values`` (shape (n,), finite, n >= 2).

        :raises ValueError: fewer than two values, or a non-finite one.
        """
        x = np.asarray(values, dtype=float).ravel()
        if not np.all(np.isfinite(x)):
            raise ValueError(f"per-unit values hold non-finite numbers: {x[~np.isfinite(x)][:3]}")
        if x.size < 2:
            raise ValueError(f"a t interval needs at least 2 units, got {x.size}")
        se = float(x.std(ddof=1) / math.sqrt(x.size))
        return cls(float(x.mean()), se, x.size - 1, int(x.size),
                   test or f"t over {x.size} units", scale)  # type: ignore[arg-type]  # fmt: skip

    def _to(self, margin: float) -> float:
        if self.scale == "log":
            if not margin > 0:
                raise ValueError(f"a ratio's margin must be positive, got {margin}")
            return math.log(margin)
        return margin

    def _from(self, value: float) -> float:
        return math.exp(value) if self.scale == "log" else value

    @property
    def estimate(self) -> float:
        return self._from(self.mean)

    def p_greater(self, margin: float) -> float:
        from scipy import stats

        m = self._to(margin)
        if self.se == 0:
            return 0.0 if self.mean > m else 1.0
        return float(stats.t.sf((self.mean - m) / self.se, self.df))

    def p_less(self, margin: float) -> float:
        from scipy import stats

        m = self._to(margin)
        if self.se == 0:
            return 0.0 if self.mean < m else 1.0
        return float(stats.t.cdf((self.mean - m) / self.se, self.df))

    def interval(self, level: float) -> tuple[float, float]:
        from scipy import stats

        half = float(stats.t.ppf(0.5 + level / 2, self.df)) * self.se
        return self._from(self.mean - half), self._from(self.mean + half)

    def mde(self, alpha: float, power: float = 0.8) -> float:
        from scipy import stats

        return float((stats.t.ppf(1 - alpha, self.df) + stats.t.ppf(power, self.df)) * self.se)

    def units_needed(self, distance: float, alpha: float, power: float = 0.8) -> int | None:
        from scipy import stats

        sd = self.se * math.sqrt(self.n)
        if self.scale == "log" or not (distance > 0 and sd > 0):
            return None
        z = stats.norm.ppf(1 - alpha) + stats.norm.ppf(power)
        return max(self.n, math.ceil((z * sd / distance) ** 2) + 1)


@dataclass(frozen=True)
class BinomialSample:
    """``successes`` among ``n`` independent units: an exact (Clopper-Pearson) interval and
    exact binomial tests, the interval being the inversion of the tests.

    >>> s = BinomialSample(18, 20)
    >>> round(s.estimate, 2), [round(v, 3) for v in s.interval(0.95)]
    (0.9, [0.683, 0.988])
    """

    successes: int
    n: int
    test: str = ""

    def __post_init__(self) -> None:
        if self.n < 1 or not 0 <= self.successes <= self.n:
            raise ValueError(f"a rate needs 0 <= successes <= units >= 1, got {self.successes}"
                             f" of {self.n}")  # fmt: skip
        if not self.test:
            object.__setattr__(self, "test", f"exact binomial over {self.n} units")

    @property
    def estimate(self) -> float:
        return self.successes / self.n

    def p_greater(self, margin: float) -> float:
        from scipy import stats

        if margin >= 1:
            return 1.0
        if margin <= 0:
            return 0.0 if self.successes > 0 else 1.0
        return float(stats.binomtest(self.successes, self.n, margin, "greater").pvalue)

    def p_less(self, margin: float) -> float:
        from scipy import stats

        if margin <= 0:
            return 1.0
        if margin >= 1:
            return 0.0 if self.successes < self.n else 1.0
        return float(stats.binomtest(self.successes, self.n, margin, "less").pvalue)

    def interval(self, level: float) -> tuple[float, float]:
        from scipy import stats

        ci = stats.binomtest(self.successes, self.n).proportion_ci(level, "exact")
        return float(ci.low), float(ci.high)

    def mde(self, alpha: float, power: float = 0.8) -> float:
        from scipy import stats

        p = min(max(self.estimate, 0.05), 0.95)
        z = stats.norm.ppf(1 - alpha) + stats.norm.ppf(power)
        return float(z * math.sqrt(p * (1 - p) / self.n))

    def units_needed(self, distance: float, alpha: float, power: float = 0.8) -> int | None:
        from scipy import stats

        if not distance > 0:
            return None
        p = min(max(self.estimate, 0.05), 0.95)
        z = stats.norm.ppf(1 - alpha) + stats.norm.ppf(power)
        return max(self.n, math.ceil(z**2 * p * (1 - p) / distance**2))
