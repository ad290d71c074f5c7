from __future__ import annotations

import pytest

from harness.errors import SuiteError
from harness.suites.loading import load_suite
from harness.suites.overrides import Overrides
from harness.suites.schema import parse_duration

BASE = """
name: toy-suite
seeds: [0, 1]
timeout: 2m
runs:
  - task: toy
    datasets:
      - noise
      - name: noise
        params: {scale: 2.0}
        grid: {n: [3, 4, 5]}
    methods:
      - name: mean
        grid: {shift: [0.0, 1.0]}
    metrics: [abs-error, stats]
"""


def test_grid_expands_to_cartesian_product(registry, write_suite):
    suite = load_suite(write_suite(BASE), registry)
    # (1 + 3 dataset configs) x 2 method configs x 2 seeds
    assert len(suite.cells) == 16
    assert {c.dataset_params["n"] for c in suite.cells} == {3, 4, 5}
    assert all(c.timeout == 120.0 for c in suite.cells)
    assert len({c.cell_hash for c in suite.cells}) == 16


def test_repetitions_mean_seeds_zero_to_n_minus_one(registry, write_suite):
    path = write_suite(BASE.replace("seeds: [0, 1]", "repetitions: 3"))
    assert sorted({c.seed for c in load_suite(path, registry).cells}) == [0, 1, 2]


def test_dataset_seed_is_shared_by_methods_and_differs_by_seed(registry, write_suite):
    cells = load_suite(write_suite(BASE), registry).cells
    same_data = [c for c in cells if c.dataset_params == cells[0].dataset_params and c.seed == 0]
    assert len({c.dataset_seed for c in same_data}) == 1
    assert len({c.method_seed for c in same_data}) == len(same_data)
    assert len({c.dataset_seed for c in cells if c.dataset_params == cells[0].dataset_params}) == 2


def test_include_adds_the_other_suites_runs(registry, write_suite):
    write_suite(BASE, "child.yaml")
    path = write_suite("name: all\ninclude: [child.yaml]\n", "all.yaml")
    suite = load_suite(path, registry)
    assert suite.name == "all" and len(suite.cells) == 16


def test_include_cycle_is_an_error(registry, write_suite):
    write_suite("name: a\ninclude: [b.yaml]\n", "a.yaml")
    path = write_suite("name: b\ninclude: [a.yaml]\n", "b.yaml")
    with pytest.raises(SuiteError, match="include cycle"):
        load_suite(path, registry)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "grid: {shift: [0.0, 1.0]}",
            "grid: {shift: [0.0, high]}",
            r"suite.yaml: runs\[0\].methods\[0\].grid.shift\[1\]: expected float, got 'high'",
        ),
        (
            "params: {scale: 2.0}",
            "params: {scale: 2.0, width: 3}",
            r"runs\[0\].datasets\[1\].params.width: unknown param 'width'.*Known: n, scale",
        ),
        (
            "- name: mean",
            "- name: mena",
            r"Unknown method 'mena' for task 'toy' \(.*suite.yaml: runs\[0\].methods\[0\]\)"
            r".*Known: boom, .*mean, skipper, sleepy",
        ),
        ("- noise\n", "- nois\n", r"Unknown dataset 'nois'.*Known: noise"),
        (
            "[abs-error, stats]",
            "[abs-error, other-metric]",
            r"Unknown metric 'other-metric' for task 'toy'.*metrics\[1\].*Known: abs-error",
        ),
        ("task: toy", "task: toi", r"Unknown task 'toi' \(.*runs\[0\]\.task\).*Known: other, toy"),
        ("grid: {n: [3, 4, 5]}", "grid: {n: [3, 0]}", r"runs\[0\].datasets\[1\].*n must be >= 1"),
        (
            "grid: {n: [3, 4, 5]}",
            "grid: {n: [3, 1e3]}",
            r"grid.n\[1\]: expected int, got '1e3'. YAML reads 1e3 as a string: write 1000.0 or"
            r" 1000.",
        ),
        (
            "grid: {n: [3, 4, 5]}",
            "grid: {n: [3, yes]}",
            r"grid.n\[1\]: expected int, got True \(YAML reads yes, no, on, off",
        ),
        ("timeout: 2m", "timeout: soon", r"timeout: expected a duration"),
        ("seeds: [0, 1]", "seeds: [0, 1]\ncolour: red", r"suite.yaml: colour: unknown key"),
        (
            "grid: {shift: [0.0, 1.0]}",
            "grid: {kind: [plain, loud]}",
            r"grid.kind\[1\]: expected one of 'plain', 'noisy', got 'loud'",
        ),
    ],
)
def test_invalid_suite_names_file_and_path(registry, write_suite, old, new, message):
    assert old in BASE
    with pytest.raises(SuiteError, match=message):
        load_suite(write_suite(BASE.replace(old, new, 1)), registry)


