"""Public API of the ``fair-regression`` task, for authors of new methods.

A method of this task takes a :class:`FairRegressionData` and returns a
:class:`RegressionOutput`; everything a post-processing method needs is here::

    from dataclasses import dataclass

    import numpy as np
    from harness import Method
    from harness_fair_regression.api import (
        FairRegressionData,
        RegressionOutput,
        Regressor,
        base_predictions,
        fit_barycenter_map,
    )


    class MyPostProcessing(Method):
        \"\"\"Barycenter map fitted on the calibration split (Source: my paper, eq. 3).\"\"\"

        name, task = "my-post-processing", "fair-regression"

        @dataclass
        class Params:
            regressor: Regressor = "ridge"

        def run(self, data: FairRegressionData, params: Params, seed: int) -> RegressionOutput:
            base = base_predictions(data, params.regressor)  # {"train", "calib", "test"}
            rng = np.random.default_rng(seed)
            fitted = fit_barycenter_map(
                base["calib"], data.s_calib, data.n_groups, jitter=1e-5, split=False, rng=rng
            )
            return RegressionOutput(
                fitted.transform(base["test"], data.s_test, rng), base_pred=base["test"]
            )

Shapes and units (n_* = rows of a split, d = features, M = groups):

* ``FairRegressionData``: ``X_train`` (n_train, d), ``y_train`` (n_train,), ``s_train``
  (n_train,) int codes 0..M-1; ``X_calib``, ``s_calib`` (unlabeled); ``X_test``, ``y_test``,
  ``s_test``; synthetic data also carry ``f_star_*`` (Bayes regressor per split),
  ``g_star_test`` (fair Bayes predictor) and ``cost_of_fairness`` U(f*).
* ``RegressionOutput``: ``y_pred`` (n_test,), optional ``base_pred`` (n_test,) and
  ``oracle_pred`` (n_test,: the same post-processing applied to f*); all finite.
* ``base_predictions(data, regressor, rows=None)``: ``{"train", "calib", "test"}`` ->
  predictions of each split by the base regressor fitted on (X, one-hot S) of the
  training rows, cached per loaded dataset.
* ``fit_barycenter_map(pred, s, M, jitter=, split=, rng=, convention=, weights=)``: the
  empirical Wasserstein-barycenter map of Chzhen et al. (NeurIPS 2020);
  ``.transform(pred, s, rng)``.
* ``ks_unfairness``, ``w2_unfairness``, ``sp_disparity``: exact unfairness of (pred, s).

Importing this module is light (numpy only); scikit-learn is imported when a base
regressor is fitted.
"""

from __future__ import annotations

from harness_fair_regression._transport import (
    BarycenterMap,
    Convention,
    Weights,
    fit_barycenter_map,
)
from harness_fair_regression.data import (
    FairRegressionData,
    RegressionOutput,
    check_groups,
    check_predictions,
)
from harness_fair_regression.methods import (
    GroupwiseKNN,
    Regressor,
    aware_features,
    base_predictions,
    make_regressor,
)
from harness_fair_regression.metrics import ks_unfairness, sp_disparity, w2_unfairness

__all__ = [
    "TASK",
    "BarycenterMap",
    "Convention",
    "FairRegressionData",
    "GroupwiseKNN",
    "RegressionOutput",
    "Regressor",
    "Weights",
    "aware_features",
    "base_predictions",
    "check_groups",
    "check_predictions",
    "fit_barycenter_map",
    "ks_unfairness",
    "make_regressor",
    "sp_disparity",
    "w2_unfairness",
]

TASK = "fair-regression"
"""The task name every method of this API declares (``task = TASK``)."""
