"""Which claims a suite touches and which of its cells they need, and results read back
from ``harness results`` exports (``harness claims --results``), checked against the suite.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.claims.contract import Cells, Claim
from harness.claims.selection import param_matches as _param_matches
from harness.errors import SuiteError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Matched",
    "cells_of",
    "check_results",
    "claims_for_cells",
    "of_cells",
    "read_results",
    "registered",
    "spreadsheet_safe",
    "suite_claims",
]

RESULTS_MAX_BYTES = 1 << 30
"""The largest export ``--results`` reads (1 GiB; the committed evidence of a paper is
kilobytes): a bigger file is refused before a byte of it is read."""


def claims_for_cells(claims: Iterable[type[Claim]], cells: Sequence[Any]) -> list[type[Claim]]:
    """The claims of which some required cell is among ``cells`` (a suite's)."""
    return [
        cls
        for cls in claims
        if any(
            need.matches_cell(c)
            for need in cls.required_cells()
            for c in cells
            if c.task in cls.tasks()
        )
    ]


def registered(registry: Any) -> list[type[Claim]]:
    """Every claim class of the registry, once each, in plugin order."""
    return list(dict.fromkeys(entry.cls for entry in registry.entries["claim"].values()))


def suite_claims(
    registry: Any, cells: Sequence[Any], names: Sequence[str] = ()
) -> list[type[Claim]]:
    """The claims some of whose required cells are among ``cells``, or the claims ``names``.

    :raises SuiteError: a name no installed plugin's claim has (listing the known ones), or
        a name that claims of two tasks share (listing the tasks and their plugins).
    """
    every = registered(registry)
    if not names:
        return claims_for_cells(every, cells)
    by_name: dict[str, list[type[Claim]]] = {}
    for cls in every:
        by_name.setdefault(cls.name, []).append(cls)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        known = ", ".join(sorted(by_name)) or "(none)"
        raise SuiteError(f"Unknown claim {', '.join(map(repr, unknown))}. Known: {known}.")
    for name in names:
        if len(by_name[name]) > 1:
            plugins = {e.cls: e.plugin for e in registry.entries["claim"].values()}
            tasks = "; ".join(
                f"task '{'/'.join(cls.tasks())}' (plugin '{plugins[cls]}')" for cls in by_name[name]
            )
            raise SuiteError(
                f"Claim {name!r} is ambiguous: claims of {len(by_name[name])} tasks have that"
                f" name: {tasks}. A claim name must be unique across tasks: rename one, or"
                " leave one plugin out with HARNESS_DISABLE_PLUGINS."
            )
    return [by_name[n][0] for n in names]


def cells_of(
    claims: Sequence[type[Claim]], cells: Sequence[Any], added: Sequence[str] = ()
) -> list[Any]:
    """The cells of ``cells`` (a suite's) that ``claims`` require (``harness run --claim``),
    and those of the ``added`` methods (``--add-method``) on the datasets where a claim's
    subject runs, so that each added method is placed against the claim."""

    def needed(cell: Any, cls: type[Claim], need: Cells) -> bool:
        if need.matches_cell(cell):
            return True
        if cell.method not in added or cls.subject_method() not in need.methods:
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
            for need in cls.required_cells()
        )
    ]


