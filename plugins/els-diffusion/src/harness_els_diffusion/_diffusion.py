"""The diffusion process, the small convolution-only denoiser, its training and its sampler.

Forward process ``x_t = sqrt(abar(t)) x_0 + sqrt(1 - abar(t)) eps`` with the cosine schedule
``abar(t) = cos^2((t / 1.008) pi / 2)``, t in [0, 1]; the network predicts ``eps``; samples
come from the deterministic DDIM update on a uniform grid of ``steps`` times from 1 to 0.

Source: the setting of Kamb & Ganguli (ICML 2025, arXiv 2412.20292) as the project's
science notes on the paper summarise it (section 1). Reconstruction (not read in the paper):
the paper's body was not available; the schedule, the eps-prediction loss and the DDIM
sampler follow the public description of the authors' setting, and the network's size and
training budget are this plugin's own (a CPU-sized toy, declared in the dataset's params).

Trained weights are cached on disk by ``joblib.Memory`` under
``$HARNESS_CACHE_DIR/els-diffusion/<code digest>`` (default ``~/.cache/harness``), keyed by
every training argument and the seed, never in the repository.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

__all__ = [
    "ConvDenoiser",
    "alpha_bar",
    "ddim_step",
    "load_network",
    "sample_network",
    "time_grid",
    "train_denoiser",
]


def alpha_bar(t: np.ndarray) -> np.ndarray:
    """Signal fraction ``abar(t) = cos^2((t / 1.008) pi / 2)`` of the cosine schedule.

    Parameters
    ----------
    t : ndarray of float, any shape
        Diffusion times in [0, 1].

    Returns
    -------
    ndarray of float, the shape of ``t``
        In (0, 1]; ``abar(0) = 1`` (clean), ``abar(1)`` about 1.5e-4 (almost pure noise).
    """
    return np.cos(np.asarray(t, dtype=float) / 1.008 * np.pi / 2) ** 2


def time_grid(steps: int) -> np.ndarray:
    """The sampler's ``steps + 1`` times, from 1 down to 0, shape (steps + 1,)."""
    return np.linspace(1.0, 0.0, steps + 1)


def ddim_step(x: torch.Tensor, x0: torch.Tensor, a_now: float, a_next: float) -> torch.Tensor:
    """One deterministic DDIM update from signal fraction ``a_now`` to ``a_next``.

    Parameters
    ----------
    x : Tensor, shape (n, H, W)
        The current state.
    x0 : Tensor, shape (n, H, W)
        The denoiser's estimate of the clean image at ``x``.
    a_now, a_next : float
        ``abar`` at the current and the next time (``a_next`` = 1 returns ``x0``).
    """
    eps = (x - math.sqrt(a_now) * x0) / math.sqrt(1.0 - a_now)
    return math.sqrt(a_next) * x0 + math.sqrt(1.0 - a_next) * eps


class ConvDenoiser(nn.Module):
    """A convolution-only eps-predictor: 3x3 circular convolutions, ReLU, a time bias.

    Translation-equivariant by construction (circular padding, no pooling, no attention,
    the time enters as a per-channel bias), with a receptive field of ``2 * layers + 3``
    pixels across.

    Parameters
    ----------
    width : int
        Channels of every hidden layer.
    layers : int
        Hidden 3x3 layers between the input and the output convolutions.
    """

    def __init__(self, width: int, layers: int) -> None:
        super().__init__()
        conv = functools.partial(nn.Conv2d, kernel_size=3, padding=1, padding_mode="circular")
        self.inp = conv(1, width)
        self.time = nn.Sequential(nn.Linear(16, width), nn.ReLU(), nn.Linear(width, width))
        self.hidden = nn.ModuleList(conv(width, width) for _ in range(layers))
        self.out = conv(width, 1)
        self.register_buffer("freqs", torch.exp(torch.linspace(0.0, math.log(100.0), 8)))

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """Predicted noise, shape (n, H, W), for states ``x`` (n, H, W) at times ``t`` (n,)."""
        angles = t[:, None] * self.freqs[None, :]
        emb = self.time(torch.cat([angles.sin(), angles.cos()], dim=1))
        h = torch.relu(self.inp(x[:, None]) + emb[:, :, None, None])
        for layer in self.hidden:
            h = torch.relu(layer(h)) + h
        return self.out(h)[:, 0]


