"""A store's start-up check and its failures mid-run: a SQLite URI with a query, a store
deleted, locked, turned read-only or out of space stops the run with exit 2 (and resumes)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from helpers import HARNESS, TOY_CLAIMS_SUITE, call_main


@pytest.mark.parametrize("tail", ["?mode=ro", "#main"])
def test_a_sqlite_uri_with_a_query_is_refused_and_creates_no_file(
    registry, capsys, tmp_path, monkeypatch, write_suite, tail
):
    monkeypatch.chdir(tmp_path)
    suite = write_suite(textwrap.dedent(TOY_CLAIMS_SUITE))
    code, _, err = call_main(registry, capsys, "run", str(suite), "--tracking-uri",
                             f"sqlite:///q.db{tail}")  # fmt: skip
    assert code == 2
    assert "does not read a SQLite URI's query or fragment" in " ".join(err.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite.yaml"]


STORE_FAULTS = """
name: store-faults
seeds: [0, 1, 2, 3, 4, 5, 6, 7]
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 4}}]
    methods: [{name: sleepy, params: {seconds: 0.5}}]
    metrics: [abs-error]
"""


def _cells_logged(db: Path) -> int:
    import contextlib
    import sqlite3

    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
            sql = "SELECT COUNT(*) FROM tags WHERE key = 'harness.status'"
            return connection.execute(sql).fetchone()[0]
    except sqlite3.Error:  # not created yet, or busy
        return 0


def _run_into_fault(env, folder: Path, uri: str, fault) -> tuple[int, str, float]:
    """``harness run`` of 8 half-second cells into ``uri``; once a cell is logged, the
    context manager ``fault(db)`` is entered and held until harness exits. Returns the
    exit code, stderr and the seconds from the fault to the exit."""
    suite = folder / "faults.yaml"
    suite.write_text(STORE_FAULTS)
    db = Path(uri.removeprefix("sqlite:///"))
    args = [HARNESS, "run", str(suite), "--tracking-uri", uri, "--report-dir", str(folder / "r")]
    process = subprocess.Popen(args, env=env, cwd=folder, text=True, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _cells_logged(db) < 1:
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.05)
    with fault(db):
        tic = time.monotonic()
        _, err = process.communicate(timeout=120)
    return process.returncode, err, time.monotonic() - tic


def _the_line(err: str) -> str:
    """The one error line harness printed (no traceback)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


def test_a_store_deleted_mid_run_stops_the_run_with_exit_2(toy_env, tmp_path, store):
    """Before: exit 0, "8 ok", a report, and every result gone with the deleted file."""
    import contextlib

    @contextlib.contextmanager
    def delete(db: Path):
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            path.unlink(missing_ok=True)
        yield

    code, err, _ = _run_into_fault(toy_env, tmp_path, store, delete)
    line = _the_line(err)
    assert code == 2, err
    assert "disappeared (deleted or moved)" in line and "went with it" in line, line
    assert "run the same command again" in line, line


