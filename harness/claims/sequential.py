"""Anytime-valid inference for claims that get more units as they go (``harness run --decide``).

A confidence sequence covers the truth at every number of units at once (Howard, Ramdas,
McAuliffe, Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann.
Statist. 49(2), 2021), so a claim may be looked at after every batch of seeds and stopped when
it is decided, without the false positives of a fixed-n interval checked again and again.

- :func:`mean_sequence`: the normal-mixture boundary (Howard et al. 2021, eq. (14); Robbins
  1970) on the running mean of per-unit values, with the plug-in standard deviation of
  Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas ("Time-uniform central limit theory and
  asymptotic confidence sequences", arXiv 2103.06476, Theorem 2.2), widened at small n by
  Student's t: the half-width multiplier is ``max(mixture, t quantile)``, so no look is ever
  narrower than the fixed-n t interval (a reconstruction for small n; the simulation test
  ``tests/claims/test_sequential.py`` measures its error rate). Means, gains, log ratios and
  slopes: every t sample of :mod:`harness.claims.samples`.
- :func:`rate_sequence`: the beta-binomial mixture martingale for successes among units
  (Robbins 1970; Howard et al. 2021, section 3.2), exact for a rate in [0, 1].

Each returns a :class:`SequenceSample`, a :class:`~harness.claims.samples.Sample` whose
one-sided p-values are anytime p-values (the smallest level at which the sequence excludes the
margin), so hypotheses and Holm take them as they take fixed-n p-values.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.claims.kinds import Kind
from harness.claims.samples import BinomialSample, Sample, TSample

__all__ = [
    "Anytime",
    "SequenceSample",
    "mean_sequence",
    "mixture_rho",
    "rate_sequence",
    "to_sequence",
]


def mixture_rho(target_n: float, alpha: float) -> float:
    """The mixture's precision tuned so the boundary is tightest at ``target_n`` units
    (Waudby-Smith et al. 2021, eq. (12))."""
    a = -2 * math.log(alpha)
    return math.sqrt((a + math.log(a + 1)) / max(target_n, 1.0))


def _mixture_radius(n: int, alpha: float, rho: float) -> float:
    """Half-width of the one-sided normal-mixture boundary on a mean of ``n`` unit-variance
    values at level ``alpha``."""
    v = n * rho**2 + 1
    return math.sqrt(2 * v / (n**2 * rho**2) * math.log(math.sqrt(v) / alpha))


@dataclass(frozen=True)
class SequenceSample:
    """A sample read through a confidence sequence: ``estimate``, the units ``n`` and a
    function of the level giving the radius. ``scale="log"`` as for a t sample."""

    center: float
    sd: float
    n: int
    test: str
    target_n: float
    kind: str = "mean"  # "mean" (normal mixture) or "rate" (beta-binomial)
    successes: int = 0
    scale: str = "identity"
    refused: str = ""
    trajectory: tuple = field(default=(), compare=False)

    @property
    def se(self) -> float | None:
        return self.sd / math.sqrt(self.n) if self.kind == "mean" else None

    @property
    def estimate(self) -> float:
        return math.exp(self.center) if self.scale == "log" else self.center

    def _to(self, margin: float) -> float:
        return math.log(margin) if self.scale == "log" else margin

    def _from(self, value: float) -> float:
        return math.exp(value) if self.scale == "log" else value

    def _radius(self, alpha: float) -> float:
        from scipy.special import stdtrit  # the t quantile (what scipy.stats.t.ppf calls)

        rho = mixture_rho(self.target_n, alpha)
        t = float(stdtrit(self.n - 1, 1 - alpha)) / math.sqrt(self.n)
        return max(_mixture_radius(self.n, alpha, rho), t) * self.sd

    def bounds(self, alpha: float) -> tuple[float, float]:
        """The one-sided bounds at ``alpha`` each (a two-sided ``1 - 2 alpha`` sequence)."""
        if self.kind == "rate":
            return _rate_bounds(self.successes, self.n, alpha)
        r = self._radius(alpha)
        return self.center - r, self.center + r

    def _p(self, margin: float, above: bool) -> float:
        """The smallest alpha at which the sequence lies strictly on one side of ``margin``."""
        if self.refused:
            return 1.0
        m = self._to(margin)
        low_a, high_a = 1e-12, 1.0
        if self.kind == "rate":

            def excluded(alpha: float) -> bool:
                low, high = _rate_bounds(self.successes, self.n, alpha)
                return low > m if above else high < m
        else:
            excluded = self._mean_excluded(m, above)
        if not excluded(high_a - 1e-12):
            return 1.0
        if excluded(low_a):
            return low_a
        for _ in range(60):  # bisection on log alpha: the bounds are monotone in alpha
            mid = math.sqrt(low_a * high_a)
            if excluded(mid):
                high_a = mid
            else:
                low_a = mid
        return high_a

    def _mean_excluded(self, m: float, above: bool) -> Any:
        """``alpha -> whether the mean's sequence at alpha lies strictly on one side of m``.
        Its radius is the larger of the mixture's and the t interval's, so it does when both
        do: the t side once alpha passes the t test's p (closed form, computed once), the
        mixture's from its closed-form radius (no t quantile per step of the bisection)."""
        d = self.center - m if above else m - self.center
        p_t = _t_p(d, self.sd, self.n)

        def excluded(alpha: float) -> bool:
            if not alpha > p_t:
                return False
            return d > _mixture_radius(self.n, alpha, mixture_rho(self.target_n, alpha)) * self.sd

        return excluded

    def p_greater(self, margin: float) -> float:
        return self._p(margin, above=True)

    def p_less(self, margin: float) -> float:
        return self._p(margin, above=False)

    def interval(self, level: float) -> tuple[float, float]:
        low, high = self.bounds((1 - level) / 2)
        return self._from(low), self._from(high)

    def mde(self, alpha: float, power: float = 0.8) -> float:
        from scipy import stats

        if self.kind == "rate":
            p = min(max(self.center, 0.05), 0.95)
            return float(
                self._rate_width(alpha) + stats.norm.ppf(power) * math.sqrt(p * (1 - p) / self.n)
            )
        return float(self._radius(alpha) + stats.norm.ppf(power) * self.sd / math.sqrt(self.n))

    def _rate_width(self, alpha: float) -> float:
        low, high = _rate_bounds(self.successes, self.n, alpha)
        return (high - low) / 2

    def units_needed(self, distance: float, alpha: float, power: float = 0.8) -> int | None:
        """Units at which the sequence's radius, at this spread, falls below ``distance``."""
        if not distance > 0 or self.kind == "rate" or self.sd <= 0:
            return None
        n = self.n
        while n < 100_000:
            probe = SequenceSample(self.center, self.sd, n, self.test, self.target_n)
            if probe._radius(alpha) < distance:
                return n
            n = max(n + 1, int(n * 1.2))
        return None


