"""Statistics for claim authors: each test returns an :class:`Estimate` a claim can decide on.

Every function takes the *units of replication* of a claim as its rows (seeds,
configurations), never the cells of one unit as if they were independent: average the cells
of a unit first, or declare the blocks a permutation must respect. Intervals are 95% and
two-sided unless a function says otherwise; p-values are those of the test named in
``Estimate.test``. Built on scipy (t, binomial and normal distributions) and statsmodels
(Wilson interval, Holm's correction).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> new, old = rng.normal(1.0, 0.5, 20), rng.normal(0.0, 0.5, 20)
>>> e = paired_difference(new, old)
>>> e.low > 0, e.n
(True, 20)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

__all__ = [
    "Estimate",
    "binomial_rate",
    "equivalence",
    "holm",
    "json_ready",
    "loglog_slope",
    "minimum_detectable_effect",
    "one_sample",
    "paired_difference",
    "permutation_test",
]

Alternative = Literal["two-sided", "greater", "less"]


@dataclass(frozen=True)
class Estimate:
    """The outcome of one test: a point estimate, its interval and a p-value.

    Attributes
    ----------
    estimate : float
        The statistic, in the claim's units (a difference, a slope, a rate, ...).
    low, high : float
        Its 95% interval (``level`` says otherwise where a test uses another).
    p_value : float
        The p-value of ``test`` against its null (``nan`` when the test has none).
    n : int
        The number of units of replication the estimate rests on.
    mde : float
        The smallest effect the test detects with power 0.8 at this ``n`` and level 0.05
        (same units as ``estimate``; ``nan`` when unknown). A claim that is not detected is
        inconclusive down to this size, never "absent".
    test : str
        What was computed, in words ("paired t over 10 seeds", ...).
    level : float
        The confidence level of ``[low, high]``.
    """

    estimate: float
    low: float
    high: float
    p_value: float
    n: int
    mde: float
    test: str
    level: float = 0.95
    extra: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("estimate", "low", "high", "p_value", "mde", "level"):
            object.__setattr__(self, name, float(getattr(self, name)))  # numpy scalars too
        object.__setattr__(self, "n", int(self.n))
        if self.low > self.high:
            raise ValueError(f"Estimate interval is inverted: low {self.low} > high {self.high}")
        if 1 < self.p_value <= 1 + 1e-9:  # round-off of a sum of probabilities
            object.__setattr__(self, "p_value", 1.0)
        if not (math.isnan(self.p_value) or 0 <= self.p_value <= 1):
            raise ValueError(f"Estimate p_value must be in [0, 1] or nan, got {self.p_value}")

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``nan`` kept as ``None``)."""
        return {k: json_ready(v) for k, v in asdict(self).items()}


