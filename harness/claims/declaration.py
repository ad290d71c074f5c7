"""What a claim declares beside its test: where it comes from (:class:`Source`), the cells
it reads (:class:`Cells`, with their seeds counted per configuration) and the methods that
must fail in its subject's place (:class:`Rival`). Public through :mod:`harness.claims`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.claims.selection import Select, Table, param_matches

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Cells", "Rival", "Source"]


@dataclass(frozen=True)
class Source:
    """Where a claim comes from: ``paper`` (short citation), ``arxiv`` id, and ``where``
    in it (``"Theorem 3.1"``, ``"Table 2"``, ``"Figure 4"``)."""

    paper: str
    arxiv: str = ""
    where: str = ""

    def __str__(self) -> str:
        parts = [self.paper, f"arXiv:{self.arxiv}" if self.arxiv else "", self.where]
        return ", ".join(p for p in parts if p)


@dataclass(frozen=True)
class Rival:
    """A method without the paper's mechanism that could produce the claim's evidence
    (a model without the hidden layer, a rule that is not trained), with the params its
    cells have and ``why`` it is a rival. The claim is evaluated with its rows in the
    subject's place; it must come out ``not-reproduced``."""

    method: str
    params: Mapping[str, Any] = field(default_factory=dict)
    why: str = ""

    def select(self) -> Select:
        return Select(self.method, method_params=dict(self.params))

    @property
    def label(self) -> str:
        """``method`` or ``method(param=value, ...)``: how tables name the rival."""
        return str(self.select())


@dataclass(frozen=True)
class Cells:
    """Cells a claim needs: a dataset and one or more methods, each with the params the
    cells must have (others free), and the fewest distinct seeds of each required cell (each
    dataset configuration x method configuration).

    ``dataset_params`` and ``method_params`` values may be a list: any of its values, and
    every value of the list must have cells.
    """

    dataset: str
    methods: tuple[str, ...]
    dataset_params: Mapping[str, Any] = field(default_factory=dict)
    method_params: Mapping[str, Any] = field(default_factory=dict)
    min_seeds: int = 2

    def __post_init__(self) -> None:
        if isinstance(self.methods, str):
            object.__setattr__(self, "methods", (self.methods,))
        if self.min_seeds < 1:
            raise ValueError(f"Cells.min_seeds must be >= 1, got {self.min_seeds}")

    def __str__(self) -> str:
        dataset = _named(self.dataset, self.dataset_params)
        methods = ", ".join(_named(m, self.method_params) for m in self.methods)
        return f"{dataset} x {methods}, >= {self.min_seeds} seeds"

    def select(self, method: str | None = None) -> Select:
        """The rows of these cells (of one ``method``), as a :class:`Select`."""
        return Select(method, dict(self.method_params), dict(self.dataset_params), self.dataset)

    def rows(self, results: pd.DataFrame, method: str | None = None) -> pd.DataFrame:
        """The rows of ``results`` (a ``harness results`` table) these cells produced; an
        added ``method`` is matched on the dataset params only."""
        if method:
            return Select(method, {}, dict(self.dataset_params), self.dataset).rows(results)
        return results[self.mask(results)]

    def mask(self, results: pd.DataFrame) -> pd.Series:
        """A boolean Series over ``results``: the rows of these cells."""
        return self.select().mask(results) & results["method"].isin(self.methods)

    def matches_cell(self, cell: Any) -> bool:
        """Whether a suite's cell (``harness.suites.identity.Cell``) is one of these cells."""
        return (
            cell.dataset == self.dataset
            and cell.method in self.methods
            and all(param_matches(cell.dataset_params.get(k), v)
                    for k, v in self.dataset_params.items())
            and all(param_matches(cell.method_params.get(k), v)
                    for k, v in self.method_params.items())
        )  # fmt: skip

    def table_mask(self, table: Table) -> np.ndarray:
        """:meth:`mask` over a :class:`~harness.claims.selection.Table`, as a boolean array."""
        return table.mask(self.select()) & table.isin("method", self.methods)

    def shortfalls(self, ok: pd.DataFrame | Table, mask: Any = None) -> list[str]:
        """Each required cell of ``ok`` rows short of ``min_seeds`` seeds: every method,
        every value of a list-valued param, every configuration found (counted apart).
        ``mask``: :meth:`mask` of ``ok`` (or :meth:`table_mask` of a table), when known."""
        table = ok if isinstance(ok, Table) else Table(ok)
        keep = self.table_mask(table) if mask is None else np.asarray(mask, dtype=bool)
        out = []
        lists = {f"{p}.{k}": v for p, wanted in (("dataset", self.dataset_params),
                 ("method", self.method_params)) for k, v in wanted.items()
                 if isinstance(v, (list, tuple, set, frozenset))}  # fmt: skip
        mine = table.take(keep)
        for method in self.methods:
            rows = mine.take(mine.isin("method", (method,)))
            dataset, named = (
                _named(self.dataset, self.dataset_params),
                _named(method, self.method_params),
            )
            name = f"{dataset} x {named}"
            if not len(rows):
                out.append(f"{name}: 0 of {self.min_seeds} seeds")
                continue
            for column, values in lists.items():
                codes, levels = rows.column(column)
                distinct = levels.values[np.unique(codes[codes >= 0])].tolist()
                for value in values:
                    if not any(param_matches(v, value) for v in distinct):
                        out.append(f"{name}: no cells with {column}={value}")
            params = _configuration_columns(rows)
            if _fewest_seeds(rows, params) >= self.min_seeds:
                continue
            out += self._short_configurations(rows.frame(), params, name)
        return out

    def _short_configurations(self, rows: pd.DataFrame, params: list[str], name: str) -> list[str]:
        """Each configuration (equal ``params``) of ``rows`` with fewer than ``min_seeds``
        seeds, named."""
        out = []
        seeds = rows.groupby(params, dropna=False)["seed"].nunique() if params else \
            rows["seed"].nunique()  # fmt: skip
        counts = seeds if hasattr(seeds, "items") else {(): seeds}
        for key, n in counts.items():
            if n < self.min_seeds:
                where = ", ".join(f"{c}={k}" for c, k in zip(params, np.atleast_1d(key),
                                  strict=False))  # fmt: skip
                where = f" [{where}]" if where else ""
                out.append(f"{name}{where}: {n} of {self.min_seeds} seeds")
        return out


