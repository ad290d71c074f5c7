"""The numbers behind a report: the CSV export neutralises formula cells and reads back as it
was."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import call_main


@pytest.fixture(scope="module")
def ran(toy_claims_run):
    """The session's run of the toy claims suite: ``(suite path, store URI)``."""
    return toy_claims_run


def test_csv_export_neutralises_formula_cells_and_reads_them_back_as_they_were(
    ran, registry, capsys, tmp_path
):
    from harness.claims.evidence import read_results, spreadsheet_safe

    suite, store = ran
    call_main(registry, capsys, "results", suite, "--tracking-uri", store,
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
