"""The numbers behind a report: per-configuration statistics over seeds, tallies, exports.

A results table (:meth:`harness.store.tracking.Tracker.results`) holds one row per cell: identity
columns (:data:`harness.components.RESULT_COLUMNS`), ``dataset.*``/``method.*``/``metric.*``
params, metric columns (a dict metric's keys as ``name.key``), ``time.<phase>`` seconds and
``skipped.<metric>`` reasons. Every function here is a few group-bys over the whole frame:
its cost grows linearly with the number of cells and of metric columns.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from harness.components import RESULT_COLUMNS, params_fields
from harness.lazy import LazyModule
from harness.plugins.registry import Registry

pd = LazyModule("pandas")  # imported when a table is built (light plugin imports)

__all__ = [
    "PARAM_PREFIXES",
    "SKIPPED_PREFIX",
    "declared_params",
    "direction",
    "format_number",
    "mean_ci",
    "metric_columns",
    "noise_floor",
    "param_columns",
    "row_labels",
    "summary_stats",
    "tally",
    "tidy_results",
]

PARAM_PREFIXES = ("dataset.", "method.", "metric.")
SKIPPED_PREFIX = "skipped."  # why a metric was left out of a cell (Tracker.results)


def mean_ci(values: Any) -> tuple[float, float, int]:
    """Mean, 95% confidence half-width (Student t over the values) and count, NaN dropped.

    Examples
    --------
    >>> m, h, n = mean_ci([1.0, 2.0, 3.0])
    >>> (m, round(h, 3), n)
    (2.0, 2.484, 3)
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan, 0
    if x.size == 1:
        return float(x[0]), math.nan, 1
    half = float(_t975(np.array([x.size]))[0]) * x.std(ddof=1) / math.sqrt(x.size)
    return float(x.mean()), float(half), int(x.size)


def _t975(n: np.ndarray) -> np.ndarray:
    """The 97.5% quantile of Student's t with ``n - 1`` degrees of freedom for each count
    (NaN below 2), by ``scipy.special.stdtrit``: ``scipy.stats.t.ppf`` at a quarter of the
    import time (start-up counts for small suites)."""
    from scipy.special import stdtrit

    n = np.asarray(n, dtype=float)
    return np.where(n >= 2, stdtrit(np.maximum(n - 1, 1), 0.975), np.nan)


def metric_columns(results: pd.DataFrame) -> list[str]:
    """Metric columns of a results table (not meta, not params, not ``time.*``)."""
    skip = (*PARAM_PREFIXES, SKIPPED_PREFIX, "time.")
    meta = set(RESULT_COLUMNS)
    return [c for c in results.columns if c not in meta and not c.startswith(skip)]


def format_number(value: float, digits: int = 3, noise: float = 0.0) -> str:
    """``value`` to ``digits`` significant digits; ``"0"`` when ``|value| <= noise``.

    ``noise`` is the level below which a value is numerical noise, not data (e.g.
    ``-2.22e-13`` next to values of order 1): :func:`noise_floor` gives it for a column.

    Examples
    --------
    >>> format_number(0.03799711350757817)
    '0.038'
    >>> format_number(-2.22e-13, noise=1e-9)
    '0'
    >>> format_number(78840.4)
    '7.88e+04'
    """
    if value is None or not math.isfinite(value):
        return "" if value is None or math.isnan(value) else str(value)
    if abs(value) <= noise:
        return "0"
    return f"{value:.{digits}g}"


def noise_floor(values: Any) -> float:
    """The magnitude below which a value of this column is float round-off: ``1e-9`` times
    the median nonzero finite magnitude in it (relative double-precision noise after the
    arithmetic of a metric, at the column's typical scale), and at least ``1e-300``.

    The median, not the largest: one huge value (``1e308``) must not turn the column's real
    values (``1.5e9``) into ``"0"``. A guess at what is round-off, as any such rule is.
    """
    x = np.abs(np.asarray(values, dtype=float))
    x = x[np.isfinite(x) & (x > 0)]
    return max(1e-9 * float(np.median(x)), 1e-300) if x.size else 0.0


def _declared(registry: Registry | None, kind: str, task: str, name: str) -> set[str] | None:
    entry = registry.entries[kind].get((task, name)) if registry is not None else None
    return None if entry is None else set(params_fields(entry.cls.Params))


def param_columns(
    group: pd.DataFrame, kind: str, name: str, registry: Registry | None
) -> list[str]:
    """The ``<kind>.<param>`` columns of the rows ``group`` of component ``name`` that hold
    a declared param (any ``<kind>.`` column when the registry does not know it; facts from
    ``Dataset.describe`` are left out) with a value in some row.

    :param kind: ``"dataset"`` or ``"method"``.
    """
    declared = _declared(registry, kind, str(group["task"].iloc[0]), name)
    cols = [c for c in group.columns if c.startswith(f"{kind}.")]
    cols = [c for c in cols if declared is None or c.split(".", 1)[1] in declared]
    filled = group[cols].notna().any()
    return [c for c in cols if filled[c]]


