"""Reports: regret curves per opponent, and regret to the comparator against the horizon T.

Source: Müller et al., ICML 2025 (regret to the comparator flat in T for phased aggression,
growing like sqrt T for EXP3); docs/papers/bandit-safe-regret.md §4-6.
"""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Mapping

import numpy as np

from harness import Curve, LazyModule, Report

pd = LazyModule("pandas")
stats = LazyModule("scipy.stats")

__all__ = ["RegretCurves", "RegretVsHorizon", "grid_markdown", "mean_ci", "slope_of_means",
           "tails_markdown"]  # fmt: skip

TASK = "bandit-safe-regret"
METRIC = "regret-vs-comparator"
RESAMPLES = 2000


def slope_of_means(levels, values, seed: int = 0) -> tuple[float, np.ndarray]:
    """OLS slope of log(mean of ``values[i]``) on log(``levels[i]``), and its bootstrap
    replicates (:data:`RESAMPLES`) with each level's values (one per seed) resampled within
    the level.

    :raises ValueError: a non-positive mean.
    """
    x = np.log(np.asarray(levels, dtype=float))
    x = x - x.mean()
    means = np.asarray([v.mean() for v in values])
    if np.any(means <= 0):
        raise ValueError("a log-log slope needs a positive mean at every T")
    slope = float(x @ np.log(means) / (x @ x))
    rng = np.random.default_rng(seed)
    boot_means = np.stack(
        [v[rng.integers(0, v.size, (RESAMPLES, v.size))].mean(axis=1) for v in values], axis=1
    )  # (RESAMPLES, n_levels)
    positive = np.all(boot_means > 0, axis=1)
    return slope, np.log(boot_means[positive]) @ x / (x @ x)


def _pyplot():
    """matplotlib.pyplot with the Agg backend, imported on first use (fast plugin start-up)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def mean_ci(values: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and half-width of the 95% Student-t confidence interval of the mean over ``axis``.

    The half-width is 0 where fewer than two values are given. Unlike the scalar
    ``harness.reports.aggregates.mean_ci`` (NaN half-width for one value), this works along an axis,
    as the curve bands need, and keeps the tables' "± 0.00" for a single seed.
    """
    values = np.asarray(values, dtype=float)
    n = values.shape[axis]
    mean = values.mean(axis=axis)
    if n < 2:
        return mean, np.zeros_like(mean)
    sem = values.std(axis=axis, ddof=1) / np.sqrt(n)
    return mean, stats.t.ppf(0.975, n - 1) * sem


_PARAM_LABELS = {
    # column: (defaults as they may be logged, lower case; formatter of a non-default value)
    "method.c0": (("1.0", "1"), lambda v: f"c0={v} (threshold scale)"),
    "method.learner": (("exp3-ix",), lambda v: f"learner={v}"),
    "method.reset": (("true",), lambda v: "no learner reset"),
    "method.fixed_alpha": (("-1.0", "-1"), lambda v: f"alpha fixed at {v} (no phases)"),
}


def _method_labels(frame: pd.DataFrame) -> pd.Series:
    """Method name plus its method params that vary within ``frame`` and differ from their
    defaults, in words (``c0=0.3 (threshold scale)``, ``no learner reset``)."""
    columns = [c for c in frame.columns if c.startswith("method.") and frame[c].nunique() > 1]
    labels = frame["method"].astype(str)
    for c in columns:
        values = ["" if pd.isna(v) else str(v) for v in frame[c]]
        defaults, fmt = _PARAM_LABELS.get(c, ((), None))
        if fmt is None:
            name = c.removeprefix("method.")
            fmt = lambda v, name=name: f"{name}={v}"  # noqa: E731
        skip = {*defaults, "", "none", "nan"}
        extra = ["" if v.lower() in skip else " " + fmt(v) for v in values]
        labels = labels + pd.Series(extra, index=frame.index)
    return labels


