"""The "Add a method" examples of the plugin READMEs pass ``harness check-plugin``'s docstring
rule as written: a new user copies them (a one-line docstring ending in ``Source: ...`` was
refused in 7 of them, found by a new user's run)."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READMES = sorted(ROOT.glob("plugins/*/README.md"))


def _classes(readme: Path) -> list[tuple[str, str]]:
    """``(class name, docstring)`` of every class in the README's Python code blocks."""
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
    found = []
    for block in blocks:
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ClassDef) and ast.get_docstring(node) is not None:
                found.append((node.name, inspect.cleandoc(ast.get_docstring(node))))
    return found


@pytest.mark.parametrize("readme", READMES, ids=lambda p: p.parent.name)
def test_a_readme_method_names_its_source_as_check_plugin_asks(readme):
    from harness.plugins.checks import check_docstring_names_source

    for name, doc in _classes(readme):
        check_docstring_names_source(type(name, (), {"__doc__": doc}), None)


def test_the_rule_refuses_a_source_that_does_not_start_a_line():
    """The negative control: the README form that was refused is refused by the same check."""
    from harness.plugins.checks import check_docstring_names_source

    with pytest.raises(AssertionError, match="Source:"):
        check_docstring_names_source(type("X", (), {"__doc__": "One line. Source: a."}), None)
