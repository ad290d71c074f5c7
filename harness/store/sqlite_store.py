"""The store of an existing local SQLite database of the pinned schema, read and written
without MLflow (:mod:`harness.store.sqlite_direct`): a no-op cell's run costs about a tenth of
MLflow's create/log_batch/terminate (``benchmarks/test_store_speed.py``).

A write the direct writer does not make (:class:`UnsupportedWriteError`: a key or value
MLflow must check) and a run's deletion go through MLflow's client on the same database,
opened on first need, so what lands is what MLflow would write.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from harness.store.layout import RunRecord
from harness.store.sqlite_direct import DirectSqlite, RunRow, UnsupportedWriteError, file_uri_path

__all__ = ["SqliteStore"]


class SqliteStore:
    """The :class:`harness.store.backends.Store` of ``direct``; ``fallback()`` gives the
    :class:`harness.store.mlflow_store.MlflowStore` of the same database."""

    def __init__(self, direct: DirectSqlite, fallback: Callable[[], Any]) -> None:
        self.direct = direct
        self._fallback = fallback
        self._locations: dict[str, str] = {}

    # -- experiments ------------------------------------------------------------------

    def experiment(self, name: str) -> tuple[str, str] | None:
        return self.direct.experiment(name)

    def create_experiment(self, name: str, location: str | None, tags: Mapping[str, str]) -> str:
        if location is not None:
            with contextlib.suppress(UnsupportedWriteError):
                return self.direct.create_experiment(name, location, tags)
        return self._fallback().create_experiment(name, location, tags)

    def experiment_tag(self, experiment_id: str, key: str) -> str | None:
        return self.direct.experiment_tag(experiment_id, key)

    def set_experiment_tag(self, experiment_id: str, key: str, value: str) -> bool:
        try:
            self.direct.set_experiment_tag(experiment_id, key, value)
            return True
        except UnsupportedWriteError:
            return self._fallback().set_experiment_tag(experiment_id, key, value)

    # -- runs -------------------------------------------------------------------------

    def create_run(self, experiment_id: str, run: RunRecord) -> str:
        """``run`` in one transaction: it lands whole or not at all."""
        if experiment_id not in self._locations:  # read once per experiment
            self._locations[experiment_id] = self.direct.artifact_location(experiment_id)
        try:
            return self.direct.create_run(
                experiment_id,
                self._locations[experiment_id],
                run_name=run.name,
                start_time=run.start_time,
                end_time=run.end_time,
                status=run.status,
                tags=run.tags | run.outcome,
                params=run.params,
                metrics=run.metrics,
                artifacts=run.artifacts,
            )
        except UnsupportedWriteError:
            return self._fallback().create_run(experiment_id, run)

    def set_tag(self, run_id: str, key: str, value: str) -> None:
        try:
            self.direct.set_tag(run_id, key, value)
        except UnsupportedWriteError:
            self._fallback().set_tag(run_id, key, value)

    def set_terminated(self, run_id: str, status: str, end_time: int | None = None) -> None:
        self.direct.set_terminated(run_id, status, end_time)

    def delete_run(self, run_id: str) -> None:
        """Through MLflow (rare: a refused start, a half-written run)."""
        self._fallback().delete_run(run_id)

    def runs(
        self, experiment_id: str, *, tag: tuple[str, str], status: str | None = None, full=False
    ) -> Iterator[RunRow]:
        return self.direct.runs(experiment_id, tag=tag, status=status, full=full)

    def run(self, run_id: str) -> RunRow:
        """The run's info columns (start and end time, status, artifact URI); no tags."""
        row = self.direct.connection().execute(
            "SELECT run_uuid, experiment_id, status, start_time, end_time, artifact_uri"
            " FROM runs WHERE run_uuid = ?",
            (run_id,),
        )
        found = row.fetchone()
        if found is None:
            raise KeyError(f"no run {run_id}")
        return RunRow(found[0], str(found[1]), *found[2:])

    # -- artifacts (always under a local folder here) ---------------------------------

    def _folder(self, run_id: str, artifact_uri: str | None = None) -> Path | None:
        root = artifact_uri or self.direct.artifact_uri(run_id)
        return file_uri_path(root) if root and root.startswith("file:") else None

    def artifact_files(self, run_id: str, folder: str, artifact_uri: str | None) -> list[Path]:
        root = self._folder(run_id, artifact_uri)
        if root is None:
            return self._fallback().artifact_files(run_id, folder, artifact_uri)
        return sorted((root / folder).glob("*"))

    def read_artifact(self, run_id: str, path: str) -> str | None:
        root = self._folder(run_id)
        if root is None:
            return self._fallback().read_artifact(run_id, path)
        return (root / path).read_text() if (root / path).is_file() else None

    def log_artifacts(self, run_id: str, folder: Path, path: str) -> None:
        """Copied in place, as MLflow's local artifact repository does."""
        root = self._folder(run_id)
        if root is None:
            self._fallback().log_artifacts(run_id, folder, path)
        else:
            shutil.copytree(folder, root / path, dirs_exist_ok=True)
