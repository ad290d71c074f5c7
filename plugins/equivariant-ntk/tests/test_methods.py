"""Methods and metrics: the ensemble's centring and training, the kernel predictors' outputs,
and the metrics on known cases."""

import numpy as np
import pytest
from harness_equivariant_ntk import _ensemble
from harness_equivariant_ntk.data import TIMES, MeanPredictions
from harness_equivariant_ntk.datasets import RotatedDigits
from harness_equivariant_ntk.methods import CnnEnsemble, CnnNtk, GcnnNtk
from harness_equivariant_ntk.metrics import Accuracy, GcnnGap, relative_gap


@pytest.fixture(scope="module")
def data():
    return RotatedDigits().load(RotatedDigits.Params(n_train=10, n_test=12, n_off=3), seed=5)


def test_ensemble_starts_at_zero_and_fits_its_training_set(data):
    net = _ensemble.CnnEnsemble(members=2, width=64, classes=10, seed=0)
    trained = _ensemble.train_ensemble(
        net, data.x_train, data.targets, data.x_train, [0.0, 100.0], lr=1.0
    )
    assert np.abs(trained[0]).max() == 0.0
    start = np.sqrt((data.targets**2).mean())
    assert np.sqrt(((trained[1] - data.targets) ** 2).mean()) < 0.2 * start


def test_ensemble_output_has_the_times_within_its_horizon(data):
    out = CnnEnsemble().run(data, CnnEnsemble.Params(width=8, members=2, steps=10), seed=1)
    assert list(out.times) == [1.0, 10.0] and out.lr == 1.0 and out.depth == 1


def test_gcnn_gap_is_zero_for_the_gcnn_and_tiny_for_c4_augmentation(data):
    gap = GcnnGap()
    params = GcnnNtk.Params(depth=1)
    assert gap.compute(data, GcnnNtk().run(data, params, 0))["max"] == 0.0
    augmented = CnnNtk().run(data, CnnNtk.Params(depth=1, augment="c4"), 0)
    values = gap.compute(data, augmented)
    assert values["max"] < 1e-8 and values["off"] < 1e-8 and values["shifted"] > 1e-2
    plain = gap.compute(data, CnnNtk().run(data, CnnNtk.Params(depth=1), 0))
    assert plain["max"] > 1e-2


def test_relative_gap_takes_the_worst_time():
    reference = np.ones((2, 3, 1))
    mean = reference.copy()
    mean[1, 0, 0] = 1.5
    assert relative_gap(mean, reference) == pytest.approx(0.5)
    assert relative_gap(mean, reference, "rms") == pytest.approx(np.sqrt(0.25 / 3))


def test_accuracy_reads_the_last_time_and_splits_by_orientation(data):
    scores = np.zeros((len(TIMES), len(data.y_test), 10))
    scores[-1, np.arange(len(data.y_test)), data.y_test] = 1.0
    out = MeanPredictions(np.array(TIMES), scores, np.zeros((len(TIMES), 3, 10)), 1)
    assert Accuracy().compute(data, out) == {"all": 1.0, "upright": 1.0, "turned": 1.0}
