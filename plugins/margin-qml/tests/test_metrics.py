import numpy as np
import pytest
from harness_margin_qml import metrics
from harness_margin_qml.data import QMLData, QNNOutput

from harness import Skip


def _data(y_train, y_test, n_classes):
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    empty = np.zeros((0, 2))
    return QMLData(
        x_train=np.zeros((len(y_train), 4)),
        y_train=y_train,
        x_test=np.zeros((len(y_test), 4)),
        y_test=y_test,
        y_train_clean=y_train,
        y_test_clean=y_test,
        couplings_train=empty,
        couplings_test=empty,
        n_qubits=2,
        n_classes=n_classes,
        encoding="amplitude",
        noise=0.0,
    )


def _output(train_probs, test_probs, theta_init=(0.0,), theta_final=(0.0,), states=None):
    return QNNOutput(
        train_probs=np.asarray(train_probs, float),
        test_probs=np.asarray(test_probs, float),
        theta_init=np.asarray(theta_init, float),
        theta_final=np.asarray(theta_final, float),
        loss=np.zeros(1),
        train_states=states,
    )


# Hand-built four-class output: margins p_y - max_{j != y} p_j are
# 0.7-0.1 = 0.6, 0.4-0.3 = 0.1, 0.2-0.5 = -0.3, 0.25-0.25 = 0.0 (a tie).
PROBS = [
    [0.7, 0.1, 0.1, 0.1],
    [0.3, 0.4, 0.2, 0.1],
    [0.5, 0.1, 0.2, 0.2],
    [0.25, 0.25, 0.25, 0.25],
]
Y = [0, 1, 2, 3]


def test_margins_equal_hand_values():
    np.testing.assert_allclose(metrics.margins(np.array(PROBS), np.array(Y)), [0.6, 0.1, -0.3, 0])


def test_margin_mean_and_quartiles_equal_hand_values():
    data, out = _data(Y, [0], 4), _output(PROBS, [[1, 0, 0, 0]])
    # Mean is signed, before zeroing: (0.6 + 0.1 - 0.3 + 0) / 4 = 0.1.
    assert metrics.MarginMean().compute(data, out) == pytest.approx(0.1)
    # After zeroing: sorted [0, 0, 0.1, 0.6]; linear quantiles at positions 0.75, 1.5, 2.25.
    assert metrics.MarginQ25().compute(data, out) == pytest.approx(0.0)
    assert metrics.MarginQ50().compute(data, out) == pytest.approx(0.05)
    assert metrics.MarginQ75().compute(data, out) == pytest.approx(0.1 + 0.25 * 0.5)


def test_accuracies_and_gap():
    data = _data(Y, [0, 1], 4)
    out = _output(PROBS, [[0.9, 0.1, 0, 0], [0.9, 0.1, 0, 0]])
    # argmax: rows 0, 1 right; row 2 predicts 0; row 3 ties, argmax picks class 0.
    assert metrics.TrainAccuracy().compute(data, out) == pytest.approx(0.5)
    assert metrics.TestAccuracy().compute(data, out) == pytest.approx(0.5)
    assert metrics.GeneralizationGap().compute(data, out) == pytest.approx(0.0)


def test_parameter_counts_and_effective_parameters():
    out = _output([[1, 0]], [[1, 0]], theta_init=[0, 0, 0, 0], theta_final=[0.5, 0.05, 0.005, -2])
    data = _data([0], [0], 2)
    assert metrics.ParameterCount().compute(data, out) == 4
    eff = metrics.EffectiveParameters().compute(data, out)
    assert eff == {"above-0.1": 2.0, "above-0.01": 3.0}


def test_trace_distance_of_orthogonal_and_identical_classes():
    zero, one = np.array([1, 0], complex), np.array([0, 1], complex)
    assert metrics.trace_distance(np.stack([zero, one]), np.array([0, 1])) == pytest.approx(1.0)
    assert metrics.trace_distance(np.stack([zero, zero]), np.array([0, 1])) == pytest.approx(0.0)
    plus = np.array([1, 1], complex) / np.sqrt(2)
    # |0> vs |+>: D = sqrt(1 - |<0|+>|^2) = 1/sqrt(2) for pure states.
    assert metrics.trace_distance(np.stack([zero, plus]), np.array([0, 1])) == pytest.approx(
        2**-0.5
    )


def test_mean_margin_never_exceeds_trace_distance():
    # Helstrom (papers file §6): for balanced classes and a two-outcome projective
    # measurement, mean signed margin = Tr[(E0 - E1)(ρ0 - ρ1)]... ≤ 2·D_tr(ρ0, ρ1) per class;
    # with equal priors the mean of p_y - p_{1-y} is at most D_tr.
    rng = np.random.default_rng(0)
    states = rng.standard_normal((40, 8)) + 1j * rng.standard_normal((40, 8))
    states /= np.linalg.norm(states, axis=1, keepdims=True)
    y = np.repeat([0, 1], 20)
    bound = metrics.trace_distance(states, y)
    for _ in range(20):
        q, _ = np.linalg.qr(rng.standard_normal((8, 8)) + 1j * rng.standard_normal((8, 8)))
        amps = states @ q
        p0 = (np.abs(amps[:, :4]) ** 2).sum(1)
        probs = np.stack([p0, 1 - p0], 1)
        assert metrics.margins(probs, y).mean() <= bound + 1e-12


def test_trace_distance_skips_without_states_or_with_four_classes():
    with pytest.raises(Skip):
        metrics.TraceDistance().compute(_data(Y, [0], 4), _output(PROBS, [[1, 0, 0, 0]]))
    states = np.eye(4, dtype=complex)
    with pytest.raises(Skip):
        metrics.TraceDistance().compute(
            _data(Y, [0], 4), _output(PROBS, [[1, 0, 0, 0]], states=states)
        )