def _text_codes(rows: Table, name: str) -> np.ndarray:
    """Column ``name``'s codes over ``rows``, values equal as text sharing one (what
    ``pd.factorize(column.astype(str))`` tells apart), -1 where missing."""
    codes, levels = rows.column(name)
    merged = levels._cache.get("text")
    if merged is None:
        import pandas as pd

        merged = np.append(pd.factorize(np.array([str(v) for v in levels.values],
                                                 dtype=object))[0], -1)  # fmt: skip
        levels._cache["text"] = merged
    return merged[codes]


def _dense(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """``codes`` renumbered ``0..k-1`` over the values present (-1 stays), and ``k``."""
    present = codes >= 0
    out = np.full(len(codes), -1, dtype=np.intp)
    if not present.any():
        return out, 0
    values, inverse = np.unique(codes[present], return_inverse=True)
    out[present] = inverse.ravel()
    return out, len(values)


def _configuration_columns(rows: Table) -> list[str]:
    """The param columns that tell configurations apart: each seed holds several of their
    values, and every seed the same ones. A dataset's ``describe()`` fact logged as
    ``dataset.<key>`` (drawn with the data: one value a seed, another for the next seed) is
    no configuration, nor is a param every row shares (values compared as text)."""
    out = []
    seeds, _ = _dense(_text_codes(rows, "seed"))
    for column in rows.names():
        if not column.startswith(("dataset.", "method.")):
            continue
        values, kinds = _dense(_text_codes(rows, column))
        if not kinds:
            continue
        both = (seeds >= 0) & (values >= 0)
        pairs = np.unique(seeds[both] * kinds + values[both])  # each seed's distinct values
        per_seed = np.bincount(pairs // kinds).max() if pairs.size else 0
        if per_seed > 1 and kinds == per_seed:
            out.append(column)
    return out


def _fewest_seeds(rows: Table, params: list[str]) -> int:
    """The fewest distinct seeds of any configuration (equal ``params`` values, a missing
    value one of them) of ``rows``: ``groupby(params, dropna=False)["seed"].nunique().min()``
    on codes."""
    seed = rows.column("seed")[0]
    keys = [rows.column(c)[0] for c in params]
    stacked = np.stack([*keys, seed], axis=1)[seed >= 0]
    if not len(stacked):
        return 0
    pairs = np.unique(stacked, axis=0)  # each configuration's distinct seeds
    _, counts = np.unique(pairs[:, :-1], axis=0, return_counts=True)
    configurations = np.unique(np.stack(keys, axis=1), axis=0) if keys else np.empty((1, 0))
    return int(counts.min()) if len(counts) == len(configurations) else 0


def _named(name: str, params: Mapping[str, Any]) -> str:
    inner = ", ".join(f"{k}={v}" for k, v in params.items())
    return f"{name}({inner})" if inner else name
