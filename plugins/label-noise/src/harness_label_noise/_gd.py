"""Full-batch gradient descent on the logistic loss, vectorised in torch.

Two models share one loop: the paper's two-layer ReLU CNN with a fixed second layer (``f(W, x)
= F_{+1} - F_{-1}``, ``F_j = (1/m) sum_r sum_p ReLU(<w_{j,r}, x_p>)``) and a linear classifier
on the flattened patches, ``f(x) = <v, vec(x)>``. Each step is one forward pass over the
training set (giving every sample's margin, hence the per-step training accuracies for free),
the hand-written gradient, and the update. The CNN also accumulates the exact coefficient of
every training patch in every filter, ``w_{j,r}(t) = w_{j,r}(0) + sum_{i,p} c_{j,r,i,p}(t)
x_{i,p}``, from which the paper's signal and noise coefficients are read (eq. of the signal-
noise decomposition, Han et al. 2025, Section 3). The linear model's weights move in the span
of the flattened inputs, ``v(t) = v(0) + sum_i c_i(t) vec(x_i)``; written as the CNN's
``F_{+1} - F_{-1}`` with one filter per sign (``w_{+1} = v``, ``w_{-1} = -v``, no ReLU), its
coefficients are ``c_{+1,1,i,p} = c_i`` and ``c_{-1,1,i,p} = -c_i``, so the same decomposition
reads both models.

Source: Han et al., ICML 2025, Section 3 (model, loss, gradient descent); Cao et al. 2022 and
Kou et al. 2023 for the signal-noise decomposition.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness import LazyModule

torch = LazyModule("torch")

__all__ = ["History", "record_steps", "train"]


def record_steps(steps: int, points: int) -> np.ndarray:
    """About ``points`` iterations in ``0..steps``, log-spaced after a linear start (the two
    stages live on a log time scale), always holding 0 and ``steps``; shape (k,), int64."""
    grid = np.geomspace(1, steps, max(points - 1, 1)).round().astype(np.int64)
    return np.unique(np.concatenate([[0], grid, [steps]]))


@dataclass
class History:
    """What one training run recorded.

    Attributes
    ----------
    scores : ndarray of float64, shape (steps + 1, n)
        ``f(W(t), x_i)`` of every training input at every iteration t = 0..steps (row t is
        before update t + 1).
    steps : ndarray of int64, shape (k,)
        The iterations at which ``val``, ``test`` and ``coefficients`` were recorded.
    val, test : ndarray of float64, shape (k, n_val) and (k, n_test)
        ``f(W(t), x)`` on the validation and test inputs at the recorded iterations.
    coefficients : ndarray of float64, shape (k, 2, m, n, p)
        The patch coefficients ``c_{j,r,i,p}(t)`` (m = 1 for the linear model, see above).
    initial, final : ndarray of float64
        The weights at iterations 0 and ``steps``: shape (2, m, d) for the CNN (filters of
        sign +1 first), (p * d,) for the linear model.
    """

    scores: np.ndarray
    steps: np.ndarray
    val: np.ndarray
    test: np.ndarray
    coefficients: np.ndarray
    initial: np.ndarray
    final: np.ndarray


def train(
    x: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    x_val: np.ndarray,
    x_test: np.ndarray,
    *,
    model: str,
    width: int,
    init_scale: float,
    learning_rate: float,
    steps: int,
    record: np.ndarray,
    seed: int,
) -> History:
    """Train by full-batch GD on ``mean_i log(1 + exp(-y_i f(x_i)))`` from a seeded init.

    :param x: training patches, shape (n, p, d); ``x_val``, ``x_test`` likewise.
    :param y: labels trained on, shape (n,), in {-1, +1}.
    :param weights: shape (n,), 1 for the samples in the loss, 0 for those left out
        (sample selection); the loss is the mean over the samples kept.
    :param model: ``"cnn"`` (2 * ``width`` filters of R^d) or ``"linear"`` (one vector of
        R^{p d}).
    :param init_scale: sigma_0, the standard deviation of the Gaussian init.
    :param record: increasing iterations in ``0..steps`` at which to record (see
        :func:`record_steps`).

    The arithmetic is float32 (twice as fast on CPU; the coefficients and margins the claims
    read are orders of magnitude above its precision); everything returned is float64.
    """
    n, p, d = x.shape
    generator = torch.Generator().manual_seed(int(seed))
    dtype = torch.float32
    xs = torch.tensor(x.reshape(n * p, d), dtype=dtype)
    ys = torch.tensor(y, dtype=dtype)
    scale = torch.tensor(weights / weights.sum(), dtype=dtype)
    held = [torch.tensor(a.reshape(-1, d), dtype=dtype) for a in (x_val, x_test)]
    if model == "cnn":
        w = init_scale * torch.randn(2 * width, d, generator=generator, dtype=dtype)
        sign = torch.cat([torch.ones(width), -torch.ones(width)]).to(dtype) / width
        coef = torch.zeros(n * p, 2 * width, dtype=dtype)
    else:
        w = init_scale * torch.randn(p * d, generator=generator, dtype=dtype)
        coef = torch.zeros(n, dtype=dtype)
    initial = w.numpy().astype(np.float64)

    def forward(inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        if model == "cnn":
            z = inputs @ w.T  # (rows * p, 2m)
            active = z > 0
            out = (torch.relu(z) @ sign).reshape(-1, p).sum(dim=1)
            return out, active
        return inputs.reshape(-1, p * d) @ w, None

    scores = np.empty((steps + 1, n))
    recorded = {"val": [], "test": [], "coefficients": []}
    wanted = set(record.tolist())
    for t in range(steps + 1):
        f, active = forward(xs)
        scores[t] = f.numpy()
        if t in wanted:
            with torch.no_grad():
                recorded["val"].append(forward(held[0])[0].numpy().astype(np.float64))
                recorded["test"].append(forward(held[1])[0].numpy().astype(np.float64))
            recorded["coefficients"].append(coef.numpy().astype(np.float64))
        if t == steps:
            break
        # d/df log(1 + exp(-y f)) = -y sigmoid(-y f), averaged over the samples kept
        g = -ys * torch.sigmoid(-ys * f) * scale
        if model == "cnn":
            dz = (g.repeat_interleave(p)[:, None] * sign[None, :]) * active  # (n p, 2m)
            w -= learning_rate * (dz.T @ xs)
            coef -= learning_rate * dz
        else:
            w -= learning_rate * (g @ xs.reshape(n, p * d))
            coef -= learning_rate * g
    stacked = np.stack(recorded["coefficients"])
    k = stacked.shape[0]
    if model == "cnn":
        coefficients = stacked.reshape(k, n, p, 2, width).transpose(0, 3, 4, 1, 2)
    else:  # c_i for every patch, +c in the filter of sign +1 and -c in that of sign -1
        per_patch = np.repeat(stacked[:, None, None, :, None], p, axis=-1)
        coefficients = np.concatenate([per_patch, -per_patch], axis=1)
    shape = (2, width, d) if model == "cnn" else (p * d,)
    return History(scores, np.asarray(record, dtype=np.int64), np.stack(recorded["val"]),
                   np.stack(recorded["test"]), coefficients, initial.reshape(shape),
                   w.numpy().reshape(shape).astype(np.float64))  # fmt: skip
