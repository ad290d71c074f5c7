"""The bad-suite corpus (tests/data/bad_suites/, README there): every file is refused through
the real CLI with exit 2 and one message naming the file and the place, no traceback, nothing
written to the store, the report folder or the working folder, in under 2 s. Also: suite
names never become paths, so `harness report` writes only inside its report folder."""

from __future__ import annotations

import resource
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import call_main

from harness.suites.schema import NAME_MAX, check_name, safe_name

CORPUS = Path(__file__).parents[1] / "data" / "bad_suites"
CASES = sorted(CORPUS.glob("*.yaml"))
HARNESS = str(Path(sys.executable).parent / "harness")
# Through a real `harness` process (the rest run through cli.main() in this process): one of
# each kind of failure that used to hang, crash or echo a file.
SUBPROCESS = [
    "non-utf8",
    "billion-laughs",
    "deep-nesting",
    "grid-billion-cells",
    "two-million-seeds",
    "name-path-traversal",
    "include-etc-passwd",
    "timeout-nan",
]


def _expectation(path: Path) -> tuple[str, str, list[str]]:
    """(text the message must contain, what it must name, command-line options) from the
    case's header: ``# expect: TEXT``, then ``# file: NAME`` (an included file is named)
    or ``# args: OPTIONS`` (options given with the suite; the message names the first)."""
    first, *rest = path.read_bytes().split(b"\n")[:3]
    header = {line[2:6]: line[8:].decode() for line in rest if line[:2] == b"# "}
    args = shlex.split(header.get(b"args", ""))
    named = header.get(b"file") or (args[0] if args else path.name)
    return first.decode().removeprefix("# expect: "), named, args


