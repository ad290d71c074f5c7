from harness.plugins.testing import parametrize_with_checks


@parametrize_with_checks("equivariant-ntk")
def test_conformance(component, check):
    check(component)
