"""Params constraints declared with ``Annotated[..., pydantic.Field(...)]`` are enforced for
dataclass and pydantic Params alike (issue 29: declared, not hand-checked)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import pydantic
import pytest

from harness import Method
from harness.components import describe_type, validate_params
from harness.errors import ParamsError


class Bounded(Method):
    """A method with bounded params.

    Source: test fixture.
    """

    name = "bounded"
    task = "toy"

    @dataclass
    class Params:
        n: Annotated[int, pydantic.Field(ge=1)] = 5
        rate: Annotated[float, pydantic.Field(gt=0, le=1)] = 0.5


def test_annotated_field_constraints_are_enforced_on_dataclass_params():
    assert validate_params(Bounded, {"n": 3, "rate": 1.0}).n == 3
    at_least_1 = r"expected int, got 0 \(input should be greater than or equal to 1\)"
    with pytest.raises(ParamsError, match=at_least_1):
        validate_params(Bounded, {"n": 0})
    at_most_1 = r"expected float, got 1\.5 \(input should be less than or equal to 1\)"
    with pytest.raises(ParamsError, match=at_most_1):
        validate_params(Bounded, {"rate": 1.5})


def test_an_annotated_type_is_named_by_its_base_type():
    assert describe_type(Annotated[int, pydantic.Field(ge=1)]) == "int"
