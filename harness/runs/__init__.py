"""Runs: the driver loop, one cell in a process, and where cells run.

- :func:`run_suite` and :func:`planned_states`: which cells run and why, results logged as
  they end (and a dry run's view of the same);
- :func:`execute_cell` and :class:`CellResult`: one cell in this process and what it produced;
- :func:`make_executor` and :class:`Executor`: forked workers (``-j N``), this process
  (``-j 0``) or a dask cluster.

The modules behind them: ``runner``, ``cell``, ``events``, ``eta``, ``executors/``.
"""

from harness.runs.cell import CellResult, execute_cell
from harness.runs.executors import Executor, make_executor
from harness.runs.runner import planned_states, run_suite

__all__ = ["CellResult", "Executor", "execute_cell", "make_executor", "planned_states", "run_suite"]
