"""Metrics of the ``fair-regression`` task: accuracy, exact DP unfairness, risk to g*."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from harness import Metric, Skip
from harness_fair_regression.data import FairRegressionData, RegressionOutput, check_predictions

__all__ = [
    "MSE",
    "RMSE",
    "CostToBase",
    "ExcessRisk",
    "FairRisk",
    "KSUnfairness",
    "RegressionRisk",
    "SPDisparity",
    "TransportRisk",
    "W2Unfairness",
    "ks_unfairness",
    "sp_disparity",
    "w2_unfairness",
]

TASK = "fair-regression"


def _groups(pred: np.ndarray, s: np.ndarray) -> list[np.ndarray]:
    """Sorted predictions of each group present in ``s``; raises ValueError on NaN."""
    pred, s = check_predictions(pred, s, "predictions hold NaN/inf")
    return [np.sort(pred[s == g]) for g in np.unique(s)]


def _mse(a: np.ndarray, b: np.ndarray) -> float:
    """Mean of (a - b)^2."""
    return float(np.mean((a - b) ** 2))


def _merge(*sorted_arrays: np.ndarray) -> np.ndarray:
    """Sorted union (with repeats) of sorted arrays; timsort merges the runs in O(n)."""
    return np.sort(np.concatenate(sorted_arrays), kind="stable")


def ks_unfairness(pred: np.ndarray, s: np.ndarray) -> float:
    """Exact Kolmogorov-Smirnov unfairness, max over group pairs.

    Source: Chzhen et al., NeurIPS 2020, Section 6, KS = sup_t |F_0(t) - F_1(t)| over
    the empirical CDFs of the predictions of each group, evaluated at all pooled points.

    Parameters
    ----------
    pred : ndarray of float, shape (n,)
    s : ndarray of int, shape (n,)

    Returns
    -------
    float
        In [0, 1], unitless; 0 when there is a single group.

    Examples
    --------
    >>> ks_unfairness(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]))
    1.0
    """
    groups = _groups(pred, s)
    best = 0.0
    for a, b in combinations(groups, 2):
        pooled = _merge(a, b)
        fa = np.searchsorted(a, pooled, side="right") / a.size
        fb = np.searchsorted(b, pooled, side="right") / b.size
        best = max(best, float(np.max(np.abs(fa - fb))))
    return best


def sp_disparity(pred: np.ndarray, s: np.ndarray) -> float:
    """Statistical-parity disparity of Agarwal, Dudik, Wu (ICML 2019), exact.

    Source: Agarwal et al., ICML 2019, Section 2, max_a sup_z |P(h >= z | A=a) - P(h >= z)|,
    with z ranging over every pooled prediction (no threshold grid).

    Returns
    -------
    float
        In [0, 1], unitless; 0 when there is a single group.

    Examples
    --------
    >>> sp_disparity(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]))
    0.5
    """
    groups = _groups(pred, s)
    pooled = _merge(*groups)
    overall = 1 - np.searchsorted(pooled, pooled, side="left") / pooled.size
    best = 0.0
    for g in groups:
        within = 1 - np.searchsorted(g, pooled, side="left") / g.size
        best = max(best, float(np.max(np.abs(within - overall))))
    return best


def w2_unfairness(pred: np.ndarray, s: np.ndarray) -> float:
    """Barycenter variance U = sum_s p_s int_0^1 (Q_s(u) - sum_s' p_s' Q_s'(u))^2 du, exact.

    Source: Chzhen & Schreuder, Ann. Statist. 2022, Section 2, U(f) = min_nu sum_s p_s
    W_2^2(Law(f | S=s), nu), for the empirical quantile functions Q_s(u) =
    sorted_s[floor(n_s u)] (piecewise constant, so the integral is a finite sum).

    Returns
    -------
    float
        >= 0, in squared target units; 0 when all groups have the same law.

    Examples
    --------
    >>> w2_unfairness(np.array([0.0, 0.0, 2.0, 2.0]), np.array([0, 0, 1, 1]))
    1.0
    """
    groups = _groups(pred, s)
    n = np.array([g.size for g in groups])
    p = n / n.sum()
    cuts = _merge(*(np.arange(k + 1) / k for k in n))
    cuts = cuts[np.concatenate([[True], np.diff(cuts) > 0])]
    mids, widths = (cuts[:-1] + cuts[1:]) / 2, np.diff(cuts)
    Q = np.stack([g[np.minimum((mids * g.size).astype(np.int64), g.size - 1)] for g in groups])
    bary = p @ Q
    return float(p @ (((Q - bary) ** 2) @ widths))


class MSE(Metric):
    """Mean squared error of the test predictions.

    Source: Chzhen et al., NeurIPS 2020, Section 6 (``f_err.m`` of the official code).

    Returns
    -------
    float
        mean (y_test - y_pred)^2, >= 0, in squared target units; lower is better.
    """

    name = "mse"
    task = TASK
    higher_is_better = False

    def compute(self, data: FairRegressionData, output: RegressionOutput) -> float:
        """Mean squared error over all test rows."""
        return _mse(data.y_test, output.y_pred)


class RMSE(Metric):
    """Root mean squared error of the test predictions.

    Source: the square root of ``mse``.

    Returns
    -------
    float
        sqrt(mse), >= 0, in target units; lower is better.
    """

    name = "rmse"
    task = TASK
    higher_is_better = False

    def compute(self, data: FairRegressionData, output: RegressionOutput) -> float:
        """Square root of the mean squared error."""
        return float(np.sqrt(_mse(data.y_test, output.y_pred)))


def _need_two_groups(name: str, data: FairRegressionData) -> None:
    if data.n_groups < 2:
        raise Skip(f"{name} needs two groups; '{data.name}' has one")


class KSUnfairness(Metric):
    """Exact KS unfairness of the test predictions, max over group pairs.

    Source: Chzhen et al., NeurIPS 2020, Section 6 (KS of the group-wise prediction laws);
    computed over all pooled points, not the official 1000-point grid.

    Returns
    -------
    float
        In [0, 1], unitless; lower is fairer.

    Raises
    ------
    Skip
        If the dataset has one group.
    """

    name = "ks-unfairness"
    task = TASK
    higher_is_better = False

    def compute(self, data: FairRegressionData, output: RegressionOutput) -> float:
        """max over pairs (s, s') of sup_t |F_s(t) - F_s'(t)|."""
        _need_two_groups(self.name, data)
        return ks_unfairness(output.y_pred, data.s_test)


class W2Unfairness(Metric):
    """Barycenter variance U (cost of fairness) of the test predictions.

    Source: Chzhen & Schreuder, Ann. Statist. 2022, eq. (2.2); Le Gouic et al. 2020.

    Returns
    -------
    float
        >= 0, in squared target units; lower is fairer.

    Raises
    ------
    Skip
        If the dataset has one group.
    """

    name = "w2-unfairness"
    task = TASK
    higher_is_better = False

    def compute(self, data: FairRegressionData, output: RegressionOutput) -> float:
        """U = sum_s p_s W_2^2(Law(pred | S=s), barycenter), with p_s test frequencies."""
        _need_two_groups(self.name, data)
        return w2_unfairness(output.y_pred, data.s_test)


class CostToBase(Metric):
    """How far a post-processing moved the base, in units of the base's unfairness U(f).

    E(g(X, S) - f(X, S))^2 / U(f) on the test split, where f is the base regressor's
    predictions (``base_pred``) and U(f) their barycenter variance (``w2_unfairness``). The
    L2 projection of f onto DP-fair predictors is the frequency-weighted barycenter map,
    and its squared distance to f is exactly U(f): a ratio of 1, whatever f is and without
    y (our derivation: the one-dimensional monotone map to the barycenter).

    Source: Chzhen et al., NeurIPS 2020, abstract (the fair optimum's law is the barycenter
    of the groups' laws of f; the theorem's text was not read).

    Returns
    -------
    float
        >= 0, unitless: 1 for the projection, (1 - t)^2 for a mix t f + (1 - t) g of the
        base and the projection, more than 1 for a fair predictor that is not the
        projection (uniform barycenter weights); 0 for the base itself.

    Raises
    ------
    Skip
        If the method gives no base predictions, or U(f) is 0 (nothing to move).
    """

    name = "cost-to-base"
    task = TASK
    higher_is_better = False

    def compute(self, data: FairRegressionData, output: RegressionOutput) -> float:
        """mean (y_pred - base_pred)^2 over the test rows, over U(base_pred)."""
        _need_two_groups(self.name, data)
        if output.base_pred is None:
            raise Skip(f"cost-to-base needs the base predictions; '{data.name}' run gave none")
        unfair = w2_unfairness(output.base_pred, data.s_test)
        if unfair <= 0:
            raise Skip("cost-to-base needs a base whose groups differ (U(f) = 0)")
        return _mse(output.y_pred, output.base_pred) / unfair


class SPDisparity(Metric):
    """Statistical-parity disparity of the test predictions.

    Source: Agarwal, Dudik, Wu, "Fair Regression: Quantitative Definitions and
    Reduction-based Algorithms", ICML 2019, Section 2 (DP for regression), exact over z.

    Returns
    -------
    float
        In [0, 1], unitless; lower is fairer.

    Raises
    ------
    Skip
        If the dataset has one group.
    """

    name = "sp-disparity"
    task = TASK
    higher_is_better = False

    def compute(self, data: FairRegressionData, output: RegressionOutput) -> float:
        """max over groups a of sup_z |P(h >= z | A=a) - P(h >= z)|."""
        _need_two_groups(self.name, data)
        return sp_disparity(output.y_pred, data.s_test)


class FairRisk(Metric):
    """Risk to the fair Bayes predictor, sum_s p_s E(g(X, s) - g*(X, s))^2.

    Source: Fukuchi, ICML 2025, Section 2 (the loss of the fair minimax risk);
    Chzhen et al., NeurIPS 2020, Theorem 5.

    Returns
    -------
    float
        >= 0, in squared target units; lower is better. With p_s the test frequencies,
        this is the mean of (y_pred - g*)^2 over the test rows.

    Raises
    ------
    Skip
        If the dataset does not know g* (every real dataset).
    """

    name = "fair-risk"
    task = TASK
    higher_is_better = False

    def compute(self, data: FairRegressionData, output: RegressionOutput) -> float:
        """Mean squared distance to g* on the test split."""
        if data.g_star_test is None:
            raise Skip(f"fair-risk needs the fair Bayes predictor g*; '{data.name}' has none")
        return _mse(output.y_pred, data.g_star_test)


def _need_f_star(name: str, data: FairRegressionData) -> np.ndarray:
    if data.f_star_test is None:
        raise Skip(f"{name} needs the Bayes regressor f*; '{data.name}' has none")
    return data.f_star_test


class RegressionRisk(Metric):
    """Risk of the base regressor to the Bayes regressor, E(f_hat(X, S) - f*(X, S))^2.

    Source: Fukuchi, ICML 2025, meta-theorem: the regression term of the bound
    fair risk <~ regression risk + transport cost.

    Returns
    -------
    float
        >= 0, squared target units; mean of (base_pred - f*)^2 over the test rows.

    Raises
    ------
    Skip
        If the dataset has no f* (real data) or the method has no base regressor.
    """

    name = "regression-risk"
    task = TASK
    higher_is_better = False

    def compute(self, data: FairRegressionData, output: RegressionOutput) -> float:
        """Mean squared distance of the base predictions to f* on the test split."""
        f_star = _need_f_star(self.name, data)
        if output.base_pred is None:
            raise Skip("regression-risk needs the method's base predictions; it has none")
        return _mse(output.base_pred, f_star)


class ExcessRisk(Metric):
    """Excess risk of the final predictions over the Bayes regressor, E(y_pred - f*)^2.

    Source: Chzhen & Schreuder, Ann. Statist. 2022, Section 2 (the risk of the
    risk-fairness trade-off; for f_alpha = sqrt(alpha) f* + (1 - sqrt(alpha)) g* it is
    (1 - sqrt(alpha))^2 U(f*)). MSE = noise variance + this.

    Returns
    -------
    float
        >= 0, squared target units.

    Raises
    ------
    Skip
        If the dataset has no f* (real data).
    """

    name = "excess-risk"
    task = TASK
    higher_is_better = False

    def compute(self, data: FairRegressionData, output: RegressionOutput) -> float:
        """Mean squared distance of the predictions to f* on the test split."""
        return _mse(output.y_pred, _need_f_star(self.name, data))


class TransportRisk(Metric):
    """Transport-estimation term: fair risk of the same post-processing applied to f*.

    Source: Fukuchi, ICML 2025, meta-theorem (the cost of estimating the maps to the
    Wasserstein barycenter); measured as E(G_hat(f*) - g*)^2, where G_hat is the
    method's estimator refitted on f*'s predictions of the same transport sample
    (``RegressionOutput.oracle_pred``). A reconstruction of the term, not the paper's
    definition.

    Returns
    -------
    float
        >= 0, squared target units.

    Raises
    ------
    Skip
        If the dataset has no g* or the method does not post-process onto g*
        (no ``oracle_pred``).
    """

    name = "transport-risk"
    task = TASK
    higher_is_better = False

    def compute(self, data: FairRegressionData, output: RegressionOutput) -> float:
        """Mean squared distance of the oracle-base output to g* on the test split."""
        if data.g_star_test is None:
            raise Skip(f"transport-risk needs g*; '{data.name}' has none")
        if output.oracle_pred is None:
            raise Skip("transport-risk needs oracle_pred: the method does not map onto g*")
        return _mse(output.oracle_pred, data.g_star_test)
