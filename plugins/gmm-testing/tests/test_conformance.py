"""harness conformance checks on every gmm-testing component."""

from harness.testing import parametrize_with_checks


@parametrize_with_checks("gmm-testing")
def test_conformance(component, check):
    check(component)