def test_suite_is_read_with_safe_load_only(registry, write_suite):
    with pytest.raises(SuiteError, match="not valid YAML"):
        load_suite(write_suite("name: !!python/object/apply:os.system ['true']\n"), registry)


def test_missing_include_names_the_including_file(registry, write_suite):
    with pytest.raises(SuiteError, match=r"suite.yaml: include\[0\]: suite file .*nope.yaml"):
        load_suite(write_suite("name: x\ninclude: [nope.yaml]\n"), registry)


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30), ("10m", 600), ("1.5h", 5400), ("250ms", 0.25), (12, 12)]
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


def test_unknown_task_mentions_disabled_plugins(registry, write_suite, monkeypatch):
    monkeypatch.setenv("HARNESS_DISABLE_PLUGINS", "fair-regression")
    with pytest.raises(SuiteError, match=r"HARNESS_DISABLE_PLUGINS blocks: fair-regression"):
        load_suite(write_suite(BASE.replace("task: toy", "task: fair-regression")), registry)


def test_a_configuration_listed_twice_gives_one_cell(registry, write_suite):
    twice = BASE.replace("      - noise\n", "      - noise\n      - noise\n", 1)
    assert len(load_suite(write_suite(twice), registry).cells) == 16


# -- overrides and selection (issues 13 and 14) ---------------------------------------------

TWO_RUNS = """
name: two-runs
seeds: [0, 1]
timeout: 2m
runs:
  - task: toy
    datasets:
      - noise
      - name: noise
        grid: {n: [3, 4]}
    methods:
      - name: mean
        grid: {shift: [0.0, 1.0]}
      - boom
  - task: toy
    seeds: [7]
    datasets: [{name: noise, params: {scale: 3.0}}]
    methods: [skipper]
"""


def _load(registry, write_suite, **overrides):
    return load_suite(write_suite(TWO_RUNS), registry, Overrides(**overrides))


def _count(cells, **where):
    return sum(
        all(
            getattr(c, k) == v if not isinstance(v, dict) else v.items() <= c.method_params.items()
            for k, v in where.items()
        )
        for c in cells
    )


def test_run_level_seeds_override_the_files(registry, write_suite):
    cells = _load(registry, write_suite).cells
    assert len(cells) == 3 * 3 * 2 + 1  # run 0: 3 datasets x 3 methods x 2 seeds; run 1: 1
    assert {c.seed for c in cells if c.method == "skipper"} == {7}


def test_seeds_repetitions_and_timeout_options_apply_to_every_run(registry, write_suite):
    suite = _load(registry, write_suite, seeds="3,4,5", timeout="20m")
    assert {c.seed for c in suite.cells} == {3, 4, 5} and len(suite.cells) == 30
    assert {c.timeout for c in suite.cells} == {1200.0}
    assert suite.expanded["overrides"] == ["--seeds 3,4,5", "--timeout 20m"]
    assert [r["seeds"] for r in suite.expanded["runs"]] == [[3, 4, 5], [3, 4, 5]]
    suite = _load(registry, write_suite, repetitions=2, timeout="none")
    assert {c.seed for c in suite.cells} == {0, 1} and {c.timeout for c in suite.cells} == {None}


