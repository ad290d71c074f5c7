import numpy as np
import pytest
import torch
from harness_margin_qml import _circuits as circuits
from harness_margin_qml import _engine
from harness_margin_qml import _sim as sim
from harness_margin_qml.datasets import ClusterPhases, DigitsBinary
from harness_margin_qml.methods import (
    NQE,
    IQPEmbedding,
    QCNNMethod,
    StronglyEntanglingMethod,
)

from harness import Skip

qml = pytest.importorskip("pennylane")


def _su4_pennylane(p, a, b):
    # The papers file §3 block, written gate by gate in PennyLane.
    qml.U3(*p[0:3], wires=a)
    qml.U3(*p[3:6], wires=b)
    qml.CNOT(wires=[a, b])
    qml.RY(p[6], wires=a)
    qml.RZ(p[7], wires=b)
    qml.CNOT(wires=[b, a])
    qml.RY(p[8], wires=a)
    qml.CNOT(wires=[a, b])
    qml.U3(*p[9:12], wires=a)
    qml.U3(*p[12:15], wires=b)


def _reference(n, embedding, ansatz, theta, x, readout):
    dev = qml.device("default.qubit", wires=n)

    @qml.qnode(dev)
    def circuit(row):
        if embedding == "amplitude":
            qml.AmplitudeEmbedding(row, wires=range(n), normalize=True)
        else:
            qml.IQPEmbedding(row, wires=range(n), n_repeats=3)
        if isinstance(ansatz, circuits.QCNN):
            for k, (a, b, group) in enumerate(ansatz.layout):
                i = group if ansatz.shared else k
                _su4_pennylane(theta[15 * i : 15 * i + 15], a, b)
        else:
            w = theta.reshape(ansatz.layers, n, 3)
            qml.StronglyEntanglingLayers(w, wires=range(n), imprimitive=qml.CZ)
        return qml.probs(wires=list(readout))

    return np.array([circuit(row) for row in x])


def _models(n):
    return {
        "qcnn-unshared": ("amplitude", circuits.QCNN(n, 2, False)),
        "qcnn-shared": ("amplitude", circuits.QCNN(n, 2, True)),
        "strongly-entangling": ("amplitude", circuits.StronglyEntangling(n, 3)),
        "iqp-embedding": ("features", circuits.QCNN(n, 1, True)),
        "nqe": ("nqe", circuits.QCNN(n, 1, True)),
    }


@pytest.mark.parametrize("n", [4, 6])
@pytest.mark.parametrize("model", list(_models(4)))
@pytest.mark.parametrize("n_classes", [2, 4])
def test_simulator_matches_pennylane_default_qubit(n, model, n_classes):
    embedding, ansatz = _models(n)[model]
    rng = np.random.default_rng(n)
    theta = rng.uniform(0, 2 * np.pi, ansatz.n_params)
    readout = circuits.readout_wires(n_classes)
    if embedding == "amplitude":
        x = rng.standard_normal((3, 2**n))
        psi = circuits.amplitude_states(x, torch.complex128)
    else:
        x = rng.uniform(0, np.pi, (3, n))
        if embedding == "nqe":  # the classical network's output feeds the IQP embedding
            torch.manual_seed(0)
            x = _engine.mlp(n)(torch.as_tensor(x)).detach().numpy()
        psi = circuits.iqp_states(torch.as_tensor(x), 3, torch.complex128)
        embedding = "features"
    got = sim.probs(ansatz(psi, torch.as_tensor(theta)), readout).numpy()
    want = _reference(n, embedding, ansatz, theta, x, readout)
    np.testing.assert_allclose(got, want, atol=1e-6, rtol=0)


def test_complex64_agrees_with_complex128():
    ansatz = circuits.QCNN(6, 2, False)
    x = np.random.default_rng(0).standard_normal((4, 64))
    theta = torch.rand(ansatz.n_params, dtype=torch.float64) * 6
    p64 = sim.probs(ansatz(circuits.amplitude_states(x, torch.complex64), theta.float()), (0, 2))
    p128 = sim.probs(ansatz(circuits.amplitude_states(x, torch.complex128), theta), (0, 2))
    np.testing.assert_allclose(p64.double().numpy(), p128.numpy(), atol=1e-5)  # float32 eps


