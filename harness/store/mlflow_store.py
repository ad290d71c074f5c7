"""The store through MLflow's client: any tracking URI (SQLite, a tracking server,
PostgreSQL...), and the values :mod:`harness.store.sqlite_direct` leaves to MLflow's checks.

Opening it checks the store (:func:`harness.store.preflight.check_store`), creates a new SQLite
store
whole (its migrations run on a temporary file in a child process, renamed into place) under
an inter-process lock, and sets write-ahead logging on SQLite connections. Each run is
written in as few ``log_batch`` calls as MLflow's per-call limits allow, its outcome tags
last and its final status after everything else.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from harness.store.layout import RunRecord
from harness.store.preflight import BUSY_TIMEOUT_S, check_store, sqlite_path, store_lock
from harness.store.sqlite_direct import RunRow, file_uri_path

__all__ = ["MlflowStore", "open_client"]

_MAX_PARAMS, _MAX_ENTITIES = 100, 1000  # mlflow.utils.validation batch limits

for _noisy in ("alembic", "mlflow.store.db.utils", "mlflow.tracking.fluent"):
    logging.getLogger(_noisy).setLevel(logging.WARNING)


def _set_wal(dbapi_connection: Any, _record: Any) -> None:
    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.execute("PRAGMA journal_mode=WAL")
        dbapi_connection.execute("PRAGMA synchronous=NORMAL")
        dbapi_connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")


def _fast_sqlite_commits() -> None:
    """Write-ahead logging for SQLite stores: a commit then costs no fsync, which cuts the
    per-cell logging time several-fold (MLflow commits about six times per run). Readers
    such as the MLflow UI may read while harness writes. A store locked by another process
    is waited for :data:`harness.store.preflight.BUSY_TIMEOUT_S`."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    if not event.contains(Engine, "connect", _set_wal):
        event.listen(Engine, "connect", _set_wal)