def _dataset_labels(frame: pd.DataFrame) -> pd.Series:
    """Dataset name plus its params (other than T and opponent) that vary within that
    dataset's cells, so that e.g. a comparator_epsilon sweep is not pooled with the rest."""
    labels = frame["dataset"].astype(str).copy()
    # T and opponent have their own columns; the others are describe() outputs, not params
    skip = {"dataset.T", "dataset.opponent", "dataset.delta", "dataset.delta_sequence_form"}
    skip |= {"dataset.comparator", "dataset.player1_value_chips"}
    for name, index in frame.groupby("dataset").groups.items():
        sub = frame.loc[index]
        columns = [
            c
            for c in sub.columns
            if c.startswith("dataset.") and c not in skip and sub[c].astype(str).nunique() > 1
        ]
        if columns:
            labels.loc[index] = [
                f"{name} ("
                + ", ".join(f"{c.removeprefix('dataset.')}={sub.at[i, c]}" for c in columns)
                + ")"
                for i in index
            ]
    return labels


def _ok(results: pd.DataFrame) -> pd.DataFrame:
    frame = results[(results["task"] == TASK) & (results["status"] == "ok")]
    frame = frame.reset_index(drop=True)
    if "dataset.T" in frame:
        frame["T"] = frame["dataset.T"].astype(float).astype(int)
    if len(frame):
        frame["dataset"] = _dataset_labels(frame)
    frame["label"] = _method_labels(frame) if len(frame) else []
    return frame


