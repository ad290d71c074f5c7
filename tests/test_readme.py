"""The root README's verdict table is what the committed evidence gives today: exactly what
``make claims`` prints (``harness claims suites/all.yaml --results ... --format markdown``
over every paper plugin's ``results/<plugin>.parquet``)."""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- claims:begin -->", "<!-- claims:end -->"


def _evidence() -> list[Path]:
    files = sorted(ROOT.glob("plugins/*/results/*.parquet"))
    return [f for f in files if f.stem == f.parent.parent.name]  # each plugin's main suite


def test_the_readme_verdict_table_is_what_the_evidence_gives():
    from harness.registry import build_registry

    plugins = {p.name for p in ROOT.glob("plugins/*") if (p / "pyproject.toml").is_file()}
    missing = plugins - set(build_registry().plugins)
    if missing:
        pytest.skip(f"plugins not installed here: {', '.join(sorted(missing))}")
    args = [str(Path(sys.executable).parent / "harness"), "claims", "suites/all.yaml"]
    for file in _evidence():
        args += ["--results", str(file.relative_to(ROOT))]
    # a process of its own, every installed plugin on (as `make claims` runs it)
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_DISABLE_PLUGINS"}
    printed = subprocess.run(
        [*args, "--format", "markdown"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    text = (ROOT / "README.md").read_text()
    shown = text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip().splitlines()
    wanted = printed.stdout.strip().splitlines()
    diff = "\n".join(difflib.unified_diff(shown, wanted, "README.md", "make claims", lineterm=""))
    assert shown == wanted, f"run 'make claims' and paste its table into README.md:\n{diff}"


DECIDE_BEGIN, DECIDE_END = "<!-- decide:begin -->", "<!-- decide:end -->"


def test_the_readme_decide_table_is_what_the_committed_pass_gives():
    """The README's table of what the main job's decide pass decided is what ``harness
    report --decided results/decide/claims.json`` prints from the committed pass."""
    saved = ROOT / "results" / "decide" / "claims.json"
    text = (ROOT / "README.md").read_text()
    if not saved.is_file() or DECIDE_BEGIN not in text:
        pytest.skip(
            "no committed decide pass yet (make run, then copy reports/all/claims.json"
            " to results/decide/claims.json and paste the table into the README)"
        )
    printed = subprocess.run(
        [str(Path(sys.executable).parent / "harness"), "report", "--decided",
         str(saved.relative_to(ROOT))], cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    shown = text[text.index(DECIDE_BEGIN) + len(DECIDE_BEGIN) : text.index(DECIDE_END)]
    assert shown.strip().splitlines() == printed.stdout.strip().splitlines(), printed.stdout
