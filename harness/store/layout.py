"""The MLflow layout (docs/design.md, "MLflow layout"): the one module that knows it.

Tag keys, run names, what a cell's and a suite's runs hold (:class:`RunRecord`), the
columns of a result row read back (:func:`result_row`), the order that makes a run the
latest of its cell (:func:`newest_first`) and the UI's saved view. The stores
(:mod:`harness.store.mlflow_store`, :mod:`harness.store.sqlite_store`) write and read what this
module describes; every other module uses these names instead of string literals.
"""

from __future__ import annotations

import io
import json
import re
import time
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.store.sqlite_direct import RunRow
from harness.suites.identity import param_text

if TYPE_CHECKING:
    from harness.components import Curve
    from harness.runs.cell import CellResult
    from harness.suites.identity import Cell

__all__ = [
    "CURVE_POINTS",
    "RunRecord",
    "cell_record",
    "logged_params",
    "newest_first",
    "note",
    "plain",
    "result_row",
    "run_name",
    "ui_link",
    "ui_path",
    "ui_view_tag",
]

# -- tag keys ---------------------------------------------------------------------------
KIND = "harness.kind"  # what a run is: SUITE (a parent run) or CELL (a child run)
SUITE, CELL = "suite", "cell"
CELL_HASH = "harness.cell_hash"  # the cell's identity (resume)
CONFIG_HASH = "harness.config_hash"  # the configuration, seed left out
METRICS_HASH = "harness.metrics_hash"  # the metric list and metric params
CODE_PREFIX = "harness.code."  # + plugin: the plugin's fingerprint
STATUS = "harness.status"  # ok, failed, timeout, skipped: written last
REASON = "harness.reason"  # why a cell failed or was skipped
SKIPPED_PREFIX = "harness.skipped."  # + metric: why the metric was left out
PLUGIN = "harness.plugin"  # the method's plugin
PLUGIN_VERSION = "harness.plugin_version"
DATASET_PLUGIN = "harness.dataset_plugin"
SEQUENCE = "harness.sequence"  # the order of cell runs in an experiment (latest = largest)
SUITE_FILE = "harness.suite_file"  # parent run: the suite file run
HOST, PID, PID_START = "harness.host", "harness.pid", "harness.pid_start"  # parent's driver
HEARTBEAT = "harness.heartbeat"  # parent run: Unix seconds, renewed while the driver lives
PARENT = "mlflow.parentRunId"
RUN_NAME = "mlflow.runName"
GIT_COMMIT = "mlflow.source.git.commit"
EXPERIMENT_KIND = "mlflow.experimentKind"  # MLflow 3's UI: model runs, not GenAI pages
MODEL_RUNS = "custom_model_development"
UI_VIEW = "harness-metrics"  # id of the saved runs-table view harness writes and links to
UI_VIEW_TAG = f"mlflow.sharedViewState.{UI_VIEW}"  # MLflow UI 3.x: saved views are these tags
NOTE = "mlflow.note.content"  # the description the UI shows, of an experiment or a run
NOTE_LIMIT = 8000  # MLflow's longest run tag value (mlflow.utils.validation.MAX_TAG_VAL_LENGTH)

RUN_STATUS = {"ok": "FINISHED", "skipped": "FINISHED", "failed": "FAILED", "timeout": "FAILED"}
"""MLflow's run status of each cell status."""
DONE = ("ok", "skipped")  # a cell whose latest run has one of these is not run again
# Step points logged per curve (docs/design.md: at most 1,000). MLflow's SQL store spends ~0.3 ms
# per point, so 1,000 points would cost more than most cells; the full curve is an artifact.
CURVE_POINTS = 250


@dataclass
class RunRecord:
    """One run to write whole: ``tags`` first, then artifacts (``{relative path: text}``),
    params and metrics ``(key, value, timestamp_ms, step)``, then ``outcome`` tags, and
    only then ``status`` (a final status also sets ``end_time``)."""

    name: str
    start_time: int
    tags: dict[str, str]
    params: dict[str, str] = field(default_factory=dict)
    metrics: list[tuple[str, float, int, int]] = field(default_factory=list)
    outcome: dict[str, str] = field(default_factory=dict)
    artifacts: dict[str, str] = field(default_factory=dict)
    status: str = "RUNNING"
    end_time: int | None = None


