"""Everything that talks to MLflow: experiments, suite and cell runs, resume, read-back.

Layout (DESIGN.md): one experiment per suite name; one parent run per ``harness run``
(tag ``harness.kind=suite``); one child run per cell (``harness.kind=cell``,
``mlflow.parentRunId``) with the cell's params, metrics (curves as step metrics, at most
``CURVE_POINTS`` points, plus the full curve as ``curves/<metric>.csv``), status tags,
``error.txt`` for a failed cell and ``warnings.txt`` for a cell that raised warnings. Only
the driver process writes; values go in ``log_batch`` calls that respect MLflow's
per-call limits.
"""

from __future__ import annotations

import io
import logging
import os
import sqlite3
import subprocess
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from harness.components import Curve
from harness.runner import CellResult
from harness.suite import Cell, Suite

__all__ = ["DEFAULT_URI", "Tracker", "resolve_uri", "ui_path"]

DEFAULT_URI = "sqlite:///mlflow/mlflow.db"
_MAX_PARAMS, _MAX_ENTITIES = 100, 1000  # mlflow.utils.validation batch limits
# Step points logged per curve (DESIGN: at most 1,000). MLflow's SQL store spends ~0.3 ms
# per point, so 1,000 points would cost more than most cells; the full curve is an artifact.
CURVE_POINTS = 250
_RUN_STATUS = {"ok": "FINISHED", "skipped": "FINISHED", "failed": "FAILED", "timeout": "FAILED"}

for _noisy in ("alembic", "mlflow.store.db.utils", "mlflow.tracking.fluent"):
    logging.getLogger(_noisy).setLevel(logging.WARNING)


def resolve_uri(uri: str | None = None) -> str:
    """``uri``, else ``MLFLOW_TRACKING_URI``, else ``sqlite:///mlflow/mlflow.db`` (cwd)."""
    return uri or os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_URI


def _sqlite_path(uri: str) -> Path | None:
    return Path(uri.removeprefix("sqlite:///")) if uri.startswith("sqlite:///") else None


