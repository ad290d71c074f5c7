"""Params constraints are declared (``Annotated`` with pydantic ``Field`` or a validator) and
checked by the core: an out-of-range value is refused with a message naming the field."""

import pytest
from harness_weak_features import datasets, methods, metrics

from harness.components import validate_params
from harness.errors import ParamsError

REFUSED = [
    (datasets.Synthetic, "n", 10, "greater than or equal to 20"),
    (datasets.Synthetic, "rate", 1.0, "less than 1"),
    (datasets.Synthetic, "n_levels", 1, "greater than or equal to 2"),
    (datasets.Affairs, "n", 10, r"must be 0 \(all rows\) or >= 20"),
    (datasets.Adult, "n", -1, "greater than or equal to 0"),
    (datasets.Anes96, "test_fraction", 0.0, "greater than 0"),
    (methods.Naive, "C", 0.0, "greater than 0"),
    (methods.KnnImpute, "n_neighbors", 0, "greater than or equal to 1"),
    (methods.HgbNative, "learning_rate", 0.0, "greater than 0"),
    (methods.EmulatedEstimator, "epsilon", 1.0, "less than 1"),
    (methods.WflSequential, "lr", 0.0, "greater than 0"),
    (methods.WflIterative, "rounds", -1, "greater than or equal to 0"),
    (metrics.WflBound, "delta", 1.0, "less than 1"),
]


@pytest.mark.parametrize(("component", "field", "value", "why"), REFUSED)
def test_an_out_of_range_param_is_refused_naming_the_field(component, field, value, why):
    with pytest.raises(ParamsError, match=why) as err:
        validate_params(component, {field: value})
    assert err.value.problems[0][0] == field  # the message's place is the field


def test_all_rows_is_accepted_and_an_unknown_column_is_named_with_its_case():
    assert validate_params(datasets.Affairs, {"n": 0}).n == 0
    with pytest.raises(ParamsError, match=r"unknown column 'pid'\. Known: PID, "):
        validate_params(datasets.Anes96, {"weak_columns": "pid"})
