"""Everything that talks to MLflow: experiments, suite and cell runs, resume, read-back.

Layout (docs/design.md, "MLflow layout"): one experiment per suite name; one parent run per
``harness run``
(tag ``harness.kind=suite``); one child run per cell (``harness.kind=cell``,
``mlflow.parentRunId``) with the cell's params, metrics (curves as step metrics, at most
``CURVE_POINTS`` points, plus the full curve as ``curves/<metric>.csv``), status tags,
``error.txt`` for a failed cell and ``warnings.txt`` for a cell that raised warnings. Only
the driver process writes; values go in ``log_batch`` calls that respect MLflow's
per-call limits.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from harness.components import Curve
from harness.sqlite_direct import DirectSqlite, RunRow, UnsupportedWriteError, file_uri_path
from harness.store import sqlite_path

if TYPE_CHECKING:  # pandas loads when results are read (start-up of harness ui, server)
    import pandas as pd

    from harness.cell import CellResult
    from harness.suite import Cell, Suite

__all__ = [
    "DEFAULT_URI",
    "SuiteProcess",
    "Tracker",
    "logged_params",
    "resolve_uri",
    "run_name",
    "ui_link",
    "ui_path",
    "ui_view_tag",
]

DEFAULT_URI = "sqlite:///mlflow/mlflow.db"
_MAX_PARAMS, _MAX_ENTITIES = 100, 1000  # mlflow.utils.validation batch limits
# Step points logged per curve (docs/design.md: at most 1,000). MLflow's SQL store spends ~0.3 ms
# per point, so 1,000 points would cost more than most cells; the full curve is an artifact.
CURVE_POINTS = 250
HEARTBEAT_S = 30.0  # a driver tags its parent run this often (harness.heartbeat)
STALE_HEARTBEAT_S = 180.0  # a driver on another host is dead after this long unheard
_RUN_STATUS = {"ok": "FINISHED", "skipped": "FINISHED", "failed": "FAILED", "timeout": "FAILED"}

for _noisy in ("alembic", "mlflow.store.db.utils", "mlflow.tracking.fluent"):
    logging.getLogger(_noisy).setLevel(logging.WARNING)


def resolve_uri(uri: str | None = None) -> str:
    """``uri``, else ``MLFLOW_TRACKING_URI``, else ``sqlite:///mlflow/mlflow.db`` (cwd)."""
    return uri or os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_URI


def sqlite_store_missing(uri: str) -> bool:
    """Whether ``uri`` is a SQLite store whose file does not exist yet or is empty (an
    empty file is no store either: opening it through MLflow would write the schema).
    Always ``False`` for a server or database URI."""
    db = sqlite_path(uri)
    return db is not None and (not db.exists() or db.stat().st_size == 0)


UI_VIEW = "harness-metrics"  # id of the saved runs-table view harness writes and links to
_UI_VIEW_TAG = f"mlflow.sharedViewState.{UI_VIEW}"  # MLflow UI 3.x: saved views are these tags


def ui_path(experiment_id: str) -> str:
    """The MLflow UI page (after the host) listing an experiment's runs with metric columns.

    ``workflowType=machine_learning`` selects MLflow 3's model-training views (runs table,
    group by, parallel coordinates) instead of its default GenAI overview. The runs table
    shows metric columns only once they are picked (or a saved view picks them), so the
    page opens the saved view ``viewStateShareKey=harness-metrics`` that
    :func:`ui_view_tag` writes; without that tag the UI says the view does not exist and
    shows its plain runs table. Source: MLflow 3.17 UI bundle (``viewStateShareKey``,
    ``mlflow.sharedViewState.<id>``), read from mlflow/server/js; not in MLflow's docs.
    """
    page = f"/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
    return f"{page}&viewStateShareKey={UI_VIEW}"


def ui_view_tag(metric_keys: Iterable[str], created_ms: int | None = None) -> tuple[str, str]:
    """The experiment tag ``(key, value)`` of the saved view :func:`ui_path` opens: one
    flat row per run, sorted by run name, with a column per metric in ``metric_keys``
    (``time.*`` left out). MLflow 3.17's UI format (its "Views" menu writes the same): a
    JSON envelope ``{name, createdAt, updatedAt, state}`` whose ``state`` is the JSON of
    the search facets and runs-table state; sorting by anything but start time turns off
    the parent/child nesting that hides the cells under a collapsed suite run. Columns
    past MLflow's 20,000-character limit on an experiment tag are left out."""
    now = int(time.time() * 1000)
    columns: list[str] = []
    for key in sorted({k for k in metric_keys if not k.startswith("time.")}):
        if sum(len(c) + 8 for c in columns) + len(key) > 18_000:
            break
        columns.append(f"metrics.`{key}`")
    state = {"orderByKey": "tags.`mlflow.runName`", "orderByAsc": True}
    state["selectedColumns"] = columns
    envelope = {
        "name": "harness: runs with metrics",
        "createdAt": created_ms or now,
        "updatedAt": now,
        "state": json.dumps(state),
    }
    return _UI_VIEW_TAG, json.dumps(envelope)


