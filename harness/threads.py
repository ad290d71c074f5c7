"""The one way to limit the threads of a cell's numerical libraries (BLAS/OpenMP through
threadpoolctl, and torch's intra-op pool when torch is imported)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator


def limit_process_threads(n: int) -> None:
    """Limit this whole process to ``n`` BLAS/OpenMP threads and ``n`` torch threads, for
    good: what a worker process does once, so that ``-j`` workers do not oversubscribe the
    cores. torch already imported is limited now; torch and BLAS libraries imported later read
    ``OMP_NUM_THREADS`` (and MKL's, OpenBLAS's) at their first use, set here to ``n`` (without
    it, a worker that imports torch in its first cell ran it on every core: a 1,000-step
    label-noise CNN took 20.7 s with 2 threads per worker, 1.3 s with 1, on 2 shared cores).

    Raises ``ValueError`` if ``n`` < 1. Source: threadpoolctl's ``threadpool_limits``;
    ``torch.set_num_threads``; torch's intra-op pool sized by ``OMP_NUM_THREADS``.
    """
    if n < 1:
        raise ValueError(f"threads must be >= 1, got {n}")
    import os

    from threadpoolctl import threadpool_limits

    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[variable] = str(n)

    threadpool_limits(limits=n)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(n)


def threads_per_worker(workers: int) -> int:
    """BLAS/torch threads for each of ``workers`` processes sharing this machine: the cores
    this process may run on (its CPU affinity, as ``taskset`` sets it) split among them, at
    most the user's own ``OMP_NUM_THREADS`` when set, at least 1.

    Source: ``os.sched_getaffinity`` (Linux; ``os.cpu_count`` elsewhere).
    """
    import os

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    threads = max(1, cores // max(1, workers))
    try:
        asked = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:  # unset or not a number: not the user's limit
        return threads
    return max(1, min(threads, asked)) if asked >= 1 else threads


@contextlib.contextmanager
def limit_threads(n: int, *, torch: bool = False) -> Iterator[None]:
    """Run the block with at most ``n`` BLAS/OpenMP threads and ``n`` intra-op torch threads,
    restoring both counts on exit (also when the block raises).

    Parameters
    ----------
    n : int
        Threads, >= 1 (``ValueError`` otherwise).
    torch : bool, default=False
        Import torch to limit it; otherwise torch is limited only if already imported, so a
        cell that never uses torch does not pay for importing it.

    Source: threadpoolctl's ``threadpool_limits`` (restores on exit); ``torch.set_num_threads``.
    """
    if n < 1:
        raise ValueError(f"threads must be >= 1, got {n}")
    from threadpoolctl import threadpool_limits

    if torch:
        import torch as _torch  # noqa: F401 - imported so that it is limited below
    module = sys.modules.get("torch")
    before = module.get_num_threads() if module is not None else None
    with threadpool_limits(limits=n):
        if module is not None:
            module.set_num_threads(n)
        try:
            yield
        finally:
            if module is not None:
                module.set_num_threads(before)


def fork() -> int:
    """``os.fork()`` with Ctrl-C and SIGTERM held while it runs: a signal that arrives
    during the fork is raised once it has returned in the parent. Without this, a signal
    handled inside one of the fork's hooks (``os.register_at_fork``: logging's, threading's,
    run in the parent and the child) raises there, where Python prints "Exception ignored"
    and drops it: the run went on after Ctrl-C. The child gets the parent's handlers back
    and drops what it held (the parent acts on it); it sets its own. Outside the main
    thread, plain ``os.fork()``."""
    import os
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return os.fork()
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in held}
    try:
        pid = os.fork()
    finally:
        for signum, handler in previous.items():
            if handler is not None:  # None: a handler not set from Python, left as it is
                signal.signal(signum, handler)
    if pid and caught:
        for signum in dict.fromkeys(caught):
            signal.raise_signal(signum)  # the parent's own handler, now, in its own code
    return pid
