"""The import-linter contracts in pyproject.toml (`lint-imports`, run by `make lint`) cover
every core module: a module left out of the layers would be checked by nothing. That the core
never imports a plugin is checked here, for every package under plugins/*/src."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _contracts(kind: str) -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return [contract for contract in config["contracts"] if contract["type"] == kind]


def _modules(package: Path) -> set[str]:
    """The modules and subpackages directly in ``package`` (``__init__`` aside)."""
    files = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    return files | {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}


def test_every_core_module_is_in_a_layer():
    """Each package with a layers contract (the core, and its subpackages such as
    harness.cli) lists every module it holds; a package of the core without a contract of
    its own is one layer of the core's."""
    contracts = {c["containers"][0]: c["layers"] for c in _contracts("layers")}
    assert "harness" in contracts
    for container, layers in contracts.items():
        listed = {n.strip() for layer in layers for n in re.split(r"[|:]", layer) if n.strip()}
        folder = ROOT.joinpath(*container.split("."))
        missing = _modules(folder) - listed
        assert missing == set(), (
            f"add {sorted(missing)} to a layer of {container} in pyproject.toml"
        )


def layer_problems(layers: list[str], packages: set[str]) -> list[str]:
    """What keeps the core's layers from matching its folders: more than 8 layers, or a
    package that is not a layer of its own (sharing one only with its independent siblings)."""
    problems = [f"{len(layers)} layers; at most 8"] if len(layers) > 8 else []
    names = {n.strip() for layer in layers for n in layer.split("|")}
    problems += [f"package {p} is no layer" for p in sorted(packages - names)]
    return problems


def test_the_core_has_one_layer_per_package_and_at_most_8():
    (core,) = [c["layers"] for c in _contracts("layers") if c["containers"] == ["harness"]]
    packages = {p.name for p in (ROOT / "harness").iterdir() if (p / "__init__.py").is_file()}
    assert {"store", "suites", "runs", "claims", "reports", "plugins", "cli"} <= packages
    assert layer_problems(core, packages) == []


def test_the_layer_check_sees_too_many_layers_and_a_package_left_out():
    """The check above on deliberately wrong layers: nine of them, one package missing."""
    layers = [f"m{i}" for i in range(9)]
    assert layer_problems(layers, {"m0", "store"}) == [
        "9 layers; at most 8",
        "package store is no layer",
    ]


def test_the_layout_check_sees_a_module_left_out(tmp_path):
    """The check above fails on a package holding a module its layers do not name."""
    (tmp_path / "listed.py").write_text("")
    (tmp_path / "forgotten.py").write_text("")
    assert _modules(tmp_path) - {"listed"} == {"forgotten"}


def _plugin_packages() -> set[str]:
    return {p.name for p in ROOT.glob("plugins/*/src/*") if (p / "__init__.py").is_file()}


def plugin_imports(folder: Path, packages: set[str]) -> list[str]:
    """Every import in the modules under ``folder`` of one of ``packages`` (or a module in
    one), as ``"path:line imports name"``: deferred imports and those made only for type
    checkers included."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found += [
                f"{path.relative_to(folder.parent)}:{node.lineno} imports {name}"
                for name in names
                if name.split(".")[0] in packages
            ]
    return found


def test_the_core_never_imports_a_plugin():
    """No module of harness/ imports a package under plugins/*/src: a new plugin is covered
    without an edit of pyproject.toml."""
    packages = _plugin_packages()
    assert "harness_fair_regression" in packages  # the glob finds the plugins
    assert plugin_imports(ROOT / "harness", packages) == []


def test_the_plugin_check_sees_a_core_module_importing_a_plugin(tmp_path):
    """The check above on a deliberately wrong core: a module importing a plugin, at the top
    and inside a function."""
    core = tmp_path / "harness"
    (core / "store").mkdir(parents=True)
    (core / "store" / "tracking.py").write_text(
        "import os\nfrom harness_toy.data import Data\n\ndef f():\n    import harness_toy\n"
    )
    assert plugin_imports(core, {"harness_toy"}) == [
        "harness/store/tracking.py:2 imports harness_toy.data",
        "harness/store/tracking.py:5 imports harness_toy",
    ]


def test_every_subpackage_ships_in_the_wheel():
    """A non-editable install carries every folder of the core (``packages = ["harness"]``
    alone left harness.cli and harness.runs.executors out of the wheel)."""
    from fnmatch import fnmatch

    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    include = setuptools["packages"]["find"]["include"]
    folders = {p.parent for p in (ROOT / "harness").rglob("*") if p.suffix in {".py", ".j2"}}
    names = {".".join(f.relative_to(ROOT).parts) for f in folders if "__pycache__" not in f.parts}
    assert {n for n in names if not any(fnmatch(n, pattern) for pattern in include)} == set()