@pytest.mark.parametrize("layers", [1, 3, 5, 7, 9])
def test_parameter_counts_match_papers_formulas(layers):
    # Papers file §3 table.
    assert circuits.QCNN(8, layers, False).n_params == 180 * layers + 15
    assert circuits.QCNN(8, layers, True).n_params == 15 * (2 * layers + 1)
    assert circuits.QCNN(10, layers, False).n_params == 210 * layers + 30
    assert circuits.QCNN(10, layers, True).n_params == 15 * (2 * layers + 2)
    assert circuits.StronglyEntangling(8, layers).n_params == 24 * layers


def test_qcnn_layout_at_8_qubits_is_the_papers():
    pairs = [(a, b) for a, b, _ in circuits.qcnn_layout(8, 1)]
    assert pairs == [
        *[(0, 1), (2, 3), (4, 5), (6, 7), (7, 0), (1, 2), (3, 4), (5, 6)],
        *[(0, 2), (4, 6), (6, 0), (2, 4)],
        (4, 0),
    ]


@pytest.mark.parametrize("n", [3, 5, 7])
def test_qcnn_rejects_odd_or_small_qubit_counts(n):
    with pytest.raises(ValueError, match="n_qubits"):
        circuits.qcnn_layout(n, 1)


def _cluster(n=4, **kw):
    params = ClusterPhases.Params(n_qubits=n, n_train=8, n_test=8, **kw)
    return ClusterPhases(params).load(params, 0)


def test_qcnn_method_on_odd_qubit_data_names_n_qubits():
    data = _cluster(5)
    params = QCNNMethod.Params(max_steps=2, window=1)
    with pytest.raises(ValueError, match="n_qubits"):
        QCNNMethod(params).run(data, params, 0)


def test_training_lowers_loss_and_is_deterministic():
    data = _cluster(4)
    params = QCNNMethod.Params(lr=0.05, max_steps=60, window=100, loss="nll")
    out = QCNNMethod(params).run(data, params, 0)
    again = QCNNMethod(params).run(data, params, 0)
    assert out.loss[-5:].mean() < out.loss[:5].mean() - 0.05
    np.testing.assert_array_equal(out.train_probs, again.train_probs)
    np.testing.assert_allclose(out.train_probs.sum(1), 1.0, atol=1e-5)
    assert out.train_probs.shape == (8, 4) and out.theta_init.shape == (75,)


def test_plateau_rule_stops_early():
    data = _cluster(4)
    params = QCNNMethod.Params(lr=1e-9, max_steps=500, window=10)  # a flat loss
    assert len(QCNNMethod(params).run(data, params, 0).loss) < 500


def test_state_methods_skip_feature_data_and_vice_versa():
    params = DigitsBinary.Params(n_qubits=4, n_train=8, n_test=8)
    digits = DigitsBinary(params).load(params, 0)
    for method in (QCNNMethod, StronglyEntanglingMethod):
        with pytest.raises(Skip):
            method().run(digits, method.Params(), 0)
    for method in (IQPEmbedding, NQE):
        with pytest.raises(Skip):
            method().run(_cluster(4), method.Params(), 0)


def test_nqe_pretraining_separates_classes_more_than_iqp():
    from harness_margin_qml.metrics import trace_distance

    params = DigitsBinary.Params(n_qubits=4, n_train=60, n_test=20)
    data = DigitsBinary(params).load(params, 0)
    iqp = IQPEmbedding.Params(max_steps=1, window=1)
    nqe = NQE.Params(max_steps=1, window=1, pretrain_steps=150, pretrain_lr=0.05)
    d_iqp = trace_distance(IQPEmbedding(iqp).run(data, iqp, 0).train_states, data.y_train)
    d_nqe = trace_distance(NQE(nqe).run(data, nqe, 0).train_states, data.y_train)
    # Papers file §6: NQE raises the trace distance (MNIST .59 -> .92); here at 4 qubits.
    assert d_nqe > d_iqp + 0.05


@pytest.mark.parametrize("layers", [1, 3, 5, 9])
def test_12_qubit_qcnn_is_a_reconstruction_with_20_l_plus_1_blocks(layers):
    # No 12-qubit layout in the papers file: the same brickwork rule gives levels of 12, 6
    # and 3 active wires (12L + 6L + 2L blocks) and one final block, 20L + 1 blocks as in
    # the papers file's pilot (§7); 15(20L + 1) = 300L + 15 angles unshared, 15(3L + 1)
    # shared (one set per level repetition and one for the final block).
    assert len(circuits.qcnn_layout(12, layers)) == 20 * layers + 1
    assert circuits.QCNN(12, layers, False).n_params == 300 * layers + 15
    assert circuits.QCNN(12, layers, True).n_params == 15 * (3 * layers + 1)
