"""Speed of one training step against PennyLane default.qubit, measured interleaved.

Issue 15: one Adam step (forward, backward, update), batch 20, readout wires (0, 2), the
same precision on both sides (complex128: float64 angles and states), one torch thread on
both sides (on the shared 2-core machine two threads spin against other jobs and run up to
10x slower); QCNN (unshared, L = 1) at 8, 10 and 12 qubits and StronglyEntanglingLayers
(CZ) at 8 and 10 qubits with L = 3 and 9. Our step is the engine the methods train with
(``batched.GroupCircuit`` with one model). PennyLane's circuit is its own
``StronglyEntanglingLayers`` template, and the QCNN gate by gate from the layout. Each test
alternates rounds of our step and PennyLane's step in one process (so both see the same
machine load; each side warm, see ``interleaved_ratio``), records the ratio of the fastest
rounds (11 rounds, 5 at 12 qubits) in the benchmark's ``extra_info`` and benchmarks our
step with pytest-benchmark.

Run: ``make bench`` or ``make benchmark`` (or
``pytest plugins/margin-qml/benchmarks --benchmark-enable``).
With benchmarks disabled (the default of ``make test``) the PennyLane comparisons are
skipped and only a one-step smoke run of our simulator remains.

The asserted floors are set below the ratios measured on the 2-core development machine
(README, "Speed"), not at the issue's 10x target (met in the measured runs, not asserted).
Under heavy load one run takes many minutes (PennyLane at 12 qubits: ~90 s a step).
"""

import time

import numpy as np
import pytest
import torch
from harness_margin_qml import _batched as batched
from harness_margin_qml import _circuits as circuits
from harness_margin_qml import _sim as sim
from harness_margin_qml._training import class_loss

from harness import limit_threads

BATCH, WIRES = 20, (0, 2)
CONFIGS = [
    ("qcnn", 8, 1),
    ("qcnn", 10, 1),
    ("qcnn", 12, 1),
    ("sel", 8, 3),
    ("sel", 8, 9),
    ("sel", 10, 3),
    ("sel", 10, 9),
]
# Lowest speed-up over PennyLane accepted per config. Measured with this file's protocol (both
# sides warm each round), runs A-C of this file alone and D in a whole ``make bench``, on a
# quiet 2-core machine at commit 082f297 (README "Speed", which also has the later runs of
# the current engine, all >= 10.1x): lowest 9.9x (SEL 10 qubits, L = 3, run D), every other
# figure >= 10.4x. The floors are about half the lowest ratio
# measured with the batched engine, because ratios moved by about 2x between runs on a
# loaded machine. The 10x target is reported in the README, not asserted.
FLOORS = {
    ("qcnn", 8, 1): 5.0,  # runs A-D 16.3x, 16.6x, 18.5x, 18.2x
    ("qcnn", 10, 1): 5.0,  # 16.2x, 17.2x, 20.0x, 16.9x
    ("qcnn", 12, 1): 5.0,  # 17.4x, 15.0x, 26.8x, 15.6x
    ("sel", 8, 3): 5.0,  # 13.1x, 14.3x, 13.8x, 12.1x
    ("sel", 8, 9): 5.0,  # 20.7x, 20.7x, 20.7x, 21.7x
    ("sel", 10, 3): 5.0,  # 11.4x, 10.4x, 10.4x, 9.9x
    ("sel", 10, 9): 5.0,  # 15.8x, 15.8x, 19.5x, 15.7x
}


def _ansatz(kind, n, layers):
    if kind == "qcnn":
        return circuits.QCNN(n, layers, shared=False)
    return circuits.StronglyEntangling(n, layers)


def _inputs(n, n_params):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 2**n))
    y = torch.as_tensor(rng.integers(0, 4, BATCH))
    theta = rng.uniform(0, 2 * np.pi, n_params)
    return x, y, theta


def _step(forward, theta):
    opt = torch.optim.Adam([theta], lr=1e-3)

    def step():
        opt.zero_grad()
        loss = forward(theta)
        loss.backward()
        opt.step()
        return float(loss.detach())

    return step


