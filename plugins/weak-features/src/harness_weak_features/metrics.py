"""Metrics of the ``weak-features`` task: downstream accuracy, AUC, WF-estimation accuracy.

scikit-learn is imported inside ``compute`` so that registering the plugin stays light.
"""

from __future__ import annotations

import numpy as np

from harness import Metric, Skip
from harness_weak_features.data import WeakData, WeakOutput

__all__ = ["Accuracy", "Auc", "BalancedAccuracy", "OracleGap", "WfAccuracy"]

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
