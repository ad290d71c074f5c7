"""The root README's verdict table is what the committed evidence gives today: exactly what
``make claims`` prints (``harness claims suites/all.yaml --results ... --format markdown``
over every paper plugin's ``results/<plugin>.parquet``)."""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.plugins.registry import build_registry

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- claims:begin -->", "<!-- claims:end -->"


def _evidence() -> list[Path]:
    files = sorted(ROOT.glob("plugins/*/results/*.parquet"))
    return [f for f in files if f.stem == f.parent.parent.name]  # each plugin's main suite


def test_the_readme_verdict_table_is_what_the_evidence_gives():

    plugins = {p.name for p in ROOT.glob("plugins/*") if (p / "pyproject.toml").is_file()}
    missing = plugins - set(build_registry().plugins)
    if missing:
        pytest.skip(f"plugins not installed here: {', '.join(sorted(missing))}")
    args = [str(Path(sys.executable).parent / "harness"), "claims", "suites/all.yaml"]
    for file in _evidence():
        args += ["--results", str(file.relative_to(ROOT))]
    # a process of its own, every installed plugin on (as `make claims` runs it)
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_DISABLE_PLUGINS"}
    printed = subprocess.run(
        [*args, "--format", "markdown"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    text = (ROOT / "README.md").read_text()
    shown = text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip().splitlines()
    wanted = printed.stdout.strip().splitlines()
    diff = "\n".join(difflib.unified_diff(shown, wanted, "README.md", "make claims", lineterm=""))
    assert shown == wanted, f"run 'make claims' and paste its table into README.md:\n{diff}"


DECIDE_BEGIN, DECIDE_END = "<!-- decide:begin -->", "<!-- decide:end -->"


def test_the_readme_decide_table_is_what_the_committed_pass_gives():
    """The README's table of what the main job's decide pass decided is what ``harness
    report --decided results/decide/claims.json`` prints from the committed pass."""
    saved = ROOT / "results" / "decide" / "claims.json"
    text = (ROOT / "README.md").read_text()
    if not saved.is_file() or DECIDE_BEGIN not in text:
        pytest.skip(
            "no committed decide pass yet (make run, then copy reports/all/claims.json"
            " to results/decide/claims.json and paste the table into the README)"
        )
    printed = subprocess.run(
        [str(Path(sys.executable).parent / "harness"), "report", "--decided",
         str(saved.relative_to(ROOT))], cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    shown = text[text.index(DECIDE_BEGIN) + len(DECIDE_BEGIN) : text.index(DECIDE_END)]
    assert shown.strip().splitlines() == printed.stdout.strip().splitlines(), printed.stdout


def test_make_test_says_the_crash_tracebacks_are_expected_before_they_come():
    """``make test`` echoes the note before pytest starts, and the segfaulting method prints
    its line on stderr before the fatal error's traceback. Fails with the echo after the
    pytest line, or without the method's print (the traceback then comes first)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    recipe = (root / "Makefile").read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip() for line in recipe.splitlines()[1:]]
    note = next(i for i, line in enumerate(lines) if "segfault on purpose" in line)
    assert note < next(i for i, line in enumerate(lines) if "pytest" in line and "echo" not in line)
    crash = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c",
         "import fault_plugin; fault_plugin.Segfault().run(0.0, None, 0)"],
        cwd=root / "tests", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert crash.returncode != 0
    said, fatal = crash.stderr.find("is expected"), crash.stderr.find("\nFatal Python error")
    assert 0 <= said < fatal, crash.stderr[:500]


def test_every_paper_plugin_has_a_science_note_in_the_index_and_every_figure_is_linked():
    """docs/papers/ holds a note per plugin, each in its index; every docs/figures PNG is
    linked from the README or docs/ and the report's first screen is 1,400 px wide. Fails
    on the docs before: 5 notes of 11 plugins, five figures linked from nowhere."""
    import struct
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    papers = root / "docs" / "papers"
    index = (papers / "README.md").read_text()
    for plugin in sorted(p.name for p in (root / "plugins").iterdir() if p.is_dir()):
        assert (papers / f"{plugin}.md").is_file(), plugin
        assert f"]({plugin}.md)" in index and f"plugins/{plugin}/README.md" in index, plugin
    docs = [root / "README.md", *(root / "docs").rglob("*.md")]
    text = "".join(p.read_text() for p in docs)
    for figure in (root / "docs" / "figures").glob("*.png"):
        assert f"figures/{figure.name})" in text, f"{figure.name} is linked from nowhere"
    head = (root / "docs" / "figures" / "report-first-screen.png").read_bytes()[16:24]
    assert struct.unpack(">II", head) == (1400, 900)


def test_the_readme_counts_the_bad_suite_corpus():
    """The README's count of bad-suite cases is the corpus's (it said 93 of 163)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    cases = len(list((root / "tests" / "data" / "bad_suites").glob("*.yaml")))
    readme = (root / "README.md").read_text()
    said = re.search(r"\((\d+) cases in `tests/data/bad_suites/`\)", readme)
    assert said and int(said.group(1)) == cases
