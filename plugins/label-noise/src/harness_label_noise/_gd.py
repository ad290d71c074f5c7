"""Full-batch gradient descent on the logistic loss, vectorised in torch.

Two models share one loop: the paper's two-layer ReLU CNN with a fixed second layer (``f(W, x)
= F_{+1} - F_{-1}``, ``F_j = (1/m) sum_r sum_p ReLU(<w_{j,r}, x_p>)``) and a linear classifier
on the flattened patches, ``f(x) = <v, vec(x)>``. Gradient descent moves the CNN's filters in
the span of the training patches, ``w_{j,r}(t) = w_{j,r}(0) + sum_{i,p} c_{j,r,i,p}(t)
x_{i,p}``, so the loop carries the coefficients ``c`` and the training pre-activations, moved
by the patches' Gram matrix, and never the filters themselves (see :func:`_cnn`): every
sample's margin at every step (hence the per-step training accuracies), and the exact
coefficients from which the paper's signal and noise coefficients are read (eq. of the
signal-noise decomposition, Han et al. 2025, Section 3). Filters and held-out scores are
rebuilt from the coefficients at the recorded iterations only. The linear model's weights
move in the span of the flattened inputs, ``v(t) = v(0) + sum_i c_i(t) vec(x_i)``; written as
the CNN's ``F_{+1} - F_{-1}`` with one filter per sign (``w_{+1} = v``, ``w_{-1} = -v``, no
ReLU), its coefficients are ``c_{+1,1,i,p} = c_i`` and ``c_{-1,1,i,p} = -c_i``, so the same
decomposition reads both models.

Source: Han et al., ICML 2025, Section 3 (model, loss, gradient descent); Cao et al. 2022 and
Kou et al. 2023 for the signal-noise decomposition.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
    dtype: str = "float32",
) -> History:
    """Train by full-batch GD on ``mean_i log(1 + exp(-y_i f(x_i)))`` from a seeded init.

    :param x: training patches, shape (n, p, d); ``x_val``, ``x_test`` likewise.
    :param y: labels trained on, shape (n,), in {-1, +1}.
    :param weights: shape (n,), 1 for the samples in the loss, 0 for those left out
        (sample selection); the loss is the mean over the samples kept.
    :param model: ``"cnn"`` (2 * ``width`` filters of R^d) or ``"linear"`` (one vector of
        R^{p d}).
    :param init_scale: sigma_0, the standard deviation of the Gaussian init.
    :param record: increasing iterations in ``0..steps``, the last ``steps``, at which to
        record (see :func:`record_steps`).
    :param dtype: ``"float32"`` (the default: the margins and coefficients the claims read
        are orders of magnitude above its round-off) or ``"float64"`` arithmetic;
        everything returned is float64.

    Runs on one torch thread: the products are too small to gain from more, and ``-j``
    workers share the cores.
    """
    if record[0] < 0 or record[-1] != steps or np.any(np.diff(record) <= 0):
        raise ValueError(f"record must be increasing iterations in 0..{steps}, ending at {steps}")
    import torch  # here, not at import: loading the plugin does not load torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # torch only: numpy's BLAS does nothing large in here
    try:
        generator = torch.Generator().manual_seed(int(seed))
        loop = _cnn if model == "cnn" else _linear
        return loop(x, y, weights / weights.sum(), x_val, x_test, width, init_scale,
                    learning_rate, steps, record, generator, getattr(torch, dtype))  # fmt: skip
    finally:
        torch.set_num_threads(threads)


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(unique, index)`` with ``rows == unique[index]`` exactly: the distinct rows, shapes
    (u, d) and (r,). The synthetic model's signal patches ``y_i mu`` are two rows (``+-mu``),
    so its ``2 n`` patches have ``n + 2`` distinct; real data have as many as rows."""
    rows = np.ascontiguousarray(rows + 0.0)  # + 0.0: -0.0 becomes 0.0, so bytes decide
    keys = rows.view(np.dtype((np.void, rows.itemsize * rows.shape[1]))).reshape(-1)
    _, first, index = np.unique(keys, return_index=True, return_inverse=True)
    return rows[first], index.reshape(-1)