def json_ready(value: Any) -> Any:
    """``value`` made JSON-ready: numpy scalars as Python numbers, nan and inf as None,
    recursively through dicts and lists."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value


def _finite(values: Any, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds non-finite values: {array[~np.isfinite(array)][:3]}")
    return array


def minimum_detectable_effect(
    se: float, df: float | None = None, alpha: float = 0.05, power: float = 0.8, sides: int = 2
) -> float:
    """The smallest true effect a test of standard error ``se`` detects with ``power``.

    ``(t_{1-alpha/sides} + t_{power}) * se`` with ``df`` degrees of freedom (normal
    quantiles when ``df`` is None): the usual approximation of the power of a t or z test
    (Cohen, *Statistical Power Analysis*, 1988, ch. 2).

    >>> round(minimum_detectable_effect(1.0), 2)
    2.8
    """
    from scipy import stats

    if not math.isfinite(se) or se < 0:
        return float("nan")
    dist = stats.norm if df is None or df <= 0 else stats.t(df)
    return float((dist.ppf(1 - alpha / sides) + dist.ppf(power)) * se)


def one_sample(
    values: Sequence[float], null: float = 0.0, alternative: Alternative = "two-sided"
) -> Estimate:
    """Mean of ``values`` (one per unit) with a t interval and a one-sample t test.

    :param values: shape (n,), one number per unit of replication, n >= 2.
    :param null: the mean under the null hypothesis.
    :param alternative: the alternative of the p-value (the interval is always two-sided).
    :raises ValueError: fewer than two values, or a non-finite one.
    """
    from scipy import stats

    x = _finite(values, "values")
    if x.size < 2:
        raise ValueError(f"one_sample needs at least 2 units, got {x.size}")
    mean, se, df = float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)), x.size - 1
    half = float(stats.t.ppf(0.975, df)) * se
    if se == 0:
        p = 0.0 if mean != null else 1.0
    else:
        p = float(stats.ttest_1samp(x, null, alternative=alternative).pvalue)
    return Estimate(mean, mean - half, mean + half, p, int(x.size),
                    minimum_detectable_effect(se, df), f"t over {x.size} units")  # fmt: skip


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    alternative: Alternative = "two-sided",
    bootstrap: int = 0,
    seed: int = 0,
) -> Estimate:
    """Mean of ``a - b`` over units shared by both (seeds, say), paired t test.

    :param a, b: shape (n,), aligned: ``a[i]`` and ``b[i]`` come from the same unit.
    :param bootstrap: when > 0, the interval is a percentile bootstrap over units with this
        many resamples instead of the t interval (the p-value stays the t test's).
    :raises ValueError: different lengths, fewer than two units, non-finite values.
    """
    x, y = _finite(a, "a"), _finite(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired values differ in length: {x.size} and {y.size}")
    out = one_sample(x - y, 0.0, alternative)
    test = f"paired t over {x.size} units"
    if bootstrap:
        rng = np.random.default_rng(seed)
        d = x - y
        means = d[rng.integers(0, d.size, (bootstrap, d.size))].mean(axis=1)
        low, high = np.quantile(means, [0.025, 0.975])
        return Estimate(out.estimate, float(low), float(high), out.p_value, out.n, out.mde,
                        test + f", bootstrap interval ({bootstrap} resamples)")  # fmt: skip
    return Estimate(out.estimate, out.low, out.high, out.p_value, out.n, out.mde, test)


def equivalence(values: Sequence[float], reference: float, margin: float) -> Estimate:
    """Two one-sided t tests (TOST) that the mean of ``values`` lies in
    ``reference +- margin`` (Schuirmann, 1987).

    The p-value is the larger of the two one-sided p-values: below 0.05 means equivalent at
    level 0.05. The interval is the 90% t interval (``level=0.9``), the one TOST decides on.

    :raises ValueError: ``margin <= 0``, fewer than two values, non-finite values.
    """
    from scipy import stats

    if not margin > 0:
        raise ValueError(f"equivalence margin must be > 0, got {margin}")
    x = _finite(values, "values")
    base = one_sample(x, reference)
    se = float(x.std(ddof=1) / math.sqrt(x.size))
    df = x.size - 1
    if se == 0:
        p = 0.0 if abs(base.estimate - reference) < margin else 1.0
    else:
        p_low = stats.t.sf((base.estimate - (reference - margin)) / se, df)
        p_high = stats.t.cdf((base.estimate - (reference + margin)) / se, df)
        p = float(max(p_low, p_high))
    half = float(stats.t.ppf(0.95, df)) * se
    return Estimate(base.estimate, base.estimate - half, base.estimate + half, p, base.n,
                    base.mde, f"TOST within {reference:g} +- {margin:g} over {x.size} units",
                    level=0.9)  # fmt: skip


def loglog_slope(
    x: Sequence[float],
    y: Sequence[float],
    units: Sequence[Any],
    null: float = 0.0,
    resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """OLS slope of ``log y`` on ``log x`` with a bootstrap over units (a rate exponent).

    Whole units (seeds) are resampled with replacement and the slope refitted on all their
    points, so points of one seed are never treated as independent.

    :param x, y: shape (m,), positive; point ``i`` belongs to unit ``units[i]``.
    :param null: the slope of the null hypothesis; the p-value is the two-sided bootstrap
        p-value ``2 * min(P(slope* <= null), P(slope* >= null))``.
    :raises ValueError: non-positive values, fewer than two units or two distinct x.
    """
    lx, ly = np.log(_positive(x, "x")), np.log(_positive(y, "y"))
    labels = np.asarray(units)
    if lx.shape != ly.shape or lx.shape != labels.shape:
        raise ValueError(f"x, y, units differ in length: {lx.size}, {ly.size}, {labels.size}")
    if np.unique(lx).size < 2:
        raise ValueError("loglog_slope needs at least two distinct x")
    order = {u: i for i, u in enumerate(dict.fromkeys(labels.tolist()))}  # first-seen order
    if len(order) < 2:
        raise ValueError(f"loglog_slope needs at least 2 units, got {len(order)}")
    codes = np.fromiter((order[u] for u in labels.tolist()), int, labels.size)
    slope = float(np.polyfit(lx, ly, 1)[0])
    draws = np.random.default_rng(seed).integers(0, len(order), (resamples, len(order)))
    boot = _resampled_slopes(codes, lx, ly, draws)
    low, high = np.quantile(boot, [0.025, 0.975])
    p = float(min(1.0, 2 * min(np.mean(boot <= null), np.mean(boot >= null))))
    se = float(boot.std(ddof=1))
    return Estimate(slope, float(low), float(high), p, len(order), minimum_detectable_effect(se),
                    f"log-log OLS slope, bootstrap over {len(order)} units")  # fmt: skip


def _resampled_slopes(
    codes: np.ndarray, lx: np.ndarray, ly: np.ndarray, draws: np.ndarray
) -> np.ndarray:
    """The OLS slope of ``ly`` on ``lx`` over the points of each row of ``draws`` (shape
    (resamples, units): the units drawn, with replacement; point ``i`` is unit
    ``codes[i]``'s), in closed form from per-unit sums; a resample whose points share one x
    has no slope and is left out.

    >>> codes, lx = np.array([0, 0, 1, 1]), np.array([0.0, 1, 0, 2])
    >>> _resampled_slopes(codes, lx, 3 * lx, np.array([[0, 1], [1, 1]])).round(12)
    array([3., 3.])
    """
    units = int(codes.max()) + 1
    dx, dy = lx - lx.mean(), ly - ly.mean()  # centred: the sums below lose no digits
    sums = np.stack([np.bincount(codes, w, units) for w in
                     (np.ones_like(dx), dx, dy, dx * dx, dx * dy)])  # fmt: skip
    resamples = len(draws)
    flat_draws = (draws + units * np.arange(resamples)[:, None]).ravel()
    weights = np.bincount(flat_draws, minlength=resamples * units).reshape(resamples, units)
    weights = weights.astype(float)
    n, sx, sy, sxx, sxy = (weights @ sums.T).T
    sxx_c = sxx - sx * sx / n
    # one x in every drawn unit, the same x throughout: no slope (as np.unique would say)
    first = np.zeros(units)
    first[codes[::-1]] = lx[::-1]
    flat = np.bincount(codes, (lx != first[codes]).astype(float), units) == 0
    key = np.where(flat, first, np.nan)  # a unit with several x: nan, never equal
    drawn = weights > 0
    single = np.where(drawn, key, -np.inf).max(axis=1) == np.where(drawn, key, np.inf).min(axis=1)
    return ((sxy - sx * sy / n) / np.where(single, 1.0, sxx_c))[~single]


def _positive(values: Any, name: str) -> np.ndarray:
    array = _finite(values, name)
    if np.any(array <= 0):
        raise ValueError(f"{name} must be positive for a log-log slope, got {array.min()}")
    return array


def binomial_rate(successes: int, trials: int, null: float = 0.5) -> Estimate:
    """A rate with its Wilson interval and an exact binomial test against ``null``.

    :raises ValueError: ``trials < 1`` or ``successes`` outside ``0..trials``.
    """
    from scipy import stats
    from statsmodels.stats.proportion import proportion_confint

    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"binomial_rate needs 0 <= successes <= trials >= 1, got {successes}"
                         f" of {trials}")  # fmt: skip
    low, high = proportion_confint(successes, trials, alpha=0.05, method="wilson")
    p = float(stats.binomtest(successes, trials, null).pvalue)
    se = math.sqrt(null * (1 - null) / trials)
    return Estimate(successes / trials, float(low), float(high), p, trials,
                    minimum_detectable_effect(se), f"Wilson interval, exact binomial test vs"
                    f" {null:g} over {trials} trials")  # fmt: skip


def permutation_test(
    statistic: Callable[[np.ndarray, np.ndarray], float],
    x: Sequence[Any],
    y: Sequence[float],
    blocks: Sequence[Any] | None = None,
    permute: Literal["within", "between"] = "within",
    permutations: int = 2000,
    seed: int = 0,
) -> Estimate:
    """A permutation test of ``statistic(x, y)`` that exchanges only exchangeable units.

    :param statistic: ``f(x, y) -> float``; larger means more association.
    :param x: shape (m,), the labels permuted.
    :param y: shape (m,), the measure.
    :param blocks: shape (m,), the block of each point, or None (all points exchangeable).
    :param permute: ``"within"`` shuffles ``x`` inside each block (blocks are strata);
        ``"between"`` shuffles whole blocks' ``x`` among blocks, for an ``x`` constant
        within a block (configuration-level effects: the blocks are the units).
    :returns: the observed statistic and the one-sided p-value
        ``(1 + #{null >= observed}) / (1 + permutations)`` (``extra['null_mean']`` the null's
        mean); ``n`` counts blocks. No interval: ``low`` and ``high`` are ``nan`` (a
        permutation test of an arbitrary statistic has no effect model to invert, and the
        null's quantiles are no interval for the effect), so a claim decides on the p-value
        or computes its own interval.
    :raises ValueError: mismatched lengths, or ``permute="between"`` with an ``x`` that
        varies inside a block.
    """
    xs, ys = np.asarray(x), _finite(y, "y")
    labels = np.zeros(len(xs), int) if blocks is None else np.asarray(blocks)
    if not len(xs) == len(ys) == len(labels):
        raise ValueError(f"x, y, blocks differ in length: {len(xs)}, {len(ys)}, {len(labels)}")
    groups = [np.flatnonzero(labels == b) for b in dict.fromkeys(labels.tolist())]
    if permute == "between" and any(np.unique(xs[g]).size > 1 for g in groups):
        raise ValueError("permute='between' needs x constant within each block")
    rng = np.random.default_rng(seed)
    observed = float(statistic(xs, ys))
    null = np.empty(permutations)
    for i in range(permutations):
        shuffled = xs.copy()
        if permute == "within":
            for g in groups:
                shuffled[g] = xs[rng.permutation(g)]
        else:
            order = rng.permutation(len(groups))
            for g, h in zip(groups, order, strict=True):
                shuffled[g] = xs[groups[h][0]]
        null[i] = statistic(shuffled, ys)
    p = float((1 + np.sum(null >= observed)) / (1 + permutations))
    mde = float(np.quantile(null, 0.95) - null.mean() + 0.84 * null.std(ddof=1))
    return Estimate(observed, math.nan, math.nan, p, len(groups), mde,
                    f"permutation ({permute} {len(groups)} blocks, {permutations} draws);"
                    " p-value only, no interval for the effect",
                    extra={"null_mean": float(null.mean())})  # fmt: skip


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``p_values`` (statsmodels ``multipletests(method=
    "holm")``'s arithmetic, without the ``gc.collect()`` it runs on every call: 0.6 s in
    a process holding torch); ``nan`` entries are left as they are and not counted.

    >>> [round(p, 3) for p in holm([0.01, 0.04, float("nan"), 0.03])]
    [0.03, 0.06, nan, 0.06]
    """
    p = np.asarray(p_values, dtype=float)
    out = p.copy()
    ok = np.isfinite(p)
    if ok.any():
        finite = p[ok]
        order = np.argsort(finite)
        stepped = np.maximum.accumulate(finite[order] * np.arange(finite.size, 0, -1))
        adjusted = np.empty_like(finite)
        adjusted[order] = np.minimum(stepped, 1.0)
        out[ok] = adjusted
    return out.tolist()