def create_sqlite_atomically(uri: str) -> None:
    """Create a new SQLite store whole or not at all: MLflow's schema migrations run on a
    temporary file beside it, in a child process, and the file is renamed into place when
    they are done. A kill during creation (MLflow's SQLite migrations are not transactional)
    then leaves no half-migrated store behind, only a temporary file that the next creation
    replaces. The child process matters: a connection left open to the temporary file
    would keep using its write-ahead index after the rename, unseen by other processes
    (two runs started at once on a new store then lose each other's writes).

    :raises StoreError: the migrations failed (MLflow's message).
    """
    db = sqlite_path(uri)
    if db is None or db.exists():
        return
    db.parent.mkdir(parents=True, exist_ok=True)
    for stale in db.parent.glob(f".{db.name}.creating-*"):  # left by a killed creation
        stale.unlink(missing_ok=True)
    partial = db.with_name(f".{db.name}.creating-{os.getpid()}-{time.time_ns()}")
    code = (
        "import sys; from mlflow.tracking import MlflowClient;"
        " MlflowClient(sys.argv[1]).search_experiments(max_results=1)"
    )
    env = dict(os.environ, MLFLOW_DISABLE_TELEMETRY="true")
    done = subprocess.run(
        [sys.executable, "-c", code, f"sqlite:///{partial}"],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        from harness.errors import StoreError

        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise StoreError(f"Could not create the tracking store {db}: {' '.join(tail)}")
    connection = sqlite3.connect(partial)
    try:  # fold the write-ahead log in; no other connection to the file exists
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{partial}{suffix}").unlink(missing_ok=True)
    _set_aside_orphans(db)
    os.replace(partial, db)


def _set_aside_orphans(db: Path) -> None:
    """Rename the ``-wal``, ``-shm`` and ``-journal`` files of ``db``, which does not exist,
    to ``<name>.orphaned-<timestamp>``, saying so on stderr: they belong to a store that was
    deleted or moved (mid-run, say), and SQLite would replay them onto the new file (old
    runs back, or "database disk image is malformed"). Kept, not deleted: they may be
    needed to recover that store."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    moved = []
    for suffix in ("-wal", "-shm", "-journal"):
        orphan = Path(f"{db}{suffix}")
        if orphan.exists():
            os.replace(orphan, orphan.with_name(f"{orphan.name}.orphaned-{stamp}"))
            moved.append(orphan.name)
    if moved:
        print(
            f"harness: {', '.join(moved)} in {db.parent} belonged to a {db.name} that is gone"
            f" (deleted or moved): kept aside as <name>.orphaned-{stamp}; a new store is"
            " created.",
            file=sys.stderr,
        )


def open_client(uri: str, display_uri: str) -> Any:
    """An ``MlflowClient`` of the store at ``uri``, which is checked first
    (:func:`harness.store.preflight.check_store`: a missing driver, an unreachable server or refused
    credentials raise :class:`StoreError` within seconds), then created or migrated under
    an inter-process lock (SQLite).

    :param display_uri: ``uri`` as it may be printed (password masked).
    :raises StoreError: the store cannot be used (exit 2).
    """
    check_store(uri)
    from mlflow.tracking import MlflowClient  # slow import: only when the store is used

    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # no phoning home from runs
    # harness prints its own run links (password-free); MLflow's "View run at" lines
    # would repeat the URI for every run.
    os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
    if uri.startswith("sqlite:"):
        _fast_sqlite_commits()
    with store_lock(uri):  # a fresh store is created (migrated) by one process
        create_sqlite_atomically(uri)
        try:
            client = MlflowClient(uri)
            client.search_experiments(max_results=1)
        except Exception as err:  # e.g. another MLflow's schema: say so, exit 2
            if not uri.startswith("sqlite:"):
                raise
            from harness.errors import StoreError

            first = str(err).strip().splitlines()[0] if str(err).strip() else repr(err)
            raise StoreError(
                f"MLflow cannot open the store {display_uri}: {first} If another"
                " MLflow version made it, back it up and run 'mlflow db upgrade"
                f" {display_uri}', or pass another --tracking-uri."
            ) from None
    return client


def _row(run: Any) -> RunRow:
    info = run.info
    return RunRow(
        info.run_id,
        info.experiment_id,
        info.status,
        info.start_time,
        info.end_time,
        info.artifact_uri,
        dict(run.data.tags),
        dict(run.data.params),
        dict(run.data.metrics),
    )


class MlflowStore:
    """The :class:`harness.store.backends.Store` of ``client`` (an ``MlflowClient``, see
    :func:`open_client`)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    # -- experiments ------------------------------------------------------------------

    def experiment(self, name: str) -> tuple[str, str] | None:
        found = self.client.get_experiment_by_name(name)
        return None if found is None else (found.experiment_id, found.lifecycle_stage)

    def create_experiment(self, name: str, location: str | None, tags: Mapping[str, str]) -> str:
        """Create experiment ``name``; its id. Another process creating it first (the
        get-then-create race) is no error: its id is returned."""
        from mlflow.exceptions import MlflowException

        try:
            return self.client.create_experiment(name, artifact_location=location, tags=tags)
        except MlflowException:
            found = self.client.get_experiment_by_name(name)
            if found is None:
                raise
            return found.experiment_id

    def experiment_tag(self, experiment_id: str, key: str) -> str | None:
        return self.client.get_experiment(experiment_id).tags.get(key)

    def set_experiment_tag(self, experiment_id: str, key: str, value: str) -> bool:
        """Set the tag, once more if it fails: two runs starting at once on a tracking
        server can both insert it, and the second insert fails (PostgreSQL's
        UniqueViolation, seen once in 13 concurrent starts); the retry updates the row the
        other one wrote. Returns whether the tag was written (a second failure is left to
        the caller: the tag only names the UI's saved view)."""
        from mlflow.exceptions import MlflowException

        for attempt in (1, 2):
            try:
                self.client.set_experiment_tag(experiment_id, key, value)
                return True
            except MlflowException:
                if attempt == 2:
                    return False
                time.sleep(0.2)
        return False

    # -- runs -------------------------------------------------------------------------

    def create_run(self, experiment_id: str, run: RunRecord) -> str:
        """Write ``run``: created with its tags, artifacts, then params, metrics and the
        outcome tags (last), then its final status. A kill at any moment leaves a RUNNING
        run without outcome, which readers ignore; a write MLflow refuses deletes the run
        and raises (no half run)."""
        created = self.client.create_run(
            experiment_id, start_time=run.start_time, tags=run.tags, run_name=run.name
        )
        run_id = created.info.run_id
        try:
            for path, text in run.artifacts.items():
                self.client.log_text(run_id, text, path)
            self._log_batch(run_id, run.metrics, run.params, run.outcome)
        except Exception:
            with contextlib.suppress(Exception):
                self.client.delete_run(run_id)
            raise
        if run.status != "RUNNING":
            self.client.set_terminated(run_id, run.status, end_time=run.end_time)
        return run_id

    def _log_batch(
        self,
        run_id: str,
        metrics: list[tuple[str, float, int, int]],
        params: Mapping[str, str],
        last_tags: Mapping[str, str],
    ) -> None:
        """Metrics and params in as few calls as MLflow's per-call limits allow;
        ``last_tags`` go with the last call (after every metric and param has landed)."""
        from mlflow.entities import Metric, Param, RunTag

        pending_params = [Param(k, v) for k, v in params.items()]
        pending_metrics = [Metric(*point) for point in metrics]
        tags = [RunTag(k, v) for k, v in last_tags.items()]
        while True:
            batch_params, pending_params = (
                pending_params[:_MAX_PARAMS],
                pending_params[_MAX_PARAMS:],
            )
            room = _MAX_ENTITIES - len(batch_params) - len(tags)
            batch_metrics, pending_metrics = pending_metrics[:room], pending_metrics[room:]
            last = not pending_params and not pending_metrics
            self.client.log_batch(
                run_id,
                metrics=batch_metrics,
                params=batch_params,
                tags=tags if last else [],
                synchronous=True,
            )
            if last:
                return

    def set_tag(self, run_id: str, key: str, value: str) -> None:
        self.client.set_tag(run_id, key, value)

    def set_terminated(self, run_id: str, status: str, end_time: int | None = None) -> None:
        self.client.set_terminated(run_id, status, end_time=end_time)

    def delete_run(self, run_id: str) -> None:
        self.client.delete_run(run_id)

    def runs(
        self, experiment_id: str, *, tag: tuple[str, str], status: str | None = None, full=False
    ) -> Iterator[RunRow]:
        """Active runs with tag ``(key, value)`` (``status``: only that status, or
        ``'!RUNNING'`` every other), newest start time first, every page of them."""
        query = f"tags.`{tag[0]}` = '{tag[1]}'"
        if status is not None:
            op = "!=" if status.startswith("!") else "="
            query += f" and attributes.status {op} '{status.removeprefix('!')}'"
        token = None
        while True:
            page = self.client.search_runs(
                [experiment_id],
                query,
                max_results=1000,
                order_by=["attributes.start_time DESC", "attributes.end_time DESC"],
                page_token=token,
            )
            yield from (_row(run) for run in page)
            token = page.token
            if not token:
                return

    def run(self, run_id: str) -> RunRow:
        return _row(self.client.get_run(run_id))

    # -- artifacts --------------------------------------------------------------------

    def artifact_files(self, run_id: str, folder: str, artifact_uri: str | None) -> list[Path]:
        """Local paths of the run's artifacts in ``folder``: read in place for a local
        artifact store (no copy, no listing call), else downloaded."""
        root = artifact_uri or self.client.get_run(run_id).info.artifact_uri
        if root.startswith("file:"):
            return sorted((file_uri_path(root) / folder).glob("*"))
        return [
            Path(self.client.download_artifacts(run_id, info.path))
            for info in self.client.list_artifacts(run_id, folder)
        ]

    def read_artifact(self, run_id: str, path: str) -> str | None:
        try:
            return Path(self.client.download_artifacts(run_id, path)).read_text()
        except Exception:  # no such artifact (MLflow raises its own types)
            return None

    def log_artifacts(self, run_id: str, folder: Path, path: str) -> None:
        self.client.log_artifacts(run_id, str(folder), path)
