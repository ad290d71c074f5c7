"""A plugin's claims and reports read finished results: editing them reruns no cell, while
editing the code that computes results does."""

from __future__ import annotations

from harness.plugins import fingerprint


def test_claims_and_reports_are_left_out_of_the_fingerprint(tmp_path):
    package = tmp_path / "harness_paper"
    package.mkdir()
    for name in ("__init__.py", "metrics.py", "claims.py", "reports.py"):
        (package / name).write_text(f"# {name}\n")
    first = fingerprint.code_fingerprint(package)
    (package / "claims.py").write_text("# a claim's margin, edited\n")
    (package / "reports.py").write_text("# a plot, edited\n")
    assert fingerprint.code_fingerprint(package) == first
    (package / "metrics.py").write_text("# a metric, edited\n")
    assert fingerprint.code_fingerprint(package) != first
