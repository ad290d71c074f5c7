"""Metrics on hand-made outputs with known values."""

import numpy as np
import pytest
from harness_weak_features._data import WeakOutput
from harness_weak_features.datasets import Synthetic
from harness_weak_features.methods import Oracle
from harness_weak_features.metrics import Accuracy, Auc, BalancedAccuracy, OracleGap, WfAccuracy

from harness import Skip


@pytest.fixture(scope="module")
def data():
    return Synthetic().load(Synthetic.Params(n=200), 0)


def test_accuracy_and_balanced_accuracy_of_perfect_and_constant(data):
    perfect = WeakOutput(data.y_test.copy(), data.y_test.astype(float))
    constant = WeakOutput(np.zeros_like(data.y_test), np.full(len(data.y_test), 0.2))
    assert Accuracy().compute(data, perfect) == 1.0
    assert Accuracy().compute(data, constant) == pytest.approx(1 - data.y_test.mean())
    assert BalancedAccuracy().compute(data, constant) == 0.5
    assert Auc().compute(data, perfect) == 1.0
    assert Auc().compute(data, constant) == 0.5


def test_wf_accuracy_counts_missing_estimate_as_wrong(data):
    v_hat = data.v_test.copy()
    v_hat[:10] = -1
    out = WeakOutput(data.y_test, data.y_test.astype(float), v_hat)
    assert WfAccuracy().compute(data, out) == pytest.approx(1 - 10 / len(v_hat))
    with pytest.raises(Skip):
        WfAccuracy().compute(data, WeakOutput(data.y_test, data.y_test.astype(float)))


def test_oracle_gap_is_zero_for_oracle_and_positive_for_worse(data):
    oracle = Oracle().run(data, Oracle.Params(), 0)
    assert OracleGap().compute(data, oracle) == 0.0
    flipped = WeakOutput(1 - oracle.y_pred, oracle.y_score)
    assert OracleGap().compute(data, flipped) == pytest.approx(
        2 * Accuracy().compute(data, oracle) - 1
    )