def test_set_changes_one_entry_or_every_entry_with_the_param(registry, write_suite):
    one = _load(registry, write_suite, set=("runs[0].datasets[0].params.n=500",)).cells
    assert {c.dataset_params["n"] for c in one} == {500, 3, 4, 5}  # run 1 keeps its default 5
    every = _load(registry, write_suite, set=("dataset.n=500",)).cells
    assert {c.dataset_params["n"] for c in every} == {500}
    assert len(every) == 1 * 3 * 2 + 1  # the grid over n became one value, so fewer cells


def test_set_grid_and_per_run_seeds(registry, write_suite):
    suite = _load(
        registry,
        write_suite,
        set=("runs[0].methods[0].grid.shift=[5, 6, 7]", "runs[1].seeds=[1, 2]", "timeout=90s"),
    )
    assert {c.method_params["shift"] for c in suite.cells if c.method == "mean"} == {5, 6, 7}
    assert {c.seed for c in suite.cells if c.method == "skipper"} == {1, 2}
    assert {c.timeout for c in suite.cells} == {90.0}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"seeds": "0,x"}, r"^--seeds 0,x: expected whole numbers separated by commas"),
        ({"seeds": "0,-1"}, r"^--seeds 0,-1: seeds\[1\]: a seed is a whole number"),
        ({"seeds": "1", "repetitions": 2}, r"^--seeds 1 --repetitions 2: give one, not both"),
        ({"timeout": "0"}, r"^--timeout 0: a timeout is a positive, finite duration"),
        ({"timeout": "soon"}, r"^--timeout soon: expected a duration"),
        ({"set": ("dataset.n=abc",)}, r"^--set dataset.n=abc: expected int, got 'abc'"),
        ({"set": ("dataset.n=0",)}, r"runs\[0\].datasets\[0\]: .*n must be >= 1.*\(after --set"),
        ({"set": ("dataset.width=3",)}, r"^--set dataset.width=3: no dataset .* param 'width'"),
        ({"set": ("runs[9].seeds=[1]",)}, r"^--set runs\[9\].seeds=\[1\]: the suite has 2 run"),
        ({"set": ("runs[0].datasets[5].params.n=1",)}, r"runs\[0\] has 2 datasets"),
        ({"set": ("runs[1].methods[0].params.x=1",)}, r"^--set .*: unknown param 'x' of 'skipper'"),
        ({"set": ("colour=red",)}, r"^--set colour=red: unknown key 'colour'. Use runs\[i\]"),
        ({"set": ("dataset.n",)}, r"^--set dataset.n: expected KEY=VALUE"),
        ({"set": ("runs[0].seeds=[-1]",)}, r"^--set runs\[0\].seeds=\[-1\]: seeds\[0\]"),
        ({"set": ("dataset.n=[1",)}, r"^--set dataset.n=\[1: line \d+, column \d+: not valid YAML"),
        ({"methods": ("mena",)}, r"^--method mena: no method 'mena' in the suite. Known: boom,"),
        ({"datasets": ("noise[n=9]",)}, r"^--dataset noise\[n=9\]: no configuration .*n=3"),
        ({"datasets": ("noise[m=9]",)}, r"^--dataset noise\[m=9\]: 'noise' has no param 'm'"),
        ({"methods": ("mean[shift=hi]",)}, r"^--method mean\[shift=hi\]: shift: expected float"),
        ({"methods": ("Mean!",)}, r"^--method Mean!: expected NAME or NAME\[param=value"),
        ({"add_methods": ("nope",)}, r"^--add-method nope: no method 'nope' .* Known: boom,"),
        ({"add_methods": ("mean[shift=x]",)}, r"^--add-method mean\[shift=x\]: expected float"),
        ({"max_cells": 18}, r"runs\[0\]: the suite has 19 cells, above the cap of 18"),
    ],
)
def test_bad_overrides_name_the_option(registry, write_suite, overrides, message):
    with pytest.raises(SuiteError, match=message):
        _load(registry, write_suite, **overrides)


