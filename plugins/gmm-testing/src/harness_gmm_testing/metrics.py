"""Metrics of the ``gmm-testing`` task: rejection rates, AUC and cost of one test."""

from __future__ import annotations

import math
from typing import Annotated

import numpy as np
from pydantic import Field
from pydantic.dataclasses import dataclass

from harness import LazyModule, Metric
from harness_gmm_testing.data import TestingData, TestOutput

stats = LazyModule("scipy.stats")

__all__ = [
    "AUC",
    "Power",
    "SecondsPerTest",
    "TypeOneError",
    "threshold_levels",
    "wilson_interval",
]


def wilson_interval(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Source: Wilson, JASA 22 (1927); Brown, Cai, DasGupta, Statist. Sci. 16 (2001), eq. (4).

    Examples
    --------
    >>> [round(x, 4) for x in wilson_interval(5, 100)]
    [0.0215, 0.1118]
    """
    z = stats.norm.isf((1 - level) / 2)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials**2)) / (1 + z * z / trials)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def _rate(p_values: np.ndarray, alpha: float) -> dict[str, float]:
    rejected = int(np.sum(p_values <= alpha))
    low, high = wilson_interval(rejected, p_values.size)
    return {"rate": rejected / p_values.size, "low": low, "high": high}


def threshold_levels(draws: int, alpha: float, points: int = 400) -> np.ndarray:
    """Quantiles of the level a Monte Carlo test has given its ``draws`` null samples.

    The test rejects when fewer than ``j = floor(alpha (R + 1))`` null draws reach the
    statistic, i.e. above the j-th largest draw; the null probability above that order
    statistic is Beta(j, R + 1 - j) (mean about alpha). Returns ``points`` equally spaced
    quantiles of that law (empty when ``draws`` is 0 or j < 1: no Monte Carlo threshold).

    Source: order statistics of a uniform sample (David and Nagaraja, *Order Statistics*,
    2003, §2.2); Davison and Hinkley (1997), §4.2.
    """
    j = math.floor(alpha * (draws + 1) + 1e-9)
    if draws < 1 or j < 1:
        return np.empty(0)
    return stats.beta(j, draws + 1 - j).ppf((np.arange(points) + 0.5) / points)


def _threshold_sd(output: TestOutput, alpha: float, alternative: bool) -> float:
    """Standard deviation a rate owes to the R-draw Monte Carlo threshold that every trial
    of the cell shares (0 for a closed-form null).

    For the type-I error it is the s.d. of the level law (:func:`threshold_levels`); for
    the power, the s.d. of the empirical ROC curve (H1 trials' statistics against the H0
    trials' quantiles) read at those levels.
    """
    levels = threshold_levels(output.calibration_draws, alpha)
    if levels.size == 0:
        return 0.0
    if not alternative:
        return float(np.std(levels))
    cuts = np.quantile(output.stat_null, 1.0 - levels)
    return float(np.std((output.stat_alt[None, :] > cuts[:, None]).mean(axis=1)))


@dataclass
class _AlphaParams:
    alpha: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.05


class TypeOneError(Metric):
    """Fraction of H0 samples rejected at level alpha, with a Wilson 95% interval.

    Source: standard; Wilson (1927) interval.

    Parameters
    ----------
    alpha : float, default=0.05
        Test level, in (0, 1).

    Returns
    -------
    dict
        ``rate``, ``low``, ``high`` in [0, 1]; closer to alpha is better (a valid test has
        rate <= alpha up to sampling error). ``mc_sd``: the s.d. the cell's Monte Carlo
        threshold adds (shared by all its trials, so not in the Wilson interval; 0 for a
        closed-form null).
    """

    name = "type1-error"
    task = "gmm-testing"
    higher_is_better = None
    Params = _AlphaParams

    def compute(self, data: TestingData, output: TestOutput) -> dict[str, float]:
        rate = _rate(output.p_null, self.params.alpha)
        return {**rate, "mc_sd": _threshold_sd(output, self.params.alpha, alternative=False)}


class Power(Metric):
    """Fraction of H1 samples rejected at level alpha, with a Wilson 95% interval.

    Source: standard; Wilson (1927) interval.

    Parameters
    ----------
    alpha : float, default=0.05

    Returns
    -------
    dict
        ``rate``, ``low``, ``high`` in [0, 1]; higher is better. ``mc_sd``: the s.d. the
        cell's Monte Carlo threshold adds (the empirical ROC curve read over the law of the
        threshold's level; 0 for a closed-form null).
    """

    name = "power"
    task = "gmm-testing"
    higher_is_better = True
    Params = _AlphaParams

    def compute(self, data: TestingData, output: TestOutput) -> dict[str, float]:
        rate = _rate(output.p_alt, self.params.alpha)
        return {**rate, "mc_sd": _threshold_sd(output, self.params.alpha, alternative=True)}


class AUC(Metric):
    """Area under the ROC curve of the statistic, H1 samples against H0 samples:
    ``P(T_1 > T_0) + P(T_1 = T_0) / 2`` (Mann-Whitney).

    Source: Hanley and McNeil, Radiology 143 (1982).

    Returns
    -------
    float
        In [0, 1], unitless; 0.5 = blind, higher is better.
    """

    name = "auc"
    task = "gmm-testing"
    higher_is_better = True

    def compute(self, data: TestingData, output: TestOutput) -> float:
        ranks = stats.rankdata(np.concatenate([output.stat_null, output.stat_alt]))
        n0, n1 = output.stat_null.size, output.stat_alt.size
        return float((ranks[n0:].sum() - n1 * (n1 + 1) / 2) / (n0 * n1))


class SecondsPerTest(Metric):
    """Mean wall-clock seconds of one test call (statistic and p-value, calibration
    excluded), and the one-off Monte Carlo calibration time.

    Source: this benchmark (time.perf_counter around each call).

    Returns
    -------
    dict
        ``mean`` and ``median`` seconds per test, ``calibration`` seconds; lower is better.
    """

    name = "seconds-per-test"
    task = "gmm-testing"
    higher_is_better = False

    def compute(self, data: TestingData, output: TestOutput) -> dict[str, float]:
        return {
            "mean": float(np.mean(output.seconds)),
            "median": float(np.median(output.seconds)),
            "calibration": float(output.calibration_seconds),
        }