def row_labels(
    results: pd.DataFrame, kind: str, registry: Registry | None, all_params: bool = False
) -> pd.Series:
    """``name(p=v, ...)`` per row with the declared params that vary among cells of the
    same name (every declared param with ``all_params``: a cell named in full).

    Facts from ``Dataset.describe`` are logged as ``dataset.<key>`` params too, but may vary
    with the seed; only fields of the component's ``Params`` (when the registry knows the
    component) tell configurations apart.
    """
    labels = results[kind].astype(str).copy()
    for name, group in results.groupby(kind, sort=False):
        cols = param_columns(group, kind, str(name), registry)
        if not all_params:
            varies = group[cols].nunique()
            cols = [c for c in cols if varies[c] > 1]
        if cols:
            parts = [f"{c.split('.', 1)[1]}=" + group[c].astype(str) for c in cols]
            text = parts[0]
            for part in parts[1:]:
                text = text + ", " + part
            labels.loc[group.index] = f"{name}(" + text + ")"
    return labels


def direction(column: str, task: str, registry: Registry | None) -> bool | None:
    """``higher_is_better`` of the metric behind a results column (``name`` or
    ``name.key`` of a dict metric); ``None`` when unknown or neither."""
    if registry is None:
        return None
    for name in (column, column.split(".", 1)[0]):
        entry = registry.entries["metric"].get((task, name))
        if entry is not None:  # a spread (power.mc_sd) is an uncertainty, never ranked
            key = column.removeprefix(name).removeprefix(".")
            return entry.cls.higher_is_better if entry.cls.ranks(key) else None
    return None


def declared_params(results: pd.DataFrame, kind: str, registry: Registry | None) -> list[str]:
    """The ``<kind>.<p>`` columns of a results table that are declared params of the
    components (``Params`` fields), not facts from ``Dataset.describe`` (which arrive as
    ``dataset.<key>`` too). Without a registry every ``<kind>.`` column counts.

    :param kind: ``"dataset"`` or ``"method"``.
    :returns: column names, in table order.
    """
    cols = [c for c in results.columns if c.startswith(f"{kind}.")]
    if registry is None or results.empty:
        return cols
    declared: set[str] = set()
    for (task, name), _ in results.groupby(["task", kind]):
        fields = _declared(registry, kind, str(task), str(name))
        declared |= set(fields) if fields is not None else {c.split(".", 1)[1] for c in cols}
    return [c for c in cols if c.split(".", 1)[1] in declared]


def _metric_params_label(results: pd.DataFrame) -> pd.Series:
    """`` [scaled.scale=100]`` for rows whose metric params differ from other rows' (two runs
    of one configuration with other metric params are different cells, never pooled)."""
    cols = [c for c in results.columns if c.startswith("metric.")]
    cols = [c for c in cols if results[c].nunique() > 1]
    if not cols:
        return pd.Series("", index=results.index)
    text = (
        results[cols]
        .astype(str)
        .apply(lambda row: ", ".join(f"{c.removeprefix('metric.')}={row[c]}" for c in cols), axis=1)
    )
    return " [" + text + "]"


def _seed_counts(frame: pd.DataFrame, keys: list[str]) -> tuple[pd.DataFrame, pd.MultiIndex]:
    """Per configuration (``keys``) in suite order, the seeds that ended ok, failed and timed
    out (a seed failed only where no cell of it is ok: one configuration can be in two runs
    of a suite with other metric lists, two cells per seed counted once), and the
    configurations with an ok or failed seed."""
    ok = frame[frame["status"] == "ok"]
    ok_seeds = pd.MultiIndex.from_frame(ok[[*keys, "seed"]])
    bad = frame[frame["status"].isin(["failed", "timeout"])]
    bad = bad[~pd.MultiIndex.from_frame(bad[[*keys, "seed"]]).isin(ok_seeds)]
    order = pd.MultiIndex.from_frame(frame[keys].drop_duplicates())  # suite order
    shown = pd.MultiIndex.from_frame(pd.concat([ok[keys], bad[keys]]).drop_duplicates())
    groups = order[order.isin(shown)]
    counts = pd.DataFrame(index=groups)
    counts["n_ok"] = ok.groupby(keys, sort=False)["seed"].nunique()
    for status in ("failed", "timeout"):
        rows = bad[bad["status"] == status]
        counts[f"n_{status}"] = rows.groupby(keys, sort=False)["seed"].nunique()
    return counts.fillna(0).astype(int), groups


