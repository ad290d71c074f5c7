"""Reports of the ``margin-qml`` task: do margins predict the generalisation gap?

Source: Hur & Park, ICML 2025, ``QPR/calculate_correlations.py`` (papers file §4): Kendall τ
(``scipy.stats.kendalltau``) and histogram mutual information (``np.histogram2d`` with
round(√n) bins, log base 2) between each measure and the gap. Added here (not in the paper):
each MI is compared with its permutation null, and the verdict is made per noise level from
the excess MI with a family-wise permutation p-value (:mod:`harness_margin_qml._stats`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from harness import Curve, LazyModule, Report
from harness_margin_qml import _stats as stats
from harness_margin_qml._claims import configuration_table, expand_groups
from harness_margin_qml._stats import histogram_mi

pd = LazyModule("pandas")

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn (light registration)
    from matplotlib.figure import Figure

__all__ = [
    "MEASURES",
    "MarginCorrelation",
    "correlation_table",
    "expand_groups",
    "histogram_mi",
    "margin_verdict",
    "measure_table",
    "scope_associations",
]

GAP = "generalization-gap"
TEST = "test-accuracy"
# label -> (metric column, family, axis label)
MEASURES: dict[str, tuple[str, str, str]] = {
    "Q1": ("margin-q25", "margin", "training-margin Q1 (misclassified = 0)"),
    "Q2": ("margin-q50", "margin", "training-margin median Q2 (misclassified = 0)"),
    "Q3": ("margin-q75", "margin", "training-margin Q3 (misclassified = 0)"),
    "mean": ("margin-mean", "margin", "mean signed training margin"),
    "#params": ("parameter-count", "parameters", "parameter count μ_param"),
    "eff>0.1": ("effective-parameters.above-0.1", "parameters", "#angles moved > 0.1 rad"),
    "eff>0.01": ("effective-parameters.above-0.01", "parameters", "#angles moved > 0.01 rad"),
}


MARGIN_FAMILY, PARAMETER_FAMILY, CONTROL_FAMILY = "margin", "parameters", "control"
# Negative control: the mean margin permuted across the models of each noise level.
SHUFFLED = "shuffled-margin"
ALPHA = 0.01
N_PERM, N_BOOT = 2000, 200
COLUMNS = [
    "noise",
    "measure",
    "kendall_tau",
    "tau_p",
    "mi_bits",
    "mi_null_mean",
    "mi_excess",
    "mi_p",
    "mi_excess_ci_low",
    "mi_excess_ci_high",
    "n",
    "family",
    "dataset",
    "n_qubits",
]


def scope_associations(
    target: np.ndarray,
    measures: Mapping[str, np.ndarray],
    *,
    strata: np.ndarray | None = None,
    n_perm: int = N_PERM,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> dict[str, stats.Association]:
    """:func:`stats.association` of every measure against one target, on shared permutations.

    Parameters
    ----------
    target : numpy.ndarray of float, shape (n,)
    measures : mapping of label to numpy.ndarray of float, shape (n,)
    strata : numpy.ndarray, shape (n,), optional
        Noise level of each model; permutations and bootstrap resamples stay inside a level
        (used for the pooled scope, where the gap and the margins both move with r).
    n_perm, n_boot : int
        Permutations of the null; bootstrap resamples (0: no interval).
    seed : int
        Seeds the permutations, resamples and nothing else.

    Returns
    -------
    dict of label to stats.Association
    """
    rng = np.random.default_rng(seed)
    n = len(target)
    perms = stats.permutations(n, n_perm, rng, strata)
    boots = stats._bootstraps(n, n_boot, rng, strata) if n_boot else None
    return {
        label: stats.association(target, x, perms, boots=boots, rng=rng)
        for label, x in measures.items()
    }


def margin_verdict(
    assoc: Mapping[str, stats.Association], families: Mapping[str, str], alpha: float = ALPHA
) -> dict[str, object]:
    """Does a margin statistic predict the gap better than parameter counts, here?

    True when (a) the best margin measure's excess MI is significant family-wise over the
    margin measures (Westfall-Young max-T on the shared permutations, p < ``alpha``), and
    (b) that excess is larger than the best parameter-count excess. ``alpha`` = 0.01 is
    about 0.05 / 5, Bonferroni over the paper's five noise levels.

    Parameters
    ----------
    assoc : mapping of label to stats.Association
        From :func:`scope_associations` (one scope, one target).
    families : mapping of label to family
        ``"margin"``, ``"parameters"`` or another family (ignored, e.g. the control).

    Returns
    -------
    dict
        best margin measure and excess, its family-wise p, best parameter-count measure and
        excess, its family-wise p, and ``margins predict better`` (bool).
    """

    def best(family: str) -> tuple[str, float, float]:
        labels = [k for k in assoc if families.get(k) == family]
        if not labels:
            return "", float("nan"), float("nan")
        top = max(labels, key=lambda k: assoc[k].mi_excess)
        p = stats.family_p(
            [assoc[k].mi_bits for k in labels],
            [assoc[k].null for k in labels],
            [assoc[k].mi_null_mean for k in labels],
        )
        return top, assoc[top].mi_excess, p

    m_label, m_excess, m_p = best(MARGIN_FAMILY)
    p_label, p_excess, p_p = best(PARAMETER_FAMILY)
    wins = bool(m_p < alpha and (np.isnan(p_excess) or m_excess > p_excess))
    return {
        "best margin": m_label,
        "margin excess MI (bits)": m_excess,
        "margin family p": m_p,
        "best parameter count": p_label,
        "parameter excess MI (bits)": p_excess,
        "parameter family p": p_p,
        "alpha": alpha,
        "margins predict better": wins,
    }


def _prepare(results: pd.DataFrame) -> pd.DataFrame:
    df = results[results["status"] == "ok"].copy() if "status" in results else results.copy()
    df = expand_groups(df)
    for column in [GAP, TEST] + [m[0] for m in MEASURES.values()]:
        if column in df:
            df[column] = pd.to_numeric(df[column], errors="coerce")
    df["noise"] = pd.to_numeric(df.get("dataset.noise", 0.0), errors="coerce").fillna(0.0)
    df["n_qubits"] = df.get("dataset.n_qubits", "?")
    return df


def _scope_measures(
    sub: pd.DataFrame, target: str, seed: int
) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Target and measure arrays of one scope, rows with a missing value dropped, plus the
    ``shuffled-margin`` control (mean margin permuted within each noise level)."""
    cols = [MEASURES[k][0] for k in MEASURES if MEASURES[k][0] in sub]
    sub = sub[[target, "noise", *cols]].replace([np.inf, -np.inf], np.nan).dropna()
    measures = {k: sub[v[0]].to_numpy(float) for k, v in MEASURES.items() if v[0] in sub}
    if "mean" in measures:
        rng = np.random.default_rng(seed + 1)
        shuffled = measures["mean"].copy()
        noise = sub["noise"].to_numpy()
        for level in np.unique(noise):
            idx = np.flatnonzero(noise == level)
            shuffled[idx] = shuffled[rng.permutation(idx)]
        measures[SHUFFLED] = shuffled
    return sub[target].to_numpy(float), measures, sub["noise"].to_numpy()


