"""Reports of the ``gmm-testing`` task: power against n, the n that reaches power 0.9, and
how that n grows with the dimension d.

matplotlib and statsmodels are imported inside the functions that draw or fit (fast start-up).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from harness import Curve, LazyModule, Report, Skip

pd = LazyModule("pandas")

__all__ = ["NForPower", "PowerCurves", "n_for_power", "power_table", "rate_slopes"]

_TARGET = 0.9
_UNLABELLED = {"method.calibration_trials"}
_DERIVED = {
    "n",
    "trials",
    "matched_degree",
    "signal",
    "components",
    "w_min",
    "max_centre",
    "min_gap",
    "min_gap_over_sd",
    "predicted_n90",
}


def _readable(name: str, value: Any) -> str:
    """A parameter as a legend reads it: the Hermite test's 0 = oracle conventions spelled
    out, everything else ``name=value``."""
    text = str(value)
    if name == "degree":
        return "oracle degree m+1" if text in ("0", "0.0") else f"degree {text}"
    if name == "max_degree":
        return "one degree" if text in ("0", "0.0") else f"max Z over degrees 1..{text}"
    return f"{name}={text}"


def _label(row: pd.Series, columns: list[str], prefix: str) -> str:
    extras = [_readable(c.removeprefix(prefix), row[c]) for c in columns if pd.notna(row[c])]
    return f"{row[prefix[:-1]]} ({', '.join(extras)})" if extras else str(row[prefix[:-1]])


def _tidy(results: pd.DataFrame) -> pd.DataFrame:
    """Finished cells with a power rate, labelled by dataset group and method variant."""
    if "power.rate" not in results or "dataset.n" not in results:
        raise Skip("no cell logged power.rate and dataset.n")
    df = results[(results["status"] == "ok") & results["power.rate"].notna()].copy()
    if df.empty:
        raise Skip("no finished cell with a power value")
    df["n"] = df["dataset.n"].astype(float).astype(int)
    group_cols = sorted(
        c for c in df if c.startswith("dataset.") and c.removeprefix("dataset.") not in _DERIVED
    )
    df["group"] = [_label(r, group_cols, "dataset.") for _, r in df.iterrows()]
    df["variant"] = df["method"].astype(str)
    for _, rows in df.groupby("method"):
        varying = sorted(
            c
            for c in rows
            if c.startswith("method.") and c not in _UNLABELLED and rows[c].nunique() > 1
        )
        if varying:
            df.loc[rows.index, "variant"] = [
                _label(r, varying, "method.") for _, r in rows.iterrows()
            ]
    df["predicted"] = (
        df["dataset.predicted_n90"].astype(float) if "dataset.predicted_n90" in df else np.nan
    )
    return df


def power_table(results: pd.DataFrame) -> pd.DataFrame:
    """Smallest grid n whose power (mean over seeds) is >= 0.9, per dataset group and method.

    Returns
    -------
    DataFrame
        Columns ``dataset``, ``method``, ``n_power_0.9`` (NaN if the grid never reaches it),
        ``max_power`` and its ``n``, ``mean_type1_error`` over the grid, and
        ``predicted_n90`` (the Hermite test's normal-approximation prediction).
    """
    return _power_table(_tidy(results))


def _power_table(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`power_table` of an already tidied table (see :func:`_tidy`)."""
    if "type1-error.rate" not in df:
        df = df.assign(**{"type1-error.rate": np.nan})
    rows = []
    for (group, variant), cell in df.groupby(["group", "variant"], sort=True):
        curve = cell.groupby("n")[["power.rate", "type1-error.rate"]].mean().sort_index()
        reached = curve.index[curve["power.rate"] >= _TARGET]
        rows.append(
            {
                "dataset": group,
                "method": variant,
                "n_power_0.9": int(reached[0]) if len(reached) else np.nan,
                "max_power": float(curve["power.rate"].max()),
                "n_max": int(curve.index.max()),
                "mean_type1_error": float(curve["type1-error.rate"].mean()),
                "predicted_n90": float(cell["predicted"].iloc[0]),
            }
        )
    return pd.DataFrame(rows)


class PowerCurves(Report):
    """Power against n (log axis) for every method, one panel per dataset configuration,
    with the predicted n at which the oracle Hermite test reaches power 0.9; and a table of
    the smallest grid n reaching power 0.9 per method.

    Source: docs/papers/gmm-testing.md §5 (n_0.9 and its prediction
    ``2.93 sqrt(2 C(d+m, m+1)) / lambda^2``).

    Returns
    -------
    dict
        ``power-vs-n``: Figure; ``n-power-0.9``: DataFrame (see :func:`power_table`).
    """

    name = "power-curves"
    task = "gmm-testing"

    def build(self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        from matplotlib.figure import Figure

        df = _tidy(results)
        groups = sorted(df["group"].unique())
        fig = Figure(figsize=(10.5, 4.2 * len(groups)))
        axes = fig.subplots(len(groups), 1, squeeze=False)
        for ax, group in zip(axes[:, 0], groups, strict=True):
            _panel(ax, df[df["group"] == group], group)
        fig.tight_layout()
        return {"power-vs-n": fig, "n-power-0.9": _power_table(df)}


def _panel(ax: Any, df: pd.DataFrame, title: str) -> None:
    for variant, cell in df.groupby("variant", sort=True):
        curve = cell.groupby("n")["power.rate"].mean().sort_index()
        ax.plot(curve.index, curve.values, marker="o", label=variant)
    predicted = df["predicted"].dropna()
    # draw the prediction only where it falls near the grid (a control has n_0.9 ~ 2)
    if not predicted.empty and df["n"].min() / 10 <= predicted.iloc[0] <= df["n"].max() * 10:
        ax.axvline(
            predicted.iloc[0], color="grey", linestyle="--", label="predicted n (Hermite, 0.9)"
        )
    ax.axhline(_TARGET, color="black", linewidth=0.6, linestyle=":")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("sample size n (samples per test)")
    ax.set_ylabel("power at level alpha (fraction of H1 samples rejected)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


# -- n_0.9 against the dimension d ------------------------------------------------------

_Z_TARGET = 1.2815515655446004  # Phi^-1(0.9)
_Z_CI = 1.959963984540054  # two-sided 95%
_SCALING = {"n", "d", "trials"}
_TEST_LABELS = {
    "hermite-moment-test": "Hermite chaos (oracle degree m+1)",
    "henze-zirkler": "Henze-Zirkler",
}


def norm_ppf(p: Any) -> Any:
    """Phi^-1, the standard normal quantile (scipy.special.ndtri)."""
    from scipy.special import ndtri

    return ndtri(p)


def norm_cdf(x: Any) -> Any:
    """Phi, the standard normal distribution function (scipy.special.ndtr)."""
    from scipy.special import ndtr

    return ndtr(x)


def _family(row: pd.Series, columns: list[str]) -> str:
    extras = [f"{c.removeprefix('dataset.')}={row[c]}" for c in columns if pd.notna(row[c])]
    return f"{row['dataset']} ({', '.join(extras)})" if extras else str(row["dataset"])


def _probit_n(
    n: np.ndarray, hits: np.ndarray, trials: np.ndarray, mc_sd: np.ndarray | None = None
) -> tuple[float, float]:
    """Binomial probit fit ``P(reject) = Phi(a + b ln n)`` (statsmodels GLM, maximum
    likelihood); returns ``ln n_0.9 = (Phi^-1(0.9) - a) / b`` and its delta-method s.e.

    The covariance of (a, b) is the sandwich A^-1 B A^-1 (A the binomial Fisher information)
    whose middle term takes each grid point's rate variance as p (1 - p) / T + mc_sd^2: the
    binomial spread plus that of the point's own Monte Carlo threshold (``power.mc_sd``,
    independent between grid points). With ``mc_sd`` zero it is the binomial A^-1.

    Raises
    ------
    ValueError
        If the fitted slope b is not positive (power not increasing in n over the grid).
    """
    import statsmodels.api as sm

    design = sm.add_constant(np.log(n))
    endog = np.column_stack([hits, trials - hits])
    with warnings.catch_warnings():  # saturated grid points (rate 0 or 1) are expected
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", sm.tools.sm_exceptions.PerfectSeparationWarning)
        family = sm.families.Binomial(sm.families.links.Probit())
        fit = sm.GLM(endog, design, family=family).fit()
    a, b = fit.params
    if not b > 0:
        raise ValueError(f"power does not increase with n (probit slope {b:.3g})")
    eta = design @ fit.params
    p = np.clip(norm_cdf(eta), 1e-12, 1 - 1e-12)
    dens = np.exp(-(eta**2) / 2) / math.sqrt(2 * math.pi)
    score = trials * dens / (p * (1 - p))  # d(score)/d(rate) per grid point
    extra = np.zeros_like(p) if mc_sd is None else np.nan_to_num(np.asarray(mc_sd, float)) ** 2
    info = (design.T * (score * dens)) @ design
    middle = (design.T * (score**2 * (p * (1 - p) / trials + extra))) @ design
    bread = np.linalg.inv(info)
    cov = bread @ middle @ bread
    log_n = (_Z_TARGET - a) / b
    grad = np.array([-1.0 / b, -log_n / b])
    return float(log_n), float(np.sqrt(grad @ cov @ grad))


def n_for_power(results: pd.DataFrame) -> pd.DataFrame:
    """n at which each test's power reaches 0.9, per instance family, k and d.

    Per (test, family, d) the rejection counts on the n grid get a binomial probit fit
    ``Phi(a + b ln n)``; ``n_for_power = exp((Phi^-1(0.9) - a) / b)`` with a 95% delta-method
    interval that includes each grid point's Monte Carlo threshold spread (``power.mc_sd``,
    when logged; :func:`_probit_n`). A grid whose power never crosses 0.9 gives NaN and
    ``bracketed`` = "above n_max" (power < 0.9 at every n) or "below n_min". With fewer than
    two rates strictly between 0 and 1 the probit fit is not identified: Phi^-1(rate) is
    interpolated linearly in ln n between the two grid points around 0.9 and the interval is
    those two points.

    Parameters
    ----------
    results : DataFrame
        The harness results table (``dataset.n``, ``dataset.d``, ``dataset.trials``,
        ``power.rate``, ``dataset.predicted_n90``).

    Returns
    -------
    DataFrame
        Columns ``test, k, d, n_for_power, closed_form`` (the oracle Hermite test's normal
        approximation ``2.93 sqrt(2 C(d+m, m+1)) / lambda^2``, science notes §5), then
        ``ci_low, ci_high`` (95%), ``ratio`` (n_for_power / closed_form), ``bracketed``,
        ``n_min, n_max`` (grid), ``family`` and ``log_se`` (s.e. of ln n_for_power).

    Raises
    ------
    harness.Skip
        Without finished cells logging ``power.rate``, ``dataset.n`` and ``dataset.d``.
    """
    need = {"power.rate", "dataset.n", "dataset.d", "dataset.trials"}
    if not need <= set(results):
        raise Skip(f"n-for-power needs the columns {sorted(need - set(results))}")
    df = results[(results["status"] == "ok") & results["power.rate"].notna()].copy()
    if df.empty:
        raise Skip("no finished cell with a power value")
    for col in ("n", "d", "trials"):
        df[col] = df[f"dataset.{col}"].astype(float).astype(int)
    df["k"] = df["dataset.k"].astype(float).astype(int) if "dataset.k" in df else 0
    # the family label names only the instance parameters that vary between families
    fixed = sorted(
        c
        for c in df
        if c.startswith("dataset.")
        and c.removeprefix("dataset.") not in _DERIVED | _SCALING
        and df[c].nunique() > 1
    )
    df["family"] = [_family(r, fixed) for _, r in df.iterrows()]
    df["hits"] = np.rint(df["power.rate"] * df["trials"])
    # each cell's Monte Carlo threshold spread, as a variance of its hit count
    mc = df["power.mc_sd"].astype(float).fillna(0.0) if "power.mc_sd" in df else 0.0
    df["mc_hits_var"] = (mc * df["trials"]) ** 2
    closed = df["dataset.predicted_n90"].astype(float) if "dataset.predicted_n90" in df else np.nan
    df["closed"] = closed
    rows = []
    for (test, family, d), cell in df.groupby(["method", "family", "d"], sort=True):
        grid = cell.groupby("n")[["hits", "trials", "mc_hits_var"]].sum().sort_index()
        rate = grid["hits"] / grid["trials"]
        row = {
            "test": test,
            "k": int(cell["k"].iloc[0]),
            "d": int(d),
            "n_for_power": np.nan,
            "closed_form": float(cell["closed"].iloc[0]),
            "ci_low": np.nan,
            "ci_high": np.nan,
            "ratio": np.nan,
            "bracketed": "yes",
            "n_min": int(grid.index.min()),
            "n_max": int(grid.index.max()),
            "family": family,
            "log_se": np.nan,
        }
        if (rate < 0.9).all():
            row["bracketed"] = "above n_max"
        elif (rate >= 0.9).all():
            row["bracketed"] = "below n_min"
        elif ((rate > 0) & (rate < 1)).sum() < 2:
            # A probit fit through one interior rate is not identified (its slope runs off
            # to infinity): interpolate Phi^-1(rate) linearly in ln n between the two grid
            # points around 0.9 (rates clipped to [1/(2T), 1 - 1/(2T)]), and give those two
            # points as the interval.
            low_n, high_n = rate.index[rate < 0.9].max(), rate.index[rate >= 0.9].min()
            half = 0.5 / grid["trials"]
            z = pd.Series(norm_ppf(np.clip(rate, half, 1 - half)), index=rate.index)
            frac = (_Z_TARGET - z[low_n]) / (z[high_n] - z[low_n])
            n_est = math.exp(math.log(low_n) + frac * math.log(high_n / low_n))
            row.update(
                n_for_power=n_est,
                ci_low=float(low_n),
                ci_high=float(high_n),
                ratio=n_est / row["closed_form"],
                bracketed="two points (interpolated; interval = grid points)",
                log_se=math.log(high_n / low_n) / (2 * _Z_CI),
            )
        else:
            try:
                log_n, se = _probit_n(
                    grid.index.to_numpy(float),
                    grid["hits"].to_numpy(),
                    grid["trials"].to_numpy(),
                    np.sqrt(grid["mc_hits_var"].to_numpy()) / grid["trials"].to_numpy(),
                )
            except ValueError as err:
                row["bracketed"] = str(err)
            else:
                row.update(
                    n_for_power=math.exp(log_n),
                    ci_low=math.exp(log_n - _Z_CI * se),
                    ci_high=math.exp(log_n + _Z_CI * se),
                    ratio=math.exp(log_n) / row["closed_form"],
                    log_se=se,
                )
        rows.append(row)
    return pd.DataFrame(rows)


def _wls_slope(log_d: np.ndarray, log_n: np.ndarray, se: np.ndarray | None) -> tuple[float, float]:
    """Slope of ln n on ln d by weighted least squares (weights 1/se^2; known variances, so
    the covariance is (X^T W X)^-1, not rescaled by the residuals) and its s.e. (0 without
    se)."""
    X = np.column_stack([np.ones_like(log_d), log_d])
    w = 1.0 / se**2 if se is not None else np.ones_like(log_d)
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    beta = cov @ X.T @ (w * log_n)
    return float(beta[1]), float(math.sqrt(cov[1, 1])) if se is not None else 0.0


def rate_slopes(table: pd.DataFrame) -> pd.DataFrame:
    """Slopes of ln n_0.9 against ln d per (test, family): over every measured d, and from
    d = 8 to d = 16 where both are measured, with the closed form's slope over the same d.

    Parameters
    ----------
    table : DataFrame
        Output of :func:`n_for_power`.

    Returns
    -------
    DataFrame
        Columns ``test, k, d_range, slope, ci_low, ci_high`` (95%, from the delta-method s.e.
        of each ln n_0.9), ``closed_form_slope``, ``difference`` (slope - closed_form_slope)
        and ``family``. Empty when no (test, family) has two measured dimensions.
    """
    rows = []
    measured = table[table["n_for_power"].notna()]
    for (test, family), cell in measured.groupby(["test", "family"], sort=True):
        cell = cell.sort_values("d")
        spans = []
        if len(cell) >= 2:
            spans.append((f"{cell['d'].min()}-{cell['d'].max()} (fit)", cell))
        pair = cell[cell["d"].isin([8, 16])]
        if len(pair) == 2 and len(cell) > 2:
            spans.append(("8-16", pair))
        for label, part in spans:
            log_d = np.log(part["d"].to_numpy(float))
            slope, se = _wls_slope(
                log_d, np.log(part["n_for_power"].to_numpy()), part["log_se"].to_numpy()
            )
            closed, _ = _wls_slope(log_d, np.log(part["closed_form"].to_numpy()), None)
            rows.append(
                {
                    "test": test,
                    "k": int(part["k"].iloc[0]),
                    "d_range": label,
                    "slope": slope,
                    "ci_low": slope - _Z_CI * se,
                    "ci_high": slope + _Z_CI * se,
                    "closed_form_slope": closed,
                    "difference": slope - closed,
                    "family": family,
                }
            )
    return pd.DataFrame(rows)


def _crossover(table: pd.DataFrame) -> pd.DataFrame:
    """Per family and d: which of the Hermite test and every other test needs fewer
    samples for power 0.9 ("hermite", "other", or "unclear" when the intervals overlap)."""
    hermite = table[table["test"] == "hermite-moment-test"].set_index(["family", "d"])
    rows = []
    for _, other in table[table["test"] != "hermite-moment-test"].iterrows():
        key = (other["family"], other["d"])
        if key not in hermite.index:
            continue
        h = hermite.loc[key]
        if pd.notna(other["n_for_power"]) and pd.notna(h["n_for_power"]):
            if other["ci_high"] < h["ci_low"]:
                fewer = other["test"]
            elif other["ci_low"] > h["ci_high"]:
                fewer = "hermite-moment-test"
            else:
                fewer = "unclear (intervals overlap)"
        elif other["bracketed"] == "above n_max" and other["n_max"] >= h["ci_high"]:
            fewer = "hermite-moment-test"
        elif other["bracketed"] == "below n_min" and other["n_min"] <= h["ci_low"]:
            fewer = other["test"]
        else:
            fewer = "unclear (grids do not compare)"
        rows.append(
            {
                "family": other["family"],
                "d": other["d"],
                "hermite_n_for_power": h["n_for_power"],
                "other_test": other["test"],
                "other_n_for_power": other["n_for_power"],
                "other_bracketed": other["bracketed"],
                "other_n_max": other["n_max"],
                "fewer_samples": fewer,
            }
        )
    return pd.DataFrame(rows)


class NForPower(Report):
    """The n at which each test reaches power 0.9 against the dimension d (log-log), with
    95% intervals, fitted slopes and the closed form overlaid.

    Source: docs/papers/gmm-testing.md §3.2 and §5: the oracle degree-(m+1) Hermite test
    needs ``n_0.9 = 2.93 sqrt(2 C(d+m, m+1)) / lambda^2`` (normal approximation), so ln n_0.9
    grows like ((m+1)/2) ln d for large d; Diakonikolas, Kane, Karmalkar, Lee, Pittas (ICML
    2025) for the d^Omega(m) lower bound.

    Returns
    -------
    dict
        ``n-for-power``: DataFrame (:func:`n_for_power`); ``n-for-power-slopes``: DataFrame
        (:func:`rate_slopes`); ``n-for-power-vs-d``: Figure; ``hermite-vs-others``: DataFrame
        naming the test that needs fewer samples at each d.

    Raises
    ------
    harness.Skip
        When no instance family was run at two or more dimensions.
    """

    name = "n-for-power"
    task = "gmm-testing"

    def build(self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        table = n_for_power(results)
        if table.groupby("family")["d"].nunique().max() < 2:
            raise Skip("n-for-power needs one instance family run at two or more dimensions d")
        return {
            "n-for-power": table,
            "n-for-power-slopes": rate_slopes(table),
            "n-for-power-vs-d": _rate_figure(table),
            "hermite-vs-others": _crossover(table),
        }


def _rate_figure(table: pd.DataFrame) -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 7.0))
    ax = fig.subplots()
    colours = {}
    for (test, family), cell in table.groupby(["test", "family"], sort=True):
        cell = cell.sort_values("d")
        colour = colours.setdefault(family, f"C{len(colours)}")
        label = f"{_TEST_LABELS.get(test, test)}, {family}"
        measured = cell[cell["n_for_power"].notna()]
        marker = "o" if test == "hermite-moment-test" else "s"
        ax.errorbar(
            measured["d"],
            measured["n_for_power"],
            yerr=[
                measured["n_for_power"] - measured["ci_low"],
                measured["ci_high"] - measured["n_for_power"],
            ],
            marker=marker,
            color=colour,
            linestyle="-" if test == "hermite-moment-test" else ":",
            capsize=3,
            label=f"{label}: measured n_0.9 (95% CI)",
        )
        for state, column, marker, text in (
            ("above n_max", "n_max", "^", "> largest n"),
            ("below n_min", "n_min", "v", "< smallest n"),
        ):
            part = cell[cell["bracketed"] == state]
            if not part.empty:
                ax.scatter(
                    part["d"], part[column], marker=marker, color=colour, label=f"{label}: {text}"
                )
        if test == "hermite-moment-test":
            ax.plot(
                cell["d"],
                cell["closed_form"],
                color=colour,
                linestyle="--",
                alpha=0.6,
                label=f"closed form 2.93 sqrt(2 N_(m+1)) / lambda^2, {family}",
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    dims = sorted(table["d"].unique())
    ax.set_xticks(dims, [str(d) for d in dims])
    ax.set_xticks([], minor=True)
    ax.set_xlabel("dimension d (log scale)")
    ax.set_ylabel("n_0.9: samples per test for power 0.9 at alpha = 0.05 (log scale)")
    ax.set_title("Sample size for power 0.9 against dimension", fontsize=10)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1)
    fig.tight_layout()
    return fig
