"""Shared fixtures: a registry of the in-test toy plugin, suite files, a temporary store."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import toy_plugin
from fake_plugins import toy_environment

from harness.plugins.registry import build_registry


@pytest.fixture(autouse=True, scope="session")
def _plugin_cache(tmp_path_factory):
    """Plugin descriptions (harness.plugins.catalog) cached in the test session's folder, never the
    user's: every test, and every harness process a test starts, reads and writes there."""
    os.environ["HARNESS_CACHE_DIR"] = str(tmp_path_factory.mktemp("plugin-cache"))


@pytest.fixture
def registry():
    return build_registry({"toy": toy_plugin}, entry_points=False)


@pytest.fixture
def write_suite(tmp_path):
    """Write a suite file from YAML text and return its path."""

    def write(text: str, name: str = "suite.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture(scope="session")
def _empty_store(tmp_path_factory) -> Path:
    """One migrated, empty MLflow database: creating one costs ~13 s of schema migrations."""
    from harness.store.tracking import Tracker

    path = tmp_path_factory.mktemp("template") / "mlflow.db"
    Tracker(f"sqlite:///{path}").client.search_experiments()
    with sqlite3.connect(path) as db:  # fold the write-ahead log in, so one file is the store
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


@pytest.fixture
def store(tmp_path, _empty_store) -> str:
    """A fresh tracking URI in ``tmp_path``, copied from the migrated empty database."""
    shutil.copy(_empty_store, tmp_path / "mlflow.db")
    return f"sqlite:///{tmp_path}/mlflow.db"


@pytest.fixture
def toy_env(tmp_path, monkeypatch):
    """Environment for a subprocess in which only the toy plugin is installed (a fake
    ``.dist-info`` with its entry point on PYTHONPATH)."""
    return toy_environment(tmp_path / "site")
