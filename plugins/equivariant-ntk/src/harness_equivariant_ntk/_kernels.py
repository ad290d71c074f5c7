"""Infinite-width NTKs of a small ReLU CNN and of its C_n group-convolutional partner.

The CNN: ``depth`` 3x3 convolutions with zero padding, stride 1 and ReLU, in the NTK
parameterisation (weights N(0, 1), pre-activations scaled by sqrt(sigma^2 / fan-in), sigma^2 = 1
on the input and 2 after every ReLU, no biases), then a dense readout of the flattened last
layer. With a flatten readout the recursion needs only the *diagonal* spatial entries
K(x, x')(p, p) (Arora et al., NeurIPS 2019, "CNN-V"), so a kernel between ``a`` and ``b``
images costs O(a b P depth) for P pixels.

The GCNN over C_n (rotations by 360/n degrees; n in {2, 4} on the square pixel grid): a lifting
layer (the 3x3 filter applied in each of the n orientations), ``depth - 1`` group convolutions
and a readout pooled over the group. Its lifted kernel is indexed by a pair of orientations
(r, r'); read on positions aligned by the rotations (r q and r' q) it closes under the layers
(:func:`_lifted_ntk`). A group convolution that sums over the whole group (the regular
representation) averages |G| terms that joint-rotation invariance makes equal, so its NTK is
the one of orientation-wise convolutions, which is the CNN kernel between rotated inputs
averaged over all n^2 pairs (tests/test_kernels.py pins the agreement to 1e-12):

    Theta_GC(x, x') = (1 / n^2) sum_{r, r'} Theta_CNN(R_r x, R_r' x').

Source: the ReLU arc-cosine expectations (Cho & Saul, NeurIPS 2009) and the NTK recursion
(Jacot et al., NeurIPS 2018; Arora et al., NeurIPS 2019). The GCNN layers are a
reconstruction from the layers' definitions (not read in the paper, arXiv 2406.06504, whose
recursions for lifting, group convolution and group pooling could not be read).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "GROUPS",
    "arccos_relu",
    "box_average",
    "cnn_ntk",
    "gcnn_ntk",
    "mean_predictions",
    "mlp_ntk",
    "orbit",
    "rotate",
]

#: The rotation subgroups of C_4 that act on a square pixel grid: quarter turns of each element.
GROUPS: dict[str, tuple[int, ...]] = {"none": (0,), "c2": (0, 2), "c4": (0, 1, 2, 3)}
_CHUNK = 2_000_000  # kernel entries (pairs x pixels) per block: bounds the memory to ~100 MB


def rotate(images: np.ndarray, quarter_turns: int) -> np.ndarray:
    """Images (..., h, w) turned by ``quarter_turns`` x 90 degrees (a pixel permutation)."""
    return np.rot90(images, k=quarter_turns, axes=(-2, -1))


def orbit(images: np.ndarray, group: str) -> np.ndarray:
    """Every image under every element of ``group``, shape (|G|, n, h, w), element-major."""
    return np.stack([rotate(images, k) for k in GROUPS[group]])


def box_average(u: np.ndarray) -> np.ndarray:
    """The 3x3 mean over spatial offsets with zero padding, over the last two axes.

    The NNGP operator of a 3x3 convolution on diagonal entries: A[u](p) = (1/9) sum_y u(p + y).
    """
    padded = np.pad(u, [(0, 0)] * (u.ndim - 2) + [(1, 1), (1, 1)])
    h, w = u.shape[-2:]
    rows = padded[..., 0:h, :] + padded[..., 1 : h + 1, :] + padded[..., 2 : h + 2, :]
    return (rows[..., 0:w] + rows[..., 1 : w + 1] + rows[..., 2 : w + 2]) / 9.0


def arccos_relu(cross: np.ndarray, norm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ReLU expectations with the He factor 2: (2 E[relu(u) relu(v)], 2 E[relu'(u) relu'(v)]).

    Parameters
    ----------
    cross : ndarray of float64
        Cov(u, v), any shape.
    norm : ndarray of float64, same shape
        sqrt(Var u Var v) >= 0.

    Returns
    -------
    (ndarray, ndarray)
        norm (sin t + (pi - t) cos t) / pi and (pi - t) / pi with cos t = cross / norm
        (Cho & Saul's arc-cosine kernels of degree 1 and 0); both 0 where ``norm`` is 0.
    """
    live = norm > 0
    cos = np.where(live, cross / np.where(live, norm, 1.0), 0.0)
    theta = np.arccos(np.clip(cos, -1.0, 1.0))
    value = norm * (np.sin(theta) + (np.pi - theta) * cos) / np.pi
    slope = np.where(live, (np.pi - theta) / np.pi, 0.0)
    return value, slope