def test_select_datasets_and_methods_by_name_and_params(registry, write_suite):
    cells = _load(registry, write_suite, methods=("mean",)).cells
    assert {c.method for c in cells} == {"mean"} and len(cells) == 3 * 2 * 2  # run 1 dropped
    cells = _load(registry, write_suite, methods=("mean[shift=1]", "boom")).cells
    assert {(c.method, c.method_params.get("shift")) for c in cells} == {
        ("mean", 1.0),
        ("boom", None),
    }
    suite = _load(registry, write_suite, datasets=("noise[n=4, scale=1.0]",))
    assert {c.dataset_params["n"] for c in suite.cells} == {4}
    assert suite.expanded["overrides"] == ["--dataset noise[n=4, scale=1.0]"]


def test_selection_that_leaves_nothing_is_an_error(registry, write_suite):
    # skipper is only in run 1, whose one dataset configuration has n=5
    with pytest.raises(SuiteError, match=r"noise\[n=4\]: no configuration .*\(it has: n=5\)"):
        _load(registry, write_suite, datasets=("noise[n=4]",), methods=("skipper",))


def test_add_method_adds_to_every_run_of_its_task(registry, write_suite):
    suite = _load(registry, write_suite, add_methods=("mean[shift=2.5, kind=noisy]",))
    added = [c for c in suite.cells if c.method_params.get("shift") == 2.5]
    assert {c.method_params["kind"] for c in added} == {"noisy"}
    assert len(added) == 3 * 2 + 1  # every dataset config and seed of both runs
    kept = _load(registry, write_suite, add_methods=("sleepy",), methods=("boom",)).cells
    assert {c.method for c in kept} == {"boom", "sleepy"}  # an added method survives selection
    added = {"kind": "noisy", "shift": 2.5}
    assert all(r["methods"][-1] == ["mean", added] for r in suite.expanded["runs"])


def test_cells_are_counted_before_they_are_expanded(registry, write_suite, monkeypatch):
    import harness.suites.expansion as module

    built = []
    monkeypatch.setattr(module, "Cell", lambda *a, **k: built.append(a))
    huge = TWO_RUNS.replace("seeds: [0, 1]", "repetitions: 1000000000")
    with pytest.raises(SuiteError, match=r"the suite has 9,000,000,001 cells, above the cap"):
        load_suite(write_suite(huge), registry)
    assert built == []


