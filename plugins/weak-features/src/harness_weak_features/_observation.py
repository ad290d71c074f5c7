"""The observation model ``P(o | v)`` a method may use without oracle knowledge.

Source: Sugiyama & Uchida, ICML 2025, §2 (a weak feature is learned through its observation
model); the per-kind assumptions below are the standard ones of each literature and are named
where they stand. Reconstruction, not checked against the paper.

``WeakData.lik_*`` holds the *true* ``P(o | v)``; it knows the flip rate, the MNAR mechanism
and the complementary bias. A method that is not an oracle gets its likelihood from here:

- ``missing-*``: missingness taken as ignorable (MCAR/MAR; Rubin 1976), so ``P(⊥ | v)`` is a
  constant (1) and an observed value is exact. Right for MCAR and MAR; *misspecified* for MNAR,
  which cannot be identified from the data without a missingness model.
- ``complementary``: uniform complementary model ``1[u != v_bar] / (K - 1)`` (Ishida et al.
  2017; complementary-feature learning, Sugiyama & Uchida arXiv 2408.14788). Right at
  ``rate = 0``, misspecified for the biased variant.
- ``partial``: ``1[u in S]`` (the CC loss, Feng et al. 2020): exact when each wrong value joins
  the set independently of the truth, as simulated here.
- ``noisy``: the transition matrix ``T`` is *estimated* from the training rows by the anchor-
  point estimator of Patrini et al. (CVPR 2017; section and equation numbers not checked):
  fit ``p(o | x_o)`` by softmax regression; for each value ``v`` take the training row at
  the 97th percentile of ``p(o = v | x_o)`` (their code's outlier filter) as the anchor
  ``x_v``; ``T̂[v, :] = p(o | x_v)``.
"""

from __future__ import annotations

import numpy as np

from harness_weak_features._data import WeakData

__all__ = ["anchor_transition", "assumed_likelihood", "estimated_likelihood"]


def anchor_transition(
    x: np.ndarray, obs: np.ndarray, n_levels: int, quantile: float = 0.97
) -> np.ndarray:
    """Anchor-point estimate of the noise matrix ``T[v, o] = P(o | v)``.

    Source: Patrini et al., "Making deep neural networks robust to label noise: a loss
    correction approach", CVPR 2017 (anchor-point estimator of T; the 97th-percentile filter
    follows their public code; reconstruction, section numbers not checked).
    ``p(o | x)`` is fitted by scikit-learn ``LogisticRegression`` (multinomial, C = 1).

    Parameters
    ----------
    x : ndarray of float64, shape (n, d)
        Ordinary features (z-scores).
    obs : ndarray of int64, shape (n,)
        Noisy observed values in ``{0..K-1}``.
    n_levels : int
        K >= 2.
    quantile : float, default=0.97
        Anchor row per value: this quantile of ``p(o = v | x)`` over the rows, in (0, 1].

    Returns
    -------
    ndarray of float64, shape (K, K)
        Rows sum to 1.

    Raises
    ------
    ValueError
        If some value never occurs in ``obs`` (its row of T cannot be estimated).
    """
    from sklearn.linear_model import LogisticRegression

    seen = np.unique(obs)
    if seen.size < n_levels:
        missing = sorted(set(range(n_levels)) - set(seen.tolist()))
        raise ValueError(
            f"noisy observations never take the value(s) {missing}; T is not estimable"
        )
    proba = LogisticRegression(C=1.0, max_iter=2000).fit(x, obs).predict_proba(x)
    T = np.empty((n_levels, n_levels))
    for v in range(n_levels):
        col = proba[:, v]
        anchor = np.argmin(np.abs(col - np.quantile(col, quantile)))
        T[v] = proba[anchor]
    return T / T.sum(axis=1, keepdims=True)


def assumed_likelihood(obs: np.ndarray, kind: str, n_levels: int) -> np.ndarray:
    """``P(o | v = u)`` of one weak feature under the kind's parameter-free assumption.

    Parameters
    ----------
    obs : ndarray of int64, shape (n,)
        Observations, encoded as in :mod:`harness_weak_features._data`.
    kind : str
        A weak kind other than ``noisy`` (whose model has unknown parameters).
    n_levels : int
        K >= 2.

    Returns
    -------
    ndarray of float64, shape (n, K)

    Raises
    ------
    ValueError
        For ``noisy`` (use :func:`anchor_transition`) or an unknown kind.
    """
    from harness_weak_features._corruption import candidates

    eye = np.eye(n_levels)
    if kind.startswith("missing"):
        return np.where((obs < 0)[:, None], 1.0, eye[np.maximum(obs, 0)])
    if kind == "complementary":
        return (1.0 - eye[obs]) / (n_levels - 1)
    if kind == "partial":
        return candidates(obs, n_levels).astype(np.float64)
    raise ValueError(f"no parameter-free observation model for weak kind {kind!r}")


def estimated_likelihood(data: WeakData) -> tuple[np.ndarray, np.ndarray]:
    """``P(o | v)`` for train and test rows without oracle knowledge.

    Parameters
    ----------
    data : WeakData

    Returns
    -------
    lik_train, lik_test : ndarray of float64, shapes (n_train, J, K_max), (n_test, J, K_max)
        Zero padded for ``u >= K_j``, like ``data.lik_*``. For ``noisy`` data ``T`` is
        estimated on the training rows only and applied to both splits.
    """
    out = []
    T = None
    if data.weak_kind == "noisy":
        T = [
            anchor_transition(data.x_train, data.obs_train[:, j], k)
            for j, k in enumerate(data.n_levels)
        ]
    for obs in (data.obs_train, data.obs_test):
        lik = np.zeros((len(obs), data.n_weak, max(data.n_levels)))
        for j, k in enumerate(data.n_levels):
            if T is not None:
                lik[:, j, :k] = T[j][:, obs[:, j]].T
            else:
                lik[:, j, :k] = assumed_likelihood(obs[:, j], data.weak_kind, k)
        out.append(lik)
    return out[0], out[1]