def _cnn_block(a: np.ndarray, b: np.ndarray, da: list, db: list, depth: int) -> np.ndarray:
    """Theta between images ``a`` (m, h, w) and ``b`` (k, h, w) given their per-layer variances."""
    sigma = box_average(a[:, None] * b[None])  # (m, k, h, w): first layer, sigma^2 = 1
    theta = sigma
    for layer in range(depth):
        norm = np.sqrt(da[layer][:, None] * db[layer][None])
        value, slope = arccos_relu(sigma, norm)
        if layer + 1 == depth:  # dense readout of the flattened last layer, sigma^2 = 2
            return (value + slope * theta).mean(axis=(-2, -1))
        sigma = box_average(value)
        theta = box_average(value + slope * theta)
    raise AssertionError("unreachable")


def _variances(images: np.ndarray, depth: int) -> list[np.ndarray]:
    """Var of every layer's pre-activation at every pixel, shape (n, h, w) per layer."""
    out = [box_average(images**2)]
    for _ in range(depth - 1):  # ReLU with the He factor keeps the diagonal: E = Var
        out.append(box_average(out[-1]))
    return out


def cnn_ntk(a: np.ndarray, b: np.ndarray, depth: int) -> np.ndarray:
    """The infinite-width NTK of the CNN between image sets, float64 (n_a, n_b).

    Parameters
    ----------
    a, b : ndarray of float, shapes (n_a, h, w) and (n_b, h, w)
        Single-channel images.
    depth : int
        Number of convolution + ReLU layers (>= 1).
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    da, db = _variances(a, depth), _variances(b, depth)
    rows = max(1, _CHUNK // (b.shape[0] * a.shape[-1] * a.shape[-2]))
    out = np.empty((a.shape[0], b.shape[0]))
    for start in range(0, a.shape[0], rows):
        part = slice(start, start + rows)
        out[part] = _cnn_block(a[part], b, [d[part] for d in da], db, depth)
    return out


def mlp_ntk(a: np.ndarray, b: np.ndarray, depth: int) -> np.ndarray:
    """The infinite-width NTK of a ReLU MLP on the flattened images, float64 (n_a, n_b).

    ``depth`` hidden layers, NTK parameterisation, sigma^2 = 1 on the input and 2 after each
    ReLU, no biases (Jacot et al., NeurIPS 2018): a kernel of inner products and norms only,
    blind to where pixels sit.
    """
    a = np.asarray(a, np.float64).reshape(len(a), -1)
    b = np.asarray(b, np.float64).reshape(len(b), -1)
    sigma = a @ b.T / a.shape[1]
    norm = np.sqrt(np.outer((a**2).mean(axis=1), (b**2).mean(axis=1)))
    theta = sigma
    for _ in range(depth):
        value, slope = arccos_relu(sigma, norm)  # the He factor keeps the norms
        sigma, theta = value, value + slope * theta
    return theta


def gcnn_ntk(
    a: np.ndarray, b: np.ndarray, depth: int, group: str = "c4", mixing: bool = True
) -> np.ndarray:
    """The infinite-width NTK of the group-pooled GCNN over ``group``, float64 (n_a, n_b).

    With ``mixing`` False the group convolutions act on each orientation alone, and the lifted
    kernel on aligned positions is the CNN kernel between rotated inputs: it is computed so,
    over all |G|^2 orientation pairs, and group pooling averages it. With ``mixing`` True each
    group convolution sums over the whole group (the regular-representation group convolution
    of Cohen & Welling, ICML 2016): :func:`_lifted_ntk`.
    """
    if mixing:
        return _lifted_ntk(a, b, depth, group)
    size = len(GROUPS[group])
    lifted = cnn_ntk(_flat(orbit(a, group)), _flat(orbit(b, group)), depth)
    return lifted.reshape(size, len(a), size, len(b)).mean(axis=(0, 2))


def _group_conv(u: np.ndarray, turns: tuple[int, ...], pairs: bool) -> np.ndarray:
    """The NNGP operator of a mixing group convolution on the aligned lifted kernel.

    For ``pairs``, ``u`` has shape (..., |G|, |G|, h, w) and the result is
    out[r, r'] = (1/|G|) sum_s R_s^-1 A[u[r s, r' s]] (A the 3x3 box average, R_s^-1 the
    spatial map turned back by s); otherwise ``u`` is (..., |G|, h, w), one orientation index.
    """
    box = box_average(u)
    out = np.zeros_like(u)
    for shift, quarter in enumerate(turns):
        moved = np.roll(box, -shift, axis=-3 if not pairs else -4)
        if pairs:
            moved = np.roll(moved, -shift, axis=-3)
        out += np.rot90(moved, k=-quarter, axes=(-2, -1))
    return out / len(turns)


def _lifted_block(
    a: np.ndarray, b: np.ndarray, va: list, vb: list, depth: int, turns
) -> np.ndarray:
    """The mixing GCNN's Theta between ``a`` (m, h, w) and ``b`` (k, h, w)."""
    ra = np.stack([rotate(a, k) for k in turns], axis=1)  # (m, |G|, h, w): the lifting
    rb = np.stack([rotate(b, k) for k in turns], axis=1)
    sigma = box_average(ra[:, None, :, None] * rb[None, :, None, :])  # (m, k, |G|, |G|, h, w)
    theta = sigma
    for layer in range(depth):
        norm = np.sqrt(va[layer][:, None, :, None] * vb[layer][None, :, None, :])
        value, slope = arccos_relu(sigma, norm)
        if layer + 1 == depth:  # rotated dense readout, pooled over both orientations
            return (value + slope * theta).mean(axis=(-4, -3, -2, -1))
        sigma = _group_conv(value, turns, pairs=True)
        theta = _group_conv(value + slope * theta, turns, pairs=True)
    raise AssertionError("unreachable")