def ui_link(uri: str, experiment_id: str, run_id: str | None = None) -> str:
    """The UI address of an experiment (or one run of it): the tracking server itself for
    an ``http(s)://`` store, else ``harness ui``'s default ``http://127.0.0.1:5000``.
    Credentials in the URI are left out."""
    base = "http://127.0.0.1:5000"
    if uri.startswith(("http://", "https://")):
        parts = urllib.parse.urlsplit(uri)
        base = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        base += parts.path.rstrip("/")
    if run_id is None:
        return base + ui_path(experiment_id)
    return f"{base}/#/experiments/{experiment_id}/runs/{run_id}"


def git_commit() -> str | None:
    """The commit checked out in the current directory, if it is a git work tree."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _set_wal(dbapi_connection: Any, _record: Any) -> None:
    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.execute("PRAGMA journal_mode=WAL")
        dbapi_connection.execute("PRAGMA synchronous=NORMAL")


def _create_sqlite_atomically(uri: str) -> None:
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
    os.replace(partial, db)


def _fast_sqlite_commits() -> None:
    """Write-ahead logging for SQLite stores: a commit then costs no fsync, which cuts the
    per-cell logging time several-fold (MLflow commits about six times per run). Readers
    such as the MLflow UI may read while harness writes."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    if not event.contains(Engine, "connect", _set_wal):
        event.listen(Engine, "connect", _set_wal)