def summary_stats(results: pd.DataFrame, registry: Registry | None = None) -> pd.DataFrame:
    """Numbers behind the summary table, one row per (dataset, method, metric), one truth
    per cell (see :func:`harness.reports.tables.summary_table`).

    Vectorised: a handful of group-bys over the whole frame, so the cost grows linearly
    with the number of cells and of metric columns, not with their product.

    :param results: rows of one task, in suite order (:meth:`Tracker.results`).
    :returns: columns ``task, dataset, method, metric, higher_is_better, n, n_ok, n_failed,
        n_timeout, mean, std_error, ci_low, ci_high`` (95% Student-t interval over the ok
        seeds, one value per seed: a configuration in two runs of a suite is not counted
        twice), in suite order; empty when no configuration has an ok or failed cell.
    """
    if results.empty:
        return pd.DataFrame()
    keys = ["_dataset", "_method"]
    frame = results.assign(
        _dataset=row_labels(results, "dataset", registry),
        _method=row_labels(results, "method", registry) + _metric_params_label(results),
    )
    task = str(results["task"].iloc[0])
    columns = metric_columns(results)
    filled = results[columns].notna().any()
    metrics = [m for m in columns if filled[m]]
    counts, groups = _seed_counts(frame, keys)
    if groups.empty:  # only skipped cells: listed under the table instead
        return pd.DataFrame()
    ok = frame[frame["status"] == "ok"]
    per_seed = ok.groupby([*keys, "seed"], sort=False)[metrics].first()  # first non-missing
    per_seed = per_seed.astype(float).replace([np.inf, -np.inf], np.nan)
    by_config = per_seed.groupby(level=[0, 1], sort=False)
    long = pd.DataFrame(
        {
            "mean": by_config.mean().reindex(groups).stack(future_stack=True),
            "std": by_config.std(ddof=1).reindex(groups).stack(future_stack=True),
            "n": by_config.count().reindex(groups).fillna(0).stack(future_stack=True),
        }
    )
    long.index.names = ["dataset", "method", "metric"]
    out = long.reset_index()
    n = out["n"].astype(int).to_numpy()
    half = _t975(n) * out["std"].to_numpy() / np.sqrt(np.maximum(n, 1))
    two = n >= 2
    out["n"] = n
    out["mean"] = np.where(n >= 1, out["mean"], np.nan)
    out["std_error"] = np.where(two, out["std"] / np.sqrt(np.maximum(n, 1)), np.nan)
    out["ci_low"] = np.where(two, out["mean"] - half, np.nan)
    out["ci_high"] = np.where(two, out["mean"] + half, np.nan)
    out = out.join(counts, on=["dataset", "method"])
    out.insert(0, "task", task)
    higher = {m: direction(m, task, registry) for m in metrics}  # once per metric column
    out.insert(4, "higher_is_better", out["metric"].map(higher))
    columns = ["task", "dataset", "method", "metric", "higher_is_better", "n", "n_ok"]
    columns += ["n_failed", "n_timeout", "mean", "std_error", "ci_low", "ci_high"]
    return out[columns]


def tidy_results(results: pd.DataFrame) -> pd.DataFrame:
    """One row per cell for export (``harness results``): identity, status, params,
    metrics, seconds (``time.<phase>``), then provenance (run id, cell hash, plugin and
    version and code fingerprint, start time in ms since the epoch). Metric values are floats;
    params stay as MLflow stores them (strings)."""
    if results.empty:
        return results
    first = ["task", "dataset", "method", "seed", "status", "reason"]
    params = [c for c in results.columns if c.startswith(PARAM_PREFIXES)]
    metrics = metric_columns(results)
    seconds = [c for c in results.columns if c.startswith("time.")]
    skipped = [c for c in results.columns if c.startswith(SKIPPED_PREFIX)]
    last = ["run_id", "cell_hash", "plugin", "plugin_version", "plugin_fingerprint"]
    last += ["dataset_plugin", "start_time"]
    order = [*first, *params, *metrics, *seconds, *skipped, *last]
    out = results[[c for c in order if c in results.columns]].copy()
    out["seed"] = pd.to_numeric(out["seed"], errors="coerce").astype("Int64")
    return out.reset_index(drop=True)


def tally(results: pd.DataFrame) -> str:
    """pytest's closing line for a suite: ``"2,289 ok, 90 skipped, 0 failed, 0 timed out"``
    over the latest run of each cell."""
    counts = results["status"].value_counts() if not results.empty else pd.Series(dtype=int)
    names = {"ok": "ok", "skipped": "skipped", "failed": "failed", "timeout": "timed out"}
    return ", ".join(f"{int(counts.get(k, 0)):,} {v}" for k, v in names.items())
