"""Opening a tracking store safely: a start-up check and a lock around store creation.

:func:`check_store` answers within seconds whether a store can be used (driver installed,
database or server reachable, credentials accepted) and raises :class:`StoreError` (exit 2)
with the way out otherwise: without it an unreachable server costs minutes of MLflow's
HTTP retries and then a traceback. :func:`store_lock` serialises the creation (schema
migration) of a local SQLite store between processes: two ``harness run`` on a fresh store
would otherwise both migrate it and one crash.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import importlib.util
import json
import os
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.errors import StoreError, missing_dependency
from harness.redaction import mask

__all__ = [
    "BUSY_TIMEOUT_S",
    "CHECK_TIMEOUT_S",
    "FileIdentity",
    "check_store",
    "driver_problem",
    "lost_message",
    "sqlite_path",
    "store_failure",
    "store_lock",
]

CHECK_TIMEOUT_S = 12.0
"""The whole start-up check gives up after this long (so harness exits within 15 s)."""
BUSY_TIMEOUT_S = 10.0
"""How long a write waits for a SQLite store another process holds locked (then exit 2)."""
_CONNECT_TIMEOUT_S = 5.0  # a server's /health, a database's connection

# SQLAlchemy dialect -> (driver module, its pip package); the PostgreSQL pins are in
# requirements.txt. SQLAlchemy 2.1 drives plain postgresql:// with psycopg (version 3).
_DRIVERS = {
    "postgresql": ("psycopg", "'psycopg[binary]'"),
    "postgresql+psycopg": ("psycopg", "'psycopg[binary]'"),
    "postgresql+psycopg2": ("psycopg2", "psycopg2-binary"),
    "postgresql+pg8000": ("pg8000", "pg8000"),
    "mysql": ("MySQLdb", "mysqlclient"),
    "mysql+pymysql": ("pymysql", "PyMySQL"),
    "mssql": ("pyodbc", "pyodbc"),
    "mssql+pyodbc": ("pyodbc", "pyodbc"),
}


def sqlite_path(uri: str) -> Path | None:
    """The database file of a local SQLite store, ``sqlite:///PATH`` (relative to the
    working directory; ``sqlite:////PATH`` is absolute), or ``None`` for any other URI. The
    one parser of ``sqlite:///`` in harness.

    >>> str(sqlite_path("sqlite:///mlflow/mlflow.db")), str(sqlite_path("sqlite:////tmp/m.db"))
    ('mlflow/mlflow.db', '/tmp/m.db')
    >>> sqlite_path("sqlite://"), sqlite_path("http://localhost:5000")
    (None, None)

    :raises StoreError: a query or fragment after the path (``sqlite:///m.db?mode=ro``):
        harness opens the file itself, and would otherwise name a file ``m.db?mode=ro``.
    """
    if not uri.startswith("sqlite:///"):
        return None
    path = uri.removeprefix("sqlite:///")
    if "?" in path or "#" in path:
        cut = min(i for i in (path.find("?"), path.find("#")) if i >= 0)
        raise StoreError(
            f"Tracking URI {mask(uri)}: harness does not read a SQLite URI's query or fragment"
            f" ({path[cut:][:80]!r}); it opens the file itself. Use sqlite:///{path[:cut]}"
            " (a file name holding '?' or '#' cannot be given)."
        )
    return Path(path)


def _scheme(uri: str) -> str:
    return uri.partition("://")[0].lower() if "://" in uri else ""


def driver_problem(uri: str) -> str | None:
    """Why the database driver of ``uri`` cannot be used (with the pip command), or None.

    >>> driver_problem("sqlite:///mlflow/mlflow.db") is None
    True
    """
    scheme = _scheme(uri)
    if scheme not in _DRIVERS:
        return None
    module, package = _DRIVERS[scheme]
    try:
        if importlib.util.find_spec(module) is not None:
            return None
    except (ImportError, ValueError):  # a module set to None in sys.modules, a broken one
        pass
    return missing_dependency(
        f"The tracking URI '{mask(uri)}'", f"the database driver '{module}'", package
    )


def unwritable_folder(folder: Path) -> Path | None:
    """``None`` when ``folder`` is, or can be created as, a folder this process can write;
    else the folder that stops it (``folder`` itself, or its nearest existing ancestor).
    Nothing is created."""
    existing = folder
    while not existing.exists() and existing != existing.parent:  # to be created: its parent
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        return existing
    return None


def check_store(uri: str, timeout_s: float = CHECK_TIMEOUT_S) -> None:
    """Check that the store at ``uri`` can be used, within about ``timeout_s`` seconds.

    SQLite: the folder can be written. A database URI (``postgresql://``, ``mysql://``...):
    its driver is installed and the database answers ``SELECT 1``. ``http(s)://``: the
    server answers ``/health`` and accepts the credentials (``MLFLOW_TRACKING_USERNAME`` /
    ``MLFLOW_TRACKING_PASSWORD`` or ``MLFLOW_TRACKING_TOKEN``) on one API call.
    ``databricks`` is left to MLflow; any other scheme (``file:``, a folder, ``sqlite://`` in
    memory, a typo) is refused.

    :raises StoreError: what is wrong and what to do, with any password masked.
    """
    db = sqlite_path(uri)
    if db is not None:
        _check_sqlite(uri, db)
        return
    probe = _probe_of(uri)
    if probe is None:
        return  # left to MLflow
    outcome: list[BaseException | None] = []

    deadline = time.monotonic() + timeout_s

    def target() -> None:
        try:
            probe(uri, deadline)
            outcome.append(None)
        except BaseException as err:  # handed to the caller's thread
            outcome.append(err)

    # A thread bounds what socket timeouts do not: a name lookup that hangs, a slow TLS.
    thread = threading.Thread(target=target, daemon=True, name="harness-store-check")
    thread.start()
    thread.join(timeout_s)
    if not outcome:
        raise StoreError(
            f"The tracking store {mask(uri)} did not answer within {timeout_s:.0f} s. "
            "Check the address, or that the server or database is running."
        )
    if outcome[0] is not None:
        raise outcome[0]


def _check_sqlite(uri: str, db: Path) -> None:
    """:raises StoreError: ``db`` is no file, cannot be read and written, or its folder
    cannot be written."""
    if str(db) == ":memory:" or uri.endswith("/") or db.is_dir():  # "" is ".", a folder
        raise StoreError(
            f"Tracking URI {mask(uri)} names no database file: use sqlite:///PATH/mlflow.db"
            " (a file, created on first use)."
        )
    if db.exists() and not os.access(db, os.R_OK | os.W_OK):
        raise StoreError(
            f"Cannot read and write the tracking store file {db.absolute()} ({mask(uri)}):"
            " fix its permissions, or pass another --tracking-uri."
        )
    blocked = unwritable_folder(db.parent.absolute())
    if blocked is not None:
        raise StoreError(f"Cannot write the tracking store folder {blocked} ({mask(uri)}).")


def _probe_of(uri: str) -> Any:
    """The reachability probe of a server or database URI; ``None`` for ``databricks``
    (left to MLflow).

    :raises StoreError: a missing database driver, or a scheme harness cannot use.
    """
    scheme = _scheme(uri)
    if scheme in ("http", "https"):
        return _check_server
    if scheme.split("+")[0] in ("postgresql", "mysql", "mssql"):
        problem = driver_problem(uri)
        if problem:
            raise StoreError(problem)
        return _check_database
    if scheme == "databricks" or uri == "databricks" or uri.startswith("databricks:"):
        return None
    if scheme == "sqlite" and uri.startswith("sqlite://") and uri[9:10] != "/":
        what = "an in-memory SQLite database (gone when the process ends)"
    elif scheme:
        what = f"scheme '{scheme}'"
    else:
        what = "no database scheme (a file-store folder, or file:)"
    raise StoreError(
        f"Tracking URI {mask(uri)} has {what}; harness keeps results in a database:"
        " use sqlite:///PATH/mlflow.db (a file), http(s)://HOST:PORT (a tracking server)"
        " or postgresql://USER@HOST/DB."
    )


class FileIdentity:
    """Which file a SQLite store's path named when it was opened (device and inode), to
    tell later whether it is still there and writable: a database deleted, replaced or
    made read-only while a run writes would otherwise lose results unseen (an open
    connection keeps writing into a deleted file, or through its open descriptors into
    one made read-only, until some other write fails)."""

    def __init__(self, uri: str) -> None:
        self.path = sqlite_path(uri)
        self._id = self._now()

    def _now(self) -> tuple[int, int] | None:
        try:
            info = self.path.stat() if self.path is not None else None
        except OSError:
            return None
        return None if info is None else (info.st_dev, info.st_ino)

    def problem(self) -> str | None:
        """What happened to the file since it was opened (``'disappeared (...)'``,
        ``'turned read-only'``), or ``None``; always ``None`` for a store that is not a
        local SQLite file, or that had no file when opened."""
        if self._id is None or self.path is None:
            return None
        if self._now() != self._id:
            return "disappeared (deleted or moved)"
        if not (os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK)):
            return "turned read-only"
        return None


_FAILURES = (  # (words in the error, what happened to the store)
    (("database is locked", "database table is locked"), "is locked by another process"),
    (("readonly database", "read-only file system", "permission denied"), "turned read-only"),
    (("database or disk is full", "no space left"), "is full (no space left on its disk)"),
    (("no such table", "unable to open", "no such file"), "disappeared (deleted or moved)"),
    (("disk i/o error",), "could not be written (disk I/O error)"),
)


def store_failure(err: BaseException) -> str | None:
    """What happened to a SQLite store, read from ``err`` or an exception it was raised
    from (``sqlite3``, SQLAlchemy or MLflow wrapping them, ``OSError``): ``'is locked by
    another process'``, ``'turned read-only'``, ``'is full (...)'``, ``'disappeared (...)'``,
    ``'could not be written (...)'``; ``None`` for anything else (a value the store
    refused)."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, OSError) and err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return "turned read-only"
        if isinstance(err, OSError) and err.errno == errno.ENOSPC:
            return "is full (no space left on its disk)"
        text = str(err).lower()
        for words, what in _FAILURES:
            if any(w in text for w in words):
                return what
        err = err.__cause__ or err.__context__
    return None


_RESUME = {
    "is locked by another process": "When it is done (or stopped), run the same command again",
    "turned read-only": "Make its folder and file writable again, then run the same command",
    "is full (no space left on its disk)": "Free space on its disk, then run the same command",
}


def lost_message(display_uri: str, what: str, logged: int) -> str:
    """The one line that stops a command whose store ``what`` (:func:`store_failure`):
    what happened, what was kept (``logged`` cell runs this command wrote) and how to
    resume."""
    kept = f"{logged} cell run(s) logged by this command"
    if what.startswith("disappeared"):
        return (
            f"The tracking store {display_uri} {what} while harness was using it; the"
            f" {kept} went with it. Put the file back to keep them, or run the same command"
            " again to run them into a new store."
        )
    resume = _RESUME.get(what, "Run the same command again")
    if what.startswith("is locked"):
        what += f" (waited {BUSY_TIMEOUT_S:.0f} s)"
    return (
        f"The tracking store {display_uri} {what}; {kept} are kept. {resume}:"
        " it resumes from the cells kept."
    )


def _auth_headers() -> dict[str, str]:
    user, password = (
        os.environ.get("MLFLOW_TRACKING_USERNAME"),
        os.environ.get("MLFLOW_TRACKING_PASSWORD"),
    )
    if user and password:
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        return {"Authorization": f"Basic {token}"}
    if os.environ.get("MLFLOW_TRACKING_TOKEN"):
        return {"Authorization": f"Bearer {os.environ['MLFLOW_TRACKING_TOKEN']}"}
    return {}


def _get(url: str, timeout_s: float, headers: dict[str, str] | None = None) -> bytes:
    context = None
    if os.environ.get("MLFLOW_TRACKING_INSECURE_TLS", "").lower() in ("1", "true"):
        context = ssl._create_unverified_context()
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=timeout_s, context=context) as response:
        return response.read()


def _check_server(uri: str, deadline: float) -> None:
    base = uri.rstrip("/")
    shown = mask(base)
    try:
        _get(f"{base}/health", min(_CONNECT_TIMEOUT_S, deadline - time.monotonic()))
    except urllib.error.HTTPError as err:
        raise StoreError(
            f"{shown} answered /health with HTTP {err.code}: is it an MLflow tracking server"
            " (start one with 'harness server')?"
        ) from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise StoreError(
            f"Cannot reach the MLflow tracking server {shown}: {mask(str(reason))}. Is it"
            " running ('harness server') and is the address right? Nothing was run."
        ) from None
    query = urllib.parse.urlencode({"max_results": 1})
    try:
        url = f"{base}/api/2.0/mlflow/experiments/search?{query}"
        body = _get(url, max(deadline - time.monotonic(), 0.5), _auth_headers())
        json.loads(body)
    except urllib.error.HTTPError as err:
        if err.code in (401, 403):
            raise StoreError(
                f"The MLflow tracking server {shown} refused the credentials (HTTP {err.code})."
                " Set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD, or put"
                " 'user:password@' before the host in the URI."
            ) from None
        raise StoreError(
            f"The MLflow tracking server {shown} answered HTTP {err.code} to a search."
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise StoreError(
            f"The MLflow tracking server {shown} did not answer an API call:"
            f" {mask(str(getattr(err, 'reason', err)))}."
        ) from None


def _check_database(uri: str, deadline: float) -> None:
    import sqlalchemy

    wait = int(min(_CONNECT_TIMEOUT_S, deadline - time.monotonic()))
    args = {"connect_timeout": max(wait, 1)} if uri.startswith("postgresql") else {}
    try:
        engine = sqlalchemy.create_engine(uri, connect_args=args, poolclass=sqlalchemy.NullPool)
        with engine.connect() as connection:
            connection.execute(sqlalchemy.text("SELECT 1"))
        engine.dispose()
    except Exception as err:  # any driver error: shown in one line, password masked
        first = str(getattr(err, "orig", None) or err).strip().splitlines()
        raise StoreError(
            f"Cannot open the tracking database {mask(uri)}: "
            f"{mask(first[0] if first else type(err).__name__)}. Is the database server"
            " running, and do the database and user exist?"
        ) from None


@contextlib.contextmanager
def store_lock(uri: str, timeout_s: float = 300.0) -> Iterator[None]:
    """Hold an inter-process file lock (``<db>.lock`` beside the database) while a local
    SQLite store is created or migrated; a no-op for any other store.

    :raises StoreError: another process held the lock for ``timeout_s`` seconds.
    """
    db = sqlite_path(uri)
    if db is None:
        yield
        return
    from filelock import FileLock, Timeout

    path = Path(f"{db}.lock")
    try:
        with FileLock(path, timeout=timeout_s):
            yield
    except Timeout:
        raise StoreError(
            f"Another process has held {path} for {timeout_s:.0f} s while creating the store;"
            " if none is running, delete the file."
        ) from None
