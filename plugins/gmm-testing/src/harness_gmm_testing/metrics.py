"""Metrics of the ``gmm-testing`` task: rejection rates, AUC and cost of one test."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from harness import LazyModule, Metric
from harness_gmm_testing.data import TestingData, TestOutput

stats = LazyModule("scipy.stats")

__all__ = ["AUC", "Power", "SecondsPerTest", "TypeOneError", "wilson_interval"]


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


@dataclass
class _AlphaParams:
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must lie in (0, 1), got {self.alpha}")


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
        rate <= alpha up to sampling error).
    """

    name = "type1-error"
    task = "gmm-testing"
    higher_is_better = None
    Params = _AlphaParams

    def compute(self, data: TestingData, output: TestOutput) -> dict[str, float]:
        return _rate(output.p_null, self.params.alpha)


class Power(Metric):
    """Fraction of H1 samples rejected at level alpha, with a Wilson 95% interval.

    Source: standard; Wilson (1927) interval.

    Parameters
    ----------
    alpha : float, default=0.05

    Returns
    -------
    dict
        ``rate``, ``low``, ``high`` in [0, 1]; higher is better.
    """

    name = "power"
    task = "gmm-testing"
    higher_is_better = True
    Params = _AlphaParams

    def compute(self, data: TestingData, output: TestOutput) -> dict[str, float]:
        return _rate(output.p_alt, self.params.alpha)


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
