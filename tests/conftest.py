"""Shared fixtures: a registry of the in-test toy plugin, suite files, a temporary store."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import toy_plugin
from fake_plugins import toy_environment
from helpers import HARNESS, TOY_CLAIMS_SUITE

from harness.plugins.registry import build_registry


def pytest_configure(config):
    """Ctrl-C as a terminal delivers it: a test run started in the background of a script
    (``make test &``) inherits SIGINT ignored, and the Ctrl-C tests (and the subprocesses
    they start, which inherit an ignored signal across exec) would then never see it."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True, scope="session")
def _plugin_cache(tmp_path_factory):
    """Plugin descriptions (harness.plugins.catalog) cached in the test session's folder, never the
    user's: every test, and every harness process a test starts, reads and writes there."""
    os.environ["HARNESS_CACHE_DIR"] = str(tmp_path_factory.mktemp("plugin-cache"))


@pytest.fixture
def registry():
    return build_registry({"toy": toy_plugin}, entry_points=False)


@pytest.fixture
def harness_main(registry, monkeypatch, capsys):
    """``harness ARGS`` through ``cli.main()`` in this process, with the toy registry:
    ``(exit code, stdout, stderr)``; an exception that escapes main() is returned as the
    code (a traceback, where the contract promises an exit code)."""
    from harness import cli

    def call(*args: str) -> tuple[object, str, str]:
        code: object = 0
        try:
            cli.main(args, registry=registry)
        except SystemExit as exc:
            code = exc.code
        except Exception as exc:  # what the test reports
            code = exc
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return call


@pytest.fixture
def harness(registry, monkeypatch, capsys, tmp_path):
    """``harness ARGS`` run in ``tmp_path``: its exit code, stdout and stderr."""
    from harness import cli

    monkeypatch.chdir(tmp_path)

    def call(*args: str) -> SimpleNamespace:
        code = 0
        try:
            cli.main([*args, *(["-j", "0"] if args[0] == "run" else [])], registry=registry)
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)

    return call


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


@pytest.fixture(scope="session")
def toy_claims_run(tmp_path_factory, _empty_store):
    """TOY_CLAIMS_SUITE run once for the session, in this process: ``(suite path, store URI)``;
    the modules that read it (cli/test_plan, test_read, test_summary, reports/test_aggregates,
    claims/test_evidence) share it, as they did when they were one module."""
    from harness import cli

    folder = tmp_path_factory.mktemp("claims-run")
    shutil.copy(_empty_store, folder / "mlflow.db")
    (folder / "suite.yaml").write_text(TOY_CLAIMS_SUITE)
    store = f"sqlite:///{folder}/mlflow.db"
    registry = build_registry({"toy": toy_plugin}, entry_points=False)
    args = ["run", str(folder / "suite.yaml"), "-j", "0", "--tracking-uri", store]
    try:
        cli.main([*args, "--report-dir", str(folder / "reports")], registry=registry)
    except SystemExit as exc:
        assert exc.code == 0
    return str(folder / "suite.yaml"), store


DAILY_SUITE = """
name: daily
seeds: [0, 1, 2]
runs:
  - task: toy
    datasets: [{name: noise, grid: {n: [3, 30]}}]
    methods: [mean, {name: mean, params: {shift: 5.0}}, boom, skipper]
    metrics: [abs-error, stats, never]
"""


@pytest.fixture(scope="session")
def daily_run(tmp_path_factory, _empty_store):
    """One real `harness run` of DAILY_SUITE for the session (cli/test_read, cli/test_summary and
    reports/test_folder read its outputs)."""
    tmp = tmp_path_factory.mktemp("daily")
    shutil.copy(_empty_store, tmp / "mlflow.db")
    store = f"sqlite:///{tmp}/mlflow.db"
    env = toy_environment(tmp / "site")
    suite = tmp / "daily.yaml"
    suite.write_text(textwrap.dedent(DAILY_SUITE))
    cmd = [HARNESS, "run", str(suite), "--tracking-uri", store, "--report-dir", str(tmp)]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    return {"run": run, "tmp": tmp, "store": store, "env": env, "suite": suite}
