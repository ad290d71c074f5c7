"""The import-linter contracts in pyproject.toml (`lint-imports`, run by `make lint`) cover
every core module and every plugin package: a module left out of the layers, or a plugin
left out of the forbidden list, would be checked by nothing."""

from __future__ import annotations

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


def test_the_layout_check_sees_a_module_left_out(tmp_path):
    """The check above fails on a package holding a module its layers do not name."""
    (tmp_path / "listed.py").write_text("")
    (tmp_path / "forgotten.py").write_text("")
    assert _modules(tmp_path) - {"listed"} == {"forgotten"}


def test_every_plugin_package_is_forbidden_to_the_core():
    forbidden = set(_contracts("forbidden")[0]["forbidden_modules"])
    packages = {p.name for p in ROOT.glob("plugins/*/src/*") if (p / "__init__.py").is_file()}
    assert packages - forbidden == set(), "add it to forbidden_modules in pyproject.toml"


def test_every_subpackage_ships_in_the_wheel():
    """A non-editable install carries every folder of the core (``packages = ["harness"]``
    alone left harness.cli and harness.executors out of the wheel)."""
    from fnmatch import fnmatch

    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    include = setuptools["packages"]["find"]["include"]
    folders = {p.parent for p in (ROOT / "harness").rglob("*") if p.suffix in {".py", ".j2"}}
    names = {".".join(f.relative_to(ROOT).parts) for f in folders if "__pycache__" not in f.parts}
    assert {n for n in names if not any(fnmatch(n, pattern) for pattern in include)} == set()
