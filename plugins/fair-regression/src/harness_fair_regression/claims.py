"""The papers' claims as ``harness.Claim`` objects, each with its negative control.

The thresholds, the exponents and the bound's C come from theory and the split sizes. The
margins (0.1 on slopes, 0.25 on the cost ratio, 0.1 on the trade-off ratio, 1e-9 on the
port) were declared after round 2's figures and a pilot of the main suite's seeds 0-9 had
been seen, so they are declared, not blind pre-registrations; none was changed after the
committed runs. The unit of replication is the seed: each seed is one split (real data)
or one draw of every sample (synthetic data), and every statistic reduces a seed's cells
to one number, or (slopes) bootstraps whole seeds with ``harness.stats.loglog_slope``.

Margins: a log-log slope "matches" an exponent when its 95% seed-bootstrap interval lies
within +-0.1 of it (over the 64-fold n range of the suite, a risk within 64^0.1 = 1.5x of
the line); a ratio "equals" 1 when its 90% TOST interval lies within the stated band.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from harness import Cells, Claim, Less, Source, Within
from harness.stats import Estimate, equivalence, loglog_slope, one_sample

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CLAIMS",
    "BoundKNN",
    "BoundRidge",
    "DemographicParityCrime",
    "DemographicParityLaw",
    "EquipyPortFidelity",
    "FairRateKNNBalanced",
    "FairRateKNNClass",
    "FairRateRidge",
    "RiskCostCrime",
    "RiskCostLaw",
    "TradeOff",
    "dp_threshold",
    "method_rows",
]

TASK = "fair-regression"
FUKUCHI = Source("Fukuchi, ICML 2025", "2506.13947", "meta-theorem (Section 4)")
CHZHEN = Source("Chzhen, Denis, Hebiri, Oneto, Pontil, NeurIPS 2020", "2006.07286",
                "post-processing estimator and its distribution-free KS guarantee")  # fmt: skip
LE_GOUIC = Source("Le Gouic, Loubes, Rigollet 2020", "2005.11720", "Theorem 2.3")
CHZHEN_SCHREUDER = Source(
    "Chzhen & Schreuder, Ann. Statist. 2022",
    "2007.14265",
    "alpha-RI optimum (reconstruction, not checked against the paper)",
)
EQUIPY = Source("equipy 0.0.11a0 FairWasserstein", "", "equipy/fairness/_base.py")

KS_CRITICAL = 1.358
"""Asymptotic 95% critical value of the two-sample Kolmogorov-Smirnov statistic (times
sqrt(1/m + 1/n)); Smirnov 1948."""

SLOPE_MARGIN = 0.1
"""Equivalence margin of every "slope matches exponent" claim."""
RESAMPLES = 2000
"""Seed-bootstrap resamples of every slope."""


def dp_threshold(calib: tuple[int, int], test: tuple[int, int]) -> float:
    """KS a post-processed predictor may show and still be DP-fair at these sizes.

    The 95% two-sample KS critical value of the test groups (an exactly fair predictor's
    sampling floor) plus that of the calibration groups (the map's estimation error: its
    output ranks are the calibration ECDF's). Source: Chzhen et al. 2020's KS guarantee is
    of this order, O(sum_s N_s^(-1/2)); the constant is Smirnov's.
    """
    return KS_CRITICAL * sum(math.sqrt(1 / a + 1 / b) for a, b in (calib, test))


# -- helpers over a results table (params are strings there) -------------------------


def _matches(column: pd.Series, wanted: Any) -> pd.Series:
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
        return column.map(lambda v: _close(v, wanted)).astype(bool)
    return column.astype(str).eq(str(wanted)).astype(bool)


def _close(value: Any, wanted: float) -> bool:
    try:
        return math.isclose(float(value), wanted, rel_tol=1e-9, abs_tol=1e-12)
    except (TypeError, ValueError):
        return False


def method_rows(results: pd.DataFrame, method: str, **params: Any) -> pd.DataFrame:
    """Rows of ``method`` in a ``harness results`` table whose ``method.<p>`` equals each of
    ``params`` (params are strings there; numbers compare as numbers). A row without the
    param (a method added in the subject's place has params of its own) is kept; a param
    the table has no column for selects nothing out. Returns a slice of ``results``."""
    keep = results["method"].eq(method)
    for key, value in params.items():
        column = f"method.{key}"
        if column not in results:
            continue
        keep &= _matches(results[column], value) | results[column].isna()
    return results[keep]


def _per_seed(rows: pd.DataFrame, metric: str) -> pd.Series:
    """``metric`` averaged over the cells of each seed (a seed is the unit)."""
    return rows.groupby("seed")[metric].mean()


def _paired(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    seeds = a.index.intersection(b.index)
    if seeds.size < 2:
        raise ValueError(f"fewer than 2 seeds shared by both methods ({seeds.size})")
    return a[seeds].to_numpy(float), b[seeds].to_numpy(float)


def _swap(results: pd.DataFrame, subject: pd.DataFrame, source: pd.DataFrame) -> pd.DataFrame:
    """``results`` with the ``subject`` rows replaced by the ``source`` rows, relabelled as
    the subject's method and params (a control's cells in the subject's place)."""
    import pandas as pd

    if subject.empty or source.empty:
        raise ValueError("the control needs the subject's and the control's cells")
    relabelled = source.copy()
    for column in [c for c in results.columns if c == "method" or c.startswith("method.")]:
        relabelled[column] = subject[column].iloc[0]
    return pd.concat([results.drop(index=subject.index), relabelled], ignore_index=True)


def _slope_estimate(rows: pd.DataFrame, metric: str, exponent: float) -> Estimate:
    """Log-log slope of ``metric`` on n_train, bootstrapping seeds, with the TOST p-value
    of ``|slope - exponent| < SLOPE_MARGIN`` from the same bootstrap draws."""
    n = rows["dataset.n_train"].astype(float).to_numpy()
    y, seeds = rows[metric].to_numpy(float), rows["seed"].to_numpy()
    if np.unique(n).size < 3:
        raise ValueError(f"a rate needs at least 3 sample sizes, got {np.unique(n).tolist()}")
    low, high = exponent - SLOPE_MARGIN, exponent + SLOPE_MARGIN
    e = loglog_slope(n, y, seeds, null=low, resamples=RESAMPLES)  # same draws for both
    floor = 1 / (RESAMPLES + 1)  # a bootstrap p-value resolves no further
    p_low = e.p_value / 2  # P(slope* <= low) when the slope is above low
    p_high = loglog_slope(n, y, seeds, null=high, resamples=RESAMPLES).p_value / 2
    p = max(p_low if e.estimate > low else 1.0, p_high if e.estimate < high else 1.0, floor)
    span = f"n = {n.min():.0f} to {n.max():.0f}"
    return Estimate(e.estimate, e.low, e.high, p, e.n, e.mde, f"{e.test}, {span}; p: TOST"
                    f" within {exponent:.3g} +- {SLOPE_MARGIN:g}")  # fmt: skip


# -- demographic parity and its cost ----------------------------------------------------

POST = {"regressor": "ridge", "weights": "frequency", "convention": "order-statistic"}
"""The post-processor of the real-data claims: ``projection`` of ridge, default rule."""


class _DemographicParity(Claim):
    """Post-processing onto the barycenter reaches DP: KS within the sampling floor.

    Source: Chzhen et al., NeurIPS 2020; Le Gouic et al. 2020, Theorem 2.3.
    """

    task = TASK
    source = CHZHEN
    unit = "seed"
    subject = "projection"
    dataset: ClassVar[str]
    threshold: ClassVar[float]
    control_description = (
        "the unconstrained ridge regressor's cells in the post-processor's place: its KS"
        " must exceed the threshold"
    )

    def statistic(self, results: pd.DataFrame) -> Estimate:
        post = method_rows(results, "projection", **POST)
        ks = _per_seed(post, "ks-unfairness").to_numpy(float)
        return one_sample(ks, null=self.threshold, alternative="less")

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        post = method_rows(results, "projection", **POST)
        return _swap(results, post, method_rows(results, "unconstrained", regressor="ridge"))


# group sizes of the stratified 60/20/20 split: crime 1,023 / 970 rows, law 18,285 / 3,506
CRIME_THRESHOLD = dp_threshold((205, 194), (205, 194))
LAW_THRESHOLD = dp_threshold((3657, 701), (3657, 701))


class DemographicParityCrime(_DemographicParity):
    """Ridge post-processed by the barycenter map is DP-fair on Communities and Crime.

    Source: Chzhen et al., NeurIPS 2020 (algorithm and KS guarantee); Le Gouic et al. 2020.
    """

    name = "dp-by-post-processing-crime"
    dataset = "communities-crime"
    threshold = CRIME_THRESHOLD
    statement = (
        "On Communities and Crime (S = racepctblack > 0.06), ridge post-processed onto the"
        f" Wasserstein barycenter (projection) has mean test KS below {CRIME_THRESHOLD:.3f},"
        " the 95% two-sample KS floor of its test plus calibration group sizes (205 / 194"
        " each), where the unconstrained ridge is far above it."
    )
    requires = (Cells(dataset, ("projection", "unconstrained"), {},
                      {"regressor": "ridge"}, min_seeds=5),)  # fmt: skip
    hypothesis = Less(CRIME_THRESHOLD)


class DemographicParityLaw(_DemographicParity):
    """Ridge post-processed by the barycenter map is DP-fair on LSAC law school.

    Source: Chzhen et al., NeurIPS 2020 (algorithm and KS guarantee); Le Gouic et al. 2020.
    """

    name = "dp-by-post-processing-law"
    dataset = "law-school"
    threshold = LAW_THRESHOLD
    statement = (
        "On LSAC law school (S = white / non-white, y = ZFYA), ridge post-processed onto the"
        f" Wasserstein barycenter has mean test KS below {LAW_THRESHOLD:.3f}, the 95%"
        " two-sample KS floor of its test plus calibration group sizes (3,657 / 701 each)."
    )
    requires = (Cells(dataset, ("projection", "unconstrained"), {},
                      {"regressor": "ridge"}, min_seeds=5),)  # fmt: skip
    hypothesis = Less(LAW_THRESHOLD)


class _RiskCost(Claim):
    """The MSE cost of post-processing equals the base's unfairness U(f) (the projection).

    Source: Le Gouic et al. 2020, Theorem 2.3; Chzhen et al., NeurIPS 2020: for f = f*
    the barycenter map is the L2 projection onto DP-fair predictors and its extra risk is
    U(f) = sum_s p_s W2^2(Law(f | s), barycenter).
    """

    task = TASK
    source = LE_GOUIC
    unit = "seed"
    subject = "projection"
    margin: ClassVar[float] = 0.25
    hypothesis = Within(1.0, 0.25)

    def statistic(self, results: pd.DataFrame) -> Estimate:
        import pandas as pd

        base = method_rows(results, "unconstrained", regressor="ridge")
        post = method_rows(results, "projection", **POST)
        seeds = pd.DataFrame({"post": _per_seed(post, "mse"), "base": _per_seed(base, "mse"),
                              "unfair": _per_seed(base, "w2-unfairness")}).dropna()  # fmt: skip
        ratio = (seeds["post"] - seeds["base"]) / seeds["unfair"]
        return equivalence(ratio.to_numpy(float), 1.0, self.margin)


class RiskCostLaw(_RiskCost):
    """The cost of post-processing ridge on law school is U(f).

    Source: Le Gouic et al. 2020, Theorem 2.3; Chzhen et al., NeurIPS 2020.
    """

    name = "risk-cost-law-school"
    statement = (
        "On law school, post-processing ridge onto the frequency-weighted barycenter raises"
        " the test MSE by U(f), the base's W2 unfairness on the same test split: the ratio"
        " (MSE_post - MSE_base) / U(f) per split is 1 +- 0.25."
    )
    requires = (Cells("law-school", ("projection", "unconstrained"), {},
                      {"regressor": "ridge"}, min_seeds=5),)  # fmt: skip
    control_description = (
        "the uniform-weights barycenter (fair, but not the projection: with p = 0.84 / 0.16"
        " its cost is about 0.25 / (0.84 * 0.16) = 1.9 U(f)) in the projection's place"
    )

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        post = method_rows(results, "projection", **POST)
        uniform = method_rows(results, "projection", **{**POST, "weights": "uniform"})
        return _swap(results, post, uniform)


class RiskCostCrime(_RiskCost):
    """The cost of post-processing ridge on Communities and Crime is U(f).

    Source: Le Gouic et al. 2020, Theorem 2.3; Chzhen et al., NeurIPS 2020.
    """

    name = "risk-cost-crime"
    statement = (
        "On Communities and Crime, post-processing ridge onto the barycenter raises the test"
        " MSE by U(f), the base's W2 unfairness on the same test split: the ratio"
        " (MSE_post - MSE_base) / U(f) per split is 1 +- 0.25 (the law-school margin)."
    )
    requires = (Cells("communities-crime", ("projection", "unconstrained"), {},
                      {"regressor": "ridge"}, min_seeds=5),)  # fmt: skip
    control_description = (
        "the unconstrained ridge in the projection's place (a post-processor that changes"
        " nothing: no cost; uniform weights cannot serve, the groups being 0.51 / 0.49)"
    )

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        post = method_rows(results, "projection", **POST)
        return _swap(results, post, method_rows(results, "unconstrained", regressor="ridge"))


# -- the meta-theorem --------------------------------------------------------------------

LINEAR = {"model": "linear", "noise": 1.0}
LIPSCHITZ = {"model": "lipschitz", "noise": 1.0}
"""The synthetic models of the rate claims (the paper suite also runs noise 3, apart)."""
SCALES, PROPORTIONS = (1.0, 2.0), (0.7, 0.3)
"""synthetic-unequal-variance's default group scales and proportions (the suite's)."""
BOUND_C = 2 * max(np.dot(PROPORTIONS, SCALES) / s for s in SCALES) ** 2
"""C = 2 max_s Lip(T_s)^2 = 2 (sbar / min_s scale_s)^2 = 3.38: the barycenter map T_s
scales group s by sbar / scale_s on the model, and (a + b)^2 <= 2 a^2 + 2 b^2."""


class _Bound(Claim):
    """Fukuchi's meta-theorem as a bound: fair risk <= C (regression + transport risk).

    Source: Fukuchi, ICML 2025, meta-theorem (Section 4): the fair risk of the
    post-processed estimator is bounded by the base's regression risk plus the cost of
    estimating the transport maps, up to a constant.
    """

    task = TASK
    source = FUKUCHI
    unit = "seed"
    subject = "projection"
    hypothesis = Less(BOUND_C)
    subject_params: ClassVar[dict[str, Any]]
    control_description = (
        "the fair risks reversed along n within each seed (a fair risk that does not fall"
        " with its regression and transport terms): the bound must break"
    )

    def _cells(self, results: pd.DataFrame) -> pd.DataFrame:
        rows = self.requires[0].rows(results)
        return method_rows(rows, "projection", **self.subject_params).sort_values(
            ["seed", "dataset.n_train"], key=lambda c: c.astype(float)
        )

    def statistic(self, results: pd.DataFrame) -> Estimate:
        rows = self._cells(results)
        ratio = rows["fair-risk"] / (rows["regression-risk"] + rows["transport-risk"])
        worst = ratio.groupby(rows["seed"]).max().to_numpy(float)
        return one_sample(worst, null=BOUND_C, alternative="less")

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        rows = self._cells(results).copy()
        rows["fair-risk"] = (
            rows.groupby("seed")["fair-risk"].transform(lambda v: v.to_numpy()[::-1]).to_numpy()
        )
        return rows


class BoundKNN(_Bound):
    """The meta-theorem's bound for groupwise k-NN on the Lipschitz model.

    Source: Fukuchi, ICML 2025, meta-theorem (Section 4).
    """

    name = "meta-theorem-bound-knn"
    subject_params: ClassVar[dict[str, Any]] = {"regressor": "knn-rate"}
    statement = (
        "On the Lipschitz model (d = 1) with groupwise k-NN (k = n^(2/3)) post-processed by"
        " the barycenter map, at every n of the suite (main suite 500 to 32,000) the fair risk"
        " E(g - g*)^2 is at"
        f" most C = 2 max_s (sbar / scale_s)^2 = {BOUND_C:.2f} times regression risk plus"
        " transport risk: the per-seed maximum over n of the ratio has mean below C."
    )
    requires = (Cells("synthetic-unequal-variance", ("projection",), LIPSCHITZ,
                      {"regressor": "knn-rate"}, min_seeds=5),)  # fmt: skip


class BoundRidge(_Bound):
    """The meta-theorem's bound for ridge on the linear model (a second function class).

    Source: Fukuchi, ICML 2025, meta-theorem (Section 4).
    """

    name = "meta-theorem-bound-ridge"
    subject_params: ClassVar[dict[str, Any]] = {"regressor": "ridge", "map_rows": 0}
    statement = (
        "On the linear model (d = 5, unequal group variances) with ridge post-processed by"
        " the barycenter map, at every n of the suite (main suite 250 to 16,000) the fair risk"
        f" is at most C = {BOUND_C:.2f} times regression risk plus transport risk (the same"
        " C: the map scales group s by sbar / scale_s here too): the per-seed maximum over n"
        " of the ratio has mean below C."
    )
    requires = (Cells("synthetic-unequal-variance", ("projection",), LINEAR,
                      {"regressor": "ridge"}, min_seeds=5),)  # fmt: skip


class _FairRate(Claim):
    """The fair risk's log-log slope in n matches the exponent the theory gives.

    Source: Fukuchi, ICML 2025, meta-theorem: the fair minimax rate is the slower of the
    regression rate and the transport rate (about 1/n for empirical quantile maps).
    """

    task = TASK
    source = FUKUCHI
    unit = "seed"
    subject = "projection"
    exponent: ClassVar[float]
    regressor: ClassVar[str]
    control_params: ClassVar[dict[str, Any]]
    subject_params: ClassVar[dict[str, Any]] = {}

    def _subject(self, results: pd.DataFrame) -> pd.DataFrame:
        rows = self.requires[0].rows(results)
        return method_rows(rows, "projection", regressor=self.regressor, **self.subject_params)

    def statistic(self, results: pd.DataFrame) -> Estimate:
        return _slope_estimate(self._subject(results), "fair-risk", self.exponent)

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        rows = self.requires[-1].rows(results)
        source = method_rows(rows, "projection", **self.control_params)
        return _swap(results, self._subject(results), source)


class FairRateRidge(_FairRate):
    """Ridge on the linear model: fair risk at the parametric rate 1/n.

    Source: Fukuchi, ICML 2025, meta-theorem; ridge's rate (d + M) / n.
    """

    name = "fair-rate-ridge"
    exponent = -1.0
    regressor = "ridge"
    subject_params: ClassVar[dict[str, Any]] = {"map_rows": 0}
    control_params: ClassVar[dict[str, Any]] = {"regressor": "ridge", "map_rows": 100}
    statement = (
        "On the linear model (d = 5, unequal group variances, so g* is not a shift), ridge"
        " post-processed by the barycenter map fitted on n_calib = n rows has fair risk"
        " falling as n^-1 (the class's minimax rate (d + M) / n): log-log slope -1 +- 0.1"
        " over the suite's n range (main suite 250 to 16,000)."
    )
    requires = (Cells("synthetic-unequal-variance", ("projection",), LINEAR,
                      {"regressor": "ridge"}, min_seeds=5),)  # fmt: skip
    hypothesis = Within(-1.0, SLOPE_MARGIN)
    control_description = (
        "maps fitted on a fixed 100 calibration rows (map_rows=100): the transport error"
        " does not fall with n, so neither does the fair risk"
    )


class FairRateKNNBalanced(_FairRate):
    """Groupwise k-NN at the k that balances its bias and variance on the model.

    Source: Fukuchi, ICML 2025, meta-theorem; the k-NN rate: Gyorfi et al. 2002, Thm 6.2.
    """

    name = "fair-rate-knn-balanced"
    exponent = -0.75
    regressor = "knn-balanced"
    control_params: ClassVar[dict[str, Any]] = {"regressor": "knn-undersmoothed"}
    statement = (
        "On the Lipschitz model (d = 1; f* piecewise linear, so k-NN's squared bias is about"
        " (k/n)^3, from the ends of the support and the kink only), groupwise k-NN at the"
        " balanced k = n^(3/4) post-processed by the barycenter map has fair risk falling as"
        " n^(-3/4), its regression rate on this f*: log-log slope -0.75 +- 0.1 over the"
        " suite's n range (main suite 500 to 32,000)."
    )
    requires = (Cells("synthetic-unequal-variance", ("projection",), LIPSCHITZ,
                      {"regressor": "knn-balanced"}, min_seeds=5),
                Cells("synthetic-unequal-variance", ("projection",), LIPSCHITZ,
                      {"regressor": "knn-undersmoothed"}, min_seeds=5))  # fmt: skip
    hypothesis = Within(-0.75, SLOPE_MARGIN)
    control_description = (
        "k = n^(1/3) (undersmoothed: variance n^(-1/3) dominates) in place of n^(3/4)"
    )


class FairRateKNNClass(_FairRate):
    """Groupwise k-NN at the Lipschitz class's rate-optimal k = n^(2/3).

    Source: Fukuchi, ICML 2025, meta-theorem; the Lipschitz minimax rate n^(-2/3) in d = 1
    (Stone 1982; Gyorfi et al. 2002, Thm 6.2).
    """

    name = "fair-rate-knn-class"
    exponent = -2 / 3
    regressor = "knn-rate"
    control_params: ClassVar[dict[str, Any]] = {"regressor": "knn-undersmoothed"}
    statement = (
        "On the Lipschitz model (d = 1), groupwise k-NN at the class's rate-optimal"
        " k = n^(2/3) post-processed by the barycenter map has fair risk falling at the"
        " Lipschitz minimax rate n^(-2/3): log-log slope -2/3 +- 0.1 over the suite's n"
        " range (main suite 500 to 32,000)."
    )
    requires = (Cells("synthetic-unequal-variance", ("projection",), LIPSCHITZ,
                      {"regressor": "knn-rate"}, min_seeds=5),
                Cells("synthetic-unequal-variance", ("projection",), LIPSCHITZ,
                      {"regressor": "knn-undersmoothed"}, min_seeds=5))  # fmt: skip
    hypothesis = Within(-2 / 3, SLOPE_MARGIN)
    control_description = "k = n^(1/3) (undersmoothed) in place of n^(2/3)"


# -- the trade-off and the port ------------------------------------------------------------


class TradeOff(Claim):
    """Chzhen & Schreuder's risk of the alpha-relative-improvement optimum.

    Source: Chzhen & Schreuder, Ann. Statist. 50(4), 2022: f_alpha = sqrt(alpha) f* +
    (1 - sqrt(alpha)) g* has risk (1 - sqrt(alpha))^2 U(f*) (reconstruction, not checked
    against the paper).
    """

    name = "alpha-trade-off"
    task = TASK
    source = CHZHEN_SCHREUDER
    unit = "seed"
    subject = "partial-fairness"
    margin: ClassVar[float] = 0.1
    statement = (
        "On the linear model (n = 4,000, U(f*) = 0.42 exact), partial fairness of the Bayes"
        " regressor at alpha = 1/16, 1/4, 9/16 has excess risk E(f_alpha - f*)^2 equal to"
        " (1 - sqrt(alpha))^2 U(f*): the per-seed mean over alpha of their ratio is 1 +- 0.1."
    )
    requires = (Cells("synthetic-unequal-variance", ("partial-fairness",),
                      {"model": "linear", "n_train": 4000},
                      {"regressor": "oracle", "alpha": [0.0625, 0.25, 0.5625]},
                      min_seeds=5),)  # fmt: skip
    hypothesis = Within(1.0, margin)
    control_description = (
        "the excess risk a mix with alpha instead of sqrt(alpha) would have,"
        " (1 - alpha)^2 / (1 - sqrt(alpha))^2 times the measured one"
    )

    def _cells(self, results: pd.DataFrame) -> pd.DataFrame:
        rows = method_rows(results, "partial-fairness", regressor="oracle")
        alpha = rows["method.alpha"].astype(float)
        return rows[(alpha > 0) & (alpha < 1)]

    def statistic(self, results: pd.DataFrame) -> Estimate:
        rows = self._cells(results)
        alpha = rows["method.alpha"].astype(float)
        cost = rows["dataset.cost_of_fairness"].astype(float)
        ratio = rows["excess-risk"] / ((1 - np.sqrt(alpha)) ** 2 * cost)
        return equivalence(ratio.groupby(rows["seed"]).mean().to_numpy(float), 1.0, self.margin)

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        rows = self._cells(results).copy()
        alpha = rows["method.alpha"].astype(float)
        rows["excess-risk"] *= (1 - alpha) ** 2 / (1 - np.sqrt(alpha)) ** 2
        return rows


class EquipyPortFidelity(Claim):
    """Port fidelity: ``projection(convention=equipy)`` reproduces equipy's own output.

    Without jitter: the harness gives each cell its own method seed (derived from the
    cell), so two cells never share a jitter stream; the jittered agreement is a unit test.

    Source: equipy 0.0.11a0, ``FairWasserstein`` (``_estimate_ecdf_eqf``,
    ``_fair_y_values``), an implementation of Chzhen et al., NeurIPS 2020.
    """

    name = "equipy-port-fidelity"
    task = TASK
    source = EQUIPY
    unit = "seed"
    subject = "projection"
    margin: ClassVar[float] = 1e-9
    statement = (
        "Port fidelity only: on Communities and Crime, projection with convention=equipy"
        " (equipy's ECDF, quantile interpolation and clipping) gives the test MSE of equipy's"
        " FairWasserstein (sigma = 0): mean |difference| over splits within 1e-9. It says"
        " nothing of the"
        " default order-statistic rule (see the exact small-case tests)."
    )
    requires = (Cells("communities-crime", ("projection", "equipy-fair-wasserstein"), {},
                      {"regressor": "ridge"}, min_seeds=5),)  # fmt: skip
    hypothesis = Within(0.0, margin)
    control_description = (
        "the default order-statistic rule (convention=order-statistic) in the port's place"
    )

    def statistic(self, results: pd.DataFrame) -> Estimate:
        port = method_rows(results, "projection", convention="equipy", jitter=0)
        peer = method_rows(results, "equipy-fair-wasserstein", sigma=0)
        ours, theirs = _paired(_per_seed(port, "mse"), _per_seed(peer, "mse"))
        return equivalence(np.abs(ours - theirs), 0.0, self.margin)

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        port = method_rows(results, "projection", convention="equipy", jitter=0)
        rule = method_rows(results, "projection", **POST)
        return _swap(results, port, rule)


CLAIMS: list[type[Claim]] = [
    DemographicParityCrime,
    DemographicParityLaw,
    RiskCostCrime,
    RiskCostLaw,
    BoundKNN,
    BoundRidge,
    FairRateRidge,
    FairRateKNNBalanced,
    FairRateKNNClass,
    TradeOff,
    EquipyPortFidelity,
]
