"""Every table of ``results/README.md`` comes from the committed evidence: the controls'
estimates, the paper-scale slopes and the measured results are rebuilt here and compared
with its text between their markers.

``python plugins/fair-regression/tests/test_readme_numbers.py`` prints the three tables.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd
from harness_fair_regression import harness_claims

from harness.claims import evaluate_claims
from harness.claims.stats import loglog_slope

PLUGIN = Path(__file__).resolve().parents[1]
RESULTS = PLUGIN / "results"
RISKS = ("regression-risk", "fair-risk", "transport-risk")
BASES = {  # (regressor, maps on) -> row label of the slope table
    ("ridge", "0"): "ridge (calibration)",
    ("ridge", "100"): "ridge (fixed 100 rows)",
    ("knn-balanced", "0"): "k-NN k = n^(3/4)",
    ("knn-rate", "0"): "k-NN k = n^(2/3)",
    ("knn-undersmoothed", "0"): "k-NN k = n^(1/3)",
}
VARIANTS = {  # (method, its variant param's value) -> row label of the measured table
    ("unconstrained", ""): "unconstrained",
    ("projection", ""): "projection",
    ("projection", "uniform"): "projection (uniform weights)",
    ("partial-fairness", ""): "partial-fairness (alpha 1/4: half way)",
}
MEASURED = ("mse", "ks-unfairness", "w2-unfairness", "cost-to-base")


@functools.cache
def _evidence(name: str) -> pd.DataFrame:
    frame = pd.read_parquet(RESULTS / f"{name}.parquet")
    return frame[frame["status"].eq("ok")]


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    if name not in frame:
        return pd.Series("", index=frame.index)
    return frame[name].fillna("").astype(str)


def _sig(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, without an exponent from 1e-4 to 1e6."""
    return f"{float(f'{x:.{digits}g}'):g}"


def controls_markdown() -> str:
    """Each claim's estimate and its estimate under its negative control (main evidence)."""
    frame = _evidence("fair-regression")
    touched = [cls for cls in harness_claims() if not cls().selected(frame)[1]]
    lines = ["| claim | estimate | under its negative control |", "|---|---|---|"]
    for v in evaluate_claims(touched, frame, registered=list(harness_claims())):
        control = v.control.estimate.estimate
        lines.append(f"| `{v.claim}` | {v.estimate.estimate:.3g} | {control:.3g} |")
    return "\n".join(lines) + "\n"


def slopes_markdown() -> str:
    """Log-log slopes of the meta-theorem's three risks on n, 95% seed-bootstrap intervals
    (1,000 resamples), per model, noise and base (paper-scale evidence)."""
    frame = _evidence("fair-regression-rates")
    frame = frame[frame["method"].eq("projection") & frame["fair-risk"].notna()].copy()
    frame["base"] = list(zip(_column(frame, "method.regressor"),
                             _column(frame, "method.map_rows"), strict=True))  # fmt: skip
    header = "| model, noise / base (maps on) | " + " | ".join(r.replace("-", " ") for r in RISKS)
    lines = [header + " |", "|---|---|---|---|"]
    keys = ["dataset.model", "dataset.noise", "base"]
    for (model, noise, base), rows in frame.groupby(keys, sort=False):
        n = rows["dataset.n_train"].astype(float).to_numpy()
        cells = []
        for risk in RISKS:
            e = loglog_slope(n, rows[risk].to_numpy(float), rows["seed"].to_numpy(),
                             resamples=1000)  # fmt: skip
            cells.append(f"{e.estimate:.2f} [{e.low:.2f}, {e.high:.2f}]")
        label = f"{model}, {float(noise):g} / {BASES[base]}"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def measured_markdown() -> str:
    """Test MSE, KS, W2 unfairness and E(g - f)^2 / U(f), mean +- sd over seeds, per real
    dataset and method (the equipy port's cells left out)."""
    frame = _evidence("fair-regression")
    frame = frame[
        frame["ks-unfairness"].notna() & frame["dataset"].ne("synthetic-unequal-variance")
    ]
    variant = _column(frame, "method.weights").replace("frequency", "")
    variant = variant.where(variant.ne(""), _column(frame, "method.convention"))
    frame = frame.assign(variant=variant.replace("order-statistic", ""))
    lines = ["| dataset | method | MSE | KS | U | E(g - f)^2 / U(f) |", "|---|---|---|---|---|---|"]
    for dataset, rows in frame.groupby("dataset", sort=False):
        for key, label in VARIANTS.items():
            cell = rows[rows["method"].eq(key[0]) & rows["variant"].eq(key[1])]
            if cell.empty:
                continue
            stats = [f"{_sig(np.mean(cell[m]), 3)} +- {_sig(np.std(cell[m], ddof=1), 2)}"
                     if cell[m].notna().any() else "-" for m in MEASURED]  # fmt: skip
            lines.append(f"| {dataset} | {label} | " + " | ".join(stats) + " |")
    return "\n".join(lines) + "\n"


TABLES = {"controls": controls_markdown, "slopes": slopes_markdown,
          "measured": measured_markdown}  # fmt: skip


def _shown(name: str) -> str:
    readme = (RESULTS / "README.md").read_text()
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    return readme.split(begin, 1)[1].split(end, 1)[0].strip("\n") + "\n"


def test_controls_table_is_the_evidence():
    assert _shown("controls") == controls_markdown()


def test_slope_table_is_the_paper_scale_evidence():
    assert _shown("slopes") == slopes_markdown()


def test_measured_results_table_is_the_evidence():
    assert _shown("measured") == measured_markdown()


if __name__ == "__main__":
    for name, build in TABLES.items():
        print(f"<!-- {name}:begin -->\n{build()}<!-- {name}:end -->\n")