FAMILIES = {k: v[1] for k, v in MEASURES.items()} | {SHUFFLED: CONTROL_FAMILY}


def measure_table(
    results: pd.DataFrame,
    target: str = GAP,
    *,
    n_perm: int = N_PERM,
    n_boot: int = N_BOOT,
    seed: int = 0,
    prepared: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Kendall τ and null-corrected MI of every measure against ``target``, per r and pooled.

    Parameters
    ----------
    results : pandas.DataFrame
        One row per cell with ``dataset``, ``dataset.noise``, ``dataset.n_qubits``, the
        target and the measure columns of :data:`MEASURES`.
    target : str
        ``"generalization-gap"`` (default) or ``"test-accuracy"``.
    n_perm, n_boot, seed
        As for :func:`scope_associations`.

    Returns
    -------
    (measures, verdicts) : tuple of pandas.DataFrame
        ``measures`` has the columns :data:`COLUMNS` (noise is the level or "pooled"; the
        pooled null permutes within levels); ``verdicts`` one row per (dataset, n_qubits,
        scope) from :func:`margin_verdict`. Scopes with fewer than 3 models are left out.
    """
    df = results if prepared else _prepare(results)
    rows, verdicts = [], []
    if target not in df:
        return pd.DataFrame(columns=COLUMNS), pd.DataFrame()
    for (dataset, n_qubits), part in df.groupby(["dataset", "n_qubits"], sort=True):
        levels = sorted(part["noise"].unique())
        scopes = [(f"{r:g}", part[part["noise"] == r]) for r in levels]
        if len(levels) > 1:
            scopes.append(("pooled", part))
        for scope, sub in scopes:
            y, measures, noise = _scope_measures(sub, target, seed)
            if len(y) < 3 or np.ptp(y) == 0:
                continue
            strata = noise if scope == "pooled" else None
            assoc = scope_associations(
                y, measures, strata=strata, n_perm=n_perm, n_boot=n_boot, seed=seed
            )
            for label, a in assoc.items():
                rows.append(
                    {
                        "noise": scope,
                        "measure": label,
                        "kendall_tau": a.kendall_tau,
                        "tau_p": a.tau_p,
                        "mi_bits": a.mi_bits,
                        "mi_null_mean": a.mi_null_mean,
                        "mi_excess": a.mi_excess,
                        "mi_p": a.mi_p,
                        "mi_excess_ci_low": a.ci_low,
                        "mi_excess_ci_high": a.ci_high,
                        "n": a.n,
                        "family": FAMILIES[label],
                        "dataset": dataset,
                        "n_qubits": n_qubits,
                    }
                )
            verdicts.append(
                {"dataset": dataset, "n_qubits": n_qubits, "noise": scope, "n": len(y)}
                | margin_verdict(assoc, FAMILIES)
            )
    return pd.DataFrame(rows, columns=COLUMNS), pd.DataFrame(verdicts)


def correlation_table(results: pd.DataFrame, **kwargs) -> pd.DataFrame:
    """The ``measures`` table of :func:`measure_table` against the gap (kept for callers)."""
    return measure_table(results, **kwargs)[0]


def _scatter(df: pd.DataFrame) -> Figure:
    """One panel per measure against the gap, in a grid of at most four columns.

    A spare grid cell holds the legend; without one the legend goes below the grid.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [k for k, v in MEASURES.items() if v[0] in df]
    n = max(len(labels), 1)
    ncols = min(4, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(3.4 * ncols, 3.0 * nrows), sharey=True, squeeze=False
    )
    levels = sorted(df["noise"].unique())
    colours = plt.cm.viridis(np.linspace(0, 0.9, max(len(levels), 1)))
    for ax, label in zip(axes.flat, labels, strict=False):
        for colour, r in zip(colours, levels, strict=True):
            sub = df[df["noise"] == r]
            ax.scatter(sub[MEASURES[label][0]], sub[GAP], s=12, color=colour, label=f"r = {r:g}")
        ax.set_xlabel(MEASURES[label][2], fontsize=8)
        ax.set_title(label)
    for row in axes:
        row[0].set_ylabel("generalisation gap\n(train − test accuracy)")
    spare = list(axes.flat)[len(labels) :]
    for ax in spare:
        ax.set_axis_off()
    handles, names = axes[0, 0].get_legend_handles_labels()
    if spare:
        spare[0].legend(handles, names, title="label noise", loc="center", fontsize=8)
        fig.tight_layout()
    else:
        fig.legend(
            handles, names, title="label noise", loc="lower center", ncol=len(names), fontsize=8
        )
        fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def _accuracy_table(df: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in ("dataset", "method", "method.shared", "method.layers", "noise") if c in df]
    cols = [c for c in ("train-accuracy", "test-accuracy", GAP, "margin-q50") if c in df]
    # dropna=False keeps methods without a param of the key (SEL has no ``shared``).
    groups = df.groupby(keys, dropna=False)
    table = groups[cols].agg(lambda s: pd.to_numeric(s, errors="coerce").mean())
    table["cells"] = groups.size()
    return table.reset_index()


class MarginCorrelation(Report):
    """Margins vs parameter counts as predictors of the generalisation gap, null-corrected.

    Source: Hur & Park, ICML 2025, Table 1 / ``calculate_correlations.py`` (Kendall τ and
    histogram MI of Q1, Q2, mean margin, #params, #effective params against the gap, per
    label-noise level r); the permutation null, bootstrap interval, ``shuffled-margin``
    control and per-r verdict are this plugin's additions (see :mod:`harness_margin_qml._stats`).

    Returns
    -------
    dict
        ``generalisation-measures`` (τ, τ p, MI, null mean, excess, permutation p and
        bootstrap interval of each measure against the gap, per r and pooled),
        ``test-accuracy-measures`` (the same against test accuracy), ``claim`` (per r and
        pooled: do margins predict the gap better than parameter counts, from the
        null-corrected figures; **model-level** null, which treats the models of one
        configuration as independent: descriptive only), ``configuration-level`` (the
        claims' tau-b over architecture means per dataset, qubits and r, with the jackknife
        intervals of the margins' advantage over the parameter count:
        :func:`_claims.configuration_table`), ``accuracy`` (mean train/test accuracy, gap and Q2 per
        method, layers and noise) and ``scatter`` (figure; ``scatter-<dataset>`` for each
        dataset when there are several).
    """

    name = "margin-correlation"
    task = "margin-qml"

    def build(
        self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]
    ) -> dict[str, object]:
        df = _prepare(results)
        if df.empty or GAP not in df:
            return {}
        measures, claim = measure_table(df, GAP, prepared=True)
        out: dict[str, object] = {"generalisation-measures": measures, "claim": claim}
        if TEST in df:
            out["test-accuracy-measures"] = measure_table(df, TEST, n_boot=0, prepared=True)[0]
        if {"dataset.n_qubits", "dataset.noise", "method.layers"} <= set(results.columns):
            out["configuration-level"] = configuration_table(results)
        out["accuracy"] = _accuracy_table(df)
        datasets = sorted(df["dataset"].dropna().unique())
        if len(datasets) <= 1:
            out["scatter"] = _scatter(df)
        else:  # one figure per dataset: the gaps of different tasks are not comparable
            for name in datasets:
                fig = _scatter(df[df["dataset"] == name])
                fig.suptitle(name, y=1.02)
                out[f"scatter-{name}"] = fig
        return out
