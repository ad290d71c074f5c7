"""Claim kinds: what a claim measures over its units, declared instead of coded.

Each kind reads the rows a claim selected (``of``: a :class:`~harness.claims.selection.Select`,
by default the claim's subject), reduces them to one value per unit of replication
(:func:`~harness.claims.selection.unit_values`: the mean of the claim's metric over the rows
of each seed, or of each configuration) and returns a
:class:`~harness.claims.samples.Sample` the claim's hypothesis tests:

========================  ==============================================================
:class:`Mean`             the mean over units (one-sample t)
:class:`PairedGain`       subject minus baseline on shared units (paired t), signed so that
                          positive means the subject is better
:class:`LogLogSlope`      per unit, the OLS slope of log metric on log ``along`` (a rate
                          exponent); t over the units' slopes
:class:`Ratio`            per unit, subject over ``over``; t on the logs, shown as a ratio
:class:`Rate`             the share of units above (or below) ``threshold``; exact binomial
:class:`Statistic`        a function of the rows for what the others do not cover
========================  ==============================================================

Equivalence to a reference is a hypothesis (``Within(reference, margin)``) on any kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.claims.samples import BinomialSample, Sample, TSample
from harness.claims.selection import Select, Table

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Kind",
    "LogLogSlope",
    "Mean",
    "PairedGain",
    "Rate",
    "Ratio",
    "Statistic",
    "unit_slopes",
]


class Kind:
    """Base of the claim kinds. ``of`` restricts the rows read (default: the subject's)."""

    of: Select | None = None

    def sample(self, rows: pd.DataFrame | Table, metric: str, unit: Any, subject: Select) -> Sample:
        """The sample of the claim over ``rows`` (the ok rows of its cells: a DataFrame, or
        the :class:`~harness.claims.selection.Table` the core evaluates on).

        :raises ValueError: the rows do not allow it (no rows, too few units, ...).
        """
        raise NotImplementedError

    def _values(
        self, rows: pd.DataFrame | Table, metric: str, unit: Any, subject: Select
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(units, values)`` of the rows of ``of`` (default: the subject), sorted by unit."""
        return _unit_means(_table(rows), self.of or subject, metric, unit)

    def describe(self, metric: str) -> str:
        """The statistic in words, for the verdict table's notes."""
        return f"{type(self).__name__} of {metric}"


@dataclass(frozen=True)
class Mean(Kind):
    """The mean of the metric over units (one-sample t)."""

    of: Select | None = None

    def sample(self, rows, metric, unit, subject):
        _, values = self._values(rows, metric, unit, subject)
        return TSample.of(values, f"mean, t over {len(values)} units")

    def describe(self, metric: str) -> str:
        return f"mean {metric}"


@dataclass(frozen=True)
class PairedGain(Kind):
    """Subject minus ``baseline`` per shared unit (paired t), signed so that a positive
    gain means the subject is better (``higher_is_better=False`` for errors and losses)."""

    baseline: Select | str = ""
    higher_is_better: bool = True
    of: Select | None = None

    def __post_init__(self) -> None:
        if isinstance(self.baseline, str):
            if not self.baseline:
                raise ValueError("PairedGain needs a baseline (a method name or a Select)")
            object.__setattr__(self, "baseline", Select(self.baseline))
        if not isinstance(self.baseline, Select):
            raise TypeError(f"PairedGain.baseline must be a Select or a method name,"
                            f" got {self.baseline!r}")  # fmt: skip

    def sample(self, rows, metric, unit, subject):
        table = _table(rows)
        mine = self._values(table, metric, unit, subject)
        theirs = _unit_means(table, self.baseline, metric, unit, "the baseline ")  # type: ignore[arg-type]
        a, b, units = _paired(mine, theirs)
        gain = a - b if self.higher_is_better else b - a
        return TSample.of(gain, f"paired t over {len(units)} shared units")

    def describe(self, metric: str) -> str:
        sign = "" if self.higher_is_better else " (lower is better)"
        return f"gain in {metric} over {self.baseline}{sign}"


def unit_slopes(codes: np.ndarray, lx: np.ndarray, ly: np.ndarray, units: int) -> np.ndarray:
    """The OLS slope of ``ly`` on ``lx`` within each unit, shape (units,): point ``i``
    (shape (m,) arrays) belongs to unit ``codes[i]`` in ``0..units-1``; ``nan`` for a unit
    whose points share one ``lx``. Closed form over all units at once (no fit per unit).

    >>> unit_slopes(np.array([0, 0, 1, 1]), np.array([0., 1, 0, 1]), np.array([0., 2, 1, 0]), 2)
    array([ 2., -1.])
    """
    count = np.bincount(codes, minlength=units)
    dx = lx - (np.bincount(codes, lx, units) / np.maximum(count, 1))[codes]
    dy = ly - (np.bincount(codes, ly, units) / np.maximum(count, 1))[codes]
    sxx, sxy = np.bincount(codes, dx * dx, units), np.bincount(codes, dx * dy, units)
    spread = sxx > 1e-12 * np.maximum(1.0, np.bincount(codes, lx * lx, units))
    return np.where(spread, sxy / np.where(spread, sxx, 1.0), np.nan)


@dataclass(frozen=True)
class LogLogSlope(Kind):
    """Per unit, the OLS slope of ``log metric`` on ``log along`` (a column: a dataset or
    method param such as ``"dataset.n"``), the metric first averaged per level; a t interval
    over the units' slopes (each unit is one whole curve, so its points are never treated as
    independent)."""

    along: str = ""
    of: Select | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.along, str) or not self.along:
            raise ValueError("LogLogSlope needs along='dataset.<param>' (the x axis)")

    def sample(self, rows, metric, unit, subject):
        table = _table(rows)
        chosen = table.take(table.mask(self.of or subject))
        if self.along not in chosen:
            raise ValueError(f"no column {self.along!r} (the slope's x) among the results")
        if metric not in chosen:
            raise ValueError(f"no metric column {metric!r} in the results")
        x, y = chosen.floats(self.along), chosen.floats(metric)
        if np.any(x <= 0) or np.any(y <= 0):
            raise ValueError(f"a log-log slope needs positive {self.along} and {metric}")
        units, _ = chosen.unit_codes(unit)
        kept = (units >= 0) & ~np.isnan(x)  # as a groupby leaves out missing keys
        levels, level = np.unique(x[kept], return_inverse=True)
        curves, point = np.unique(units[kept] * len(levels) + level.ravel(), return_inverse=True)
        point = point.ravel()
        mean_y = _means(point, y[kept], len(curves))  # the metric averaged per unit and level
        owner, codes = np.unique(curves // len(levels), return_inverse=True)
        lx = np.log(levels[curves % len(levels)])
        slopes = unit_slopes(codes.ravel(), lx, np.log(mean_y), len(owner))
        slopes = slopes[np.isfinite(slopes)]  # a unit with one level has no slope
        if len(slopes) < 2:
            raise ValueError(f"a slope needs at least 2 units with 2 levels of {self.along},"
                             f" got {len(slopes)}")  # fmt: skip
        return TSample.of(slopes, f"log-log slope per unit, t over {len(slopes)} units")

    def describe(self, metric: str) -> str:
        return f"log-log slope of {metric} in {self.along}"


@dataclass(frozen=True)
class Ratio(Kind):
    """Per unit, the subject's metric over ``over``'s; a t test on the log ratios (a
    geometric-mean ratio), margins on the ratio scale."""

    over: Select | str = ""
    of: Select | None = None

    def __post_init__(self) -> None:
        if isinstance(self.over, str):
            if not self.over:
                raise ValueError("Ratio needs over= (a method name or a Select)")
            object.__setattr__(self, "over", Select(self.over))

    def sample(self, rows, metric, unit, subject):
        table = _table(rows)
        mine = self._values(table, metric, unit, subject)
        a, b, units = _paired(mine, _unit_means(table, self.over, metric, unit))  # type: ignore[arg-type]
        if np.any(a <= 0) or np.any(b <= 0):
            raise ValueError(f"a ratio needs positive {metric} values")
        return TSample.of(np.log(a / b), f"ratio, t on logs over {len(units)} units", "log")

    def describe(self, metric: str) -> str:
        return f"ratio of {metric} to {self.over}"


@dataclass(frozen=True)
class Rate(Kind):
    """The share of units whose value is above ``threshold`` (below with ``above=False``):
    exact binomial over independent units."""

    threshold: float = 0.5
    above: bool = True
    of: Select | None = None

    def sample(self, rows, metric, unit, subject):
        _, values = self._values(rows, metric, unit, subject)
        missing = int(np.isnan(np.asarray(values, dtype=float)).sum())
        if missing:  # a unit with no value is neither a hit nor a miss: it is not measured
            raise ValueError(f"{missing} of {values.size} units have no {metric} value")
        hits = values > self.threshold if self.above else values < self.threshold
        return BinomialSample(int(hits.sum()), int(values.size))

    def describe(self, metric: str) -> str:
        side = ">" if self.above else "<"
        return f"share of units with {metric} {side} {self.threshold:g}"


def _check_sample(sample: Any) -> None:
    """A sample a custom statistic built by hand is sound: finite values, ``se >= 0``,
    ``df = n - 1``, at least two units, skewness within the limit (or the sample declined).

    :raises ValueError: naming the field.
    """
    import math

    from harness.claims.samples import SKEW_LIMIT

    if isinstance(sample, TSample):
        if not all(math.isfinite(v) for v in (sample.mean, sample.se, sample.df, sample.skew)):
            raise ValueError(f"TSample fields must be finite, got {sample}")
        if sample.se < 0:
            raise ValueError(f"TSample.se must be >= 0, got {sample.se}")
        if sample.n < 2 or sample.df != sample.n - 1:
            raise ValueError(f"TSample needs n >= 2 units and df = n - 1, got n={sample.n},"
                             f" df={sample.df} (build it with TSample.of(values))")  # fmt: skip
        if abs(sample.skew) > SKEW_LIMIT and not sample.refused:
            raise ValueError(f"TSample.skew {sample.skew} is beyond {SKEW_LIMIT} and the sample"
                             " did not decline (build it with TSample.of(values))")  # fmt: skip


@dataclass(frozen=True)
class Statistic(Kind):
    """A function of the rows, for what the other kinds do not cover:
    ``function(rows, metric, unit, subject) -> Sample`` (a ``TSample`` or a
    ``BinomialSample``; never an interval it computed itself, so that the hypothesis still
    runs the test)."""

    function: Callable[..., Sample] | None = None
    description: str = "a custom statistic"

    def sample(self, rows, metric, unit, subject):
        if self.function is None:
            raise ValueError("Statistic needs function=")
        frame = rows.frame() if isinstance(rows, Table) else rows
        out = self.function(frame, metric, unit, subject)
        if not isinstance(out, (TSample, BinomialSample)):
            raise TypeError(f"a Statistic's function must return a TSample or a BinomialSample,"
                            f" got {type(out).__name__}")  # fmt: skip
        _check_sample(out)
        return out

    def describe(self, metric: str) -> str:
        return self.description


def _table(rows: pd.DataFrame | Table) -> Table:
    return rows if isinstance(rows, Table) else Table(rows)


def _means(codes: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """The mean of ``values`` per code in ``0..size-1``, missing values skipped."""
    counted = ~np.isnan(values)
    sums = np.bincount(codes[counted], values[counted], size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / np.bincount(codes[counted], minlength=size)


def _unit_means(
    table: Table, group: Select, metric: str, unit: Any, what: str = ""
) -> tuple[np.ndarray, np.ndarray]:
    """``(units, values)``: ``metric`` averaged over the rows of ``group`` in each unit.

    :raises ValueError: ``group`` has no rows.
    """
    chosen = table.take(table.mask(group))
    if not len(chosen):
        raise ValueError(f"no rows of {what}{group} among the claim's results")
    return chosen.unit_means(metric, unit)


def _paired(
    a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(a values, b values, units)`` over the units both hold, in sorted unit order (as
    :func:`~harness.claims.selection.paired`)."""
    units, mine, theirs = np.intersect1d(a[0], b[0], assume_unique=True, return_indices=True)
    return a[1][mine], b[1][theirs], units