def read_results(path: str | Any) -> pd.DataFrame:
    """A ``harness results`` export (``.parquet``, ``.csv`` or ``.json``) as a table, its
    params as the store holds them (strings; a CSV's params are read as text, so ``1`` is
    not read back as ``1.0`` nor ``true`` as ``True``).

    :raises SuiteError: the file is missing, of another format, or not such an export.
    """
    import json
    from pathlib import Path

    import pandas as pd

    file = Path(path)
    if not file.is_file():
        raise SuiteError(f"--results {file}: no such file (make one with 'harness results').")
    size = file.stat().st_size
    if size > RESULTS_MAX_BYTES:
        raise SuiteError(
            f"--results {file} is {size / 2**30:,.1f} GiB, over the {RESULTS_MAX_BYTES >> 30} GiB"
            " an export may hold: is it a 'harness results' export? Export fewer cells"
            " (--seeds, --dataset, --method) or split it into several --results files."
        )
    try:
        if file.suffix == ".parquet":
            frame = pd.read_parquet(file)
        elif file.suffix == ".csv":
            ids = ("run_id", "cell_hash", "plugin", "plugin_version", "plugin_fingerprint",
                   "task", "dataset", "method", "status")  # fmt: skip
            # ids as text: a hex fingerprint like 839e868918621188 reads as the float inf
            frame = pd.read_csv(file, dtype={"seed": "Int64", **dict.fromkeys(ids, str)})
            params = [c for c in frame.columns if c.startswith(_PARAMS)]
            if params:  # as text: an empty field is no param; "null", "NA", "1" are values
                text = pd.read_csv(file, usecols=params, dtype=str, keep_default_na=False,
                                   na_values=[""])  # fmt: skip
                frame[params] = text[params]
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
    if file.suffix == ".csv":
        frame = frame.apply(lambda c: c if pd.api.types.is_numeric_dtype(c) else c.map(_unquoted))
    for column in [c for c in frame.columns if c.startswith(_PARAMS)]:
        if not isinstance(frame[column].dtype, pd.StringDtype):  # text already: as it is
            frame[column] = frame[column].map(_param_text)  # as the store gives them: strings
    return _typed(_whole_rows(frame, file), file)


_PARAMS = ("dataset.", "method.")

_TEXT = ("status",)  # names and ids may read as numbers from a CSV ("123"): compared as text


def _typed(frame: pd.DataFrame, file: Any) -> pd.DataFrame:
    """``frame`` with its ``seed`` as whole numbers, once each identity column is checked to
    hold what an export writes: whole seeds in [0, 2^32), a status in text.

    :raises SuiteError: the first value of another type, naming the file, its row, its
        column and the value (``seed`` ``1.5``, a ``status`` that is a number).
    """
    import pandas as pd

    def refuse(column: str, row: int, value: Any, expected: str) -> SuiteError:
        shown = repr(value)[:60]
        return SuiteError(
            f"--results {file}: row {row + 1}, column {column}: expected {expected}, got"
            f" {shown}; export it again with 'harness results'."
        )

    seeds = pd.to_numeric(frame["seed"], errors="coerce").astype("Float64")
    whole = seeds.notna() & (seeds % 1 == 0) & (seeds >= 0) & (seeds < 2**32)
    if not whole.all():
        row = int((~whole).to_numpy().argmax())
        raise refuse("seed", row, frame["seed"].iloc[row], "a whole number in [0, 2^32)")
    for column in [c for c in _TEXT if c in frame.columns]:
        text = frame[column].map(lambda v: isinstance(v, str) or v is None or v is pd.NA)
        if not text.all():
            row = int((~text).to_numpy().argmax())
            raise refuse(column, row, frame[column].iloc[row], "text")
    return frame.assign(seed=seeds.astype("Int64"))


_FORMULA = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection")."""

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)", re.I)


