"""Feature estimator f (torch), label model h (logistic) and their training loops.

Source: Sugiyama & Uchida, ICML 2025, §2 (f: x_o -> Δ(V_j); h: (x_o, x̂_W) -> y);
training details are a reconstruction (full-batch Adam), not checked against the paper.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from torch import nn

from harness_weak_features.losses import posterior, weak_nll

__all__ = [
    "WeakEstimator",
    "fit_label_model",
    "liks_of",
    "one_hot_block",
    "posteriors",
    "torch_linear_from",
    "total_weak_nll",
    "train_full_batch",
]


class WeakEstimator(nn.Module):
    """Softmax regression (``hidden=0``) or one-hidden-layer MLP with one head per weak feature.

    Parameters
    ----------
    d : int
        Ordinary features.
    n_levels : sequence of int
        ``K_j`` per weak feature.
    hidden : int
        Hidden width; 0 for softmax regression.
    """

    def __init__(self, d: int, n_levels: Sequence[int], hidden: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d, hidden), nn.ReLU()) if hidden else nn.Identity()
        self.heads = nn.ModuleList(nn.Linear(hidden or d, k) for k in n_levels)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Logits per weak feature, each of shape (n, K_j)."""
        z = self.body(x)
        return [head(z) for head in self.heads]


def total_weak_nll(logits: list[torch.Tensor], liks: list[torch.Tensor]) -> torch.Tensor:
    """Sum over weak features of :func:`weak_nll` (nats per row)."""
    return sum((weak_nll(lo, li) for lo, li in zip(logits, liks, strict=True)), torch.zeros(()))


def train_full_batch(
    params: Sequence[torch.Tensor],
    loss_fn: Callable[[], torch.Tensor],
    epochs: int,
    lr: float,
    weight_decay: float | Sequence[float],
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
) -> float:
    """Minimise ``loss_fn()`` by full-batch Adam with L2 weight decay; returns the last loss.

    ``weight_decay`` is one value for every tensor, or one value per tensor of ``params``.

    Source: Kingma & Ba, ICLR 2015, Algorithm 1 (the update of ``torch.optim.Adam`` with
    ``weight_decay``), written out so that no optimizer machinery is imported per process.
    """
    decays = [weight_decay] * len(params) if np.isscalar(weight_decay) else list(weight_decay)
    keep = [i for i, p in enumerate(params) if p.requires_grad]
    params, decays = [params[i] for i in keep], [decays[i] for i in keep]
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    loss = torch.zeros(())
    for t in range(1, epochs + 1):
        loss = loss_fn()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g, m_p, v_p, wd in zip(params, grads, m, v, decays, strict=True):
                g = g + wd * p
                m_p.mul_(betas[0]).add_(g, alpha=1 - betas[0])
                v_p.mul_(betas[1]).addcmul_(g, g, value=1 - betas[1])
                step = lr / (1 - betas[0] ** t)
                p.addcdiv_(m_p, (v_p / (1 - betas[1] ** t)).sqrt_().add_(eps), value=-step)
    return float(loss.detach())


def liks_of(lik: np.ndarray, n_levels: Sequence[int]) -> list[torch.Tensor]:
    """Split padded ``lik`` (n, J, K_max) into tensors of shape (n, K_j)."""
    return [torch.as_tensor(lik[:, j, :k], dtype=torch.float32) for j, k in enumerate(n_levels)]


def posteriors(
    model: WeakEstimator, x: np.ndarray, lik: np.ndarray, n_levels: Sequence[int]
) -> list[np.ndarray]:
    """``p(v_j | x_o, o_j)`` per weak feature, each of shape (n, K_j); rows sum to 1."""
    with torch.no_grad():
        logits = model(torch.as_tensor(x, dtype=torch.float32))
        return [
            posterior(lo, li).double().numpy()
            for lo, li in zip(logits, liks_of(lik, n_levels), strict=True)
        ]


def one_hot_block(codes: np.ndarray, n_levels: Sequence[int]) -> np.ndarray:
    """One-hot of codes (n, J) into (n, Σ K_j); a code of -1 gives an all-zero block."""
    blocks = []
    for j, k in enumerate(n_levels):
        blocks.append((codes[:, j, None] == np.arange(k)[None, :]).astype(np.float64))
    return np.hstack(blocks)


def fit_label_model(
    z_train: np.ndarray, y_train: np.ndarray, z_test: np.ndarray, C: float
) -> tuple[np.ndarray, np.ndarray, LogisticRegression]:
    """L2 logistic regression h on features z; returns test labels, P(y=1) and the model.

    Source: scikit-learn ``LogisticRegression`` (lbfgs), deterministic.

    Parameters
    ----------
    z_train, z_test : ndarray of float64, shape (n_train, p) and (n_test, p)
    y_train : ndarray of int64, shape (n_train,)
    C : float
        Inverse L2 strength, > 0.
    """
    model = LogisticRegression(C=C, max_iter=2000).fit(z_train, y_train)
    score = model.predict_proba(z_test)[:, 1]
    return (score >= 0.5).astype(np.int64), score, model


def torch_linear_from(model: LogisticRegression) -> nn.Linear:
    """A frozen torch copy of a fitted binary logistic regression (logit output)."""
    linear = nn.Linear(model.coef_.shape[1], 1)
    with torch.no_grad():
        linear.weight.copy_(torch.as_tensor(model.coef_, dtype=torch.float32))
        linear.bias.copy_(torch.as_tensor(model.intercept_, dtype=torch.float32))
    linear.requires_grad_(False)
    return linear