def run_name(cell: Cell) -> str:
    """A readable, unique run name led by the method:
    ``method[p=v]-dataset[p=v]-s<seed>-<hash[:6]>`` with every param (defaults filled
    in). The part before ``-s<seed>`` is at most 200 characters; a longer one is cut and
    ends with ``…`` (the params are on the run)."""

    def part(name: str, params: Mapping[str, Any]) -> str:
        inner = ",".join(f"{k}={v}" for k, v in params.items())
        return f"{name}[{inner}]" if inner else name

    text = f"{part(cell.method, cell.method_params)}-{part(cell.dataset, cell.dataset_params)}"
    if len(text) > 200:
        text = text[:199] + "…"
    return f"{text}-s{cell.seed}-{cell.cell_hash[:6]}"


def suite_record(suite_name: str, suite_path: str, tags: Mapping[str, str]) -> RunRecord:
    """The parent run of one ``harness run`` (named ``<suite>-YYYYmmdd-HHMMSS``), RUNNING,
    with ``tags`` (the driver's) and ``harness.kind=suite``."""
    now = time.time()
    tags = {KIND: SUITE, SUITE_FILE: suite_path, **tags, HEARTBEAT: str(int(now))}
    name = time.strftime(f"{suite_name}-%Y%m%d-%H%M%S", time.localtime(now))
    return RunRecord(name=name, start_time=int(now * 1000), tags=tags)


def plain(text: str) -> str:
    """``text`` (a suite's description) shown as written in the UI's Markdown: the
    characters that would make a link, markup, HTML or a table escaped."""
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", text)


def note(text: str, limit: int = NOTE_LIMIT) -> str:
    """``text`` as a description (:data:`NOTE`) MLflow accepts: whole lines up to ``limit``
    characters, then a line saying how many were left out."""
    if len(text) <= limit:
        return text
    lines, kept = text.split("\n"), []
    for line in lines:
        if sum(len(k) + 1 for k in kept) + len(line) + 80 > limit:
            break
        kept.append(line)
    kept.append(f"\n... {len(lines) - len(kept)} more line(s): see the report's claims.md")
    return "\n".join(kept)


def cell_record(
    cell: Cell, result: CellResult, plugins: Mapping[str, str], parent_id: str, sequence: int
) -> RunRecord:
    """The child run of one cell: identity tags, params (with the dataset's described
    facts), metrics (:func:`metric_points`), curves and error/warnings as artifacts, and
    its outcome tags (status, reason, skipped metrics), written last.

    :param plugins: ``{plugin: version}`` installed (the method plugin's version).
    :param sequence: this run's place in the experiment's order (:data:`SEQUENCE`).
    """
    method_plugin = cell.versions[1][0]
    tags = {
        PARENT: parent_id,
        KIND: CELL,
        CELL_HASH: cell.cell_hash,
        CONFIG_HASH: cell.config_hash,
        METRICS_HASH: cell.metrics_hash,
        PLUGIN: method_plugin,
        PLUGIN_VERSION: plugins.get(method_plugin, cell.versions[1][1]),
        DATASET_PLUGIN: cell.versions[0][0],
        SEQUENCE: str(sequence),
    }
    tags |= {f"{CODE_PREFIX}{plugin}": digest for plugin, digest in cell.code}
    outcome = {STATUS: result.status}
    if result.reason:
        outcome[REASON] = result.reason[:5000]
    outcome |= {f"{SKIPPED_PREFIX}{m}": why[:5000] for m, why in result.skipped_metrics.items()}
    artifacts = {f"curves/{name}.csv": curve_csv(c) for name, c in result.curves.items()}
    if result.error:
        artifacts["error.txt"] = result.error
    if result.warnings:
        artifacts["warnings.txt"] = "\n".join(result.warnings) + "\n"
    params = logged_params(cell.params(), result.described)
    return RunRecord(
        name=run_name(cell),
        start_time=result.start_ms,
        tags=tags,
        params={k: param_text(str(v)) for k, v in params.items()},  # hashed, never cut
        metrics=metric_points(result),
        outcome=outcome,
        artifacts=artifacts,
        status=RUN_STATUS[result.status],
        end_time=result.end_ms,
    )


