"""The statistics and constants behind ``claims.py``: thresholds derived from the split
sizes, per-seed reductions for the ``Statistic`` kinds, and the controls' transforms.

Kept apart so that ``claims.py`` reads as declarations; like it, this module reads finished
results only (left out of the plugin's code fingerprint).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from harness.claims import BinomialSample, Select, TSample

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BOUND_C",
    "KS_CRITICAL",
    "alpha_for_sqrt",
    "dp_threshold",
    "port_agrees",
    "reversed_along_n",
    "slope_gap",
    "tradeoff_ratio",
    "worst_ratio",
]

KS_CRITICAL = 1.358
"""The 95% quantile of sup |B| over a Brownian bridge B (Kolmogorov's law; Smirnov 1948)."""

SCALES, PROPORTIONS = (1.0, 2.0), (0.7, 0.3)
BOUND_C = 2 * max(float(np.dot(PROPORTIONS, SCALES)) / s for s in SCALES) ** 2
"""C = 2 max_s (sbar / scale_s)^2 = 3.38 for synthetic-unequal-variance's default scales and
proportions: the barycenter map scales group s by sbar / scale_s on both models, and
(a + b)^2 <= 2 a^2 + 2 b^2 (our constant, not the paper's)."""


def dp_threshold(calib: tuple[int, int], test: tuple[int, int]) -> float:
    """The 95% quantile of the test KS of an exactly fair map fitted on ``calib`` groups.

    Given the calibration sample, the mapped predictions of group s have the law of their
    ranks among the calibration predictions of s: fair up to that sample's ECDF error, a
    Brownian bridge of variance 1/n_0 + 1/n_1 between the groups. The test ECDFs add an
    independent one of variance 1/m_0 + 1/m_1, so the test KS tends to sup |B| times the
    root of their sum (our derivation, not a theorem read).

    >>> round(dp_threshold((205, 194), (205, 194)), 3)
    0.192
    """
    return KS_CRITICAL * math.sqrt(sum(1 / a + 1 / b for a, b in (calib, test)))


def _ordered(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.assign(_n=rows["dataset.n_train"].astype(float)).sort_values(["seed", "_n"])


def worst_ratio(rows: pd.DataFrame, metric: str, unit: str, subject: Select) -> TSample:
    """Per seed, the largest fair / (regression + transport) risk over n."""
    mine = _ordered(subject.rows(rows))
    ratio = mine[metric] / (mine["regression-risk"] + mine["transport-risk"])
    worst = ratio.groupby(mine["seed"]).max().to_numpy(float)
    return TSample.of(worst, f"per-seed max over n, t over {worst.size} units")


def reversed_along_n(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    """``metric`` reversed along n within each seed and base (a risk that does not fall)."""
    out = _ordered(rows)
    keys = ["seed", *[c for c in ("method.regressor", "method.map_rows") if c in out]]
    out[metric] = out.groupby(keys, dropna=False)[metric].transform(lambda v: v.to_numpy()[::-1])
    return out.drop(columns="_n")


def tradeoff_ratio(rows: pd.DataFrame, metric: str, unit: str, subject: Select) -> TSample:
    """Per seed, the mean over alpha of excess risk / ((1 - sqrt(alpha))^2 U(f*))."""
    mine = subject.rows(rows)
    alpha = mine["method.alpha"].astype(float)
    closed = (1 - np.sqrt(alpha)) ** 2 * mine["dataset.cost_of_fairness"].astype(float)
    ratio = (mine[metric] / closed).groupby(mine["seed"]).mean().to_numpy(float)
    return TSample.of(ratio, f"per-seed mean over alpha, t over {ratio.size} units")


def alpha_for_sqrt(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The excess risk a mix with alpha in place of sqrt(alpha) would have."""
    alpha = rows["method.alpha"].astype(float)
    return rows.assign(**{metric: rows[metric] * (1 - alpha) ** 2 / (1 - np.sqrt(alpha)) ** 2})


def port_agrees(peer: Select, tolerance: float):
    """A ``Statistic`` function: the splits whose ``metric`` the subject and ``peer`` give
    within ``tolerance`` (exact binomial over the shared seeds)."""

    def share(rows: pd.DataFrame, metric: str, unit: str, subject: Select) -> BinomialSample:
        ours = subject.rows(rows).groupby("seed")[metric].mean()
        theirs = peer.rows(rows).groupby("seed")[metric].mean()
        both = ours.index.intersection(theirs.index)
        hits = int((np.abs(ours[both] - theirs[both]) < tolerance).sum())
        return BinomialSample(hits, int(both.size), f"exact binomial over {both.size} splits")

    return share


def _seed_slopes(rows: pd.DataFrame, metric: str) -> pd.Series:
    """Per seed, the OLS slope of log ``metric`` (averaged per n) on log n_train."""
    logs = rows.assign(_x=np.log(rows["dataset.n_train"].astype(float)),
                       _y=np.log(rows[metric].astype(float)))  # fmt: skip
    curves = logs.groupby(["seed", "_x"])["_y"].mean().reset_index()

    def slope(c: pd.DataFrame) -> float:
        return float(np.polyfit(c["_x"], c["_y"], 1)[0]) if len(c) > 1 else np.nan

    return curves.groupby("seed").apply(slope, include_groups=False)


def slope_gap(baseline: Select):
    """A ``Statistic`` function: per seed, the subject's log-log slope in n minus
    ``baseline``'s on the same draws (a paired t over the seeds both hold)."""

    def gap(rows: pd.DataFrame, metric: str, unit: str, subject: Select) -> TSample:
        mine = _seed_slopes(subject.rows(rows), metric)
        theirs = _seed_slopes(baseline.rows(rows), metric)
        both = mine.index.intersection(theirs.index)
        diff = (mine[both] - theirs[both]).dropna().to_numpy(float)
        return TSample.of(diff, f"paired slope difference, t over {diff.size} seeds")

    return gap
