"""Params constraints are declared (``Annotated`` with pydantic ``Field``) and checked by the
core: an out-of-range value is refused with a message naming the field."""

import pytest
from harness_icl_gmm import datasets, methods

from harness.components import validate_params
from harness.errors import ParamsError

REFUSED = [
    (datasets.GaussianMixture, "d", 0, "greater than or equal to 1"),
    (datasets.GaussianMixture, "classes", 1, "greater than or equal to 2"),
    (datasets.GaussianMixture, "radius", 0.0, "greater than 0"),
    (datasets.GaussianMixture, "condition", 0.5, "greater than or equal to 1"),
    (datasets.GaussianMixtureShift, "covariance_mix", 1.5, "less than or equal to 1"),
    (datasets.GaussianMixtureShift, "train_prompts", 0, "greater than or equal to 1"),
    (methods.LinearAttentionGD, "lr_scale", 3.0, "less than or equal to 2"),
    (methods.ContextLogisticRegression, "C", 0.0, "greater than 0"),
    (methods.SoftmaxTransformer, "heads", 0, "greater than or equal to 1"),
    (methods.SoftmaxTransformer, "lr", 0.0, "greater than 0"),
]


@pytest.mark.parametrize(("component", "field", "value", "why"), REFUSED)
def test_an_out_of_range_param_is_refused_naming_the_field(component, field, value, why):
    with pytest.raises(ParamsError, match=why) as err:
        validate_params(component, {field: value})
    assert err.value.problems[0][0] == field  # the message's place is the field


def test_a_width_that_heads_do_not_divide_is_refused_naming_both():
    """A constraint between two fields (torch's attention would fail in the cell)."""
    with pytest.raises(ParamsError, match=r"width \(10\) must be a multiple of heads \(4\)"):
        validate_params(methods.SoftmaxTransformer, {"width": 10, "heads": 4})
    assert validate_params(methods.SoftmaxTransformer, {"width": 12, "heads": 4}).width == 12
