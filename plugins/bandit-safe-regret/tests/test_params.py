"""Params constraints are declared (``Annotated`` with pydantic ``Field`` or a validator) and
checked by the core: an out-of-range value is refused with a message naming the field."""

import pytest
from harness_bandit_safe_regret import datasets, methods, metrics

from harness.components import validate_params
from harness.errors import ParamsError

REFUSED = [
    (datasets.RockPaperScissors, "T", 0, "greater than or equal to 1"),
    (datasets.RockPaperScissors, "switch_tv", 1.5, "less than or equal to 1"),
    (datasets.RockPaperScissors, "comparator_epsilon", 1.0, "less than 1"),
    (datasets.KuhnPoker, "comparator_epsilon", -0.1, "greater than or equal to 0"),
    (datasets.Rpsls, "n_actions", 4, "must be odd"),
    (datasets.Rpsls, "n_actions", 1, "greater than or equal to 3"),
    (datasets.RandomSymmetric, "n_actions", 1, "greater than or equal to 2"),
    (datasets.RandomSymmetric, "max_draws", 0, "greater than or equal to 1"),
    (datasets.RandomSymmetric, "min_delta", 0.0, "greater than 0"),
    (methods.PhasedAggressionBandit, "c0", 0.0, "greater than 0"),
    (methods.PhasedAggressionBandit, "fixed_alpha", 2.0, r"in \[0, 1\] or -1 \(off\)"),
    (methods.PhasedAggressionFull, "c0", -1.0, "greater than 0"),
    (methods.PhasedAggressionSequenceForm, "guard", -0.5, r">= 0 or -1 \(off\)"),
    (methods.PhasedAggressionSequenceForm, "eta_scale", 0.0, "greater than 0"),
    (methods.PhasedAggressionSequenceForm, "confidence", 1.0, "less than 1"),
    (methods.PhasedAggressionSequenceForm, "fixed_alpha", -0.5, r"in \[0, 1\] or -1"),
    (metrics.RegretVsComparator, "max_points", -1, "greater than or equal to 0"),
    (metrics.ExploitationSlope, "fraction", 0.0, "greater than 0"),
]


@pytest.mark.parametrize(("component", "field", "value", "why"), REFUSED)
def test_an_out_of_range_param_is_refused_naming_the_field(component, field, value, why):
    with pytest.raises(ParamsError, match=why) as err:
        validate_params(component, {field: value})
    assert err.value.problems[0][0] == field  # the message's place is the field


def test_the_off_values_and_the_edges_are_accepted():
    params = validate_params(
        methods.PhasedAggressionSequenceForm, {"fixed_alpha": -1.0, "guard": 0.0}
    )
    assert (params.fixed_alpha, params.guard) == (-1.0, 0.0)
    assert validate_params(datasets.Rpsls, {"n_actions": 7}).n_actions == 7


def test_min_delta_above_one_over_k_is_refused_naming_both_fields():
    """A constraint between two fields, checked in ``__post_init__``."""
    with pytest.raises(ParamsError, match=r"min_delta must be in \(0, 1/n_actions\)"):
        validate_params(datasets.RandomSymmetric, {"n_actions": 4, "min_delta": 0.3})
    assert validate_params(datasets.RandomSymmetric, {"n_actions": 4, "min_delta": 0.2})
