"""The evidence tables of the plugin README and ``results/README.md``, from a results table.

:func:`gains_markdown`: each WFL arm's accuracy gain over ``naive`` per weak kind and rate;
:func:`bound_markdown`: the test logistic loss against the paper's bound over n and epsilon.
Both read a ``harness results`` table (params as strings, metrics as floats).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from harness.claims.stats import paired_difference

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["GAIN_ARMS", "arms", "bound_markdown", "gains_markdown"]

GAIN_ARMS = ("wfl-sequential", "wfl-sequential/soft", "wfl-joint", "drop-feature")


def arms(results: pd.DataFrame) -> pd.Series:
    """Which arm each row is: the method name, ``wfl-sequential/soft`` for soft estimates."""
    soft = results["method"].eq("wfl-sequential")
    if "method.estimate" in results:
        soft &= results["method.estimate"].astype(str).eq("soft")
    else:
        soft &= False
    return results["method"].where(~soft, "wfl-sequential/soft")


def _ok(results: pd.DataFrame) -> pd.DataFrame:
    return results[results["status"].eq("ok")] if "status" in results else results


def gains_markdown(results: pd.DataFrame) -> str:
    """Accuracy gain over naive per configuration, paired by seed.

    One row per (weak kind, rate) of the synthetic WFL cells, then their per-seed mean over
    the seeds every arm holds: naive's seeds and mean accuracy, and for each arm of
    :data:`GAIN_ARMS` the mean paired difference over the seeds both hold, with its 95% t
    interval (:func:`harness.claims.stats.paired_difference`), in percentage points.
    """
    ok = _ok(results)
    frame = ok[ok["dataset"].eq("synthetic") & ok["method"].isin(["naive", *GAIN_ARMS])]
    frame = frame.assign(_arm=arms(frame), _rate=frame["dataset.rate"].astype(float))
    table = frame.pivot_table(
        index=["dataset.weak_kind", "_rate", "seed"], columns="_arm", values="accuracy"
    )
    head = ["weak kind", "rate", "seeds", "naive acc.", "seq. hard", "seq. soft", "joint",
            "drop-feature"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    parts = [((str(k), f"{r:g}"), p) for (k, r), p in table.groupby(level=[0, 1])]
    pooled = table.dropna().groupby(level="seed").mean()  # seeds with every arm everywhere
    for (kind, rate), part in [*parts, (("all five (per-seed mean)", ""), pooled)]:
        naive = part["naive"].dropna()
        cells = [kind, rate, str(len(naive)), f"{100 * naive.mean():.1f}%"]
        for arm in GAIN_ARMS:
            both = part[[arm, "naive"]].dropna()  # the seeds both arms hold
            d = paired_difference(both[arm], both["naive"])
            cells.append(f"{_pp(d.estimate)} [{_pp(d.low)}, {_pp(d.high)}]")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _pp(value: float) -> str:
    return f"{100 * value:+.2f}".replace("-", "\u2212")


def bound_markdown(results: pd.DataFrame) -> str:
    """Test logistic loss and the paper's bound against n and epsilon (emulated estimator,
    synthetic): means over seeds for h with C = 1 and the rival's C = 0.001, the bound and
    its complexity part, the geometric-mean bound/loss ratio and the seeds above the bound."""
    ok = _ok(results)
    rows = ok[ok["method"].eq("emulated-estimator") & ok["dataset"].eq("synthetic")]
    rows = rows.assign(n=rows["dataset.n"].astype(float), eps=rows["method.epsilon"].astype(float),
                       C=rows["method.C"].astype(float))  # fmt: skip
    ratio = rows["wfl-bound.bound"] / rows["logistic-loss"]
    rows = rows.assign(above=ratio < 1, log_ratio=np.log(ratio))
    head = ["n", "epsilon", "seeds", "0-1 error", "loss (range)", "loss, C = 0.001", "bound",
            "complexity part", "bound / loss", "seeds above bound"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for (n, eps), part in rows.groupby(["n", "eps"]):
        mine, rival = part[part["C"].eq(1.0)], part[part["C"].eq(0.001)]
        loss = mine["logistic-loss"]
        ratio = np.exp(mine["log_ratio"].mean())
        cells = [f"{n:,.0f}", f"{eps:g}", str(len(mine)), f"{1 - mine['accuracy'].mean():.3f}",
                 f"{loss.mean():.3f} ({loss.min():.3f}\u2013{loss.max():.3f})",
                 f"{rival['logistic-loss'].mean():.3f}", f"{mine['wfl-bound.bound'].mean():.2f}",
                 f"{mine['wfl-bound.complexity'].mean():.2f}", f"{ratio:.1f}",
                 str(int(mine["above"].sum()))]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
