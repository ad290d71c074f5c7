"""What the margin-qml claims compute: rank associations over architectures, their
jackknife, the controls' random draws, and the power simulation behind the README.

The unit of replication is the **architecture** (ansatz x shared x depth L): the models of
one architecture share its effects, so the seeds of an architecture are averaged first
(:func:`architecture_means`) and the architectures are the exchangeable units (issue 33).
An association of a measure with the gap over architectures is Kendall's tau-b of their
means; a claim's sample is the leave-one-architecture-out jackknife pseudo-values of a
difference of two such taus (:func:`pseudo_values`), a t sample over architectures whose
mean is the difference itself (tau-b is a ratio of U-statistics, so the jackknife's mean
equals the full-sample value up to the denominator's change).

This module reads finished results only (``_claims.py`` is outside the plugin's code
fingerprint, as ``claims.py`` and ``reports.py`` are).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from harness.claims import Select, TSample, swap

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "GAP",
    "MARGIN_MEASURES",
    "PARAMETER_MEASURES",
    "SeedShuffled",
    "TauAdvantage",
    "architecture_means",
    "configuration_markdown",
    "configuration_table",
    "expand_groups",
    "power_markdown",
    "pseudo_values",
    "random_per_architecture",
    "synthetic_means",
    "tau_b",
]

GAP = "generalization-gap"
MARGIN_MEASURES = ("margin-q25", "margin-q50", "margin-q75", "margin-mean")
PARAMETER_MEASURES = ("parameter-count", "effective-parameters.above-0.1",
                      "effective-parameters.above-0.01")  # fmt: skip

# ``<metric>.L<k>`` or ``<metric>.L<k>.<sub>``: a member of a group cell (QNNGroupOutput).
_MEMBER = re.compile(r"^(?P<metric>[a-z0-9-]+)\.L(?P<layers>\d+)(?P<sub>\..+)?$")


def expand_groups(results: pd.DataFrame) -> pd.DataFrame:
    """One row per model: each group cell's row becomes one row per member.

    A group cell (``qcnn-group``, ``strongly-entangling-group``) logs every metric of member
    ``L<k>`` as ``<metric>.L<k>`` (``<metric>.L<k>.<sub>`` for several values). Its member
    rows keep the cell's other columns, get the metric columns under their plain names,
    ``method.layers = k``, ``method`` without the ``-group`` suffix (the member is exactly
    the single-model cell) and ``group_cell`` = the group cell's hash. Single-model rows
    come first, unchanged.
    """
    import pandas as pd

    member_cols = {c: m for c in results.columns if (m := _MEMBER.match(str(c)))}
    if not member_cols:
        return results
    is_group = results[list(member_cols)].notna().any(axis=1)
    groups, base = results[is_group], results[is_group].drop(columns=list(member_cols))
    parts = [results[~is_group].drop(columns=list(member_cols))]
    for layers in sorted({int(m["layers"]) for m in member_cols.values()}):
        cols = {c: m["metric"] + (m["sub"] or "") for c, m in member_cols.items()
                if int(m["layers"]) == layers}  # fmt: skip
        values = groups[list(cols)].rename(columns=cols)
        present = values.notna().any(axis=1)
        part = base[present].copy()
        for col in values:
            part[col] = values.loc[present, col]
        part["method.layers"] = layers
        part["method"] = part["method"].astype(str).str.removesuffix("-group")
        if "cell_hash" in part:
            part["group_cell"] = part["cell_hash"]
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _architectures(models: pd.DataFrame) -> pd.Series:
    """Each model's architecture: ``method|shared|L<layers>`` (SEL has no ``shared``)."""
    import pandas as pd

    shared = models.get("method.shared", pd.Series("", index=models.index))
    shared = shared.fillna("").astype(str).str.lower()
    return models["method"].astype(str) + "|" + shared + "|L" + models["method.layers"].astype(str)


