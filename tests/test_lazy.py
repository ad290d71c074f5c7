"""A core module's old path (``harness.tracking``, ``harness.testing``, ...) still imports the
module from its new home, with a DeprecationWarning naming it; nothing in this repository
imports an old path; ``import harness`` imports none of them (the finder is lazy)."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import harness

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("old", "new"), sorted(harness.MOVED.items()))
def test_an_old_path_is_the_module_at_its_new_home(old, new):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        moved = importlib.import_module(f"harness.{old}")
    assert moved is importlib.import_module(new)
    assert moved.__spec__.name == new  # the module keeps its own spec, not the old name's


def test_an_old_submodule_path_follows_its_package():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        old = importlib.import_module("harness.executors.local")
    from harness.runs.executors.local import LocalExecutor

    assert old.LocalExecutor is LocalExecutor


def _fresh(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_old_path_warns_with_its_new_home():
    result = _fresh("from harness.testing import parametrize_with_checks")
    assert result.returncode == 0, result.stderr
    assert "'harness.testing' moved to 'harness.plugins.testing'" in result.stderr


def test_import_harness_imports_no_moved_module():
    result = _fresh(
        "import sys, harness\n"
        "print(sorted(m for m in sys.modules if m.startswith('harness.')"
        " and m.split('.')[1] in harness.MOVED))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    assert "DeprecationWarning" not in result.stderr


def old_imports(paths: list[Path]) -> list[str]:
    """Every import of an old module path in ``paths``: ``import harness.tracking``,
    ``from harness.tracking import ...``, ``from harness import tracking``."""
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
                if node.module == "harness":
                    names = [f"harness.{a.name}" for a in node.names]
            else:
                continue
            found += [
                f"{path.name}:{node.lineno} {name}"
                for name in names
                if name.startswith("harness.") and name.split(".")[1] in harness.MOVED
            ]
    return found


def test_nothing_in_the_repository_imports_an_old_path():
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    paths = [ROOT / f for f in tracked if (ROOT / f).is_file() and not f.startswith("mlflow/")]
    assert old_imports(paths) == []


def test_the_old_import_check_sees_each_form(tmp_path):
    """The check above on a deliberately wrong module: the three forms of an old import."""
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "import harness.tracking\nfrom harness.testing import run_checks\n"
        "from harness import stats, Claim\nfrom harness.claims import Claim\n"
    )
    assert old_imports([wrong]) == [
        "wrong.py:1 harness.tracking",
        "wrong.py:2 harness.testing",
        "wrong.py:3 harness.stats",
    ]