def train_denoiser(
    images: np.ndarray, width: int, layers: int, steps: int, batch: int, lr: float, seed: int
) -> dict[str, np.ndarray]:
    """Train a :class:`ConvDenoiser` by denoising score matching; the weights, cached on disk.

    Parameters
    ----------
    images : ndarray of float32, shape (n_train, H, W)
        Training images in [-1, 1].
    width, layers : int
        The network's size (:class:`ConvDenoiser`).
    steps, batch : int
        Adam steps and images per step (the training budget).
    lr : float
        Adam's learning rate, decayed by a cosine to 0 over ``steps``.
    seed : int
        Seeds the initialisation, the batches, the times and the noise.

    Returns
    -------
    dict of str to ndarray
        The state dict as numpy arrays (load with :func:`load_network`).
    """
    train = _cached_train(_cache_dir() / _code_digest()) if _cache_enabled() else _train
    return train(
        np.ascontiguousarray(images, dtype=np.float32), width, layers, steps, batch, lr, seed
    )


def load_network(state: dict[str, np.ndarray], width: int, layers: int) -> ConvDenoiser:
    """A :class:`ConvDenoiser` holding ``state`` (from :func:`train_denoiser`), in eval mode."""
    net = ConvDenoiser(width, layers)
    net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()})
    return net.eval()


def _train(
    images: np.ndarray, width: int, layers: int, steps: int, batch: int, lr: float, seed: int
) -> dict[str, np.ndarray]:
    gen = torch.Generator().manual_seed(seed % 2**63)
    torch.manual_seed(seed % 2**63)
    net = ConvDenoiser(width, layers)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    data = torch.from_numpy(images)
    for _ in range(steps):
        x0 = data[torch.randint(len(data), (batch,), generator=gen)]
        t = torch.rand(batch, generator=gen)
        a = torch.cos(t / 1.008 * math.pi / 2) ** 2
        eps = torch.randn(x0.shape, generator=gen)
        xt = a.sqrt()[:, None, None] * x0 + (1 - a).sqrt()[:, None, None] * eps
        loss = ((net(xt, t) - eps) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}


@torch.no_grad()
def sample_network(
    net: ConvDenoiser, noise: np.ndarray, steps: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run the network's DDIM sampler from ``noise``; record its states and predictions.

    Parameters
    ----------
    net : ConvDenoiser
    noise : ndarray of float32, shape (n, H, W)
        The initial states at t = 1.
    steps : int
        DDIM steps.

    Returns
    -------
    samples : ndarray of float32, shape (n, H, W)
        The final states (t = 0).
    states : ndarray of float32, shape (steps, n, H, W)
        The state at the start of each step.
    x0_hat : ndarray of float32, shape (steps, n, H, W)
        The network's clean-image estimate at each of those states, clipped to the data
        range [-1, 1] (at t = 1 the unclipped estimate divides the network's error by
        sqrt(abar(1)) = 0.012).
    """
    times = time_grid(steps)
    abar = alpha_bar(times)
    x = torch.from_numpy(np.asarray(noise, dtype=np.float32))
    states, estimates = [], []
    for i in range(steps):
        t = torch.full((len(x),), float(times[i]))
        eps = net(x, t)
        x0 = ((x - math.sqrt(1 - abar[i]) * eps) / math.sqrt(abar[i])).clamp(-1.0, 1.0)
        states.append(x.numpy().copy())
        estimates.append(x0.numpy().copy())
        x = ddim_step(x, x0, float(abar[i]), float(abar[i + 1]))
    return x.numpy().copy(), np.stack(states), np.stack(estimates)


def _cache_enabled() -> bool:
    return os.environ.get("HARNESS_ELS_DIFFUSION_NO_CACHE", "") == ""


def _cache_dir() -> Path:
    root = os.environ.get("HARNESS_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "harness"
    return base / "els-diffusion"


@functools.cache
def _code_digest() -> str:
    """First 12 hex digits of this module's SHA-256: an edit retrains instead of reading."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


@functools.lru_cache(maxsize=4)
def _cached_train(location: Path) -> Callable[..., dict[str, np.ndarray]]:
    import joblib

    return joblib.Memory(location, verbose=0).cache(_train)