def ui_path(experiment_id: str) -> str:
    """The MLflow UI page (after the host) listing an experiment's runs grouped by parent.

    ``workflowType=machine_learning`` selects MLflow 3's model-training views (runs table,
    group by, parallel coordinates) instead of its default GenAI overview.
    """
    return f"/#/experiments/{experiment_id}?workflowType=machine_learning"


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
        self.uri = resolve_uri(uri)
        db = _sqlite_path(self.uri)
        self.artifact_root = None
        if db is not None:
            db.parent.mkdir(parents=True, exist_ok=True)
            self.artifact_root = (db.parent / "artifacts").resolve().as_uri()

    @cached_property
    def client(self) -> Any:
        from mlflow.tracking import MlflowClient  # slow import: only when the store is used

        os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # no phoning home from runs
        if self.uri.startswith("sqlite:"):
            _fast_sqlite_commits()
        return MlflowClient(self.uri)

    # -- experiments and suite runs ---------------------------------------------------

    def experiment_id(self, name: str, create: bool = False) -> str | None:
        """The id of experiment ``name``; created (artifacts under the store) if asked."""
        experiment = self.client.get_experiment_by_name(name)
        if experiment is not None:
            return experiment.experiment_id
        if not create:
            return None
        location = f"{self.artifact_root}/{name}" if self.artifact_root else None
        # MLflow 3's UI shows GenAI pages unless an experiment says it holds model runs.
        tags = {"mlflow.experimentKind": "custom_model_development"}
        return self.client.create_experiment(name, artifact_location=location, tags=tags)

    def start_suite(
        self,
        experiment_id: str,
        suite: Suite,
        settings: Mapping[str, Any],
        commit: str | None = None,
    ) -> str:
        """Create the parent run of one ``harness run`` and log the expanded suite.

        :param commit: the git commit of the code, tagged ``mlflow.source.git.commit``.
        """
        tags = {"harness.kind": "suite", "harness.suite_file": str(suite.path)}
        if commit:
            tags["mlflow.source.git.commit"] = commit
        run = self.client.create_run(
            experiment_id, tags=tags, run_name=time.strftime(f"{suite.name}-%Y%m%d-%H%M%S")
        )
        params = {"suite": str(suite.path), "cells": str(len(suite.cells))}
        params |= {k: str(v) for k, v in settings.items()}
        self._log_batch(run.info.run_id, [], params)
        text = yaml.safe_dump(suite.expanded, sort_keys=False)
        self.client.log_text(run.info.run_id, text, "suite.yaml")
        return run.info.run_id

    def end_suite(self, run_id: str, status: str) -> None:
        """Close the parent run: ``FINISHED``, ``FAILED`` or ``KILLED``."""
        self.client.set_terminated(run_id, status)

    # -- cells ------------------------------------------------------------------------

    def finished_hashes(self, experiment_id: str) -> set[str]:
        """Cell hashes that already have a FINISHED run in the experiment (resume)."""
        return {row["cell_hash"] for row in self._cell_rows(experiment_id)}

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
            "harness.status": result.status,
            "harness.plugin": method_plugin,
            "harness.plugin_version": plugins.get(method_plugin, cell.versions[1][1]),
            "harness.dataset_plugin": cell.versions[0][0],
        }
        if result.reason:
            tags["harness.reason"] = result.reason[:5000]
        tags |= {f"harness.skipped.{m}": why[:5000] for m, why in result.skipped_metrics.items()}
        if commit:
            tags["mlflow.source.git.commit"] = commit
        run = self.client.create_run(
            experiment_id,
            start_time=result.start_ms,
            tags=tags,
            run_name=f"{cell.dataset}-{cell.method}-s{cell.seed}",
        )
        run_id = run.info.run_id
        params = cell.params() | {f"dataset.{k}": v for k, v in result.described.items()}
        self._log_batch(run_id, self._metrics(result), params)
        for name, curve in result.curves.items():
            self.client.log_text(run_id, _curve_csv(curve), f"curves/{name}.csv")
        if result.error:
            self.client.log_text(run_id, result.error, "error.txt")
        if result.warnings:
            self.client.log_text(run_id, "\n".join(result.warnings) + "\n", "warnings.txt")
        self.client.set_terminated(run_id, _RUN_STATUS[result.status], end_time=result.end_ms)
        return run_id

    def _metrics(self, result: CellResult) -> list[Any]:
        from mlflow.entities import Metric

        ts = result.end_ms
        out = [Metric(k, v, ts, 0) for k, v in result.metrics.items() if k not in result.curves]
        out += [Metric(f"time.{k}", v, ts, 0) for k, v in result.seconds.items()]
        for name, curve in result.curves.items():
            thin = curve.thinned(CURVE_POINTS)
            out += [
                Metric(name, float(v), ts, int(s))
                for s, v in zip(thin.steps, thin.values, strict=True)
            ]
        return out

    def _log_batch(self, run_id: str, metrics: list[Any], params: Mapping[str, str]) -> None:
        """Log metrics and params in as few calls as MLflow's per-call limits allow."""
        from mlflow.entities import Param

        pending_params = [Param(k, str(v)[:6000]) for k, v in params.items()]
        pending_metrics = list(metrics)
        while pending_params or pending_metrics:
            batch_params, pending_params = (
                pending_params[:_MAX_PARAMS],
                pending_params[_MAX_PARAMS:],
            )
            room = _MAX_ENTITIES - len(batch_params)
            batch_metrics, pending_metrics = pending_metrics[:room], pending_metrics[room:]
            self.client.log_batch(
                run_id,
                metrics=batch_metrics,
                params=batch_params,
                synchronous=True,
            )

    # -- reading results back -----------------------------------------------------------

    def _cell_rows(self, experiment_id: str) -> Iterator[dict[str, Any]]:
        token = None
        query = "tags.`harness.kind` = 'cell' and attributes.status = 'FINISHED'"
        while True:
            page = self.client.search_runs(
                [experiment_id],
                query,
                max_results=1000,
                order_by=["attributes.start_time DESC"],
                page_token=token,
            )
            for run in page:
                tags = run.data.tags
                yield {
                    "cell_hash": tags.get("harness.cell_hash"),
                    "run_id": run.info.run_id,
                    "artifact_uri": run.info.artifact_uri,
                    "status": tags.get("harness.status"),
                    "reason": tags.get("harness.reason", ""),
                    **run.data.params,
                    **run.data.metrics,
                }
            token = page.token
            if not token:
                return

    def results(self, experiment_id: str, hashes: Iterable[str] | None = None) -> pd.DataFrame:
        """One row per cell (its latest FINISHED run): ``cell_hash, run_id, artifact_uri,
        status, reason``,
        the cell's params (strings, as MLflow stores them) and metrics (latest values).

        :param hashes: keep only these cells (a suite's); default all cells.
        """
        keep = set(hashes) if hashes is not None else None
        rows, seen = [], set()
        for row in self._cell_rows(experiment_id):
            if row["cell_hash"] in seen or (keep is not None and row["cell_hash"] not in keep):
                continue
            seen.add(row["cell_hash"])
            rows.append(row)
        return pd.DataFrame(rows)

    def curves(self, run_id: str, artifact_uri: str | None = None) -> dict[str, Curve]:
        """The full curves a cell run logged as ``curves/<metric>.csv``.

        :param artifact_uri: the run's artifact URI when known (saves a query).
        """
        root = artifact_uri or self.client.get_run(run_id).info.artifact_uri
        if root.startswith("file:"):  # local store: read in place (no copy, no listing RPC)
            files = sorted(Path(urllib.parse.urlparse(root).path, "curves").glob("*.csv"))
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
        runs = self.client.search_runs(
            [experiment_id],
            "tags.`harness.kind` = 'suite'",
            max_results=1,
            order_by=["attributes.start_time DESC"],
        )
        return runs[0].info.run_id if runs else None

    def log_folder(self, run_id: str, folder: Path, artifact_path: str) -> None:
        """Attach a local folder to a run (the report)."""
        self.client.log_artifacts(run_id, str(folder), artifact_path)


def _curve_csv(curve: Curve) -> str:
    buffer = io.StringIO()
    buffer.write("step,value\n")
    np.savetxt(
        buffer, np.column_stack([curve.steps, curve.values]), delimiter=",", fmt=["%d", "%.9g"]
    )
    return buffer.getvalue()
