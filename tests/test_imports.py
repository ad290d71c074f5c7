"""Start-up stays light: importing harness, its CLI, each plugin's entry module, and
registering every component pull in none of the heavy packages (issue 20: ``harness list``
within 1 s, ``harness run`` of one cell within 2 s). They load when a component runs or a
store is opened. With the plugins' descriptions cached (harness.plugins.catalog), ``harness list``
imports no plugin at all, and a suite's command only the plugins of its tasks. Each case
runs in a fresh interpreter and reads ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

HEAVY = ("torch", "pennylane", "sklearn", "mlflow", "matplotlib", "pandas")
PLUGINS = sorted((ep.name, ep.value.partition(":")[0]) for ep in entry_points(group="harness"))


def _modules_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    """The top-level packages in ``sys.modules`` after running ``code`` afresh."""
    listing = "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    probe = f"{code}\nimport json, sys\n{listing}"
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def _heavy_after(code: str, env: dict[str, str] | None = None) -> list[str]:
    """The heavy top-level packages in ``sys.modules`` after running ``code`` afresh."""
    return sorted(_modules_after(code, env) & set(HEAVY))


@pytest.mark.parametrize("module", ["harness", "harness.cli"])
def test_core_imports_no_heavy_package(module):
    assert _heavy_after(f"import {module}") == []


@pytest.mark.parametrize(("plugin", "module"), PLUGINS, ids=[name for name, _ in PLUGINS])
def test_plugin_entry_module_imports_no_heavy_package(plugin, module):
    assert _heavy_after(f"import {module}") == [], f"plugin {plugin}"


def test_registering_every_component_imports_no_heavy_package(tmp_path):
    """What ``harness list`` and ``harness validate`` do with no cached description (an
    empty cache folder): every plugin imported, its hooks called, its components described."""
    import os

    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cold")}
    code = "from harness.plugins.registry import build_registry\nbuild_registry()"
    assert _heavy_after(code, env) == []


def test_with_descriptions_cached_list_imports_no_plugin_and_a_suite_only_its_own(tmp_path):
    """``harness list`` after a first command has described every plugin: no plugin module
    imported (their descriptions are read); ``harness validate`` of a fair-regression suite:
    that plugin alone. Fails with the cache unused (every plugin imported, as before)."""
    import os

    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    plugins = {module.split(".")[0] for _, module in PLUGINS}
    main = "import contextlib, io\nfrom harness.cli import main\n"
    quiet = "with contextlib.redirect_stdout(io.StringIO()):\n    main({args})"
    assert _modules_after(main + quiet.format(args=["list"]), env) & plugins == plugins  # cold
    assert _modules_after(main + quiet.format(args=["list"]), env) & plugins == set()
    suite = tmp_path / "fair.yaml"
    suite.write_text(
        "name: fair\nruns:\n  - task: fair-regression\n    datasets: [diabetes]\n"
        "    methods: [unconstrained]\n    metrics: [mse]\n"
    )
    validate = main + quiet.format(args=["validate", str(suite)])
    assert _modules_after(validate, env) & plugins == {"harness_fair_regression"}


def test_the_probe_sees_a_heavy_import():
    """The check itself works: a module that imports matplotlib is caught."""
    assert _heavy_after("import harness.reports.folder\nimport matplotlib") == ["matplotlib"]


def _core_packages_after(code: str) -> list[str]:
    """The core's packages (``harness.store``, ``harness.runs``, ...) in ``sys.modules``
    after running ``code`` afresh."""
    probe = (
        f"{code}\nimport json, sys\n"
        "print(json.dumps(sorted({'.'.join(m.split('.')[:2]) for m in sys.modules"
        " if m.startswith('harness.')})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_command_at_start_up_imports_no_store_run_suite_or_report_package():
    """``harness --help`` imports the command's modules, the claims contract and the base
    modules alone: each package's ``__init__`` imports its public modules, so a top-level
    import of any ``harness.store`` module from the CLI would pull in the whole store (shown
    failing with ``from harness.store.current import missing_cells`` at the top of
    harness/cli/read.py)."""
    loaded = _core_packages_after("import harness.cli")
    packages = {"harness.store", "harness.runs", "harness.suites", "harness.reports"}
    assert packages & set(loaded) == set(), loaded
