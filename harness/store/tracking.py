"""The tracking store of one ``harness`` command (:class:`Tracker`): suites' parent runs,
cell runs, resume and results read back, through one :class:`harness.store.backends.Store`
chosen when the store is opened.

What is written where is :mod:`harness.store.layout` (docs/design.md, "MLflow layout"). Only
the driver process writes. A SQLite store that locks, fills, turns read-only or disappears
while harness uses it raises :class:`StoreError` (exit 2) saying what happened, what was
kept and how to resume.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

import yaml

from harness.errors import StoreError
from harness.store import layout
from harness.store.backends import Store, open_store
from harness.store.liveness import HEARTBEAT_S, Heartbeat, SuiteProcess, process_tags
from harness.store.mlflow_store import MlflowStore, open_client
from harness.store.preflight import FileIdentity, sqlite_path, store_failure
from harness.store.readback import StoreReader, guarded
from harness.suites.identity import param_text

if TYPE_CHECKING:  # pandas loads when results are read (start-up of harness ui, server)
    import pandas as pd

    from harness.runs.cell import CellResult
    from harness.suites.identity import Cell
    from harness.suites.loading import Suite

__all__ = [
    "DEFAULT_URI",
    "Tracker",
    "connection_lost",
    "git_commit",
    "resolve_uri",
    "sqlite_store_missing",
]

DEFAULT_URI = "sqlite:///mlflow/mlflow.db"


def resolve_uri(uri: str | None = None) -> str:
    """``uri``, else ``MLFLOW_TRACKING_URI``, else ``sqlite:///mlflow/mlflow.db`` (cwd)."""
    return uri or os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_URI


def sqlite_store_missing(uri: str) -> bool:
    """Whether ``uri`` is a SQLite store whose file does not exist yet or is empty (an
    empty file is no store either: opening it through MLflow would write the schema).
    Always ``False`` for a server or database URI."""
    db = sqlite_path(uri)
    return db is not None and (not db.exists() or db.stat().st_size == 0)