def _cnn(x, y, scale, x_val, x_test, width, init_scale, learning_rate, steps, record,
         generator, dtype) -> History:  # fmt: skip
    """The CNN's loop in the span of the training patches.

    It never forms the filters: with ``w = w(0) + C^T X`` (rows of ``X``: the training
    patches, shape (n p, d); ``C``: the patch coefficients, (n p, 2m)), a step ``w <- w -
    eta dz^T X`` moves ``C <- C - eta dz`` and the pre-activations ``z = X w^T`` as ``z <- z
    - eta X X^T dz``. ``X`` is kept as its distinct rows, ``X = S U`` (``S`` picks rows), so
    the state is ``z_U = U w^T`` (u, 2m), ``z = S z_U``, moved by ``(U U^T)(S^T dz)``: one
    ``u x u x 2m`` product a step (u = n + 2 for the synthetic model) where the weights
    took two of ``n p x d x 2m``. Held-out scores and filters are rebuilt from ``C`` at the
    recorded iterations only, through the held-out rows' products with ``U``.
    """
    import torch  # the module, not a lazy proxy: its attributes are read every step

    n, p, d = x.shape
    unique, index = unique_rows(x.reshape(n * p, d))
    u_rows, pick = torch.tensor(unique, dtype=dtype), torch.tensor(index)
    w0 = init_scale * torch.randn(2 * width, d, generator=generator).to(dtype)
    sign = torch.cat([torch.ones(width), -torch.ones(width)]).to(dtype) / width
    per_input = sign.repeat(p)  # f_i = relu(z) of sample i's p patches, flattened, @ this
    ys = torch.tensor(y, dtype=dtype)
    weighted = -ys * torch.tensor(scale, dtype=dtype)
    gram = u_rows @ u_rows.T  # (u, u)
    z_u = u_rows @ w0.T  # (u, 2m)
    coef = torch.zeros(n * p, 2 * width, dtype=dtype)
    moved = torch.empty_like(z_u)
    scores = torch.empty(steps + 1, n, dtype=dtype)
    wanted, snapshots = set(record.tolist()), []
    for t in range(steps + 1):
        z = z_u.index_select(0, pick)  # (n p, 2m)
        f = torch.mv(torch.relu(z).view(n, -1), per_input, out=scores[t])
        if t in wanted:
            snapshots.append(coef.clone())
        if t == steps:
            break
        # d/df log(1 + exp(-y f)) = -y sigmoid(-y f), averaged over the samples kept;
        # dz = g_i sign_k [z > 0] for every patch of sample i
        g = weighted * torch.sigmoid(-ys * f)
        dz = ((z > 0).view(n, p, -1) * torch.outer(g, sign).unsqueeze(1)).view(n * p, -1)
        coef.sub_(dz, alpha=learning_rate)
        z_u.addmm_(gram, moved.zero_().index_add_(0, pick, dz), alpha=-learning_rate)
    c = torch.stack(snapshots)  # (k, n p, 2m)
    k = c.shape[0]
    c_u = torch.zeros(k, *z_u.shape, dtype=dtype).index_add_(1, pick, c)  # S^T C

    def held_scores(inputs: np.ndarray) -> torch.Tensor:
        h_unique, h_index = unique_rows(inputs.reshape(-1, d))
        h = torch.tensor(h_unique, dtype=dtype)
        z_h = (h @ w0.T + (h @ u_rows.T) @ c_u)[:, torch.tensor(h_index)]  # (k, rows, 2m)
        return torch.relu(z_h).view(k, -1, p * 2 * width) @ per_input

    coefficients = c.numpy().reshape(k, n, p, 2, width).transpose(0, 3, 4, 1, 2)
    final = w0 + c_u[-1].T @ u_rows
    return _history(scores, record, held_scores(x_val), held_scores(x_test), coefficients,
                    w0.reshape(2, width, d), final.reshape(2, width, d))  # fmt: skip


def _linear(x, y, scale, x_val, x_test, width, init_scale, learning_rate, steps, record,
            generator, dtype) -> History:  # fmt: skip
    """The linear model's loop in the span of the flattened inputs: ``v = v(0) + c^T X``
    (rows of ``X``: the flattened training inputs, (n, p d)), so a step ``v <- v - eta
    g^T X`` moves ``c <- c - eta g`` and the scores ``f = X v`` as ``f <- f - eta X X^T g``.
    ``width`` is ignored (one filter per sign)."""
    import torch  # the module, not a lazy proxy: its attributes are read every step

    n, p, d = x.shape
    flat = torch.tensor(x.reshape(n, p * d), dtype=dtype)
    w0 = init_scale * torch.randn(p * d, generator=generator).to(dtype)
    ys = torch.tensor(y, dtype=dtype)
    weighted = -ys * torch.tensor(scale, dtype=dtype)
    gram = flat @ flat.T  # (n, n)
    f = flat @ w0  # (n,)
    coef = torch.zeros(n, dtype=dtype)
    scores = torch.empty(steps + 1, n, dtype=dtype)
    wanted, snapshots = set(record.tolist()), []
    for t in range(steps + 1):
        scores[t] = f
        if t in wanted:
            snapshots.append(coef.clone())
        if t == steps:
            break
        g = weighted * torch.sigmoid(-ys * f)
        coef.sub_(g, alpha=learning_rate)
        f.addmv_(gram, g, alpha=-learning_rate)
    c = torch.stack(snapshots)  # (k, n)
    vectors = w0 + c @ flat  # (k, p d)

    def held_scores(inputs: np.ndarray) -> torch.Tensor:
        return vectors @ torch.tensor(inputs.reshape(-1, p * d), dtype=dtype).T

    # c_i for every patch, +c in the filter of sign +1 and -c in that of sign -1
    per_patch = np.repeat(c.numpy()[:, None, None, :, None], p, axis=-1)
    coefficients = np.concatenate([per_patch, -per_patch], axis=1)
    return _history(scores, record, held_scores(x_val), held_scores(x_test), coefficients,
                    w0, vectors[-1])  # fmt: skip


def _history(scores, record, val, test, coefficients, initial, final) -> History:
    """A :class:`History` of float64 arrays from the loop's tensors and arrays."""
    arrays = (scores, val, test, coefficients, initial, final)
    scores, *rest = (np.asarray(a, dtype=np.float64) for a in arrays)
    return History(scores, np.asarray(record, dtype=np.int64), *rest)
