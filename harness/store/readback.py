"""The reading side of a tracking store (:class:`StoreReader`, which
:class:`harness.store.tracking.Tracker` extends with the writing side): resume (which cells are
done), results tables, curves and logged suites read back, and the guard that turns a
SQLite store failing under any call into one :class:`StoreError` line.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from harness.components import Curve
from harness.errors import StoreError
from harness.store import layout
from harness.store.backends import Store
from harness.store.liveness import SuiteProcess
from harness.store.preflight import FileIdentity, lost_message, store_failure
from harness.store.sqlite_direct import RunRow

if TYPE_CHECKING:  # pandas loads when results are read (start-up of harness ui, server)
    import pandas as pd

__all__ = ["StoreReader", "guarded"]

_F = TypeVar("_F", bound=Callable[..., Any])


def guarded(method: _F) -> _F:
    """Turn a SQLite store failing under ``method`` (locked, read-only, full, gone) into
    one :class:`StoreError` line, and raise it too when the store's file went or turned
    read-only meanwhile (:class:`harness.store.preflight.FileIdentity`), though the call
    succeeded."""

    @functools.wraps(method)
    def guarded(self: StoreReader, *args: Any, **kwargs: Any) -> Any:
        try:
            out = method(self, *args, **kwargs)
        except StoreError:
            raise
        except Exception as err:
            what = store_failure(err) if self._file is not None else None
            if what is None or self._file is None:
                raise
            raise StoreError(self._lost(self._file.problem() or what)) from None
        problem = self._file.problem() if self._file is not None else None
        if problem is not None:
            raise StoreError(self._lost(problem))
        return out

    return guarded  # type: ignore[return-value]


class StoreReader:
    """What harness reads from a store: the base of :class:`harness.store.tracking.Tracker`,
    which opens :attr:`store` and sets :attr:`display_uri`."""

    store: Store
    display_uri: str
    _file: FileIdentity | None = None  # the SQLite file opened (to tell it went)
    _logged = 0  # cell runs this command wrote

    def _lost(self, what: str) -> str:
        return lost_message(self.display_uri, what, self._logged)

    @guarded
    def running_suites(self, experiment_id: str) -> list[SuiteProcess]:
        """The parent runs of the experiment still marked RUNNING, each with whether the
        process that started it is alive (see :class:`harness.store.liveness.SuiteProcess`)."""
        found = self.store.runs(experiment_id, tag=(layout.KIND, layout.SUITE), status="RUNNING")
        return [SuiteProcess.of(run.run_id, run.start_time, run.tags) for run in found]

    def finished_hashes(self, experiment_id: str) -> set[str]:
        """Cells that are done (resume): the latest complete run with that cell hash is
        ``ok`` or ``skipped``. A cell whose latest run failed or timed out is not done."""
        latest: dict[str, str] = {}
        for run in self._complete_cells(experiment_id, full=False):
            latest.setdefault(run.tags[layout.CELL_HASH], run.tags[layout.STATUS])
        return {h for h, status in latest.items() if status in layout.DONE}

    def latest_by_config(self, experiment_id: str) -> dict[str, dict[str, str]]:
        """``{config_hash: tags of its latest complete cell run}``: what the store knew of
        each configuration before (to say why a cell runs again)."""
        out: dict[str, dict[str, str]] = {}
        for run in self._complete_cells(experiment_id, full=False):
            config = run.tags.get(layout.CONFIG_HASH)
            if config and config not in out:
                out[config] = run.tags
        return out

    @guarded
    def _complete_cells(self, experiment_id: str, full: bool) -> list[RunRow]:
        """Complete cell runs (FINISHED or FAILED, with a status tag), the latest of each
        cell first (:func:`harness.store.layout.newest_first`). RUNNING runs are being written,
        or were cut off by a kill."""
        cells = (layout.KIND, layout.CELL)
        found = self.store.runs(experiment_id, tag=cells, status="!RUNNING", full=full)
        return layout.newest_first(run for run in found if layout.STATUS in run.tags)

    def results(self, experiment_id: str, hashes: Iterable[str] | None = None) -> pd.DataFrame:
        """One row per cell: its **latest** complete run, whatever its status ("one truth
        per cell": a failed rerun is never replaced by an older success), latest by the
        order harness numbered the runs in, not by a clock.

        Columns: :func:`harness.store.layout.result_row`: the run and the cell's params (strings, as
        MLflow stores them), metrics (latest values) and ``skipped.<metric>`` (why a
        metric was left out).

        :param hashes: keep only these cells, in this order (a suite's cells in suite
            order); default every cell of the experiment, newest first.
        """
        rows: dict[str, dict] = {}
        for run in self._complete_cells(experiment_id, full=True):
            rows.setdefault(run.tags.get(layout.CELL_HASH), layout.result_row(run))
        if hashes is not None:
            rows = {h: rows[h] for h in dict.fromkeys(hashes) if h in rows}
        import pandas as pd

        return pd.DataFrame(list(rows.values()))

    @guarded
    def curves(self, run_id: str, artifact_uri: str | None = None) -> dict[str, Curve]:
        """The full curves a cell run logged as ``curves/<metric>.csv``.

        :param artifact_uri: the run's artifact URI when known (saves a query).
        """
        out = {}
        for path in self.store.artifact_files(run_id, "curves", artifact_uri):
            if path.suffix == ".csv":
                table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
                out[path.stem] = Curve(table[:, 1], table[:, 0].astype(np.int64))
        return out

    @guarded
    def latest_suite_run(self, experiment_id: str) -> str | None:
        """The id of the newest parent (suite) run of the experiment."""
        runs = self.store.runs(experiment_id, tag=(layout.KIND, layout.SUITE))
        newest = max(runs, key=lambda r: (r.start_time or 0, r.end_time or 0), default=None)
        return None if newest is None else newest.run_id

    @guarded
    def suite_text(self, run_id: str | None) -> str | None:
        """The ``suite.yaml`` a parent run logged (the effective suite of that ``harness
        run``), or ``None`` when it has none."""
        return None if run_id is None else self.store.read_artifact(run_id, "suite.yaml")