def metric_points(result: CellResult) -> list[tuple[str, float, int, int]]:
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


def curve_csv(curve: Curve) -> str:
    """A curve as the text of ``curves/<metric>.csv``: ``step,value`` rows."""
    buffer = io.StringIO()
    buffer.write("step,value\n")
    np.savetxt(
        buffer, np.column_stack([curve.steps, curve.values]), delimiter=",", fmt=["%d", "%.9g"]
    )
    return buffer.getvalue()


def sequence_of(tags: Mapping[str, str]) -> int:
    """A cell run's :data:`SEQUENCE` (``-1`` for a run logged before there was one)."""
    value = tags.get(SEQUENCE, "")
    return int(value) if value.isdigit() else -1


def newest_first(runs: Iterable[RunRow]) -> list[RunRow]:
    """Cell runs, the latest of each cell first: by :data:`SEQUENCE`, the order harness
    numbered them in, never by a clock (a machine whose clock is behind would hide a newer
    run); runs logged before sequences existed come after, newest start time first."""

    def order(run: RunRow) -> tuple[int, int, int]:
        return (sequence_of(run.tags), run.start_time or 0, run.end_time or 0)

    return sorted(runs, key=order, reverse=True)


def result_row(run: RunRow) -> dict[str, Any]:
    """One row of ``Tracker.results``: the run's info and provenance (names in
    :data:`harness.components.RESULT_COLUMNS`; ``plugin_fingerprint`` is the method
    plugin's code fingerprint, ``git_commit`` the driver's work tree), then its params
    (strings), latest metric values and ``skipped.<metric>`` (why it was left out)."""
    tags = run.tags
    plugin = tags.get(PLUGIN)
    skipped = {
        f"skipped.{k.removeprefix(SKIPPED_PREFIX)}": v
        for k, v in tags.items()
        if k.startswith(SKIPPED_PREFIX)
    }
    return {
        "cell_hash": tags.get(CELL_HASH),
        "status": tags.get(STATUS),
        "run_id": run.run_id,
        "experiment_id": run.experiment_id,
        "artifact_uri": run.artifact_uri,
        "reason": tags.get(REASON, ""),
        "plugin": plugin,
        "plugin_version": tags.get(PLUGIN_VERSION),
        "plugin_fingerprint": tags.get(f"{CODE_PREFIX}{plugin}"),
        "dataset_plugin": tags.get(DATASET_PLUGIN),
        "git_commit": tags.get(GIT_COMMIT),
        "start_time": run.start_time,
        **run.params,
        **run.metrics,
        **skipped,
    }


# -- the MLflow UI ----------------------------------------------------------------------


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
    state = {"orderByKey": f"tags.`{RUN_NAME}`", "orderByAsc": True}
    state["selectedColumns"] = columns
    envelope = {
        "name": "harness: runs with metrics",
        "createdAt": created_ms or now,
        "updatedAt": now,
        "state": json.dumps(state),
    }
    return UI_VIEW_TAG, json.dumps(envelope)


def ui_view_keys(stored: str | None) -> tuple[set[str], int | None]:
    """The metric keys and creation time (ms) of a stored :func:`ui_view_tag` value;
    ``(set(), None)`` when there is none or it is not harness's."""
    try:
        envelope = json.loads(stored or "")
        columns = json.loads(envelope["state"])["selectedColumns"]
        keys = {c.removeprefix("metrics.`").removesuffix("`") for c in columns}
        return keys, int(envelope["createdAt"])
    except (TypeError, ValueError, KeyError):
        return set(), None


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
