"""Which rows of a results table a claim reads, and how they become one value per unit.

A ``harness results`` table has one row per cell run: ``task``, ``dataset``, ``method``,
``seed``, the params as strings under ``dataset.<p>`` / ``method.<p>``, and the metrics as
floats. A claim never reads it directly: :class:`Select` picks rows (params compared as
numbers where they are numbers), :func:`unit_values` averages a metric over the rows of each
unit of replication, :func:`paired` aligns two groups on their shared units, and :func:`swap`
puts one group's rows in another's place (the controls and the rivals of docs/design.md,
"Claims").

>>> import pandas as pd
>>> rows = pd.DataFrame({"dataset": "d", "method": ["a", "a", "b", "b"],
...                      "seed": [0, 1, 0, 1], "method.k": ["1", "2", "1", "1"],
...                      "err": [0.1, 0.3, 0.5, 0.7]})
>>> Select("a", method_params={"k": 1.0}).rows(rows)["err"].tolist()
[0.1]
>>> unit_values(Select("b").rows(rows), "err", "seed").round(2).to_dict()
{'0': 0.5, '1': 0.7}
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Select", "Table", "paired", "param_matches", "swap", "unit_columns", "unit_values"]


def param_matches(value: Any, wanted: Any) -> bool:
    """Whether a logged param (a string in a results table, or a value in a suite's cell)
    is ``wanted``, a value or a list of values; numbers compare as numbers (``"0.10"`` is
    ``0.1``), booleans case-insensitively, everything else as strings.

    >>> param_matches("0.10", 0.1), param_matches("True", True), param_matches("x", ["x", "y"])
    (True, True, True)
    """
    if isinstance(wanted, (list, tuple, set, frozenset)):
        return any(param_matches(value, w) for w in wanted)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    if isinstance(wanted, bool) or isinstance(value, bool):
        return str(value).lower() == str(wanted).lower()
    if isinstance(wanted, (int, float)):
        try:
            return math.isclose(float(value), float(wanted), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return str(value) == str(wanted)


@dataclass(frozen=True)
class Select:
    """A group of rows: a method (any when None), the method and dataset params they must
    have (a list means any of its values), and optionally the dataset.

    >>> str(Select("gd", method_params={"steps": 10}))
    'gd(steps=10)'
    """

    method: str | None = None
    method_params: Mapping[str, Any] = field(default_factory=dict)
    dataset_params: Mapping[str, Any] = field(default_factory=dict)
    dataset: str | None = None

    def __post_init__(self) -> None:
        for name in ("method_params", "dataset_params"):
            if not isinstance(getattr(self, name), Mapping):
                raise TypeError(f"Select.{name} must be a mapping of param to value,"
                                f" got {getattr(self, name)!r}")  # fmt: skip

    def mask(self, results: pd.DataFrame) -> pd.Series:
        """A boolean Series over ``results``: the rows of this group."""
        import pandas as pd

        keep = pd.Series(True, index=results.index)
        if self.dataset is not None:
            keep &= results["dataset"].eq(self.dataset)
        if self.method is not None:
            keep &= results["method"].eq(self.method)
        for prefix, wanted in (("dataset", self.dataset_params), ("method", self.method_params)):
            for key, value in wanted.items():
                column = f"{prefix}.{key}"
                if column not in results:
                    return keep & False
                keep &= _matching(results[column], value)
        return keep

    def rows(self, results: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``results`` in this group."""
        return results[self.mask(results)]

    def __str__(self) -> str:
        params = {**self.dataset_params, **self.method_params}
        inner = ", ".join(f"{k}={v}" for k, v in params.items())
        name = self.method or "any method"
        if self.dataset:
            name = f"{self.dataset} x {name}"
        return f"{name}({inner})" if inner else name


def _matching(column: pd.Series, wanted: Any) -> pd.Series:
    """``param_matches`` over a column, called once per distinct value (a results table
    repeats each param value over many rows)."""
    distinct = column.drop_duplicates().tolist()
    return column.isin([v for v in distinct if param_matches(v, wanted)])


def unit_columns(results: pd.DataFrame, unit: str | Sequence[str]) -> list[str]:
    """The columns that name a unit: ``"seed"``; ``"configuration"`` (the dataset and its
    params: the seeds of one configuration averaged); or the given column names."""
    return _unit_columns(results.columns, unit)


def _unit_columns(names: Iterable[str], unit: str | Sequence[str]) -> list[str]:
    if unit == "seed":
        return ["seed"]
    if unit == "configuration":
        return ["dataset", *sorted(c for c in names if c.startswith("dataset."))]
    return [unit] if isinstance(unit, str) else list(unit)


def unit_values(results: pd.DataFrame, metric: str, unit: str | Sequence[str]) -> pd.Series:
    """The mean of ``metric`` over the rows of each unit: a Series indexed by the unit
    (a string; ``a|b`` for several columns), one value per unit of replication.

    :raises ValueError: ``metric`` is not a column, or a unit column is missing.
    """
    if metric not in results:
        metrics = [c for c in results.columns if "." not in c or c.count(".") == 1]
        raise ValueError(f"no metric column {metric!r} in the results (columns: "
                         f"{', '.join(sorted(map(str, metrics))[:20])})")  # fmt: skip
    columns = unit_columns(results, unit)
    missing = [c for c in columns if c not in results]
    if missing:
        raise ValueError(f"unit column(s) {missing} not in the results")
    keys = results[columns[0]].astype(str)
    for column in columns[1:]:
        keys = keys + "|" + results[column].astype(str)
    values = results[metric].astype(float)
    return values.groupby(keys.to_numpy()).mean()


def paired(a: pd.Series, b: pd.Series) -> tuple[Any, Any, list[str]]:
    """``(a values, b values, units)`` over the units both hold, in sorted unit order."""
    units = sorted(set(a.index) & set(b.index))
    return a.loc[units].to_numpy(float), b.loc[units].to_numpy(float), units


def swap(results: pd.DataFrame, source: Select, target: Select) -> pd.DataFrame:
    """``results`` with the rows of ``source`` in the place of ``target``'s.

    The rows of ``target`` are dropped; those of ``source`` take ``target``'s method name
    and every param ``target`` names (a list-valued one is left as the source row has it),
    so that whatever selects ``target`` reads ``source``. Used by controls (an untrained
    model's rows in the trained model's place) and rivals (a method without the paper's
    mechanism in the subject's place).

    :raises ValueError: ``source`` has no rows in ``results``.
    """
    import pandas as pd

    moved = source.rows(results)
    if moved.empty:
        raise ValueError(f"no rows of {source} to put in the place of {target}")
    moved = moved.copy()
    if target.method is not None:
        moved["method"] = target.method
    if target.dataset is not None:
        moved["dataset"] = target.dataset
    for prefix, wanted in (("dataset", target.dataset_params), ("method", target.method_params)):
        for key, value in wanted.items():
            if not isinstance(value, (list, tuple, set, frozenset)):
                moved[f"{prefix}.{key}"] = str(value)
    kept = results[~target.mask(results)]
    return pd.concat([kept, moved], ignore_index=True)


class _Levels:
    """The distinct values of a column (``values``, shape (k,), no missing value), and what
    is derived from them once: the values as floats, which of them a param matches."""

    __slots__ = ("_cache", "_floats", "_matching", "values")

    def __init__(self, values: Any) -> None:
        self.values = np.asarray(values, dtype=object)
        self._floats: np.ndarray | None = None
        self._matching: dict[tuple[str, bool], np.ndarray] = {}
        self._cache: dict[str, Any] = {}

    def floats(self) -> np.ndarray:
        """Shape (k + 1,): each value as a float, then ``nan`` (code -1: missing); a value
        that is no number is ``nan`` here and named by :meth:`not_numbers`."""
        if self._floats is None:
            try:
                self._floats = np.append(self.values.astype(float), np.nan)
            except (TypeError, ValueError):  # another table of the frame has such a value
                self._floats = np.append([_float(v) for v in self.values], np.nan)
        return self._floats

    def not_numbers(self, codes: np.ndarray) -> None:
        """Raise what ``float(value)`` raises for the first of ``codes``' values that is no
        number (as converting those rows alone would).

        :raises ValueError, TypeError: such a value.
        """
        floats = self.floats()
        for code in np.unique(codes[np.isnan(floats[codes]) & (codes >= 0)]):
            float(self.values[code])  # raises for text; a nan value is a number

    def matching(self, wanted: Any, exact: bool) -> np.ndarray:
        """Shape (k + 1,): whether each value is ``wanted`` (:func:`param_matches`, or
        ``==`` when ``exact``), then False (missing)."""
        key = (repr(wanted), exact)
        if key not in self._matching:
            hits = [v == wanted if exact else param_matches(v, wanted) for v in self.values]
            self._matching[key] = np.array([*hits, False], dtype=bool)
        return self._matching[key]


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


class _Columns:
    """A DataFrame's columns factorized on first use, shared by every :class:`Table` made
    from it (factorized at once by :meth:`Table.prepared`, before a fork, so that every
    claim of a task reads the codes its parent made)."""

    __slots__ = ("coded", "frame", "known", "names", "units")

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.names = list(frame.columns)  # read once: an Index of text is slow to scan
        self.known = frozenset(self.names)
        self.coded: dict[str, tuple[np.ndarray, _Levels]] = {}
        self.units: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def column(self, name: str) -> tuple[np.ndarray, _Levels]:
        if name not in self.coded:
            import pandas as pd

            codes, uniques = pd.factorize(self.frame[name], use_na_sentinel=True)
            self.coded[name] = (np.asarray(codes, dtype=np.intp), _Levels(list(uniques)))
        return self.coded[name]


class Table:
    """A claim's rows with the operations its kinds, controls and rivals need (select,
    swap, permute, per-unit means) on integer codes: each column of the rows is factorized
    once per claim, and a control's draw or a rival's placing is a new array of codes,
    never a new DataFrame. :meth:`frame` gives the rows as a DataFrame (what
    ``Select.rows`` and ``swap`` would give) for code that reads one.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"method": ["a", "a", "b", "b"], "seed": [0, 1, 0, 1],
    ...                      "err": [0.1, 0.3, 0.5, 0.7]})
    >>> swapped = Table(rows).swap(Select("b"), Select("a"))
    >>> swapped.frame()["method"].tolist(), swapped.unit_means("err", "seed")[1].tolist()
    (['b', 'b', 'a', 'a'], [0.5, 0.7])
    """

    __slots__ = ("_cache", "_own", "columns", "index", "renumbered")

    def __init__(
        self,
        frame: pd.DataFrame | _Columns,
        index: np.ndarray | None = None,
        own: dict[str, tuple[np.ndarray, _Levels]] | None = None,
        renumbered: bool = False,
    ) -> None:
        self.columns = frame if isinstance(frame, _Columns) else _Columns(frame)
        self.index = np.arange(len(self.columns.frame)) if index is None else index
        self._own = own or {}
        self.renumbered = renumbered
        self._cache: dict[Any, Any] = {}

    @classmethod
    def prepared(cls, frame: pd.DataFrame) -> Table:
        """A table of every row of ``frame`` with every column factorized now (the codes a
        forked child then reads instead of making its own)."""
        table = cls(frame)
        for name in frame.columns:
            table.columns.column(name)
        return table

    def __len__(self) -> int:
        return len(self.index)

    def __contains__(self, name: str) -> bool:
        return name in self._own or name in self.columns.known

    def names(self) -> list[str]:
        """The column names: the frame's, then any these rows added."""
        if not self._own:
            return list(self.columns.names)
        return list(dict.fromkeys([*self.columns.names, *self._own]))

    def column(self, name: str) -> tuple[np.ndarray, _Levels]:
        """``(codes, levels)`` of column ``name`` over these rows (code -1: missing)."""
        if name in self._own:
            return self._own[name]
        if name not in self.columns.known:  # a column another table of the frame has
            return np.full(len(self), -1, dtype=np.intp), _Levels([])
        codes, levels = self.columns.column(name)
        return codes[self.index], levels

    def floats(self, name: str) -> np.ndarray:
        """Column ``name`` as floats, shape (len(self),).

        :raises ValueError: a value of these rows is no number.
        """
        codes, levels = self.column(name)
        out = levels.floats()[codes]
        if np.isnan(out).any():
            levels.not_numbers(codes)
        return out

    def values(self, name: str) -> np.ndarray:
        """Column ``name``'s values over these rows, ``nan`` where missing (object array)."""
        codes, levels = self.column(name)
        return np.append(levels.values, np.nan)[codes]

    def isin(self, name: str, wanted: Sequence[Any]) -> np.ndarray:
        """Whether column ``name`` equals one of ``wanted`` in each row (``Series.isin``)."""
        codes, levels = self.column(name)
        hits = np.zeros(len(levels.values) + 1, dtype=bool)
        for value in wanted:
            if value is None or (isinstance(value, float) and math.isnan(value)):
                hits[-1] = True  # a missing value, as isin matches one
            else:
                hits |= levels.matching(value, exact=True)
        return hits[codes]

    def at(self, positions: np.ndarray) -> Table:
        """The rows at integer ``positions`` (shape (m,)), in that order."""
        own = {name: (codes[positions], levels) for name, (codes, levels) in self._own.items()}
        return Table(self.columns, self.index[positions], own, self.renumbered)

    def mask(self, select: Select) -> np.ndarray:
        """What ``select.mask`` gives on :meth:`frame`, as a boolean array."""
        keep = np.ones(len(self), dtype=bool)
        for name, wanted in (("dataset", select.dataset), ("method", select.method)):
            if wanted is not None:
                codes, levels = self.column(name)
                keep &= levels.matching(wanted, exact=True)[codes]
        for prefix, params in (("dataset", select.dataset_params),
                               ("method", select.method_params)):  # fmt: skip
            for key, value in params.items():
                name = f"{prefix}.{key}"
                if name not in self:
                    return keep & False
                codes, levels = self.column(name)
                keep &= levels.matching(value, exact=False)[codes]
        return keep

    def take(self, keep: np.ndarray) -> Table:
        """The rows where ``keep`` (a boolean array) holds."""
        own = {name: (codes[keep], levels) for name, (codes, levels) in self._own.items()}
        return Table(self.columns, self.index[keep], own, self.renumbered)

    def assign(self, name: str, codes: np.ndarray, levels: _Levels) -> Table:
        """These rows with column ``name`` set to ``levels.values[codes]``."""
        return Table(self.columns, self.index, {**self._own, name: (codes, levels)},
                     self.renumbered)  # fmt: skip

    def constant(self, name: str, value: Any) -> Table:
        """These rows with column ``name`` set to ``value`` in every row."""
        return self.assign(name, np.zeros(len(self), dtype=np.intp), _Levels([value]))

    def concat(self, other: Table) -> Table:
        """These rows, then ``other``'s (of the same frame), renumbered as
        ``pd.concat(..., ignore_index=True)`` does."""
        own = {}
        for name in dict.fromkeys([*self._own, *other._own]):
            (a, la), (b, lb) = self.column(name), other.column(name)
            if la is lb:
                own[name] = (np.concatenate([a, b]), la)
                continue
            merged = list(dict.fromkeys([*la.values.tolist(), *lb.values.tolist()]))
            place = {v: i for i, v in enumerate(merged)}
            remap_a = np.array([*(place[v] for v in la.values.tolist()), -1], dtype=np.intp)
            remap_b = np.array([*(place[v] for v in lb.values.tolist()), -1], dtype=np.intp)
            own[name] = (np.concatenate([remap_a[a], remap_b[b]]), _Levels(merged))
        return Table(self.columns, np.concatenate([self.index, other.index]), own, True)

    def swap(self, source: Select, target: Select) -> Table:
        """What :func:`swap` gives, as a table.

        :raises ValueError: ``source`` has no rows here.
        """
        moved = self.take(self.mask(source))
        if not len(moved):
            raise ValueError(f"no rows of {source} to put in the place of {target}")
        if target.method is not None:
            moved = moved.constant("method", target.method)
        if target.dataset is not None:
            moved = moved.constant("dataset", target.dataset)
        for prefix, wanted in (("dataset", target.dataset_params),
                               ("method", target.method_params)):  # fmt: skip
            for key, value in wanted.items():
                if not isinstance(value, (list, tuple, set, frozenset)):
                    moved = moved.constant(f"{prefix}.{key}", str(value))
        return self.take(~self.mask(target)).concat(moved)

    def unit_means(self, metric: str, unit: str | Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(units, values)``: what :func:`unit_values` gives (its index and its values,
        in unit order), as arrays."""
        if metric not in self:
            metrics = [c for c in self.names() if "." not in c or c.count(".") == 1]
            raise ValueError(f"no metric column {metric!r} in the results (columns: "
                             f"{', '.join(sorted(map(str, metrics))[:20])})")  # fmt: skip
        codes, labels = self.unit_codes(unit)
        values = self.floats(metric)
        rows = codes >= 0
        counted = rows & ~np.isnan(values)  # a mean skips missing values, as pandas' does
        sums = np.bincount(codes[counted], values[counted], len(labels))
        counts = np.bincount(codes[counted], minlength=len(labels))
        present = np.bincount(codes[rows], minlength=len(labels)) > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            return labels[present], sums[present] / counts[present]

    def unit_codes(self, unit: str | Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(codes, labels)``: each row's unit, numbered in the sorted order of the units'
        labels (``a|b`` for several columns), ``-1`` where a unit column is missing (rows
        :func:`unit_values` leaves out); ``labels`` has shape (units,)."""
        columns = _unit_columns(self.names() if unit == "configuration" else (), unit)
        missing = [c for c in columns if c not in self]
        if missing:
            raise ValueError(f"unit column(s) {missing} not in the results")
        if not any(c in self._own for c in columns) and len(self.index) < len(self.columns.frame):
            key = repr(columns)  # the frame's units, computed once, read at these rows
            if key not in self.columns.units:
                self.columns.units[key] = Table(self.columns).unit_codes(unit)
            codes, labels = self.columns.units[key]
            return codes[self.index], labels
        parts = [self.column(c) for c in columns]
        stacked = np.stack([codes for codes, _ in parts], axis=1)
        rows = (stacked >= 0).all(axis=1)
        present, inverse = np.unique(stacked[rows], axis=0, return_inverse=True)
        words = [[str(v) for v in levels.values] for _, levels in parts]
        labels = np.array(["|".join(words[i][d] for i, d in enumerate(row))
                           for row in present.tolist()], dtype=object)  # fmt: skip
        order = np.argsort(labels, kind="stable")
        rank = np.empty(len(order), dtype=np.intp)
        rank[order] = np.arange(len(order))
        codes = np.full(len(self), -1, dtype=np.intp)
        codes[rows] = rank[inverse.ravel()]
        return codes, labels[order]

    def groups(self, columns: Sequence[str]) -> list[np.ndarray]:
        """The row positions of each group of equal ``columns`` values, in the groups'
        sorted order, rows with a missing value left out: ``groupby(columns).indices``.

        :raises KeyError: a column is not in the rows.
        """
        key = ("groups", tuple(columns))
        if key not in self._cache:  # a randomised control asks for the same groups each draw
            self._cache[key] = self._groups(columns)
        return self._cache[key]

    def _groups(self, columns: Sequence[str]) -> list[np.ndarray]:
        ranks = []
        for name in columns:
            if name not in self:
                raise KeyError(name)
            codes, levels = self.column(name)
            order = np.argsort(levels.values, kind="stable")
            rank = np.full(len(order) + 1, -1, dtype=np.intp)
            rank[order] = np.arange(len(order))
            ranks.append(rank[codes])
        stacked = np.stack(ranks, axis=1)
        rows = np.flatnonzero((stacked >= 0).all(axis=1))
        _, inverse, counts = np.unique(stacked[rows], axis=0, return_inverse=True,
                                       return_counts=True)  # fmt: skip
        order = np.argsort(inverse.ravel(), kind="stable")
        return np.split(rows[order], np.cumsum(counts)[:-1])

    def frame(self) -> pd.DataFrame:
        """These rows as a DataFrame."""
        out = self.columns.frame.iloc[self.index]
        if self._own:
            out = out.copy()
            import pandas as pd

            for name, (codes, levels) in self._own.items():
                values = np.append(levels.values, np.nan)[codes]
                out[name] = pd.Series(values, index=out.index).infer_objects()
        if self.renumbered:
            out = out.reset_index(drop=True)
        return out
