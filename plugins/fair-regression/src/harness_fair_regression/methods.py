"""Methods of the ``fair-regression`` task: a base regressor and its DP post-processings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from harness import Method
from harness_fair_regression.data import FairRegressionData, RegressionOutput
from harness_fair_regression.transport import fit_barycenter_map

__all__ = [
    "Adversarial",
    "MetaOptimalPostProcessing",
    "PartialFairness",
    "Projection",
    "Unconstrained",
    "WassersteinBarycenter",
]

TASK = "fair-regression"
Regressor = Literal["ridge", "kernel-ridge", "random-forest", "gradient-boosting", "knn"]
_CACHE: dict[tuple, tuple[FairRegressionData, dict[str, np.ndarray]]] = {}
_CACHE_SIZE = 8


def make_regressor(regressor: str):
    """A fresh scikit-learn estimator for ``regressor``; every random state is fixed to 0.

    ``kernel-ridge`` is RBF kernel ridge regression with a 300-component Nystroem
    approximation of the kernel (exact KernelRidge needs O(n^2) memory: 1.4 GB on law-school).
    """
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if regressor == "ridge":
        return make_pipeline(StandardScaler(), Ridge(alpha=1.0))
    if regressor == "kernel-ridge":
        kernel = Nystroem(kernel="rbf", n_components=300, random_state=0)
        return make_pipeline(StandardScaler(), kernel, Ridge(alpha=1.0))
    if regressor == "random-forest":
        return RandomForestRegressor(
            n_estimators=100, min_samples_leaf=5, max_features=0.33, n_jobs=1, random_state=0
        )
    if regressor == "gradient-boosting":
        return HistGradientBoostingRegressor(random_state=0)
    if regressor == "knn":
        return make_pipeline(StandardScaler(), KNeighborsRegressor(n_neighbors=10))
    raise ValueError(f"unknown regressor {regressor!r}")


def aware_features(X: np.ndarray, s: np.ndarray, n_groups: int) -> np.ndarray:
    """Features with the group one-hot appended, shape (n, d + n_groups) (aware setting)."""
    return np.hstack([X, np.eye(n_groups)[s]])


def base_predictions(
    data: FairRegressionData, regressor: str, rows: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Fit ``regressor`` on (X, S) of the training rows and predict every split.

    Parameters
    ----------
    data : FairRegressionData
    regressor : str
        One of the ``Regressor`` names.
    rows : ndarray of int, optional
        Training rows to fit on (default: all).

    Returns
    -------
    dict
        ``{"train", "calib", "test"}`` -> predictions of shape (n_split,), target units.
        Results are cached per (data object, regressor, rows), so methods sharing a loaded
        dataset in one worker fit the base model once.
    """
    key = (id(data), regressor, None if rows is None else rows.tobytes())
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is data:
        return hit[1]
    m = data.n_groups
    train = slice(None) if rows is None else rows
    model = make_regressor(regressor)
    model.fit(aware_features(data.X_train[train], data.s_train[train], m), data.y_train[train])
    preds = {
        split: model.predict(aware_features(getattr(data, f"X_{split}"),
                                            getattr(data, f"s_{split}"), m)).astype(float)
        for split in ("train", "calib", "test")
    }  # fmt: skip
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (data, preds)
    return preds


def _check_jitter(jitter: float) -> None:
    if jitter < 0:
        raise ValueError(f"jitter must be >= 0, got {jitter}")


def _transport(
    data: FairRegressionData,
    pred: np.ndarray,
    s: np.ndarray,
    test_pred: np.ndarray,
    *,
    jitter: float,
    split: bool,
    rng: np.random.Generator,
) -> np.ndarray:
    """Fit the barycenter map on (pred, s) and map the test predictions with ``rng``."""
    fitted = fit_barycenter_map(pred, s, data.n_groups, jitter=jitter, split=split, rng=rng)
    return fitted.transform(test_pred, data.s_test, rng)


