from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mlflow
import pytest
from fake_plugins import harness

from harness import errors

HARNESS = str(Path(sys.executable).parent / "harness")

SUITE = """
name: cli-toy
seeds: [0, 1]
timeout: 1m
runs:
  - task: toy
    datasets: [{name: noise, grid: {n: [3, 6]}}]
    methods: [mean, {extra}]
    metrics: [abs-error, path, never]
"""


@pytest.fixture
def suite(write_suite):
    return lambda extra="skipper": str(write_suite(SUITE.replace("{extra}", extra)))


def _cells(store, name="cli-toy"):
    client = mlflow.MlflowClient(store)
    experiment = client.get_experiment_by_name(name)
    return client.search_runs([experiment.experiment_id], "tags.`harness.kind` = 'cell'")


def test_run_logs_cells_and_second_run_executes_none(toy_env, suite, store, tmp_path):
    path = suite()
    first = harness(toy_env, "run", path, "-j", "2", "--tracking-uri", store, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "8 to run" in first.stdout and "toy: mean ± 95% CI" in first.stdout
    assert "skipped 4 cell(s): skipper never applies" in first.stdout
    assert "harness ui --tracking-uri" in first.stdout
    assert (tmp_path / "reports" / "cli-toy" / "report.html").exists()
    assert len(_cells(store)) == 8
    second = harness(toy_env, "run", path, "--tracking-uri", store, cwd=tmp_path)
    assert second.returncode == 0 and "8 already finished, 0 to run" in second.stdout
    assert len(_cells(store)) == 8
    forced = harness(toy_env, "run", path, "--force", "--tracking-uri", store, cwd=tmp_path)
    assert forced.returncode == 0 and "8 to run" in forced.stdout
    assert len(_cells(store)) == 16


def test_failed_cells_exit_1_and_keep_going(toy_env, suite, store, tmp_path):
    result = harness(toy_env, "run", suite("boom"), "--tracking-uri", store, cwd=tmp_path)
    assert result.returncode == 1
    assert "RuntimeError: boom" in result.stdout
    statuses = sorted(r.data.tags["harness.status"] for r in _cells(store))
    assert statuses == ["failed"] * 4 + ["ok"] * 4


def test_bad_suite_exits_2_and_writes_nothing(toy_env, suite, tmp_path):
    store = tmp_path / "never" / "mlflow.db"
    path = suite("mena")
    for args in (["validate", path], ["run", path, "--tracking-uri", f"sqlite:///{store}"]):
        result = harness(toy_env, *args, cwd=tmp_path)
        assert result.returncode == 2
        assert "Unknown method 'mena' for task 'toy'" in result.stderr
        assert "runs[0].methods[1]" in result.stderr
    assert not store.parent.exists()


def test_dry_run_prints_the_cell_table_and_count(toy_env, suite, tmp_path):
    result = harness(toy_env, "run", suite(), "--dry-run", cwd=tmp_path)
    assert result.returncode == 0 and "8 cells" in result.stdout and "skipper" in result.stdout
    assert not (tmp_path / "mlflow").exists()


def test_dry_run_leaves_an_empty_store_file_as_it_is(toy_env, suite, tmp_path):
    (tmp_path / "store").mkdir()
    empty = tmp_path / "store" / "mlflow.db"
    empty.touch()
    uri = f"sqlite:///{empty}"
    dry = subprocess.run(
        [HARNESS, "run", suite(), "--dry-run", "--tracking-uri", uri],
        env=toy_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dry.returncode == 0 and "no store at" in dry.stdout, dry.stdout + dry.stderr
    assert empty.stat().st_size == 0 and list(empty.parent.iterdir()) == [empty]


def test_plugin_that_fails_to_import_is_left_out_with_its_error(toy_env, tmp_path):
    site = Path(toy_env["PYTHONPATH"].split(os.pathsep)[0])
    info = site / "harness_broken-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: harness-broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[harness]\nbroken = broken_plugin_module\n")
    result = harness(toy_env, "list", cwd=tmp_path)
    assert result.returncode == 0  # the other plugins still work
    assert "Plugin 'broken'" in result.stderr and "No module named" in result.stderr
    assert "HARNESS_DISABLE_PLUGINS=broken" in result.stderr and "noise" in result.stdout


def test_list_shows_plugins_components_and_defaults(toy_env, tmp_path):
    result = harness(toy_env, "list", cwd=tmp_path)
    assert result.returncode == 0
    assert "toy" in result.stdout and "noise" in result.stdout and "n: int = 5" in result.stdout


def test_list_task_shows_data_and_output_types_and_required_params(toy_env, tmp_path):
    from dataclasses import dataclass

    from harness.cli.listing import params_text

    result = harness(toy_env, "list", "--task", "toy", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "data type toy_plugin.Draws" in result.stdout and "output type float" in result.stdout
    assert "y  " in result.stdout and "ndarray" in result.stdout  # the fields of Draws
    assert "shift: float = 0.0" in result.stdout

    class Component:
        @dataclass
        class Params:
            alpha: float
            n: int = 3

    assert params_text(Component) == "alpha: float (required), n: int = 3"
    unknown = harness(toy_env, "list", "--task", "nope", cwd=tmp_path)
    assert unknown.returncode == 2 and "Unknown task 'nope'" in unknown.stderr


def test_report_writes_markdown_and_html(toy_env, suite, store, tmp_path):
    path = suite()
    assert harness(toy_env, "run", path, "--tracking-uri", store, cwd=tmp_path).returncode == 0
    out = tmp_path / "out"
    result = harness(toy_env, "report", path, "--tracking-uri", store, "--out", str(out))
    assert result.returncode == 0, result.stderr
    text = (out / "cli-toy" / "report.md").read_text()
    assert "## toy" in text and "abs-error" in text
    # --report-dir names the same folder, as it does for harness run
    other = tmp_path / "other"
    again = harness(toy_env, "report", path, "--tracking-uri", store, "--report-dir", str(other))
    assert again.returncode == 0, again.stderr
    assert (other / "cli-toy" / "report.md").exists()


def test_new_plugin_skeleton_passes_its_conformance_checks(tmp_path):
    from harness.plugins.registry import build_registry
    from harness.plugins.scaffold import write_skeleton
    from harness.plugins.testing import run_checks

    folder = write_skeleton("demo-task", tmp_path)
    sys.path.insert(0, str(folder / "src"))
    try:
        import harness_demo_task

        registry = build_registry({"demo-task": harness_demo_task}, entry_points=False)
        outcomes = {outcome for _, outcome, _ in run_checks("demo-task", registry)}
    finally:
        sys.path.remove(str(folder / "src"))
    assert outcomes == {"passed"}


def test_ctrl_c_stops_cleanly_and_keeps_finished_cells(toy_env, write_suite, store, tmp_path):
    import signal
    import time

    path = write_suite(
        SUITE.replace("[mean, {extra}]", "[mean, {name: sleepy, params: {seconds: 60}}]")
    )
    process = subprocess.Popen(
        [HARNESS, "run", str(path), "--tracking-uri", store],
        env=toy_env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # SIGINT as a terminal gives it, even when pytest was started in the background
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    client = mlflow.MlflowClient(store)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # the 'mean' cells come first and finish at once
        experiment = client.get_experiment_by_name("cli-toy")
        if (
            experiment
            and len(
                client.search_runs(
                    [experiment.experiment_id],
                    "tags.`harness.kind` = 'cell' and attributes.status = 'FINISHED'",
                )
            )
            >= 2
        ):
            break
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and "finished cells are kept" in stderr
    finished = [r for r in _cells(store) if r.info.status == "FINISHED"]
    assert len(finished) >= 2
    parent = client.search_runs([experiment.experiment_id], "tags.`harness.kind` = 'suite'")
    assert parent[0].info.status == "KILLED"


def test_list_prints_brackets_of_docstrings_and_params_as_they_are(registry, monkeypatch, capsys):
    """A plugin's text is not rich markup: ``[a, b]`` stays, ``[/]`` does not raise."""
    from harness import cli
    from harness.cli.common import console

    noise = registry.get("dataset", "toy", "noise").cls
    monkeypatch.setattr(noise, "__doc__", "Draws in [a, b], closed [/] and [bold]raw[/bold].")
    monkeypatch.setattr(console, "width", 400)
    cli.main(["list"], registry=registry)
    assert "Draws in [a, b], closed [/] and [bold]raw[/bold]." in capsys.readouterr().out


def test_cell_and_result_tables_print_bracketed_values_as_they_are():
    """Params, names and metric values such as ``[a]`` and ``[/]`` reach the terminal."""
    import io
    from types import SimpleNamespace

    import pandas as pd
    from rich.console import Console

    from harness.cli.common import console, print_frame
    from harness.cli.plan import cell_table

    cell = SimpleNamespace(
        task="t[x]",
        dataset="d",
        dataset_params={"grid": "[a, b]"},
        method="m",
        method_params={"tag": "[/]"},
        seed=0,
        cell_hash="h",
    )
    out = Console(file=io.StringIO(), width=400)
    out.print(cell_table([cell], "suite [y]", {"h": "done"}))
    frame = pd.DataFrame({"method": ["m[z]"], "seeds": [2], "score [q]": ["[/]"]}).set_index(
        "method"
    )
    with console.capture() as printed:
        print_frame(frame, "summary [w]")
    text = out.file.getvalue() + printed.get()
    for shown in (
        "t[x]",
        "grid=[a, b]",
        "tag=[/]",
        "suite [y]",
        "m[z]",
        "score [q]",
        "summary [w]",
    ):
        assert shown in text, shown


def test_task_type_fields_show_their_whole_description():
    """A field's description in ``harness list --task`` is not cut after its first line."""
    from harness.cli.listing import attribute_docs

    doc = """Data.

Attributes
----------
X_train : numpy.ndarray, shape (n, d)
    Features in the dataset's units. The sensitive
    attribute is not a column.
y : numpy.ndarray

Notes
-----
    Indented prose that is not a field.
"""
    fields = attribute_docs(doc)
    assert fields["X_train"] == (
        "numpy.ndarray, shape (n, d): Features in the dataset's units. The sensitive"
        " attribute is not a column."
    )
    assert fields["y"] == "numpy.ndarray"


@pytest.mark.parametrize(
    ("uri", "said"),
    [
        ("foo://x", "scheme 'foo'"),
        ("sqlite://", "in-memory SQLite database"),
        ("file:///tmp/harness-file-store", "scheme 'file'"),
        ("mlruns", "no database scheme"),
        ("sqlite:///", "names no database file"),
        ("sqlite:///:memory:", "names no database file"),
    ],
)
def test_a_tracking_uri_harness_cannot_keep_results_in_exits_2(toy_env, suite, tmp_path, uri, said):
    result = harness(toy_env, "run", suite(), "--tracking-uri", uri, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert said in result.stderr and "sqlite:///PATH" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_reading_results_never_creates_a_store(toy_env, suite, tmp_path):
    missing = tmp_path / "typo" / "mlflow.db"
    for command in (["results", suite()], ["report", suite()], ["report"]):
        result = harness(toy_env, *command, "--tracking-uri", f"sqlite:///{missing}", cwd=tmp_path)
        assert result.returncode == 2 and "No store at" in result.stderr, result.stderr
    assert not missing.parent.exists()


def test_a_report_dir_that_cannot_be_written_exits_2_before_any_cell(
    toy_env, suite, store, tmp_path
):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for folder in (blocker, blocker / "reports"):
        result = harness(
            toy_env, "run", suite(), "--tracking-uri", store, "--report-dir", str(folder),
            cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 2, result.stdout + result.stderr
        assert "--report-dir" in result.stderr and "Traceback" not in result.stderr
    assert mlflow.MlflowClient(store).get_experiment_by_name("cli-toy") is None


def test_fail_fast_tally_counts_the_cells_it_did_not_run(toy_env, write_suite, store, tmp_path):
    path = write_suite(
        "name: fast\nseeds: [0, 1, 2]\nruns:\n  - task: toy\n    datasets: [noise]\n"
        "    methods: [boom, mean]\n    metrics: [abs-error]\n"
    )
    result = harness(
        toy_env, "run", str(path), "--tracking-uri", store, "-j", "0", "--fail-fast", cwd=tmp_path
    )
    assert result.returncode == 1, result.stdout + result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("0 ok, 0 skipped, 1 failed, 0 timed out, 5 not run in "), last


def test_a_file_the_driver_cannot_write_exits_2_naming_it(monkeypatch, capsys):
    import harness.plugins.registry
    from harness import cli

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "/store/artifacts/1/abc")

    monkeypatch.setattr(harness.plugins.registry, "build_registry", denied)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["list"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "cannot write /store/artifacts/1/abc: Permission denied" in " ".join(err.split())


def test_paths_with_brackets_are_printed_as_they_are(toy_env, write_suite, store, tmp_path):
    """A suite path or a report folder holding '[/]' or '[red]' is no rich markup."""
    folder = tmp_path / "d[" / "]x"
    folder.mkdir(parents=True)
    path = folder / "s[red].yaml"
    path.write_text(Path(write_suite(SUITE.replace("{extra}", "skipper"))).read_text())
    valid = harness(toy_env, "validate", str(path), cwd=tmp_path)
    assert valid.returncode == 0 and "d[/]x/s[red].yaml" in valid.stdout, valid.stderr
    reports = str(tmp_path / "rep[/]y")
    run = harness(toy_env, "run", str(path), "--tracking-uri", store, "--report-dir", reports)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "rep[/]y" in " ".join(run.stdout.split()) and "Traceback" not in run.stderr


# -- each error carries its exit code ------------------------------------------------------


def _exit_of(error: Exception) -> int:
    """The exit code of ``harness boom`` whose command raises ``error``."""
    import click

    from harness import cli as cli_module

    @click.command("boom")
    def boom() -> None:
        raise error

    cli_module.cli.add_command(boom)
    try:
        cli_module.main(["boom"])
    except SystemExit as exit_:
        return int(exit_.code)
    finally:
        cli_module.cli.commands.pop("boom")
    return 0


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (errors.SuiteError("bad suite"), 2),
        (errors.PluginError("bad plugin"), 2),
        (errors.StoreError("no store"), 2),
        (errors.HarnessError("failed"), 1),
    ],
    ids=["suite", "plugin", "store", "other"],
)
def test_each_error_exits_with_the_code_it_carries(error, code):
    """Shown failing with PluginError.exit_code set to 1 (the plugin case exits 1)."""
    assert error.exit_code == code
    assert _exit_of(error) == code