def _files(folder: Path, folders: bool = True) -> dict[str, float]:
    """``{relative path: mtime}`` of everything under ``folder`` (files only if not ``folders``)."""
    return {
        str(p.relative_to(folder)): p.stat().st_mtime
        for p in folder.rglob("*")
        if folders or not p.is_dir()
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A copy of the corpus to run in (a run must not write into it either)."""
    folder = tmp_path_factory.mktemp("corpus") / "bad_suites"
    shutil.copytree(CORPUS, folder)
    return folder


@pytest.fixture
def in_process(registry, capsys):
    """``harness ARGS`` through ``cli.main()`` in this process, with the toy registry."""
    return lambda *args: call_main(registry, capsys, *args)


def test_the_corpus_has_at_least_50_cases():
    assert len(CASES) >= 150
    assert all(_expectation(p)[0] for p in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_bad_suite_exits_2_with_one_message_and_writes_nothing(
    case, corpus, in_process, tmp_path, monkeypatch
):
    monkeypatch.chdir(corpus)
    before = _files(corpus)
    store, reports = tmp_path / "store", tmp_path / "reports"
    tic = time.perf_counter()
    expect, named, args = _expectation(case)
    code, out, err = in_process(  # the case's options last: its --tracking-uri wins
        "run",
        case.name,
        "--tracking-uri",
        f"sqlite:///{store}/mlflow.db",
        "--report-dir",
        str(reports),
        *args,
    )
    elapsed = time.perf_counter() - tic
    assert code == 2, out + err
    assert "Traceback" not in out + err
    message = err.strip()
    assert len(message.splitlines()) == 1 and message.startswith("error: "), message
    assert expect in message and named in message, message
    assert "root:" not in message  # an included file's content is never echoed
    assert not store.exists() and not reports.exists() and _files(corpus) == before
    assert elapsed < 2.0


@pytest.mark.parametrize("stem", SUBPROCESS)
def test_bad_suite_through_the_harness_command(stem, corpus, toy_env, tmp_path):
    case = corpus / f"{stem}.yaml"
    store, reports = tmp_path / "store", tmp_path / "reports"
    report = ["--report-dir", str(reports)]
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    tic = time.perf_counter()
    result = subprocess.run(
        [HARNESS, "run", case.name, "--tracking-uri", f"sqlite:///{store}/mlflow.db", *report],
        env=toy_env,
        cwd=corpus,
        capture_output=True,
        text=True,
        timeout=60,
    )
    wall = time.perf_counter() - tic
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
    expect, named, _ = _expectation(case)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert expect in result.stderr and named in result.stderr, result.stderr
    assert "root:" not in result.stdout + result.stderr
    assert not store.exists() and not reports.exists()
    # Under 2 s of the process's own time (start-up included); the wall clock is checked
    # loosely because CI machines are shared.
    assert seconds < 2.0 and wall < 20.0, (seconds, wall)


def test_file_over_the_size_cap_is_refused_before_parsing(in_process, tmp_path):
    path = tmp_path / "huge.yaml"
    seeds = ", ".join(str(i) for i in range(200_000))
    path.write_text(f"name: huge\nseeds: [{seeds}]\n")
    tic = time.perf_counter()
    code, _, err = in_process("validate", str(path))
    assert code == 2 and "huge.yaml' has 1,488,909 bytes; a suite file has at most 1,000,000" in err
    assert time.perf_counter() - tic < 1.0


def test_max_cells_raises_the_cap(in_process, write_suite):
    run = "  - {task: toy, datasets: [noise], methods: [mean, boom]}\n"
    path = str(write_suite(f"name: capped\nrepetitions: 4\nruns:\n{run}"))
    code, _, err = in_process("validate", path, "--max-cells", "7")
    assert code == 2 and "the suite has 8 cells, above the cap of 7" in err
    assert "--max-cells" in err
    code, out, _ = in_process("validate", path, "--max-cells", "8")
    assert code == 0 and "8 cells" in out


@pytest.mark.parametrize(
    "name", ["../../../escape", "a/b", "..", ".", "", "x" * 20_000, "a\x00b", "/abs", "c:\\d"]
)
def test_safe_name_is_one_valid_path_component(name):
    safe = safe_name(name)
    assert check_name(safe) is None and len(safe) <= NAME_MAX
    assert Path(safe).name == safe and safe not in (".", "..")
    assert safe_name(safe) == safe


def test_safe_names_of_different_names_differ():
    names = ["a/b", "a\\b", "a b", "a?b", "../a-b"]
    assert len({safe_name(n) for n in names}) == len(names)


@pytest.mark.slow
def test_report_of_every_experiment_writes_only_inside_its_folder(
    registry, in_process, store, tmp_path, monkeypatch
):
    """Experiments whose names are paths (renamed by another tool in a shared store) must
    not steer `harness report` (no SUITE: every experiment) outside ``--out``."""
    import mlflow

    from harness.runs.runner import run_suite
    from harness.store.tracking import Tracker
    from harness.suites.loading import load_suite

    evil = ["../../../escape", "a/../../b", ".."]
    suite_file = tmp_path / "victim.yaml"
    suite_file.write_text(
        "name: victim\nruns:\n  - {task: toy, datasets: [noise], methods: [mean]}\n"
    )
    client = mlflow.MlflowClient(store)
    for name in evil:
        outcome = run_suite(load_suite(suite_file, registry), registry, Tracker(store))
        client.rename_experiment(outcome.experiment_id, name)
    work = tmp_path / "a" / "b" / "c"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    before = _files(tmp_path, folders=False)
    code, out, err = in_process("report", "--tracking-uri", store, "--out", "reports")
    assert code == 0, out + err
    new = [p for p, mtime in _files(tmp_path, folders=False).items() if before.get(p) != mtime]
    reports = str((work / "reports").relative_to(tmp_path))
    outside = [p for p in new if not p.startswith((reports, "mlflow.db", "artifacts"))]
    assert outside == []
    folders = sorted(p.name for p in (work / "reports").iterdir())
    assert len(folders) == len(evil) and all(check_name(f) is None for f in folders)
