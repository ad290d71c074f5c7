"""A suite's runs flattened with their includes and expanded into cells: an include that is
not a suite is refused unread; an added method joins only runs that keep a method."""

from __future__ import annotations

from harness.suites.loading import load_suite
from harness.suites.overrides import Overrides

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
