"""Every table of the plugin README (and the two per-cell tables of results/README.md) is its
renderer applied to the committed evidence (``results/*.parquet``), so no figure there lacks
a stored run; each renderer is also shown to change when the evidence does."""

from __future__ import annotations

import pathlib

import pandas as pd
import pytest
from harness_gmm_testing import _comparison as comparison
from harness_gmm_testing import _readme as readme
from harness_gmm_testing._levels import level_bands

PLUGIN = pathlib.Path(__file__).resolve().parents[1]
RESULTS = PLUGIN / "results"
MAIN = ("gmm-testing.parquet",)
RATE = ("gmm-testing-rate.parquet",)
SCALING = ("gmm-testing-scaling.parquet",)
RATIO = ("gmm-testing-rate.parquet", "gmm-testing-hz-n90.parquet")
ALL = ("gmm-testing.parquet", "gmm-testing-hz.parquet", "gmm-testing-hz-large.parquet", *RATIO)


def frame(names: tuple[str, ...]) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(RESULTS / name) for name in names], ignore_index=True)


IN_RESULTS_README = {"results", "scaling", "levels", "rate", "hz-ratios", "hz-model-check"}


def readme_path(name: str) -> pathlib.Path:
    return RESULTS / "README.md" if name in IN_RESULTS_README else PLUGIN / "README.md"


def block(name: str) -> str:
    text = readme_path(name).read_text()
    return text.split(f"<!-- {name}:begin -->\n")[1].split(f"\n<!-- {name}:end -->")[0]


TABLES = {
    "results": lambda f: readme.results_markdown(f(MAIN)),
    "scaling": lambda f: readme.results_markdown(f(SCALING)),
    "rate": lambda f: readme.rate_markdown(f(RATE)),
    "hz-ratios": lambda f: readme.ratio_markdown(
        comparison.measured_ratios(f(RATIO)), comparison.model_ratios()
    ),
    "hz-model-check": lambda f: readme.model_check_markdown(comparison.model_check(f(ALL))),
    "levels": lambda f: readme.level_markdown(level_bands(f(ALL))),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_readme_table_is_rendered_from_the_committed_evidence(name):
    assert block(name) == TABLES[name](frame)


@pytest.mark.parametrize("name", ["results", "rate", "levels"])
def test_a_changed_figure_in_the_evidence_changes_the_table(name):
    # Wrong variant: one cell's power halved and its type-I error raised to 0.15.
    def corrupted(names):
        df = frame(names)
        df.loc[df.index[0], "power.rate"] /= 2
        df.loc[df.index[0], "type1-error.rate"] = 0.15
        return df

    assert TABLES[name](corrupted) != block(name)


def _outside_by_chance(cells: int) -> int:
    """The most cells a 99% band leaves out by chance (binomial, 99.9% quantile): each seed
    of each cell is a cell, and with 39-draw nulls a seed's level spreads widely."""
    from scipy import stats

    return int(stats.binom.ppf(0.999, cells, 0.01))


def test_a_liberal_test_falls_outside_its_level_band():
    df = frame(ALL)
    bands = level_bands(df)
    assert (~bands["inside"]).sum() <= _outside_by_chance(len(bands))
    hz = df.index[df["method"] == comparison.HZ]
    df.loc[hz, "type1-error.rate"] = 0.15  # 100 trials, 100 draws: band 0 to 0.13
    bands = level_bands(df)
    assert (~bands["inside"]).sum() > _outside_by_chance(len(bands))


def test_readme_is_a_guide_of_at_most_150_lines():
    assert len((PLUGIN / "README.md").read_text().splitlines()) <= 150