class RegretCurves(Report):
    """Regret to the comparator over t, one panel per opponent, mean and 95% band over seeds.

    Source: Müller et al., ICML 2025, regret curves (reconstruction:
    docs/papers/bandit-safe-regret.md §6 expected curve shapes).

    Returns
    -------
    dict
        ``regret-curves-<dataset>-T<T>``: a Figure per game and horizon; x: round t,
        y: regret to mu_c in payoff units, one line per method.
    """

    name = "regret-curves"
    task = TASK

    def build(self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        frame = _ok(results)
        frame = frame[[METRIC in curves.get(h, {}) for h in frame["cell_hash"]]]
        plt = _pyplot()
        out = {}
        for (dataset, T), group in frame.groupby(["dataset", "T"]):
            opponents = sorted(group["dataset.opponent"].unique())
            labels = sorted(group["label"].unique())
            colours = {label: f"C{i % 10}" for i, label in enumerate(labels)}
            ncols = min(3, len(opponents))
            nrows = -(-len(opponents) // ncols)
            fig, axes = plt.subplots(
                nrows, ncols, figsize=(4.4 * ncols, 3.4 * nrows + 0.8), squeeze=False
            )
            for ax, opponent in zip(axes.flat, opponents, strict=False):
                cells = group[group["dataset.opponent"] == opponent]
                for label, runs in cells.groupby("label"):
                    runs_curves = [curves[h][METRIC] for h in runs["cell_hash"]]
                    self._band(ax, runs_curves, str(label), colours[label])
                ax.axhline(0.0, color="0.6", lw=0.8)
                ax.set_title(f"opponent: {opponent}")
                ax.set_xlabel("round t")
                ax.set_ylabel(r"regret to $\mu_c$ (payoff units)")
            for ax in list(axes.flat)[len(opponents) :]:
                ax.set_visible(False)
            handles = [plt.Line2D([], [], color=colours[label]) for label in labels]
            fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8)
            n = group.groupby(["dataset.opponent", "label"]).size()
            fig.suptitle(
                f"{dataset}, T = {T}: mean and 95% CI over "
                + (f"{n.min()} seeds" if n.min() == n.max() else f"{n.min()}-{n.max()} seeds")
            )
            fig.tight_layout(rect=(0, 0.08, 1, 1))
            out[f"regret-curves-{dataset}-T{T}"] = fig
        return out

    @staticmethod
    def _band(ax, runs: list[Curve], label: str, colour: str) -> None:
        steps = runs[0].steps
        values = np.array([np.interp(steps, c.steps, c.values) for c in runs])
        mean, half = mean_ci(values)
        ax.plot(steps, mean, label=label, lw=1.2, color=colour)
        ax.fill_between(steps, mean - half, mean + half, color=colour, alpha=0.2)


class RegretVsHorizon(Report):
    """Both halves of the claim at each horizon T: regret to mu_c and regret to the best action.

    Source: Müller et al., ICML 2025 (O(1) regret to the comparator and O~(sqrt T) regret to
    the best fixed strategy; EXP3: Theta(sqrt T) to both against a clairvoyant opponent);
    docs/papers/bandit-safe-regret.md §6.

    Returns
    -------
    dict
        ``regret-vs-horizon``: DataFrame, one row per (dataset, opponent, method), two
        columns per horizon, ``Reg(mu_c) T=<T>`` and ``Reg(best) T=<T>``, each
        "mean ± 95% CI half-width" over seeds (payoff units).
        ``exponents``: DataFrame of the log-log slope b of regret ~ a T^b per (dataset,
        opponent, method) and regret, fitted by least squares on the log of the *per-T
        mean* regret against log T, with a 95% seed-bootstrap interval (seeds resampled
        within each T; :func:`slope_of_means`); "n/a"
        where a mean regret is <= 0 (no power law) or fewer than two horizons exist.
        ``summary``: every metric's mean and CI per (dataset, opponent, T, method).
        ``regret-vs-horizon-plot`` and ``regret-vs-best-plot``: game x opponent grids of the
        two regrets against T (log T, symlog y); the first draws the reconstructed O(1)
        bound of phased aggression (1 loss unit = 2 payoff units), the second a sqrt(T)
        reference slope through the median at the smallest T.
    """

    name = "regret-vs-horizon"
    task = TASK

    REGRETS = (("regret-vs-comparator", "Reg(mu_c)"), ("regret-vs-best", "Reg(best)"))

    def build(self, results: pd.DataFrame, curves: Mapping[str, Mapping[str, Curve]]) -> dict:
        frame = _ok(results)
        if METRIC not in frame or frame.empty:
            return {}
        keys = ["dataset", "dataset.opponent", "label", "T"]
        tables, stats_frames = [], {}
        for metric, short in self.REGRETS:
            if metric not in frame:
                continue
            rows = []
            for key, group in frame.groupby(keys):
                values = group[metric].astype(float).dropna().to_numpy()
                if values.size == 0:
                    continue
                mean, half = mean_ci(values)
                rows.append((*key, float(mean), float(half), len(values)))
            stats_frame = pd.DataFrame(rows, columns=[*keys, "mean", "ci95", "n"])
            stats_frames[metric] = stats_frame
            table = stats_frame.assign(
                cell=[
                    f"{m:.2f} ± {h:.2f}"
                    for m, h in zip(stats_frame["mean"], stats_frame["ci95"], strict=True)
                ]
            ).pivot(index=keys[:3], columns="T", values="cell")
            table.columns = [f"{short} T={T}" for T in table.columns]
            tables.append(table)
        table = pd.concat(tables, axis=1)
        order = sorted(table.columns, key=lambda c: (int(c.split("T=")[1]), "best" in c))
        table = table[order].reset_index()
        table = table.rename(columns={"dataset.opponent": "opponent", "label": "method"})
        out = {
            "regret-vs-horizon": table,
            "exponents": self._exponents(frame),
            "summary": self._summary(frame, keys),
            "regret-vs-horizon-plot": self._plot(
                stats_frames[METRIC], r"Regret to the comparator $\mu_c$", reference="bound"
            ),
        }
        if "regret-vs-best" in stats_frames:
            out["regret-vs-best-plot"] = self._plot(
                stats_frames["regret-vs-best"],
                "Regret to the best fixed strategy",
                reference="sqrt",
            )
        return out

    @classmethod
    def _exponents(cls, frame: pd.DataFrame) -> pd.DataFrame:
        """Log-log slope of each regret against T, with a 95% t-interval (see ``build``)."""
        rows = []
        for key, group in frame.groupby(["dataset", "dataset.opponent", "label"]):
            row = dict(zip(["dataset", "opponent", "method"], key, strict=True))
            row["horizons"] = ", ".join(str(t) for t in sorted(group["T"].unique()))
            for metric, short in cls.REGRETS:
                if metric not in group:
                    continue
                values = group[metric].astype(float)
                ok = values.notna()
                T, y = group["T"][ok].to_numpy(float), values[ok].to_numpy()
                levels = np.unique(T)
                samples = [y[level == T] for level in levels]
                if levels.size < 2 or any(v.mean() <= 0 for v in samples):
                    row[f"{short} exponent"] = "n/a"
                    continue
                slope, boot = slope_of_means(levels, samples)
                low, high = np.quantile(boot, [0.025, 0.975])
                row[f"{short} exponent"] = f"{slope:.3f} [{low:.3f}, {high:.3f}]"
            rows.append(row)
        return pd.DataFrame(rows)

    @staticmethod
    def _summary(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
        names = ["regret-vs-comparator", "regret-vs-best", "cumulative-payoff", "max-prefix-loss"]
        names += ["final-alpha.alpha", "final-alpha.first_switch", "final-alpha.n_switches"]
        names += ["exploitation-slope.gain", "exploitation-slope.best_gain"]
        rows = []
        for key, group in frame.groupby(keys):
            row = dict(zip(["dataset", "opponent", "method", "T"], key, strict=True))
            for name in [n for n in names if n in group]:
                mean, half = mean_ci(group[name].astype(float).to_numpy())
                row[name] = f"{mean:.4g} ± {half:.2g}"
            rows.append(row)
        return pd.DataFrame(rows)

    @staticmethod
    def _plot(stats_frame: pd.DataFrame, what: str, reference: str = ""):
        """Grid of panels: one row per game, one column per opponent, one line per method.

        The y axis is symmetric-log (linear within ±1 payoff unit) since regret spans from
        below 1 (phased aggression) to ~1e5 (EXP3 against a fixed opponent); points of one T are
        dodged a little along the log T axis so that equal values stay visible.
        """
        plt = _pyplot()
        datasets = sorted(stats_frame["dataset"].unique())
        opponents = sorted(stats_frame["dataset.opponent"].unique())
        labels = sorted(stats_frame["label"].unique())
        colours = {label: f"C{i % 10}" for i, label in enumerate(labels)}
        markers = dict(zip(labels, "osD^vP<>Xph*", strict=False))
        horizons = sorted(stats_frame["T"].unique())
        nrows, ncols = len(datasets), len(opponents)
        width = min(3.0, 17.0 / ncols)
        legend_rows = -(-(len(labels) + 1) // 3)
        fig, axes = plt.subplots(
            nrows,
            ncols,
            figsize=(width * ncols + 0.6, 2.3 * nrows + 0.9 + 0.25 * legend_rows),
            sharex=True,
            squeeze=False,
        )
        groups = dict(list(stats_frame.groupby(["dataset", "dataset.opponent"])))
        for (i, dataset), (j, opponent) in itertools.product(
            enumerate(datasets), enumerate(opponents)
        ):
            ax = axes[i, j]
            group = groups.get((dataset, opponent))
            if group is None:
                ax.text(0.5, 0.5, "no cells", ha="center", va="center", transform=ax.transAxes)
            else:
                present = sorted(group["label"].unique())
                for k, (label, rows) in enumerate(group.groupby("label")):
                    dodge = 10 ** (0.04 * (k - (len(present) - 1) / 2))
                    ax.errorbar(
                        rows["T"] * dodge,
                        rows["mean"],
                        yerr=rows["ci95"],
                        marker=markers.get(label, "o"),
                        ms=4,
                        lw=1.2,
                        capsize=2,
                        color=colours[label],
                        label=label,
                    )
            if reference == "bound":
                ax.axhline(2.0, color="k", ls=":", lw=1.0)
            elif reference == "sqrt" and group is not None:
                t0 = float(group["T"].min())
                y0 = float(group[group["T"] == t0]["mean"].abs().median()) or 1.0
                ts = np.array(horizons, dtype=float)
                ax.plot(ts, y0 * np.sqrt(ts / t0), color="k", ls=":", lw=1.0)
            ax.set_xscale("log")
            ax.set_yscale("symlog", linthresh=1.0)
            low, high = ax.get_ylim()
            ax.set_ylim(min(low, -1.5), max(high, 1.5))
            ax.axhline(0.0, color="0.6", lw=0.8)
            ax.tick_params(labelsize=7)
            if i == 0:
                ax.set_title(f"opponent: {opponent}", fontsize=9)
            if j == 0:
                name = textwrap.fill(str(dataset), 28)
                ax.set_ylabel(f"{name}\nregret (payoff units)", fontsize=8)
            if i == nrows - 1:
                ax.set_xlabel("horizon T (rounds, log)", fontsize=8)
        if len(horizons) > 1:
            axes[0, 0].set_xlim(horizons[0] / 2, horizons[-1] * 2)
        else:
            axes[0, 0].set_xlim(horizons[0] / 3, horizons[0] * 3)
        handles = [
            plt.Line2D([], [], color=colours[label], marker=markers.get(label, "o"), ms=5)
            for label in labels
        ]
        names = list(labels)
        if reference:
            handles.append(plt.Line2D([], [], color="k", ls=":"))
            names.append(
                "reconstructed O(1) bound of phased aggression: 1 loss unit = 2 payoff units"
                if reference == "bound"
                else "reference slope sqrt(T) (shape of the O~(sqrt T) bound)"
            )
        fig.legend(handles, names, loc="lower center", ncol=min(len(names), 3), fontsize=8)
        fig.suptitle(
            f"{what} at horizon T\n(payoff units; log T, symlog y; mean and 95% CI over"
            " seeds; rows: game, columns: opponent)",
            fontsize=10,
        )
        fig.tight_layout(rect=(0, (0.3 + 0.22 * legend_rows) / fig.get_figheight(), 1, 1))
        return fig


OPPONENT_ORDER = ("minimax", "fixed", "random-fixed", "best-response", "fictitious-play",
                  "no-regret", "bait-and-switch")  # fmt: skip


def _cells(results: pd.DataFrame):
    """``((game, method label, opponent, T), rows)`` of the ok rows, in the README's order."""
    frame = _ok(results)
    if frame.empty:
        return []
    order = {o: i for i, o in enumerate(OPPONENT_ORDER)}
    keys = frame.groupby(["dataset", "label", "dataset.opponent", "T"]).groups
    ranked = sorted(keys, key=lambda k: (k[0] != "rock-paper-scissors", k[0], k[1],
                                         order.get(k[2], 99), k[3]))  # fmt: skip
    return [(key, frame.loc[keys[key]]) for key in ranked]


def tails_markdown(results: pd.DataFrame) -> str:
    """Per (game, method, opponent, T): seeds, Reg(mu_c) mean [95% t CI], its p95 and maximum
    over seeds, the largest running maximum max_t Reg_t(mu_c), and the mean Reg(best); payoff
    units. A Markdown table."""
    lines = ["| game | method | opponent | T | seeds | Reg(μc) mean [95% CI] | p95 | max"
             " | running max | Reg(best) mean |", "|" + " --- |" * 10]  # fmt: skip
    for (game, label, opponent, T), rows in _cells(results):
        reg = rows.groupby("seed")[METRIC].mean().to_numpy()
        peak = rows.groupby("seed")["regret-vs-comparator-peak"].mean().to_numpy()
        best = rows.groupby("seed")["regret-vs-best"].mean().to_numpy()
        mean, half = mean_ci(reg)
        lines.append(
            f"| {game} | {label} | {opponent} | {T:,} | {reg.size}"
            f" | {_n(mean)} [{_n(mean - half)}, {_n(mean + half)}] | {_n(np.quantile(reg, 0.95))}"
            f" | {_n(reg.max())} | {_n(peak.max())} | {_n(best.mean())} |"
        )
    return "\n".join(lines) + "\n"


def grid_markdown(results: pd.DataFrame) -> str:
    """The opponents x horizons grid of ``results``: per game and T, the seeds of each method
    (``12 / 12 / 12``, methods in the header's order); ``-`` where there are none."""
    frame = _ok(results)
    columns = sorted({(g, T) for g, T in zip(frame["dataset"], frame["T"], strict=True)},
                     key=lambda c: (c[0] != "rock-paper-scissors", c[0], c[1]))  # fmt: skip
    methods = {g: sorted(frame.loc[frame["dataset"].eq(g), "label"].unique()) for g, _ in columns}
    header = [f"{g}, T = {T:,}" for g, T in columns]
    lines = ["| opponent | " + " | ".join(header) + " |", "|" + " --- |" * (len(header) + 1)]
    seeds = frame.groupby(["dataset", "T", "dataset.opponent", "label"])["seed"].nunique()
    for opponent in [o for o in OPPONENT_ORDER if o in set(frame["dataset.opponent"])]:
        row = []
        for g, T in columns:
            n = [seeds.get((g, T, opponent, m), 0) for m in methods[g]]
            row.append(" / ".join(map(str, n)) if any(n) else "-")
        lines.append(f"| {opponent} | " + " | ".join(row) + " |")
    legend = "; ".join(f"{g}: {' / '.join(m)}" for g, m in methods.items())
    return "\n".join(lines) + f"\n\nSeeds per method ({legend}).\n"


def _n(x: float) -> str:
    """Three significant digits, thousands separated."""
    if not np.isfinite(x):
        return "nan"
    if abs(x) < 1e-9:
        return "0"
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"
