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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Select", "paired", "param_matches", "swap", "unit_columns", "unit_values"]


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
    if unit == "seed":
        return ["seed"]
    if unit == "configuration":
        return ["dataset", *sorted(c for c in results.columns if c.startswith("dataset."))]
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
