"""``harness ui`` and ``harness server``: MLflow's UI on a store, a shared tracking server."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape

from harness.cli.common import ExitCode, console, err_console
from harness.errors import StoreError


@click.command()
@click.option(
    "--tracking-uri",
    default=None,
    help="MLflow tracking URI [default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow/mlflow.db]."
    " An http(s):// tracking server is only checked and its URL printed.",
)
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option(
    "--workers", default=1, show_default=True, type=click.IntRange(min=1), help="UI workers."
)
def ui(tracking_uri: str | None, port: int, host: str, workers: int) -> None:
    """Open the MLflow UI on the store (default: the local one under mlflow/).

    Prints the URL once the UI answers; Ctrl-C or SIGTERM stops it with its workers.
    MLflow's log goes to ui-PORT.log beside the store's database (mlflow/ui-5000.log).
    """
    from harness import redaction
    from harness.store.preflight import check_store
    from harness.store.server import MlflowProcess, mlflow_executable, port_in_use
    from harness.store.tracking import resolve_uri, sqlite_store_missing

    uri = redaction.move_http_credentials(resolve_uri(tracking_uri))
    redaction.watch(uri)
    runs_page = "/#/experiments?workflowType=machine_learning"
    if uri.startswith(("http://", "https://")):
        check_store(uri)  # exit 2 within seconds if it does not answer
        shown = redaction.mask(uri.rstrip("/"))
        console.print(escape(f"MLflow UI of the tracking server: {shown}{runs_page}"))
        return
    if sqlite_store_missing(uri):
        raise StoreError(f"No store at {uri} yet: run 'harness run SUITE' first.")
    check_store(uri)  # a missing database driver or an unreachable database: exit 2
    if port_in_use(host, port):
        raise StoreError(f"Port {port} on {host} is in use (another UI?): pass --port.")
    log = ui_log(uri, port)
    argv = [mlflow_executable(), "ui", "--backend-store-uri", uri, "--host", host]
    argv += ["--port", str(port), "--workers", str(workers)]
    err_console.print(
        escape(f"Starting the MLflow UI on {redaction.mask(uri)} (log: {log}) ..."), soft_wrap=True
    )
    health = f"http://{_local(host)}:{port}/health"
    with log.open("w") as out, MlflowProcess(argv, health, out) as process:
        if not process.wait_ready():
            return
        console.print(f"MLflow UI on http://{host}:{port}{runs_page} (Ctrl-C stops it)")
        code = process.serve_until_stopped()
    err_console.print("MLflow UI stopped." if code == 0 else f"The MLflow UI exited with {code}.")
    if code:
        sys.exit(ExitCode.FAILED)


def ui_log(uri: str, port: int) -> Path:
    """Where ``harness ui`` writes MLflow's log: ``ui-<port>.log`` beside a SQLite store's
    database (``mlflow/ui-5000.log`` for the local store), else in ``mlflow/`` of the
    current folder; inside the project, never in the system's temporary folder."""
    from harness.store import sqlite_path

    db = sqlite_path(uri)
    folder = db.parent if db is not None else Path("mlflow")
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"ui-{port}.log"


def _local(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


@click.command(context_settings={"ignore_unknown_options": True})
@click.option(
    "--store",
    envvar="HARNESS_SERVER_STORE",
    required=True,
    help="Backend store URI, e.g. postgresql://mlflow:PASSWORD@localhost/mlflow"
    " [env: HARNESS_SERVER_STORE].",
)
@click.option(
    "--artifacts",
    default="mlflow/server-artifacts",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Local folder for the artifacts of every run; clients upload and download them"
    " through the server (no shared disk).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to bind; 0.0.0.0 exposes the server to the network (see README).",
)
@click.option("--port", default=5000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--workers", default=4, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--basic-auth",
    is_flag=True,
    help="Require a user name and password (MLflow's basic-auth app; see README).",
)
@click.argument("mlflow_args", nargs=-1, type=click.UNPROCESSED)
def server(
    store: str,
    artifacts: str,
    host: str,
    port: int,
    workers: int,
    basic_auth: bool,
    mlflow_args: tuple[str, ...],
) -> None:
    """Start a shared MLflow tracking server (PostgreSQL store, local artifacts) for a team.

    Clients run 'harness run SUITE --tracking-uri http://HOST:PORT'. Arguments after '--'
    go to 'mlflow server' as they are (e.g. -- --allowed-hosts mlflow.example.org).
    """
    from harness import redaction
    from harness.store.preflight import check_store
    from harness.store.server import MlflowProcess, mlflow_executable, port_in_use

    redaction.watch(store)
    check_store(store)  # the driver is installed and the database answers, or exit 2
    if basic_auth:
        import importlib.util

        if importlib.util.find_spec("flask_wtf") is None:
            from harness.errors import missing_dependency

            raise StoreError(missing_dependency("--basic-auth", "Flask-WTF", "'mlflow[auth]'"))
    if port_in_use(host, port):
        raise StoreError(f"Port {port} on {host} is in use: pass --port.")
    folder = Path(artifacts).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    # The store URI (and any password in it) goes by environment, never on a command line
    # that `ps` shows: mlflow server reads MLFLOW_BACKEND_STORE_URI.
    argv = [mlflow_executable(), "server"]
    argv += ["--serve-artifacts", "--artifacts-destination", folder.as_uri()]
    argv += ["--host", host, "--port", str(port), "--workers", str(workers)]
    if basic_auth:
        argv += ["--app-name", "basic-auth"]
    argv += list(mlflow_args)
    shown = redaction.mask(store)
    err_console.print(
        escape(f"Starting the MLflow tracking server on {shown} (artifacts: {folder}) ..."),
        soft_wrap=True,
    )
    health = f"http://{_local(host)}:{port}/health"
    store_env = {"MLFLOW_BACKEND_STORE_URI": store}
    with MlflowProcess(argv, health, sys.stderr, env=store_env) as process:
        if not process.wait_ready():
            return
        console.print(
            escape(
                f"Tracking server on http://{host}:{port} (store {shown}, artifacts {folder})."
                f" Clients: harness run SUITE --tracking-uri http://{host}:{port}"
            )
        )
        code = process.serve_until_stopped()
    err_console.print("Tracking server stopped." if code == 0 else f"mlflow exited with {code}.")
    if code:
        sys.exit(ExitCode.FAILED)
