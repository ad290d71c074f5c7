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
    "threshold_spread",
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


def _rate(p_values: np.ndarray, alpha: float, draws: int) -> dict[str, float]:
    rejected = int(np.sum(p_values <= alpha))
    rate, trials = rejected / p_values.size, p_values.size
    low, high = wilson_interval(rejected, trials)
    spread = threshold_spread(rate, trials, alpha, draws)
    return {"rate": rate, "low": low, "high": high, "mc_sd": spread}


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


def threshold_spread(rate: float, trials: int, alpha: float, draws: int) -> float:
    """Standard deviation a rejection rate owes to the R-draw Monte Carlo threshold that
    every trial of a cell shares (0 for a closed-form null, ``draws`` = 0).

    The level L of the R-draw test follows :func:`threshold_levels`. Under H0 the rate's
    spread is that of L. Under H1 the power at level L is read off an equal-variance
    binormal ROC curve through the observed rate at the mean level,
    ``power(L) = Phi(a - Phi^-1(1 - L))`` (the rate clipped to [0.5, T - 0.5] / T so that
    a saturated cell keeps a finite ``a``); an H0 rate (``rate`` near alpha) gives the
    spread of L itself.

    Source: binormal ROC model (Metz, Semin. Nucl. Med. 8, 1978); Beta law of the level
    as in :func:`threshold_levels`.
    """
    levels = threshold_levels(draws, alpha)
    if levels.size == 0:
        return 0.0
    clipped = min(max(rate, 0.5 / trials), 1 - 0.5 / trials)
    shift = stats.norm.ppf(clipped) + stats.norm.isf(float(levels.mean()))
    return float(np.std(stats.norm.cdf(shift - stats.norm.isf(levels))))


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
        closed-form null; :func:`threshold_spread`).
    """

    name = "type1-error"
    task = "gmm-testing"
    higher_is_better = None
    Params = _AlphaParams

    def compute(self, data: TestingData, output: TestOutput) -> dict[str, float]:
        return _rate(output.p_null, self.params.alpha, output.calibration_draws)


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
        cell's Monte Carlo threshold adds (:func:`threshold_spread`; 0 for a closed-form
        null).
    """

    name = "power"
    task = "gmm-testing"
    higher_is_better = True
    Params = _AlphaParams

    def compute(self, data: TestingData, output: TestOutput) -> dict[str, float]:
        return _rate(output.p_alt, self.params.alpha, output.calibration_draws)


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
