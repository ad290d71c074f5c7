"""Claims of Hur & Park (ICML 2025) as harness claims, tested at the level of configurations.

Source: Hur & Park, "Understanding Generalization in Quantum Machine Learning with Margins",
ICML 2025 (arXiv 2411.06919), Section 5 and the official code's committed results
(``takh04/Q-margin``, ``QPR/results_correlation/``; papers file §5).

The unit of replication. The paper's 75 models per noise level are 15 *configurations*
(ansatz × depth L) × 5 experiments, and models of one configuration are alike: their gaps,
margins and parameter counts share the configuration's effects. A test that permutes the
gap across models treats 75 models as independent; with configuration-level effects only
(no margin-gap link inside a configuration) it says "yes" far above its level (issue 33: a
random number per configuration in place of the margins "predicts" the gap in 18 of 100
trials on the authors' data). Here every statistic treats configurations as the exchangeable
units:

- :func:`block_mi_excess`: histogram MI (the paper's statistic, round(√n) bins, bits) of a
  measure with the gap, against the null of whole configurations' gaps permuted among
  configurations (``harness.stats.permutation_test(permute="between")``; the experiment
  index is kept, since one experiment's training states are shared by all configurations);
- :func:`excess_difference`: the best margin measure's excess MI minus the best parameter
  measure's, with a bootstrap interval over configurations;
- :func:`configuration_tau`: Kendall τ between configuration means, bootstrap over
  configurations.

Every claim's negative control puts a random number per configuration in place of its
measure (the variant the model-level null fails on); ``tests/test_claims.py`` also runs
uniform noise per model, 200 trials each.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from harness import stats as hstats
from harness.claims import Cells, Claim, Greater, Less, Source, Status
from harness.stats import Estimate
from harness_margin_qml._stats import bin_codes, mi_from_codes
from harness_margin_qml.reports import expand_groups

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CLAIMS",
    "MARGIN_MEASURES",
    "PARAMETER_MEASURES",
    "block_mi_excess",
    "configuration_markdown",
    "configuration_models",
    "configuration_table",
    "configuration_tau",
    "excess_difference",
    "kendall_tau_b",
    "power_markdown",
    "random_per_configuration",
    "synthetic_models",
]

GAP = "generalization-gap"
MARGIN_MEASURES = ("margin-q25", "margin-q50", "margin-q75", "margin-mean")
PARAMETER_MEASURES = (
    "parameter-count",
    "effective-parameters.above-0.1",
    "effective-parameters.above-0.01",
)
AUTHORS = "takh04/Q-margin"
PAPER = Source("Hur & Park, ICML 2025", "2411.06919", "Section 5, Figure 3 and Table 3")


# -- the units: models grouped into configurations ----------------------------------------


def configuration_models(results: pd.DataFrame, columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per model, with its ``configuration`` and only a balanced design kept.

    Group cells are expanded (:func:`reports.expand_groups`); the configuration is the
    method without ``-group``, ``method.shared`` and ``method.layers``. Only seeds that every
    configuration has are kept, so that each configuration is a block of the same seeds
    (a block permutation then maps models one to one).

    Parameters
    ----------
    results : pandas.DataFrame
        A ``harness results`` table (or :func:`reference.authors_cluster_10q`).
    columns : tuple of str
        Metric columns to make numeric; rows missing one are dropped.

    Returns
    -------
    pandas.DataFrame
        Sorted by configuration and seed, with integer ``config_index`` and ``seed_index``.

    Raises
    ------
    ValueError
        Fewer than 3 configurations or no seed shared by all.
    """
    import pandas as pd

    df = expand_groups(results.copy())
    if "status" in df:
        df = df[df["status"].eq("ok")]
    df = df.copy()
    for column in (GAP, *columns):
        df[column] = pd.to_numeric(df[column], errors="coerce")
    df = df.dropna(subset=[GAP, *columns])
    method = df["method"].astype(str).str.removesuffix("-group")
    shared = df.get("method.shared", pd.Series("", index=df.index)).fillna("").astype(str)
    layers = df["method.layers"].astype(str)
    df["configuration"] = method + "|" + shared.str.lower() + "|L" + layers
    df = df.drop_duplicates(["configuration", "seed"])
    seeds = set(df["seed"])
    for _, part in df.groupby("configuration"):
        seeds &= set(part["seed"])
    df = df[df["seed"].isin(seeds)].sort_values(["configuration", "seed"])
    if df["configuration"].nunique() < 3 or not seeds:
        raise ValueError(
            f"need >= 3 configurations sharing a seed, got {df['configuration'].nunique()}"
            f" configurations and {len(seeds)} shared seeds"
        )
    df["config_index"] = df["configuration"].factorize(sort=True)[0]
    df["seed_index"] = df["seed"].factorize(sort=True)[0]
    return df.reset_index(drop=True)


