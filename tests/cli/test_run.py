"""``harness run``'s checks before the first cell: a report folder that cannot be written is
refused before anything runs."""

from __future__ import annotations

from helpers import SUITE, run_args


def test_a_report_dir_that_is_a_dangling_link_is_refused_before_the_first_cell(
    harness_main, tmp_path
):
    """Before: every cell ran, then the report failed (FileExistsError)."""
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE)
    (tmp_path / "reports").symlink_to(tmp_path / "gone")
    store = tmp_path / "store" / "mlflow.db"
    code, out, err = harness_main(*run_args(suite, f"sqlite:///{store}", tmp_path / "reports"))
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
    code, out, err = harness_main(*run_args(suite, f"sqlite:///{store}", tmp_path / "reports"))
    assert code == 2, (code, out, err)
    assert "(the suite's report folder) is a file, not a folder" in err
    assert not store.parent.exists()
