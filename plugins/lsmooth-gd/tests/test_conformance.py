from harness.plugins.testing import parametrize_with_checks


@parametrize_with_checks("lsmooth-gd")
def test_conformance(component, check):
    check(component)
