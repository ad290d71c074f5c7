"""A shared tracking server (``harness server``) on a real PostgreSQL, credentials that
never show, and stores that cannot be used (exit 2 within 15 s, no traceback).

PostgreSQL: ``HARNESS_TEST_POSTGRES_URI`` (``.ci/run`` installs Debian's postgresql and
starts a throwaway cluster), else a throwaway cluster started here when the server binaries
are installed; the PostgreSQL test skips, saying so, only where neither is there.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import free_port

HARNESS = str(Path(sys.executable).parent / "harness")
SECRET = "pw-9f3c1d7e"  # a password that must never be printed or logged
SUITE = """
name: served
seeds: [0, 1]
runs:
  - task: toy
    datasets: [{name: noise, grid: {n: [3, 30]}}]
    methods: [mean]
    metrics: [abs-error, path]
"""
FAILING_SUITE = """
name: served-secret
seeds: [0]
runs:
  - task: toy
    datasets: [noise]
    methods: [mean, boom]
    metrics: [abs-error]
"""


def _toy_env(folder: Path) -> dict[str, str]:
    """An environment in which only the in-test toy plugin is installed, without MLflow
    credentials."""
    from fake_plugins import toy_environment

    env = toy_environment(folder / "site")
    for name in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
        env.pop(name, None)
    return env


# -- PostgreSQL ------------------------------------------------------------------------------


def _postgres_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: p.split("/"))
    return Path(versions[-1]).parent if versions else None


@contextlib.contextmanager
def _throwaway_cluster(bindir: Path) -> Iterator[str]:
    """initdb + pg_ctl start on a free port under /tmp (as user postgres when root)."""
    folder = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    as_postgres: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
        as_postgres = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    data = folder / "data"
    run = [*as_postgres, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U"]
    subprocess.run([*run, "postgres", "--no-sync"], check=True, capture_output=True)
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    ctl = [*as_postgres, str(bindir / "pg_ctl"), "-D", str(data)]
    subprocess.run(
        [*ctl, "-o", options, "-l", str(folder / "log"), "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*ctl, "-m", "immediate", "stop"], capture_output=True, check=False)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[str | None]:
    """The URI of a PostgreSQL server whose databases may be created and dropped, or None."""
    if os.environ.get("HARNESS_TEST_POSTGRES_URI"):
        yield os.environ["HARNESS_TEST_POSTGRES_URI"]
        return
    bindir = _postgres_bin()
    if bindir is None:
        yield None
        return
    with _throwaway_cluster(bindir) as uri:
        yield uri


def _database(server_uri: str) -> str:
    """A new, empty database on the server; returns its URI."""
    import psycopg

    name = f"harness_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_uri, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    return server_uri.rsplit("/", 1)[0] + "/" + name


# -- the server ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory, postgres, _empty_store):
    """``harness server`` on a fresh PostgreSQL database (a SQLite copy when there is no
    PostgreSQL), with one worker; yields (base URL, backend URI, environment, folder).
    On teardown, SIGTERM must stop harness and every server process within 30 s."""
    import psutil

    folder = tmp_path_factory.mktemp("served")
    env = _toy_env(folder)
    if postgres:
        backend = _database(postgres)
    else:
        shutil.copy(_empty_store, folder / "mlflow.db")
        backend = f"sqlite:///{folder}/mlflow.db"
    port = free_port()
    env["HARNESS_SERVER_STORE"] = backend  # as the README says: no password on a command line
    command = [HARNESS, "server", "--artifacts", str(folder / "artifacts")]
    command += ["--port", str(port), "--workers", "1"]
    log = (folder / "server.log").open("w")  # the server's own lines (a pipe could fill)
    process = subprocess.Popen(
        command, env=env, cwd=folder, stdout=subprocess.PIPE, stderr=log, text=True
    )
    assert process.stdout is not None
    base = f"http://127.0.0.1:{port}"
    try:
        first = process.stdout.readline()  # printed only once the server answers
        if not first:
            process.wait(10)
            pytest.fail(f"harness server exited {process.returncode}: {_tail(folder)}")
        assert first.startswith(f"Tracking server on {base}"), first
        with urllib.request.urlopen(f"{base}/health", timeout=5) as answer:  # answering now
            assert answer.status == 200
        group = psutil.Process(process.pid).children(recursive=True)
        for member in [psutil.Process(process.pid), *group]:  # what `ps` shows everyone
            try:
                shown = member.cmdline()
            except psutil.NoSuchProcess:  # exited (or a zombie) since listed: shows nothing
                continue
            assert backend not in " ".join(shown), shown
    except BaseException:  # stop the server whatever went wrong
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        raise
    yield base, backend, env, folder
    process.send_signal(signal.SIGTERM)
    process.wait(30)
    _, alive = psutil.wait_procs(group, timeout=10)
    log.close()
    if postgres:
        import psycopg

        with psycopg.connect(postgres, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {backend.rsplit('/', 1)[1]} WITH (FORCE)")
    assert process.returncode == 0 and not alive, f"left running: {alive}"
    assert "DeprecationWarning" not in (folder / "server.log").read_text()


def _tail(folder: Path) -> str:
    return (folder / "server.log").read_text()[-3000:]


def _run(env, folder, *args, timeout=300):
    return subprocess.run(
        [HARNESS, "run", *args],
        env=env,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_two_workers_log_every_cell_to_the_postgres_server(served, postgres):
    if not postgres:
        pytest.skip(
            "PostgreSQL is not installed here (Debian: apt-get install postgresql; .ci/run"
            " installs it and sets HARNESS_TEST_POSTGRES_URI)"
        )
    from mlflow import MlflowClient

    from harness.store.tracking import Tracker

    base, backend, env, folder = served
    (folder / "suite.yaml").write_text(textwrap.dedent(SUITE))
    result = _run(env, folder, "suite.yaml", "-j", "2", "--tracking-uri", base)
    assert result.returncode == 0, result.stdout + result.stderr
    client = MlflowClient(base)
    experiment = client.get_experiment_by_name("served").experiment_id
    runs = client.search_runs([experiment], max_results=100)
    cells = [r for r in runs if r.data.tags["harness.kind"] == "cell"]
    assert len(runs) == 5 and len(cells) == 4
    assert {(r.data.params["dataset.n"], r.data.params["seed"]) for r in cells} == {
        (n, s) for n in ("3", "30") for s in ("0", "1")
    }
    for run in cells:  # every run read back whole: status, metrics, the curve artifact
        assert run.info.status == "FINISHED" and run.data.tags["harness.status"] == "ok"
        assert {"abs-error", "path"} <= set(run.data.metrics)
        assert run.info.artifact_uri.startswith("mlflow-artifacts:")  # through the server
        curve = Path(client.download_artifacts(run.info.run_id, "curves/path.csv"))
        assert curve.read_text().startswith("step,value\n")
    results = Tracker(base).results(experiment)
    assert len(results) == 4 and set(results["status"]) == {"ok"}
    import psycopg

    with psycopg.connect(backend) as db:  # the rows are in PostgreSQL itself
        (count,) = db.execute(
            "SELECT count(*) FROM runs WHERE experiment_id = %s", (int(experiment),)
        ).fetchone()
    assert count == 5
    assert list((folder / "artifacts").rglob("path.csv"))  # the server's own folder


@pytest.mark.slow
def test_password_in_the_uri_is_never_printed_or_logged(served):
    from mlflow import MlflowClient

    base, _, env, folder = served
    (folder / "secret.yaml").write_text(textwrap.dedent(FAILING_SUITE))
    uri = base.replace("http://", f"http://alice:{SECRET}@")
    result = _run(env, folder, "secret.yaml", "--tracking-uri", uri)
    assert result.returncode == 1, result.stdout + result.stderr  # the boom cell failed
    assert "boom" in result.stdout + result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert "View run" not in result.stdout  # MLflow's own run links are silenced
    client = MlflowClient(base)
    experiment = client.get_experiment_by_name("served-secret").experiment_id
    runs = client.search_runs([experiment], max_results=100)
    assert len(runs) == 3
    for run in runs:
        logged = [*run.data.params.items(), *run.data.tags.items()]
        assert not [kv for kv in logged if SECRET in kv[0] or SECRET in kv[1]]
        if run.data.tags["harness.kind"] == "suite":
            suite_yaml = Path(client.download_artifacts(run.info.run_id, "suite.yaml"))
            assert SECRET not in suite_yaml.read_text()


# -- stores that cannot be used ----------------------------------------------------------------


@pytest.fixture
def black_hole():
    """A port that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


