"""Public API of the ``weak-features`` task for method authors.

Source: Sugiyama & Uchida, "A Unified Framework for Generalization Error Analysis of Learning
with Arbitrary Discrete Weak Features", ICML 2025 (PMLR 267:57249-57269), §2 setting.

A method (a :class:`harness.Method` of task ``weak-features``) receives a :class:`WeakData`
and returns a :class:`WeakOutput`:

- ``WeakData.x_train`` (n_train, d_o) float64, ``obs_train`` (n_train, J) int64 weak
  observations (encoding per ``weak_kind`` in :mod:`harness_weak_features._data`),
  ``y_train`` (n_train,) 0/1; the same for ``_test`` rows (their labels only for metrics).
  ``v_*`` (true values) and ``lik_*`` (the true observation model) are oracle knowledge: a
  method whose name does not say ``oracle`` must not read them.
- ``WeakOutput(y_pred (n_test,) 0/1, y_score (n_test,) in [0, 1], v_hat_test (n_test, J) or
  None)``.

Helpers:

- :func:`estimated_likelihood` (data) -> ``P(o | v)`` on train and test rows, shape
  (n, J, K_max), without oracle knowledge (estimated noise matrix, ignorable missingness,
  uniform complementary values, candidate sets).
- :func:`weak_nll` (logits (n, K), lik (n, K)) -> the weak-observation loss (torch);
  :func:`posterior` -> ``p(v | x_o, o)`` (n, K).
- :func:`fit_label_model` (z_train (n, p), y_train, z_test, C, label_model, hidden, seed) ->
  (y_pred, y_score, fitted h): the task's label model h (logistic or MLP).
- :func:`corrupt` / :func:`complementary_transition` / :func:`symmetric_transition`: the
  simulators and their closed-form observation matrices.

``weak_nll``, ``posterior`` and ``fit_label_model`` import torch / scikit-learn on first use.
"""

from __future__ import annotations

from typing import Any

from harness_weak_features._bound import BoundTerms, wfl_risk_bound
from harness_weak_features._corruption import (
    complementary_transition,
    corrupt,
    symmetric_transition,
)
from harness_weak_features._data import WEAK_KINDS, WeakData, WeakOutput
from harness_weak_features._observation import estimated_likelihood

__all__ = [
    "WEAK_KINDS",
    "BoundTerms",
    "WeakData",
    "WeakOutput",
    "complementary_transition",
    "corrupt",
    "estimated_likelihood",
    "fit_label_model",
    "posterior",
    "symmetric_transition",
    "weak_nll",
    "wfl_risk_bound",
]


def weak_nll(logits: Any, lik: Any) -> Any:
    """Mean ``-log Σ_u lik[i, u] softmax(logits_i)[u]`` (nats); torch tensors (n, K) -> ().

    See :func:`harness_weak_features._losses.weak_nll`.
    """
    from harness_weak_features._losses import weak_nll as _weak_nll

    return _weak_nll(logits, lik)


def posterior(logits: Any, lik: Any) -> Any:
    """``p(v | x_o, o) ∝ softmax(logits) · lik``; torch tensors (n, K) -> (n, K), rows sum to 1.

    See :func:`harness_weak_features._losses.posterior`.
    """
    from harness_weak_features._losses import posterior as _posterior

    return _posterior(logits, lik)


def fit_label_model(*args: Any, **kwargs: Any) -> Any:
    """The task's label model h; see :func:`harness_weak_features._models.fit_label_model`.

    Returns ``(y_pred (n_test,) int64, y_score (n_test,) float64, fitted model)``.
    """
    from harness_weak_features._models import fit_label_model as _fit

    return _fit(*args, **kwargs)
