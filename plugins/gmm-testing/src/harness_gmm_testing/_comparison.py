"""Henze-Zirkler against the Hermite test: n_0.9 ratios measured from stored runs, the same
ratios from the power models of :mod:`harness_gmm_testing._power_model`, and the check of
those models against every measured power (rendered for the README by
:mod:`harness_gmm_testing._readme`).

Source: Henze and Zirkler (1990) for HZ; docs/papers/gmm-testing.md §3.2 and §5 for the
Hermite test and n_0.9; the comparison itself is this benchmark's (the paper has no HZ).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from harness import LazyModule
from harness_gmm_testing import _power_model as model
from harness_gmm_testing.data import PancakeLaw
from harness_gmm_testing.metrics import wilson_interval
from harness_gmm_testing.reports import n_for_power

pd = LazyModule("pandas")

__all__ = [
    "HERMITE",
    "HZ",
    "MATCHED_DEGREES",
    "MODEL_DIMENSIONS",
    "measured_ratios",
    "model_check",
    "model_ratios",
    "oracle_rows",
    "uniform_law",
]

HZ, HERMITE = "henze-zirkler", "hermite-moment-test"
MODEL_DIMENSIONS = (2, 4, 8, 16, 32)
"""d of the model table; beyond d = 32 HZ's null moments lose precision in float64."""
_Z95 = 1.959963984540054


MATCHED_DEGREES = {4: 3, 8: 5, 16: 5, 32: 7}
"""m of the uniform-weight fits (README); passing it stops the fit there, which gives the
same centres without the failing attempt at m + 2 (25 s for k = 32 on a loaded core)."""


@functools.lru_cache(maxsize=32)
def uniform_law(k: int, delta: float) -> PancakeLaw:
    """The 1-D law B of ``pancakes-uniform`` with k centres and thinness delta."""
    from harness_gmm_testing.datasets import UniformPancakes

    moments = MATCHED_DEGREES.get(k, 0)
    params = UniformPancakes.Params(n=2, d=1, trials=1, k=k, delta=delta, moments=moments)
    return UniformPancakes().load(params, 0).law


def model_ratios(
    ks: tuple[int, ...] = (4, 8, 32),
    deltas: tuple[float, ...] = (0.5, 0.8, 0.95),
    ds: tuple[int, ...] = MODEL_DIMENSIONS,
) -> pd.DataFrame:
    """Modelled n_0.9 of both tests and their ratio HZ / Hermite per (k, delta, d).

    Returns
    -------
    DataFrame
        Columns ``k, m, delta, d, hermite_n90, hz_n90, ratio`` (a ratio < 1: HZ needs fewer).
    """
    rows = []
    for k in ks:
        for delta in deltas:
            law = uniform_law(k, delta)
            for d in ds:
                her = model.n_at_power(model.hermite_power, law, d)
                hz = model.n_at_power(model.hz_power, law, d)
                rows.append(
                    dict(k=k, m=law.matched_degree, delta=delta, d=d, hermite_n90=her,
                         hz_n90=hz, ratio=hz / her)
                )  # fmt: skip
    return pd.DataFrame(rows)


def oracle_rows(results: pd.DataFrame) -> pd.DataFrame:
    """Ok pancakes-uniform rows of HZ and of the oracle degree-(m+1) Hermite test."""
    df = results[(results["status"] == "ok") & (results["dataset"] == "pancakes-uniform")]
    df = df[df["method"].isin([HZ, HERMITE])].copy()
    for col in ("method.degree", "method.max_degree"):
        if col in df:
            value = pd.to_numeric(df[col], errors="coerce").fillna(0)
            df = df[(df["method"] != HERMITE) | (value == 0)]
    return df


