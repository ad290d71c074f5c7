"""The verdict table reads on its own in every command, and the report opens with a forest
plot of every claim (issue 58, items 10 and 11): what each estimate is tested against, the
interval's level where it is not 95%, why a claim is inconclusive (its interval across the
margin and the units that would decide it, Holm's p, an undecided control or rival)."""

from __future__ import annotations

import io
import math
import re

import pandas as pd
import pytest
from rich.console import Console

from harness.claims.stats import Estimate
from harness.claims.verdicts import HEADER, Outcome, Status, Verdict, table_rows, verdicts_markdown
from harness.cli import summary
from harness.reports.folder import forest_plot, write_report
from harness.reports.render import Document, render

NOT = Status.NOT_REPRODUCED


def _verdict(status=Status.REPRODUCED, est=(0.5, 0.3, 0.7), p=0.001, adjusted=0.004, **kw):
    estimate = None
    if est is not None:
        estimate = Estimate(est[0], est[1], est[2], p, 10, 0.15, "mean; > 0",
                            level=kw.pop("level", 0.95))  # fmt: skip
    fields = {"claim": "gain-is-positive", "task": "paper", "source": "s", "statement": "st",
              "hypothesis": "> 0", "unit": "seed", "status": status, "estimate": estimate,
              "p_adjusted": adjusted if est else None, "alpha": 0.025,
              "band": (0.0, math.inf), "control": Outcome("control", NOT),
              "family": "harness_paper"}  # fmt: skip
    return Verdict(**{**fields, **kw})


def _row(v: Verdict) -> dict[str, str]:
    return dict(zip(HEADER, table_rows([v])[0], strict=True))


def test_each_row_says_what_it_is_tested_against_and_a_level_other_than_95():
    within = _verdict(hypothesis="within 1 +- 0.25", band=(0.75, 1.25), est=(1.0, 0.9, 1.1),
                      level=0.9)  # fmt: skip
    assert _row(within)["tested against"] == "within 1 +- 0.25"
    assert _row(within)["estimate [95% CI]"] == "1 [0.9, 1.1] (90% CI)"
    assert _row(_verdict())["estimate [95% CI]"] == "0.5 [0.3, 0.7]"  # 95%: said once


def test_an_interval_on_its_side_says_why_it_is_still_inconclusive():
    holm = _verdict(Status.INCONCLUSIVE, p=0.02, adjusted=0.07,
                    reason="Holm-adjusted p = 0.07 >= 0.025 across the 3 claims of x")  # fmt: skip
    assert "Holm-adjusted p = 0.07" in _row(holm)["why"]
    assert holm.why_short == "Holm p 0.07 >= 0.025"
    control = _verdict(Status.INCONCLUSIVE, control=Outcome("control", Status.INCONCLUSIVE),
                       reason="control undecided (inconclusive)")  # fmt: skip
    assert control.why_short == "control undecided"
    rival = _verdict(Status.INCONCLUSIVE, rivals={"linear": Outcome("linear", Status.INCONCLUSIVE)})
    assert rival.why_short == "rival linear undecided"
    bare = _verdict(Status.INCONCLUSIVE, p=0.03, adjusted=0.03)  # no reason given: still said
    assert "its interval is on the claim's side, but p = 0.03 >= 0.025" in _row(bare)["why"]


def test_an_inconclusive_interval_across_its_margin_says_the_units_that_would_decide_it():
    across = _verdict(Status.INCONCLUSIVE, est=(0.05, -0.01, 0.11), p=0.06, adjusted=0.2,
                      units_needed=26)  # fmt: skip
    assert _row(across)["why"] == (
        "its interval reaches both sides of 0; ~26 units would decide it (has 10)"
    )
    assert across.why_short == "interval crosses 0; ~26 units"
    assert _row(across)["MDE"] == "0.15"
    band = _verdict(Status.INCONCLUSIVE, est=(1.2, 1.1, 1.3), band=(0.75, 1.25))
    assert band.why_short == "interval crosses [0.75, 1.25]"
    decided = _verdict(Status.INCONCLUSIVE, units_needed=12,
                       control=Outcome("control", Status.INCONCLUSIVE))  # fmt: skip
    assert "units" not in decided.why  # only the control is undecided: units would not help


