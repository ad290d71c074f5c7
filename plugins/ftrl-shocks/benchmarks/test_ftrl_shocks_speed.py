"""Speed of the vectorised simulator against the same scheme in a plain loop over paths.

One cell's work: matching pennies, entropic regularizer, sigma = 1, Heun, dt = 0.01,
``PATHS`` paths over ``STEPS`` steps, both sides drawing the same shocks (they agree path by
path: tests/test_dynamics.py). Rounds alternate the two sides in one process so that both see
the same machine load; the ratio of the fastest rounds goes to the benchmark's
``extra_info`` and must reach ``FLOOR``.

Run: ``pytest plugins/ftrl-shocks/benchmarks --benchmark-enable -s`` (``make bench`` once the
Makefile lists it). With benchmarks disabled (``make test``) the comparison is skipped.
"""

import time

import numpy as np
import pytest
from harness_ftrl_shocks import datasets
from harness_ftrl_shocks._dynamics import REGULARIZERS, simulate, simulate_loop

PATHS, STEPS, DT = 200, 200, 0.01
# Half the lowest ratio measured on the shared 2-core machine (plugin README, "Speed").
FLOOR = 20.0


def _sides():
    game = datasets.MatchingPennies().load(datasets.MatchingPennies.Params(), 0)
    reg = REGULARIZERS["entropic"]
    horizon = STEPS * DT

    def ours():
        return simulate(game, reg, 1.0, DT, horizon, PATHS, np.random.default_rng(0))

    def loop():
        return simulate_loop(game, reg, 1.0, DT, horizon, PATHS, np.random.default_rng(0))

    return ours, loop


def _fastest(fn, rounds: int) -> float:
    best = np.inf
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def test_simulator_speed_vs_plain_loop(benchmark):
    ours, loop = _sides()
    if benchmark.disabled:
        pytest.skip("the speed ratio is measured with --benchmark-enable (make bench)")
    times_ours, times_loop = [], []
    for _ in range(3):
        times_ours.append(_fastest(ours, 3))
        times_loop.append(_fastest(loop, 1))
    ratio = min(times_loop) / min(times_ours)
    benchmark.extra_info.update(
        seconds_vectorised=min(times_ours), seconds_loop=min(times_loop), ratio=ratio
    )
    seconds = f"{min(times_ours):.4f} s vectorised, {min(times_loop):.3f} s loop"
    print(f"\nftrl-shocks simulator: {seconds}, {ratio:.1f}x")
    benchmark(ours)
    assert ratio >= FLOOR