def _lifted_ntk(a: np.ndarray, b: np.ndarray, depth: int, group: str) -> np.ndarray:
    """The GCNN-NTK with mixing group convolutions, computed on the aligned lifted kernel.

    The lifted kernel K(r, R_r q; r', R_r' q) of orientations r, r' at positions aligned by
    their rotations, shape (n_a, n_b, |G|, |G|, h, w), through the lifting layer (the input
    under each rotation), ReLU, :func:`_group_conv` per layer, and the group-pooled readout.
    Reconstruction (not read in the paper): the recursion follows from the layer definitions.
    """
    turns = GROUPS[group]
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    va, vb = _lifted_variances(a, depth, turns), _lifted_variances(b, depth, turns)
    size = len(turns) ** 2 * a.shape[-1] * a.shape[-2]
    rows = max(1, _CHUNK // (b.shape[0] * size))
    out = np.empty((a.shape[0], b.shape[0]))
    for start in range(0, a.shape[0], rows):
        part = slice(start, start + rows)
        out[part] = _lifted_block(a[part], b, [v[part] for v in va], vb, depth, turns)
    return out


def _lifted_variances(images: np.ndarray, depth: int, turns) -> list[np.ndarray]:
    """Var of every layer's lifted pre-activation, shape (n, |G|, h, w) per layer."""
    lifted = np.stack([rotate(images, k) for k in turns], axis=1)
    out = [box_average(lifted**2)]
    for _ in range(depth - 1):
        out.append(_group_conv(out[-1], turns, pairs=False))
    return out


def _flat(stack: np.ndarray) -> np.ndarray:
    return stack.reshape(-1, *stack.shape[-2:])


def mean_predictions(
    cross: np.ndarray,
    gram: np.ndarray,
    targets: np.ndarray,
    times: Sequence[float],
    lr: float = 0.0,
) -> np.ndarray:
    """The ensemble-mean prediction of an infinitely wide network at each training time.

    Gradient flow on the mean squared error L = (1 / 2n) sum_i ||f(x_i) - y_i||^2 from an output
    that is 0 in expectation: mu_t(x) = Theta(x, X) Theta^-1 (I - exp(-t Theta / n)) Y; with a
    step size ``lr`` > 0, gradient descent after t / lr steps: (I - (I - lr Theta / n)^(t/lr)).

    Parameters
    ----------
    cross : ndarray of float64, shape (m, n)
        Theta(x, X) between the evaluation points and the training points.
    gram : ndarray of float64, shape (n, n)
        Theta(X, X), symmetric positive definite.
    targets : ndarray of float64, shape (n, c)
        Training targets Y.
    times : sequence of float
        Training times t >= 0 (``inf``: the converged kernel regressor).
    lr : float, default=0.0
        0 for gradient flow, else the GD step size (t / lr must be whole numbers).

    Returns
    -------
    ndarray of float64, shape (len(times), m, c)
    """
    n = gram.shape[0]
    eigval, eigvec = np.linalg.eigh(gram)
    if eigval[0] <= 0:
        raise ValueError(
            f"Theta(X, X) is not positive definite (smallest eigenvalue {eigval[0]:.3g})"
        )
    projected = eigvec.T @ targets
    left = cross @ eigvec
    out = []
    for t in times:
        if np.isinf(t):
            decay = np.zeros_like(eigval)
        elif lr > 0:
            decay = (1.0 - lr * eigval / n) ** round(t / lr)
        else:
            decay = np.exp(-t * eigval / n)
        out.append(left @ (((1.0 - decay) / eigval)[:, None] * projected))
    return np.stack(out)
