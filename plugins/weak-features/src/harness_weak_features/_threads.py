"""The one way this plugin's cells limit their threads.

The core has no public way yet (``harness.executors`` limits a worker process's threads once,
privately); until it has, every thread limit of this plugin goes through
:func:`limit_threads`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

__all__ = ["limit_threads"]


@contextlib.contextmanager
def limit_threads(n: int, *, torch: bool = False) -> Iterator[None]:
    """Run the block with at most ``n`` BLAS/OpenMP threads (threadpoolctl) and ``n``
    intra-op torch threads, restoring both counts on exit.

    Parameters
    ----------
    n : int
        Threads, >= 1.
    torch : bool, default=False
        Import torch to limit it; otherwise torch is limited only if already imported (so a
        cell that never uses torch does not import it).
    """
    from threadpoolctl import threadpool_limits

    if torch:
        import torch as _torch  # noqa: F401 - imported to be limited below
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
