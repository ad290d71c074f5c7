"""Training of the ``margin-qml`` methods on the torch simulator (imported on first run).

Source: Hur & Park, ICML 2025, official ``QPR/models/QPR.py`` and ``NQE/`` (papers file §3, §6).
Kept apart from :mod:`harness_margin_qml.methods` so that registering the plugin does not
import torch.
"""

from __future__ import annotations

import itertools
import math
from typing import Protocol

import numpy as np
import torch
from torch.nn import functional

from harness_margin_qml import _batched as batched
from harness_margin_qml import _circuits as circuits
from harness_margin_qml import _sim as sim
from harness_margin_qml._training import fit, plateaued, retained_heap_if
from harness_margin_qml.data import QMLData, QNNOutput

__all__ = ["mlp", "pretrain_nqe", "train", "train_group", "train_iqp"]


class _TrainParams(Protocol):
    """What training reads of a method's ``Params`` (``methods._TrainParams``; a protocol,
    so that this module does not import ``methods``, which imports it)."""

    lr: float
    max_steps: int
    window: int
    loss: str
    batch_size: int
    precision: str
    retain_heap: bool


_REAL = {"complex64": torch.float32, "complex128": torch.float64}


@retained_heap_if("params")  # only with params.retain_heap; restored after
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


@retained_heap_if("params")  # only with params.retain_heap; restored after
def train_group(
    ansatze, embed, data: QMLData, params: _TrainParams, seed: int, eval_chunk: int = 256
) -> list[QNNOutput]:
    """Train several models on one data set as one batched simulation (batch axis over models).

    Every model gets exactly what :func:`train` would give it with the same ``seed``: its
    own generator seeded ``seed`` draws its U[0, 2π) angles and its mini-batches, its own
    Adam state, its own plateau stop (a stopped model leaves the batch and is not updated
    again). The summed loss of the models has, for each model's angles, that model's own
    gradient. Equality with :func:`train` is tested to 1e-10 in complex128.

    Parameters
    ----------
    ansatze : sequence of circuits.QCNN or circuits.StronglyEntangling
        One family, one ``n_qubits``; depths may differ (see ``batched.GroupCircuit``).
    embed : callable
        ``embed(x, ctype)`` -> states (rows, 2, ..., 2).
    data : QMLData
    params : _TrainParams
        lr, max_steps, window, loss, batch_size, precision as for :func:`train`.
    seed : int
    eval_chunk : int
        Test states simulated per call after training (memory bound).

    Returns
    -------
    list of QNNOutput
        In the order of ``ansatze``.
    """
    real, ctype = _REAL[params.precision], sim.CDTYPES[params.precision]
    models = list(ansatze)
    order = sorted(range(len(models)), key=lambda i: -models[i].layers)  # deepest first
    group = batched.GroupCircuit([models[i] for i in order])
    gens = [torch.Generator().manual_seed(seed) for _ in order]
    theta0 = [
        torch.rand(models[i].n_params, generator=g, dtype=real) * (2 * math.pi)
        for i, g in zip(order, gens, strict=True)
    ]
    thetas = [t.clone().requires_grad_() for t in theta0]
    wires = circuits.readout_wires(data.n_classes)
    psi_train = embed(data.x_train, ctype)
    n = psi_train.shape[0]
    psi_train = psi_train.reshape(n, -1)
    y = torch.as_tensor(data.y_train)
    opt = torch.optim.Adam(thetas, lr=params.lr)
    losses: list[list[float]] = [[] for _ in order]
    active = list(range(len(order)))
    full = params.batch_size <= 0 or params.batch_size >= n
    for _ in range(params.max_steps):
        if not active:
            break
        if full:
            psi, ys = psi_train[None], y.expand(len(active), n)
        else:
            idx = torch.stack(
                [torch.randperm(n, generator=gens[j])[: params.batch_size] for j in active]
            )
            psi, ys = psi_train[idx], y[idx]
        opt.zero_grad()
        probs = group(psi, thetas, wires, active=tuple(active))  # (m, b, K)
        per_model = _per_model_loss(probs, ys, params.loss)  # (m,)
        per_model.sum().backward()
        opt.step()  # models outside ``active`` have no gradient: Adam skips them
        values = per_model.detach().double().tolist()
        for j, value in zip(active, values, strict=True):
            losses[j].append(value)
        active = [j for j in active if not plateaued(losses[j], params.window)]
    with torch.no_grad():
        train_p = group(psi_train[None], thetas, wires).double().numpy()
        psi_test = embed(data.x_test, ctype).reshape(len(data.x_test), -1)
        test_p = (
            torch.cat(
                [group(chunk[None], thetas, wires) for chunk in psi_test.split(eval_chunk)], dim=1
            )
            .double()
            .numpy()
        )
    out: list[QNNOutput | None] = [None] * len(models)
    for j, i in enumerate(order):
        out[i] = QNNOutput(
            train_probs=train_p[j],
            test_probs=test_p[j],
            theta_init=theta0[j].double().numpy(),
            theta_final=thetas[j].detach().double().numpy(),
            loss=np.asarray(losses[j]),
        )
    return out  # type: ignore[return-value]


def _per_model_loss(probs: torch.Tensor, y: torch.Tensor, kind: str) -> torch.Tensor:
    """``training.class_loss`` of each model: probs (m, b, K), labels (m, b) -> (m,)."""
    m, b, k = probs.shape
    flat, labels = probs.reshape(m * b, k), y.reshape(m * b)
    if kind == "softmax-probs":
        each = functional.cross_entropy(flat, labels, reduction="none")
    else:
        each = functional.nll_loss(torch.log(flat.clamp_min(1e-12)), labels, reduction="none")
    return each.view(m, b).mean(1)


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


@retained_heap_if("params")  # only with params.retain_heap; restored after
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
