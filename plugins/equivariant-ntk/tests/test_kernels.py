"""The kernels: the analytic CNN-NTK against a wide network's empirical NTK, the GCNN-NTK's
invariance, the augmentation identity, and the mean-prediction formula; each check shown
failing on a deliberately wrong variant (a wrong arc-cosine coefficient, a group element
missing)."""

import numpy as np
import pytest
import torch
from harness_equivariant_ntk import _ensemble, _kernels
from harness_equivariant_ntk.datasets import RotatedDigits
from harness_equivariant_ntk.methods import augmented


@pytest.fixture(scope="module")
def digits():
    return RotatedDigits().load(RotatedDigits.Params(n_train=8, n_test=6, n_off=3), seed=7)


def _empirical_ntk(images: np.ndarray, members: int = 64, width: int = 256) -> np.ndarray:
    """The mean over ``members`` one-layer CNNs of <grad f(x), grad f(x')> for output 0."""
    net = _ensemble.CnnEnsemble(members, width, 1, seed=3)
    grads = []
    for image in images:
        params = [w.requires_grad_(True) for w in net.parameters()]
        out = net(torch.as_tensor(_ensemble.patches(image[None]), dtype=torch.float32))
        g_filters, g_readout = torch.autograd.grad(out.sum(), params)
        grads.append((g_filters.reshape(9, members, width), g_readout))
    kernel = np.empty((len(images), len(images)))
    for i, (fa, ra) in enumerate(grads):
        for j, (fb, rb) in enumerate(grads):
            per_member = (fa * fb).sum(dim=(0, 2)) + (ra * rb).sum(dim=(1, 2, 3))
            kernel[i, j] = per_member.double().mean().item()
    return kernel


_ARCCOS = _kernels.arccos_relu


def _wrong_arccos(cross, norm):
    """The arc-cosine kernels with the derivative's 1/pi halved (the He factor dropped)."""
    value, slope = _ARCCOS(cross, norm)
    return value, slope / 2


def test_cnn_ntk_is_the_wide_network_empirical_ntk(digits, monkeypatch):
    images = digits.x_train[:3]
    empirical = _empirical_ntk(images)
    analytic = _kernels.cnn_ntk(images, images, depth=1)
    assert empirical == pytest.approx(analytic, rel=0.04)
    monkeypatch.setattr(_kernels, "arccos_relu", _wrong_arccos)
    wrong = _kernels.cnn_ntk(images, images, depth=1)
    assert empirical != pytest.approx(wrong, rel=0.04)


def test_cnn_ntk_is_invariant_under_joint_quarter_turns(digits):
    a, b = digits.x_train[:4], digits.points[:5]
    base = _kernels.cnn_ntk(a, b, depth=2)
    for k in (1, 2, 3):
        turned = _kernels.cnn_ntk(_kernels.rotate(a, k), _kernels.rotate(b, k), depth=2)
        assert turned == pytest.approx(base, rel=1e-12)


@pytest.mark.parametrize("mixing", [True, False])
def test_gcnn_ntk_is_invariant_and_fails_with_a_group_element_missing(digits, monkeypatch, mixing):
    a, b = digits.x_train[:4], digits.points[:5]
    base = _kernels.gcnn_ntk(a, b, 2, mixing=mixing)
    turned = _kernels.gcnn_ntk(a, _kernels.rotate(b, 1), 2, mixing=mixing)
    assert turned == pytest.approx(base, rel=1e-12)
    monkeypatch.setitem(_kernels.GROUPS, "c4", (0, 1, 2))  # one quarter turn left out
    missing = _kernels.gcnn_ntk(a, _kernels.rotate(b, 1), 2, mixing=mixing)
    assert missing != pytest.approx(_kernels.gcnn_ntk(a, b, 2, mixing=mixing), rel=1e-3)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_mixing_group_convolutions_give_the_orientation_wise_kernel(digits, depth):
    a, b = digits.x_train[:5], digits.points[:6]
    mixing = _kernels.gcnn_ntk(a, b, depth, mixing=True)
    assert mixing == pytest.approx(_kernels.gcnn_ntk(a, b, depth, mixing=False), rel=1e-12)


def test_group_convolution_operator_sums_over_the_group():
    u = np.zeros((4, 4, 8, 8))
    u[1, 2, 0, 0] = 9.0  # one entry at orientations (1, 2), corner pixel
    out = _kernels._group_conv(u, (0, 1, 2, 3), pairs=True)
    # (r, r') = (0, 1) reads (1, 2) with s = 1: the box average, turned back a quarter turn
    expected = np.rot90(_kernels.box_average(u[1, 2][None])[0], k=-1) / 4
    assert out[0, 1] == pytest.approx(expected)
    assert out[1, 2] == pytest.approx(_kernels.box_average(u[1, 2][None])[0] / 4)


def _identity_gap(data, group: str) -> float:
    images, targets = augmented(data, group)
    times = [1.0, 100.0, np.inf]
    cnn = _kernels.mean_predictions(
        _kernels.cnn_ntk(data.points, images, 2),
        _kernels.cnn_ntk(images, images, 2),
        targets,
        times,
    )
    gram = _kernels.gcnn_ntk(data.x_train, data.x_train, 2)
    gcnn = _kernels.mean_predictions(
        _kernels.gcnn_ntk(data.points, data.x_train, 2), gram, data.targets, times
    )
    return float(np.abs(cnn - gcnn).max() / np.abs(gcnn).max())


def test_c4_augmentation_gives_the_gcnn_mean_prediction_and_c2_does_not(digits, monkeypatch):
    assert _identity_gap(digits, "c4") < 1e-8
    assert _identity_gap(digits, "c2") > 1e-2
    monkeypatch.setitem(_kernels.GROUPS, "c4", (0, 1, 2))  # augmentation missing an element
    monkeypatch.setitem(_kernels.GROUPS, "full", (0, 1, 2, 3))
    images, targets = augmented(digits, "c4")
    gcnn_full = _kernels.gcnn_ntk(digits.x_train, digits.x_train, 2, "full")
    cross_full = _kernels.gcnn_ntk(digits.points, digits.x_train, 2, "full")
    full = _kernels.mean_predictions(cross_full, gcnn_full, digits.targets, [np.inf])
    partial = _kernels.mean_predictions(
        _kernels.cnn_ntk(digits.points, images, 2),
        _kernels.cnn_ntk(images, images, 2),
        targets,
        [np.inf],
    )
    assert np.abs(partial - full).max() / np.abs(full).max() > 1e-2


def test_mean_predictions_start_at_zero_and_end_at_kernel_regression():
    rng = np.random.default_rng(0)
    features = rng.standard_normal((6, 4))
    gram, cross = features @ features.T + np.eye(6), rng.standard_normal((3, 6))
    targets = rng.standard_normal((6, 2))
    start, end = _kernels.mean_predictions(cross, gram, targets, [0.0, np.inf])
    assert start == pytest.approx(np.zeros((3, 2)))
    assert end == pytest.approx(cross @ np.linalg.solve(gram, targets), rel=1e-10)
    flow = _kernels.mean_predictions(cross, gram, targets, [3.0])
    small_steps = _kernels.mean_predictions(cross, gram, targets, [3.0], lr=1e-4)
    assert small_steps == pytest.approx(flow, rel=1e-3)


def test_box_average_is_the_zero_padded_3x3_mean():
    u = np.ones((1, 8, 8))
    out = _kernels.box_average(u)
    assert out[0, 0, 0] == pytest.approx(4 / 9) and out[0, 3, 3] == pytest.approx(1.0)
