"""MLflow's SQLite tracking schema, read and written with the standard library's ``sqlite3``.

Why: importing MLflow's SQL store costs about 2 s (``python -X importtime -c "import
mlflow.store.tracking.sqlalchemy_store"``), and MLflow writes one run in three sessions
with some twenty queries. ``harness run`` on a SQLite store that already exists does
everything it needs here instead, without importing MLflow: each cell's run is one
transaction (whole or not at all), so a no-op cell costs less than MLflow's own
create/log_batch/terminate loop.

What is written is exactly what MLflow's ``SqlAlchemyStore`` writes for the same calls
(rows of ``experiments``, ``experiment_tags``, ``runs``, ``tags``, ``params``, ``metrics``
and ``latest_metrics``), and it is only used where that is known to hold:

- the database's schema revision (``alembic_version``) is :data:`SCHEMA_REVISION`, the
  head of the MLflow release pinned in ``requirements.txt``; ``tests/store/test_sqlite_direct.py``
  checks that the installed MLflow's head is that revision and that runs written here read
  back through ``MlflowClient`` identically to runs MLflow wrote;
- every key is in a conservative subset of what MLflow accepts (:func:`plain_key`) and every
  metric is finite, else :class:`UnsupportedWriteError` is raised and the caller uses
  MLflow's client, which validates (and may refuse) as before;
- artifacts are written only under ``file:`` artifact locations, before the run's row
  exists (a kill leaves at worst files no run points to, never a run without its files).

Anything else (a new store to create, another revision, an ``http(s)://`` server, a
PostgreSQL URI) goes through MLflow. ``HARNESS_DIRECT_SQLITE=0`` turns this off.
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
import threading
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.store.preflight import BUSY_TIMEOUT_S, sqlite_path

__all__ = [
    "SCHEMA_REVISION",
    "DirectSqlite",
    "RunRow",
    "UnsupportedWriteError",
    "file_uri_path",
    "plain_key",
]

SCHEMA_REVISION = "dc11669786a5"
"""``alembic_version`` of MLflow 3.17.2's tracking schema (``mlflow db upgrade`` head)."""

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.\-/ :]{1,250}")
_MAX_PARAM, _MAX_TAG = 6000, 8000  # mlflow.utils.validation MAX_PARAM_VAL/MAX_TAG_VAL_LENGTH


class UnsupportedWriteError(Exception):
    """This write is not one :class:`DirectSqlite` makes; use MLflow's client for it."""


def plain_key(key: str) -> bool:
    """True when MLflow accepts ``key`` as a metric, param or tag name on every platform
    (``mlflow.utils.validation``: those characters, at most 250, no path that normalises
    to another name); a subset of what it accepts, so a key passing here never fails
    there."""
    if not _PLAIN_KEY.fullmatch(key) or key.startswith("/") or key.endswith("/"):
        return False
    parts = key.split("/")
    return not any(p in ("", ".", "..") for p in parts)


@dataclass
class RunRow:
    """One run as read back: ``info`` columns, tags, params and latest metric values."""

    run_id: str
    experiment_id: str
    status: str
    start_time: int | None
    end_time: int | None
    artifact_uri: str
    tags: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)


def file_uri_path(uri: str) -> Path:
    """The local path of a ``file:`` URI, percent-escapes decoded (``sp%20ace`` -> ``sp ace``),
    as MLflow's ``local_file_uri_to_path`` reads it."""
    return Path(urllib.request.url2pathname(urllib.parse.urlparse(uri).path))


def _now_ms() -> int:
    return int(time.time() * 1000)