class Tracker:
    """The MLflow store of one ``harness`` command.

    Parameters
    ----------
    uri : str, optional
        Tracking URI (see :func:`resolve_uri`). For a ``sqlite:///`` store the folder is
        created and artifacts go to ``artifacts/`` beside the database file.
    """

    def __init__(self, uri: str | None = None) -> None:
        from harness import secrets

        # http(s) credentials go to MLflow's environment variables, never into a printed
        # URI; any other password is masked in this process' output from now on.
        self.uri = secrets.move_http_credentials(resolve_uri(uri))
        secrets.watch(self.uri)
        db = sqlite_path(self.uri)
        self.artifact_root = None
        if db is not None:
            try:
                db.parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                from harness.errors import StoreError

                raise StoreError(f"Cannot create the store folder {db.parent}: {err}.") from None
            self.artifact_root = (db.parent / "artifacts").resolve().as_uri()

    @property
    def display_uri(self) -> str:
        """The tracking URI with any password masked: the form to print."""
        from harness.secrets import mask

        return mask(self.uri)

    def open(self) -> Tracker:
        """Open the store now (see :attr:`client`) and return this tracker.

        An existing SQLite store of the pinned schema is opened without MLflow
        (:mod:`harness.sqlite_direct`); any other store through MLflow's client.

        :raises StoreError: the store cannot be used (exit 2).
        """
        if self.direct is None:
            _ = self.client
        return self

    @property
    def direct(self) -> DirectSqlite | None:
        """The store read and written without MLflow (:mod:`harness.sqlite_direct`), or
        ``None`` where MLflow's client must be used. Probed again once the client has
        created a new store."""
        if "_direct" not in self.__dict__ or (
            self.__dict__["_direct"] is None and "client" in self.__dict__
        ):
            from harness.store import check_store

            if sqlite_path(self.uri) is not None:
                check_store(self.uri)
            self.__dict__["_direct"] = DirectSqlite.open(self.uri)
            if self.__dict__["_direct"] is None and "client" not in self.__dict__:
                self.__dict__.pop("_direct")  # the client may create it: look again then
                return None
        return self.__dict__["_direct"]

    @cached_property
    def client(self) -> Any:
        """The ``MlflowClient`` of the store, opened on first use.

        The store is checked first (:func:`harness.store.check_store`: a missing driver,
        an unreachable server or refused credentials raise :class:`StoreError` within
        seconds), then created or migrated under an inter-process lock (SQLite).
        """
        from harness.store import check_store, store_lock

        check_store(self.uri)
        from mlflow.tracking import MlflowClient  # slow import: only when the store is used

        os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # no phoning home from runs
        # harness prints its own run links (password-free); MLflow's "View run at" lines
        # would repeat the URI for every run.
        os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
        if self.uri.startswith("sqlite:"):
            _fast_sqlite_commits()
        with store_lock(self.uri):  # a fresh store is created (migrated) by one process
            _create_sqlite_atomically(self.uri)
            try:
                client = MlflowClient(self.uri)
                client.search_experiments(max_results=1)
            except Exception as err:  # e.g. another MLflow's schema: say so, exit 2
                if not self.uri.startswith("sqlite:"):
                    raise
                from harness.errors import StoreError

                first = str(err).strip().splitlines()[0] if str(err).strip() else repr(err)
                raise StoreError(
                    f"MLflow cannot open the store {self.display_uri}: {first} If another"
                    " MLflow version made it, back it up and run 'mlflow db upgrade"
                    f" {self.display_uri}', or pass another --tracking-uri."
                ) from None
        return client

    # -- experiments and suite runs ---------------------------------------------------

    def experiment_id(
        self, name: str, create: bool = False, refuse_deleted: bool = False
    ) -> str | None:
        """The id of experiment ``name``; created (artifacts under the store) if asked.

        :param refuse_deleted: raise as ``create`` does for a deleted experiment, without
            creating anything (``harness run --dry-run``: what a run would meet).
        :raises StoreError: ``create`` (or ``refuse_deleted``) and the experiment exists but
            is deleted (runs logged there would be invisible): how to restore it or free the
            name.
        """
        location = f"{self.artifact_root}/{name}" if self.artifact_root else None
        # MLflow 3's UI shows GenAI pages unless an experiment says it holds model runs.
        tags = {"mlflow.experimentKind": "custom_model_development"}
        if self.direct is not None:
            found = self.direct.experiment(name)
            if found is None and create and location is not None:
                with contextlib.suppress(UnsupportedWriteError):
                    found = (self.direct.create_experiment(name, location, tags), "active")
            if found is not None or not create:
                return self._active(name, *found, create or refuse_deleted) if found else None
        experiment = self.client.get_experiment_by_name(name)
        if experiment is not None:
            stage, refuse = experiment.lifecycle_stage, create or refuse_deleted
            return self._active(name, experiment.experiment_id, stage, refuse)
        if not create:
            return None
        from mlflow.exceptions import MlflowException

        try:
            return self.client.create_experiment(name, artifact_location=location, tags=tags)
        except MlflowException:  # another process created it first (get-then-create race)
            experiment = self.client.get_experiment_by_name(name)
            if experiment is None:
                raise
            return experiment.experiment_id

    def _active(self, name: str, experiment_id: str, stage: str, create: bool) -> str | None:
        """``experiment_id`` when the experiment is active; a deleted one reads as absent,
        and running into it is refused with the way out."""
        if stage == "active":
            return experiment_id
        if not create:
            return None
        from harness.errors import StoreError

        raise StoreError(
            f"The experiment '{name}' (id {experiment_id}) is deleted in {self.display_uri};"
            " runs logged there would not show. Restore it (MLFLOW_TRACKING_URI="
            f"'{self.display_uri}' mlflow experiments restore --experiment-id {experiment_id}),"
            f" remove it for good (mlflow gc --backend-store-uri '{self.display_uri}'), or"
            " give the suite another name."
        )

    def claim_suite(self, experiment_id: str, parent_id: str, name: str = "") -> None:
        """Make sure no other live ``harness run`` is running this suite (experiment).

        Called right after this run's parent ``parent_id`` was created: of two live runs of
        one suite, the one whose parent run started later (ties: both) gives way, so two
        runs started at once never both run cells. Dead drivers' runs do not count
        (:meth:`running_suites`). The losing parent run is deleted.

        :param name: the suite's (experiment's) name, said in the refusal: with includes it
            may be another suite than the one started.
        :raises StoreError: naming the suite, the other process (pid, host) and its run.
        """
        from harness.errors import StoreError

        others = [p for p in self.running_suites(experiment_id) if p.run_id != parent_id]
        for other in others:
            if not other.alive:
                continue
            if self._start_time(other.run_id) <= self._start_time(parent_id):
                self.delete_run(parent_id)
                raise StoreError(
                    self.already_running(
                        other,
                        "Nothing was run; wait for it to finish (or stop it), then run again:"
                        " cells it finished are kept and not run twice.",
                        name,
                    )
                )

    def already_running(self, other: SuiteProcess, then: str, name: str = "") -> str:
        """The message that refuses a run because ``other`` (a live parent run of
        :meth:`running_suites`) is running the suite ``name`` (this run's own or one it
        includes), followed by ``then`` (what to do)."""
        which = f"Suite '{name}'" if name else "This suite"
        return (
            f"{which} is already running in {self.display_uri}: {other.describe()}"
            f" (run {other.run_id}). {then}"
        )

    def start_suite(
        self,
        experiment_id: str,
        suite: Suite,
        settings: Mapping[str, Any],
        commit: str | None = None,
    ) -> str:
        """Create the parent run of one ``harness run`` and log the expanded suite.

        The run is tagged with the driver's host, pid and process start time
        (``harness.host``, ``harness.pid``, ``harness.pid_start``) and a heartbeat
        (:meth:`heartbeat`), so a later run can tell a live suite run from a dead one.

        :param commit: the git commit of the code, tagged ``mlflow.source.git.commit``.
        """
        tags = {
            "harness.kind": "suite",
            "harness.suite_file": str(suite.path),
            **_process_tags(),
            "harness.heartbeat": str(int(time.time())),
        }
        if commit:
            tags["mlflow.source.git.commit"] = commit
        name = time.strftime(f"{suite.name}-%Y%m%d-%H%M%S")
        params = {"suite": str(suite.path), "cells": str(len(suite.cells))}
        params |= {k: str(v) for k, v in settings.items()}
        text = yaml.safe_dump(suite.expanded, sort_keys=False)
        run_id = None
        if self.direct is not None:
            with contextlib.suppress(UnsupportedWriteError):
                run_id = self.direct.create_run(
                    experiment_id,
                    self._artifact_location(experiment_id),
                    run_name=name,
                    start_time=int(time.time() * 1000),
                    tags=tags,
                    params={k: v[:6000] for k, v in params.items()},
                    artifacts={"suite.yaml": text},
                )
        if run_id is None:
            run_id = self.client.create_run(experiment_id, tags=tags, run_name=name).info.run_id
            self._log_batch(run_id, [], params)
            self.client.log_text(run_id, text, "suite.yaml")
        self._update_ui_view(experiment_id, set())  # the view ui_path opens exists from now
        return run_id

    def end_suite(self, run_id: str, status: str) -> None:
        """Close the parent run: ``FINISHED``, ``FAILED`` or ``KILLED``."""
        if self.direct is not None:
            self.direct.set_terminated(run_id, status)
        else:
            self.client.set_terminated(run_id, status)

    def delete_run(self, run_id: str) -> None:
        """Mark a run deleted (MLflow's ``delete_run``; rare, so always through MLflow)."""
        self.client.delete_run(run_id)

    def heartbeat(self, run_id: str, every_s: float = HEARTBEAT_S) -> _Heartbeat:
        """Start a daemon thread that tags ``harness.heartbeat`` (Unix seconds) on the
        parent run every ``every_s`` seconds, until ``.stop()``: how a driver on another
        host is known to be alive."""
        direct = self.direct
        set_tag = direct.set_tag if direct is not None else self.client.set_tag
        return _Heartbeat(set_tag, run_id, every_s)

    def running_suites(self, experiment_id: str) -> list[SuiteProcess]:
        """The parent runs of the experiment still marked RUNNING, each with whether the
        process that started it is alive (see :class:`SuiteProcess`)."""
        if self.direct is not None:
            return [
                SuiteProcess.of(run.run_id, run.start_time, run.tags)
                for run in self.direct.runs(experiment_id, kind="suite", status="RUNNING")
            ]
        runs = self.client.search_runs(
            [experiment_id],
            "tags.`harness.kind` = 'suite' and attributes.status = 'RUNNING'",
            max_results=1000,
        )
        return [SuiteProcess.of(r.info.run_id, r.info.start_time, r.data.tags) for r in runs]

    def _start_time(self, run_id: str) -> int:
        if self.direct is not None:
            return self.direct.run_start_time(run_id) or 0
        return self.client.get_run(run_id).info.start_time or 0

    def _artifact_location(self, experiment_id: str) -> str:
        """The experiment's artifact location (read once per experiment)."""
        known = self.__dict__.setdefault("_locations", {})
        if experiment_id not in known:
            assert self.direct is not None
            known[experiment_id] = self.direct.artifact_location(experiment_id)
        return known[experiment_id]

    def reap_dead_suites(self, experiment_id: str) -> list[str]:
        """Clean up after drivers that died (kill -9, power loss): mark their RUNNING parent
        runs KILLED and delete cell runs left half-written (still RUNNING) under a parent
        that is not alive. Returns one line per parent run marked KILLED.
        """
        lines, live = [], set()
        for process in self.running_suites(experiment_id):
            if process.alive:
                live.add(process.run_id)
                continue
            self.end_suite(process.run_id, "KILLED")
            lines.append(
                f"Marked run {process.run_id} KILLED: left RUNNING by {process.describe()},"
                " which is no longer alive."
            )
        if self.direct is not None:
            half_written = [
                (run.run_id, run.tags)
                for run in self.direct.runs(experiment_id, kind="cell", status="RUNNING")
            ]
        else:
            found = self.client.search_runs(
                [experiment_id],
                "tags.`harness.kind` = 'cell' and attributes.status = 'RUNNING'",
                max_results=1000,
            )
            half_written = [(run.info.run_id, run.data.tags) for run in found]
        for run_id, tags in half_written:
            if tags.get("mlflow.parentRunId") not in live:
                self.delete_run(run_id)
        return lines

    # -- cells ------------------------------------------------------------------------

    def finished_hashes(self, experiment_id: str) -> set[str]:
        """Cells that are done (resume): the latest complete run with that cell hash is
        ``ok`` or ``skipped``. A cell whose latest run failed or timed out is not done."""
        latest: dict[str, str] = {}
        for tags in self._cell_tags(experiment_id):
            latest.setdefault(tags["harness.cell_hash"], tags["harness.status"])
        return {h for h, status in latest.items() if status in ("ok", "skipped")}

    def latest_by_config(self, experiment_id: str) -> dict[str, dict[str, str]]:
        """``{config_hash: tags of its latest complete cell run}``: what the store knew of
        each configuration before (to say why a cell runs again)."""
        out: dict[str, dict[str, str]] = {}
        for tags in self._cell_tags(experiment_id):
            config = tags.get("harness.config_hash")
            if config and config not in out:
                out[config] = tags
        return out

    def _cell_tags(self, experiment_id: str) -> Iterator[dict[str, str]]:
        """The ``harness.*`` tags of every complete cell run, newest first. On a SQL store
        (SQLite, PostgreSQL) one query on the runs and tags tables (resume reads 3,000
        cells in a few ms, where ``search_runs`` loads every param and metric too); on a
        tracking server, ``search_runs``."""
        if self.direct is not None:
            for run in self.direct.runs(experiment_id, kind="cell", status="!RUNNING"):
                if "harness.status" in run.tags:
                    yield run.tags
            return
        store = getattr(getattr(self.client, "_tracking_client", None), "store", None)
        session_maker = getattr(store, "ManagedSessionMaker", None)
        if session_maker is None:
            for run in self._search_cells(experiment_id):
                yield dict(run.data.tags)
            return
        from mlflow.store.tracking.dbmodels.models import SqlRun, SqlTag

        with session_maker() as session:
            rows = (
                session.query(
                    SqlRun.run_uuid, SqlRun.start_time, SqlRun.end_time, SqlTag.key, SqlTag.value
                )
                .join(SqlTag, SqlTag.run_uuid == SqlRun.run_uuid)
                .filter(
                    SqlRun.experiment_id == int(experiment_id),
                    SqlRun.lifecycle_stage == "active",
                    SqlRun.status != "RUNNING",
                    SqlTag.key.like("harness.%"),
                )
                .all()
            )
        runs: dict[str, dict[str, Any]] = {}
        for run_id, start, end, key, value in rows:
            entry = runs.setdefault(run_id, {"order": (start or 0, end or 0), "tags": {}})
            entry["tags"][key] = value
        for entry in sorted(runs.values(), key=lambda e: e["order"], reverse=True):
            tags = entry["tags"]
            if tags.get("harness.kind") == "cell" and "harness.status" in tags:
                yield tags

    def log_cell(
        self,
        experiment_id: str,
        parent_id: str,
        cell: Cell,
        result: CellResult,
        plugins: Mapping[str, str],
        commit: str | None,
    ) -> str:
        """Write one cell's child run; returns its run id."""
        method_plugin = cell.versions[1][0]
        tags = {
            "mlflow.parentRunId": parent_id,
            "harness.kind": "cell",
            "harness.cell_hash": cell.cell_hash,
            "harness.config_hash": cell.config_hash,
            "harness.metrics_hash": cell.metrics_hash,
            "harness.plugin": method_plugin,
            "harness.plugin_version": plugins.get(method_plugin, cell.versions[1][1]),
            "harness.dataset_plugin": cell.versions[0][0],
        }
        tags |= {f"harness.code.{plugin}": digest for plugin, digest in cell.code}
        if commit:
            tags["mlflow.source.git.commit"] = commit
        outcome = {"harness.status": result.status}
        if result.reason:
            outcome["harness.reason"] = result.reason[:5000]
        outcome |= {f"harness.skipped.{m}": why[:5000] for m, why in result.skipped_metrics.items()}
        artifacts = {f"curves/{name}.csv": _curve_csv(c) for name, c in result.curves.items()}
        if result.error:
            artifacts["error.txt"] = result.error
        if result.warnings:
            artifacts["warnings.txt"] = "\n".join(result.warnings) + "\n"
        params = logged_params(cell.params(), result.described)
        run_id = None
        if self.direct is not None:  # one transaction: the run lands whole or not at all
            with contextlib.suppress(UnsupportedWriteError):
                run_id = self.direct.create_run(
                    experiment_id,
                    self._artifact_location(experiment_id),
                    run_name=run_name(cell),
                    start_time=result.start_ms,
                    end_time=result.end_ms,
                    status=_RUN_STATUS[result.status],
                    tags=tags | outcome,
                    params={k: str(v)[:6000] for k, v in params.items()},
                    metrics=_metric_points(result),
                    artifacts=artifacts,
                )
        if run_id is None:
            run_id = self._log_cell_with_mlflow(experiment_id, cell, result, tags, outcome, params)
        self._update_ui_view(experiment_id, {*result.metrics, *result.curves})
        return run_id

    def _log_cell_with_mlflow(
        self,
        experiment_id: str,
        cell: Cell,
        result: CellResult,
        tags: dict[str, str],
        outcome: dict[str, str],
        params: dict[str, Any],
    ) -> str:
        """:meth:`log_cell` through MLflow's client (a server, PostgreSQL, or a value
        :mod:`harness.sqlite_direct` leaves to MLflow's checks)."""
        # The outcome (status, reason, skips) is written last, with the metrics, and the run
        # is marked terminated after everything else: a kill at any moment leaves a RUNNING
        # run with no status, which readers ignore and the next start deletes.
        run = self.client.create_run(
            experiment_id, start_time=result.start_ms, tags=tags, run_name=run_name(cell)
        )
        run_id = run.info.run_id
        try:
            for name, curve in result.curves.items():
                self.client.log_text(run_id, _curve_csv(curve), f"curves/{name}.csv")
            if result.error:
                self.client.log_text(run_id, result.error, "error.txt")
            if result.warnings:
                self.client.log_text(run_id, "\n".join(result.warnings) + "\n", "warnings.txt")
            self._log_batch(run_id, self._metrics(result), params, outcome)
        except Exception:  # refused by MLflow (a 300-character key, say): leave no half run
            with contextlib.suppress(Exception):
                self.client.delete_run(run_id)
            raise
        self.client.set_terminated(run_id, _RUN_STATUS[result.status], end_time=result.end_ms)
        return run_id

    def _update_ui_view(self, experiment_id: str, metric_keys: set[str]) -> None:
        """Keep the saved UI view that :func:`ui_path` opens (:func:`ui_view_tag`) showing
        every metric logged to the experiment: the tag is written when missing (without it
        the UI drops the link's ``workflowType`` and opens the GenAI overview) and rewritten
        only when a cell logs a metric it lacks (the first cell of a process, then rarely)."""
        views = self.__dict__.setdefault("_ui_views", {})  # experiment id -> (keys, created)
        if experiment_id not in views:  # start from the stored view (an earlier run's)
            if self.direct is not None:
                stored = self.direct.experiment_tag(experiment_id, _UI_VIEW_TAG)
            else:
                stored = self.client.get_experiment(experiment_id).tags.get(_UI_VIEW_TAG)
            try:
                envelope = json.loads(stored)
                columns = json.loads(envelope["state"])["selectedColumns"]
                keys = {c.removeprefix("metrics.`").removesuffix("`") for c in columns}
                views[experiment_id] = (keys, int(envelope["createdAt"]))
            except (TypeError, ValueError, KeyError):  # none yet, or not harness's
                views[experiment_id] = (set(), None)
        shown, created = views[experiment_id]
        if created is None or not metric_keys <= shown:  # none stored, or new metrics
            shown |= metric_keys
            created = created or int(time.time() * 1000)
            key, value = ui_view_tag(shown, created)
            written = True
            try:
                if self.direct is None:
                    raise UnsupportedWriteError
                self.direct.set_experiment_tag(experiment_id, key, value)
            except UnsupportedWriteError:
                written = self._set_experiment_tag_racing(experiment_id, key, value)
            if written:
                views[experiment_id] = (shown, created)
            else:  # read and write it again at the next cell
                views.pop(experiment_id, None)

    def _set_experiment_tag_racing(self, experiment_id: str, key: str, value: str) -> bool:
        """``set_experiment_tag`` through MLflow, once more if it fails: two runs starting at
        once on a tracking server can both insert the tag, and the second insert fails
        (PostgreSQL's UniqueViolation, seen once in 13 concurrent starts); the retry
        updates the row the other one wrote. The tag only names the UI's saved view, so a
        second failure is left for the next cell rather than ending the run: returns whether
        the tag was written."""
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

    def _metrics(self, result: CellResult) -> list[Any]:
        from mlflow.entities import Metric

        return [Metric(*point) for point in _metric_points(result)]

    def _log_batch(
        self,
        run_id: str,
        metrics: list[Any],
        params: Mapping[str, str],
        last_tags: Mapping[str, str] | None = None,
    ) -> None:
        """Log metrics and params in as few calls as MLflow's per-call limits allow;
        ``last_tags`` go with the last call (after every metric and param has landed)."""
        from mlflow.entities import Param, RunTag

        pending_params = [Param(k, str(v)[:6000]) for k, v in params.items()]
        pending_metrics = list(metrics)
        tags = [RunTag(k, v) for k, v in (last_tags or {}).items()]
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

    # -- reading results back -----------------------------------------------------------

    def _search_cells(self, experiment_id: str) -> Iterator[Any]:
        """Complete cell runs of the experiment (FINISHED or FAILED, with a status tag),
        newest first. RUNNING runs are being written, or were cut off by a kill."""
        token = None
        query = "tags.`harness.kind` = 'cell' and attributes.status != 'RUNNING'"
        while True:
            page = self.client.search_runs(
                [experiment_id],
                query,
                max_results=1000,
                order_by=["attributes.start_time DESC", "attributes.end_time DESC"],
                page_token=token,
            )
            for run in page:
                if "harness.status" in run.data.tags:
                    yield run
            token = page.token
            if not token:
                return

    def _latest_rows(self, experiment_id: str) -> Iterator[dict]:
        """One row per cell hash: its latest complete run, whatever its status."""
        seen: set[str] = set()
        if self.direct is not None:
            found = self.direct.runs(experiment_id, kind="cell", status="!RUNNING", full=True)
            runs: Iterable[RunRow] = (run for run in found if "harness.status" in run.tags)
        else:
            runs = (
                RunRow(
                    r.info.run_id,
                    r.info.experiment_id,
                    r.info.status,
                    r.info.start_time,
                    r.info.end_time,
                    r.info.artifact_uri,
                    dict(r.data.tags),
                    dict(r.data.params),
                    dict(r.data.metrics),
                )
                for r in self._search_cells(experiment_id)
            )
        for run in runs:
            tags = run.tags
            cell_hash = tags.get("harness.cell_hash")
            if cell_hash in seen:
                continue
            seen.add(cell_hash)
            yield {
                "cell_hash": cell_hash,
                "status": tags.get("harness.status"),
                "run_id": run.run_id,
                "experiment_id": run.experiment_id,
                "artifact_uri": run.artifact_uri,
                "reason": tags.get("harness.reason", ""),
                "plugin": tags.get("harness.plugin"),
                "plugin_version": tags.get("harness.plugin_version"),
                "dataset_plugin": tags.get("harness.dataset_plugin"),
                "git_commit": tags.get("mlflow.source.git.commit"),
                "start_time": run.start_time,
                **run.params,
                **run.metrics,
                **{
                    f"skipped.{k.removeprefix('harness.skipped.')}": v
                    for k, v in tags.items()
                    if k.startswith("harness.skipped.")
                },
            }

    def results(self, experiment_id: str, hashes: Iterable[str] | None = None) -> pd.DataFrame:
        """One row per cell: its **latest** complete run, whatever its status ("one truth
        per cell": a failed rerun is never replaced by an older success).

        Columns: ``cell_hash, status, run_id, artifact_uri, reason``, the cell's params
        (strings, as MLflow stores them), metrics (latest values) and ``skipped.<metric>``
        (why a metric was left out).

        :param hashes: keep only these cells, in this order (a suite's cells in suite
            order); default every cell of the experiment, newest first.
        """
        rows = {row["cell_hash"]: row for row in self._latest_rows(experiment_id)}
        if hashes is not None:
            rows = {h: rows[h] for h in dict.fromkeys(hashes) if h in rows}
        import pandas as pd

        return pd.DataFrame(list(rows.values()))

    def suite_results(
        self, suite: Suite, experiment_ids: Mapping[str, str] | None = None
    ) -> pd.DataFrame:
        """:meth:`results` of every cell of a suite, read from each of its experiments (its
        own and its included suites', :meth:`harness.suite.Suite.experiments`), in suite
        order. Cells that never ran are absent; empty when none ran.

        :param experiment_ids: ``{experiment name: id}`` where an experiment is known by id
            (one renamed in the store); the others are looked up by name.
        """
        import pandas as pd

        frames = []
        for name, cells in suite.experiments().items():
            experiment = (experiment_ids or {}).get(name) or self.experiment_id(name)
            if experiment is not None:
                frames.append(self.results(experiment, [c.cell_hash for c in cells]))
        frames = [f for f in frames if not f.empty]
        if not frames:
            return pd.DataFrame()
        order = {c.cell_hash: i for i, c in enumerate(suite.cells)}
        table = pd.concat(frames, ignore_index=True)
        return table.iloc[table["cell_hash"].map(order).argsort()].reset_index(drop=True)

    def curves(self, run_id: str, artifact_uri: str | None = None) -> dict[str, Curve]:
        """The full curves a cell run logged as ``curves/<metric>.csv``.

        :param artifact_uri: the run's artifact URI when known (saves a query).
        """
        root = artifact_uri or self.client.get_run(run_id).info.artifact_uri
        if root.startswith("file:"):  # local store: read in place (no copy, no listing RPC)
            files = sorted((file_uri_path(root) / "curves").glob("*.csv"))
        else:
            files = [
                Path(self.client.download_artifacts(run_id, info.path))
                for info in self.client.list_artifacts(run_id, "curves")
            ]
        out = {}
        for path in files:
            table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
            out[path.stem] = Curve(table[:, 1], table[:, 0].astype(np.int64))
        return out

    def latest_suite_run(self, experiment_id: str) -> str | None:
        """The id of the newest parent (suite) run of the experiment."""
        if self.direct is not None:
            newest = next(self.direct.runs(experiment_id, kind="suite"), None)
            return None if newest is None else newest.run_id
        runs = self.client.search_runs(
            [experiment_id],
            "tags.`harness.kind` = 'suite'",
            max_results=1,
            order_by=["attributes.start_time DESC"],
        )
        return runs[0].info.run_id if runs else None

    def suite_text(self, run_id: str | None) -> str | None:
        """The ``suite.yaml`` a parent run logged (the effective suite of that ``harness
        run``), or ``None`` when it has none."""
        if run_id is None:
            return None
        root = self.direct.artifact_uri(run_id) if self.direct is not None else None
        if root is not None and root.startswith("file:"):
            path = file_uri_path(root) / "suite.yaml"
            return path.read_text() if path.exists() else None
        try:
            return Path(self.client.download_artifacts(run_id, "suite.yaml")).read_text()
        except Exception:  # no such artifact (MLflow raises its own types)
            return None

    def set_tags(self, run_id: str, tags: Mapping[str, str]) -> None:
        """Set tags on a run (a suite's parent run: its claims' verdicts)."""
        for key, value in tags.items():
            if self.direct is not None:
                self.direct.set_tag(run_id, key, value)
            else:
                self.client.set_tag(run_id, key, value)

    def log_folder(self, run_id: str, folder: Path, artifact_path: str) -> None:
        """Attach a local folder to a run (the report): copied in place for a local
        artifact store (as MLflow's local artifact repository does), else uploaded by
        MLflow."""
        root = self.direct.artifact_uri(run_id) if self.direct is not None else None
        if root is not None and root.startswith("file:"):
            target = file_uri_path(root) / artifact_path
            shutil.copytree(folder, target, dirs_exist_ok=True)
            return
        self.client.log_artifacts(run_id, str(folder), artifact_path)


