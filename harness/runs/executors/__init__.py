"""Where cells run: forked worker processes, the current process, or a dask cluster.

One module per concern: :mod:`~harness.runs.executors.base` (the contract every executor keeps,
the writer thread, routing by data key), :mod:`~harness.runs.executors.worker` (a forked worker
process and its channel), :mod:`~harness.runs.executors.local`,
:mod:`~harness.runs.executors.inprocess`
and :mod:`~harness.runs.executors.dask` (the three executors). :func:`make_executor` picks one.
"""

from __future__ import annotations

import os

from harness.plugins.registry import Registry
from harness.runs.executors.base import Executor

__all__ = ["auto_jobs", "make_executor"]


def auto_jobs() -> int:
    """``-j auto``: the number of CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def make_executor(
    registry: Registry,
    jobs: int,
    *,
    executor: str = "local",
    scheduler: str | None = None,
    pdb: bool = False,
) -> Executor:
    """The executor for ``harness run``: ``jobs == 0`` (or ``pdb``) runs in this process,
    ``executor='dask'`` (or a ``scheduler`` address) on dask, else forked workers.

    :raises harness.errors.SuiteError: dask asked for but not installed.
    """
    if executor == "dask" or scheduler:
        from harness.runs.executors.dask import DaskExecutor

        return DaskExecutor(registry, max(jobs, 1), scheduler=scheduler)
    if jobs == 0 or pdb:
        from harness.runs.executors.inprocess import InProcessExecutor

        return InProcessExecutor(registry, pdb=pdb)
    from harness.runs.executors.local import LocalExecutor

    return LocalExecutor(registry, jobs)
