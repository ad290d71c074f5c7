"""The import-linter contracts in pyproject.toml (`lint-imports`, run by `make lint`) cover
every core module and every plugin package: a module left out of the layers, or a plugin
left out of the forbidden list, would be checked by nothing."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _contracts() -> dict[str, dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {contract["type"]: contract for contract in config["contracts"]}


def test_every_core_module_is_in_a_layer():
    layers = _contracts()["layers"]["layers"]
    listed = {name for layer in layers for name in re.split(r"[|:]", layer) if name.strip()}
    modules = {p.stem for p in (ROOT / "harness").glob("*.py") if p.stem != "__init__"}
    assert modules - {n.strip() for n in listed} == set(), "add it to a layer in pyproject.toml"


def test_every_plugin_package_is_forbidden_to_the_core():
    forbidden = set(_contracts()["forbidden"]["forbidden_modules"])
    packages = {p.name for p in ROOT.glob("plugins/*/src/*") if (p / "__init__.py").is_file()}
    assert packages - forbidden == set(), "add it to forbidden_modules in pyproject.toml"