def _quoted(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: a text starting with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return (a formula, ``=HYPERLINK(...)``, ``-2+3+cmd|...``) is
    prefixed with ``'``, as OWASP recommends, unless it is a plain number (``-0.5``); so is
    one starting with ``'`` and then one of those, so that :func:`_unquoted` undoes exactly
    what was added."""
    if not isinstance(value, str):
        return value
    formula = value.startswith(_FORMULA) and not _NUMBER.fullmatch(value)
    if formula or (value.startswith("'") and value[1:].startswith((*_FORMULA, "'"))):
        return "'" + value
    return value


def _unquoted(value: Any) -> Any:
    """A cell of a CSV export as it was before :func:`_quoted`."""
    if isinstance(value, str) and value.startswith("'") and _quoted(value[1:]) != value[1:]:
        return value[1:]
    return value


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as a CSV export writes it: every text cell that a spreadsheet would run as
    a formula prefixed with ``'`` (OWASP's advice against CSV injection; :func:`_quoted`);
    :func:`read_results` removes the prefix, so ``harness claims --results`` reads the
    values the store holds."""
    import pandas as pd

    return frame.apply(lambda c: c if pd.api.types.is_numeric_dtype(c) else c.map(_quoted))


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
    if "run_id" not in frame.columns or frame["run_id"].duplicated().any():  # else none
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
    shape it (``--seeds``, ``--method``, ...), each cell once: a row is a cell's when it has
    the cell's ``cell_hash`` (its full identity: task, dataset and method with every param,
    seed, metrics, plugin versions and code; :class:`harness.suites.identity.Cell`), as the store
    decides which runs are a cell's. :func:`check_results` says what is left out and why.

    :raises SuiteError: a cell found twice with other runs (two exports of one cell, say
        before and after a ``--force``): which one is its truth is not known.
    """
    hashes = {c.cell_hash for c in cells}
    out = frame[frame["cell_hash"].isin(hashes)] if "cell_hash" in frame else frame.iloc[:0]
    if "run_id" in out:
        out = out.drop_duplicates("run_id")
    if out["cell_hash"].duplicated().any():
        twice = out.loc[out["cell_hash"].duplicated(), "cell_hash"].iloc[0]
        raise SuiteError(
            f"--results hold cell {twice} more than once, from different runs: export each"
            " cell once (its latest run, as 'harness results' does)."
        )
    return out


@dataclass(frozen=True)
class Matched:
    """What :func:`check_results` found in one export: ``rows``, those that are the suite's
    cells, and ``left_out`` rows of other configurations (not cells of the suite as its
    options shape it: other params, seeds, datasets or methods), ``example`` naming one."""

    where: str
    rows: pd.DataFrame
    left_out: int = 0
    example: str = ""

    @property
    def note(self) -> str:
        """One line saying what was left out, or ``""``."""
        if not self.left_out:
            return ""
        rows = "row" if self.left_out == 1 else "rows"
        return (
            f"{self.where}: {self.left_out:,} {rows} of other configurations left out (no cell"
            f" of the suite as its options shape it), e.g. {self.example}."
        )


def check_results(frame: pd.DataFrame, registry: Any, cells: Sequence[Any], where: str) -> Matched:
    """The rows of ``frame`` (one export) that are the suite's ``cells``, matched by their
    full identity, and what is left out.

    A row is matched to the cell of its task, dataset, method and seed whose every dataset
    and method param it has, with the same value (as the store logs it; other params the
    row holds are values a component logged, not its configuration). A row that matches no
    cell is of another configuration: left out and counted (:attr:`Matched.note`). A
    matched row is the cell's result only if it was made by the code the cell would run
    now: the same ``cell_hash`` (which covers metrics, plugin versions and code
    fingerprints), ``plugin_version`` and ``plugin_fingerprint``; the store reruns such a
    cell rather than read it, and so this refuses it.

    :raises SuiteError: an export without ``cell_hash``; one that holds none of the suite's
        cells (another suite); a row made with another plugin version or other code,
        naming the row, the cell and what changed.
    """
    if "cell_hash" not in frame:
        raise SuiteError(
            f"{where} has no cell_hash column: its rows cannot be tied to the suite's cells;"
            " export the results again with 'harness results'."
        )
    candidates = _candidates(cells)
    keep, other, stale = [], [], []
    for position, row in enumerate(_identities(frame)):
        key = (row["task"], row["dataset"], row["method"], _seed(row["seed"]))
        found = [c for c, params in candidates.get(key, ()) if _has(row, params)]
        if not found:
            other.append((position, row, candidates.get(key, ())))
            continue
        cell = next((c for c in found if c.cell_hash == row["cell_hash"]), found[0])
        problem = _other_code(row, cell, registry)
        if problem:
            stale.append((position, row, problem))
        keep.append(position)
    if stale:
        position, row, problem = stale[0]
        more = f" ({len(stale) - 1:,} more rows alike)" if len(stale) > 1 else ""
        raise SuiteError(
            f"{where}: {_named_row(position, row)} {problem}{more}. The store reruns such a"
            " cell rather than read it: run the suite again and export its results."
        )
    if not keep and len(frame):
        position, row, near = other[0]
        raise SuiteError(
            f"{where} holds results of cells the suite does not have ({_named_row(position, row)}"
            f" {_differs(row, near)}, and every other row): it comes from another suite."
        )
    example = ""
    if other:
        position, row, near = other[0]
        example = f"{_named_row(position, row)} {_differs(row, near)}"
    return Matched(where, frame.iloc[keep], len(other), example)


_CANDIDATES: list[tuple[Sequence[Any], dict]] = []
"""The last cells :func:`_candidates` indexed, and their index (``harness claims`` checks
one export after another against the same suite's cells)."""


def _candidates(cells: Sequence[Any]) -> dict[tuple, list[tuple[Any, dict[str, str]]]]:
    """``{(task, dataset, method, seed): [(cell, its dataset and method params as the
    store logs them)]}`` of ``cells``."""
    if _CANDIDATES and _CANDIDATES[0][0] is cells:
        return _CANDIDATES[0][1]
    candidates: dict[tuple, list[tuple[Any, dict[str, str]]]] = {}
    for cell in cells:
        params = {k: v for k, v in cell.params().items() if k.startswith(_PARAMS)}
        key = (cell.task, cell.dataset, cell.method, int(cell.seed))
        candidates.setdefault(key, []).append((cell, params))
    _CANDIDATES[:] = [(cells, candidates)]  # holding ``cells``: its id is not reused
    return candidates


_IDENTITY = ("task", "dataset", "method", "seed", "cell_hash", "plugin", "plugin_version",
             "plugin_fingerprint")  # fmt: skip


def _identities(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Each row's identity columns (:data:`_IDENTITY` and the params), as
    ``frame.to_dict("records")`` gives them, without the metrics."""
    names = [c for c in frame.columns if c in _IDENTITY or str(c).startswith(_PARAMS)]
    columns = [frame[c].tolist() for c in names]
    return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]


def _seed(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def _has(row: Mapping[str, Any], params: Mapping[str, str]) -> bool:
    return all(row.get(k) == v for k, v in params.items())


def _named_row(position: int, row: Mapping[str, Any]) -> str:
    return (
        f"row {position + 1} ({row['task']}/{row['dataset']}/{row['method']}, seed {row['seed']})"
    )


def _differs(row: Mapping[str, Any], near: Sequence[tuple[Any, dict[str, str]]]) -> str:
    """Why ``row`` is none of the ``near`` cells (those of its task, dataset, method and
    seed): the first param whose value differs, or that no such cell exists."""
    for _, params in near:
        for k, v in params.items():
            if row.get(k) != v:
                return f"has {k}={row.get(k)}, the suite's cell {v}"
    return "is no cell of the suite"


def _other_code(row: Mapping[str, Any], cell: Any, registry: Any) -> str:
    """What makes ``row`` a result of other code than ``cell`` would run now, or ``""``."""
    plugin = row.get("plugin")
    installed = registry.plugins.get(plugin) if plugin else None
    version = row.get("plugin_version")
    if installed is not None and _given(version) and str(version) != str(installed):
        return f"was made with {plugin} {version}; {installed} is installed"
    fingerprint, now = row.get("plugin_fingerprint"), dict(cell.code).get(plugin)
    if _given(fingerprint) and now is not None and str(fingerprint) != now:
        return (
            f"was made by other code of plugin {plugin} (fingerprint {fingerprint}; the"
            f" installed code's is {now})"
        )
    if row["cell_hash"] != cell.cell_hash:
        plugins = " or ".join(dict.fromkeys(p for p, _ in cell.code)) or "its plugins"
        return (
            f"is of cell {row['cell_hash']}, not of the suite's cell {cell.cell_hash}: the code"
            f" or version of {plugins}, or the suite's metrics, changed since it was made"
        )
    return ""


def _given(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))