def connection_lost(err: BaseException) -> bool:
    """Whether ``err`` (or an exception it was raised from) says the tracking server stopped
    answering, after MLflow's own retries: a ``requests``/``urllib3`` connection error, or
    MLflow's "API request to ... failed" wrapping one. Not a refusal of the values (an
    MLflow error with a status code), which fails only the cell that sent them."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        names = {klass.__name__ for klass in type(err).__mro__}
        module = type(err).__module__
        if module.startswith(("requests", "urllib3")) and names & {
            "ConnectionError",
            "MaxRetryError",
            "Timeout",
            "NewConnectionError",
        }:
            return True
        text = str(err)
        if "MlflowException" in names and "API request to" in text and "failed" in text:
            return "Max retries exceeded" in text or "Connection" in text or "timed out" in text
        err = err.__cause__ or err.__context__
    return False


def run_name(cell: Cell) -> str:
    """A readable, unique run name: ``dataset[p=v]-method[p=v]-s<seed>-<hash[:6]>`` with
    every param (defaults filled in). The part before ``-s<seed>`` is at most 200
    characters; a longer one is cut and ends with ``…`` (the params are on the run)."""

    def part(name: str, params: Mapping[str, Any]) -> str:
        inner = ",".join(f"{k}={v}" for k, v in params.items())
        return f"{name}[{inner}]" if inner else name

    text = f"{part(cell.dataset, cell.dataset_params)}-{part(cell.method, cell.method_params)}"
    if len(text) > 200:
        text = text[:199] + "…"
    return f"{text}-s{cell.seed}-{cell.cell_hash[:6]}"


def _process_tags() -> dict[str, str]:
    import psutil

    me = psutil.Process()
    return {
        "harness.host": socket.gethostname(),
        "harness.pid": str(me.pid),
        "harness.pid_start": f"{me.create_time():.2f}",
    }


@dataclass(frozen=True)
class SuiteProcess:
    """The driver of a RUNNING parent run.

    Alive when, on this host, its pid exists with the same start time; on another host,
    when its heartbeat is younger than ``STALE_HEARTBEAT_S``.
    """

    run_id: str
    host: str
    pid: int | None
    alive: bool

    @classmethod
    def of(cls, run_id: str, start_time: int | None, tags: Mapping[str, str]) -> SuiteProcess:
        """The driver of run ``run_id`` (started at ``start_time``, ms) from its tags."""
        import psutil

        host = tags.get("harness.host", "")
        pid = int(tags["harness.pid"]) if tags.get("harness.pid", "").isdigit() else None
        if host == socket.gethostname() and pid is not None:
            try:
                started = psutil.Process(pid).create_time()
                alive = abs(started - float(tags.get("harness.pid_start", started))) < 1.0
            except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
                alive = False
        else:
            beat = float(tags.get("harness.heartbeat", (start_time or 0) / 1000))
            alive = time.time() - beat < STALE_HEARTBEAT_S
        return cls(run_id, host, pid, alive)

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host or 'an unknown host'}"


class _Heartbeat:
    def __init__(self, set_tag: Any, run_id: str, every_s: float) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, args=(set_tag, run_id, every_s), daemon=True
        )
        self._thread.start()

    def _beat(self, set_tag: Any, run_id: str, every_s: float) -> None:
        while not self._stop.wait(every_s):
            with contextlib.suppress(Exception):  # a missed beat is not worth a crash
                set_tag(run_id, "harness.heartbeat", str(int(time.time())))

    def stop(self) -> None:
        self._stop.set()


def _metric_points(result: CellResult) -> list[tuple[str, float, int, int]]:
    """A cell's metrics as ``(key, value, timestamp_ms, step)``: each scalar metric, the
    phase times as ``time.<phase>`` (seconds), and each curve thinned to ``CURVE_POINTS``
    step metrics."""
    ts = result.end_ms
    out = [(k, float(v), ts, 0) for k, v in result.metrics.items() if k not in result.curves]
    out += [(f"time.{k}", float(v), ts, 0) for k, v in result.seconds.items()]
    for name, curve in result.curves.items():
        thin = curve.thinned(CURVE_POINTS)
        out += [(name, float(v), ts, int(s)) for s, v in zip(thin.steps, thin.values, strict=True)]
    return out


def logged_params(params: dict[str, Any], described: dict[str, str]) -> dict[str, Any]:
    """A cell's params with its dataset's ``describe()`` facts as ``dataset.<key>``.

    A fact never replaces a param: one whose key is a param of the dataset with another
    value (``describe`` returning ``{"n": "sample"}`` where ``n`` is 10) is logged as
    ``dataset.described.<key>`` instead; otherwise cells of different params would read
    as one configuration in every table.
    """
    out = dict(params)
    for key, value in described.items():
        name = f"dataset.{key}"
        if name in params and str(params[name]) != str(value):
            name = f"dataset.described.{key}"
        out.setdefault(name, value)
    return out


def _curve_csv(curve: Curve) -> str:
    buffer = io.StringIO()
    buffer.write("step,value\n")
    np.savetxt(
        buffer, np.column_stack([curve.steps, curve.values]), delimiter=",", fmt=["%d", "%.9g"]
    )
    return buffer.getvalue()
