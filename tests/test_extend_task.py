"""Extending an existing task (issue 13): check-plugin catches each broken rule, and a
method-only package scaffolded with `new-plugin --task` installs, runs, and lands in the
paper's report table beside the paper's methods."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import broken_plugin
import pytest
import toy_plugin

from harness.registry import build_registry
from harness.testing import run_checks

HARNESS = str(Path(sys.executable).with_name("harness"))
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def broken():
    registry = build_registry({"toy": toy_plugin, "broken": broken_plugin}, entry_points=False)
    return {
        check_id: (outcome, message)
        for check_id, outcome, message in run_checks("broken", registry)
    }


@pytest.mark.parametrize(
    ("check_id", "words"),
    [
        (
            "no-annotation-check_run_annotation_names_output_type",
            ["no-annotation", "[run-annotation]", "no return annotation"],
        ),
        (
            "no-annotation-check_run_returns_output_type",
            ["no-annotation", "[run-returns-output-type]", "str"],
        ),
        ("wrong-type-check_run_returns_output_type", ["wrong-type", "returned list", "'noise'"]),
        (
            "nan-on-some-check_compute_returns_valid_value",
            ["nan-on-some", "[finite-metric]", "method 'sleepy'"],
        ),
        ("raising-report-check_build_on_check_results", ["raising-report", "[build]", "KeyError"]),
    ],
)
def test_check_plugin_fails_each_broken_rule_naming_component_and_rule(broken, check_id, words):
    outcome, message = broken[check_id]
    assert outcome == "failed"
    for word in words:
        assert word in message, message


def test_the_toy_plugin_fails_only_where_it_is_broken_on_purpose():
    registry = build_registry({"toy": toy_plugin}, entry_points=False)
    failed = [r[0] for r in run_checks("toy", registry) if r[1] == "failed"]
    assert failed == ["boom-check_run_returns_output_type"]  # 'boom' always raises


@pytest.mark.slow
def test_a_scaffolded_method_joins_the_papers_report_table(tmp_path):
    """`new-plugin my-method --task fair-regression`, installed for real (pip, into a
    prefix of its own), runs its suite, and `--add-method` puts it beside the paper's
    methods on Communities and Crime."""
    env = dict(os.environ, MLFLOW_TRACKING_URI=f"sqlite:///{tmp_path}/mlflow.db")
    new = subprocess.run(
        [HARNESS, "new-plugin", "my-method", "--task", "fair-regression", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert new.returncode == 0, new.stderr
    folder = tmp_path / "my-method"
    assert "pip install -e my-method\n" in (folder / "README.md").read_text()  # run from tmp_path
    assert (
        "from harness_fair_regression.api import"
        in (folder / "src/harness_my_method/methods.py").read_text()
    )
    prefix = tmp_path / "prefix"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--prefix",
            str(prefix),
            str(folder),
        ],
        check=True,
        env=env,
    )
    site = sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)})
    env["PYTHONPATH"] = site
    check = subprocess.run(
        [HARNESS, "check-plugin", "my-method"], capture_output=True, text=True, env=env
    )
    assert check.returncode == 0, check.stdout + check.stderr
    own = subprocess.run(
        [
            HARNESS,
            "run",
            str(folder / "suites/my-method.yaml"),
            "--seeds",
            "0",
            "--report-dir",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert own.returncode == 0, own.stdout + own.stderr
    paper = subprocess.run(
        [
            HARNESS,
            "run",
            str(ROOT / "suites/fair-regression.yaml"),
            "--add-method",
            "my-method",
            "--dataset",
            "communities-crime",
            "--seeds",
            "0",
            "--report-dir",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert paper.returncode == 0, paper.stdout + paper.stderr
    table = (tmp_path / "r/fair-regression/fair-regression-mean-ci.csv").read_text()
    assert "my-method" in table and "wasserstein-barycenter" in table
