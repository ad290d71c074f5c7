"""The single-layer linear-attention model as a convex problem in one d x d matrix W.

With the embedding Z = [[x_1 .. x_N x_q], [e(y_1) .. e(y_N) 0]] and the sparse block
structure of this line of work (Zhang, Frei, Bartlett 2024), the attention read-out at the
query's label entries is ``logit_k = h_k^T W x_q`` with ``h_k = (1/N) sum_i 1[y_i = k] x_i``
(science notes §1, [INF]): a multinomial logistic regression on the features
``vec(h_k x_q^T)``. Its training loss is convex in W, and gradient descent converges to the
minimiser W* at a linear rate where the loss is strongly convex (the paper's Theorem 3.1 /
4.1). For c = 2 with labels +-1 this is the paper's binary model
``sigmoid((1/N) sum_i y_i x_i^T W x_q)``: the two class logits differ by exactly that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness_icl_gmm.data import ContextMeans, softmax

__all__ = [
    "Features",
    "Trajectory",
    "features",
    "gradient_descent",
    "hessian",
    "logits",
    "minimise",
]


@dataclass(frozen=True)
class Features:
    """The training set of the model: ``flat`` (prompts, c, d*d) = vec(h_k x_q^T) and the
    query labels ``labels`` (prompts,)."""

    flat: np.ndarray
    labels: np.ndarray

    @property
    def dim(self) -> int:
        return round(self.flat.shape[2] ** 0.5)

    def probs(self, w: np.ndarray) -> np.ndarray:
        """Predicted class probabilities (prompts, c) at W of shape (d, d)."""
        return softmax(self.flat @ w.ravel())

    def loss(self, w: np.ndarray) -> float:
        """Mean cross-entropy of the query labels at W."""
        scores = self.flat @ w.ravel()
        top = scores.max(axis=1)
        log_norm = top + np.log(np.exp(scores - top[:, None]).sum(axis=1))
        return float(np.mean(log_norm - scores[np.arange(len(scores)), self.labels]))

    def gradient(self, w: np.ndarray) -> np.ndarray:
        """The loss's gradient at W, shape (d, d)."""
        residual = self.probs(w)
        residual[np.arange(len(residual)), self.labels] -= 1.0
        grad = residual.ravel() @ self.flat.reshape(-1, self.flat.shape[2]) / len(residual)
        return grad.reshape(w.shape)


@dataclass(frozen=True)
class Trajectory:
    """GD iterates ``weights`` (k, d, d) at ``steps`` (k,), the step size and final W."""

    weights: np.ndarray
    steps: np.ndarray
    step_size: float

    @property
    def final(self) -> np.ndarray:
        return self.weights[-1]


def features(prompts: ContextMeans) -> Features:
    """The model's features of ``prompts``: vec(h_k x_q^T) for each class k."""
    h, x = prompts.class_means, prompts.query_x
    return Features((h[:, :, :, None] * x[:, None, None, :]).reshape(*h.shape[:2], -1),
                    prompts.query_y)  # fmt: skip


def logits(prompts: ContextMeans, w: np.ndarray) -> np.ndarray:
    """logit_k = h_k^T W x_q, shape (prompts, c)."""
    return np.einsum("pkd,de,pe->pk", prompts.class_means, w, prompts.query_x)


def hessian(data: Features, w: np.ndarray) -> np.ndarray:
    """The loss's Hessian at W, shape (d*d, d*d)."""
    p = data.probs(w)
    mean_feature = np.einsum("pk,pkf->pf", p, data.flat)
    rows = data.flat.reshape(-1, data.flat.shape[2])
    second = (rows * p.reshape(-1, 1)).T @ rows
    return (second - mean_feature.T @ mean_feature) / len(p)


def minimise(data: Features, tol: float = 1e-12, max_iter: int = 50) -> np.ndarray:
    """W* = argmin of the training loss by damped Newton steps from W = 0, shape (d, d).

    :raises RuntimeError: if the gradient's norm is not below ``tol`` after ``max_iter``
        steps (a loss without a finite minimiser, e.g. separable prompts).
    """
    d = data.dim
    w = np.zeros((d, d))
    for _ in range(max_iter):
        grad = data.gradient(w)
        if np.linalg.norm(grad) < tol:
            return w
        step = np.linalg.solve(hessian(data, w), grad.ravel()).reshape(d, d)
        loss, scale = data.loss(w), 1.0
        while data.loss(w - scale * step) > loss + 1e-14 and scale > 1e-6:
            scale /= 2
        w = w - scale * step
    raise RuntimeError(f"Newton's method did not reach |grad| < {tol} in {max_iter} steps")


def gradient_descent(
    data: Features,
    steps: int,
    lr_scale: float,
    start: np.ndarray | tuple[np.ndarray, np.ndarray] | None = None,
    records: int = 200,
) -> Trajectory:
    """Plain GD with step size ``lr_scale / lambda_max(Hessian at W = 0)``.

    ``start`` is W_0, shape (d, d) (default 0: the merged, convex problem), or a pair of
    factors ``(A_0, B_0)``: GD then runs on the factored, non-convex parametrisation
    W = A B (as attention's W^KQ = W_K^T W_Q), whose origin is a saddle. At W = 0 every
    class has probability 1/c, where the softmax's curvature is largest, so ``lr_scale = 1``
    keeps eta below 2 / lambda_max along a merged run. ``records`` evenly spaced iterates
    W_t (the first and last included) are kept.
    """
    d = data.dim
    eta = lr_scale / float(np.linalg.eigvalsh(hessian(data, np.zeros((d, d))))[-1])
    keep = np.unique(np.linspace(0, steps, min(records, steps + 1)).round().astype(int))
    wanted = set(keep[1:].tolist())
    if isinstance(start, tuple):
        a, b = (f.copy() for f in start)
        kept = [a @ b]
        for t in range(1, steps + 1):
            g = data.gradient(a @ b)
            a, b = a - eta * g @ b.T, b - eta * a.T @ g
            if t in wanted:
                kept.append(a @ b)
    else:
        w = np.zeros((d, d)) if start is None else start.copy()
        kept = [w.copy()]
        for t in range(1, steps + 1):
            w = w - eta * data.gradient(w)
            if t in wanted:
                kept.append(w.copy())
    return Trajectory(np.stack(kept), keep.astype(np.int64), eta)