def git_commit() -> str | None:
    """The commit checked out in the current directory, if it is a git work tree."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


class Tracker(StoreReader):
    """The MLflow store of one ``harness`` command.

    Parameters
    ----------
    uri : str, optional
        Tracking URI (see :func:`resolve_uri`). For a ``sqlite:///`` store the folder is
        created and artifacts go to ``artifacts/`` beside the database file.
    """

    def __init__(self, uri: str | None = None) -> None:
        from harness import redaction

        # http(s) credentials go to MLflow's environment variables, never into a printed
        # URI; any other password is masked in this process' output from now on.
        self.uri = redaction.move_http_credentials(resolve_uri(uri))
        redaction.watch(self.uri)
        db = sqlite_path(self.uri)
        self.artifact_root = None
        self._sequence: dict[str, int] = {}  # experiment id -> next cell run's SEQUENCE
        self._ui_views: dict[str, tuple[set[str], int | None]] = {}  # id -> (keys, created)
        self._names: dict[str, str] = {}  # experiment id -> name, as experiment_id found it
        if db is not None:
            try:
                db.parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise StoreError(f"Cannot create the store folder {db.parent}: {err}.") from None
            self.artifact_root = (db.parent / "artifacts").resolve().as_uri()

    @property
    def display_uri(self) -> str:
        """The tracking URI with any password masked: the form to print."""
        from harness.redaction import mask

        return mask(self.uri)

    def open(self) -> Tracker:
        """Open the store now (see :attr:`store`) and return this tracker.

        :raises StoreError: the store cannot be used (exit 2).
        """
        _ = self.store
        return self

    @cached_property
    def store(self) -> Store:
        """The store's backend (:func:`harness.store.backends.open_store`), opened on first use:
        the direct SQLite store for an existing SQLite database, else MLflow's client.

        :raises StoreError: the store cannot be used (exit 2).
        """
        try:
            store = open_store(self.uri, self._mlflow)
        except StoreError:
            raise
        except Exception as err:
            what = store_failure(err) if sqlite_path(self.uri) is not None else None
            if what is None:
                raise
            raise StoreError(self._lost(what)) from None
        if sqlite_path(self.uri) is not None:
            self._file = FileIdentity(self.uri)
        return store

    def _mlflow(self) -> MlflowStore:
        if "_mlflow_store" not in self.__dict__:
            self.__dict__["_mlflow_store"] = MlflowStore(open_client(self.uri, self.display_uri))
        return self.__dict__["_mlflow_store"]

    @property
    def client(self) -> Any:
        """An ``MlflowClient`` of the same store (opened, checked and created as
        :func:`harness.store.mlflow_store.open_client` does), for what harness does not wrap."""
        return self._mlflow().client

    # -- experiments and suite runs ---------------------------------------------------

    @guarded
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
        found = self.store.experiment(name)
        if found is not None:
            experiment_id = self._active(name, *found, create or refuse_deleted)
        elif create:
            location = f"{self.artifact_root}/{name}" if self.artifact_root else None
            tags = {layout.EXPERIMENT_KIND: layout.MODEL_RUNS}
            experiment_id = self.store.create_experiment(name, location, tags)
        else:
            return None
        if experiment_id is not None:
            self._names[experiment_id] = name
        return experiment_id

    def _active(self, name: str, experiment_id: str, stage: str, create: bool) -> str | None:
        """``experiment_id`` when the experiment is active; a deleted one reads as absent,
        and running into it is refused with the way out."""
        if stage == "active":
            return experiment_id
        if not create:
            return None
        raise StoreError(
            f"The experiment '{name}' (id {experiment_id}) is deleted in {self.display_uri};"
            " runs logged there would not show. Restore it (MLFLOW_TRACKING_URI="
            f"'{self.display_uri}' mlflow experiments restore --experiment-id {experiment_id}),"
            f" remove it for good (mlflow gc --backend-store-uri '{self.display_uri}'), or"
            " give the suite another name."
        )

    @guarded
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
        mine = self.store.run(parent_id).start_time or 0
        for other in self.running_suites(experiment_id):
            if other.run_id == parent_id or not other.alive:
                continue
            if (self.store.run(other.run_id).start_time or 0) <= mine:
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

    @guarded
    def start_suite(
        self,
        experiment_id: str,
        suite: Suite,
        settings: Mapping[str, Any],
        commit: str | None = None,
    ) -> str:
        """Create the parent run of one ``harness run`` and log the expanded suite.

        The run is tagged with the driver's host, pid and process start time and a
        heartbeat (:meth:`heartbeat`), so a later run can tell a live suite run from a dead
        one (:class:`harness.store.liveness.SuiteProcess`).

        :param commit: the git commit of the code, tagged ``mlflow.source.git.commit``.
        """
        tags = process_tags() | ({layout.GIT_COMMIT: commit} if commit else {})
        run = layout.suite_record(suite.name, str(suite.path), tags)
        params = {"suite": str(suite.path), "cells": str(len(suite.cells))}
        params |= {k: str(v) for k, v in settings.items()}
        run.params = {k: param_text(v) for k, v in params.items()}  # hashed, never cut
        run.artifacts = {"suite.yaml": yaml.safe_dump(suite.expanded, sort_keys=False)}
        run_id = self.store.create_run(experiment_id, run)
        self._update_ui_view(experiment_id, set())  # the view ui_path opens exists from now
        self._describe(experiment_id, suite)
        return run_id

    def _describe(self, experiment_id: str, suite: Suite) -> None:
        """The experiment's description in the UI (:data:`harness.store.layout.NOTE`): the
        description of the suite file it is named after, written when it differs."""
        name = self._names.get(experiment_id, suite.name)
        text = layout.note(layout.plain(experiment_description(suite, name)), 20_000)
        if text and self.store.experiment_tag(experiment_id, layout.NOTE) != text:
            self.store.set_experiment_tag(experiment_id, layout.NOTE, text)

    @guarded
    def end_suite(self, run_id: str, status: str) -> None:
        """Close the parent run: ``FINISHED``, ``FAILED`` or ``KILLED``."""
        self.store.set_terminated(run_id, status)

    @guarded
    def delete_run(self, run_id: str) -> None:
        """Mark a run deleted (MLflow's ``delete_run``)."""
        self.store.delete_run(run_id)

    def heartbeat(self, run_id: str, every_s: float = HEARTBEAT_S) -> Heartbeat:
        """Start a daemon thread that tags ``harness.heartbeat`` (Unix seconds) on the
        parent run every ``every_s`` seconds, until ``.stop()``: how a driver on another
        host is known to be alive."""
        return Heartbeat(self.store.set_tag, run_id, every_s)

    @guarded
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
        cells = (layout.KIND, layout.CELL)
        for run in list(self.store.runs(experiment_id, tag=cells, status="RUNNING")):
            if run.tags.get(layout.PARENT) not in live:
                self.delete_run(run.run_id)
        return lines

    # -- cells ------------------------------------------------------------------------

    @guarded
    def log_cell(
        self,
        experiment_id: str,
        parent_id: str,
        cell: Cell,
        result: CellResult,
        plugins: Mapping[str, str],
        commit: str | None,
    ) -> str:
        """Write one cell's child run whole (:func:`harness.store.layout.cell_record`), numbered
        after every cell run of the experiment (``harness.sequence``); returns its run id."""
        if experiment_id not in self._sequence:  # once per experiment and command
            found = self.store.runs(experiment_id, tag=(layout.KIND, layout.CELL))
            self._sequence[experiment_id] = 1 + max(
                (layout.sequence_of(run.tags) for run in found), default=-1
            )
        sequence = self._sequence[experiment_id]
        run = layout.cell_record(cell, result, plugins, parent_id, sequence)
        if commit:
            run.tags[layout.GIT_COMMIT] = commit
        run_id = self.store.create_run(experiment_id, run)
        self._sequence[experiment_id] = sequence + 1
        self._logged += 1
        self._update_ui_view(experiment_id, {*result.metrics, *result.curves})
        return run_id

    def _update_ui_view(self, experiment_id: str, metric_keys: set[str]) -> None:
        """Keep the saved UI view that :func:`harness.store.layout.ui_path` opens showing every
        metric logged to the experiment: the tag is written when missing (without it the UI
        drops the link's ``workflowType`` and opens the GenAI overview) and rewritten only
        when a cell logs a metric it lacks (the first cell of a process, then rarely)."""
        views = self._ui_views
        if experiment_id not in views:  # start from the stored view (an earlier run's)
            stored = self.store.experiment_tag(experiment_id, layout.UI_VIEW_TAG)
            views[experiment_id] = layout.ui_view_keys(stored)
        shown, created = views[experiment_id]
        if created is None or not metric_keys <= shown:  # none stored, or new metrics
            shown |= metric_keys
            created = created or int(time.time() * 1000)
            key, value = layout.ui_view_tag(shown, created)
            if self.store.set_experiment_tag(experiment_id, key, value):
                views[experiment_id] = (shown, created)
            else:  # read and write it again at the next cell
                views.pop(experiment_id, None)

    # -- reading results back -----------------------------------------------------------

    def experiments(self) -> dict[str, str]:
        """``{name: id}`` of every active experiment in the store (``harness report``
        without SUITE reads each one's latest suite run)."""
        return {e.name: e.experiment_id for e in self.client.search_experiments()}

    def suite_results(
        self, suite: Suite, experiment_ids: Mapping[str, str] | None = None
    ) -> pd.DataFrame:
        """:meth:`results` of every cell of a suite, read from each of its experiments (its
        own and its included suites', :meth:`harness.suites.loading.Suite.experiments`), in suite
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

    @guarded
    def set_tags(self, run_id: str, tags: Mapping[str, str]) -> None:
        """Set tags on a run (a suite's parent run: its claims' verdicts)."""
        for key, value in tags.items():
            self.store.set_tag(run_id, key, value)

    @guarded
    def log_folder(self, run_id: str, folder: os.PathLike, artifact_path: str) -> None:
        """Attach a local folder to a run (the report): copied in place for a local
        artifact store, else uploaded by MLflow. A report's claims table (``claims.md``:
        claim, status, estimate [interval]) also becomes the run's description
        (:data:`harness.store.layout.NOTE`), shown at the top of its page in the UI."""
        from pathlib import Path

        self.store.log_artifacts(run_id, Path(folder), artifact_path)
        claims = Path(folder) / "claims.md"
        if claims.is_file():
            self.store.set_tag(run_id, layout.NOTE, layout.note(claims.read_text()))


def experiment_description(suite: Suite, name: str) -> str:
    """The description of the suite file experiment ``name`` is named after: the suite's
    own, or an included suite's (read again from the file that declares its runs; ``""``
    when that file is gone or has none)."""
    if name == suite.name:
        return suite.description.strip()
    from pathlib import Path

    from harness.suites.safe_yaml import parse_yaml, read_suite_text

    for run in suite.expanded.get("runs", []):
        if run.get("experiment") == name and run.get("file"):
            try:
                path = Path(run["file"])
                found = parse_yaml(str(path), read_suite_text(path, str(path)))
            except Exception:  # a description is no reason to stop a run
                return ""
            text = found.get("description", "") if isinstance(found, dict) else ""
            return text.strip() if isinstance(text, str) else ""
    return ""


def connection_lost(err: BaseException) -> bool:
    """Whether ``err`` says the store stopped working, not that it refused one cell's
    values: a :class:`StoreError` (a SQLite store locked, full, read-only or gone, see
    :class:`Tracker`), a ``requests``/``urllib3`` connection error after MLflow's own
    retries, or MLflow's "API request to ... failed" wrapping one. Not a refusal of the
    values (an MLflow error with a status code), which fails only the cell that sent them."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, StoreError):
            return True
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
