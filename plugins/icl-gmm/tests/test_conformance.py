"""harness conformance checks on every component of the plugin."""

from harness.plugins.testing import parametrize_with_checks


@parametrize_with_checks("icl-gmm")
def test_conformance(component, check):
    check(component)
