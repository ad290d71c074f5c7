"""Multinomial logistic regression fitted on each prompt's context, all prompts at once.

Each prompt gets its own model p(y = k | x) = softmax_k(a_k^T x + b_k), fitted by Newton's
method on the mean cross-entropy of its L context points plus ``(1 / (2 C L)) sum_k |a_k|^2``
(scikit-learn's ``LogisticRegression(C=C)`` objective divided by L; the intercepts get a
1e-8 ridge only, which fixes the softmax's shift invariance). The Hessians of all prompts
are (c (d + 1))-square, so one batched solve per step serves every prompt.
"""

from __future__ import annotations

import numpy as np

from harness_icl_gmm.data import Prompts, softmax

__all__ = ["fit_predict"]


def fit_predict(prompts: Prompts, classes: int, C: float, iterations: int = 30) -> np.ndarray:
    """Fit one model per prompt on its context and return P(y_query = k): (prompts, c)."""
    x, y = prompts.context_x, prompts.context_y
    B, L, d = x.shape
    z = np.concatenate([x, np.ones((B, L, 1))], axis=2)  # (B, L, d + 1)
    onehot = np.eye(classes)[y]  # (B, L, c)
    q = classes * (d + 1)
    ridge = np.tile(np.r_[np.full(d, 1 / (C * L)), 1e-8], classes)
    theta = np.zeros((B, classes, d + 1))
    for _ in range(iterations):
        p = softmax(np.einsum("bld,bkd->blk", z, theta))
        grad = np.einsum("blk,bld->bkd", p - onehot, z) / L + ridge.reshape(classes, d + 1) * theta
        curvature = p[..., :, None] * np.eye(classes) - p[..., :, None] * p[..., None, :]
        hess = np.einsum("blkm,bld,ble->bkdme", curvature, z, z).reshape(B, q, q) / L
        hess += np.diag(ridge)
        step = np.linalg.solve(hess, grad.reshape(B, q, 1)).reshape(B, classes, d + 1)
        theta -= step
        if np.abs(step).max() < 1e-10:
            break
    zq = np.concatenate([prompts.query_x, np.ones((B, 1))], axis=1)
    return softmax(np.einsum("bd,bkd->bk", zq, theta))