def _table(models: pd.DataFrame, column: str) -> np.ndarray:
    """``column`` as a (configurations, seeds) array."""
    shape = (models["config_index"].max() + 1, models["seed_index"].max() + 1)
    out = np.full(shape, np.nan)
    out[models["config_index"], models["seed_index"]] = models[column].to_numpy(float)
    return out


def _bins(n: int) -> int:
    return max(1, round(math.sqrt(n)))


# -- statistics ----------------------------------------------------------------------------


def block_mi_excess(
    models: pd.DataFrame,
    measure: str,
    permutations: int = 2000,
    seed: int = 0,
    *,
    permute: str = "configurations",
) -> Estimate:
    """Histogram MI of ``measure`` with the gap in excess of a configuration-level null.

    The null moves whole configurations' gaps among configurations, each model keeping its
    seed (the row of the seed's training data): the ``permute="between"`` test of
    ``harness.stats.permutation_test`` over configuration blocks, vectorised
    (``tests/test_claims.py`` checks that both give the same null). Bins: round(√n) per
    axis with the edges of ``np.histogram2d`` (the paper's ``mutual_information_hist``).

    Parameters
    ----------
    models : pandas.DataFrame
        From :func:`configuration_models` (balanced).
    measure : str
        The metric column (a margin statistic, a parameter count, ...).
    permute : {"configurations", "models"}
        ``"models"`` permutes the gap across models, treating them as independent: the
        wrong null, kept for the tests that show it failing.

    Returns
    -------
    Estimate
        ``estimate`` = MI − mean null MI (bits); ``[low, high]`` = MI minus the null's 97.5%
        and 2.5% quantiles, so that the interval excludes 0 exactly when the one-sided
        permutation test rejects at 0.025; ``p_value`` = (1 + #{null ≥ MI}) / (1 + P);
        ``n`` the configurations; ``mde`` the excess detected with power 0.8 (the null's
        95% quantile − its mean + 0.84 sd, as ``permutation_test``'s).
    """
    rng = np.random.default_rng(seed)
    gap, values = _table(models, GAP), _table(models, measure)
    n_config = gap.shape[0]
    bins = _bins(gap.size)
    g = bin_codes(gap.ravel(), bins).reshape(gap.shape)
    m = bin_codes(values.ravel(), bins)
    observed = float(mi_from_codes(m, g.ravel(), bins))
    if permute == "configurations":
        perms = rng.permuted(np.tile(np.arange(n_config), (permutations, 1)), axis=1)
        shuffled = g[perms].reshape(permutations, -1)
    elif permute == "models":
        perms = rng.permuted(np.tile(np.arange(g.size), (permutations, 1)), axis=1)
        shuffled = g.ravel()[perms]
    else:
        raise ValueError(f"permute must be 'configurations' or 'models', got {permute!r}")
    null = mi_from_codes(m[None], shuffled, bins)
    null_mean = float(null.mean())
    q_low, q_high, q95 = np.quantile(null, [0.025, 0.975, 0.95])
    p = float((1 + np.sum(null >= observed - 1e-12)) / (1 + permutations))
    mde = float(q95 - null_mean + 0.84 * null.std(ddof=1))
    return Estimate(
        observed - null_mean,
        float(observed - q_high),
        float(observed - q_low),
        p,
        n_config,
        mde,
        f"histogram MI of {measure} with the gap minus its null ({permutations} permutations"
        f" of {n_config if permute == 'configurations' else g.size} {permute})",
        extra={"mi_bits": observed, "null_mean": null_mean},
    )


