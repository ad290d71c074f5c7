"""Power and level of the margin claim's test against the model-level tests it replaces.

Writes ``plugins/margin-qml/results/power.csv`` (the README's power table): for Kendall τ
0 to 0.5 between the gap and a margin measure, in the designs of the claims (the authors'
15 configurations x 5 experiments; the main suite's 12 x 4) with an intraclass correlation
of 0.5 (and 0.8 at τ = 0), the share of 200 simulated data sets on which

- ``block MI``: the claims' test (excess histogram MI over the configuration-level null,
  interval above 0: one-sided level 0.025) is positive;
- ``model MI``: the same with the gap permuted across models (the earlier report's null);
- ``config tau``: Kendall's test on configuration means, two-sided p < 0.05 and τ > 0;
- ``model tau``: Kendall's test on the models as if independent, p < 0.05 and τ > 0.

Run: ``python plugins/margin-qml/benchmarks/power_table.py`` (about a minute on one core).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from harness_margin_qml.claims import GAP, block_mi_excess, synthetic_models
from scipy.stats import kendalltau

OUT = Path(__file__).parents[1] / "results" / "power.csv"
DESIGNS = [("authors", 15, 5), ("suite", 12, 4)]
TRIALS, PERMUTATIONS = 200, 200


def rates(tau: float, n_config: int, n_seed: int, icc: float, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    hits = {"block MI": 0, "model MI": 0, "config tau": 0, "model tau": 0}
    for trial in range(TRIALS):
        models = synthetic_models(tau, n_config, n_seed, icc, rng)
        for key, permute in (("block MI", "configurations"), ("model MI", "models")):
            e = block_mi_excess(models, "margin-mean", PERMUTATIONS, trial, permute=permute)
            hits[key] += e.low > 0
        means = models.groupby("config_index")[[GAP, "margin-mean"]].mean()
        t = kendalltau(means[GAP], means["margin-mean"])
        hits["config tau"] += t.pvalue < 0.05 and t.statistic > 0
        t = kendalltau(models[GAP], models["margin-mean"])
        hits["model tau"] += t.pvalue < 0.05 and t.statistic > 0
    return {k: v / TRIALS for k, v in hits.items()}


def main() -> None:
    rows = []
    for design, n_config, n_seed in DESIGNS:
        settings = [(0.0, 0.8)] + [(tau, 0.5) for tau in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)]
        for i, (tau, icc) in enumerate(settings):
            row = {"design": f"{design} ({n_config} x {n_seed})", "tau": tau, "icc": icc}
            rows.append(row | rates(tau, n_config, n_seed, icc, seed=i))
            print(rows[-1], file=sys.stderr)
    pd.DataFrame(rows).to_csv(OUT, index=False)


if __name__ == "__main__":
    main()
