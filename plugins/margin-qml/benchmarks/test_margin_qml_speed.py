"""Speed of one training step (forward + backward + Adam), batch 20, on 2 CPU threads.

Targets (issue 4): <= 10 ms at 8 qubits, <= 50 ms at 10 qubits, >= 10x faster than the same
step on PennyLane default.qubit (backprop, torch interface), measured side by side in the
group "step-8-qubits". Run with ``pytest --benchmark-enable``; with benchmarks disabled each
body runs once.
"""

import numpy as np
import pytest
import torch
from harness_margin_qml import circuits, sim
from harness_margin_qml.training import class_loss, torch_threads


def _data(n, batch=20):
    rng = np.random.default_rng(0)
    return rng.standard_normal((batch, 2**n)), torch.as_tensor(rng.integers(0, 4, batch))


def _torch_step(n, layers):
    x, y = _data(n)
    ansatz = circuits.QCNN(n, layers, shared=False)
    psi = circuits.amplitude_states(x, torch.complex64)
    theta = (
        torch.rand(ansatz.n_params, generator=torch.Generator().manual_seed(0)) * 6
    ).requires_grad_()
    opt = torch.optim.Adam([theta], lr=1e-3)

    def step():
        opt.zero_grad()
        loss = class_loss(sim.probs(ansatz(psi, theta), (0, 2)), y, "softmax-probs")
        loss.backward()
        opt.step()
        return float(loss.detach())

    return step


@pytest.mark.benchmark(group="step-8-qubits")
@pytest.mark.parametrize("layers", [1, 5])
def test_torch_step_8_qubits(benchmark, layers):
    with torch_threads(2):
        loss = benchmark(_torch_step(8, layers))
    assert np.isfinite(loss)


@pytest.mark.benchmark(group="step-10-qubits")
def test_torch_step_10_qubits(benchmark):
    with torch_threads(2):
        loss = benchmark(_torch_step(10, 1))
    assert np.isfinite(loss)


def _pennylane_step(n, layers):
    qml = pytest.importorskip("pennylane")
    x, y = _data(n)
    ansatz = circuits.QCNN(n, layers, shared=False)
    dev = qml.device("default.qubit", wires=n)

    @qml.qnode(dev, interface="torch", diff_method="backprop")
    def circuit(states, th):
        qml.AmplitudeEmbedding(states, wires=range(n), normalize=True)
        for k, (a, b, _) in enumerate(ansatz.layout):
            p = th[15 * k : 15 * k + 15]
            qml.U3(p[0], p[1], p[2], wires=a)
            qml.U3(p[3], p[4], p[5], wires=b)
            qml.CNOT(wires=[a, b])
            qml.RY(p[6], wires=a)
            qml.RZ(p[7], wires=b)
            qml.CNOT(wires=[b, a])
            qml.RY(p[8], wires=a)
            qml.CNOT(wires=[a, b])
            qml.U3(p[9], p[10], p[11], wires=a)
            qml.U3(p[12], p[13], p[14], wires=b)
        return qml.probs(wires=[0, 2])

    states = torch.as_tensor(x)
    theta = (torch.rand(ansatz.n_params, dtype=torch.float64) * 6).requires_grad_()
    opt = torch.optim.Adam([theta], lr=1e-3)

    def step():
        opt.zero_grad()
        loss = class_loss(circuit(states, theta), y, "softmax-probs")
        loss.backward()
        opt.step()
        return float(loss.detach())

    return step


@pytest.mark.benchmark(group="step-8-qubits")
def test_pennylane_step_8_qubits(benchmark):
    with torch_threads(2):
        loss = benchmark(_pennylane_step(8, 1))
    assert np.isfinite(loss)
