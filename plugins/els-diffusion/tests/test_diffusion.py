"""The schedule, the network's equivariance, and that training is seeded and learns."""

import numpy as np
import pytest
import torch
from harness_els_diffusion import _diffusion
from sklearn.datasets import load_digits


def test_schedule_runs_from_noise_to_data():
    abar = _diffusion.alpha_bar(_diffusion.time_grid(10))
    assert abar[-1] == 1.0 and abar[0] < 1e-3
    assert (np.diff(abar) > 0).all()


def _shift_gap(net: torch.nn.Module) -> float:
    x = torch.randn(2, 8, 8, generator=torch.Generator().manual_seed(0))
    t = torch.full((2,), 0.5)
    with torch.no_grad():
        moved = net(torch.roll(x, (3, 1), dims=(1, 2)), t)
        return float((moved - torch.roll(net(x, t), (3, 1), dims=(1, 2))).abs().max())


def test_network_is_translation_equivariant_and_zero_padding_is_not():
    torch.manual_seed(0)
    net = _diffusion.ConvDenoiser(width=8, layers=2)
    assert _shift_gap(net) < 1e-5
    for module in net.modules():  # the wrong variant: zero padding breaks equivariance
        if isinstance(module, torch.nn.Conv2d):
            module.padding_mode = "zeros"
    assert _shift_gap(net) > 1e-3


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return (load_digits().images[:64] / 8.0 - 1.0).astype(np.float32)


def test_training_is_seeded_and_lowers_the_loss(images, monkeypatch, tmp_path):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    args = (images, 8, 1, 40, 32, 3e-3)
    first = _diffusion.train_denoiser(*args, seed=5)
    again = _diffusion.train_denoiser(*args, seed=5)
    other = _diffusion.train_denoiser(*args, seed=6)
    assert all(np.array_equal(first[k], again[k]) for k in first)
    assert not all(np.array_equal(first[k], other[k]) for k in first)
    assert any(tmp_path.rglob("*.pkl"))  # the weights were cached on disk

    def loss(state: dict) -> float:
        net = _diffusion.load_network(state, 8, 1)
        gen = torch.Generator().manual_seed(0)
        x0 = torch.tensor(images)
        t = torch.rand(len(x0), generator=gen) * 0.8 + 0.1
        a = torch.cos(t / 1.008 * np.pi / 2) ** 2
        eps = torch.randn(x0.shape, generator=gen)
        xt = a.sqrt()[:, None, None] * x0 + (1 - a).sqrt()[:, None, None] * eps
        with torch.no_grad():
            return float(((net(xt, t) - eps) ** 2).mean())

    untrained = _diffusion.train_denoiser(*args[:3], 0, *args[4:], seed=5)
    assert loss(first) < 0.8 * loss(untrained)
