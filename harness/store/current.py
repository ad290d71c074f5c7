"""Whether the store holds a cell's current result: why a cell has none (never run, its
plugin's code or its metrics changed, its last run failed), and how many of a suite's cells
lack one, told apart. ``harness run`` reads it to say why cells run, ``harness results`` and
``report`` to say what they leave out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from harness.store import layout

if TYPE_CHECKING:
    import pandas as pd

    from harness.store.tracking import Tracker
    from harness.suites.identity import Cell

__all__ = ["missing_cells", "rerun_reason", "rerun_reasons"]


def rerun_reasons(cells: Iterable[Cell], previous: Mapping[str, Mapping[str, str]]) -> Counter[str]:
    """Why each cell to run has no usable result: ``{reason: number of cells}``.

    :param cells: the cells about to run.
    :param previous: ``{config_hash: tags of the latest run of that configuration}``
        (:meth:`harness.store.tracking.Tracker.latest_by_config`).
    :returns: reasons such as ``"code of plugin fair-regression changed"``, ``"metrics
        changed"``, ``"last run failed"``, ``"forced"`` or ``"new"``.
    """
    return Counter(rerun_reason(cell, previous) for cell in cells)


def rerun_reason(cell: Cell, previous: Mapping[str, Mapping[str, str]]) -> str:
    """Why one cell has no usable result (one of :func:`rerun_reasons`' reasons)."""
    tags = previous.get(cell.config_hash)
    if tags is None:
        return "new"
    changed = [p for p, fp in cell.code if tags.get(layout.CODE_PREFIX + p) not in (None, fp)]
    if changed:
        return f"code of plugin {', '.join(changed)} changed"
    if tags.get(layout.METRICS_HASH) not in (None, cell.metrics_hash):
        return "metrics changed"
    if tags.get(layout.CELL_HASH) != cell.cell_hash:
        return "plugin version or code changed"
    if tags.get(layout.STATUS) in ("failed", "timeout"):
        return f"last run {tags[layout.STATUS]}"
    if not cell.fingerprinted:
        return "plugin code has no fingerprint"
    return "forced"


def missing_cells(
    tracker: Tracker, cells: list[Cell], results: pd.DataFrame, ids: dict[str, str] | None = None
) -> tuple[int, str]:
    """How many of ``cells`` have no row in ``results``, and why: ``"2 never run, 1 stale
    (metrics changed)"`` (stale: runs of the same configuration exist, made with other
    code, metrics or plugin versions). ``ids``: ``{experiment name: id}`` where known."""
    found = set(results["cell_hash"]) if not results.empty else set()
    missing = [c for c in cells if c.cell_hash not in found]
    previous: dict[str, Any] = {}
    for name in dict.fromkeys(c.experiment for c in missing):
        experiment = (ids or {}).get(name) or tracker.experiment_id(name)
        previous |= tracker.latest_by_config(experiment) if experiment is not None else {}
    why = Counter(rerun_reason(c, previous) for c in missing)
    never = why.pop("new", 0)
    parts = [f"{never} never run"] if never else []
    parts += [f"{n} stale ({reason})" for reason, n in why.items()]
    return len(missing), ", ".join(parts)
