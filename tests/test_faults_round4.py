"""Issue 57: every text from a plugin, a suite or a store is shown, never obeyed (terminal,
report.md, names); exports a spreadsheet opens safely and that read back whole; no silent
success (--strict-claims with no claim, new-plugin's long name, a SQLite URI's query)."""

from __future__ import annotations

import io
import json
import shutil
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import toy_plugin

import harness
from harness import cli
from harness.registry import build_registry

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil"
"""An OSC title change, a clear screen, a C1 CSI and a right-to-left override."""

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
    folder = tmp_path_factory.mktemp("round4")
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


# -- shown, never obeyed ----------------------------------------------------------------


def test_list_prints_a_claims_escape_sequences_and_markup_as_text(registry, monkeypatch, capsys):
    from harness.cli.common import console

    claim = registry.get("claim", "toy", "shift-raises-error").cls
    monkeypatch.setattr(claim, "statement", f"Holds [bold]x[/] {ESCAPES}")
    monkeypatch.setattr(console, "width", 600)
    code, out, _ = _call(registry, capsys, "list")
    assert code == 0
    assert not any(c in out for c in "\x1b\x07\x9b\u202e")
    assert "Holds [bold]x[/] \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202eevil" in out


def test_an_error_holding_escape_sequences_is_printed_escaped(registry, monkeypatch, capsys):
    def fail(*args, **kwargs):
        raise harness.errors.HarnessError(f"plugin says {ESCAPES}")

    monkeypatch.setattr("harness.cli.listing.get_registry", fail)
    code, out, err = _call(registry, capsys, "list")
    assert code == 1
    assert not any(c in out + err for c in "\x1b\x07\x9b\u202e")
    assert "plugin says \\x1b]0;pwned" in err


def test_the_console_escapes_what_a_caller_printed_raw_and_keeps_its_own_styles():
    from harness.cli.common import ShownConsole

    buffer = io.StringIO()
    shown = ShownConsole(file=buffer, force_terminal=True, color_system="standard")
    shown.print(f"[red]{ESCAPES}[/]", highlight=False)
    text = buffer.getvalue()
    assert "\\x1b]0;pwned" in text and "\\u202eevil" in text and "\u202e" not in text
    assert text.count("\x1b") == 2  # rich's own colour on and off


def test_a_traceback_holding_a_code_fence_stays_inside_report_mds_fence():
    from markdown_it import MarkdownIt

    from harness.render import Document, render
    from harness.verdicts import Status, Verdict

    attack = "```\n# Injected\n[click](javascript:alert(1))\n<img src=x onerror=alert(1)>\n````"
    verdict = Verdict(
        claim="broken-claim", task="toy", source="s", statement="s", hypothesis="> 0",
        unit="seed", status=Status.ERROR, reason=f"Traceback ...\nValueError: {attack}",
    )  # fmt: skip
    md, _ = render(Document(f"toy {attack}", "1 ok", "", verdicts=[verdict]))
    tokens = MarkdownIt("commonmark").parse(md)
    every = [t for block in tokens for t in [block, *(block.children or [])]]
    assert not [t for t in every if t.type in ("html_block", "html_inline", "link_open")]
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert not [h for h in headings if h.startswith("Injected")], headings
    fences = [t for t in tokens if t.type == "fence"]
    assert attack in fences[0].content


def test_markdown_text_never_starts_a_heading_a_list_or_a_link():
    from harness.render import fenced, markdown_cell, markdown_text

    assert markdown_text("# title") == "\\# title"
    assert markdown_text("1. first") == "1\\. first"
    assert markdown_text("- item\n[x](javascript:y)") == "\\- item \\[x\\](javascript:y)"
    assert markdown_cell("a|b <b>") == "a\\|b \\<b\\>"
    assert fenced("x ``` y ````z").startswith("`````text\n")


def test_a_component_name_ending_in_a_newline_is_not_kebab_case():
    class Shadow:
        @harness.hookimpl
        def harness_methods(self):
            class Mean(toy_plugin.Mean):
                name = "mean-x\n"

            return [Mean]

    built = build_registry({"toy": toy_plugin, "shadow": Shadow()}, entry_points=False)
    assert "lower-case words joined by '-'" in built.broken["shadow"]
    assert "mean-x\\n" in built.broken["shadow"]


# -- exports ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
@pytest.mark.parametrize("to_file", [True, False], ids=["out", "stdout"])
def test_every_export_format_ends_0_and_reads_back_to_the_stores_verdicts(
    ran, registry, capsys, tmp_path, fmt, to_file
):
    suite, store = ran
    out = tmp_path / f"export.{fmt}"
    where = ["--out", str(out)] if to_file else []
    code, text, err = _call(registry, capsys, "results", suite, "--tracking-uri", store,
                            "--format", fmt, *where)  # fmt: skip
    if fmt == "parquet" and not to_file:
        assert code == 2 and "--out FILE" in err
        return
    assert code == 0 and "Traceback" not in err, err
    if not to_file:
        out.write_text(text)
    assert "18 cells" in err if to_file else text
    _, stored, _ = _call(registry, capsys, "claims", suite, "--tracking-uri", store,
                         "--format", "json")  # fmt: skip
    code, read, err = _call(registry, capsys, "claims", suite, "--results", str(out),
                            "--format", "json")  # fmt: skip
    assert code == 0, err
    assert _outcomes(json.loads(read)) == _outcomes(json.loads(stored))


