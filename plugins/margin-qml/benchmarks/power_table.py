"""Power of every margin-qml claim at the effect it is about, by simulation.

Writes ``plugins/margin-qml/results/power.csv`` (the README's power table). Each row runs the
claim's own test (``harness.claims`` ``TSample.of`` of the statistic's units, then the
claim's hypothesis at the one-sided 0.025; "Holm" at 0.025 / 4, the first step of Holm's
adjustment over the paper's four claims) on ``DRAWS`` simulated data sets:

- the three comparisons (:class:`harness_margin_qml._claims.TauAdvantage`, jackknife of a
  tau-b difference over architectures): architecture means of (gap, measure, #params) from
  :func:`~harness_margin_qml._claims.synthetic_means`, at the paper's taus (authors'
  committed results, papers file §5) and at equal taus (``size``: how often a measure with
  no advantage passes);
- the NQE claim: per-seed gains normal with the pilot's spread (seeds 100-102, sd 0.003),
  at the paper's MNIST gain 0.33 and at the margin 0.05 (``size``).

``control_fails``: the share of one control draw's data sets that come out not-reproduced
(the measure at tau 0, a random number per architecture; the NQE gain at 0), where the core
needs 95%.

Run: ``python plugins/margin-qml/benchmarks/power_table.py`` (under a minute on one core).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from harness_margin_qml._claims import pseudo_values, synthetic_means

from harness.claims import ALPHA, Greater, Status, TSample

OUT = Path(__file__).parents[1] / "results" / "power.csv"
DRAWS = 2000
FAMILY = 4
ROWS = [  # claim, design, units, effect in words, tau(measure), tau(#params)
    ("mean-margin-beats-parameters-cluster-8q-r1", "suite", 12, "paper: 0.59 vs 0.45", 0.59, 0.45),
    ("mean-margin-beats-parameters-cluster-10q-r1", "paper", 15, "paper: 0.59 vs 0.45", 0.59, 0.45),
    ("q1-beats-parameters-tfim-10q", "paper", 15, "paper: 0.56 vs 0.18", 0.56, 0.18),
    ("q1-beats-parameters-cluster-8q-r1", "suite", 12, "paper (Q1): 0.47 vs 0.45", 0.47, 0.45),
]
NQE = ("nqe-raises-trace-distance", "suite", 3, "paper: gain 0.33", 0.33, 0.05, 0.003)


def _shares(samples: list[TSample], margin: float) -> tuple[float, float]:
    """Shares of ``samples`` reproduced against ``Greater(margin)`` at ALPHA and at ALPHA /
    FAMILY."""
    hypothesis = Greater(margin)
    at = [hypothesis.status(s, a) == Status.REPRODUCED for s in samples
          for a in (ALPHA, ALPHA / FAMILY)]  # fmt: skip
    return float(np.mean(at[0::2])), float(np.mean(at[1::2]))


def _failing(samples: list[TSample], margin: float) -> float:
    """Share of ``samples`` not reproduced against ``Greater(margin)``: how often one draw
    of a control fails (the core wants 95% of its draws to)."""
    hypothesis = Greater(margin)
    return float(np.mean([hypothesis.status(s) == Status.NOT_REPRODUCED for s in samples]))


def _taus(n: int, tau_measure: float, tau_params: float, seed: int) -> list[TSample]:
    gap, measure, params = np.moveaxis(
        synthetic_means(tau_measure, tau_params, n, np.random.default_rng(seed), DRAWS), 1, 0
    )
    return [TSample.of(p) for p in pseudo_values(gap, measure, params)]


def table() -> pd.DataFrame:
    rows = []
    for seed, (claim, design, n, effect, tm, tp) in enumerate(ROWS):
        power, holm = _shares(_taus(n, tm, tp, seed), 0.0)
        size, _ = _shares(_taus(n, tp, tp, 100 + seed), 0.0)
        control = _failing(_taus(n, 0.0, tp, 200 + seed), 0.0)
        rows.append((claim, design, n, effect, power, holm, size, control))
    claim, design, n, effect, gain, margin, sd = NQE
    rng = np.random.default_rng(7)
    at_effect = [TSample.of(rng.normal(gain, sd, n)) for _ in range(DRAWS)]
    at_margin = [TSample.of(rng.normal(margin, sd, n)) for _ in range(DRAWS)]
    no_gain = [TSample.of(rng.normal(0.0, sd, n)) for _ in range(DRAWS)]
    power, holm = _shares(at_effect, margin)
    size, control = _shares(at_margin, margin)[0], _failing(no_gain, margin)
    rows.append((claim, design, n, effect, power, holm, size, control))
    return pd.DataFrame(rows, columns=["claim", "design", "units", "effect", "power",
                                       "power_holm", "size", "control_fails"])  # fmt: skip


if __name__ == "__main__":
    out = table()
    out.to_csv(OUT, index=False, float_format="%.3f")
    print(out.to_string(index=False))
