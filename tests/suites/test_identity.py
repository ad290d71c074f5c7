"""A cell's identity (the resume key): a changed metric param or an edited plugin reruns the
cells it touches, and only those."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

from fake_plugins import install_fake_plugin
from helpers import HARNESS, TWO_SEEDS, run_tracked

from harness.suites.loading import load_suite

EXTRA = '''
"""A second toy plugin: one method for the toy task (its code is edited by the test)."""
from harness import Method, hookimpl


class Half(Method):
    """Half the sample mean.

    Source: test fixture.
    """

    name = "half"
    task = "toy"

    def run(self, data, params, seed) -> float:
        return float(data.y.mean()) / 2  # EDIT-ME


@hookimpl
def harness_methods():
    return [Half]
'''


def test_changing_a_metric_param_reruns_the_cells_and_recomputes_it(registry, write_suite, store):
    tracker, first, _ = run_tracked(registry, write_suite(TWO_SEEDS.replace("SCALE", "1.0")), store)
    path = write_suite(TWO_SEEDS.replace("SCALE", "1000.0"))
    tracker, second, notices = run_tracked(registry, path, store)
    assert second.ran == first.ran == 4  # before the fix: 0 ran, the old values stayed
    assert any("4 cell(s): metrics changed" in line for line in notices)
    suite = load_suite(path, registry)
    rows = tracker.results(first.experiment_id, [c.cell_hash for c in suite.cells])
    assert (rows["scaled"] == 1000.0 * rows["abs-error"]).all()


def test_editing_a_plugin_reruns_only_the_cells_that_use_it(toy_env, tmp_path, store):
    """A real `harness run` with two plugins installed in a temporary folder; the second
    plugin's source is edited between runs."""
    site = Path(toy_env["PYTHONPATH"].split(os.pathsep)[0])
    install_fake_plugin(site, "toy-extra", "toy_extra", EXTRA)
    suite = tmp_path / "two.yaml"
    suite.write_text(
        textwrap.dedent("""
        name: two-plugins
        seeds: [0, 1, 2]
        runs:
          - task: toy
            datasets: [{name: noise, params: {n: 4}}]
            methods: [mean, half]
            metrics: [abs-error]
        """)
    )
    cmd = [HARNESS, "run", str(suite), "--tracking-uri", store, "--report-dir", str(tmp_path)]
    first = subprocess.run(cmd, env=toy_env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "6 to run" in first.stdout
    again = subprocess.run(cmd, env=toy_env, capture_output=True, text=True, timeout=300)
    assert "6 already finished, 0 to run" in again.stdout
    (site / "toy_extra.py").write_text(EXTRA.replace("/ 2  # EDIT-ME", "/ 4  # fixed"))
    dry = subprocess.run(
        [*cmd, "--dry-run"], env=toy_env, capture_output=True, text=True, timeout=300
    )
    assert "6 cells: 3 done, 3 to run; 3 cell(s): code of plugin toy-extra changed" in dry.stdout
    edited = subprocess.run(cmd, env=toy_env, capture_output=True, text=True, timeout=300)
    assert edited.returncode == 0, edited.stdout + edited.stderr
    # before the fix: "6 already finished, 0 to run" with the old numbers
    assert "3 already finished, 3 to run" in edited.stdout, edited.stdout
    assert "3 cell(s): code of plugin toy-extra changed" in edited.stdout
