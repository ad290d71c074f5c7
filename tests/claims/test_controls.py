"""Controls change the evidence as they say: each check passes on the control and fails on
a wrong variant (a Permute that does not permute, one that mixes groups)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from harness.claims import Permute, Randomised, Select, Swap, UseMetric
from harness.claims.controls import MIN_DRAWS


def _rows() -> pd.DataFrame:
    return pd.DataFrame({
        "method": ["a"] * 4 + ["b"] * 4,
        "seed": [0, 1, 2, 3] * 2,
        "label": list(range(8)),
        "err": np.arange(8.0),
        "null": 0.0,
    })  # fmt: skip


@dataclass(frozen=True)
class StillPermute(Permute):
    """Wrong: returns the rows as they are."""

    def apply(self, rows, metric, rng=None):
        return rows.copy()


@dataclass(frozen=True)
class PermuteAcross(Permute):
    """Wrong: shuffles over all rows, ignoring ``within``."""

    def apply(self, rows, metric, rng=None):
        out = rows.copy()
        out[self.column] = (rng or np.random.default_rng(0)).permutation(out[self.column].values)
        return out


def check_permutes_within_groups(control: Permute) -> None:
    rows, changed = _rows(), 0
    for draw in range(MIN_DRAWS):
        out = control.apply(rows, "err", np.random.default_rng(draw))
        for _, group in out.groupby("seed"):  # same values within each seed
            assert sorted(group["label"]) == sorted(rows.loc[group.index, "label"])
        changed += not out["label"].equals(rows["label"])
    assert changed >= MIN_DRAWS // 2


def test_permute_shuffles_the_column_within_each_group():
    check_permutes_within_groups(Permute("label", within=("seed",)))
    for wrong in (StillPermute("label", within=("seed",)), PermuteAcross("label", ("seed",))):
        with pytest.raises(AssertionError):
            check_permutes_within_groups(wrong)


def test_randomised_controls_need_twenty_draws_and_are_seeded():
    with pytest.raises(ValueError, match="at least 20 draws"):
        Permute("label", draws=5)
    with pytest.raises(ValueError, match="at least 20 draws"):
        Randomised(lambda rows, metric, rng: rows, draws=1)
    control = Permute("label")
    one = control.apply(_rows(), "err", np.random.default_rng(3))
    assert one.equals(control.apply(_rows(), "err", np.random.default_rng(3)))


def test_swap_and_use_metric_controls():
    out = Swap("b", "a").apply(_rows(), "err")
    assert list(Select("a").rows(out)["err"]) == [4.0, 5.0, 6.0, 7.0]
    assert list(UseMetric("null").apply(_rows(), "err")["err"]) == [0.0] * 8
    with pytest.raises(ValueError, match="'absent'"):
        UseMetric("absent").apply(_rows(), "err")
