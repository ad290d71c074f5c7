"""Evidence tied to cells (issue 58, item 9): ``harness claims --results`` reads an export's
rows as the suite's only when they are its cells by full identity and were made by the code
the suite would run now (:func:`harness.claims.evidence.check_results`, :func:`of_cells`)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from helpers import TOY_CLAIMS_SUITE, call_main

from harness.claims import Cells, Claim, Greater, Mean, Source, UseMetric, evaluate_claims
from harness.claims.evidence import check_results, of_cells, read_results
from harness.errors import SuiteError
from harness.suites.identity import Cell

REGISTRY = SimpleNamespace(plugins={"p": "1.0"})
CODE = (("p", "c0ffee0123456789"),)


def _cell(n: int = 10, seed: int = 0, code: tuple = CODE) -> Cell:
    return Cell("t", "d", {"n": n}, "m", {"lr": 0.1}, seed, (("score", {}),), None,
                (("p", "1.0"), ("p", "1.0")), code)  # fmt: skip


def _row(cell: Cell, score: float, **changes: object) -> dict:
    row = {"task": cell.task, "dataset": cell.dataset, "method": cell.method,
           "seed": cell.seed, "status": "ok", "score": score, "null": -1.0,
           "run_id": f"run-{cell.cell_hash}", "cell_hash": cell.cell_hash, "plugin": "p",
           "plugin_version": "1.0", "plugin_fingerprint": dict(cell.code)["p"]}  # fmt: skip
    params = {k: v for k, v in cell.params().items() if k.startswith(("dataset.", "method."))}
    return {**row, **params, "dataset.logged": "7", **changes}  # a value the dataset logged


SUITE = [_cell(seed=s) for s in range(4)]


class MScoresAboveZero(Claim):
    """m scores above zero (a fixture)."""

    name = "m-scores-above-zero"
    task = "t"
    source = Source("fixture")
    statement = "m scores above 0."
    requires = (Cells("d", ("m",)),)  # every n: the cells' params are free
    metric = "score"
    kind = Mean()
    hypothesis = Greater(0.0)
    subject = "m"
    control = UseMetric("null")


def _export(tmp_path, rows: list[dict], name: str = "export.csv"):
    path = tmp_path / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return read_results(path)


def test_rows_of_another_configuration_are_left_out_and_cannot_reproduce_a_claim(tmp_path):
    mine = [_row(c, -1.0 - 0.1 * c.seed) for c in SUITE]  # the suite's cells: below 0
    other = [_row(_cell(n=99, seed=c.seed), 5.0) for c in SUITE]  # n=99: no cell of it
    matched = check_results(_export(tmp_path, mine + other), REGISTRY, SUITE, "--results x")
    rows = of_cells(matched.rows, SUITE)
    assert sorted(rows["cell_hash"]) == sorted(c.cell_hash for c in SUITE)
    assert matched.left_out == 4
    assert "4 rows of other configurations left out" in matched.note
    assert "row 5 (t/d/m, seed 0) has dataset.n=99, the suite's cell 10" in matched.note
    (verdict,) = evaluate_claims([MScoresAboveZero], rows, timeout=30)
    assert verdict.status == "not-reproduced"  # pooled with n=99 it would be reproduced


def test_an_export_of_the_suite_alone_leaves_nothing_out(tmp_path):
    matched = check_results(_export(tmp_path, [_row(c, 1.0) for c in SUITE]), REGISTRY,
                            SUITE, "--results x")  # fmt: skip
    assert len(matched.rows) == 4 and matched.left_out == 0 and matched.note == ""


def test_a_csv_export_reads_params_back_as_the_store_logged_them(tmp_path):
    cell = Cell("t", "d", {"n": 10, "flag": True, "k": None}, "m", {"lr": 1.0}, 0, (), None,
                (("p", "1.0"),), CODE)  # fmt: skip
    frame = _export(tmp_path, [_row(cell, 1.0), _row(_cell(seed=1), 1.0)])
    assert frame.loc[0, "dataset.flag"] == "true" and frame.loc[0, "method.lr"] == "1.0"
    matched = check_results(frame, REGISTRY, [cell], "--results x")
    assert list(matched.rows["cell_hash"]) == [cell.cell_hash]  # not True / 1 / "nan"


def test_rows_of_other_code_are_refused_naming_the_row(tmp_path):
    old = _cell(seed=2, code=(("p", "0123456789abcdef"),))  # the same cell, earlier code
    rows = [_row(c, 1.0) for c in SUITE[:2]] + [_row(old, 1.0)]
    with pytest.raises(SuiteError, match=r"row 3 \(t/d/m, seed 2\) was made by other code of"
                       r" plugin p \(fingerprint 0123456789abcdef"):  # fmt: skip
        check_results(_export(tmp_path, rows), REGISTRY, SUITE, "--results x")
    unfingerprinted = [{**r, "plugin_fingerprint": None} for r in rows]  # an older export
    with pytest.raises(SuiteError, match=r"row 3 .* is of cell \w+, not of the suite's cell"):
        check_results(_export(tmp_path, unfingerprinted), REGISTRY, SUITE, "--results x")


def test_rows_of_another_plugin_version_are_refused(tmp_path):
    rows = [_row(c, 1.0, plugin_version="0.9") for c in SUITE]
    with pytest.raises(SuiteError, match=r"row 1 .* was made with p 0.9; 1.0 is installed"):
        check_results(_export(tmp_path, rows), REGISTRY, SUITE, "--results x")


def test_an_export_of_another_suite_or_without_cell_hashes_is_refused(tmp_path):
    other = [_row(_cell(n=5, seed=c.seed), 1.0) for c in SUITE]
    with pytest.raises(SuiteError, match="another suite"):
        check_results(_export(tmp_path, other), REGISTRY, SUITE, "--results x")
    bare = _export(tmp_path, [_row(c, 1.0) for c in SUITE]).drop(columns="cell_hash")
    with pytest.raises(SuiteError, match="no cell_hash column"):
        check_results(bare, REGISTRY, SUITE, "--results x")


@pytest.fixture(scope="module")
def ran(toy_claims_run):
    """The session's run of the toy claims suite (tests/conftest.py): ``(suite path, store
    URI)``."""
    return toy_claims_run


def _outcomes(verdicts: list[dict]) -> dict:
    """Each claim's status and estimate (an error's traceback names other lines)."""
    return {v["claim"]: (v["status"], v["estimate"]) for v in verdicts}


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
@pytest.mark.parametrize("to_file", [True, False], ids=["out", "stdout"])
def test_every_export_format_ends_0_and_reads_back_to_the_stores_verdicts(
    ran, registry, capsys, tmp_path, fmt, to_file
):
    suite, store = ran
    out = tmp_path / f"export.{fmt}"
    where = ["--out", str(out)] if to_file else []
    code, text, err = call_main(registry, capsys, "results", suite, "--tracking-uri", store,
                                "--format", fmt, *where)  # fmt: skip
    if fmt == "parquet" and not to_file:
        assert code == 2 and "--out FILE" in err
        return
    assert code == 0 and "Traceback" not in err, err
    if not to_file:
        out.write_text(text)
    assert "18 cells" in err if to_file else text
    _, stored, _ = call_main(registry, capsys, "claims", suite, "--tracking-uri", store,
                             "--format", "json")  # fmt: skip
    code, read, err = call_main(registry, capsys, "claims", suite, "--results", str(out),
                                "--format", "json")  # fmt: skip
    assert code == 0, err
    assert _outcomes(json.loads(read)) == _outcomes(json.loads(stored))


def test_float_seeds_in_an_evidence_file_are_refused_in_one_line(ran, registry, capsys, tmp_path):
    suite, store = ran
    out = tmp_path / "e.json"
    call_main(registry, capsys, "results", suite, "--tracking-uri", store, "--format", "json",
              "--out", str(out))  # fmt: skip
    export = json.loads(out.read_text())
    export["rows"][2]["seed"] = 1.5
    out.write_text(json.dumps(export))
    code, _, err = call_main(registry, capsys, "claims", suite, "--results", str(out))
    assert code == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert "row 3, column seed: expected a whole number" in err and "1.5" in err


def test_an_evidence_file_over_the_size_cap_is_refused_before_it_is_read(
    ran, registry, capsys, tmp_path, monkeypatch
):
    suite, _ = ran
    out = tmp_path / "big.parquet"
    out.write_bytes(b"\0" * 4096)
    monkeypatch.setattr("harness.claims.evidence.RESULTS_MAX_BYTES", 1024)
    monkeypatch.setattr(pd, "read_parquet", lambda *a, **k: pytest.fail("read"))
    code, _, err = call_main(registry, capsys, "claims", suite, "--results", str(out))
    assert code == 2 and "over the 0 GiB an export may hold" in err.replace("\n", " ")


EVIDENCE = Path(__file__).parents[1] / "data" / "bad_evidence"


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
    (tmp_path / "suite.yaml").write_text(TOY_CLAIMS_SUITE)
    code, out, err = call_main(registry, capsys, "claims", str(tmp_path / "suite.yaml"),
                               "--results", str(EVIDENCE / case))  # fmt: skip
    message = " ".join(err.split())
    assert code == 2 and "Traceback" not in out + err, err
    assert len(err.strip().splitlines()) == 1 or err.count("error:") == 1, err
    assert _evidence_cases()[case] in message and case in message, message
