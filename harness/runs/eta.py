"""A run's remaining time, from the measured cost of its finished cells: one estimate that
the progress bar and the progress lines both show."""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable

from harness.runs.events import CellReport
from harness.suites.loading import Cell

__all__ = ["Eta", "configuration"]


def configuration(cell: Cell) -> str:
    """What cells of one cost share: task, dataset, method and their params (not the seed)."""
    params = json.dumps([cell.dataset_params, cell.method_params], sort_keys=True, default=str)
    return f"{cell.task}/{cell.dataset}/{cell.method}/{params}"


class Eta:
    """The remaining time of a run, in seconds (a listener of :mod:`harness.runs.events`).

    Each cell still to run is estimated at the mean measured cost (wall time, start to
    end) of the finished cells of its configuration (:func:`configuration`); a cell whose
    configuration has none yet at the mean over every finished cell. The sum, less the
    time the running cells have already spent (at most their estimate), divided by the
    ``workers`` working at once, is the estimate. A run whose cells cost 0.1 s in one
    configuration and four minutes in another is estimated by both, not by the elapsed
    time over the cells done.

    Parameters
    ----------
    workers : int, default=1
        Cells running at once (``-j``).
    running : callable, optional
        ``() -> [(cell, seconds since it started)]``: the executor's ``running``.
    """

    def __init__(
        self,
        workers: int = 1,
        running: Callable[[], list[tuple[Cell, float]]] | None = None,
    ) -> None:
        self.workers = max(1, workers)
        self.running = running or list
        self._left: dict[str, Cell] = {}
        self._costs: dict[str, list[float]] = defaultdict(list)
        self._lock = threading.Lock()  # the writer thread adds, the display reads

    def harness_run_start(self, cells: Iterable[Cell]) -> None:
        """Take the cells to run."""
        with self._lock:
            self._left = {cell.cell_hash: cell for cell in cells}

    def harness_cell_logreport(self, report: CellReport) -> None:
        """Take one finished cell's measured cost."""
        if self._left.pop(report.cell.cell_hash, None) is None:
            return
        result = report.result
        self._costs[configuration(report.cell)].append(
            max(0, result.end_ms - result.start_ms) / 1e3
        )

    def seconds(self) -> float | None:
        """The estimate; 0 when no cell is left, None before any cell finished."""
        with self._lock:
            left = dict(self._left)
            costs = {key: (sum(c), len(c)) for key, c in self._costs.items() if c}
        if not left:
            return 0.0
        if not costs:
            return None
        overall = sum(s for s, _ in costs.values()) / sum(n for _, n in costs.values())
        total = 0.0
        spent = {cell.cell_hash: seconds for cell, seconds in self.running()}
        for cell_hash, cell in left.items():
            cost, n = costs.get(configuration(cell), (overall, 1))
            estimate = cost / n
            total += max(0.0, estimate - spent.get(cell_hash, 0.0))
        return total / min(self.workers, len(left))