def _outcomes(verdicts: list[dict]) -> dict:
    """Each claim's status and estimate (an error's traceback names other lines)."""
    return {v["claim"]: (v["status"], v["estimate"]) for v in verdicts}


def test_csv_export_neutralises_formula_cells_and_reads_them_back_as_they_were(
    ran, registry, capsys, tmp_path
):
    from harness.evidence import read_results, spreadsheet_safe

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


def test_the_csv_export_of_the_cli_is_spreadsheet_safe(ran, registry, capsys, monkeypatch):
    suite, store = ran

    real = pd.DataFrame.to_csv

    def with_formula(self, *args, **kwargs):
        assert self["task"].iloc[0] == "'=toy"
        return real(self, *args, **kwargs)

    from harness import summary

    tidy = summary.tidy_results
    monkeypatch.setattr(summary, "tidy_results", lambda rows: tidy(rows).assign(task="=toy"))
    monkeypatch.setattr(pd.DataFrame, "to_csv", with_formula)
    code, _, err = _call(registry, capsys, "results", suite, "--tracking-uri", store)
    assert code == 0, err


def test_float_seeds_in_an_evidence_file_are_refused_in_one_line(ran, registry, capsys, tmp_path):
    suite, store = ran
    out = tmp_path / "e.json"
    _call(registry, capsys, "results", suite, "--tracking-uri", store, "--format", "json",
          "--out", str(out))  # fmt: skip
    export = json.loads(out.read_text())
    export["rows"][2]["seed"] = 1.5
    out.write_text(json.dumps(export))
    code, _, err = _call(registry, capsys, "claims", suite, "--results", str(out))
    assert code == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert "row 3, column seed: expected a whole number" in err and "1.5" in err


def test_an_evidence_file_over_the_size_cap_is_refused_before_it_is_read(
    ran, registry, capsys, tmp_path, monkeypatch
):
    suite, _ = ran
    out = tmp_path / "big.parquet"
    out.write_bytes(b"\0" * 4096)
    monkeypatch.setattr("harness.evidence.RESULTS_MAX_BYTES", 1024)
    monkeypatch.setattr(pd, "read_parquet", lambda *a, **k: pytest.fail("read"))
    code, _, err = _call(registry, capsys, "claims", suite, "--results", str(out))
    assert code == 2 and "over the 0 GiB an export may hold" in err.replace("\n", " ")


# -- no silent success ------------------------------------------------------------------


def test_strict_claims_exits_3_when_a_suites_task_has_no_claim_evaluated(ran, registry, capsys):
    suite, store = ran
    registry.entries["claim"].clear()  # the paper's claims vanished
    code, _, err = _call(registry, capsys, "claims", suite, "--tracking-uri", store)
    assert code == 0
    code, _, err = _call(registry, capsys, "claims", suite, "--tracking-uri", store,
                         "--strict-claims")  # fmt: skip
    assert code == 3
    assert "--strict-claims: no claim of task toy was evaluated" in " ".join(err.split())


