"""The numbers behind a report: the CSV export neutralises formula cells and reads back as it
was."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
import toy_plugin

from harness import cli
from harness.plugins.registry import build_registry

SUITE = """
name: toy-claims
description: "A toy suite"
seeds: [0, 1, 2, 3, 4, 5]
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 40}}]
    methods:
      - {name: mean, grid: {shift: [0.0, 1.0]}}
      - {name: mean, params: {kind: noisy}}
    metrics: [abs-error]
"""


def _call(registry, capsys, *args: str) -> tuple[int, str, str]:
    """``harness ARGS`` in this process: ``(exit code, stdout, stderr)``."""
    code = 0
    try:
        cli.main(args, registry=registry)
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def ran(tmp_path_factory, _empty_store):
    """The toy claims suite run once, in this process: ``(suite path, store URI)``."""
    folder = tmp_path_factory.mktemp("claims-run")
    shutil.copy(_empty_store, folder / "mlflow.db")
    (folder / "suite.yaml").write_text(SUITE)
    store = f"sqlite:///{folder}/mlflow.db"
    registry = build_registry({"toy": toy_plugin}, entry_points=False)
    args = ["run", str(folder / "suite.yaml"), "-j", "0", "--tracking-uri", store]
    try:
        cli.main([*args, "--report-dir", str(folder / "reports")], registry=registry)
    except SystemExit as exc:
        assert exc.code == 0
    return str(folder / "suite.yaml"), store


def test_csv_export_neutralises_formula_cells_and_reads_them_back_as_they_were(
    ran, registry, capsys, tmp_path
):
    from harness.claims.evidence import read_results, spreadsheet_safe

    suite, store = ran
    _call(registry, capsys, "results", suite, "--tracking-uri", store,
          "--format", "parquet", "--out", str(tmp_path / "e.parquet"))  # fmt: skip
    frame = pd.read_parquet(tmp_path / "e.parquet")
    evil = ['=HYPERLINK("http://x","y")', "-2+3+cmd|' /C calc'!A0", "@SUM(A1)", "+1+1",
            "\t=1", "'=quoted", "''x", "-0.5", "plain"]  # fmt: skip
    frame["reason"] = (evil * len(frame))[: len(frame)]
    spreadsheet_safe(frame).to_csv(tmp_path / "e.csv", index=False)
    raw = pd.read_csv(tmp_path / "e.csv", dtype=str, keep_default_na=False)["reason"]
    assert raw[:5].str.startswith("'").all()
    assert list(raw[5:9]) == ["''=quoted", "'''x", "-0.5", "plain"]
    assert list(read_results(tmp_path / "e.csv")["reason"]) == list(frame["reason"])
