"""harness.plugins.testing's helpers for a plugin's committed evidence: the verdicts it gives
and the
claims table a README must show."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.claims import Cells, Claim, Greater, Mean, Source, UseMetric, verdicts_markdown
from harness.plugins.testing import assert_claims_table, evidence_verdicts


class Positive(Claim):
    name = "positive-score"
    task = "t"
    source = Source("fixture")
    statement = "The score is positive."
    requires = (Cells("d", ("m",), min_seeds=3),)
    metric = "score"
    subject = "m"
    kind = Mean()
    hypothesis = Greater(0.0)
    control = UseMetric("negated")


def test_the_table_of_a_readme_is_what_the_evidence_gives(tmp_path):
    plugin = tmp_path / "toy-paper"
    (plugin / "results").mkdir(parents=True)
    score = [1.0, 1.2, 0.9, 1.1]
    pd.DataFrame({"task": "t", "dataset": "d", "method": "m", "seed": range(4), "status": "ok",
                  "score": score, "negated": [-s for s in score]}).to_parquet(
        plugin / "results" / "toy-paper.parquet")  # fmt: skip
    verdicts = evidence_verdicts(plugin, [Positive])
    assert verdicts["positive-score"].status == "reproduced"
    readme = plugin / "README.md"
    table = verdicts_markdown(list(verdicts.values()))
    readme.write_text(f"# toy\n<!-- claims:begin -->\n{table}<!-- claims:end -->\n")
    assert_claims_table(readme, verdicts)
    readme.write_text(readme.read_text().replace("reproduced", "inconclusive", 1))
    with pytest.raises(AssertionError, match="not what the committed evidence gives"):
        assert_claims_table(readme, verdicts)
    readme.write_text("# no table")
    with pytest.raises(AssertionError, match="no <!-- claims:begin -->"):
        assert_claims_table(readme, verdicts)