def measured_ratios(results: pd.DataFrame) -> pd.DataFrame:
    """Measured n_0.9 ratios HZ / Hermite where both tests ran on an n grid of one instance.

    Each test's n_0.9 is :func:`harness_gmm_testing.reports.n_for_power` (probit fit, 95%
    interval with the Monte Carlo threshold spread); the ratio's interval adds the two
    log-variances (independent samples). The model's ratio is given alongside.

    Returns
    -------
    DataFrame
        Columns ``k, m, delta, d, hermite_n90, hermite_low, hermite_high, hz_n90, hz_low,
        hz_high, ratio, ratio_low, ratio_high, model_ratio``.
    """
    df = oracle_rows(results)
    rows = []
    for (k, delta), instance in df.groupby(["dataset.k", "dataset.delta"]):
        for d, cell in n_for_power(instance).groupby("d"):
            rows += _ratio_row(cell, int(float(k)), float(delta), int(d))
    return pd.DataFrame(rows).sort_values(["k", "delta", "d"], ignore_index=True)


def _ratio_row(cell: pd.DataFrame, k: int, delta: float, d: int) -> list[dict]:
    """[] or the one ratio row of an instance and d where both tests bracket n_0.9."""
    tests = cell.set_index("test")
    if not {HZ, HERMITE} <= set(tests.index):
        return []
    her, hz = tests.loc[HERMITE], tests.loc[HZ]
    if not (np.isfinite(her["n_for_power"]) and np.isfinite(hz["n_for_power"])):
        return []
    law = uniform_law(k, delta)
    se = math.hypot(her["log_se"], hz["log_se"])
    ratio = hz["n_for_power"] / her["n_for_power"]
    modelled = model.n_at_power(model.hz_power, law, d) / model.n_at_power(
        model.hermite_power, law, d
    )
    return [
        dict(k=k, m=law.matched_degree, delta=delta, d=d, hermite_n90=her["n_for_power"],
             hermite_low=her["ci_low"], hermite_high=her["ci_high"], hz_n90=hz["n_for_power"],
             hz_low=hz["ci_low"], hz_high=hz["ci_high"], ratio=ratio,
             ratio_low=ratio * math.exp(-_Z95 * se), ratio_high=ratio * math.exp(_Z95 * se),
             model_ratio=modelled)
    ]  # fmt: skip


def model_check(results: pd.DataFrame) -> pd.DataFrame:
    """Modelled against measured power at every stored HZ and oracle-Hermite cell.

    The measured power's 95% interval is Wilson's, each side widened in quadrature by
    1.96 mc_sd (the cell's Monte Carlo threshold), as in the claims; ``inside`` says whether
    the modelled power lies in it. Cells of one instance and n in several files are pooled.

    Returns
    -------
    DataFrame
        Columns ``test, k, delta, d, n, trials, power, low, high, model, inside``.
    """
    df = oracle_rows(results)
    for col in ("k", "d", "n", "trials"):
        df[col] = pd.to_numeric(df[f"dataset.{col}"]).astype(int)
    df["delta"] = pd.to_numeric(df["dataset.delta"])
    df["hits"] = np.rint(df["power.rate"] * df["trials"])
    mc = pd.to_numeric(df.get("power.mc_sd", 0.0)).fillna(0.0)
    df["mc_var"] = (mc * df["trials"]) ** 2
    keys = ["method", "k", "delta", "d", "n"]
    pooled = df.groupby(keys)[["hits", "trials", "mc_var"]].sum().reset_index()
    power = pooled["hits"] / pooled["trials"]
    mc = np.sqrt(pooled["mc_var"]) / pooled["trials"]
    wilson = np.array(
        [
            wilson_interval(int(h), int(t))
            for h, t in zip(pooled["hits"], pooled["trials"], strict=True)
        ]
    )
    modelled = [
        (model.hz_power if r.method == HZ else model.hermite_power)(
            uniform_law(int(r.k), float(r.delta)), float(r.n), int(r.d)
        )
        for r in pooled.itertuples()
    ]
    out = pooled.rename(columns={"method": "test"}).assign(
        power=power,
        low=np.maximum(power - np.hypot(power - wilson[:, 0], _Z95 * mc), 0.0),
        high=np.minimum(power + np.hypot(wilson[:, 1] - power, _Z95 * mc), 1.0),
        model=modelled,
    )
    out["inside"] = (out["model"] >= out["low"]) & (out["model"] <= out["high"])
    columns = ["test", "k", "delta", "d", "n", "trials", "power", "low", "high", "model"]
    return out[[*columns, "inside"]].sort_values(columns[:5], ignore_index=True)