def torch_step(kind, n, layers, precision="complex128"):
    """One Adam step of our simulator, as a zero-argument callable returning the loss."""
    ansatz = _ansatz(kind, n, layers)
    x, y, theta = _inputs(n, ansatz.n_params)
    real = torch.float64 if precision == "complex128" else torch.float32
    psi = circuits.amplitude_states(x, sim.CDTYPES[precision]).reshape(1, BATCH, -1)
    th = torch.tensor(theta, dtype=real, requires_grad=True)
    group = batched.GroupCircuit([ansatz])
    return _step(lambda t: class_loss(group(psi, [t], WIRES)[0], y, "softmax-probs"), th)


def pennylane_step(kind, n, layers):
    """The same step on PennyLane default.qubit (backprop, torch interface, complex128)."""
    qml = pytest.importorskip("pennylane")
    ansatz = _ansatz(kind, n, layers)
    x, y, theta = _inputs(n, ansatz.n_params)
    dev = qml.device("default.qubit", wires=n)

    @qml.qnode(dev, interface="torch", diff_method="backprop")
    def circuit(states, th):
        qml.AmplitudeEmbedding(states, wires=range(n), normalize=True)
        if kind == "sel":
            qml.StronglyEntanglingLayers(
                th.reshape(layers, n, 3), wires=range(n), imprimitive=qml.CZ
            )
        else:
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
        return qml.probs(wires=list(WIRES))

    states = torch.as_tensor(x)
    th = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
    return _step(lambda t: class_loss(circuit(states, t), y, "softmax-probs"), th)


def interleaved_ratio(ours, theirs, rounds: int, block: int = 5) -> tuple[float, float, float]:
    """Seconds per step of ``ours`` and ``theirs`` over alternating rounds, and their ratio.

    Each round runs, for each side in turn, one untimed step and then a timed block of
    steps (``block`` of ours, one of PennyLane's, whose steps are ten times longer); a
    side's figure is its fastest round (per step). The untimed step is there because a
    training run takes its steps back to back: the first step after the other side's
    ran finds cold caches and a trimmed allocator (measured: 8.8 ms against 5.2 ms warm for
    SEL at 10 qubits, L = 3), which no step of a training run pays. The minimum over rounds
    (not the median) is the estimator, as Python's ``timeit`` recommends on a machine
    shared with other jobs: load only ever adds time, and with the rounds interleaved both
    sides get the same chances of a quiet moment. PennyLane's single timed step makes its
    minimum the lower-biased one, which can only lower the ratio.
    """

    def timed(step, n):
        step()  # untimed: warms caches and the allocator after the other side's round
        start = time.perf_counter()
        for _ in range(n):
            step()
        return (time.perf_counter() - start) / n

    t_ours, t_theirs = [], []
    for _ in range(rounds):
        t_ours.append(timed(ours, block))
        t_theirs.append(timed(theirs, 1))
    a, b = min(t_ours), min(t_theirs)
    return a, b, b / a


@pytest.mark.parametrize(("kind", "n", "layers"), CONFIGS)
def test_step_speed_vs_pennylane(benchmark, kind, n, layers):
    with limit_threads(1, torch=True):
        ours = torch_step(kind, n, layers)
        if benchmark.disabled:  # make test: one step, no PennyLane
            assert np.isfinite(ours())
            pytest.skip("speed ratios are measured with --benchmark-enable (make bench)")
        rounds = 5 if n >= 12 else 11
        t_ours, t_pl, ratio = interleaved_ratio(ours, pennylane_step(kind, n, layers), rounds)
        benchmark.extra_info.update(
            {"ours_min_s": t_ours, "pennylane_min_s": t_pl, "speedup": ratio}
        )
        print(
            f"\n{kind} n={n} L={layers}: ours {t_ours * 1e3:.1f} ms, "
            f"PennyLane {t_pl * 1e3:.1f} ms, {ratio:.1f}x"
        )
        loss = benchmark(ours)
    assert np.isfinite(loss)
    assert ratio >= FLOORS[(kind, n, layers)], f"{ratio:.1f}x < {FLOORS[(kind, n, layers)]}x"
