"""harness conformance checks on every gmm-testing component."""

from harness.plugins.testing import parametrize_with_checks


@parametrize_with_checks("gmm-testing")
def test_conformance(component, check):
    check(component)


def test_entry_point_import_stays_light():
    # Issue 20: importing the entry-point module must not pull in heavy libraries; the
    # reports import matplotlib and statsmodels inside the functions that draw or fit.
    import subprocess
    import sys

    heavy = ["torch", "pennylane", "sklearn", "mlflow", "matplotlib", "statsmodels"]
    code = (
        "import sys, harness_gmm_testing as p; "
        f"print([m for m in {heavy!r} if m in sys.modules]); "
        "print(len(p.harness_datasets()), len(p.harness_methods()), len(p.harness_reports()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded, counts = out.stdout.splitlines()
    assert loaded == "[]"
    assert counts == "4 7 2"


def test_api_exports_the_task_types():
    from harness_gmm_testing import api
    from harness_gmm_testing.data import TestingData, TestOutput

    assert api.TestingData is TestingData and api.TestOutput is TestOutput
    assert all(getattr(api, name).__doc__ for name in api.__all__ if name != "Statistic")


def test_types_reject_non_finite_values_naming_the_field():
    import numpy as np
    import pytest
    from harness_gmm_testing.data import PancakeLaw, TestOutput

    with pytest.raises(ValueError, match="centres"):
        PancakeLaw(np.array([np.nan, 1.0]), np.array([0.5, 0.5]), 0.2, 3, 0.1)
    ok = np.full(2, 0.5)
    with pytest.raises(ValueError, match="stat_alt"):
        TestOutput(ok, ok, ok, np.array([1.0, np.inf]), np.ones(4), 0.0)
    with pytest.raises(ValueError, match="p_null"):
        TestOutput(np.array([0.0, 0.5]), ok, ok, ok, np.ones(4), 0.0)