def _barycenter(
    data: FairRegressionData, regressor: str, jitter: float, seed: int, *, split: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(base test predictions, test predictions mapped by the map fitted on calibration).

    ``split=True`` is Chzhen et al.'s estimator, ``split=False`` Le Gouic et al.'s.
    """
    base = base_predictions(data, regressor)
    rng = np.random.default_rng(seed)
    fair = _transport(
        data, base["calib"], data.s_calib, base["test"], jitter=jitter, split=split, rng=rng
    )
    return base["test"], fair


class Unconstrained(Method):
    """The base regressor with the sensitive attribute as a feature; no fairness constraint.

    Source: scikit-learn estimators (Ridge, Nystroem kernel ridge, RandomForestRegressor,
    HistGradientBoostingRegressor, KNeighborsRegressor); the "unfair" baseline of Chzhen et
    al., NeurIPS 2020, Table 1.

    Parameters
    ----------
    regressor : {"ridge", "kernel-ridge", "random-forest", "gradient-boosting", "knn"}
        Base model fitted on the training split, default="ridge".

    Returns
    -------
    RegressionOutput
        ``y_pred`` = ``base_pred`` of shape (n_test,), in target units.
    """

    name = "unconstrained"
    task = TASK

    @dataclass
    class Params:
        regressor: Regressor = "ridge"

    def run(
        self, data: FairRegressionData, params: Unconstrained.Params, seed: int
    ) -> RegressionOutput:
        """Fit the base regressor on (X, S) and predict the test split."""
        pred = base_predictions(data, params.regressor)["test"]
        return RegressionOutput(y_pred=pred, base_pred=pred)


class WassersteinBarycenter(Method):
    """Post-process a base regressor onto the Wasserstein barycenter of the group laws.

    Source: Chzhen, Denis, Hebiri, Oneto, Pontil, NeurIPS 2020, Algorithm 1, estimator
    g(x, s) = sum_s' p_s' Q_s'(F_s(f(x, s) + eps)).

    Parameters
    ----------
    regressor : {"ridge", "kernel-ridge", "random-forest", "gradient-boosting", "knn"}
        Base model fitted on the training split, default="ridge".
    jitter : float, default=1e-5
        Half-width sigma of the uniform noise U[-sigma, sigma] on predictions, target units.

    Returns
    -------
    RegressionOutput
        ``y_pred`` of shape (n_test,): post-processed test predictions.

    Raises
    ------
    ValueError
        If a group has fewer than two calibration rows (naming the group) or jitter < 0.

    Notes
    -----
    Each group's calibration predictions are cut into two random halves: the first gives
    F_s, the second Q_s; weights p_s are calibration frequencies. Fresh jitter is drawn at
    test time. Vectorised with sort/searchsorted (see ``transport.py``).
    """

    name = "wasserstein-barycenter"
    task = TASK

    @dataclass
    class Params:
        regressor: Regressor = "ridge"
        jitter: float = 1e-5

        def __post_init__(self) -> None:
            _check_jitter(self.jitter)

    def run(
        self, data: FairRegressionData, params: WassersteinBarycenter.Params, seed: int
    ) -> RegressionOutput:
        """Fit f on train, the map on the calibration halves, and map the test predictions."""
        base, fair = _barycenter(data, params.regressor, params.jitter, seed)
        return RegressionOutput(y_pred=fair, base_pred=base)


class Projection(Method):
    """L2 projection of the base regressor onto demographic-parity-fair predictors.

    Source: Le Gouic, Loubes, Rigollet, "Projection to Fairness in Statistical Learning",
    arXiv 2005.11720, Theorem 2.3: the projection is the barycenter map
    g(x, s) = sum_s' p_s' Q_s'(F_s(f(x, s))).

    Parameters
    ----------
    regressor : {"ridge", "kernel-ridge", "random-forest", "gradient-boosting", "knn"}
        Base model fitted on the training split, default="ridge".
    jitter : float, default=0.0
        Half-width of uniform tie-breaking noise; 0 reproduces the paper's plain map.

    Returns
    -------
    RegressionOutput
        ``y_pred`` of shape (n_test,).

    Raises
    ------
    ValueError
        If a group has fewer than two calibration rows (naming the group) or jitter < 0.

    Notes
    -----
    F_s and Q_s come from the same (whole) calibration sample, with no split; the papers
    file suggests training predictions, we use the calibration split so that the map is
    fitted on data the base model did not see. Without jitter, atoms in the base
    predictions (trees, kNN) survive the map and DP holds only approximately.
    """

    name = "projection"
    task = TASK

    @dataclass
    class Params:
        regressor: Regressor = "ridge"
        jitter: float = 0.0

        def __post_init__(self) -> None:
            _check_jitter(self.jitter)

    def run(
        self, data: FairRegressionData, params: Projection.Params, seed: int
    ) -> RegressionOutput:
        """Fit f on train, the map on all calibration predictions, and map the test split."""
        base, fair = _barycenter(data, params.regressor, params.jitter, seed, split=False)
        return RegressionOutput(y_pred=fair, base_pred=base)


class PartialFairness(Method):
    """Interpolate between the base regressor and its barycenter post-processing.

    Source: Chzhen & Schreuder, "A minimax framework for quantifying risk-fairness
    trade-off in regression", Ann. Statist. 50(4), 2022, Theorem 3.1: the alpha-relative
    improvement optimum is f_alpha = sqrt(alpha) f + (1 - sqrt(alpha)) g.

    Parameters
    ----------
    regressor : {"ridge", "kernel-ridge", "random-forest", "gradient-boosting", "knn"}
        Base model fitted on the training split, default="ridge".
    alpha : float, default=0.25
        Relative improvement in [0, 1]: 1 = unconstrained, 0 = fully fair; the unfairness
        U(f_alpha) = alpha U(f).
    jitter : float, default=1e-5
        Jitter of the barycenter map, as in ``wasserstein-barycenter``.

    Returns
    -------
    RegressionOutput
        ``y_pred`` of shape (n_test,).

    Raises
    ------
    ValueError
        If alpha is outside [0, 1] or jitter < 0.

    Notes
    -----
    g is exactly the ``wasserstein-barycenter`` output for the same seed. The theorem
    number and the sqrt(alpha) mix are a reconstruction, not checked against the paper.
    """

    name = "partial-fairness"
    task = TASK

    @dataclass
    class Params:
        regressor: Regressor = "ridge"
        alpha: float = 0.25
        jitter: float = 1e-5

        def __post_init__(self) -> None:
            if not 0 <= self.alpha <= 1:
                raise ValueError(f"alpha must be in [0, 1], got {self.alpha}")
            _check_jitter(self.jitter)

    def run(
        self, data: FairRegressionData, params: PartialFairness.Params, seed: int
    ) -> RegressionOutput:
        """Mix the base and the barycenter predictions with weight sqrt(alpha)."""
        if params.alpha == 1:
            base = base_predictions(data, params.regressor)["test"]
            return RegressionOutput(y_pred=base, base_pred=base)
        base, fair = _barycenter(data, params.regressor, params.jitter, seed)
        if params.alpha == 0:
            return RegressionOutput(y_pred=fair, base_pred=base)
        t = np.sqrt(params.alpha)
        return RegressionOutput(y_pred=t * base + (1 - t) * fair, base_pred=base)


class MetaOptimalPostProcessing(Method):
    """Fukuchi's meta-optimal estimator: sample-split base fit, then barycenter transport.

    Source: Fukuchi, "Meta Optimality for Demographic Parity Constrained Regression via
    Post-Processing", ICML 2025 (arXiv 2506.13947), Section 4 post-processing estimator
    g(x, s) = sum_s' w_s' Q_s'(F_s(f(x, s))).

    Parameters
    ----------
    regressor : {"ridge", "kernel-ridge", "random-forest", "gradient-boosting", "knn"}
        Base model, default="ridge".
    base_fraction : float, default=0.5
        Fraction of each group's training rows used to fit the base regressor; the rest
        (labels unused) joins the calibration split to estimate the transport maps.
    jitter : float, default=1e-5
        Half-width of the uniform tie-breaking noise, target units.

    Returns
    -------
    RegressionOutput
        ``y_pred`` of shape (n_test,).

    Raises
    ------
    ValueError
        If base_fraction is not in (0, 1) or jitter < 0.

    Notes
    -----
    Reconstruction, not checked against the paper (its split sizes, CDF smoothing and
    jitter are not in the papers file): the labeled data are split between the base fit
    and the transport estimation, F_s and Q_s use one jittered sample (no halves), and
    the weights w_s are the transport sample's group frequencies.
    """

    name = "meta-optimal-post-processing"
    task = TASK

    @dataclass
    class Params:
        regressor: Regressor = "ridge"
        base_fraction: float = 0.5
        jitter: float = 1e-5

        def __post_init__(self) -> None:
            if not 0 < self.base_fraction < 1:
                raise ValueError(f"base_fraction must be in (0, 1), got {self.base_fraction}")
            _check_jitter(self.jitter)

    def run(
        self, data: FairRegressionData, params: MetaOptimalPostProcessing.Params, seed: int
    ) -> RegressionOutput:
        """Split train, fit f on one part, estimate the maps on the other part + calib."""
        rng = np.random.default_rng(seed)
        fit_rows, held = [], []
        for g in range(data.n_groups):
            rows = rng.permutation(np.flatnonzero(data.s_train == g))
            cut = max(1, round(params.base_fraction * rows.size))
            fit_rows.append(rows[:cut])
            held.append(rows[cut:])
        fit_rows_all = np.sort(np.concatenate(fit_rows))
        held_all = np.sort(np.concatenate(held))
        base = base_predictions(data, params.regressor, rows=fit_rows_all)
        pred = np.concatenate([base["train"][held_all], base["calib"]])
        s = np.concatenate([data.s_train[held_all], data.s_calib])
        fair = _transport(data, pred, s, base["test"], jitter=params.jitter, split=False, rng=rng)
        return RegressionOutput(y_pred=fair, base_pred=base["test"])


class Adversarial(Method):
    """In-processing baseline: adversarial debiasing of a neural regressor for DP.

    Source: Zhang, Lemoine, Mitchell, "Mitigating Unwanted Biases with Adversarial
    Learning", AIES 2018; fairlearn 0.15 ``AdversarialFairnessRegressor`` (torch backend,
    ``constraints="demographic_parity"``).

    Parameters
    ----------
    regressor : {"mlp"}, default="mlp"
        The predictor is fairlearn's MLP (one hidden layer of ``hidden`` leaky-ReLU units);
        kept as a param so reports group it like the other methods.
    alpha : float, default=0.3
        Weight of the adversary's loss in the predictor's update (alpha = 1 diverged on
        ``law-school``: test MSE 9.3 against 0.79 at alpha = 0.3).
    epochs : int, default=5
        Passes over the training split (on ``synthetic-linear`` the test MSE grew from
        1.40 at 5 epochs to 3.36 at 10: the predictor-adversary game is unstable).
    hidden : int, default=50
        Hidden units of the predictor.

    Returns
    -------
    RegressionOutput
        ``y_pred`` of shape (n_test,), in target units (the net is fitted on standardised
        X and y).

    Notes
    -----
    Unlike the other methods, S is *not* a feature here: Zhang et al.'s update removes
    the projection of the predictor gradient on the adversary gradient even at alpha = 0,
    and with S as an input the training diverged (train MSE 6x the variance of y on
    ``synthetic-linear``). S is passed only as the adversary's target.

    Raises
    ------
    ValueError
        If alpha < 0, epochs < 1 or hidden < 1.
    """

    name = "adversarial"
    task = TASK

    @dataclass
    class Params:
        regressor: Literal["mlp"] = "mlp"
        alpha: float = 0.3
        epochs: int = 5
        hidden: int = 50

        def __post_init__(self) -> None:
            if self.alpha < 0:
                raise ValueError(f"alpha must be >= 0, got {self.alpha}")
            if self.epochs < 1 or self.hidden < 1:
                raise ValueError(
                    f"epochs and hidden must be >= 1, got {self.epochs}, {self.hidden}"
                )

    test_params: ClassVar[dict] = {"epochs": 1}

    def run(
        self, data: FairRegressionData, params: Adversarial.Params, seed: int
    ) -> RegressionOutput:
        """Standardise, train predictor and adversary jointly, predict the test split."""
        import torch
        from fairlearn.adversarial import AdversarialFairnessRegressor

        Z_train = data.X_train
        mu, sd = Z_train.mean(axis=0), Z_train.std(axis=0)
        sd[sd == 0] = 1.0  # constant training columns (one-hot states) stay unscaled
        y_mu, y_sd = data.y_train.mean(), data.y_train.std() + 1e-12
        threads = torch.get_num_threads()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            torch.set_num_threads(1)  # tiny nets: threads only add overhead on 2 cores
            try:
                model = AdversarialFairnessRegressor(
                    backend="torch",
                    predictor_model=[params.hidden, "leaky_relu"],
                    adversary_model=[3, "leaky_relu"],
                    constraints="demographic_parity",
                    alpha=params.alpha,
                    epochs=params.epochs,
                    batch_size=256,
                    shuffle=True,
                    random_state=seed,
                )
                model.fit(
                    (Z_train - mu) / sd,
                    (data.y_train - y_mu) / y_sd,
                    sensitive_features=data.s_train,
                )
                Z_test = (data.X_test - mu) / sd
                pred = np.asarray(model.predict(Z_test), dtype=float).ravel() * y_sd + y_mu
            finally:
                torch.set_num_threads(threads)
        return RegressionOutput(y_pred=pred)
