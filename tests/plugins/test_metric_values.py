"""A metric's value checked once: ``harness run`` and ``check-plugin`` take the same values
and refuse the same non-numbers."""

from __future__ import annotations

import re

import numpy as np
import pytest


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2.0", "metric 'm' returned '2.0' (str), not a real number"),
        ({}, "metric 'm' returned an empty dict: no value"),
        ({"a": "1"}, "metric 'm.a' returned '1' (str), not a real number"),
        (np.array("0.15"), "metric 'm' returned array('0.15', dtype='<U4') (ndarray)"),
        (np.complex128(0.15 + 5j), "metric 'm' returned"),
    ],
)
def test_a_metric_value_that_is_no_number_fails(value, reason):
    """A string (which float() would take) or an empty dict is no metric value."""
    from harness.plugins.metric_values import MetricValueError, metric_values

    with pytest.raises(MetricValueError, match=re.escape(reason)):
        metric_values("m", value)


def test_run_and_check_plugin_take_the_same_metric_values():
    """A 0-d NumPy array or a torch scalar is a number to ``harness run`` and to
    ``check-plugin`` alike (check-plugin refused what run logged); NaN fails both."""
    import torch
    import toy_plugin

    from harness import Metric, hookimpl
    from harness.plugins.metric_values import NonFiniteMetricError, metric_values
    from harness.plugins.registry import build_registry
    from harness.plugins.testing import run_checks

    values = {"zero-d": np.array(0.5), "torch-scalar": torch.tensor(0.5), "nan": np.nan}

    def metric(name: str) -> type[Metric]:
        def compute(self, data: toy_plugin.Draws, output: float) -> float:
            return values[name]

        doc = "A fixed value.\n\nSource: test fixture."
        return type(
            name, (Metric,), {"name": name, "task": "toy", "compute": compute, "__doc__": doc}
        )

    class Plugin:
        @hookimpl
        def harness_metrics(self):
            return [metric(name) for name in values]

    registry = build_registry({"toy": toy_plugin, "values": Plugin()}, entry_points=False)
    outcomes = {
        check.split("-check_")[0]: (outcome, message)
        for check, outcome, message in run_checks("values", registry)
        if check.endswith("check_compute_returns_valid_value")
    }
    assert outcomes["zero-d"][0] == outcomes["torch-scalar"][0] == "passed", outcomes
    assert outcomes["nan"][0] == "failed" and "[finite-metric]" in outcomes["nan"][1]
    assert metric_values("m", values["zero-d"]) == metric_values("m", values["torch-scalar"])
    with pytest.raises(NonFiniteMetricError):
        metric_values("m", values["nan"])
