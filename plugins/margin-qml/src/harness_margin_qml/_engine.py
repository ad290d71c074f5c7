"""Training of the ``margin-qml`` methods on the torch simulator (imported on first run).

Source: Hur & Park, ICML 2025, official ``QPR/models/QPR.py`` and ``NQE/`` (papers file §3, §6).
Kept apart from :mod:`harness_margin_qml.methods` so that registering the plugin does not
import torch.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch.nn import functional

from harness_margin_qml import circuits, sim
from harness_margin_qml.data import QMLData, QNNOutput
from harness_margin_qml.training import fit

if TYPE_CHECKING:
    from harness_margin_qml.methods import _TrainParams

__all__ = ["mlp", "pretrain_nqe", "train", "train_iqp"]

_REAL = {"complex64": torch.float32, "complex128": torch.float64}


def train(ansatz, embed, data: QMLData, params: _TrainParams, seed: int, extra=()) -> QNNOutput:
    """Train ``ansatz`` on states ``embed(x)`` from U[0, 2π) angles; see ``training.fit``."""
    real, ctype = _REAL[params.precision], sim.CDTYPES[params.precision]
    gen = torch.Generator().manual_seed(seed)
    theta0 = torch.rand(ansatz.n_params, generator=gen, dtype=real) * (2 * math.pi)
    theta = theta0.clone().requires_grad_()
    wires = circuits.readout_wires(data.n_classes)
    psi_train = embed(data.x_train, ctype)
    y = torch.as_tensor(data.y_train)
    loss = fit(
        lambda idx: sim.probs(ansatz(psi_train[idx], theta), wires),
        [theta],
        y,
        lr=params.lr,
        max_steps=params.max_steps,
        window=params.window,
        loss=params.loss,
        batch_size=params.batch_size,
        generator=gen,
    )
    with torch.no_grad():
        train_p = sim.probs(ansatz(psi_train, theta), wires).double().numpy()
        test_p = sim.probs(ansatz(embed(data.x_test, ctype), theta), wires).double().numpy()
    return QNNOutput(
        train_probs=train_p,
        test_probs=test_p,
        theta_init=theta0.double().numpy(),
        theta_final=theta.detach().double().numpy(),
        loss=loss,
        **dict(extra),
    )


def train_iqp(feature_map, data: QMLData, params, seed: int, n_embedding_params: int = 0):
    """Train a QCNN on ``IQPEmbedding(feature_map(x))`` states; report the embedded
    training states (complex128) for ``trace-distance``."""
    ansatz = circuits.QCNN(data.n_qubits, params.layers, params.shared)

    def embed(x: np.ndarray, ctype: torch.dtype) -> torch.Tensor:
        return circuits.iqp_states(feature_map(torch.as_tensor(x)), params.n_repeats, ctype)

    psi = embed(data.x_train, torch.complex128)
    states = psi.reshape(psi.shape[0], -1).detach().numpy()
    extra = {"train_states": states, "n_embedding_params": n_embedding_params}
    return train(ansatz, embed, data, params, seed, extra)


def mlp(n: int) -> torch.nn.Sequential:
    sizes = [n, 16, 32, 32, 16, n]  # papers file §6: 8→16→32→32→16→8
    layers: list[torch.nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        layers.append(torch.nn.Linear(a, b, dtype=torch.float64))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def pretrain_nqe(net, x, y, params, gen: torch.Generator) -> None:
    """Fit |<ψ(x1)|ψ(x2)>|² to 1[y1 = y2] on random pairs (MSE, SGD)."""
    opt = torch.optim.SGD(net.parameters(), lr=params.pretrain_lr)
    ctype = sim.CDTYPES[params.precision]
    for _ in range(params.pretrain_steps):
        i = torch.randint(0, len(y), (params.pairs,), generator=gen)
        j = torch.randint(0, len(y), (params.pairs,), generator=gen)
        psi = circuits.iqp_states(net(torch.cat([x[i], x[j]])), params.n_repeats, ctype)
        psi = psi.reshape(2 * params.pairs, -1)
        overlap = (psi[: params.pairs].conj() * psi[params.pairs :]).sum(1)
        fidelity = overlap.real**2 + overlap.imag**2
        opt.zero_grad()
        functional.mse_loss(fidelity.double(), (y[i] == y[j]).double()).backward()
        opt.step()
