"""The stage-curves report draws the configurations that logged curves, and only those."""

from __future__ import annotations

import numpy as np
import pandas as pd
from harness_label_noise.reports import StageCurves

from harness import Curve


def _cells(dataset: str, tau: str, hashes: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"status": "ok", "dataset": dataset, "method": "two-layer-cnn",
                         "dataset.tau": tau, "seed": range(len(hashes)), "cell_hash": hashes,
                         "test-summary.peak": 1.0, "test-summary.final": 0.9,
                         "test-summary.returned": 0.9})  # fmt: skip


def test_a_dataset_without_curves_draws_no_figure_and_one_with_curves_does():
    results = pd.concat([_cells("signal-noise-patches", "0.2", ["a", "b"]),
                         _cells("signal-noise-patches", "0.0", ["c"]),
                         _cells("digits-binary", "0.2", ["d"])])  # fmt: skip
    curve = Curve(np.array([0.5, 1.0]), np.array([0, 10]))
    curves = {"a": {"test-accuracy": curve}, "b": {"test-accuracy": curve}}
    out = StageCurves().build(results, curves)
    figures = [k for k in out if k.startswith("stages-")]
    assert figures == ["stages-1-signal-noise-patches"]
    assert len(out["stages-1-signal-noise-patches"].axes) == 2  # tau = 0.2 only: one column
    assert len(out["test-accuracy"]) == 3
