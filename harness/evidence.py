"""Which claims a suite touches and which of its cells they need, and results read back
from ``harness results`` exports (``harness claims --results``), checked against the suite.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from harness.claims import Cells, Claim, _param_matches
from harness.errors import SuiteError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "cells_of",
    "check_results",
    "claims_for_cells",
    "of_cells",
    "read_results",
    "registered",
    "suite_claims",
]


def claims_for_cells(claims: Iterable[type[Claim]], cells: Sequence[Any]) -> list[type[Claim]]:
    """The claims of which some required cell is among ``cells`` (a suite's)."""
    return [
        cls
        for cls in claims
        if any(
            need.matches_cell(c) for need in cls.requires for c in cells if c.task in cls.tasks()
        )
    ]


def registered(registry: Any) -> list[type[Claim]]:
    """Every claim class of the registry, once each, in plugin order."""
    return list(dict.fromkeys(entry.cls for entry in registry.entries["claim"].values()))


def suite_claims(
    registry: Any, cells: Sequence[Any], names: Sequence[str] = ()
) -> list[type[Claim]]:
    """The claims some of whose required cells are among ``cells``, or the claims ``names``.

    :raises SuiteError: a name no installed plugin's claim has (listing the known ones).
    """
    every = registered(registry)
    if not names:
        return claims_for_cells(every, cells)
    by_name = {cls.name: cls for cls in every}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        known = ", ".join(sorted(by_name)) or "(none)"
        raise SuiteError(f"Unknown claim {', '.join(map(repr, unknown))}. Known: {known}.")
    return [by_name[n] for n in names]


def cells_of(
    claims: Sequence[type[Claim]], cells: Sequence[Any], added: Sequence[str] = ()
) -> list[Any]:
    """The cells of ``cells`` (a suite's) that ``claims`` require (``harness run --claim``),
    and those of the ``added`` methods (``--add-method``) on the datasets where a claim's
    subject runs, so that each added method is placed against the claim."""

    def needed(cell: Any, cls: type[Claim], need: Cells) -> bool:
        if need.matches_cell(cell):
            return True
        if cell.method not in added or cls.subject not in need.methods:
            return False
        return need.dataset == cell.dataset and all(
            _param_matches(cell.dataset_params.get(k), v) for k, v in need.dataset_params.items()
        )

    return [
        cell
        for cell in cells
        if any(
            needed(cell, cls, need)
            for cls in claims
            if cell.task in cls.tasks()
            for need in cls.requires
        )
    ]


def read_results(path: str | Any) -> pd.DataFrame:
    """A ``harness results`` export (``.parquet``, ``.csv`` or ``.json``) as a table.

    :raises SuiteError: the file is missing, of another format, or not such an export.
    """
    import json
    from pathlib import Path

    import pandas as pd

    file = Path(path)
    if not file.is_file():
        raise SuiteError(f"--results {file}: no such file (make one with 'harness results').")
    try:
        if file.suffix == ".parquet":
            frame = pd.read_parquet(file)
        elif file.suffix == ".csv":
            frame = pd.read_csv(file, dtype={"seed": "Int64"})
        elif file.suffix == ".json":
            frame = pd.DataFrame(json.loads(file.read_text())["rows"])
        else:
            raise SuiteError(f"--results {file}: expected .parquet, .csv or .json.")
    except SuiteError:
        raise
    except Exception as err:
        raise SuiteError(f"--results {file} cannot be read: {type(err).__name__}: {err}") from None
    needed = {"task", "dataset", "method", "seed", "status"}
    if not needed <= set(frame.columns):
        missing = ", ".join(sorted(needed - set(frame.columns)))
        raise SuiteError(f"--results {file} is not a 'harness results' export (no {missing}).")
    for column in [c for c in frame.columns if c.startswith(("dataset.", "method."))]:
        frame[column] = frame[column].map(_param_text)  # as the store gives them: strings
    return _whole_rows(frame, file)


def _whole_rows(frame: pd.DataFrame, file: Any) -> pd.DataFrame:
    """``frame`` read from ``file`` with exact repeats of a row dropped, once checked whole:
    every export writes a ``run_id``, ``cell_hash`` and ``status`` on each row and ends a
    CSV with a newline, and holds each run and each cell once.

    :raises SuiteError: a row without one of those values or a CSV cut mid-row (the file
        was cut or edited), or two different rows of one run or cell (which is its truth
        is not known); naming the file and the row, run or cell.
    """
    again = "export it again with 'harness results'"
    ids = [c for c in ("run_id", "cell_hash", "status") if c in frame.columns]
    blank = frame[ids].isna() | frame[ids].astype(str).apply(lambda c: c.str.strip() == "")
    if blank.to_numpy().any():
        row = int(blank.any(axis=1).to_numpy().argmax())
        empty = ", ".join(c for c in ids if blank[c].iloc[row])
        raise SuiteError(
            f"--results {file}: row {row + 1} has no {empty}: the file was cut or edited; {again}."
        )
    if file.suffix == ".csv" and not file.read_bytes().endswith(b"\n"):
        raise SuiteError(
            f"--results {file}: row {len(frame)} ends without a newline: the file was cut; {again}."
        )
    frame = frame[~frame.astype(str).duplicated()]  # exact repeats: the same row twice
    for column, what in (("run_id", "run"), ("cell_hash", "cell")):
        if column in frame.columns and frame[column].duplicated().any():
            twice = frame.loc[frame[column].duplicated(), column].iloc[0]
            raise SuiteError(
                f"--results {file} holds {what} {twice} twice with different values: which"
                f" is its truth is not known; {again}."
            )
    return frame


def _param_text(value: Any) -> str | None:
    """A param read from an export as the store holds it: a string, or None where the cell
    has no such param (a missing value, which CSV reads as NaN, never becomes "nan")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


def of_cells(frame: pd.DataFrame, cells: Sequence[Any]) -> pd.DataFrame:
    """The rows of ``harness results`` exports that are the suite's cells as the options
    shape it (``--seeds``, ``--method``, ...: by task, dataset, method and seed), each cell
    once.

    :raises SuiteError: a cell found twice with other runs (two exports of one cell, say
        before and after a ``--force``): which one is its truth is not known.
    """
    keys = {(c.task, c.dataset, c.method, int(c.seed)) for c in cells}
    import pandas as pd

    seeds = frame["seed"].map(lambda s: -1 if pd.isna(s) else int(s))
    columns = (frame["task"], frame["dataset"], frame["method"], seeds)
    mine = [k in keys for k in zip(*columns, strict=True)]
    out = frame[mine]
    if "run_id" in out:
        out = out.drop_duplicates("run_id")
    if "cell_hash" in out and out["cell_hash"].duplicated().any():
        twice = out.loc[out["cell_hash"].duplicated(), "cell_hash"].iloc[0]
        raise SuiteError(
            f"--results hold cell {twice} more than once, from different runs: export each"
            " cell once (its latest run, as 'harness results' does)."
        )
    return out


def check_results(frame: pd.DataFrame, registry: Any, cells: Sequence[Any], where: str) -> None:
    """Refuse results from another suite or plugin version, naming the mismatch.

    :raises SuiteError: a (task, dataset, method) of ``frame`` that the suite has no cell
        for, or a ``plugin_version`` other than the installed plugin's.
    """
    have = {(c.task, c.dataset, c.method) for c in cells}
    rows = frame[["task", "dataset", "method"]].drop_duplicates().itertuples(index=False)
    stray = [tuple(r) for r in rows if tuple(r) not in have]
    if stray:
        shown = "; ".join("/".join(map(str, s)) for s in stray[:3])
        raise SuiteError(
            f"{where} holds results of cells the suite does not have ({shown}"
            f"{' ...' if len(stray) > 3 else ''}): it comes from another suite."
        )
    if {"plugin", "plugin_version"} <= set(frame.columns):
        pairs = frame[["plugin", "plugin_version"]].drop_duplicates().itertuples(index=False)
        for plugin, version in pairs:
            installed = registry.plugins.get(plugin)
            if installed is not None and str(version) != str(installed):
                raise SuiteError(
                    f"{where} was made with {plugin} {version}; {installed} is installed."
                    " Re-run the suite and export its results again."
                )
