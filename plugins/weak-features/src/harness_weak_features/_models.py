"""Feature estimator f (torch), label model h (logistic) and their training loops.

Source: Sugiyama & Uchida, ICML 2025, §2 (f: x_o -> Δ(V_j); h: (x_o, x̂_W) -> y);
training details are a reconstruction (full-batch Adam), not checked against the paper.
This module imports torch and scikit-learn; the method classes import it only when they run.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from torch import nn

from harness_weak_features._losses import posterior, weak_nll

__all__ = [
    "WeakEstimator",
    "fit_label_model",
    "liks_of",
    "one_hot_block",
    "posteriors",
    "torch_label_model",
    "torch_module_from",
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
) -> float:
    """Minimise ``loss_fn()`` by full-batch ``torch.optim.Adam`` (L2 weight decay, default
    betas); returns the last loss.

    ``weight_decay`` is one value for every tensor, or one value per tensor of ``params``
    (one Adam parameter group per tensor). Tensors that do not require gradients are left out.

    Source: Kingma & Ba, ICLR 2015, as implemented by ``torch.optim.Adam``.
    """
    decays = [weight_decay] * len(params) if np.isscalar(weight_decay) else list(weight_decay)
    groups = [
        {"params": [p], "weight_decay": float(wd)}
        for p, wd in zip(params, decays, strict=True)
        if p.requires_grad
    ]
    optimizer = torch.optim.Adam(groups, lr=lr)
    loss = torch.zeros(())
    for _ in range(epochs):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn()
        loss.backward()
        optimizer.step()
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
    z_train: np.ndarray,
    y_train: np.ndarray,
    z_test: np.ndarray,
    C: float,
    label_model: str = "logistic",
    hidden: int = 32,
    seed: int = 0,
    solver: str = "lbfgs",
    epochs: int = 100,
) -> tuple[np.ndarray, np.ndarray, LogisticRegression | MLPClassifier]:
    """Label model h on features z; returns test labels, P(y=1) and the fitted model.

    Source: scikit-learn ``LogisticRegression`` (lbfgs) or ``MLPClassifier`` (one ReLU hidden
    layer, L2 ``alpha = 1 / C``, which matches the logistic model's penalty per row; lbfgs, or
    Adam with minibatches of 200 rows for ``epochs`` epochs, as the authors' ``arch='mlp'``
    trained by Adam). Deterministic given ``seed``.

    Parameters
    ----------
    z_train, z_test : ndarray of float64, shape (n_train, p) and (n_test, p)
    y_train : ndarray of int64, shape (n_train,)
    C : float
        Inverse L2 strength, > 0.
    label_model : {"logistic", "mlp"}
    hidden : int
        Hidden width of the MLP, >= 1.
    seed : int
        Initialisation seed of the MLP.
    solver : {"lbfgs", "adam"}
        Optimiser of the MLP (unused for logistic h).
    epochs : int
        Adam epochs of the MLP (``max_iter``; lbfgs runs up to 500 iterations).
    """
    if label_model == "mlp":
        model = MLPClassifier(
            hidden_layer_sizes=(hidden,),
            alpha=1.0 / C,
            solver=solver,
            max_iter=500 if solver == "lbfgs" else epochs,
            random_state=seed,
        )
    elif label_model == "logistic":
        model = LogisticRegression(C=C, max_iter=2000)
    else:
        raise ValueError(f"label_model must be 'logistic' or 'mlp', got {label_model!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(z_train, y_train)
    score = model.predict_proba(z_test)[:, 1]
    return (score >= 0.5).astype(np.int64), score, model


def torch_module_from(model: LogisticRegression | MLPClassifier) -> nn.Module:
    """A frozen torch copy of a fitted binary h (logit output, shape (n, 1)).

    Logistic regression becomes one ``Linear``; an ``MLPClassifier`` with ReLU hidden layers
    becomes ``Linear, ReLU, ..., Linear`` with the same weights (its output unit is logistic).
    """
    if isinstance(model, LogisticRegression):
        coefs, intercepts = [model.coef_.T], [model.intercept_]
    else:
        coefs, intercepts = model.coefs_, model.intercepts_
    layers: list[nn.Module] = []
    for i, (w, b) in enumerate(zip(coefs, intercepts, strict=True)):
        linear = nn.Linear(*w.shape)
        with torch.no_grad():
            linear.weight.copy_(torch.as_tensor(w.T, dtype=torch.float32))
            linear.bias.copy_(torch.as_tensor(b, dtype=torch.float32))
        layers += [linear] if i == len(coefs) - 1 else [linear, nn.ReLU()]
    module = nn.Sequential(*layers)
    module.requires_grad_(False)
    return module


def torch_label_model(p: int, label_model: str, hidden: int) -> nn.Module:
    """A trainable torch h for joint training: logistic (``Linear(p, 1)``) or one-hidden-layer
    ReLU MLP (``Linear(p, hidden), ReLU, Linear(hidden, 1)``); logit output."""
    if label_model == "mlp":
        return nn.Sequential(nn.Linear(p, hidden), nn.ReLU(), nn.Linear(hidden, 1))
    return nn.Linear(p, 1)
