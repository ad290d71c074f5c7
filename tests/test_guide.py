"""Every command of docs/plugin-authoring.md, run in order in a fresh workspace (issue 13):
the guide works as written. `pip install -e X` installs X for real, into a prefix of the
workspace (so the project's environment is left as it was)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "plugin-authoring.md"


def guide_commands() -> list[str]:
    """The ``$ `` lines of the guide's console blocks, in order."""
    text = GUIDE.read_text()
    blocks = re.findall(r"```console\n(.*?)```", text, re.S)
    return [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ ")]


def test_the_guide_has_both_tutorials_in_order():
    text = GUIDE.read_text()
    assert text.index("## 1. Add a method to an existing task") < text.index(
        "## 2. Package a new paper"
    )
    assert any("new-plugin my-method --task fair-regression" in c for c in guide_commands())


@pytest.mark.slow
def test_every_command_of_the_guide_runs(tmp_path):
    work = tmp_path / "work"
    (work / "plugins").mkdir(parents=True)
    (work / "suites").symlink_to(ROOT / "suites")
    prefix = tmp_path / "prefix"
    site = sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)})
    env = dict(os.environ, PYTHONPATH=site)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env.pop("MLFLOW_TRACKING_URI", None)  # the default store: mlflow/ in the workspace
    outputs = {}
    for command in guide_commands():
        words = shlex.split(command)
        if words[:3] == ["pip", "install", "-e"]:
            words = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
            words += ["--no-build-isolation", "--prefix", str(prefix), shlex.split(command)[3]]
            done = subprocess.run(words, cwd=work, env=env, capture_output=True, text=True)
        else:
            done = subprocess.run(
                command, shell=True, cwd=work, env=env, capture_output=True, text=True
            )
        assert done.returncode == 0, f"$ {command}\n{done.stdout}\n{done.stderr}"
        outputs[command] = done.stdout
    assert "FairRegressionData" in outputs["harness list --task fair-regression"]
    readme = (work / "plugins/my-method/README.md").read_text()
    assert "pip install -e plugins/my-method\n" in readme
    assert (
        "from harness_fair_regression.api import"
        in (work / "plugins/my-method/src/harness_my_method/methods.py").read_text()
    )
    # The scaffold passes the project's own lint (make test lints plugins/ too).
    (work / "pyproject.toml").symlink_to(ROOT / "pyproject.toml")
    ruff = [str(Path(sys.executable).parent / "ruff")]
    for check in (["check"], ["format", "--check"]):
        done = subprocess.run(ruff + check + ["plugins"], cwd=work, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    table = (
        work / "reports/fair-regression+dataset-communities-crime/fair-regression-mean-ci.csv"
    ).read_text()
    assert "my-method" in table and "unconstrained" in table  # beside the paper's
