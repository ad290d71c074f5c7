"""Faults an adversarial tester found beyond the corpus (issue 30), items 5, 7 and part of 8:
nothing echoed (files that are not suites, passwords, long values, look-alike characters),
late failures checked before the first cell (report folder, scheduler address, timeouts,
plugins that break at import or in a generator hook), and the daily loop (--add-method
after selection, what Ctrl-C keeps). Each test failed on the code before its fix; the
docstrings say what it showed then."""

from __future__ import annotations

import os
import signal
import socket
import string
import subprocess
import sys
import time
from pathlib import Path

import pytest
import toy_plugin
from fake_plugins import install_fake_plugin

from harness import hookimpl
from harness.errors import PluginError
from harness.plugins.registry import build_registry
from harness.suites.loading import load_suite
from harness.suites.overrides import Overrides

HARNESS = str(Path(sys.executable).with_name("harness"))
RUN = "  - {task: toy, datasets: [noise], methods: [mean]}\n"
SUITE = f"name: s\nruns:\n{RUN}"


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


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- item 5: nothing echoed ----------------------------------------------------------------


def test_an_include_linked_to_a_file_that_is_not_a_suite_is_refused_unread(harness_main, tmp_path):
    """Before: the .yaml link was read and each line of the credentials file it leads to
    came back as an "unknown key 'password'" error."""
    secret = tmp_path / "credentials.conf"
    secret.write_text("user: admin\npassword: hunter2-7f3a\n")
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "creds.yaml").symlink_to(secret)
    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\ninclude: [parts/creds.yaml]\n")
    code, out, err = harness_main("validate", str(suite))
    assert code == 2, out + err
    assert "include[0]: '" in err and "creds.yaml' is not a suite file: it links to a file" in err
    assert "password" not in err and "hunter2" not in err and "admin" not in err


def test_a_yaml_mapping_without_suite_keys_is_refused_without_quoting_it(harness_main, tmp_path):
    """Before: 'unknown key 'password'', 'unknown key 'api_token'' (a line each)."""
    (tmp_path / "other.yaml").write_text("user: admin\npassword: hunter2-7f3a\napi_token: t\n")
    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\ninclude: [other.yaml]\n")
    code, out, err = harness_main("validate", str(suite))
    assert code == 2, out + err
    assert "other.yaml: not a suite" in err and "has 3 keys and none of name" in err
    assert "password" not in err and "api_token" not in err and len(err.splitlines()) == 1