def test_a_rerun_after_the_store_was_deleted_mid_run_sets_its_leftover_log_aside(
    toy_env, tmp_path, store
):
    """The database file deleted mid-run, its ``-wal``/``-shm`` left behind as such a
    deletion leaves them: the same command again exits 0 into a new store holding its own
    cells only, and the leftovers are kept aside under another name, said in one line.
    Before: SQLite replayed the old write-ahead log onto the new file ("database disk
    image is malformed", a traceback, exit 1)."""
    import contextlib

    @contextlib.contextmanager
    def delete_db_only(db: Path):
        db.unlink()
        yield

    code, err, _ = _run_into_fault(toy_env, tmp_path, store, delete_db_only)
    db = Path(store.removeprefix("sqlite:///"))
    assert code == 2 and not db.exists() and Path(f"{db}-wal").exists(), err
    suite, report = tmp_path / "faults.yaml", tmp_path / "r2"
    args = [HARNESS, "run", str(suite), "--tracking-uri", store, "--report-dir", str(report)]
    done = subprocess.run(args, env=toy_env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "8 cells, 0 already finished, 8 to run" in done.stdout, done.stdout
    assert _cells_logged(db) == 8, "the new store holds this run's 8 cells, nothing older"
    aside = sorted(p.name for p in tmp_path.glob("mlflow.db-*.orphaned-*"))
    assert "mlflow.db-wal" in {name.split(".orphaned-")[0] for name in aside}, aside
    said = [line for line in done.stderr.splitlines() if ".orphaned-" in line]
    assert len(said) == 1 and "mlflow.db-wal" in said[0], done.stderr


def test_a_store_locked_mid_run_stops_the_run_with_exit_2(toy_env, tmp_path, store):
    """Another process holds the store (``BEGIN EXCLUSIVE``) past the busy timeout: exit 2
    within seconds, saying what is kept and how to resume; the cells logged before are
    there, and the same command resumes from them once the lock is gone."""
    import contextlib
    import sqlite3

    @contextlib.contextmanager
    def lock(db: Path):
        with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as other:
            other.execute("BEGIN EXCLUSIVE")
            yield
            other.execute("ROLLBACK")

    code, err, seconds = _run_into_fault(toy_env, tmp_path, store, lock)
    line = _the_line(err)
    assert code == 2 and seconds < 30, (seconds, err)
    assert "is locked by another process" in line and "are kept" in line, line
    kept = _cells_logged(Path(store.removeprefix("sqlite:///")))
    assert re.search(rf"\b{kept} cell run\(s\) logged by this command are kept", line), line
    args = [HARNESS, "run", str(tmp_path / "faults.yaml"), "--tracking-uri", store]
    again = subprocess.run(args, env=toy_env, cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert f"{kept} already finished, {8 - kept} to run" in again.stdout + again.stderr


def test_a_store_locked_at_start_is_refused_within_15_s(toy_env, tmp_path, store):
    """Before: 61 s, then a traceback ending in "database is locked"."""
    import contextlib
    import sqlite3

    suite = tmp_path / "faults.yaml"
    suite.write_text(STORE_FAULTS)
    db = Path(store.removeprefix("sqlite:///"))
    args = [HARNESS, "run", str(suite), "--tracking-uri", store]
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as other:
        other.execute("BEGIN EXCLUSIVE")
        tic = time.monotonic()
        done = subprocess.run(args, env=toy_env, cwd=tmp_path, capture_output=True, text=True)
        seconds = time.monotonic() - tic
        other.execute("ROLLBACK")
    line = _the_line(done.stderr)
    assert done.returncode == 2 and seconds < 15, (seconds, done.stderr)
    assert "is locked by another process" in line and "0 cell run(s)" in line, line


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_store_turned_read_only_mid_run_stops_the_run_with_exit_2(toy_env, tmp_path, store):
    """The store's folder and file made read-only while cells run (SQLite keeps writing
    through descriptors it opened before, so only a check of the file tells)."""
    import contextlib

    @contextlib.contextmanager
    def read_only(db: Path):
        db.chmod(0o444)
        db.parent.chmod(0o555)
        try:
            yield
        finally:
            db.parent.chmod(0o755)
            db.chmod(0o644)

    (tmp_path / "store").mkdir()  # the suite and report outside the folder made read-only
    code, err, _ = _run_into_fault(toy_env, tmp_path / "store", store, read_only)
    line = _the_line(err)
    assert code == 2 and "turned read-only" in line and "are kept" in line, line


def test_a_store_whose_file_system_turns_read_only_mid_run_stops_and_resumes(
    toy_env, tmp_path, store
):
    """A real read-only file system, which refuses writes (EROFS) to root as well: the
    store on a tmpfs, a read-only bind mount of it laid over its folder mid-run (``mount
    -o remount,ro`` is refused, "busy", while harness holds the file open for writing;
    the bind keeps the file's device and inode, and the descriptors opened before keep
    writing, as on a remount that went through). Exit 2 with the one line; once the
    folder is writable again the same command runs the cells not kept, none twice.
    Needs the right to mount (e.g. root in a container); skipped otherwise."""
    import contextlib
    import sqlite3

    disk = tmp_path / "disk"
    disk.mkdir()
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(disk)], capture_output=True
    )
    if mount.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs CAP_SYS_ADMIN)")

    @contextlib.contextmanager
    def read_only_file_system(db: Path):
        bind = ["mount", "--bind", "-o", "ro", str(disk), str(disk)]
        subprocess.run(bind, check=True, capture_output=True)
        try:
            assert not os.access(db, os.W_OK), "the bind should refuse writes, even to root"
            yield
        finally:
            subprocess.run(["umount", str(disk)], capture_output=True)

    try:
        db = disk / "mlflow.db"
        shutil.copy(Path(store.removeprefix("sqlite:///")), db)
        uri = f"sqlite:///{db}"
        code, err, _ = _run_into_fault(toy_env, tmp_path, uri, read_only_file_system)
        line = _the_line(err)
        assert code == 2 and "turned read-only" in line, line
        kept = _cells_logged(db)
        assert re.search(rf"\b{kept} cell run\(s\) logged by this command are kept", line), line
        assert "run the same command" in line and 1 <= kept < 8, (kept, line)
        args = [HARNESS, "run", str(tmp_path / "faults.yaml"), "--tracking-uri", uri]
        again = subprocess.run(args, env=toy_env, cwd=tmp_path, capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert f"{kept} already finished, {8 - kept} to run" in again.stdout + again.stderr
        with contextlib.closing(sqlite3.connect(db)) as connection:
            sql = "SELECT value, COUNT(*) FROM tags WHERE key = 'harness.status' GROUP BY value"
            statuses = dict(connection.execute(sql).fetchall())
        assert statuses == {"ok": 8}, statuses
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_a_store_whose_disk_fills_mid_run_stops_the_run_with_exit_2(toy_env, tmp_path, store):
    """A real full disk: the store on a tmpfs a little larger than the empty store (needs
    the right to mount one, e.g. root in a container; skipped otherwise)."""

    disk = tmp_path / "disk"
    disk.mkdir()
    db = Path(store.removeprefix("sqlite:///"))
    size = db.stat().st_size + 400_000
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)], capture_output=True
    )
    if mount.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs CAP_SYS_ADMIN)")
    try:
        shutil.copy(db, disk / "mlflow.db")
        uri = f"sqlite:///{disk}/mlflow.db"
        suite = tmp_path / "faults.yaml"
        text = STORE_FAULTS.replace("seeds: [0, 1, 2, 3, 4, 5, 6, 7]", "repetitions: 400")
        suite.write_text(text.replace("seconds: 0.5", "seconds: 0.0"))
        args = [HARNESS, "run", str(suite), "--tracking-uri", uri, "--report-dir", str(tmp_path)]
        done = subprocess.run(args, env=toy_env, cwd=tmp_path, capture_output=True, text=True)
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
    line = _the_line(done.stderr)
    assert done.returncode == 2 and "is full (no space left on its disk)" in line, line
