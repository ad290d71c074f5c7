"""Params constraints are declared (``Annotated`` with pydantic ``Field`` or a validator) and
checked by the core: an out-of-range value is refused with a message naming the field."""

import pytest
from harness_margin_qml import datasets, methods

from harness.components import validate_params
from harness.errors import ParamsError

REFUSED = [
    (datasets.ClusterPhases, "n_qubits", 3, "greater than or equal to 4"),
    (datasets.ClusterPhases, "n_train", 1, "greater than or equal to 2"),
    (datasets.TfimPhases, "noise", 1.5, "less than or equal to 1"),
    (datasets.DigitsBinary, "n_test", 1, "greater than or equal to 2"),
    (methods.QCNNMethod, "layers", 0, "greater than or equal to 1"),
    (methods.QCNNMethod, "lr", 0.0, "greater than 0"),
    (methods.StronglyEntanglingMethod, "window", 0, "greater than or equal to 1"),
    (methods.IQPEmbedding, "window", 0, "greater than or equal to 1"),
    (methods.NQE, "n_threads", 0, "greater than or equal to 1"),
    (methods.QCNNGroupMethod, "layers", [], "at least 1 item"),
    (methods.QCNNGroupMethod, "layers", [1, 0], "greater than or equal to 1"),
    (methods.StronglyEntanglingGroupMethod, "layers", [2, 2], "must not repeat a depth"),
]


@pytest.mark.parametrize(("component", "field", "value", "why"), REFUSED)
def test_an_out_of_range_param_is_refused_naming_the_field(component, field, value, why):
    with pytest.raises(ParamsError, match=why) as err:
        validate_params(component, {field: value})
    assert err.value.problems[0][0] == field  # the message's place is the field


def test_digits_splits_above_the_images_are_refused_naming_both():
    """A constraint between two fields, checked in ``__post_init__``."""
    with pytest.raises(ParamsError, match=r"n_train \+ n_test must be <= 360"):
        validate_params(datasets.DigitsBinary, {"n_train": 300, "n_test": 100})
    assert validate_params(datasets.DigitsBinary, {"n_train": 300, "n_test": 60}).n_test == 60
