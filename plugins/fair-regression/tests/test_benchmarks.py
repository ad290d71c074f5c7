"""Speed targets (issue 7): post-processing 1e6 predictions <= 2 s; KS and W2 on 1e6 <= 1 s.

Run with ``pytest plugins/fair-regression/tests/test_benchmarks.py --benchmark-enable``.
"""

from __future__ import annotations

import numpy as np
import pytest
from harness_fair_regression.api import fit_barycenter_map
from harness_fair_regression.metrics import ks_unfairness, w2_unfairness

N = 1_000_000


@pytest.fixture(scope="module")
def million():
    rng = np.random.default_rng(0)
    s = (rng.random(N) < 0.3).astype(np.int64)
    return rng.normal(size=N) + 2.0 * s, s


def _post_process(pred, s):
    rng = np.random.default_rng(0)
    fitted = fit_barycenter_map(pred, s, 2, jitter=1e-5, split=True, rng=rng)
    return fitted.transform(pred, s, rng)


def test_post_processing_one_million_predictions(benchmark, million):
    # Fit the map on 1e6 calibration predictions and transform 1e6 test predictions.
    out = benchmark(_post_process, *million)
    assert out.shape == (N,) and ks_unfairness(out, million[1]) < 0.01


def test_ks_unfairness_one_million_points(benchmark, million):
    value = benchmark(ks_unfairness, *million)
    assert 0.6 < value < 0.8  # N(0,1) vs N(2,1): sup |Phi(t) - Phi(t - 2)| = 0.683


def test_w2_unfairness_one_million_points(benchmark, million):
    value = benchmark(w2_unfairness, *million)
    assert value == pytest.approx(0.7 * 0.3 * 4, rel=0.02)  # p0 p1 (m1 - m0)^2 = 0.84