# Every printable ASCII character but the space, in a password written as is (not
# percent-encoded): the URI parser must find where the password ends whatever it holds.
PASSWORDS = [f"pw{c}7f3a{c}x" for c in string.punctuation] + ["p@ss/w#r?d@", "a:b@c%zz"]


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_password_holding_any_character_is_read_whole_and_masked(password, monkeypatch):
    """Before: a '#', '/', '?' or '@' in the password ended it early: part of it stayed in
    the masked text and in the URI given to MLflow, the rest was taken for the host."""
    from harness import redaction

    monkeypatch.delenv("MLFLOW_TRACKING_PASSWORD", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_USERNAME", raising=False)
    uri = f"postgresql://ann:{password}@db.example.org:5432/mlflow"
    text = f"error: cannot open '{uri}': refused"
    assert redaction.mask(text) == (
        "error: cannot open 'postgresql://ann:***@db.example.org:5432/mlflow': refused"
    )
    moved = redaction.move_http_credentials(f"http://ann:{password}@mlflow.example.org:5000/x")
    assert moved == "http://mlflow.example.org:5000/x"
    assert os.environ["MLFLOW_TRACKING_PASSWORD"] == password
    assert redaction.split_uri(uri)[2] == password  # the one parser


def test_a_database_password_is_percent_encoded_for_its_driver():
    """Before: postgresql://ann:p@ss@host/db went to the driver as is; it took 'ss@host'
    for the host and printed it."""
    from harness.redaction import move_http_credentials

    uri = move_http_credentials("postgresql://ann:p@ss/9c1d@127.0.0.1:5432/db")
    assert uri == "postgresql://ann:p%40ss%2F9c1d@127.0.0.1:5432/db"
    assert move_http_credentials(uri) == uri  # already encoded: kept


@pytest.mark.parametrize(
    "uri",
    [
        "http://ann:pa#ss-7f3a@127.0.0.1:{port}",
        "postgresql://ann:p@ss-9c1d@127.0.0.1:{port}/mlflow",
    ],
    ids=["http-hash", "postgresql-at"],
)
def test_a_password_with_url_special_characters_never_reaches_the_terminal(uri, toy_env, tmp_path):
    """Before: the http URI ended in a traceback ("nonnumeric port: 'pa'"); the PostgreSQL
    one in "failed to resolve host 'ss-9c1d@127.0.0.1'" (part of the password)."""
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE)
    result = subprocess.run(
        [HARNESS, "run", str(suite), "--tracking-uri", uri.format(port=_closed_port())],
        env=toy_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output
    for part in ("pa#ss", "ss-7f3a", "ss-9c1d", "p@ss"):
        assert part not in output, output
    assert ":***@" in output or "http://127.0.0.1" in output


def test_long_values_are_cut_and_their_length_stated(harness_main, tmp_path):
    """Before: the 600,000-character name and the 100,000-character option came back
    whole in one error line."""
    suite = tmp_path / "big.yaml"
    name = "x" * 600_000
    suite.write_text(f"name: big\nruns:\n  - {{task: toy, datasets: [noise], methods: [{name}]}}\n")
    code, _, err = harness_main("validate", str(suite))
    assert code == 2 and "(600,000 characters) for task 'toy'" in err and len(err) < 1_000
    value = "y" * 100_000
    suite.write_text(
        "name: big\nruns:\n  - {task: toy, datasets: [noise],"
        f" methods: [{{name: mean, params: {{shift: {value}}}}}]}}\n"
    )
    code, _, err = harness_main("validate", str(suite))
    assert code == 2 and "expected float, got 'yyy" in err and len(err) < 1_000, err[:2000]
    small = tmp_path / "s.yaml"
    small.write_text(SUITE)
    for option in ("--method", "--add-method", "--dataset", "--seeds", "--timeout"):
        code, _, err = harness_main("validate", str(small), option, "z" * 100_000)
        assert code == 2 and "(100,000 characters)" in err and len(err) < 1_000, (option, err)
    code, _, err = harness_main("validate", str(small), "--set", "dataset.n=" + "z" * 100_000)
    assert code == 2 and "characters)" in err and len(err) < 1_000, err[:2000]


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("no\u200bise", r"'no\u200bise'"),  # a zero-width space
        ("n\u043eise", r"'n\u043eise'"),  # a Cyrillic o
        ("noise\u202e", r"'noise\u202e'"),  # a right-to-left override
    ],
)
def test_invisible_and_look_alike_characters_are_shown_escaped(name, shown, harness_main, tmp_path):
    """Before: "Unknown dataset 'no​ise' ... Known: noise", two names that look the same."""
    suite = tmp_path / "s.yaml"
    suite.write_text(f"name: s\nruns:\n  - {{task: toy, datasets: ['{name}'], methods: [mean]}}\n")
    code, _, err = harness_main("validate", str(suite))
    assert code == 2 and f"Unknown dataset {shown} for task 'toy'" in err, err
    suite.with_name("t.yaml").write_text(SUITE)
    code, _, err = harness_main("validate", str(suite.with_name("t.yaml")), "--method", name)
    assert code == 2 and name not in err and shown.strip("'") in err, err


# -- item 7: every late failure checked up front -------------------------------------------


def _run_args(suite: Path, store: str, reports: Path | str) -> list[str]:
    return ["run", str(suite), "--tracking-uri", store, "--report-dir", str(reports), "-j", "0"]


def test_a_report_dir_that_is_a_dangling_link_is_refused_before_the_first_cell(
    harness_main, tmp_path
):
    """Before: every cell ran, then the report failed (FileExistsError)."""
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE)
    (tmp_path / "reports").symlink_to(tmp_path / "gone")
    store = tmp_path / "store" / "mlflow.db"
    code, out, err = harness_main(*_run_args(suite, f"sqlite:///{store}", tmp_path / "reports"))
    assert code == 2, (code, out, err)
    assert "is a link to" in err and "gone, which does not exist" in err
    assert not store.parent.exists() and "cells" not in out


