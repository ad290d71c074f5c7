"""Fast start-up (issue 20): the entry-point module imports no heavy library."""

import json
import subprocess
import sys

HEAVY = ("torch", "pennylane", "sklearn", "mlflow", "matplotlib", "numba")


def _heavy_after(statement: str) -> list[str]:
    """Heavy modules in sys.modules after running ``statement`` in a fresh interpreter."""
    report = f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    code = f"{statement}; import sys, json; {report}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_entry_point_registers_every_component_without_heavy_imports():
    statement = (
        "import harness_bandit_safe_regret as p; "
        "names = [c.name for f in (p.harness_datasets, p.harness_methods, p.harness_metrics,"
        " p.harness_reports) for c in f()]; "
        "assert 'phased-aggression-sequence-form' in names and 'regret-vs-horizon' in names, names"
    )
    assert _heavy_after(statement) == []
    # the check can fail: an import of matplotlib is reported
    assert _heavy_after("import harness_bandit_safe_regret, matplotlib") == ["matplotlib"]