def _codes(x: np.ndarray, bins: int) -> np.ndarray:
    """:func:`stats.bin_codes` of every row of ``x`` (..., n) at once (each row its edges)."""
    lo, hi = x.min(-1), x.max(-1)
    flat = lo == hi
    lo, hi = np.where(flat, lo - 0.5, lo), np.where(flat, hi + 0.5, hi)
    edges = np.linspace(lo, hi, bins + 1, axis=-1)  # (..., bins + 1), as np.histogram2d's
    codes = (x[..., None] >= edges[..., None, :]).sum(-1) - 1
    return np.clip(codes, 0, bins - 1)


def _excess(gap: np.ndarray, measure: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """MI(gap, measure) minus its mean over block permutations, for many resamples at once.

    Parameters
    ----------
    gap, measure : numpy.ndarray, shape (B, C, S)
        B resamples of C configurations x S seeds.
    perms : numpy.ndarray of int, shape (B, K, C)
        K permutations of the configurations per resample.

    Returns
    -------
    numpy.ndarray, shape (B,)
    """
    b, c, s = gap.shape
    bins = _bins(c * s)
    g = _codes(gap.reshape(b, -1), bins).reshape(b, c, s)
    m = _codes(measure.reshape(b, -1), bins)
    observed = mi_from_codes(m, g.reshape(b, -1), bins)
    shuffled = g[np.arange(b)[:, None, None], perms].reshape(b, perms.shape[1], -1)
    return observed - mi_from_codes(m[:, None, :], shuffled, bins).mean(1)


def excess_difference(
    models: pd.DataFrame,
    margins: tuple[str, ...],
    parameters: tuple[str, ...],
    resamples: int = 1000,
    null_draws: int = 50,
    seed: int = 0,
) -> Estimate:
    """Best margin measure's excess MI minus the best parameter measure's, with a
    bootstrap interval over configurations.

    Each excess is MI − its mean over block permutations (configurations' gaps permuted
    among configurations; 4 × ``null_draws`` on the data, ``null_draws`` per resample). A
    resample draws configurations with replacement (each with all its seeds) and recomputes
    bins, nulls and both maxima.

    Returns
    -------
    Estimate
        ``estimate`` the difference on the data (bits; ``extra`` gives each measure's
        excess), percentile interval of the resampled differences, the two-sided bootstrap
        p-value ``2 min(P(d* <= 0), P(d* >= 0))`` (at least 1 / (resamples + 1)), ``n``
        configurations, ``mde`` from the bootstrap standard error.
    """
    rng = np.random.default_rng(seed)
    gap = _table(models, GAP)
    tables = {c: _table(models, c) for c in (*margins, *parameters)}
    n_config = gap.shape[0]

    def differences(index: np.ndarray, draws: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        perms = rng.permuted(np.tile(np.arange(n_config), (len(index), draws, 1)), axis=2)
        ex = {c: _excess(gap[index], t[index], perms) for c, t in tables.items()}
        best_margin = np.max([ex[c] for c in margins], axis=0)
        return best_margin - np.max([ex[c] for c in parameters], axis=0), ex

    observed, excess = differences(np.arange(n_config)[None], 4 * null_draws)
    chunks = [
        differences(rng.integers(0, n_config, (min(200, resamples - start), n_config)),
                    null_draws)[0]
        for start in range(0, resamples, 200)
    ]  # fmt: skip
    draws = np.concatenate(chunks)
    low, high = np.quantile(draws, [0.025, 0.975])
    p = float(min(1.0, 2 * min(np.mean(draws <= 0), np.mean(draws >= 0))))
    p = max(p, 1 / (resamples + 1))
    se = float(draws.std(ddof=1))
    best_m = max(margins, key=lambda c: excess[c][0])
    best_p = max(parameters, key=lambda c: excess[c][0])
    return Estimate(
        float(observed[0]),
        float(low),
        float(high),
        p,
        n_config,
        hstats.minimum_detectable_effect(se),
        f"excess MI of {best_m} minus {best_p} (best of each family), bootstrap over"
        f" {n_config} configurations ({resamples} resamples)",
        extra={f"excess {c}": float(v[0]) for c, v in excess.items()},
    )


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall τ-b of the rows of ``x`` and ``y`` (..., n): NaN where a row is constant."""
    dx = np.sign(x[..., :, None] - x[..., None, :])
    dy = np.sign(y[..., :, None] - y[..., None, :])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (dx * dy).sum((-2, -1)) / np.sqrt(
            np.abs(dx).sum((-2, -1)) * np.abs(dy).sum((-2, -1))
        )


def configuration_tau(
    models: pd.DataFrame, measure: str, resamples: int = 2000, seed: int = 0
) -> Estimate:
    """Kendall τ-b between the configurations' mean gap and mean ``measure``.

    Returns
    -------
    Estimate
        τ-b over configuration means, percentile bootstrap interval over configurations
        (resamples with a constant side are left out), scipy's two-sided p-value, ``n``
        configurations, ``mde`` from the bootstrap standard error.
    """
    from scipy.stats import kendalltau

    means = models.groupby("config_index")[[GAP, measure]].mean()
    g, m = means[GAP].to_numpy(), means[measure].to_numpy()
    result = kendalltau(g, m)
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(g), (resamples, len(g)))
    draws = kendall_tau_b(g[index], m[index])
    draws = draws[np.isfinite(draws)]
    low, high = np.quantile(draws, [0.025, 0.975])
    se = float(np.std(draws, ddof=1))
    return Estimate(
        float(result.statistic),
        float(low),
        float(high),
        float(result.pvalue),
        len(g),
        hstats.minimum_detectable_effect(se),
        f"Kendall tau-b of configuration means, bootstrap over {len(g)} configurations",
    )


def random_per_configuration(
    results: pd.DataFrame, columns: tuple[str, ...], seed: int
) -> pd.DataFrame:
    """``columns`` replaced by one U[0, 1) number per configuration (per column): the
    configuration-level effect with no link to the gap."""
    models = configuration_models(results, columns)
    rng = np.random.default_rng(seed)
    n_config = models["config_index"].max() + 1
    for column in columns:
        models[column] = rng.random(n_config)[models["config_index"]]
    return models


def synthetic_models(
    tau: float, n_config: int, n_seed: int, icc: float, rng: np.random.Generator
) -> pd.DataFrame:
    """Configurations x seeds of a gap and a ``margin-mean`` with Kendall τ ``tau``.

    Gap and measure are standard bivariate normal with correlation ρ = sin(π τ / 2) (so
    that Kendall's τ is ``tau``), split into a configuration effect (variance ``icc``, the
    intraclass correlation) and a model effect (1 − ``icc``), each pair correlated ρ.

    Returns
    -------
    pandas.DataFrame
        ``n_config * n_seed`` rows with ``configuration``, ``seed``, ``config_index``,
        ``seed_index``, ``generalization-gap`` and ``margin-mean``.
    """
    import pandas as pd

    rho = math.sin(math.pi * tau / 2)
    cov = [[1.0, rho], [rho, 1.0]]
    config = rng.multivariate_normal([0, 0], cov, n_config)[:, None, :]
    model = rng.multivariate_normal([0, 0], cov, (n_config, n_seed))
    values = math.sqrt(icc) * config + math.sqrt(1 - icc) * model
    c, s = np.meshgrid(np.arange(n_config), np.arange(n_seed), indexing="ij")
    columns = {"configuration": c, "seed": s, "config_index": c, "seed_index": s,
               GAP: values[..., 0], "margin-mean": values[..., 1]}  # fmt: skip
    return pd.DataFrame({k: v.ravel() for k, v in columns.items()})


_SIDE = {Status.REPRODUCED: "above 0", Status.INCONCLUSIVE: "covers 0",
         Status.NOT_REPRODUCED: "below 0"}  # fmt: skip


def configuration_table(
    results: pd.DataFrame,
    permutations: int = 2000,
    resamples: int = 400,
    null_draws: int = 10,
) -> pd.DataFrame:
    """The two margin statistics of the claims at every (dataset, qubits, noise level).

    For each scope with at least 3 configurations sharing a seed: the mean margin's excess
    MI over the configuration-level null (:func:`block_mi_excess`) and the best margin
    measure's excess minus the best parameter measure's (:func:`excess_difference`), each
    with its interval, p-value, minimum detectable effect and where the interval lies
    (``above 0``, ``covers 0``, ``below 0``). Not corrected for the number of scopes: a
    description per noise level, not a claim.

    Returns
    -------
    pandas.DataFrame
        One row per scope: ``dataset``, ``n_qubits``, ``noise``, ``configurations``,
        ``seeds``, then ``information``/``difference`` each with ``_estimate``, ``_low``,
        ``_high``, ``_p``, ``_mde``, ``_interval``.
    """
    import pandas as pd

    df = expand_groups(results)
    rows = []
    keys = ["dataset", "dataset.n_qubits", "dataset.noise"]
    for (dataset, n_qubits, noise), part in df.groupby(keys, sort=True):
        margins = tuple(c for c in MARGIN_MEASURES if c in part and part[c].notna().any())
        params = tuple(c for c in PARAMETER_MEASURES if c in part and part[c].notna().any())
        if "margin-mean" not in margins or not params:
            continue
        try:
            models = configuration_models(part, (*margins, *params))
        except ValueError:
            continue
        row = {"dataset": dataset, "n_qubits": n_qubits, "noise": noise,
               "configurations": models["config_index"].max() + 1,
               "seeds": models["seed_index"].max() + 1}  # fmt: skip
        stats = {
            "information": block_mi_excess(models, "margin-mean", permutations),
            "difference": excess_difference(models, margins, params, resamples, null_draws),
        }
        for name, e in stats.items():
            row |= {f"{name}_estimate": e.estimate, f"{name}_low": e.low,
                    f"{name}_high": e.high, f"{name}_p": e.p_value, f"{name}_mde": e.mde,
                    f"{name}_interval": _SIDE[Greater(0.0).decide(e)]}  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


def configuration_markdown(table: pd.DataFrame) -> str:
    """:func:`configuration_table` in Markdown (two decimals; p to three)."""
    lines = ["| r | configurations x seeds | mean margin excess MI [95%] (p; mde) |"
             " margin minus parameter excess [95%] (p; mde) |", "|---|---|---|---|"]  # fmt: skip
    for row in table.itertuples(index=False):
        cells = []
        for name in ("information", "difference"):
            g = {k: getattr(row, f"{name}_{k}") for k in
                 ("estimate", "low", "high", "p", "mde", "interval")}  # fmt: skip
            cells.append(f"{g['estimate']:+.2f} [{g['low']:+.2f}, {g['high']:+.2f}]"
                         f" ({g['p']:.3f}; {g['mde']:.2f}), {g['interval']}")  # fmt: skip
        lines.append(f"| {row.noise} | {row.configurations} x {row.seeds} | " + " | ".join(cells)
                     + " |")  # fmt: skip
    return "\n".join(lines)


def power_markdown(power: pd.DataFrame) -> str:
    """The power table (``results/power.csv``, from ``benchmarks/power_table.py``) in
    Markdown: one row per design, τ and ICC, one column per test."""
    tests = [c for c in power.columns if c not in ("design", "tau", "icc")]
    lines = ["| design | tau | ICC | " + " | ".join(tests) + " |",
             "|---|---|---|" + "---|" * len(tests)]  # fmt: skip
    for row in power.itertuples(index=False):
        cells = [f"{v:.3f}" for v in row[3:]]
        lines.append(f"| {row[0]} | {row[1]:.1f} | {row[2]:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# -- the claims ----------------------------------------------------------------------------

_CLUSTER_8Q = {"n_qubits": 8, "n_classes": 4, "n_train": 20, "noise": 1.0}
_CLUSTER_10Q = {"n_qubits": 10, "n_classes": 4, "n_train": 20, "n_test": 1000, "noise": 1.0}
_GROUPS = ("qcnn-group", "strongly-entangling-group")


class _MarginInformation(Claim):
    """Base: the mean margin's MI with the gap exceeds a configuration-level null (r = 1).

    Source: Hur & Park, ICML 2025, Section 5 (QPR with label noise; MI from
    ``QPR/calculate_correlations.py``); statistic :func:`block_mi_excess`.
    """

    task = "margin-qml"
    hypothesis = Greater(0.0)
    unit = "configuration"
    measure: ClassVar[str] = "margin-mean"
    permutations: ClassVar[int] = 2000
    control_description = "the mean margin replaced by one random number per configuration (seed 1)"

    def statistic(self, results: pd.DataFrame) -> Estimate:
        models = configuration_models(results, (self.measure,))
        return block_mi_excess(models, self.measure, self.permutations)

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        return random_per_configuration(results, (self.measure,), seed=1)


class _MarginsBeatParameters(Claim):
    """Base: best margin excess MI minus best parameter excess MI > 0, bootstrap interval.

    Source: Hur & Park, ICML 2025, Section 5 ("margins predict the gap better than
    parameter counts"); statistic :func:`excess_difference`.
    """

    task = "margin-qml"
    hypothesis = Greater(0.0)
    unit = "configuration"
    margins: ClassVar[tuple[str, ...]] = MARGIN_MEASURES
    resamples: ClassVar[int] = 400
    null_draws: ClassVar[int] = 10
    control_description = (
        "every margin measure replaced by one random number per configuration (seed 1)"
    )

    def _margins(self, results: pd.DataFrame) -> tuple[str, ...]:
        """The margin measures these rows hold (the authors saved no Q3)."""
        expanded = expand_groups(results)
        return tuple(c for c in self.margins if c in expanded and expanded[c].notna().any())

    def statistic(self, results: pd.DataFrame) -> Estimate:
        margins = self._margins(results)
        models = configuration_models(results, (*margins, *PARAMETER_MEASURES))
        return excess_difference(models, margins, PARAMETER_MEASURES, self.resamples,
                                 self.null_draws)  # fmt: skip

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        return random_per_configuration(results, self._margins(results), seed=1)


class AuthorsMarginInformation(_MarginInformation):
    name = "margin-information-authors-r1"
    source = PAPER
    statement = (
        "On the authors' own 75 ten-qubit Cluster models at r = 1 (15 configurations x 5"
        " experiments), the mean training margin carries mutual information about the gap"
        " beyond a configuration-level null (paper: 1.11 bits raw, parameter count 0.42)."
    )
    requires = (Cells("cluster-phases", ("qcnn", "strongly-entangling"),
                      {"source": AUTHORS, "n_qubits": 10, "noise": 1.0}, min_seeds=5),)  # fmt: skip


class AuthorsMarginsBeatParameters(_MarginsBeatParameters):
    name = "margins-beat-parameters-authors-r1"
    source = PAPER
    statement = (
        "On the authors' 75 ten-qubit Cluster models at r = 1, the best margin measure's"
        " excess MI over the configuration-level null exceeds the best parameter measure's"
        " (paper, raw MI: mean margin 1.11 bits against 0.42-0.46)."
    )
    requires = AuthorsMarginInformation.requires


class ClusterMarginInformation8q(_MarginInformation):
    name = "margin-information-cluster-8q-r1"
    source = PAPER
    statement = (
        "Re-trained at 8 qubits (suites/margin-qml.yaml, r = 1, 12 configurations x 4"
        " seeds), the mean training margin carries mutual information about the gap beyond"
        " a configuration-level null."
    )
    requires = (Cells("cluster-phases", _GROUPS, _CLUSTER_8Q, min_seeds=4),)


class ClusterMarginsBeatParameters8q(_MarginsBeatParameters):
    name = "margins-beat-parameters-cluster-8q-r1"
    source = PAPER
    statement = (
        "Re-trained at 8 qubits (r = 1), the best margin measure's excess MI over the"
        " configuration-level null exceeds the best parameter measure's."
    )
    requires = ClusterMarginInformation8q.requires


class ClusterMarginInformation10q(_MarginInformation):
    name = "margin-information-cluster-10q-r1"
    source = PAPER
    statement = (
        "Re-trained at the paper's scale (10 qubits, r = 1, 15 configurations x 5 seeds), the"
        " mean training margin carries mutual information about the gap beyond a"
        " configuration-level null (paper: 1.11 bits raw)."
    )
    requires = (Cells("cluster-phases", _GROUPS, _CLUSTER_10Q, min_seeds=5),)


class ClusterMarginsBeatParameters10q(_MarginsBeatParameters):
    name = "margins-beat-parameters-cluster-10q-r1"
    source = PAPER
    statement = (
        "Re-trained at the paper's scale (10 qubits, r = 1), the best margin measure's excess"
        " MI over the configuration-level null exceeds the best parameter measure's."
    )
    requires = ClusterMarginInformation10q.requires


class _TfimTau(Claim):
    """Base: Kendall τ(gap, Q1) over configuration means is negative at r = 0.

    Source: Hur & Park, ICML 2025, TFIM results (official committed results: τ(gap, Q1) =
    −0.56 at 10 qubits); statistic :func:`configuration_tau`.
    """

    task = "margin-qml"
    hypothesis = Less(0.0)
    unit = "configuration"
    measure: ClassVar[str] = "margin-q25"
    source = Source("Hur & Park, ICML 2025", "2411.06919", "TFIM results (papers file §5)")
    control_description = "Q1 replaced by one random number per configuration (seed 1)"

    def statistic(self, results: pd.DataFrame) -> Estimate:
        models = configuration_models(results, (self.measure,))
        return configuration_tau(models, self.measure)

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        return random_per_configuration(results, (self.measure,), seed=1)


class TfimTau8q(_TfimTau):
    name = "tfim-margin-gap-tau-8q"
    statement = (
        "On TFIM phases without label noise (8 qubits, 12 configurations x 2 seeds), a larger"
        " first-quartile training margin goes with a smaller gap: Kendall tau(gap, Q1) < 0"
        " over configuration means (paper, 10 qubits, 75 models: -0.56)."
    )
    requires = (Cells("tfim-phases", _GROUPS, {"n_qubits": 8, "noise": 0.0}, min_seeds=2),)


class TfimTau10q(_TfimTau):
    name = "tfim-margin-gap-tau-10q"
    statement = (
        "On TFIM phases without label noise at the paper's scale (10 qubits, 15"
        " configurations x 5 seeds), Kendall tau(gap, Q1) < 0 over configuration means"
        " (paper: -0.56 over 75 models)."
    )
    requires = (Cells("tfim-phases", _GROUPS, {"n_qubits": 10, "n_test": 1000, "noise": 0.0},
                      min_seeds=5),)  # fmt: skip


class NqeTraceDistance(Claim):
    """NQE − IQP trace distance between the class states, paired by seed.

    Source: Hur & Park, ICML 2025, Section 5.2 (NQE of Hur, Araujo & Park, arXiv
    2311.11412); statistic ``harness.stats.paired_difference``.
    """

    name = "nqe-raises-trace-distance"
    task = "margin-qml"
    source = Source("Hur & Park, ICML 2025", "2411.06919", "Section 5.2, NQE table")
    statement = (
        "A trained neural quantum embedding raises the trace distance between the two"
        " classes' training states over the fixed IQP embedding, paired by seed (paper,"
        " MNIST: 0.59 -> 0.92; here scikit-learn digits 0/1)."
    )
    requires = (Cells("digits-binary", ("iqp-embedding", "nqe"), min_seeds=3),)
    hypothesis = Greater(0.0)
    unit = "seed"
    subject = "nqe"
    control_description = "the NQE's trace distance replaced by the IQP's of the next seed"
    metric: ClassVar[str] = "trace-distance"

    def _pairs(self, results: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        import pandas as pd

        table = results.assign(value=pd.to_numeric(results[self.metric], errors="coerce"))
        wide = table.pivot_table(index="seed", columns="method", values="value").dropna()
        return wide["nqe"].to_numpy(), wide["iqp-embedding"].to_numpy()

    def statistic(self, results: pd.DataFrame) -> Estimate:
        nqe, iqp = self._pairs(results)
        return hstats.paired_difference(nqe, iqp)

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        import pandas as pd

        iqp = results[results["method"].eq("iqp-embedding")].sort_values("seed")
        fake = iqp.assign(method="nqe", seed=np.roll(iqp["seed"].to_numpy(), 1))
        return pd.concat([iqp, fake], ignore_index=True)


CLAIMS = [
    AuthorsMarginInformation,
    AuthorsMarginsBeatParameters,
    ClusterMarginInformation8q,
    ClusterMarginsBeatParameters8q,
    ClusterMarginInformation10q,
    ClusterMarginsBeatParameters10q,
    TfimTau8q,
    TfimTau10q,
    NqeTraceDistance,
]