def test_a_report_dir_whose_suite_entry_is_a_file_is_refused_before_the_first_cell(
    harness_main, tmp_path
):
    """Before: every cell ran, then the report failed on the file 'reports/s'."""
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "s").write_text("not a folder")
    store = tmp_path / "store" / "mlflow.db"
    code, out, err = harness_main(*_run_args(suite, f"sqlite:///{store}", tmp_path / "reports"))
    assert code == 2, (code, out, err)
    assert "(the suite's report folder) is a file, not a folder" in err
    assert not store.parent.exists()


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("tcp://host:notaport", "invalid literal"),
        ("tcp://:::", "invalid address"),
        ("foo://bar:1", "unknown address scheme 'foo'"),
        ("not an address", "missing port number"),
        ("tcp://localhost:99999", "port 99999 is not in 1-65535"),
    ],
)
def test_a_malformed_scheduler_address_is_refused_before_anything_is_written(
    address, reason, harness_main, tmp_path
):
    """Before: a ValueError traceback, after the store had been created."""
    pytest.importorskip("distributed")
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE)
    store = tmp_path / "store" / "mlflow.db"
    args = [*_run_args(suite, f"sqlite:///{store}", tmp_path / "r"), "--scheduler", address]
    code, out, err = harness_main(*args)
    assert code == 2, (code, out, err)
    assert f"--scheduler '{address}': not a dask scheduler address ({reason}" in err
    assert not store.parent.exists() and not (tmp_path / "r").exists()


@pytest.mark.parametrize("timeout", ["99999999999999999h", "9000h"])
def test_a_timeout_too_large_for_a_timestamp_is_refused(timeout, harness_main, tmp_path):
    """Before: '99999999999999999h' ran and crashed in setitimer ("timestamp out of range
    for platform time_t"); '9000h' was taken."""
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE)
    store = tmp_path / "store" / "mlflow.db"
    args = [*_run_args(suite, f"sqlite:///{store}", tmp_path / "r"), "--timeout", timeout]
    code, out, err = harness_main(*args)
    assert code == 2, (code, out, err)
    assert "a timeout is at most 365 days (31,536,000 s)" in err
    assert not store.parent.exists()


class GeneratorHook:
    @hookimpl
    def harness_methods(self):
        yield from ()
        raise RuntimeError("weights not found")


def test_a_generator_hook_that_raises_leaves_its_plugin_out_and_the_others_work():
    """Before: the RuntimeError escaped build_registry, so every command failed."""
    registry = build_registry({"toy": toy_plugin, "gen": GeneratorHook()}, entry_points=False)
    assert "gen" not in registry.plugins and "mean" in registry.names("method", "toy")
    assert "harness_methods() failed: RuntimeError: weights not found" in registry.broken["gen"]
    with pytest.raises(PluginError, match="weights not found"):
        build_registry({"toy": toy_plugin, "gen": GeneratorHook()}, entry_points=False, strict=True)


class _EntryPoint:
    def __init__(self, name: str, load) -> None:
        self.name, self.value, self.dist, self.load = name, f"{name}_module", None, load


def test_a_plugin_raising_keyboard_interrupt_at_import_is_left_out(monkeypatch):
    """Before: the KeyboardInterrupt ended every command (exit 130, 'Interrupted')."""

    def load():
        raise KeyboardInterrupt

    monkeypatch.setattr(
        "harness.plugins.discovery.entry_points", lambda group: [_EntryPoint("ki", load)]
    )
    registry = build_registry({"toy": toy_plugin})
    assert "raised KeyboardInterrupt while imported (no Ctrl-C" in registry.broken["ki"]
    assert "mean" in registry.names("method", "toy")


def test_a_real_ctrl_c_while_plugins_load_still_stops(monkeypatch):
    def load():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the signal arrives first

    monkeypatch.setattr(
        "harness.plugins.discovery.entry_points", lambda group: [_EntryPoint("slow", load)]
    )
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            build_registry({"toy": toy_plugin})
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_plugin_calling_os_exit_at_import_is_left_out(monkeypatch):
    """Before: os._exit(0) ended harness at once, exit 0 and no word (pytest too: this test
    killed the test run)."""
    real = os._exit

    def load():
        os._exit(0)

    monkeypatch.setattr(
        "harness.plugins.discovery.entry_points", lambda group: [_EntryPoint("ex", load)]
    )
    registry = build_registry({"toy": toy_plugin})
    assert "called os._exit(0) while imported" in registry.broken["ex"]
    assert os._exit is real


