"""The one interface of a tracking store (:class:`Store`) and the choice of its backend,
made once when the store is opened (:func:`open_store`, as inspect_ai's
``create_recorder_for_location`` picks a log recorder from the location).

Two backends: :class:`harness.store.sqlite_store.SqliteStore` for a local SQLite database that
exists with the pinned schema (written without MLflow, about 10x cheaper per cell:
``benchmarks/test_store_speed.py``), and :class:`harness.store.mlflow_store.MlflowStore`
(MLflow's client) for everything else. Nothing outside this module and the backends knows
which one a command got.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

from harness.store.layout import RunRecord
from harness.store.mlflow_store import MlflowStore
from harness.store.preflight import check_store, sqlite_path
from harness.store.sqlite_direct import DirectSqlite, RunRow
from harness.store.sqlite_store import SqliteStore

__all__ = ["Store", "open_store"]


class Store(Protocol):
    """What harness reads and writes in a tracking store (ids are MLflow's strings,
    times are milliseconds since the epoch)."""

    def experiment(self, name: str) -> tuple[str, str] | None:
        """``(experiment id, lifecycle stage)`` of experiment ``name``, or ``None``."""

    def create_experiment(self, name: str, location: str | None, tags: Mapping[str, str]) -> str:
        """Create the experiment (artifacts under ``location``); its id, or the id of the
        one another process created first."""

    def experiment_tag(self, experiment_id: str, key: str) -> str | None: ...

    def set_experiment_tag(self, experiment_id: str, key: str, value: str) -> bool:
        """Whether the tag was written (a race with another writer may lose it)."""

    def create_run(self, experiment_id: str, run: RunRecord) -> str:
        """Write one run (:class:`harness.store.layout.RunRecord`) in its order; its id."""

    def set_tag(self, run_id: str, key: str, value: str) -> None: ...

    def set_terminated(self, run_id: str, status: str, end_time: int | None = None) -> None:
        """The run's final status (``FINISHED``, ``FAILED``, ``KILLED``), ended now by
        default."""

    def delete_run(self, run_id: str) -> None: ...

    def runs(
        self, experiment_id: str, *, tag: tuple[str, str], status: str | None = None, full=False
    ) -> Iterator[RunRow]:
        """Active runs that have tag ``(key, value)``; ``status``: only that status, or
        ``'!RUNNING'`` every other; ``full``: params and latest metrics too."""

    def run(self, run_id: str) -> RunRow:
        """One run's info columns."""

    def artifact_files(self, run_id: str, folder: str, artifact_uri: str | None) -> list[Path]:
        """Local paths of the run's artifacts in ``folder`` (downloaded if remote)."""

    def read_artifact(self, run_id: str, path: str) -> str | None:
        """The text of one artifact, or ``None`` when the run has none there."""

    def log_artifacts(self, run_id: str, folder: Path, path: str) -> None:
        """Attach a local folder to the run under ``path``."""


def open_store(uri: str, mlflow: Callable[[], MlflowStore]) -> Store:
    """The backend of the store at ``uri``, chosen once: the direct SQLite store for a
    ``sqlite:///`` database of the pinned schema (created first through ``mlflow()``
    when there is none yet), else ``mlflow()`` (MLflow's client, opened and checked).
    ``HARNESS_DIRECT_SQLITE=0`` always takes MLflow's.

    :param mlflow: opens the MLflow backend of ``uri``
        (:func:`harness.store.mlflow_store.open_client`);
        called at most once here, and again by the direct backend for what it leaves to
        MLflow, so it should return the same store each time.
    :raises StoreError: the store cannot be used (exit 2).
    """
    db = sqlite_path(uri)
    if db is None:
        return mlflow()
    check_store(uri)
    if not db.is_file() or db.stat().st_size == 0:
        mlflow()  # creates the store (migrations) under its lock
    direct = DirectSqlite.open(uri)
    return mlflow() if direct is None else SqliteStore(direct, mlflow)
