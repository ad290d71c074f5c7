"""The gradient-descent loop: its hand-written gradient is autograd's, and the patch
coefficients decompose the filters exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from harness_label_noise.api import record_steps, signal_noise_coefficients, train


def _cnn_loss(w: torch.Tensor, x: torch.Tensor, y: torch.Tensor, m: int) -> torch.Tensor:
    z = torch.relu(torch.einsum("npd,jrd->njrp", x, w)).sum(-1).mean(-1)  # (n, 2)
    f = z[:, 0] - z[:, 1]
    return torch.nn.functional.softplus(-y * f).mean()


def test_one_step_equals_autograd_gradient_step(small):
    m, eta = 3, 0.5
    history = train(small.x_train, small.y_train, np.ones(40), small.x_val, small.x_test,
                    model="cnn", width=m, init_scale=0.1, learning_rate=eta, steps=1,
                    record=np.array([0, 1]), seed=0)  # fmt: skip
    w = torch.tensor(history.initial, requires_grad=True)
    x = torch.tensor(small.x_train)
    loss = _cnn_loss(w, x, torch.tensor(small.y_train), m)
    loss.backward()
    expected = (w - eta * w.grad).detach().numpy()
    assert history.final == pytest.approx(expected, abs=1e-5)


def test_coefficients_reconstruct_the_filters_and_give_gamma_and_rho(small):
    steps = 40
    history = train(small.x_train, small.y_train, np.ones(40), small.x_val, small.x_test,
                    model="cnn", width=2, init_scale=0.01, learning_rate=0.2, steps=steps,
                    record=record_steps(steps, 6), seed=1)  # fmt: skip
    c = history.coefficients[-1]  # (2, m, n, p)
    moved = np.einsum("jrip,ipd->jrd", c, small.x_train)
    assert history.final - history.initial == pytest.approx(moved, abs=1e-4)
    gamma, rho = signal_noise_coefficients(small, history.coefficients)
    xi = small.x_train[:, 1]
    sign = np.array([1.0, -1.0])[:, None, None]
    # the paper's decomposition: j gamma mu / ||mu||^2 + sum_i rho_i xi_i / ||xi_i||^2
    rebuilt = sign * gamma[-1][..., None] * small.mu / (small.mu @ small.mu) + np.einsum(
        "jri,id->jrd", rho[-1] / np.sum(xi**2, axis=1), xi
    )
    assert rebuilt == pytest.approx(moved, abs=1e-4)


def test_linear_coefficients_reconstruct_its_weights_as_one_filter_per_sign(small):
    history = train(small.x_train, small.y_train, np.ones(40), small.x_val, small.x_test,
                    model="linear", width=1, init_scale=0.01, learning_rate=0.2, steps=20,
                    record=record_steps(20, 5), seed=1)  # fmt: skip
    c = history.coefficients[-1]  # (2, 1, n, p)
    assert c[1] == pytest.approx(-c[0])
    moved = np.einsum("ip,ipd->pd", c[0, 0], small.x_train).ravel()
    assert history.final - history.initial == pytest.approx(moved, abs=1e-4)


def test_sample_weights_of_zero_leave_samples_out_of_the_loss(small):
    weights = np.ones(40)
    weights[:10] = 0
    history = train(small.x_train, small.y_train, weights, small.x_val, small.x_test,
                    model="cnn", width=2, init_scale=0.01, learning_rate=0.2, steps=5,
                    record=record_steps(5, 3), seed=1)  # fmt: skip
    assert np.all(history.coefficients[-1][:, :, :10] == 0)


def test_record_steps_are_increasing_from_zero_to_the_horizon():
    steps = record_steps(600, 60)
    assert steps[0] == 0 and steps[-1] == 600 and np.all(np.diff(steps) > 0)
