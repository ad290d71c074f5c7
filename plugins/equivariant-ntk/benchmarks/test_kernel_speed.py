"""Cost per kernel entry of the vectorised CNN-NTK and GCNN-NTK, against a loop over pairs.

One Gram matrix of ``N`` digits at depth 2 (the claims' kernels); the loop computes the same
entries one pair at a time with the same recursion (they agree to round-off). Rounds alternate
the two sides in one process so both see the same machine load; the cost per entry and the
ratio go to the benchmark's ``extra_info``, and the ratio must reach ``FLOOR``.

Run: ``pytest plugins/equivariant-ntk/benchmarks --benchmark-enable -s`` (``make bench`` once
the Makefile lists it). With benchmarks disabled (``make test``) the comparison is skipped.
"""

import time

import numpy as np
import pytest
from harness_equivariant_ntk import _kernels
from harness_equivariant_ntk.datasets import RotatedDigits

N, DEPTH = 80, 2
FLOOR = 10.0  # the loop over pairs must be at least this many times slower per entry


def _images() -> np.ndarray:
    return RotatedDigits().load(RotatedDigits.Params(n_train=N, n_test=1, n_off=1), 0).x_train


def _loop(images: np.ndarray) -> np.ndarray:
    out = np.empty((len(images), len(images)))
    for i, a in enumerate(images):
        for j, b in enumerate(images):
            out[i, j] = _kernels.cnn_ntk(a[None], b[None], DEPTH)[0, 0]
    return out


def _fastest(fn, rounds: int) -> float:
    best = np.inf
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def test_kernel_cost_per_entry(benchmark):
    images = _images()
    if benchmark.disabled:
        pytest.skip("the cost per entry is measured with --benchmark-enable (make bench)")
    assert _loop(images[:5]) == pytest.approx(_kernels.cnn_ntk(images[:5], images[:5], DEPTH))
    cnn = _fastest(lambda: _kernels.cnn_ntk(images, images, DEPTH), 3)
    gcnn = _fastest(lambda: _kernels.gcnn_ntk(images, images, DEPTH), 2)
    loop = _fastest(lambda: _loop(images), 1)
    entries = N * N
    benchmark.extra_info.update(
        cnn_us_per_entry=1e6 * cnn / entries,
        gcnn_us_per_entry=1e6 * gcnn / entries,
        loop_us_per_entry=1e6 * loop / entries,
        ratio=loop / cnn,
    )
    print(
        f"\nCNN-NTK depth {DEPTH}: {1e6 * cnn / entries:.2f} us/entry vectorised, "
        f"{1e6 * loop / entries:.1f} us/entry looped ({loop / cnn:.0f}x); "
        f"C4 GCNN-NTK {1e6 * gcnn / entries:.2f} us/entry"
    )
    benchmark.pedantic(_kernels.cnn_ntk, args=(images, images, DEPTH), rounds=3, iterations=1)
    assert loop / cnn >= FLOOR
