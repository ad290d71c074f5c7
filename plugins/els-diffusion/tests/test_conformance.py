from harness.plugins.testing import parametrize_with_checks


@parametrize_with_checks("els-diffusion")
def test_conformance(component, check):
    check(component)
