"""The analytic score machines: ideal (IS), local (LS), equivariant local (ELS), and two
non-local rivals (whole-image Gaussian, nearest neighbour); their shared DDIM sampler and the
calibration of the patch size per step.

Each machine is a denoiser ``x0_hat(x, abar)``: the posterior mean of the clean image under
a prior that is the training set seen through the machine's constraints. For a pixel ``p``
of the state ``x`` (H x W, circular boundary) and a patch size ``k``, LS and ELS weigh
candidate training patches ``c`` by ``softmax_c(-||x_P(p) - sqrt(abar) c||^2 / (2 (1 - abar)))``
and return the weighted mean of the candidates' centre pixels. LS's candidates are the
k x k patches of every training image at ``p`` itself (locality); ELS's are the patches of
every training image at every position (locality and translation equivariance). IS is the
same posterior with the whole image as the patch (the exact score of the noised empirical
distribution).

Source: Kamb & Ganguli, ICML 2025 (arXiv 2412.20292), abstract: "local score (LS) and
equivariant local score (ELS) machines ... after calibrating a single time-dependent
hyperparameter". Reconstruction (not read in the paper): the formulas above and the
calibration rule (per step, the patch size whose score has the highest cosine similarity to
the trained network's score along the network's own trajectories, the median over draws)
follow the public description of the authors' code in the project's science notes on the
paper (section 1), not the paper's equations.

All patch distances come from one vectorised pass: for every training image ``j`` and
circular shift ``d`` the squared residual image ``(x - sqrt(abar) roll(y_j, d))^2`` is
box-filtered once per patch size (a k x k sum at every pixel, one matrix product), which
gives the distance of every query patch to every candidate patch at once, in
O(n_train * (H*W)^3) per state and patch size, without an explicit patch matrix.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch.nn import functional

from harness_els_diffusion._diffusion import alpha_bar, ddim_step, time_grid

__all__ = [
    "Denoiser",
    "box_matrix",
    "calibrate_patches",
    "gaussian_denoiser",
    "ideal_denoiser",
    "nearest_denoiser",
    "patch_denoiser",
    "run_sampler",
    "shifted_stack",
]

#: x0_hat(x (n, H, W), abar, step) -> (n, H, W)
Denoiser = Callable[[torch.Tensor, float, int], torch.Tensor]

_CHUNK = 8_000_000  # floats of the (batch, H*W, candidates) residual tensor per pass


def shifted_stack(images: np.ndarray, equivariant: bool) -> torch.Tensor:
    """Candidate pixels for every pixel: ``out[q, (j, d)] = images[j][q + d]`` (circular).

    Parameters
    ----------
    images : ndarray of float, shape (n_train, H, W)
    equivariant : bool
        Every circular shift ``d`` (ELS: H*W candidates per image) or only ``d = 0`` (LS).

    Returns
    -------
    Tensor of float32, shape (H*W, n_train * (H*W or 1))
        Row ``q`` holds, for every candidate, the candidate's pixel at offset ``q``.
    """
    y = torch.tensor(np.asarray(images, dtype=np.float32))
    n, h, w = y.shape
    if not equivariant:
        return y.reshape(n, h * w).T.contiguous()
    shifts = [torch.roll(y, (-dy, -dx), dims=(1, 2)) for dy in range(h) for dx in range(w)]
    return torch.stack(shifts, dim=1).reshape(n * h * w, h * w).T.contiguous()


def box_matrix(h: int, w: int, k: int) -> torch.Tensor:
    """The circular k x k box filter on an H x W image as a (H*W, H*W) 0/1 matrix;
    ``k >= min(H, W)``: all ones (the patch is the whole image)."""
    if k >= min(h, w):
        return torch.ones(h * w, h * w)
    r = k // 2
    near_y = (np.subtract.outer(np.arange(h), np.arange(h)) + r) % h <= 2 * r
    near_x = (np.subtract.outer(np.arange(w), np.arange(w)) + r) % w <= 2 * r
    return torch.as_tensor(np.kron(near_y, near_x), dtype=torch.float32)


def _posterior_mean(
    x: torch.Tensor, cand: torch.Tensor, a: float, ks: tuple[int, ...]
) -> list[torch.Tensor]:
    """For each patch size in ``ks``: the patch posterior mean at every pixel, (n, H, W).

    ``cand`` is :func:`shifted_stack`'s (H*W, n_candidates); the softmax runs over the
    candidates of each pixel. The squared residuals (n, H*W, n_candidates) are computed
    once and box-filtered by one matrix product per patch size.
    """
    n, h, w = x.shape
    per = max(1, _CHUNK // cand.numel())
    boxes = [box_matrix(h, w, k) for k in ks]
    out: list[list[torch.Tensor]] = [[] for _ in ks]
    for start in range(0, n, per):
        xb = x[start : start + per].reshape(-1, h * w, 1)
        resid = (xb - math.sqrt(a) * cand) ** 2  # (b, H*W, n_candidates)
        for i, box in enumerate(boxes):
            weights = torch.softmax(torch.matmul(box, resid) / (-2.0 * (1.0 - a)), dim=-1)
            out[i].append((weights * cand).sum(dim=-1).reshape(-1, h, w))
    return [torch.cat(parts) for parts in out]


def patch_denoiser(images: np.ndarray, patches: list[int], equivariant: bool) -> Denoiser:
    """The LS (``equivariant=False``) or ELS (``equivariant=True``) machine.

    Parameters
    ----------
    images : ndarray of float, shape (n_train, H, W)
        The training set, in [-1, 1].
    patches : list of int, one per sampler step
        Odd patch size at each step (``>= min(H, W)``: the whole image).
    equivariant : bool
        Candidates at every position (ELS) or only at the query's own position (LS).
    """
    cand = shifted_stack(images, equivariant)

    def denoise(x: torch.Tensor, a: float, step: int) -> torch.Tensor:
        return _posterior_mean(x, cand, a, (patches[step],))[0]

    return denoise


def ideal_denoiser(images: np.ndarray) -> Denoiser:
    """The ideal score machine: the exact posterior mean under the empirical training
    distribution, ``sum_j softmax_j(-||x - sqrt(abar) y_j||^2 / (2 (1 - abar))) y_j``."""
    y = torch.tensor(np.asarray(images, dtype=np.float32)).flatten(1)

    def denoise(x: torch.Tensor, a: float, step: int) -> torch.Tensor:
        d2 = torch.cdist(x.flatten(1), math.sqrt(a) * y) ** 2
        return (torch.softmax(-d2 / (2 * (1 - a)), dim=1) @ y).reshape(x.shape)

    return denoise


def nearest_denoiser(images: np.ndarray) -> Denoiser:
    """Rival: the training image nearest to ``x / sqrt(abar)`` (the ideal machine at zero
    temperature), non-local."""
    y = torch.tensor(np.asarray(images, dtype=np.float32)).flatten(1)

    def denoise(x: torch.Tensor, a: float, step: int) -> torch.Tensor:
        j = torch.cdist(x.flatten(1), math.sqrt(a) * y).argmin(dim=1)
        return y[j].reshape(x.shape)

    return denoise


def gaussian_denoiser(images: np.ndarray, ridge: float = 1e-3) -> Denoiser:
    """Rival: the posterior mean under a whole-image Gaussian fitted to the training set
    (the Wiener filter), ``mu + sqrt(a) S (a S + (1 - a) I)^-1 (x - sqrt(a) mu)``.

    ``ridge`` (in squared pixel units) is added to the covariance's eigenvalues.
    """
    y = np.asarray(images, dtype=np.float64).reshape(len(images), -1)
    mu = y.mean(axis=0)
    lam, u = np.linalg.eigh(np.cov(y, rowvar=False) + ridge * np.eye(y.shape[1]))
    mu_t = torch.as_tensor(mu, dtype=torch.float32)
    u_t = torch.as_tensor(u, dtype=torch.float32)
    lam_t = torch.as_tensor(lam, dtype=torch.float32)

    def denoise(x: torch.Tensor, a: float, step: int) -> torch.Tensor:
        gain = math.sqrt(a) * lam_t / (a * lam_t + (1 - a))
        z = (x.flatten(1) - math.sqrt(a) * mu_t) @ u_t
        return (mu_t + (z * gain) @ u_t.T).reshape(x.shape)

    return denoise


@torch.no_grad()
def run_sampler(denoise: Denoiser, noise: np.ndarray, steps: int) -> np.ndarray:
    """The deterministic DDIM sampler of the trained network, driven by ``denoise``.

    Parameters
    ----------
    denoise : Denoiser
    noise : ndarray of float, shape (n, H, W)
        Initial states at t = 1 (the same draws the network started from).
    steps : int

    Returns
    -------
    ndarray of float32, shape (n, H, W)
        Final states at t = 0.
    """
    abar = alpha_bar(time_grid(steps))
    x = torch.tensor(np.asarray(noise, dtype=np.float32))
    for i in range(steps):
        x = ddim_step(x, denoise(x, float(abar[i]), i), float(abar[i]), float(abar[i + 1]))
    return x.numpy().copy()


@torch.no_grad()
def calibrate_patches(
    images: np.ndarray,
    states: np.ndarray,
    x0_net: np.ndarray,
    candidates: tuple[int, ...],
    equivariant: bool,
) -> list[int]:
    """The one calibrated time-dependent hyperparameter: the patch size at each step.

    At each step, for each calibration draw, the candidate whose score
    ``(sqrt(abar) x0_hat - x) / (1 - abar)`` at the network's own state has the highest
    cosine similarity to the network's score there; the step's patch size is the median
    over draws (a candidate when the number of draws is odd).

    Parameters
    ----------
    images : ndarray of float, shape (n_train, H, W)
    states : ndarray of float, shape (steps, n_calib, H, W)
        The network's states at the start of each step (from calibration noise only).
    x0_net : ndarray of float, shape (steps, n_calib, H, W)
        The network's clean-image estimates at those states.
    candidates : tuple of int
        Odd patch sizes to choose from, increasing.
    equivariant : bool
        Calibrate ELS (True) or LS (False).

    Returns
    -------
    list of int, length steps
    """
    cand = shifted_stack(images, equivariant)
    abar = alpha_bar(time_grid(len(states)))
    chosen = []
    for i, (x_np, target_np) in enumerate(zip(states, x0_net, strict=True)):
        a = float(abar[i])
        x = torch.tensor(x_np)
        target = (math.sqrt(a) * torch.tensor(target_np) - x).flatten(1)
        means = _posterior_mean(x, cand, a, candidates)
        cosines = torch.stack(
            [
                functional.cosine_similarity((math.sqrt(a) * m - x).flatten(1), target, dim=1)
                for m in means
            ]
        )  # (n_candidates, n_calib)
        best = np.asarray(candidates)[cosines.argmax(dim=0).numpy()]
        chosen.append(int(np.sort(best)[(len(best) - 1) // 2]))
    return chosen
