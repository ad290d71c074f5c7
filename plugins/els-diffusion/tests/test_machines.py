"""The machines: their identities, equivariance, memorisation and the calibration rule, each
shown to fail on a deliberately wrong variant."""

import numpy as np
import pytest
import torch
from harness_els_diffusion import _machines
from harness_els_diffusion._diffusion import alpha_bar, time_grid
from harness_els_diffusion.metrics import rms_to_nearest
from sklearn.datasets import load_digits


@pytest.fixture(scope="module")
def digits() -> np.ndarray:
    return (load_digits().images[:40] / 8.0 - 1.0).astype(np.float32)


def test_box_matrix_counts_a_k_by_k_neighbourhood():
    assert torch.equal(_machines.box_matrix(8, 8, 1), torch.eye(64))
    assert (_machines.box_matrix(8, 8, 3).sum(dim=1) == 9).all()
    assert (_machines.box_matrix(8, 8, 5).sum(dim=1) == 25).all()
    assert (_machines.box_matrix(8, 8, 8) == 1).all()  # the whole image


def test_box_matrix_wraps_around_the_border():
    box = _machines.box_matrix(8, 8, 3).reshape(8, 8, 8, 8)
    assert box[0, 0, 7, 7] == 1 and box[0, 0, 1, 1] == 1 and box[0, 0, 2, 2] == 0


def test_ls_with_the_whole_image_as_patch_is_the_ideal_machine(digits):
    x = torch.tensor(np.random.default_rng(0).standard_normal((3, 8, 8)), dtype=torch.float32)
    ls = _machines.patch_denoiser(digits, [8], equivariant=False)(x, 0.3, 0)
    ideal = _machines.ideal_denoiser(digits)(x, 0.3, 0)
    assert torch.allclose(ls, ideal, atol=1e-5)
    local = _machines.patch_denoiser(digits, [3], equivariant=False)(x, 0.3, 0)
    assert not torch.allclose(local, ideal, atol=1e-2)  # a real patch is not the ideal


def _equivariance_gap(denoise) -> float:
    x = torch.tensor(np.random.default_rng(1).standard_normal((2, 8, 8)), dtype=torch.float32)
    shift = (2, 3)
    moved = denoise(torch.roll(x, shift, dims=(1, 2)), 0.4, 0)
    return float((moved - torch.roll(denoise(x, 0.4, 0), shift, dims=(1, 2))).abs().max())


def test_els_is_translation_equivariant_and_ls_is_not(digits):
    assert _equivariance_gap(_machines.patch_denoiser(digits, [3], equivariant=True)) < 1e-5
    # the wrong variant, ELS without equivariance (LS), fails the same check
    assert _equivariance_gap(_machines.patch_denoiser(digits, [3], equivariant=False)) > 0.1


def test_every_machine_returns_a_clean_training_image_unchanged(digits):
    x = torch.tensor(digits[:2]) * np.sqrt(1 - 1e-4)
    for denoise in (
        _machines.ideal_denoiser(digits),
        _machines.nearest_denoiser(digits),
        _machines.patch_denoiser(digits, [3], equivariant=True),
        _machines.patch_denoiser(digits, [5], equivariant=False),
    ):
        assert torch.allclose(denoise(x, 1 - 1e-4, 0), torch.tensor(digits[:2]), atol=1e-3)


def test_ideal_machine_samples_copy_training_images_and_els_does_not(digits):
    noise = np.random.default_rng(2).standard_normal((6, 8, 8)).astype(np.float32)
    ideal = _machines.run_sampler(_machines.ideal_denoiser(digits), noise, 8)
    assert rms_to_nearest(ideal, digits)[0].max() < 1e-3
    els = _machines.run_sampler(_machines.patch_denoiser(digits, [3] * 8, True), noise, 8)
    assert np.median(rms_to_nearest(els, digits)[0]) > 0.1


def test_gaussian_denoiser_is_the_identity_without_noise(digits):
    x = torch.tensor(np.random.default_rng(3).uniform(-1, 1, (2, 8, 8)), dtype=torch.float32)
    out = _machines.gaussian_denoiser(digits)(x, 1 - 1e-7, 0)
    assert torch.allclose(out, x, atol=1e-3)


@pytest.mark.parametrize("truth", [3, 8])
def test_calibration_recovers_the_patch_size_that_made_the_target(digits, truth):
    rng = np.random.default_rng(4)
    steps = 4
    abar = alpha_bar(time_grid(steps))
    states = rng.standard_normal((steps, 3, 8, 8)).astype(np.float32)
    states *= np.sqrt(1 - abar[:steps])[:, None, None, None]
    els = _machines.patch_denoiser(digits, [truth] * steps, equivariant=True)
    target = np.stack(
        [
            els(torch.tensor(s), float(a), i).numpy()
            for i, (s, a) in enumerate(zip(states, abar[:steps], strict=True))
        ]
    )
    chosen = _machines.calibrate_patches(digits, states, target, (1, 3, 5, 7, 8), True)
    assert chosen[1:] == [truth] * (steps - 1)  # at t = 1 every patch gives the mean image
    # calibrated as LS (the wrong variant) against an ELS target, it cannot find it
    ls = _machines.calibrate_patches(digits, states, target, (1, 3, 5, 7, 8), False)
    assert ls[1:] != [truth] * (steps - 1) or truth == 8