def mean_sequence(
    values: Sequence[float], target_n: float, test: str = "", scale: str = "identity"
) -> SequenceSample:
    """The confidence sequence of the mean of per-unit ``values`` (shape (n,), n >= 2),
    tuned for ``target_n`` units.

    >>> s = mean_sequence(np.full(20, 1.0) + np.linspace(-0.1, 0.1, 20), target_n=20)
    >>> s.p_greater(0.5) < 0.025 < s.p_greater(0.99)
    True

    :raises ValueError: fewer than two values or a non-finite one.
    """
    x = np.asarray(values, dtype=float).ravel()
    if x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"a confidence sequence needs >= 2 finite units, got {x.size}")
    return SequenceSample(float(x.mean()), float(x.std(ddof=1)), int(x.size),
                          test or f"confidence sequence over {x.size} units (normal mixture)",
                          float(target_n), scale=scale)  # fmt: skip


def rate_sequence(successes: int, n: int, test: str = "") -> SequenceSample:
    """The beta-binomial mixture confidence sequence of a rate (Beta(1/2, 1/2) mixing).

    >>> s = rate_sequence(19, 20)
    >>> s.p_greater(0.5) < 0.025
    True
    """
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"a rate needs 0 <= successes <= units >= 1, got {successes} of {n}")
    return SequenceSample(successes / n, 0.0, n,
                          test or f"confidence sequence over {n} units (beta-binomial mixture)",
                          float(n), kind="rate", successes=successes)  # fmt: skip


def _t_p(distance: float, sd: float, n: int) -> float:
    """The one-sided t test's p of an estimate ``distance`` beyond the margin (0 with no
    spread and a positive distance, 1 with none)."""
    from scipy.special import stdtr

    if sd <= 0:
        return 0.0 if distance > 0 else 1.0
    return float(stdtr(n - 1, -distance * math.sqrt(n) / sd))


@functools.lru_cache(maxsize=65536)  # a control's draws and Holm ask the same counts again
def _rate_bounds(successes: int, n: int, alpha: float) -> tuple[float, float]:
    """``{p : M_n(p) < 1 / alpha}`` for the Beta(1/2, 1/2) mixture martingale
    ``M_n(p) = B(1/2 + S, 1/2 + n - S) / B(1/2, 1/2) / (p^S (1 - p)^(n - S))`` (Ville's
    inequality makes it a (1 - alpha) sequence; each side at alpha is conservative)."""
    from scipy.special import betaln

    log_mix = betaln(0.5 + successes, 0.5 + n - successes) - betaln(0.5, 0.5)
    grid = np.linspace(1e-6, 1 - 1e-6, 20_001)
    log_lik = successes * np.log(grid) + (n - successes) * np.log1p(-grid)
    inside = grid[log_mix - log_lik < math.log(1 / alpha)]
    p = successes / n  # the maximum-likelihood rate is always inside: M_n(p) <= 1 there
    if inside.size == 0:
        return p, p
    low = 0.0 if successes == 0 else min(float(inside[0]), p)
    high = 1.0 if successes == n else max(float(inside[-1]), p)
    return low, high


def to_sequence(sample: Sample, target_n: float) -> SequenceSample:
    """``sample`` read through its confidence sequence, tuned for ``target_n`` units.

    :raises TypeError: a sample of another type (a custom one: no sequence is known for it).
    """
    if isinstance(sample, SequenceSample):
        return sample
    if isinstance(sample, TSample):
        test = f"{sample.test}; confidence sequence (normal mixture, tuned for {target_n:g} units)"
        return SequenceSample(sample.mean, sample.se * math.sqrt(sample.n), sample.n, test,
                              float(target_n), scale=sample.scale,
                              refused=sample.refused)  # fmt: skip
    if isinstance(sample, BinomialSample):
        return rate_sequence(sample.successes, sample.n)
    raise TypeError(f"no confidence sequence for a {type(sample).__name__}")


@dataclass(frozen=True)
class Anytime(Kind):
    """A claim's kind read through confidence sequences (``harness run --decide``): the same
    per-unit values, anytime-valid intervals and p-values."""

    inner: Kind | None = None
    target_n: float = 20.0

    def sample(self, rows: Any, metric: str, unit: Any, subject: Any) -> Sample:
        return to_sequence(self.inner.sample(rows, metric, unit, subject), self.target_n)  # type: ignore[union-attr]

    def describe(self, metric: str) -> str:
        return f"{self.inner.describe(metric)} (confidence sequence)"  # type: ignore[union-attr]
