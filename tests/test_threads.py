"""harness.limit_threads: the one way a cell bounds its BLAS and torch threads."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np  # noqa: F401 - loads the BLAS that threadpoolctl reports
import pytest
from threadpoolctl import threadpool_info

from harness import limit_threads


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info()}


def test_limits_inside_the_block_and_restores_after():
    before = _blas_threads()
    assert before, "no BLAS/OpenMP pool found: the test would check nothing"
    with limit_threads(1):
        assert _blas_threads() == {1}
    assert _blas_threads() == before


def test_restores_when_the_block_raises():
    before = _blas_threads()
    with pytest.raises(RuntimeError), limit_threads(1):
        raise RuntimeError("boom")
    assert _blas_threads() == before


def test_limits_and_restores_torch_when_asked():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with limit_threads(1, torch=True):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)  # the rest of the session keeps its count


@pytest.mark.parametrize("n", [0, -1])
def test_refuses_fewer_than_one_thread(n):
    with pytest.raises(ValueError, match="threads must be >= 1"), limit_threads(n):
        pass


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: torch's default is 1 thread")
def test_a_worker_limit_covers_torch_imported_after_it():
    """A ``-j`` worker limits its threads before its first cell imports torch: torch must
    start with that limit (fails if only an already-imported torch is limited: 2+ threads)."""
    code = (
        "from harness.threads import limit_process_threads\n"
        "import sys\n"
        "assert 'torch' not in sys.modules\n"
        "limit_process_threads(1)\n"
        "import torch\n"
        "print(torch.get_num_threads())\n"
    )
    environment = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


def test_workers_share_the_cores_this_process_may_use_within_the_users_limit(monkeypatch):
    """``taskset -c 0`` and a user's OMP_NUM_THREADS=1 bound each worker's threads (before:
    cpu_count // workers, so a worker on one allowed core ran 2 threads: found by a breaker)."""
    from harness.threads import threads_per_worker

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert threads_per_worker(2) == 2 and threads_per_worker(8) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert threads_per_worker(1) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    assert threads_per_worker(1) == 4
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert threads_per_worker(1) == 1