def test_markdown_cuts_a_long_why_and_lists_it_whole_under_the_table():
    cells = "; ".join(f"d x m{i}: 0 of 5 seeds" for i in range(30))
    long = _verdict(Status.NOT_RUN, est=None, control=None, reason=f"missing cells: {cells}")
    text = verdicts_markdown([long, _verdict()])
    table, notes = text.split("\n\n", 1)
    assert "missing cells: d x m0" in table and "..." in table
    assert "- gain-is-positive: missing cells:" in notes and "m29: 0 of 5 seeds" in notes


def _printed(verdicts, width):
    out = io.StringIO()
    console = Console(file=out, width=width, highlight=False, color_system=None)
    original = summary.console
    summary.console = console
    try:
        summary.print_verdicts(verdicts)
    finally:
        summary.console = original
    return out.getvalue()


VERDICTS = [
    _verdict(claim=f"claim-number-{i}-with-a-rather-long-name", task=f"paper-{i // 5}")
    for i in range(10)
] + [
    _verdict(Status.INCONCLUSIVE, p=0.02, adjusted=0.07, claim="held-back-by-holm",
             reason="Holm-adjusted p = 0.07 >= 0.025 across the 11 claims of harness_paper"),
    _verdict(Status.NOT_RUN, est=None, control=None, claim="never-ran",
             reason="missing cells: " + "x" * 2000),
]  # fmt: skip


@pytest.mark.parametrize("width", [80, 100, 120, 140, 200])
def test_the_terminal_table_fits_the_terminal_and_its_notes_hold_each_why(width):
    text = _printed(VERDICTS, width)
    table = text[: text.index("estimate [95% CI]: the statistic")]
    assert max(len(line.rstrip()) for line in table.splitlines()) <= width
    assert "held-back-by-holm: Holm-adjusted p = 0.07 >= 0.025 across the 11" in " ".join(
        text.split()
    )  # the whole why, in the notes
    assert re.search(r"\[\d+\] never-ran: missing cells: x+\.\.\. \(1,\d+ characters more", text)
    if width >= 140:
        assert "Holm p 0.07 >= 0.025" in table  # in its row
    assert "paper-0" in table and "paper-1" in table  # each paper's claims under its name


def test_the_report_opens_its_claims_with_a_forest_plot_written_beside_claims_json(
    tmp_path, registry
):
    rows = pd.DataFrame({"cell_hash": ["a"], "run_id": ["a"], "artifact_uri": [""],
                         "task": ["toy"], "dataset": ["noise"], "method": ["mean"],
                         "seed": ["0"], "status": ["ok"], "abs-error": [1.0]})  # fmt: skip
    verdicts = [*VERDICTS, _verdict(rivals={"linear": Outcome("linear", NOT, _verdict().estimate)})]
    write_report(rows, registry, None, "t", tmp_path, verdicts=verdicts)
    assert (tmp_path / "claims.json").is_file()
    assert (tmp_path / "claims.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "report.html").read_text()
    claims = page.index("<h2>Claims</h2>")
    assert claims < page.index('<img alt="forest plot') < page.index("<th>paper</th>")
    assert "its own scale" in page and "(90% CI)" not in page
    md = (tmp_path / "report.md").read_text()
    assert md.index("![forest plot of every claim](claims.png)") < md.index("| paper |")


def test_a_report_without_claims_has_no_forest_plot():
    _, page = render(Document("t", "", ""))
    assert "forest plot" not in page


def test_the_forest_plot_of_sixty_claims_is_drawn_in_a_few_seconds(tmp_path):
    import time

    many = [_verdict(claim=f"c{i}", est=(i, i - 1, i + 1)) for i in range(60)]
    start = time.perf_counter()
    forest_plot(many, tmp_path / "claims.png")
    assert time.perf_counter() - start < 20  # 1 s quiet; the shared 2-core machine is not
    assert (tmp_path / "claims.png").stat().st_size > 10_000
