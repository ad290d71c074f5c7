"""Methods of the ``weak-features`` task: oracle, baselines, WFL and the emulated estimator.

Every label model h is an L2 logistic regression (``label_model="logistic"``, default) or a
one-hidden-layer MLP (``label_model="mlp"``, as in the official code) on
``[x_o, encoded weak features]``, so that methods differ only in how they encode the weak
features.

No method except those named ``oracle`` (``oracle``, ``wfl-oracle-model``) and the paper's
``emulated-estimator`` uses the true values or the true observation model ``data.lik_*``: the
others get ``P(o | v)`` from :mod:`harness_weak_features._observation` (an estimated noise
matrix, ignorable missingness, uniform complementary values, candidate sets).

torch and scikit-learn are imported when a method runs (:mod:`harness_weak_features._models`),
so that registering the plugin stays light.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Annotated, Literal

import numpy as np
from pydantic import Field
from pydantic.dataclasses import dataclass

from harness import Method, Skip, limit_threads
from harness_weak_features._corruption import candidates, emulate_estimator
from harness_weak_features._data import WeakData, WeakOutput
from harness_weak_features._observation import estimated_likelihood

__all__ = [
    "DropFeature",
    "EmulatedEstimator",
    "HgbNative",
    "IterativeImpute",
    "KnnImpute",
    "ModeImpute",
    "Naive",
    "Oracle",
    "WflIterative",
    "WflJoint",
    "WflOracleModel",
    "WflSequential",
    "chained_impute",
    "knn_impute",
]

TASK = "weak-features"


def _threads(n: int) -> contextlib.AbstractContextManager[None]:
    """Limit torch and BLAS/OpenMP threads to ``n`` inside the block, then restore."""
    return limit_threads(n, torch=True)


@contextlib.contextmanager
def _torch_run(threads: int, seed: int) -> Iterator[None]:
    """:func:`_threads` plus a forked torch RNG seeded with ``seed``."""
    import torch

    with _threads(threads), torch.random.fork_rng():
        torch.manual_seed(seed)
        yield


@dataclass
class _HParams:
    C: Annotated[float, Field(gt=0)] = 1.0
    label_model: Literal["logistic", "mlp"] = "logistic"
    h_hidden: Annotated[int, Field(ge=1)] = 32
    h_solver: Literal["lbfgs", "adam"] = "lbfgs"
    h_epochs: Annotated[int, Field(ge=1)] = 100
    threads: Annotated[int, Field(ge=1)] = 1


def _fit_h_on(
    data: WeakData,
    blocks_train: list[np.ndarray],
    blocks_test: list[np.ndarray],
    params: _HParams,
    seed: int,
):
    """h on ``[x_o, *blocks]`` for train and test rows: test labels, P(y=1), fitted h."""
    from harness_weak_features._models import fit_label_model

    z_train = np.hstack([data.x_train, *blocks_train])
    z_test = np.hstack([data.x_test, *blocks_test])
    return fit_label_model(
        z_train,
        data.y_train,
        z_test,
        params.C,
        params.label_model,
        params.h_hidden,
        seed,
        params.h_solver,
        params.h_epochs,
    )


def _one_hot(codes: np.ndarray, n_levels) -> np.ndarray:
    """One-hot of codes (n, J) into (n, Σ K_j); a code of -1 gives an all-zero block."""
    return np.hstack(
        [
            (codes[:, j, None] == np.arange(k)[None, :]).astype(np.float64)
            for j, k in enumerate(n_levels)
        ]
    )


def _with_codes(
    data: WeakData,
    codes_train: np.ndarray,
    codes_test: np.ndarray,
    params: _HParams,
    seed: int,
    v_hat: np.ndarray | None,
) -> WeakOutput:
    y_pred, score, _ = _fit_h_on(
        data,
        [_one_hot(codes_train, data.n_levels)],
        [_one_hot(codes_test, data.n_levels)],
        params,
        seed,
    )
    return WeakOutput(y_pred, score, v_hat)


def exact_codes(lik: np.ndarray) -> np.ndarray:
    """The value an observation pins down exactly, else NaN; shape (n, J) float64.

    Parameters
    ----------
    lik : ndarray of float64, shape (n, J, K_max)
        ``P(o | v = u)``; an observation is exact when it is positive for one value only.
    """
    support = lik > 0
    return np.where(support.sum(axis=-1) == 1, support.argmax(axis=-1), np.nan)


class Oracle(Method):
    """h on the true weak-feature values (upper reference).

    Source: CFL benchmark ``--method ord`` (Sugiyama & Uchida, arXiv 2408.14788).

    Parameters
    ----------
    C : float, default=1.0
        Inverse L2 strength of the label model h (per-row penalty ``1 / (C n_train)``).
    label_model : {"logistic", "mlp"}, default="logistic"
        h: scikit-learn logistic regression, or an MLP with one ReLU layer of ``h_hidden``
        units (the official code's ``arch='mlp'``).
    h_hidden : int, default=32
        Hidden width of the MLP h (unused for logistic h), >= 1.
    h_solver : {"lbfgs", "adam"}, default="lbfgs"
        Optimiser of the MLP h; ``adam``: minibatches of 200 rows (the authors' h is an MLP of
        500 units trained by Adam: ``label_model=mlp, h_hidden=500, h_solver=adam``).
    h_epochs : int, default=100
        Adam epochs of the MLP h, >= 1 (lbfgs runs up to 500 iterations).
    threads : int, default=1
        Torch/BLAS threads.

    Returns
    -------
    WeakOutput
        ``v_hat_test`` = the true values.
    """

    name = "oracle"
    task = TASK
    Params = _HParams

    def run(self, data: WeakData, params: _HParams, seed: int) -> WeakOutput:
        """Fit h on ``[x_o, one-hot(v)]``."""
        with _threads(params.threads):
            return _with_codes(data, data.v_train, data.v_test, params, seed, data.v_test.copy())


class Naive(Method):
    """The weak observation used as is: its value one-hot, missing as its own category.

    Source: CFL benchmark ``--method comp`` (Sugiyama & Uchida, arXiv 2408.14788), which
    feeds the complementary value to h as if it were the value. A documented reduction: h
    sees *which* value was observed, never the observation model, so on complementary data it
    can only learn from ``v_bar`` what a linear (or MLP) h can learn about "not ``v_bar``".

    Parameters
    ----------
    C, label_model, h_hidden, threads
        As in ``oracle``.

    Returns
    -------
    WeakOutput
        ``v_hat_test`` = the observed value (-1 where missing) for noisy and missing data;
        ``None`` for complementary data (the observed value is never the truth) and partial
        data (candidate sets enter h as multi-hot indicators).
    """

    name = "naive"
    task = TASK
    Params = _HParams

    def run(self, data: WeakData, params: _HParams, seed: int) -> WeakOutput:
        """Fit h on ``[x_o, encoding of o]``."""
        with _threads(params.threads):
            y_pred, score, _ = _fit_h_on(
                data,
                [_as_is(data, data.obs_train)],
                [_as_is(data, data.obs_test)],
                params,
                seed,
            )
        estimates = data.weak_kind not in ("partial", "complementary")
        return WeakOutput(y_pred, score, data.obs_test.copy() if estimates else None)


def _as_is(data: WeakData, obs: np.ndarray) -> np.ndarray:
    """One-hot of observed codes (an extra column for missing) or multi-hot candidate sets."""
    if data.weak_kind == "partial":
        return np.hstack([candidates(obs[:, j], k) for j, k in enumerate(data.n_levels)])
    codes = np.where(obs < 0, np.asarray(data.n_levels)[None, :], obs)
    return _one_hot(codes, [k + 1 for k in data.n_levels])


class DropFeature(Method):
    """h on the ordinary features only.

    Source: standard baseline (``docs/papers/weak-features.md`` §5, "Drop WF").

    Parameters
    ----------
    C, label_model, h_hidden, threads
        As in ``oracle``.

    Returns
    -------
    WeakOutput
        ``v_hat_test`` is None.
    """

    name = "drop-feature"
    task = TASK
    Params = _HParams

    def run(self, data: WeakData, params: _HParams, seed: int) -> WeakOutput:
        """Fit h on ``x_o``."""
        with _threads(params.threads):
            y_pred, score, _ = _fit_h_on(data, [], [], params, seed)
        return WeakOutput(y_pred, score, None)


def _impute_inputs(data: WeakData) -> tuple[np.ndarray, np.ndarray]:
    """Codes with every non-exact observation set to NaN, train and test; Skip without any.

    Exactness comes from the observation alone (:mod:`harness_weak_features._observation`),
    never from the true observation model.
    """
    if data.weak_kind in ("noisy", "complementary"):
        raise Skip(
            f"imputers need exact and missing entries; {data.weak_kind} observations have"
            " neither (no value is known to be right)"
        )
    lik_train, lik_test = estimated_likelihood(data)
    return exact_codes(lik_train), exact_codes(lik_test)


def _imputed_output(
    data: WeakData,
    train: np.ndarray,
    test: np.ndarray,
    fill: Callable[[np.ndarray, np.ndarray], np.ndarray],
    params: _HParams,
    seed: int,
) -> WeakOutput:
    """h on ``[x_o, one-hot(fill(x_o, codes)), missing indicators]``; ``v_hat`` = filled test."""
    filled = [fill(x, c).astype(np.int64) for x, c in ((data.x_train, train), (data.x_test, test))]
    y_pred, score, _ = _fit_h_on(
        data,
        [_one_hot(filled[0], data.n_levels), np.isnan(train)],
        [_one_hot(filled[1], data.n_levels), np.isnan(test)],
        params,
        seed,
    )
    return WeakOutput(y_pred, score, filled[1])


def _mode_fill(train: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """NaN entries of ``codes`` (n, J) set to the most frequent known training value."""
    out = codes.copy()
    for j in range(codes.shape[1]):
        known = train[~np.isnan(train[:, j]), j].astype(np.int64)
        if known.size == 0:
            raise Skip(f"weak feature {j} has no exact value in the training rows to impute from")
        out[np.isnan(out[:, j]), j] = np.bincount(known).argmax()
    return out


class ModeImpute(Method):
    """Mode imputation of the weak feature plus a missing indicator.

    Source: scikit-learn ``SimpleImputer(strategy="most_frequent", add_indicator=True)``
    semantics, written out on the integer codes (the value is a category, never averaged).

    Parameters
    ----------
    C, label_model, h_hidden, threads
        As in ``oracle``.

    Returns
    -------
    WeakOutput
        ``v_hat_test`` = exact value, or the training mode.

    Raises
    ------
    Skip
        On ``noisy`` and ``complementary`` data (no exact or missing entries).
    """

    name = "mode-impute"
    task = TASK
    Params = _HParams

    def run(self, data: WeakData, params: _HParams, seed: int) -> WeakOutput:
        """Impute, then fit h on ``[x_o, one-hot(imputed), missing indicators]``."""
        train, test = _impute_inputs(data)
        with _threads(params.threads):
            return _imputed_output(
                data, train, test, lambda _, c: _mode_fill(train, c), params, seed
            )


class KnnImpute(Method):
    """k-nearest-neighbour imputation of the one-hot weak feature, then argmax.

    Source: scikit-learn ``KNNImputer`` (Troyanskaya et al. 2001) on ``[x_o, one-hot(v)]``.
    Since ``x_o`` is complete, the imputed one-hot block of a row is the mean one-hot of its
    k nearest donors in ``x_o``; this is computed per weak feature with
    ``KNeighborsClassifier`` on the donors (same neighbours, far faster; pinned by a test).
    The value is a category throughout (a vote), never a number.

    Parameters
    ----------
    n_neighbors : int, default=10
        k, >= 1.
    C, label_model, h_hidden, threads
        As in ``oracle``.

    Returns
    -------
    WeakOutput
        ``v_hat_test`` = exact value, or the argmax of the donors' mean one-hot.

    Raises
    ------
    Skip
        On ``noisy`` and ``complementary`` data.
    """

    name = "knn-impute"
    task = TASK

    @dataclass
    class Params(_HParams):
        n_neighbors: Annotated[int, Field(ge=1)] = 10

    def run(self, data: WeakData, params: KnnImpute.Params, seed: int) -> WeakOutput:
        """Impute each weak feature from its k nearest donors in ``x_o``, then fit h."""
        train, test = _impute_inputs(data)
        with _threads(params.threads):
            return _imputed_output(
                data,
                train,
                test,
                lambda x, c: knn_impute(data.x_train, train, x, c, params.n_neighbors),
                params,
                seed,
            )


def knn_impute(
    x_donor: np.ndarray, codes_donor: np.ndarray, x: np.ndarray, codes: np.ndarray, k: int
) -> np.ndarray:
    """Fill NaN codes (n, J) by the argmax of the mean one-hot of the k nearest donors.

    Donors of WF j are the rows of ``x_donor`` (shape (m, d)) whose code j is known.
    Source: scikit-learn ``KNeighborsClassifier`` (uniform weights).
    """
    from sklearn.neighbors import KNeighborsClassifier

    out = codes.copy()
    for j in range(codes.shape[1]):
        known, todo = ~np.isnan(codes_donor[:, j]), np.isnan(codes[:, j])
        if not todo.any():
            continue
        if not known.any():
            raise Skip(f"weak feature {j} has no exact value in the training rows to impute from")
        clf = KNeighborsClassifier(n_neighbors=min(k, int(known.sum())))
        clf.fit(x_donor[known], codes_donor[known, j].astype(np.int64))
        out[todo, j] = clf.classes_[clf.predict_proba(x[todo]).argmax(axis=1)]
    return out


def chained_impute(
    x_train: np.ndarray,
    codes_train: np.ndarray,
    n_levels,
    n_estimators: int,
    max_iter: int,
    seed: int,
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """MissForest-style chained imputation of nominal codes by random-forest *classifiers*.

    Source: Stekhoven & Bühlmann, Bioinformatics 2012 (MissForest): start from the mode, then
    for ``max_iter`` rounds refit one ``RandomForestClassifier`` per weak feature on
    ``[x_o, one-hot(other weak features, current fill)]`` over its known rows and refill its
    missing rows. The codes stay categories (a class vote), never numbers.

    Parameters
    ----------
    x_train : ndarray of float64, shape (n, d)
    codes_train : ndarray of float64, shape (n, J)
        Known codes, NaN where missing.
    n_levels : sequence of int
        ``K_j``.
    n_estimators, max_iter, seed : int
        Forest size, rounds and random state.

    Returns
    -------
    callable
        ``fill(x, codes)`` -> codes (n', J) with every NaN replaced, replaying the fitted
        rounds on new rows (like ``IterativeImputer.transform``).
    """
    from sklearn.ensemble import RandomForestClassifier

    J = codes_train.shape[1]
    rounds: list[list] = []

    def features(x: np.ndarray, filled: np.ndarray, j: int) -> np.ndarray:
        others = [i for i in range(J) if i != j]
        if not others:
            return x
        blocks = [_one_hot(filled[:, others].astype(np.int64), [n_levels[i] for i in others])]
        return np.hstack([x, *blocks])

    filled = _mode_fill(codes_train, codes_train)
    for _ in range(max_iter):
        models = []
        for j in range(J):
            known = ~np.isnan(codes_train[:, j])
            clf = RandomForestClassifier(
                n_estimators=n_estimators,
                max_depth=8,
                min_samples_leaf=5,
                random_state=seed,
                n_jobs=1,
            )
            clf.fit(features(x_train, filled, j)[known], codes_train[known, j].astype(np.int64))
            if (~known).any():
                filled[~known, j] = clf.predict(features(x_train, filled, j)[~known])
            models.append(clf)
        rounds.append(models)

    def fill(x: np.ndarray, codes: np.ndarray) -> np.ndarray:
        out = _mode_fill(codes_train, codes)
        for models in rounds:
            for j, clf in enumerate(models):
                todo = np.isnan(codes[:, j])
                if todo.any():
                    out[todo, j] = clf.predict(features(x, out, j)[todo])
        return out

    return fill


class IterativeImpute(Method):
    """Chained (MissForest-style) imputation with random-forest classifiers, then h.

    Source: Stekhoven & Bühlmann 2012 (MissForest); see :func:`chained_impute`. Nominal codes
    are predicted as classes, not regressed and rounded.

    Parameters
    ----------
    n_estimators : int, default=20
        Trees per forest, >= 1.
    max_iter : int, default=3
        Imputation rounds, >= 1 (with one weak feature, rounds after the first repeat it).
    C, label_model, h_hidden, threads
        As in ``oracle``.

    Returns
    -------
    WeakOutput

    Raises
    ------
    Skip
        On ``noisy`` and ``complementary`` data.
    """

    name = "iterative-impute"
    task = TASK

    @dataclass
    class Params(_HParams):
        n_estimators: Annotated[int, Field(ge=1)] = 20
        max_iter: Annotated[int, Field(ge=1)] = 3

    def run(self, data: WeakData, params: IterativeImpute.Params, seed: int) -> WeakOutput:
        """Impute codes from ``x_o`` and the other weak features, then fit h."""
        train, test = _impute_inputs(data)
        with _threads(params.threads):
            fill = chained_impute(
                data.x_train, train, data.n_levels, params.n_estimators, params.max_iter, seed
            )
            return _imputed_output(data, train, test, fill, params, seed)


class HgbNative(Method):
    """Gradient-boosted trees with native categorical and missing-value support.

    Source: scikit-learn ``HistGradientBoostingClassifier`` (LightGBM-style; Ke et al. 2017).
    The weak feature enters as a categorical column: the observed value, NaN where no single
    value is observed (missing, or a partial set of several candidates). A documented
    reduction on complementary data: the trees see ``v_bar`` as a category, like ``naive``.

    Parameters
    ----------
    max_iter : int, default=100
        Boosting iterations, >= 1.
    learning_rate : float, default=0.1
        Shrinkage, > 0.
    threads : int, default=1
        OpenMP threads.

    Returns
    -------
    WeakOutput
        ``v_hat_test`` is None (the trees do not estimate the weak feature).
    """

    name = "hgb-native"
    task = TASK

    @dataclass
    class Params:
        max_iter: Annotated[int, Field(ge=1)] = 100
        learning_rate: Annotated[float, Field(gt=0)] = 0.1
        threads: Annotated[int, Field(ge=1)] = 1

    def run(self, data: WeakData, params: HgbNative.Params, seed: int) -> WeakOutput:
        """Fit the boosted trees on ``[x_o, observed codes]`` and predict."""
        from sklearn.ensemble import HistGradientBoostingClassifier

        d = data.x_train.shape[1]
        cats = list(range(d, d + data.n_weak))
        model = HistGradientBoostingClassifier(
            max_iter=params.max_iter,
            learning_rate=params.learning_rate,
            categorical_features=cats,
            random_state=seed,
        )
        with _threads(params.threads):
            model.fit(np.hstack([data.x_train, _single_codes(data, data.obs_train)]), data.y_train)
            score = model.predict_proba(
                np.hstack([data.x_test, _single_codes(data, data.obs_test)])
            )[:, 1]
        return WeakOutput((score >= 0.5).astype(np.int64), score, None)


def _single_codes(data: WeakData, obs: np.ndarray) -> np.ndarray:
    if data.weak_kind == "partial":
        cand = [candidates(obs[:, j], k) for j, k in enumerate(data.n_levels)]
        return np.column_stack([np.where(c.sum(1) == 1, c.argmax(1), np.nan) for c in cand])
    return np.where(obs < 0, np.nan, obs.astype(np.float64))


class EmulatedEstimator(Method):
    """The paper's experiment: h on estimates of chosen error rate epsilon.

    Source: Sugiyama & Uchida, ICML 2025, experiments; official ``codes_discrete`` argument
    ``est_error_rate`` (reconstruction): each true value, on train and test rows, is replaced
    by a uniform wrong one with probability epsilon, then h is fit on ``[x_o, one-hot(v̂)]``.
    It reads the true values by design (it emulates an estimator of known error).

    Parameters
    ----------
    epsilon : float, default=0.2
        Estimation error rate in [0, 1).
    C, label_model, h_hidden, threads
        As in ``oracle``.

    Returns
    -------
    WeakOutput
        ``v_hat_test``: the emulated estimates (expected accuracy ``1 - epsilon``).
    """

    name = "emulated-estimator"
    task = TASK

    @dataclass
    class Params(_HParams):
        epsilon: Annotated[float, Field(ge=0, lt=1)] = 0.2

    def run(self, data: WeakData, params: EmulatedEstimator.Params, seed: int) -> WeakOutput:
        """Corrupt the true values at rate epsilon, then fit h."""
        rng = np.random.default_rng(seed)
        est = [
            np.column_stack(
                [
                    emulate_estimator(v[:, j], k, params.epsilon, rng)
                    for j, k in enumerate(data.n_levels)
                ]
            )
            for v in (data.v_train, data.v_test)
        ]
        with _threads(params.threads):
            return _with_codes(data, est[0], est[1], params, seed, est[1])


# -- weak-features learning (WFL) -------------------------------------------------------


@dataclass
class _WflParams(_HParams):
    hidden: Annotated[int, Field(ge=0)] = 0
    epochs: Annotated[int, Field(ge=1)] = 200
    lr: Annotated[float, Field(gt=0)] = 0.05
    l2: Annotated[float, Field(ge=0)] = 5.0
    estimate: Literal["hard", "soft"] = "hard"

    def decay(self, n_train: int) -> float:
        """Adam weight decay of f: ``l2 / n_train``, i.e. ``½·l2·‖θ‖²`` on the summed loss."""
        return self.l2 / n_train


class _Wfl(Method):
    """Shared machinery of the WFL methods: the observation model and the steps of §2."""

    oracle_model = False

    def likelihoods(self, data: WeakData) -> tuple[np.ndarray, np.ndarray]:
        """``P(o | v)`` on train and test rows: the true model for an oracle, else estimated."""
        if self.oracle_model:
            return data.lik_train, data.lik_test
        return estimated_likelihood(data)

    def fit_estimator(self, data: WeakData, lik: np.ndarray, params: _WflParams):
        """Step 1 of every WFL strategy: f minimising the weak loss on the training rows."""
        import torch

        from harness_weak_features._models import WeakEstimator, liks_of, total_weak_nll

        model = WeakEstimator(data.x_train.shape[1], data.n_levels, params.hidden)
        x = torch.as_tensor(data.x_train, dtype=torch.float32)
        liks = liks_of(lik, data.n_levels)
        _train_f(data, model, lambda: total_weak_nll(model(x), liks), params.epochs, params)
        return model

    def fit_h(self, data: WeakData, model, liks, params: _WflParams, seed: int):
        """Posterior estimates on train and test rows, then h on ``[x_o, estimates]``."""
        from harness_weak_features._models import posteriors

        post = [
            posteriors(model, x, lik, data.n_levels)
            for x, lik in zip((data.x_train, data.x_test), liks, strict=True)
        ]
        y_pred, score, h = _fit_h_on(
            data,
            [_encode(post[0], params.estimate)],
            [_encode(post[1], params.estimate)],
            params,
            seed,
        )
        return WeakOutput(y_pred, score, _argmax_codes(post[1])), h


def _train_f(data: WeakData, model, loss, epochs: int, params: _WflParams) -> None:
    """Full-batch Adam on f's parameters alone, with f's weight decay."""
    from harness_weak_features._models import train_full_batch

    train_full_batch(
        list(model.parameters()), loss, epochs, params.lr, params.decay(len(data.y_train))
    )


def _argmax_codes(post: list[np.ndarray]) -> np.ndarray:
    """Most probable value per weak feature, shape (n, J) int64."""
    return np.column_stack([p.argmax(axis=1) for p in post]).astype(np.int64)


def _encode(post: list[np.ndarray], estimate: str) -> np.ndarray:
    if estimate == "soft":
        return np.hstack(post)
    return np.hstack([np.eye(p.shape[1])[p.argmax(axis=1)] for p in post])


class WflSequential(_Wfl):
    """Sequential weak-features learning: f by the weak loss, then h on posterior estimates.

    Source: Sugiyama & Uchida, ICML 2025, §2 sequential learning (CFL code ``exp1``);
    loss and posterior in :mod:`harness_weak_features._losses` (reconstruction). The
    observation model ``P(o | v)`` is estimated or assumed, never read from the truth
    (:mod:`harness_weak_features._observation`).

    Parameters
    ----------
    hidden : int, default=0
        Width of f's hidden layer; 0 = softmax regression.
    epochs : int, default=200
        Full-batch Adam steps for f.
    lr : float, default=0.05
        Adam learning rate.
    l2 : float, default=5.0
        L2 penalty ``½·l2·‖θ‖²`` of f on the weak loss summed over training rows (Adam weight
        decay ``l2 / n_train``), so regularisation weakens as data grow, like sklearn's ``1/C``.
    estimate : {"hard", "soft"}, default="hard"
        h sees the one-hot argmax of ``p(v | x_o, o)`` or the probabilities themselves.
    C, label_model, h_hidden, threads
        As in ``oracle``.

    Returns
    -------
    WeakOutput
        ``v_hat_test`` = argmax of the test posterior.

    Notes
    -----
    f never sees y. At prediction time the estimate is ``p(v | x_o, o) ∝ p_f(v | x_o) P(o | v)``;
    an estimate from ``x_o`` alone adds nothing h could not learn from ``x_o``.
    """

    name = "wfl-sequential"
    task = TASK
    Params = _WflParams

    def run(self, data: WeakData, params: _WflParams, seed: int) -> WeakOutput:
        """Fit f, estimate the weak features, fit h."""
        liks = self.likelihoods(data)
        with _torch_run(params.threads, seed):
            model = self.fit_estimator(data, liks[0], params)
            return self.fit_h(data, model, liks, params, seed)[0]


class WflOracleModel(WflSequential):
    """Sequential WFL given the *true* observation model (upper reference, oracle).

    Source: as ``wfl-sequential`` (Sugiyama & Uchida, ICML 2025, §2), but ``P(o | v)`` is the
    simulator's own (``data.lik_*``): the true flip rate, MNAR mechanism or complementary bias.

    Parameters
    ----------
    hidden, epochs, lr, l2, estimate, C, label_model, h_hidden, threads
        As in ``wfl-sequential``.

    Returns
    -------
    WeakOutput
    """

    name = "wfl-oracle-model"
    task = TASK
    Params = _WflParams
    oracle_model = True

    def run(self, data: WeakData, params: _WflParams, seed: int) -> WeakOutput:
        """Fit f with the true observation model, estimate the weak features, fit h."""
        return super().run(data, params, seed)


class WflIterative(_Wfl):
    """Iterative WFL: alternate refitting h and updating f on ``L_weak + λ·CE(h∘f, y)``.

    Source: Sugiyama & Uchida, ICML 2025 (companion paper, PMLR 267:57270) and CFL code
    ``iterative_learning.py``; steps as in ``docs/papers/weak-features.md`` §2 (reconstruction).

    Parameters
    ----------
    rounds : int, default=2
        Alternations R after the sequential start, >= 0.
    lam : float, default=1.0
        λ, weight of the downstream loss in f's update, >= 0.
    hidden, epochs, lr, l2, estimate, C, label_model, h_hidden, threads
        As in ``wfl-sequential``; each f update runs ``epochs // 2`` steps.

    Returns
    -------
    WeakOutput

    Notes
    -----
    Step (b) feeds h the *soft* posterior so gradients reach f; y reaches f only through h.
    """

    name = "wfl-iterative"
    task = TASK

    @dataclass
    class Params(_WflParams):
        rounds: Annotated[int, Field(ge=0)] = 2
        lam: Annotated[float, Field(ge=0)] = 1.0

    def run(self, data: WeakData, params: WflIterative.Params, seed: int) -> WeakOutput:
        """Sequential start, then R rounds of (update f with h fixed; refit h)."""
        from harness_weak_features._models import torch_module_from

        liks = self.likelihoods(data)
        with _torch_run(params.threads, seed):
            model = self.fit_estimator(data, liks[0], params)
            out, h = self.fit_h(data, model, liks, params, seed)
            for _ in range(params.rounds):
                loss = _joint_loss(data, liks[0], model, torch_module_from(h), params.lam)
                _train_f(data, model, loss, max(1, params.epochs // 2), params)
                out, h = self.fit_h(data, model, liks, params, seed)
            return out


def _joint_loss(data: WeakData, lik: np.ndarray, model, h, lam: float):
    """``L_weak(f) + λ·BCE(h([x_o, p(v | x_o, o)]), y)`` on the training rows, as a closure."""
    import torch

    from harness_weak_features._losses import posterior
    from harness_weak_features._models import liks_of, total_weak_nll

    x = torch.as_tensor(data.x_train, dtype=torch.float32)
    y = torch.as_tensor(data.y_train, dtype=torch.float32)
    liks = liks_of(lik, data.n_levels)

    def loss() -> torch.Tensor:
        logits = model(x)
        post = [posterior(lo, li) for lo, li in zip(logits, liks, strict=True)]
        down = torch.nn.functional.binary_cross_entropy_with_logits(
            h(torch.cat([x, *post], dim=1)).squeeze(1), y
        )
        return total_weak_nll(logits, liks) + lam * down

    return loss


class WflJoint(_Wfl):
    """Joint WFL: f and h trained end to end on ``L_weak + λ·CE(h∘f, y)``.

    Source: Sugiyama & Uchida, ICML 2025; CFL code ``joint_learning.py`` (reconstruction).

    Parameters
    ----------
    lam : float, default=1.0
        λ, weight of the downstream loss, >= 0.
    hidden, epochs, lr, l2, C, label_model, h_hidden, threads
        As in ``wfl-sequential``; h (a torch logistic model or MLP) gets the weight decay
        ``1 / (C · n_train)`` that matches sklearn's C. h always sees the soft posterior
        ``p(v | x_o, o)``, so ``estimate`` is not used.

    Returns
    -------
    WeakOutput
    """

    name = "wfl-joint"
    task = TASK

    @dataclass
    class Params(_WflParams):
        lam: Annotated[float, Field(ge=0)] = 1.0

    def run(self, data: WeakData, params: WflJoint.Params, seed: int) -> WeakOutput:
        """Train f and h together, then predict from the test posterior."""
        import torch

        from harness_weak_features._models import (
            WeakEstimator,
            posteriors,
            torch_label_model,
            train_full_batch,
        )

        lik_train, lik_test = self.likelihoods(data)
        with _torch_run(params.threads, seed):
            n = len(data.y_train)
            model = WeakEstimator(data.x_train.shape[1], data.n_levels, params.hidden)
            h = torch_label_model(
                data.x_train.shape[1] + sum(data.n_levels), params.label_model, params.h_hidden
            )
            f_params, h_params = list(model.parameters()), list(h.parameters())
            train_full_batch(
                [*f_params, *h_params],
                _joint_loss(data, lik_train, model, h, params.lam),
                params.epochs,
                params.lr,
                [params.decay(n)] * len(f_params) + [1 / (params.C * n)] * len(h_params),
            )
            post = posteriors(model, data.x_test, lik_test, data.n_levels)
            with torch.no_grad():
                z = torch.as_tensor(np.hstack([data.x_test, *post]), dtype=torch.float32)
                score = torch.sigmoid(h(z)).squeeze(1).double().numpy()
        return WeakOutput((score >= 0.5).astype(np.int64), score, _argmax_codes(post))