def architecture_means(results: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """The mean of ``columns`` over each architecture's ok models, group cells expanded.

    Returns
    -------
    pandas.DataFrame
        One row per architecture (index ``architecture``, sorted), one column per entry of
        ``columns``; models missing a value are left out of that column's mean.

    Raises
    ------
    ValueError
        A column is missing, or fewer than 3 architectures have every column.
    """
    import pandas as pd

    models = expand_groups(results)
    if "status" in models:
        models = models[models["status"].eq("ok")]
    missing = [c for c in columns if c not in models]
    if missing:
        raise ValueError(f"no column {missing[0]!r} among the results")
    values = models[list(columns)].apply(pd.to_numeric, errors="coerce")
    means = values.groupby(_architectures(models).rename("architecture")).mean().dropna()
    if len(means) < 3:
        raise ValueError(f"an association over architectures needs >= 3, got {len(means)}")
    return means


def tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of the rows of ``x`` and ``y`` (shape (..., n)); nan where a row is
    constant.

    >>> float(tau_b(np.array([1.0, 2, 3]), np.array([1.0, 3, 2])))  # doctest: +ELLIPSIS
    0.333...
    """
    s, tx, ty = _pair_sums(x, y)
    with np.errstate(invalid="ignore", divide="ignore"):
        return s.sum(-1) / np.sqrt(tx.sum(-1) * ty.sum(-1))


def _pair_sums(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per point ``i`` (last axis): sum over ``j`` of sign(dx) sign(dy), |sign(dx)|, |sign(dy)|."""
    dx = np.sign(x[..., :, None] - x[..., None, :])
    dy = np.sign(y[..., :, None] - y[..., None, :])
    return (dx * dy).sum(-1), np.abs(dx).sum(-1), np.abs(dy).sum(-1)


def _leave_one_out(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """tau-b of ``x`` and ``y`` (..., n) without each point in turn, shape (..., n)."""
    s, tx, ty = _pair_sums(x, y)
    total = s.sum(-1, keepdims=True), tx.sum(-1, keepdims=True), ty.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total[0] - 2 * s) / np.sqrt((total[1] - 2 * tx) * (total[2] - 2 * ty))


def pseudo_values(gap: np.ndarray, measure: np.ndarray, rival: np.ndarray,
                  sign: float = 1.0) -> np.ndarray:  # fmt: skip
    """Jackknife pseudo-values over the units (last axis, n >= 3) of
    ``sign * (tau_b(measure, gap) - tau_b(rival, gap))``: ``n d - (n - 1) d_(-i)``.

    ``sign = -1`` where a better predictor goes with a smaller gap (a negative tau).
    """
    n = gap.shape[-1]
    full = sign * (tau_b(measure, gap) - tau_b(rival, gap))
    loo = sign * (_leave_one_out(measure, gap) - _leave_one_out(rival, gap))
    return n * np.asarray(full)[..., None] - (n - 1) * loo


@dataclass(frozen=True)
class TauAdvantage:
    """A claim's statistic: how much better ``metric`` ranks the architectures' mean gap
    than ``rival`` does (Kendall tau-b, signed by ``sign``), as a t sample of jackknife
    pseudo-values over architectures (``harness.claims.Statistic``'s function)."""

    rival: str
    sign: float = 1.0

    def __call__(self, rows: pd.DataFrame, metric: str, unit: object, subject: object) -> TSample:
        means = architecture_means(rows, (GAP, metric, self.rival))
        values = [means[c].to_numpy(float) for c in (GAP, metric, self.rival)]
        pseudo = pseudo_values(*values, sign=self.sign)  # TSample.of refuses a nan
        return TSample.of(pseudo, f"jackknife over {len(pseudo)} architectures")

    def __str__(self) -> str:
        side = "" if self.sign > 0 else "-"
        return f"{side}(tau(metric, gap) - tau({self.rival}, gap)) over architectures"


def random_per_architecture(rows: pd.DataFrame, metric: str,
                            rng: np.random.Generator) -> pd.DataFrame:  # fmt: skip
    """The rows (models) with ``metric`` replaced by one U[0, 1) number per architecture:
    an architecture-level effect with no link to the gap (a randomised control)."""
    models = expand_groups(rows).copy()
    codes, uniques = _architectures(models).factorize()
    models[metric] = rng.random(len(uniques))[codes]
    return models


@dataclass(frozen=True)
class SeedShuffled:
    """A randomised control: ``source``'s rows, their seeds permuted, in ``target``'s place
    (``harness.claims.swap``); ``source``'s own rows stay (a baseline paired by seed then
    meets another seed's copy of itself)."""

    source: Select
    target: Select

    def __call__(self, rows: pd.DataFrame, metric: str, rng: np.random.Generator) -> pd.DataFrame:
        import pandas as pd

        mine = rows[self.source.mask(rows)]
        moved = mine.assign(seed=rng.permutation(mine["seed"].to_numpy()), method=_MOVED)
        return swap(pd.concat([rows, moved], ignore_index=True), Select(_MOVED), self.target)


_MOVED = "(moved)"


def synthetic_means(tau_measure: float, tau_rival: float, n: int,
                    rng: np.random.Generator, draws: int = 1) -> np.ndarray:  # fmt: skip
    """``draws`` sets of ``n`` architecture means ``(gap, measure, rival)``, shape
    (draws, 3, n): normal, measure and rival each correlated with the gap so that their
    Kendall tau is ``tau_measure`` / ``tau_rival`` (rho = sin(pi tau / 2)), independent of
    each other given the gap."""
    rm, rr = (math.sin(math.pi * t / 2) for t in (tau_measure, tau_rival))
    cov = np.array([[1.0, rm, rr], [rm, 1.0, rm * rr], [rr, rm * rr, 1.0]])
    z = rng.multivariate_normal(np.zeros(3), cov, (draws, n))
    return np.moveaxis(z, -1, 1)


_SCOPES = ("dataset", "dataset.n_qubits", "dataset.noise")


def configuration_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, qubits, noise level): tau-b over architecture means of the gap with
    the mean margin, Q1 and the parameter count, and the jackknife interval of the mean
    margin's and Q1's advantage over the parameter count. Not corrected for the number of
    scopes: a description per noise level, not a claim.

    Returns
    -------
    pandas.DataFrame
        One row per scope with at least 3 architectures: ``dataset``, ``n_qubits``,
        ``noise``, ``architectures``,
        ``tau_mean``, ``tau_q1``, ``tau_params``, and for ``mean`` and ``q1``:
        ``<m>_advantage``, ``<m>_low``, ``<m>_high`` (95%).
    """
    import pandas as pd

    models = expand_groups(results)
    rows = []
    measures = {"mean": "margin-mean", "q1": "margin-q25"}
    for scope, part in models.groupby([c for c in _SCOPES if c in models], sort=True):
        try:
            means = architecture_means(part, (GAP, *measures.values(), "parameter-count"))
        except ValueError:
            continue
        gap, params = means[GAP].to_numpy(), means["parameter-count"].to_numpy()
        row = dict(zip(("dataset", "n_qubits", "noise"), scope, strict=False))
        row["architectures"] = len(means)
        row["tau_params"] = float(tau_b(params, gap))
        for short, column in measures.items():
            pseudo = pseudo_values(gap, means[column].to_numpy(), params)
            advantage = low = high = math.nan  # a measure constant without one architecture
            if np.all(np.isfinite(pseudo)):
                sample = TSample.of(pseudo)
                (low, high), advantage = sample.interval(0.95), sample.estimate
            row |= {f"tau_{short}": float(tau_b(means[column].to_numpy(), gap)),
                    f"{short}_advantage": advantage, f"{short}_low": low,
                    f"{short}_high": high}  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


def configuration_markdown(table: pd.DataFrame) -> str:
    """:func:`configuration_table` in Markdown (two decimals)."""
    lines = [
        "| r | architectures | tau(gap, mean) | tau(gap, Q1) | tau(gap, #params) |"
        " mean - #params [95%] | Q1 - #params [95%] |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in table.to_dict("records"):
        cells = [f"{row[m + '_advantage']:+.2f} [{row[m + '_low']:+.2f}, {row[m + '_high']:+.2f}]"
                 for m in ("mean", "q1")]  # fmt: skip
        taus = " | ".join(f"{row[t]:+.2f}" for t in ("tau_mean", "tau_q1", "tau_params"))
        lines.append(f"| {row['noise']} | {row['architectures']} | {taus} | {' | '.join(cells)} |")
    return "\n".join(lines)


def power_markdown(power: pd.DataFrame) -> str:
    """The power table (``results/power.csv``, from ``benchmarks/power_table.py``) in
    Markdown: one row per claim."""
    lines = [
        "| claim | design (units) | effect simulated | power | power at Holm's first step |"
        " passes with no effect | one control draw fails |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in power.to_dict("records"):
        figures = " | ".join(
            f"{r[c]:.3f}" for c in ("power", "power_holm", "size", "control_fails")
        )
        lines.append(
            f"| `{r['claim']}` | {r['design']} ({r['units']}) | {r['effect']} | {figures} |"
        )
    return "\n".join(lines)
