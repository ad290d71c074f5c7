from __future__ import annotations

import pytest

from harness.errors import SuiteError
from harness.suite import load_suite, parse_duration

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
