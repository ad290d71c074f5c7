"""Conformance checks (``harness check-plugin``): each broken rule is caught, naming the
component and the rule; a method-only package scaffolded with ``new-plugin --task``
installs, runs and lands in the paper's report table (tests/test_guide.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import broken_plugin
import pytest
import toy_plugin

from harness.plugins.registry import build_registry
from harness.plugins.testing import run_checks

HARNESS = str(Path(sys.executable).with_name("harness"))
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def broken():
    registry = build_registry({"toy": toy_plugin, "broken": broken_plugin}, entry_points=False)
    return {
        check_id: (outcome, message)
        for check_id, outcome, message in run_checks("broken", registry)
    }


@pytest.mark.parametrize(
    ("check_id", "words"),
    [
        (
            "no-annotation-check_run_annotation_names_output_type",
            ["no-annotation", "[run-annotation]", "no return annotation"],
        ),
        (
            "no-annotation-check_run_returns_output_type",
            ["no-annotation", "[run-returns-output-type]", "str"],
        ),
        ("wrong-type-check_run_returns_output_type", ["wrong-type", "returned list", "'noise'"]),
        (
            "nan-on-some-check_compute_returns_valid_value",
            ["nan-on-some", "[finite-metric]", "method 'sleepy'"],
        ),
        ("raising-report-check_build_on_check_results", ["raising-report", "[build]", "KeyError"]),
    ],
)
def test_check_plugin_fails_each_broken_rule_naming_component_and_rule(broken, check_id, words):
    outcome, message = broken[check_id]
    assert outcome == "failed"
    for word in words:
        assert word in message, message


def test_the_toy_plugin_fails_only_where_it_is_broken_on_purpose():
    registry = build_registry({"toy": toy_plugin}, entry_points=False)
    failed = [r[0] for r in run_checks("toy", registry) if r[1] == "failed"]
    assert failed == ["boom-check_run_returns_output_type"]  # 'boom' always raises


# The scaffold -> install -> run -> --add-method path is tests/test_guide.py, which runs
# every command of docs/plugin-authoring.md as written.
