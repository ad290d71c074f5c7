"""End to end on a small trained network: the paper's machine predicts it better than its
wrong variants (ELS without equivariance, ELS with the whole image as its patch)."""

import numpy as np
import pytest
from harness_els_diffusion import datasets, methods
from harness_els_diffusion.metrics import pearson_r2


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    dataset = datasets.Digits()
    params = dataset.Params(n_train=100, n_eval=8, n_calibration=3, steps=8, train_steps=150)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HARNESS_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        return dataset.load(params, 1000)


def _r2(data, method, **params) -> float:
    out = method.run(data, method.Params(**params), 0)
    return float(np.median(pearson_r2(out.images, data.reference)))


def test_els_predicts_the_network_better_than_its_wrong_variants(data):
    els = _r2(data, methods.ELSMachine())
    assert els > 0.5
    assert els > _r2(data, methods.LSMachine()) + 0.2  # without equivariance
    assert els > _r2(data, methods.ELSMachine(), patch=8) + 0.05  # the whole image as patch
    assert els > _r2(data, methods.IdealScore()) + 0.2