def test_new_plugin_with_a_300_character_name_exits_2_in_one_line(registry, capsys, tmp_path):
    code, _, err = _call(registry, capsys, "new-plugin", "a" * 300, "--dir", str(tmp_path))
    assert code == 2 and "Traceback" not in err
    assert "is 300 characters; use at most 100" in " ".join(err.split())
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("tail", ["?mode=ro", "#main"])
def test_a_sqlite_uri_with_a_query_is_refused_and_creates_no_file(
    registry, capsys, tmp_path, monkeypatch, write_suite, tail
):
    monkeypatch.chdir(tmp_path)
    suite = write_suite(textwrap.dedent(SUITE))
    code, _, err = _call(registry, capsys, "run", str(suite), "--tracking-uri",
                         f"sqlite:///q.db{tail}")  # fmt: skip
    assert code == 2
    assert "does not read a SQLite URI's query or fragment" in " ".join(err.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite.yaml"]


# -- a new user's first hour --------------------------------------------------------------


def test_dry_run_counts_an_added_methods_cells_apart(ran, registry, capsys, monkeypatch):
    from harness.cli.common import console

    suite, store = ran
    monkeypatch.setattr(console, "width", 200)
    code, out, _ = _call(registry, capsys, "run", suite, "--dry-run", "--add-method", "skipper",
                         "--tracking-uri", store)  # fmt: skip
    assert code == 0
    rows = {line.split("│")[2].strip(): line for line in out.splitlines() if line.count("│") > 4}
    assert "6: never run" in rows["skipper"] and " 18 " in rows["mean"]


def test_a_monte_carlo_spread_is_never_ranked():
    from harness.summary import direction

    class Power(toy_plugin.Stats):
        name = "power"
        higher_is_better = True

    class Spread:
        @harness.hookimpl
        def harness_metrics(self):
            return [Power]

    built = build_registry({"toy": toy_plugin, "spread": Spread()}, entry_points=False)
    assert direction("power.rate", "toy", built) is True
    assert direction("power.mc_sd", "toy", built) is None
    assert direction("power.se", "toy", built) is None


@pytest.mark.parametrize("direct", ["1", "0"], ids=["direct-sqlite", "mlflow"])
def test_experiments_describe_their_suite_and_parent_runs_their_verdicts(
    registry, capsys, tmp_path, monkeypatch, _empty_store, direct
):
    """Each experiment's description (``mlflow.note.content``) is its suite file's, an
    included suite's too, shown as text; the parent run's is the claims table. Fails
    without the fix: no experiment or run had the tag (descriptions were empty)."""
    monkeypatch.setenv("HARNESS_DIRECT_SQLITE", direct)
    shutil.copy(_empty_store, tmp_path / "mlflow.db")
    store = f"sqlite:///{tmp_path}/mlflow.db"
    (tmp_path / "inner.yaml").write_text(SUITE)
    (tmp_path / "top.yaml").write_text(
        "name: toy-top\ndescription: 'All [toy](javascript:alert(1)) suites'\n"
        "include: [inner.yaml]\n"
    )
    code, _, err = _call(registry, capsys, "run", str(tmp_path / "top.yaml"), "-j", "0",
                         "--tracking-uri", store, "--report-dir", str(tmp_path / "r"))  # fmt: skip
    assert code == 0, err
    import mlflow

    client = mlflow.MlflowClient(store)
    inner = client.get_experiment_by_name("toy-claims")
    assert inner.tags["mlflow.note.content"] == "A toy suite"
    (parent,) = client.search_runs(
        [inner.experiment_id], "tags.`harness.kind` = 'suite'", max_results=5
    )
    note = parent.data.tags["mlflow.note.content"]
    assert note.startswith("| claim | status | estimate [interval] |\n| --- | --- | --- |\n")
    stored = json.loads((tmp_path / "r" / "toy-top" / "claims.json").read_text())
    assert len(stored) >= 2
    for verdict in stored:
        row = next(line for line in note.splitlines() if line.startswith(f"| {verdict['claim']}"))
        assert f"| {verdict['status']}" in row
    assert "claims.md" in {a.path.split("/")[-1] for a in client.list_artifacts(
        parent.info.run_id, "report")}  # fmt: skip
    assert client.get_experiment_by_name("toy-top") is None  # top.yaml only includes


def test_a_long_claims_table_is_cut_to_what_mlflow_accepts_on_whole_lines():
    from harness.layout import NOTE_LIMIT, note

    table = "\n".join(f"| claim-{i} | reproduced | 1.0 [0.9, 1.1] |" for i in range(400))
    cut = note(table)
    assert len(cut) <= NOTE_LIMIT and cut.endswith("see the report's claims.md")
    assert all(line.endswith("|") for line in cut.splitlines()[:-2])


def test_a_suite_description_is_shown_in_the_ui_as_text():
    from harness.layout import plain

    assert plain("[x](javascript:1) <img> a|b") == r"\[x\](javascript:1) \<img\> a\|b"


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


EVIDENCE = Path(__file__).parent / "data" / "bad_evidence"
"""Evidence files ``harness claims --results`` refuses (README there: file -> message)."""


def _evidence_cases() -> dict[str, str]:
    rows = (EVIDENCE / "README.md").read_text().split("| --- | --- |\n", 1)[1]
    return dict(line.strip("| ").split(" | ", 1) for line in rows.splitlines() if line)


def test_every_bad_evidence_file_has_its_expected_message():
    files = {p.name for p in EVIDENCE.iterdir()} - {"README.md"}
    assert files == set(_evidence_cases()) and len(files) >= 12


@pytest.mark.parametrize("case", sorted(_evidence_cases()))
def test_a_bad_evidence_file_is_refused_in_one_line(case, registry, capsys, tmp_path):
    """Float, negative, missing, textual or too large seeds, a status that is a number,
    files that are no export, truncated or of another format: each exit 2 in one line
    (float seeds gave a traceback before)."""
    (tmp_path / "suite.yaml").write_text(SUITE)
    code, out, err = _call(registry, capsys, "claims", str(tmp_path / "suite.yaml"),
                           "--results", str(EVIDENCE / case))  # fmt: skip
    message = " ".join(err.split())
    assert code == 2 and "Traceback" not in out + err, err
    assert len(err.strip().splitlines()) == 1 or err.count("error:") == 1, err
    assert _evidence_cases()[case] in message and case in message, message
