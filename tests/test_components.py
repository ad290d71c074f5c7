"""The component base classes: Params constraints declared with
``Annotated[..., pydantic.Field(...)]`` are enforced for dataclass and pydantic Params alike;
a curve whose steps do not increase is refused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import pydantic
import pytest

from harness import Method
from harness.components import Curve, describe_type, validate_params
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


def test_the_yaml_number_hint_is_given_for_numeric_params_only():
    """'1e3' for an int is YAML's string (the hint says how to write the number); '1' for
    a Literal of words is just a wrong word (before: told to 'write 1.0 or 1')."""

    class Worded(Method):
        """A method with a numeric and a worded param.

        Source: test fixture.
        """

        name, task = "worded", "toy"

        @dataclass
        class Params:
            count: int = 5
            kind: Literal["plain", "noisy"] = "plain"

    with pytest.raises(ParamsError) as numeric:
        validate_params(Worded, {"count": "1e3"})
    assert "YAML reads 1e3 as a string: write 1000.0 or 1000." in str(numeric.value)
    with pytest.raises(ParamsError) as worded:
        validate_params(Worded, {"kind": "1"})
    assert "YAML reads" not in str(worded.value) and "one of 'plain', 'noisy'" in str(worded.value)


def test_a_curve_whose_steps_do_not_increase_is_refused():
    """Its last value would not be its final one (the table shows ``Curve.final``)."""
    with pytest.raises(ValueError, match=r"strictly increasing.*got 3 then 2"):
        Curve([0.1, 0.2, 0.3], steps=[1, 3, 2])
    with pytest.raises(ValueError, match="whole numbers"):  # int64 would make them 0, 0, 0
        Curve([1.0, 2.0, 0.15], steps=[0.2, 0.5, 0.9])
    with pytest.raises(ValueError, match="real numbers"):
        Curve(["1.0", "0.15"])
    assert Curve([1.0, 2.0], steps=[1.0, 2.0]).steps.tolist() == [1, 2]
    assert Curve([0.1, 0.2], steps=[5, 9]).final == 0.2
