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


def test_the_fingerprint_covers_every_package_of_the_plugin_and_ignores_editor_files(
    tmp_path, monkeypatch
):
    """A plugin whose distribution installs two packages (``harness_two`` with the entry
    point, ``two_core`` with the code it calls): an edit to either changes the fingerprint
    (before, an edit to ``two_core`` kept old numbers); an editor's swap file, a backup or a
    notebook checkpoint changes nothing (before, each reran the plugin's cells)."""
    import importlib

    from harness.plugins import fingerprint

    site = tmp_path / "site"
    info = site / "harness_two-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: harness-two\nVersion: 0.1.0\n")
    companions = ["harness_two", "two_core", "shared_pkg"]  # what build_registry reads
    (info / "top_level.txt").write_text("\n".join(companions))
    other = site / "sloppy-0.1.0.dist-info"  # another one installs 'shared_pkg' (a 'tests')
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: sloppy\nVersion: 0.1.0\n")
    (other / "top_level.txt").write_text("shared_pkg\n")
    packages = (
        ("harness_two", "from two_core import OFFSET\n"),
        ("two_core", ""),
        ("shared_pkg", ""),
    )
    for package, text in packages:
        (site / package).mkdir()
        (site / package / "__init__.py").write_text(text + "OFFSET = 0.0\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    fingerprint.distribution_packages.cache_clear()  # it read sys.path without site
    try:
        first = fingerprint.code_fingerprint(site / "harness_two", companions)
        for stray in (".__init__.py.swp", "__init__.py~", ".ipynb_checkpoints/x.py", ".DS_Store"):
            path = site / "harness_two" / stray
            path.parent.mkdir(exist_ok=True)
            path.write_text("scratch")
        assert fingerprint.code_fingerprint(site / "harness_two", companions) == first
        (site / "shared_pkg" / "__init__.py").write_text("# another distribution's code\n")
        assert fingerprint.code_fingerprint(site / "harness_two", companions) == first
        (site / "two_core" / "__init__.py").write_text("OFFSET = 1000.0\n")
        assert fingerprint.code_fingerprint(site / "harness_two", companions) != first
    finally:
        fingerprint.distribution_packages.cache_clear()
