"""Issue 20: registering the plugin imports none of the heavy packages."""

import subprocess
import sys

import pytest

HEAVY = ("torch", "pennylane", "sklearn", "mlflow", "matplotlib")


@pytest.mark.slow
def test_entry_module_and_api_import_no_heavy_package():
    code = (
        "import sys, harness_weak_features, harness_weak_features.api; "
        "from harness_weak_features import harness_methods, harness_datasets; "
        "assert len(harness_methods()) == 12 and len(harness_datasets()) == 4; "
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"heavy packages imported at registration: {out.stdout}"


@pytest.mark.slow
def test_the_check_catches_a_heavy_import():
    """Wrong variant: the same probe after importing the methods' model module finds torch."""
    code = (
        "import sys, harness_weak_features._models; "
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "torch" in out.stdout and "sklearn" in out.stdout
