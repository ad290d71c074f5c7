"""Fixtures of the speed benchmarks (issue 20's table) and the closing table of figures.

``make bench`` runs them with ``--benchmark-enable`` at the table's sizes and checks each
goal; ``make test`` collects them with benchmarks disabled, so each runs once at a small
size (to stay working) and no goal is checked.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import probe_plugin
from figures import FIGURES

from harness.plugins.registry import build_registry

HERE = Path(__file__).parent

# benchopt's side of the comparison: run by benchopt in its own environment, never imported here
collect_ignore = ["benchopt_noop"]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not FIGURES:
        return
    terminalreporter.section("speed figures (issues 20 and 31)")
    for figure, measured, goal in FIGURES:
        terminalreporter.write_line(f"{figure:<62} {measured:<34} goal {goal}")


@pytest.fixture
def full(benchmark) -> bool:
    """True under ``make bench`` (table sizes, goals checked); False in ``make test``."""
    return not benchmark.disabled


@pytest.fixture(scope="session")
def probe():
    return build_registry({"probe": probe_plugin}, entry_points=False)


@pytest.fixture(scope="session")
def template_store(tmp_path_factory) -> Path:
    """One migrated, empty MLflow database (creating one costs seconds of migrations)."""
    from harness.store.tracking import Tracker

    path = tmp_path_factory.mktemp("template") / "mlflow.db"
    Tracker(f"sqlite:///{path}").client.search_experiments()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


@pytest.fixture
def new_store(tmp_path, template_store):
    """``new_store()`` -> a fresh tracking URI copied from the empty template."""
    count = iter(range(10**6))

    def make() -> str:
        path = tmp_path / f"store-{next(count)}"
        path.mkdir()
        shutil.copy(template_store, path / "mlflow.db")
        return f"sqlite:///{path}/mlflow.db"

    return make


@pytest.fixture
def suite_file(tmp_path):
    """``suite_file(text)`` -> the path of a suite file holding ``text``."""
    count = iter(range(10**6))

    def write(text: str) -> Path:
        path = tmp_path / f"suite-{next(count)}.yaml"
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture(scope="session")
def probe_env(tmp_path_factory):
    """Environment of a ``harness`` subprocess with every installed plugin plus the probe
    (a fake ``.dist-info`` with its entry point on PYTHONPATH)."""
    site = tmp_path_factory.mktemp("site")
    info = site / "harness_probe-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: harness-probe\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[harness]\nprobe = probe_plugin\n")
    shutil.copy(HERE / "probe_plugin.py", site / "probe_plugin.py")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(site)
    env.pop("MLFLOW_TRACKING_URI", None)
    return env