def test_plugins_broken_at_import_in_every_way_leave_the_others_working(toy_env, tmp_path):
    """Through a real `harness list` with installed plugins. Before: exit 0 and nothing
    printed (os._exit at import), or exit 130 (KeyboardInterrupt), or a traceback (the
    generator hook)."""
    site = Path(toy_env["PYTHONPATH"].split(os.pathsep)[0])
    install_fake_plugin(site, "exiter", "exiter_plugin", "import os\nos._exit(0)\n")
    install_fake_plugin(site, "ctrl-c", "ctrl_c_plugin", "raise KeyboardInterrupt\n")
    generator = (
        "from harness import hookimpl\n\n\n@hookimpl\ndef harness_methods():\n"
        "    yield from ()\n    raise RuntimeError('weights not found')\n"
    )
    install_fake_plugin(site, "gen", "gen_plugin", generator)
    result = subprocess.run(
        [HARNESS, "list"], env=toy_env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    err = " ".join(result.stderr.split())
    assert "plugin 'exiter' left out" in err and "os._exit(0)" in err
    assert "plugin 'ctrl-c' left out" in err and "KeyboardInterrupt" in err
    assert "plugin 'gen' left out" in err and "weights not found" in err
    assert "mean" in result.stdout and "noise" in result.stdout


# -- item 8: the daily loop ---------------------------------------------------------------

TWO_RUNS = """
name: two-runs
runs:
  - task: toy
    datasets: [noise]
    methods: [mean, boom]
  - task: toy
    seeds: [7]
    datasets: [noise]
    methods: [skipper]
"""


def test_an_added_method_joins_only_runs_that_keep_a_method_after_selection(registry, write_suite):
    """Before: `--method boom --add-method sleepy` ran sleepy alone on the second run
    (seed 7), whose only method --method had removed."""
    path = write_suite(TWO_RUNS)
    cells = load_suite(path, registry, Overrides(methods=("boom",), add_methods=("sleepy",)))
    assert {(c.method, c.seed) for c in cells.cells} == {("boom", 0), ("sleepy", 0)}
    # no selection: every run of the task gets it
    cells = load_suite(path, registry, Overrides(add_methods=("sleepy",))).cells
    assert {(c.method, c.seed) for c in cells if c.method == "sleepy"} == {
        ("sleepy", 0),
        ("sleepy", 7),
    }
    # the added method named by --method: kept in every run, alone
    cells = load_suite(path, registry, Overrides(methods=("sleepy",), add_methods=("sleepy",)))
    assert {(c.method, c.seed) for c in cells.cells} == {("sleepy", 0), ("sleepy", 7)}
    # a --dataset selection that empties no run changes nothing
    cells = load_suite(path, registry, Overrides(datasets=("noise",), add_methods=("sleepy",)))
    assert len([c for c in cells.cells if c.method == "sleepy"]) == 2


def test_ctrl_c_says_how_many_cells_are_kept_and_how_to_resume(
    harness_main, store, tmp_path, monkeypatch
):
    """Before: 'Interrupted: finished cells are kept in the store.' and nothing more."""
    import harness.runs.runner

    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\nseeds: [0, 1, 2, 3]\nruns:\n" + RUN)

    def interrupted_run(spec, registry, tracker, *, listeners, **kwargs):
        from harness.runs.cell import CellResult
        from harness.runs.events import CellReport, run_events

        hook = run_events(listeners).hook
        hook.harness_run_start(total=4, todo=3, cells=spec.cells[1:])  # one finished before
        for cell, status in ((spec.cells[1], "ok"), (spec.cells[2], "failed")):
            hook.harness_cell_logreport(report=CellReport(cell, CellResult(cell.cell_hash, status)))
        raise KeyboardInterrupt

    monkeypatch.setattr(harness.runs.runner, "run_suite", interrupted_run)
    args = ["run", str(suite), "--tracking-uri", store, "--force", "--report-dir", "r"]
    code, out, err = harness_main(*args)
    assert code == 130, (code, out, err)
    err = " ".join(err.split())
    assert "Interrupted: finished cells are kept in the store (3 of 4 cells; resume with:" in err
    assert f"harness run {suite} --tracking-uri {store} --report-dir r)" in err  # no --force
