"""Speed targets (pytest-benchmark; run with --benchmark-enable to measure)."""

import numpy as np
from harness_gmm_testing.api import hermite_z
from threadpoolctl import threadpool_limits

# apply_test runs every test with BLAS on one thread; measure the same way.


def test_hermite_degree_4_n10000_d16(benchmark):
    # Target (issue 3): one degree-4 Hermite test at n = 10,000, d = 16 in <= 0.1 s.
    X = np.random.default_rng(0).standard_normal((10_000, 16))
    with threadpool_limits(1, user_api="blas"):
        z = benchmark(hermite_z, X, 4)
    assert abs(z) < 6  # a null sample: Z ~ N(0, 1)


def test_hermite_degree_6_n10000_d8(benchmark):
    # The suite's configuration (degree 6 = first unmatched degree of k = 8 uniform pancakes).
    X = np.random.default_rng(1).standard_normal((10_000, 8))
    with threadpool_limits(1, user_api="blas"):
        z = benchmark(hermite_z, X, 6)
    assert abs(z) < 6
