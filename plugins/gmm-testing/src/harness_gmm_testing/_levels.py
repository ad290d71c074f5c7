"""Type-I error of every stored cell against its binomial band, at the (n, d) where the
suites ran (rendered for the README by :mod:`harness_gmm_testing._readme`).

A Monte Carlo test with R null draws has, given those draws, level L ~ Beta(j, R + 1 - j),
j = floor(alpha (R + 1)), of variance about alpha (1 - alpha) / R; over T null trials its
rejection rate then has variance alpha (1 - alpha) (1/T + 1/R). The band is
``alpha +- 2.576 SE`` (two-sided 99% per cell). An analytic null (``calibration`` lognormal
or asymptotic, ``combine`` bonferroni) has no R term.

Source: Davison and Hinkley, *Bootstrap Methods and their Application* (1997), §4.2 (Monte
Carlo tests); the band is the one of ``tests/test_calibration.py``.
"""

from __future__ import annotations

import math

from harness import LazyModule

pd = LazyModule("pandas")

__all__ = ["ALPHA", "level_bands"]

ALPHA = 0.05
_Z99 = 2.5758293035489004
_ANALYTIC = {"lognormal", "asymptotic", "bonferroni"}


def _draws(row: pd.Series) -> float:
    """R of the cell's Monte Carlo null; inf for an analytic null."""
    for key in ("method.calibration", "method.combine"):
        if str(row.get(key, "")) in _ANALYTIC:
            return math.inf
    return float(row["method.calibration_trials"])


def level_bands(results: pd.DataFrame) -> pd.DataFrame:
    """Each ok cell's type-I rate against ``alpha +- 2.576 SE`` (module docstring).

    Parameters
    ----------
    results : DataFrame
        ``harness results`` rows with ``type1-error.rate``, ``dataset.trials`` (T) and
        ``method.calibration_trials`` (R).

    Returns
    -------
    DataFrame
        Columns ``method, dataset, n, d, trials, draws, rate, low, high, inside``.
    """
    df = results[(results["status"] == "ok") & results["type1-error.rate"].notna()]
    rows = []
    for _, row in df.iterrows():
        trials, draws = int(float(row["dataset.trials"])), _draws(row)
        se = math.sqrt(ALPHA * (1 - ALPHA) * (1 / trials + 1 / draws))
        rate = float(row["type1-error.rate"])
        rows.append(
            dict(method=row["method"], dataset=row["dataset"], n=int(float(row["dataset.n"])),
                 d=int(float(row["dataset.d"])), trials=trials, draws=draws, rate=rate,
                 low=ALPHA - _Z99 * se, high=ALPHA + _Z99 * se)
        )  # fmt: skip
    out = pd.DataFrame(rows)
    out["inside"] = (out["rate"] >= out["low"]) & (out["rate"] <= out["high"])
    return out