@pytest.mark.parametrize("where", ["closed-port", "silent-server", "postgres-closed-port"])
def test_unusable_store_exits_2_within_15_s_without_secret(where, black_hole, tmp_path):
    env = _toy_env(tmp_path)
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(FAILING_SUITE))
    uri = {
        "closed-port": f"http://alice:{SECRET}@127.0.0.1:{free_port()}",
        "silent-server": f"http://alice:{SECRET}@127.0.0.1:{black_hole}",
        "postgres-closed-port": f"postgresql://alice:{SECRET}@127.0.0.1:{free_port()}/x",
    }[where]
    tic = time.monotonic()
    result = _run(env, tmp_path, "suite.yaml", "--tracking-uri", uri, timeout=60)
    elapsed = time.monotonic() - tic
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert elapsed < 15, f"{elapsed:.1f} s"
    assert "Traceback" not in output and SECRET not in output
    assert "Cannot reach" in output or "Cannot open" in output or "did not answer" in output
    assert not (tmp_path / "reports").exists()


@pytest.mark.parametrize("command", ["run", "ui"])
def test_postgres_uri_without_its_driver_exits_2_with_the_pip_command(command, tmp_path):
    env = _toy_env(tmp_path)
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(FAILING_SUITE))
    uri = f"postgresql://alice:{SECRET}@127.0.0.1:5432/mlflow"
    args = ["run", "suite.yaml", "--tracking-uri", uri] if command == "run" else ["ui"]
    if command == "ui":
        args += ["--tracking-uri", uri]
    code = (
        "import sys; sys.modules['psycopg'] = None; sys.argv = ['harness', *sys.argv[1:]];"
        " from harness.cli import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "pip install 'psycopg[binary]'" in output
    assert "Traceback" not in output and SECRET not in output


def test_credentials_leave_http_uris_and_are_masked_in_any_text(monkeypatch):
    import io

    from harness import redaction

    monkeypatch.delenv("MLFLOW_TRACKING_USERNAME", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_PASSWORD", raising=False)
    uri = redaction.move_http_credentials("http://ann:p%40ss-7f2e@mlflow.example.org:5000/x")
    assert uri == "http://mlflow.example.org:5000/x"
    assert os.environ["MLFLOW_TRACKING_USERNAME"] == "ann"
    assert os.environ["MLFLOW_TRACKING_PASSWORD"] == "p@ss-7f2e"  # percent-decoded
    assert redaction.mask("p@ss-7f2e / p%40ss-7f2e") == "*** / ***"
    assert redaction.mask("postgresql://bob:db-pw-1@h/db") == "postgresql://bob:***@h/db"
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    monkeypatch.setattr(sys, "stderr", sys.stderr)  # put back after the test
    redaction.watch("postgresql://bob:db-pw-2@h/db")  # masks this process' output from now on
    print("connecting with db-pw-2 to", "postgresql://bob:db-pw-2@h/db")
    assert stream.getvalue() == "connecting with *** to postgresql://bob:***@h/db\n"