class DirectSqlite:
    """Read and write an MLflow SQLite store at ``path`` without MLflow (see the module).

    Use :meth:`open`, which returns ``None`` where this must not be used. One connection
    per thread (the writer and heartbeat threads write while the main thread reads);
    SQLite's locking serialises writers across processes (a busy store is waited for up
    to :data:`harness.store.preflight.BUSY_TIMEOUT_S`, then ``database is locked`` is raised).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()

    @classmethod
    def open(cls, uri: str) -> DirectSqlite | None:
        """The direct store of ``uri``, or ``None``: not a ``sqlite:///`` URI, no database
        there yet, another schema revision, or ``HARNESS_DIRECT_SQLITE=0``."""
        switch = os.environ.get("HARNESS_DIRECT_SQLITE", "1").strip().lower()
        path = sqlite_path(uri)
        if switch in ("0", "false", "no", "off") or path is None:
            return None
        if not path.is_file():
            return None
        store = cls(path)
        try:
            row = store.connection().execute("SELECT version_num FROM alembic_version").fetchone()
        except sqlite3.Error:
            return None
        return store if row and row[0] == SCHEMA_REVISION else None

    def connection(self) -> sqlite3.Connection:
        """This thread's connection to the database (opened on first use, WAL mode)."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_S)
            db.execute("PRAGMA journal_mode=WAL")  # as harness's MLflow engine sets it
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            self._local.db = db
        return db

    def _write(self, statements: Iterable[tuple[str, Sequence]]) -> None:
        """Run ``statements`` in one transaction: all of them land, or none."""
        db = self.connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            for sql, args in statements:
                db.execute(sql, args)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    # -- experiments ------------------------------------------------------------------

    def experiment(self, name: str) -> tuple[str, str] | None:
        """``(experiment_id, lifecycle_stage)`` of experiment ``name`` (``'active'`` or
        ``'deleted'``); ``None`` when there is none."""
        row = (
            self.connection()
            .execute(
                "SELECT experiment_id, lifecycle_stage FROM experiments"
                " WHERE name = ? AND workspace = 'default'",
                (name,),
            )
            .fetchone()
        )
        return None if row is None else (str(row[0]), row[1])

    def create_experiment(self, name: str, artifact_location: str, tags: Mapping[str, str]) -> str:
        """Create experiment ``name`` (as ``SqlAlchemyStore.create_experiment`` with an
        explicit artifact location); returns its id. Another process creating it first is
        not an error: its id is returned."""
        if not artifact_location.startswith("file:") or not all(map(plain_key, tags)):
            raise UnsupportedWriteError("artifact location or tags MLflow must check")
        now = _now_ms()
        db = self.connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            cursor = db.execute(
                "INSERT INTO experiments (name, artifact_location, lifecycle_stage,"
                " creation_time, last_update_time, workspace) VALUES (?, ?, 'active', ?, ?,"
                " 'default')",
                (name, artifact_location, now, now),
            )
            experiment_id = cursor.lastrowid
            for key, value in tags.items():
                db.execute(
                    "INSERT INTO experiment_tags (key, value, experiment_id) VALUES (?, ?, ?)",
                    (key, value, experiment_id),
                )
        except sqlite3.IntegrityError:  # created meanwhile by another process
            db.execute("ROLLBACK")
            found = self.experiment(name)
            if found is None:
                raise
            return found[0]  # (its lifecycle is checked by the caller)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return str(experiment_id)

    def experiment_tag(self, experiment_id: str, key: str) -> str | None:
        row = (
            self.connection()
            .execute(
                "SELECT value FROM experiment_tags WHERE experiment_id = ? AND key = ?",
                (int(experiment_id), key),
            )
            .fetchone()
        )
        return None if row is None else row[0]

    def set_experiment_tag(self, experiment_id: str, key: str, value: str) -> None:
        if not plain_key(key) or len(value) > 20_000:  # MLflow's experiment tag value limit
            raise UnsupportedWriteError(key)
        self._write(
            [
                (
                    "INSERT INTO experiment_tags (key, value, experiment_id) VALUES (?, ?, ?)"
                    " ON CONFLICT (key, experiment_id) DO UPDATE SET value = excluded.value",
                    (key, value, int(experiment_id)),
                )
            ]
        )

    # -- runs -------------------------------------------------------------------------

    def create_run(
        self,
        experiment_id: str,
        artifact_location: str,
        *,
        run_name: str,
        start_time: int,
        tags: Mapping[str, str],
        params: Mapping[str, str] = {},
        metrics: Sequence[tuple[str, float, int, int]] = (),
        status: str = "RUNNING",
        end_time: int | None = None,
        artifacts: Mapping[str, str] = {},
    ) -> str:
        """Write one run whole, in one transaction; returns its id.

        Rows as MLflow's ``create_run`` + ``log_batch`` (+ ``set_terminated`` when
        ``status`` is final) write them: the run name also as the ``mlflow.runName`` tag,
        user ``unknown``, artifacts under ``<artifact_location>/<run_id>/artifacts``, every
        metric ``(key, value, timestamp_ms, step)`` in ``metrics`` and the latest one per key
        (largest ``(step, timestamp, value)``) in ``latest_metrics``. ``artifacts`` maps a
        relative path to its text, written before the run exists.

        :raises UnsupportedWriteError: a key outside :func:`plain_key`, a non-finite metric, a
            value over MLflow's length limits, or a non-``file:`` artifact location.
        """
        tags = {**tags, "mlflow.runName": run_name}
        _check_run(artifact_location, run_name, tags, params, metrics)
        run_id = uuid.uuid4().hex
        artifact_uri = f"{artifact_location.rstrip('/')}/{run_id}/artifacts"
        folder = file_uri_path(artifact_uri)
        for relative, text in artifacts.items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        row = (run_id, run_name, status, start_time, end_time, artifact_uri, int(experiment_id))
        self._write(_run_statements(row, tags, params, metrics))
        return run_id

    def set_tag(self, run_id: str, key: str, value: str) -> None:
        if not plain_key(key) or len(value) > _MAX_TAG:
            raise UnsupportedWriteError(key)
        self._write(
            [
                (
                    "INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)"
                    " ON CONFLICT (key, run_uuid) DO UPDATE SET value = excluded.value",
                    (key, value, run_id),
                )
            ]
        )

    def set_terminated(self, run_id: str, status: str, end_time: int | None = None) -> None:
        """As ``MlflowClient.set_terminated``: the run's status, and its end time (now by
        default)."""
        self._write(
            [
                (
                    "UPDATE runs SET status = ?, end_time = ? WHERE run_uuid = ?",
                    (status, end_time or _now_ms(), run_id),
                )
            ]
        )

    # -- reading ----------------------------------------------------------------------

    def runs(
        self,
        experiment_id: str,
        *,
        tag: tuple[str, str],
        status: str | None = None,
        full: bool = False,
    ) -> Iterator[RunRow]:
        """Active runs of the experiment that have tag ``(key, value)``, newest start time
        first. ``status``: only runs with that status; ``'!RUNNING'``: every other.
        ``full``: with params and latest metrics too (else tags only)."""
        where = [
            "r.experiment_id = ?",
            "r.lifecycle_stage = 'active'",
            "EXISTS (SELECT 1 FROM tags k WHERE k.run_uuid = r.run_uuid"
            " AND k.key = ? AND k.value = ?)",
        ]
        args: list = [int(experiment_id), *tag]
        if status is not None:
            where.append("r.status != ?" if status.startswith("!") else "r.status = ?")
            args.append(status.removeprefix("!"))
        db = self.connection()
        runs: dict[str, RunRow] = {}
        for row in db.execute(
            "SELECT r.run_uuid, r.experiment_id, r.status, r.start_time, r.end_time,"
            f" r.artifact_uri FROM runs r WHERE {' AND '.join(where)}"
            " ORDER BY r.start_time DESC, r.end_time DESC, r.run_uuid",
            args,
        ):
            runs[row[0]] = RunRow(row[0], str(row[1]), row[2], row[3], row[4], row[5])
        if not runs:
            return
        tables = [("tags", "tags")] + ([("params", "params")] if full else [])
        sub = f"SELECT r.run_uuid FROM runs r WHERE {' AND '.join(where)}"
        for table, attribute in tables:
            for run_id, key, value in db.execute(
                f"SELECT run_uuid, key, value FROM {table} WHERE run_uuid IN ({sub})", args
            ):
                if run_id in runs:
                    getattr(runs[run_id], attribute)[key] = value
        if full:
            for run_id, key, value, is_nan in db.execute(
                "SELECT run_uuid, key, value, is_nan FROM latest_metrics"
                f" WHERE run_uuid IN ({sub})",
                args,
            ):
                if run_id in runs:
                    runs[run_id].metrics[key] = math.nan if is_nan else value
        yield from runs.values()

    def _value(self, sql: str, key: str | int) -> Any:
        row = self.connection().execute(sql, (key,)).fetchone()
        return None if row is None else row[0]

    def artifact_uri(self, run_id: str) -> str | None:
        return self._value("SELECT artifact_uri FROM runs WHERE run_uuid = ?", run_id)

    def run_start_time(self, run_id: str) -> int | None:
        return self._value("SELECT start_time FROM runs WHERE run_uuid = ?", run_id)

    def artifact_location(self, experiment_id: str) -> str:
        """The experiment's artifact location (``''`` when it has none)."""
        sql = "SELECT artifact_location FROM experiments WHERE experiment_id = ?"
        return self._value(sql, int(experiment_id)) or ""


