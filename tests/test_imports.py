"""Start-up stays light: importing harness, its CLI, each plugin's entry module, and
registering every component pull in none of the heavy packages (issue 20: ``harness list``
within 1 s, ``harness run`` of one cell within 2 s). They load when a component runs or a
store is opened. Each case runs in a fresh interpreter and reads ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

HEAVY = ("torch", "pennylane", "sklearn", "mlflow", "matplotlib", "pandas")
PLUGINS = sorted((ep.name, ep.value.partition(":")[0]) for ep in entry_points(group="harness"))


def _heavy_after(code: str) -> list[str]:
    """The heavy top-level packages in ``sys.modules`` after running ``code`` afresh."""
    listing = "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    probe = f"{code}\nimport json, sys\n{listing}"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    loaded = set(json.loads(result.stdout.strip().splitlines()[-1]))
    return sorted(loaded & set(HEAVY))


@pytest.mark.parametrize("module", ["harness", "harness.cli"])
def test_core_imports_no_heavy_package(module):
    assert _heavy_after(f"import {module}") == []


@pytest.mark.parametrize(("plugin", "module"), PLUGINS, ids=[name for name, _ in PLUGINS])
def test_plugin_entry_module_imports_no_heavy_package(plugin, module):
    assert _heavy_after(f"import {module}") == [], f"plugin {plugin}"


def test_registering_every_component_imports_no_heavy_package():
    """What ``harness list`` and ``harness validate`` do: every plugin's hooks called."""
    code = "from harness.plugins.registry import build_registry\nbuild_registry()"
    assert _heavy_after(code) == []


def test_the_probe_sees_a_heavy_import():
    """The check itself works: a module that imports matplotlib is caught."""
    assert _heavy_after("import harness.reports.folder\nimport matplotlib") == ["matplotlib"]
