"""Negative controls: a change of the evidence under which the claim must fail.

A claim is ``reproduced`` only if its control comes out ``not-reproduced`` (docs/design.md,
"Claims"). A control is deterministic (:class:`Swap`, :class:`UseMetric`,
:class:`Transform`: evaluated once) or randomised (:class:`Permute`, :class:`Randomised`:
evaluated over ``draws`` seeded draws, at least 20, and failed only if it fails in at least
95% of them; the share is shown).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from harness.claims.selection import Select, Table, swap

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MIN_DRAWS", "Control", "Permute", "Randomised", "Swap", "Transform", "UseMetric"]

MIN_DRAWS = 20
"""The fewest draws of a randomised control."""


class Control:
    """Base of the controls: ``apply(rows, metric, rng)`` returns the changed rows."""

    draws: int = 1
    description: str = ""

    @property
    def randomised(self) -> bool:
        return False

    def apply(
        self, rows: pd.DataFrame, metric: str, rng: np.random.Generator | None = None
    ) -> pd.DataFrame:
        raise NotImplementedError

    def applied(self, rows: Table, metric: str, rng: np.random.Generator | None = None) -> Table:
        """What :meth:`apply` gives, on the table the core evaluates (a control whose
        ``apply`` a subclass replaced is applied to the rows as a DataFrame)."""
        fast = getattr(type(self), "_on_table", None)
        if fast is None or _overridden(type(self), "apply"):
            return Table(self.apply(rows.frame(), metric, rng))
        return fast(self, rows, metric, rng)

    def __str__(self) -> str:
        return self.description or type(self).__name__


@dataclass(frozen=True)
class Swap(Control):
    """``source``'s rows in ``target``'s place (:func:`harness.claims.selection.swap`): an
    untrained model in the trained one's place, shuffled labels in the real ones'."""

    source: Select
    target: Select
    description: str = ""

    def __post_init__(self) -> None:
        for name in ("source", "target"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Select(value))
            elif not isinstance(value, Select):
                raise TypeError(f"Swap.{name} must be a Select or a method name, got {value!r}")
        if not self.description:
            object.__setattr__(self, "description", f"{self.source} in the place of {self.target}")

    def apply(self, rows, metric, rng=None):
        return swap(rows, self.source, self.target)

    def _on_table(self, rows: Table, metric: str, rng: np.random.Generator | None) -> Table:
        return rows.swap(self.source, self.target)


@dataclass(frozen=True)
class UseMetric(Control):
    """Another column in the place of the claim's metric (a distance to a non-limit, a
    statistic of the null)."""

    metric: str
    description: str = ""

    def __post_init__(self) -> None:
        if not self.description:
            object.__setattr__(self, "description", f"{self.metric} in the place of the metric")

    def apply(self, rows, metric, rng=None):
        if self.metric not in rows:
            raise ValueError(f"the control's column {self.metric!r} is not in the results")
        return rows.assign(**{metric: rows[self.metric]})

    def _on_table(self, rows: Table, metric: str, rng: np.random.Generator | None) -> Table:
        if self.metric not in rows:
            raise ValueError(f"the control's column {self.metric!r} is not in the results")
        return rows.assign(metric, *rows.column(self.metric))


@dataclass(frozen=True)
class Transform(Control):
    """A deterministic function of the rows: ``function(rows, metric) -> rows``."""

    function: Callable[..., pd.DataFrame]
    description: str = "a transformation of the results"

    def apply(self, rows, metric, rng=None):
        return self.function(rows.copy(), metric)


@dataclass(frozen=True)
class Permute(Control):
    """``column``'s values shuffled among the rows of each group of ``within`` (a param
    along which a slope is measured, the labels of two groups): the association the claim
    reads is destroyed while the marginal values stay."""

    column: str
    within: Sequence[str] = ("seed",)
    draws: int = MIN_DRAWS
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "within", tuple(self.within))
        if self.draws < MIN_DRAWS:
            raise ValueError(f"a randomised control needs at least {MIN_DRAWS} draws,"
                             f" got {self.draws}")  # fmt: skip
        if not self.description:
            where = ", ".join(self.within) or "all rows"
            object.__setattr__(self, "description", f"{self.column} permuted within {where}")

    @property
    def randomised(self) -> bool:
        return True

    def apply(self, rows, metric, rng=None):
        rng = rng or np.random.default_rng(0)
        if self.column not in rows:
            raise ValueError(f"the control permutes {self.column!r}, not in the results")
        out = rows.copy()
        values = out[self.column].to_numpy(copy=True)
        groups = [np.arange(len(out))]
        if self.within:
            indices = out.reset_index(drop=True).groupby(list(self.within)).indices
            groups = [np.asarray(g) for g in indices.values()]
        for g in groups:
            values[g] = values[rng.permutation(g)]
        out[self.column] = values
        return out

    def _on_table(self, rows: Table, metric: str, rng: np.random.Generator | None) -> Table:
        rng = rng or np.random.default_rng(0)
        if self.column not in rows:
            raise ValueError(f"the control permutes {self.column!r}, not in the results")
        codes, levels = rows.column(self.column)
        shuffled = codes.copy()
        for g in rows.groups(self.within) if self.within else [np.arange(len(rows))]:
            shuffled[g] = codes[rng.permutation(g)]
        return rows.assign(self.column, shuffled, levels)


@dataclass(frozen=True)
class Randomised(Control):
    """A seeded function of the rows: ``function(rows, metric, rng) -> rows``, evaluated
    over ``draws`` draws."""

    function: Callable[..., pd.DataFrame]
    description: str = "a randomised transformation of the results"
    draws: int = MIN_DRAWS
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.draws < MIN_DRAWS:
            raise ValueError(f"a randomised control needs at least {MIN_DRAWS} draws,"
                             f" got {self.draws}")  # fmt: skip

    @property
    def randomised(self) -> bool:
        return True

    def apply(self, rows, metric, rng=None):
        return self.function(rows.copy(), metric, rng or np.random.default_rng(0))


def _overridden(cls: type, name: str) -> bool:
    """Whether a subclass below the class that defines ``_on_table`` replaced ``name``."""
    for klass in cls.__mro__:
        if "_on_table" in klass.__dict__:
            return False
        if name in klass.__dict__:
            return True
    return False