def _check_run(
    artifact_location: str,
    run_name: str,
    tags: Mapping[str, str],
    params: Mapping[str, str],
    metrics: Sequence[tuple[str, float, int, int]],
) -> None:
    """:raises UnsupportedWriteError: a run :meth:`DirectSqlite.create_run` leaves to MLflow."""
    values_ok = all(len(v) <= _MAX_TAG for v in tags.values()) and all(
        len(v) <= _MAX_PARAM for v in params.values()
    )
    keys_ok = all(plain_key(k) for k in (*tags, *params, *(m[0] for m in metrics)))
    finite = all(math.isfinite(m[1]) for m in metrics)
    if not (values_ok and keys_ok and finite and len(run_name) <= 250):
        raise UnsupportedWriteError("a key, value or metric MLflow must check")
    if not artifact_location.startswith("file:"):
        raise UnsupportedWriteError("artifacts outside a local folder")


def _run_statements(
    row: tuple,
    tags: Mapping[str, str],
    params: Mapping[str, str],
    metrics: Sequence[tuple[str, float, int, int]],
) -> list[tuple[str, Sequence]]:
    """The rows of one run: ``runs`` (``row``: id, name, status, start, end, artifact URI,
    experiment id), its tags, params, metrics and ``latest_metrics``."""
    run_id = row[0]
    latest: dict[str, tuple[int, int, float]] = {}
    for key, value, timestamp, step in metrics:
        latest[key] = max(latest.get(key, (step, timestamp, value)), (step, timestamp, value))
    statements: list[tuple[str, Sequence]] = [
        (
            "INSERT INTO runs (run_uuid, name, source_type, source_name, entry_point_name,"
            " user_id, status, start_time, end_time, source_version, lifecycle_stage,"
            " artifact_uri, experiment_id, deleted_time) VALUES (?, ?, 'UNKNOWN', '', '',"
            " 'unknown', ?, ?, ?, '', 'active', ?, ?, NULL)",
            row,
        )
    ]
    statements += [
        ("INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)", (k, v, run_id))
        for k, v in tags.items()
    ]
    statements += [
        ("INSERT INTO params (key, value, run_uuid) VALUES (?, ?, ?)", (k, v, run_id))
        for k, v in params.items()
    ]
    statements += [
        (
            "INSERT OR IGNORE INTO metrics (key, value, timestamp, run_uuid, step, is_nan)"
            " VALUES (?, ?, ?, ?, ?, 0)",
            (key, float(value), timestamp, run_id, step),
        )
        for key, value, timestamp, step in metrics
    ]
    statements += [
        (
            "INSERT INTO latest_metrics (key, value, timestamp, step, is_nan, run_uuid)"
            " VALUES (?, ?, ?, ?, 0, ?)",
            (key, float(value), timestamp, step, run_id),
        )
        for key, (step, timestamp, value) in latest.items()
    ]
    return statements
