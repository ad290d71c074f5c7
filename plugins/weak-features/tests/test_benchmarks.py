"""Speed target of issue 8: wfl-sequential trains on affairs (6,366 rows) in <= 10 s."""

import pytest
from harness_weak_features.datasets import Affairs
from harness_weak_features.methods import WflSequential


@pytest.fixture(scope="module")
def affairs():
    return Affairs().load(Affairs.Params(weak_kind="noisy", rate=0.3), 0)


def test_wfl_sequential_on_affairs(benchmark, affairs):
    params = WflSequential.Params()
    out = benchmark(WflSequential(params).run, affairs, params, 0)
    assert out.y_pred.shape == affairs.y_test.shape
