"""Apply one test to every sample of a cell, with Monte Carlo or analytic p-values.

Source: standard Monte Carlo test (Barnard 1963; Davison and Hinkley 1997, §4.2): with R
null statistics, ``p = (1 + #{T_r >= T}) / (R + 1)`` is exactly valid for a simple null.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from harness import limit_threads
from harness_gmm_testing.data import TestingData, TestOutput

__all__ = ["Statistic", "apply_test"]

Statistic = Callable[[np.ndarray, np.random.Generator], float]
"""``statistic(X, rng) -> float``: X of shape (n, d); larger means more evidence against H0;
``rng`` serves tests that draw randomness (projection directions)."""

_CALIBRATION_STREAM = 7
_SMALLEST_P = 1e-300  # an analytic tail that underflows to 0 is reported as this


def _null_statistics(
    statistic: Statistic, n: int, d: int, repetitions: int, seed: int
) -> np.ndarray:
    """R statistics on fresh N(0, I_d) samples of shape (n, d), one sample at a time."""
    out = np.empty(repetitions)
    for r in range(repetitions):
        rng = np.random.default_rng([seed, _CALIBRATION_STREAM, r])
        out[r] = statistic(rng.standard_normal((n, d)), rng)
    return out


def apply_test(
    data: TestingData,
    statistic: Statistic,
    seed: int,
    *,
    calibration_trials: int,
    analytic_p: Callable[[float], float] | None = None,
) -> TestOutput:
    """Run ``statistic`` on every H0 and H1 sample of ``data`` and turn it into p-values.

    Parameters
    ----------
    data : TestingData
    statistic : Statistic
    seed : int
        The method's seed (per cell): seeds the calibration samples and the statistic's rng.
    calibration_trials : int
        R, the number of Monte Carlo null samples; used when ``analytic_p`` is None.
    analytic_p : callable, optional
        ``p(T)`` from a closed-form null distribution; replaces Monte Carlo calibration.

    Returns
    -------
    TestOutput

    Notes
    -----
    BLAS runs single-threaded inside (:func:`harness.limit_threads`): the products here are
    tall and thin (n x at most a few hundred), where extra threads gain little and, on a
    shared machine, multi-threaded OpenBLAS slows them down ten-fold.
    """
    with limit_threads(1):
        return _apply(data, statistic, seed, calibration_trials, analytic_p)


def _apply(
    data: TestingData,
    statistic: Statistic,
    seed: int,
    calibration_trials: int,
    analytic_p: Callable[[float], float] | None,
) -> TestOutput:
    start = time.perf_counter()
    null = None
    if analytic_p is None:
        null = np.sort(_null_statistics(statistic, data.n, data.d, calibration_trials, seed))
    calibration_seconds = time.perf_counter() - start if null is not None else 0.0

    def p_value(value: float) -> float:
        if null is None:
            return float(min(1.0, max(analytic_p(value), _SMALLEST_P)))
        exceed = null.size - np.searchsorted(null, value, side="left")
        return (1.0 + exceed) / (null.size + 1.0)

    stats = {"h0": np.empty(data.trials), "h1": np.empty(data.trials)}
    pvals = {"h0": np.empty(data.trials), "h1": np.empty(data.trials)}
    seconds = []
    for index, hypothesis in enumerate(("h0", "h1")):
        for trial, X in enumerate(data.samples(hypothesis)):
            rng = np.random.default_rng([seed, index, trial])
            tic = time.perf_counter()
            stats[hypothesis][trial] = statistic(X, rng)
            pvals[hypothesis][trial] = p_value(stats[hypothesis][trial])
            seconds.append(time.perf_counter() - tic)
    return TestOutput(
        p_null=pvals["h0"],
        p_alt=pvals["h1"],
        stat_null=stats["h0"],
        stat_alt=stats["h1"],
        seconds=np.asarray(seconds),
        calibration_seconds=calibration_seconds,
        calibration_draws=0 if null is None else int(null.size),
    )