@pytest.mark.slow
def test_run_logs_the_effective_suite_on_the_parent_run(toy_env, write_suite, store, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    import mlflow
    import yaml

    path = write_suite(TWO_RUNS)
    harness = str(Path(sys.executable).parent / "harness")
    options = ["--seeds", "3", "--set", "dataset.n=4", "--method", "mean[shift=1]"]
    options += ["--add-method", "skipper", "--timeout", "20m"]
    result = subprocess.run(
        [harness, "run", str(path), *options, "--tracking-uri", store],
        env=toy_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    client = mlflow.MlflowClient(store)
    experiment = client.get_experiment_by_name("two-runs").experiment_id
    (parent,) = client.search_runs([experiment], "tags.`harness.kind` = 'suite'")
    logged = yaml.safe_load(
        Path(client.download_artifacts(parent.info.run_id, "suite.yaml")).read_text()
    )
    assert logged["overrides"] == [
        "--seeds 3",
        "--timeout 20m",
        "--set dataset.n=4",
        "--method mean[shift=1]",
        "--add-method skipper",
    ]
    first = logged["runs"][0]
    assert first["seeds"] == [3] and first["timeout"] == 1200.0
    assert first["datasets"] == [["noise", {"n": 4, "scale": 1.0}]]
    assert first["methods"] == [["mean", {"kind": "plain", "shift": 1.0}], ["skipper", {}]]
    cells = client.search_runs([experiment], "tags.`harness.kind` = 'cell'")
    # run 0: 1 dataset config (n=4 everywhere) x (mean shift=1, skipper); run 1 is dropped:
    # --method removed its one method, and an added method joins only runs that keep one
    # (issue 30, item 8; before, run 1 ran skipper alone)
    assert len(cells) == 2
    bad = subprocess.run(
        [harness, "validate", str(path), "--set", "dataset.n=abc"],
        env=toy_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "--set dataset.n=abc: expected int, got 'abc'." in bad.stderr


def test_include_chains_are_bounded(registry, write_suite):
    from harness.suites.expansion import MAX_INCLUDE_DEPTH

    for i in range(MAX_INCLUDE_DEPTH + 3):
        write_suite(f"name: chain-{i}\ninclude: [chain-{i + 1}.yaml]\n", f"chain-{i}.yaml")
    write_suite(BASE, f"chain-{MAX_INCLUDE_DEPTH + 3}.yaml")
    with pytest.raises(
        SuiteError, match=rf"include\[0\]: includes nested more than {MAX_INCLUDE_DEPTH}"
    ):
        load_suite(write_suite("name: top\ninclude: [chain-0.yaml]\n", "top.yaml"), registry)
    ok = write_suite("name: top\ninclude: [chain-8.yaml]\n", "ok.yaml")
    assert len(load_suite(ok, registry).cells) == 16


def test_a_yaml_boolean_for_an_optional_number_is_refused():
    from dataclasses import dataclass

    from harness.components import validate_params
    from harness.errors import ParamsError

    class Component:
        name = "c"

        @dataclass
        class Params:
            cap: int | None = None
            flag: bool | int = 0

    with pytest.raises(ParamsError, match=r"cap: expected .*got True \(YAML reads yes"):
        validate_params(Component, {"cap": True})
    assert validate_params(Component, {"flag": True}).flag is True  # a bool is allowed here


def test_a_logged_suite_reads_back_to_the_same_cells(registry, write_suite):
    import yaml

    from harness.suites.loading import load_logged_suite

    write_suite(BASE.replace("toy-suite", "child"), "child.yaml")
    run = "  - {task: toy, datasets: [noise], methods: [boom]}\n"
    top = f"name: top\ninclude: [child.yaml]\nruns:\n{run}"
    suite = load_suite(write_suite(top, "top.yaml"), registry, Overrides(seeds="3,4"))
    text = yaml.safe_dump(suite.expanded, sort_keys=False)  # what harness run logs
    back = load_logged_suite(text, "suite.yaml of run 1", registry)
    assert [c.cell_hash for c in back.cells] == [c.cell_hash for c in suite.cells]
    assert [c.experiment for c in back.cells] == [c.experiment for c in suite.cells]
    assert {c.experiment for c in back.cells} == {"child", "top"}
    assert back.name == "top" and back.expanded == suite.expanded


def test_a_logged_suite_that_no_longer_loads_names_its_source_and_place(registry):
    from harness.suites.loading import load_logged_suite

    run = "{task: toy, seeds: [0], datasets: [[noise, {}]], methods: [[gone, {}]]}"
    text = f"name: s\nruns:\n- {run}\n"
    with pytest.raises(SuiteError, match=r"suite.yaml of run 1: runs\[0\].methods\[0\]"):
        load_logged_suite(text, "suite.yaml of run 1", registry)
    with pytest.raises(
        SuiteError, match=r"run 1: runs\[0\].extra: unknown key 'extra'. Allowed here: file, run"
    ):
        load_logged_suite(text.replace("seeds", "extra: 1, seeds"), "suite.yaml of run 1", registry)


def test_minus_zero_and_zero_are_one_configuration(registry, write_suite):
    """Before: ``-0.0`` and ``0.0`` were two configurations with two data seeds (JSON keeps
    the sign), so the same experiment ran twice on different data."""
    grid = BASE.replace("grid: {shift: [0.0, 1.0]}", "grid: {shift: [0.0, -0.0]}")
    suite = load_suite(write_suite(grid), registry)
    assert {c.method_params["shift"] for c in suite.cells} == {0.0}
    assert len(suite.cells) == 8  # (1 + 3) datasets x 1 method configuration x 2 seeds
    text = "name: z\nruns:\n  - {task: toy, datasets: [%s], methods: [%s]}\n"
    minus = "{name: noise, params: {scale: -0.0}}", "{name: mean, params: {shift: -0.0}}"
    plus = "{name: noise, params: {scale: 0.0}}", "{name: mean, params: {shift: 0}}"
    (a,) = load_suite(write_suite(text % minus, "minus.yaml"), registry).cells
    (b,) = load_suite(write_suite(text % plus, "plus.yaml"), registry).cells
    assert (a.cell_hash, a.config_hash, a.data_key) == (b.cell_hash, b.config_hash, b.data_key)
    assert (a.dataset_seed, a.method_seed) == (b.dataset_seed, b.method_seed)
    assert a.params() == b.params() and a.params()["method.shift"] == "0.0"
    assert str(a.dataset_params["scale"]) == "0.0"  # the dataset is given 0.0, not -0.0


def _labelled_registry():
    from dataclasses import dataclass

    import toy_plugin

    from harness import Method, hookimpl
    from harness.plugins.registry import build_registry

    class Labelled(Method):
        """Returns 0 whatever its label (a method with a free-text param)."""

        name, task = "labelled", "toy"

        @dataclass
        class Params:
            label: str = ""

        def run(self, data, params, seed):
            return 0.0

    class Plugin:
        @hookimpl
        def harness_methods(self):
            return [Labelled]

    return build_registry({"toy": toy_plugin, "labelled": Plugin()}, entry_points=False)


def test_long_string_params_are_hashed_not_cut(write_suite):
    """Before: params were cut at MLflow's 6,000 characters when logged, so two
    configurations differing after that logged the same value and merged in the tables."""
    from harness.suites.identity import PARAM_VALUE_MAX

    registry = _labelled_registry()
    head = "x" * 7000
    run = "  - {task: toy, datasets: [noise], methods: [%s], metrics: [abs-error]}\n"
    methods = ", ".join(f"{{name: labelled, params: {{label: {head + end}}}}}" for end in "ab")
    suite = load_suite(write_suite("name: long\nruns:\n" + run % methods), registry)
    first, second = suite.cells
    assert first.cell_hash != second.cell_hash
    logged = [c.params()["method.label"] for c in suite.cells]
    assert logged[0] != logged[1]  # differ in the hash of the whole value they end with
    assert all(len(v) <= PARAM_VALUE_MAX and v.startswith("x" * 5000) for v in logged)
    assert "(7,001 characters, sha256 " in logged[0]
    kept = [m[1]["label"] for m in suite.expanded["runs"][0]["methods"]]
    assert kept == [head + "a", head + "b"]  # the full values, in the logged suite.yaml
    assert first.params()["dataset.n"] == "5"  # a short value is logged as it is


def test_long_string_params_stay_two_configurations_in_the_store(write_suite, store):
    """End to end: two runs whose label differs after 7,000 characters are two rows of
    the results table (before: both logged the same 6,000-character head)."""
    from harness.runs.runner import run_suite
    from harness.store.tracking import Tracker

    registry = _labelled_registry()
    methods = ", ".join(f"{{name: labelled, params: {{label: {'x' * 7000 + e}}}}}" for e in "ab")
    run = f"  - {{task: toy, datasets: [noise], methods: [{methods}], metrics: [abs-error]}}\n"
    suite = load_suite(write_suite("name: long\nruns:\n" + run), registry)
    outcome = run_suite(suite, registry, Tracker(store))
    rows = Tracker(store).results(outcome.experiment_id)
    assert len(rows) == 2 and rows["method.label"].nunique() == 2
    assert set(rows["method.label"]) == {c.params()["method.label"] for c in suite.cells}
