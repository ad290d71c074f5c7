"""Selection, units and swap: each check passes on the core's function and fails on a
wrong variant (a swap that leaves the target's rows in, params compared as strings)."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.claims import Select, paired, param_matches, swap, unit_values


def _rows() -> pd.DataFrame:
    return pd.DataFrame({
        "dataset": "d",
        "method": ["cnn", "cnn", "cnn", "cnn", "linear", "linear"],
        "seed": [0, 0, 1, 1, 0, 1],
        "method.width": ["8", "8", "8.0", "16", "0", "0"],
        "err": [0.1, 0.3, 0.5, 0.9, 0.7, 0.8],
    })  # fmt: skip


CNN, LINEAR = Select("cnn", {"width": 8}), Select("linear")


def swap_keeping_the_target(results, source, target):
    """Wrong: the source's rows relabelled, the target's left in."""
    moved = source.rows(results).assign(method=target.method)
    return pd.concat([results, moved], ignore_index=True)


def check_swap(function) -> None:
    out = function(_rows(), LINEAR, CNN)
    assert sorted(CNN.rows(out)["err"]) == [0.7, 0.8]
    assert list(out.loc[out["method.width"].eq("16"), "err"]) == [0.9]  # others untouched


def test_swap_puts_the_source_in_the_targets_place_and_drops_the_target():
    check_swap(swap)
    with pytest.raises(AssertionError):
        check_swap(swap_keeping_the_target)
    with pytest.raises(ValueError, match="no rows of absent"):
        swap(_rows(), Select("absent"), CNN)


def test_params_match_as_numbers_and_lists_and_never_as_nan():
    assert list(CNN.rows(_rows())["err"]) == [0.1, 0.3, 0.5]  # "8" and "8.0" are 8
    assert Select("cnn", {"width": [8, 16]}).rows(_rows()).shape[0] == 4
    assert Select("cnn", {"depth": 2}).rows(_rows()).empty  # an unknown param: no rows
    assert param_matches("1e-3", 0.001) and not param_matches("8", "8.0")
    assert not param_matches(float("nan"), 1.0) and param_matches("true", True)


def test_unit_values_average_the_rows_of_each_unit_and_pair_on_shared_units():
    per_seed = unit_values(CNN.rows(_rows()), "err", "seed")
    assert per_seed.to_dict() == pytest.approx({"0": 0.2, "1": 0.5})
    _, b, units = paired(per_seed, unit_values(LINEAR.rows(_rows()), "err", "seed"))
    assert units == ["0", "1"] and list(b) == [0.7, 0.8]
    with pytest.raises(ValueError, match="no metric column"):
        unit_values(_rows(), "acc", "seed")
    by_two = unit_values(_rows(), "err", ["seed", "method.width"])
    assert by_two["1|16"] == 0.9
