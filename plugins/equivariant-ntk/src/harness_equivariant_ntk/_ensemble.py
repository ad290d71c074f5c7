"""Finite-width CNN ensembles trained by full-batch gradient descent, in torch.

The network is the one-layer CNN of :mod:`harness_equivariant_ntk._kernels` at finite width:
a 3x3 convolution (zero padding, ReLU, ``width`` channels, no bias) and a dense readout of the
flattened layer, in the NTK parameterisation (weights N(0, 1); pre-activations scaled by
sqrt(sigma^2 / fan-in), sigma^2 = 1 on the input and 2 after each ReLU). Its output is centred,
g(x) = f(x; theta) - f(x; theta_0), so that g is 0 at initialisation and the ensemble mean
tends to the kernel's mean prediction. All members train at once: their channels are stacked
in one matrix product.

Source: the NTK parameterisation and the centring (Jacot et al., NeurIPS 2018; Chizat et al.,
NeurIPS 2019, "lazy training"). The sizes are this plugin's (the paper's finite-width
experiments were not read).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["CnnEnsemble", "patches", "train_ensemble"]


def patches(images: np.ndarray) -> np.ndarray:
    """The 3x3 zero-padded neighbourhood of every pixel, shape (n, 64, 9), for (n, 8, 8)."""
    padded = np.pad(images, [(0, 0), (1, 1), (1, 1)])
    cols = [padded[:, dy : dy + 8, dx : dx + 8] for dy in range(3) for dx in range(3)]
    return np.stack(cols, axis=-1).reshape(len(images), 64, 9)


class CnnEnsemble:
    """``members`` independent one-layer CNNs of one width, initialised from ``seed``.

    f(x) = sqrt(2 / (64 width)) sum_{p, c} V[p, c] relu((1/3) W_c . patch_p(x)), one 3x3
    convolution with zero padding and a dense readout of the flattened layer, evaluated as
    matrix products over the fixed patches (the fast path on a CPU).

    Parameters
    ----------
    members, width, classes : int
        Ensemble size, channels, outputs.
    seed : int
        Seeds the torch generator of the initial weights.
    """

    depth = 1

    def __init__(self, members: int, width: int, classes: int, seed: int) -> None:
        import torch

        gen = torch.Generator().manual_seed(seed % 2**63)
        self.filters = torch.randn(9, members * width, generator=gen, dtype=torch.float32)
        self.readout = torch.randn(members, 64, width, classes, generator=gen, dtype=torch.float32)
        self.members, self.width = members, width

    def parameters(self) -> list:
        return [self.filters, self.readout]

    def __call__(self, patched) -> object:
        """Outputs of every member, shape (members, n, classes), for patches (n, 64, 9)."""
        import torch

        hidden = torch.relu(patched @ self.filters / 3.0)
        hidden = hidden.reshape(len(patched), 64, self.members, self.width)
        scale = math.sqrt(2.0 / (64 * self.width))
        return torch.einsum("npmw,mpwc->mnc", hidden, self.readout) * scale


def train_ensemble(
    net: CnnEnsemble,
    x_train: np.ndarray,
    targets: np.ndarray,
    points: np.ndarray,
    times: Sequence[float],
    lr: float,
) -> np.ndarray:
    """Gradient descent on L = (1 / 2n) sum_i ||g(x_i) - y_i||^2 for every member at once.

    Parameters
    ----------
    net : CnnEnsemble
        Trained in place.
    x_train : ndarray, shape (n, 8, 8)
    targets : ndarray, shape (n, classes)
    points : ndarray, shape (m, 8, 8)
        Where the ensemble mean is recorded.
    times : sequence of float
        Times t = lr x steps at which to record (each a whole number of steps).
    lr : float
        Step size.

    Returns
    -------
    ndarray of float64, shape (len(times), m, classes)
        The mean over members of the centred output g at each time.
    """
    import torch

    x = torch.as_tensor(patches(x_train), dtype=torch.float32)
    y = torch.as_tensor(targets, dtype=torch.float32)
    p = torch.as_tensor(patches(points), dtype=torch.float32)
    params = net.parameters()
    with torch.no_grad():
        start_x, start_p = net(x), net(p)
    stops = [round(t / lr) for t in times]
    out = []
    for step in range(max(stops) + 1):
        if step in stops:
            with torch.no_grad():
                out.append((net(p) - start_p).mean(dim=0).double().numpy())
        if step == max(stops):
            break
        for w in params:
            w.requires_grad_(True)
        loss = ((net(x) - start_x - y) ** 2).sum() / (2 * len(x))
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for w, g in zip(params, grads, strict=True):
                w -= lr * g
    return np.stack(out)
