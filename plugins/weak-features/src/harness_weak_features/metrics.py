"""Metrics of the ``weak-features`` task: downstream accuracy, AUC, logistic loss, WF-estimation
accuracy, and the paper's bound on the logistic loss.

scikit-learn is imported inside ``compute`` so that registering the plugin stays light.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field
from pydantic.dataclasses import dataclass

from harness import Metric, Skip
from harness_weak_features._data import WeakData, WeakOutput

__all__ = [
    "Accuracy",
    "Auc",
    "BalancedAccuracy",
    "LogisticLoss",
    "OracleGap",
    "WfAccuracy",
    "WflBound",
]

TASK = "weak-features"


def _accuracy(data: WeakData, output: WeakOutput) -> float:
    return float(np.mean(output.y_pred == data.y_test))


class Accuracy(Metric):
    """Downstream accuracy of h on the test rows.

    Source: Sugiyama & Uchida, ICML 2025, experiments (downstream error = 1 - accuracy).

    Returns
    -------
    float
        In [0, 1], unitless, higher is better.
    """

    name = "accuracy"
    task = TASK
    higher_is_better = True

    def compute(self, data: WeakData, output: WeakOutput) -> float:
        """Share of test rows with ``y_pred == y_test``."""
        return _accuracy(data, output)


class BalancedAccuracy(Metric):
    """Mean of the per-class recalls on the test rows.

    Source: scikit-learn ``balanced_accuracy_score`` (Brodersen et al. 2010).

    Returns
    -------
    float
        In [0, 1], unitless, higher is better; 0.5 for a constant predictor.
    """

    name = "balanced-accuracy"
    task = TASK
    higher_is_better = True

    def compute(self, data: WeakData, output: WeakOutput) -> float:
        """Balanced accuracy of ``y_pred``."""
        from sklearn.metrics import balanced_accuracy_score

        return float(balanced_accuracy_score(data.y_test, output.y_pred))


class Auc(Metric):
    """Area under the ROC curve of ``y_score`` on the test rows.

    Source: scikit-learn ``roc_auc_score``.

    Returns
    -------
    float
        In [0, 1], unitless, higher is better.

    Raises
    ------
    Skip
        If the test rows hold one class only.
    """

    name = "auc"
    task = TASK
    higher_is_better = True

    def compute(self, data: WeakData, output: WeakOutput) -> float:
        """ROC AUC of the predicted probabilities."""
        if np.unique(data.y_test).size < 2:
            raise Skip("auc needs both classes among the test rows")
        from sklearn.metrics import roc_auc_score

        return float(roc_auc_score(data.y_test, output.y_score))


class WfAccuracy(Metric):
    """Weak-feature estimation accuracy on the test rows (1 - estimation error rate).

    Source: Sugiyama & Uchida, ICML 2025, bound term (i), the WF-estimation error rate.

    Returns
    -------
    float
        In [0, 1], unitless, higher is better; mean over test rows and weak features of
        ``v_hat_test == v_test`` (a code of -1, no estimate, counts as wrong).

    Raises
    ------
    Skip
        For methods that do not estimate the weak features.
    """

    name = "wf-accuracy"
    task = TASK
    higher_is_better = True

    def compute(self, data: WeakData, output: WeakOutput) -> float:
        """Share of correctly estimated weak values."""
        if output.v_hat_test is None:
            raise Skip("this method does not estimate the weak features")
        return float(np.mean(output.v_hat_test == data.v_test))


class OracleGap(Metric):
    """Oracle accuracy minus this method's accuracy, on the same data.

    Source: ``docs/papers/weak-features.md`` §6 (oracle gap); the oracle is the ``oracle``
    method with default params (h on the true weak values), refitted here.

    Returns
    -------
    float
        In [-1, 1], unitless, lower is better; 0 for the oracle itself.
    """

    name = "oracle-gap"
    task = TASK
    higher_is_better = False

    def compute(self, data: WeakData, output: WeakOutput) -> float:
        """``accuracy(oracle) - accuracy(method)``."""
        from harness_weak_features.methods import Oracle

        oracle = Oracle().run(data, Oracle.Params(), 0)
        return _accuracy(data, oracle) - _accuracy(data, output)


class LogisticLoss(Metric):
    """Mean logistic loss of h on the test rows, ``mean(ln(1 + exp(-y' z)))``, y' in {-1, +1}.

    Source: Sugiyama & Uchida, ICML 2025, the risk ``R_{g,l}(f)`` their bound is about, with
    ``l`` the logistic loss (``pred_loss='logistic'``, ``torch.nn.SoftMarginLoss`` in the
    authors' ``codes_discrete``). Equal to the cross-entropy ``-mean(ln p(y | x))`` of the
    predicted probability, natural logarithm; probabilities are clipped to [1e-12, 1 - 1e-12].

    Returns
    -------
    float
        >= 0, in nats, lower is better; ln 2 = 0.693 for a constant 1/2 prediction.
    """

    name = "logistic-loss"
    task = TASK
    higher_is_better = False

    def compute(self, data: WeakData, output: WeakOutput) -> float:
        """Test-row mean of ``-ln p(y_test)``."""
        p = np.clip(np.asarray(output.y_score, dtype=np.float64), 1e-12, 1.0 - 1e-12)
        return float(-np.mean(np.where(data.y_test == 1, np.log(p), np.log1p(-p))))


class WflBound(Metric):
    """The paper's upper bound on the test logistic loss, evaluated on this cell.

    Source: Sugiyama & Uchida, ICML 2025, bound as computed by the authors' ``calc_bound.ipynb``
    (:func:`harness_weak_features._bound.wfl_risk_bound`; equation number not known here). The
    bound is for a label model on ``[x_o, one-hot(v_hat)]`` with estimators g_j fixed
    independently of the training rows (the paper's emulated estimator); for other methods the
    same expression is evaluated, but the theory does not cover it.

    Plug-ins: ``n`` = training rows; ``d`` = ``d_o + sum_j K_j``; ``X^2`` = largest
    ``||x_o||^2`` over train and test rows plus J (each one-hot block has norm 1), a sample
    maximum standing in for the instance-space supremum; ``R_{01,j}(g_j)`` = measured share of
    wrong test-row estimates of weak feature j.

    Parameters
    ----------
    delta, loss_bound, weight_norm, best_risk : float
        As in :func:`~harness_weak_features._bound.wfl_risk_bound`; the defaults are the
        authors' (1e-4, U_l = 2, B = 1, R* = 0). B = 1 is not enforced on the trained h (nor
        in the authors' experiments).

    Returns
    -------
    dict of float
        ``bound`` (nats), ``complexity`` and ``estimation`` (its two parts, nats) and
        ``est-error-sum`` (sum over weak features of the measured estimation error rates).

    Raises
    ------
    Skip
        For methods that do not estimate the weak features.
    """

    name = "wfl-bound"
    task = TASK
    higher_is_better = None

    @dataclass
    class Params:
        delta: Annotated[float, Field(gt=0, lt=1)] = 1e-4
        loss_bound: Annotated[float, Field(gt=0)] = 2.0
        weight_norm: Annotated[float, Field(ge=0)] = 1.0
        best_risk: Annotated[float, Field(ge=0)] = 0.0

    def compute(self, data: WeakData, output: WeakOutput) -> dict[str, float]:
        """Evaluate the bound with this cell's n, d, X^2 and measured estimation errors."""
        from harness_weak_features._bound import wfl_risk_bound

        if output.v_hat_test is None:
            raise Skip("this method does not estimate the weak features")
        rates = np.mean(output.v_hat_test != data.v_test, axis=0)
        norm_sq = max(
            float(np.max(np.sum(data.x_train**2, axis=1))),
            float(np.max(np.sum(data.x_test**2, axis=1))),
        )
        p = self.params
        terms = wfl_risk_bound(
            n=len(data.y_train),
            est_error_rates=rates.tolist(),
            input_dim=data.x_train.shape[1] + sum(data.n_levels),
            input_norm_sq=norm_sq + data.n_weak,
            delta=p.delta,
            loss_bound=p.loss_bound,
            weight_norm=p.weight_norm,
            best_risk=p.best_risk,
        )
        return {
            "bound": terms.bound,
            "complexity": terms.complexity,
            "estimation": terms.estimation,
            "est-error-sum": terms.est_error_sum,
        }
