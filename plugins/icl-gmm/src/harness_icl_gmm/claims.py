"""The paper's claims as pre-registered hypotheses over ``icl-gmm`` results.

Every constant below (cells, margins, windows) was fixed before the committed evidence was
made. Margins come from the theory's form (a slope of -1 or -1/2, a rate ratio of 1) widened
by what finite N brings: in a 3-seed pilot (prototype code, another covariance generator,
seeds not in the suites) ||G||_max behaved like a / (N + b) with b about 16, so the local
log-log slope over N = 80 .. 640 is about -0.9, inside -1 +- 0.25.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from harness import Cells, Claim, Greater, Source, Within
from harness.stats import Estimate, equivalence, loglog_slope, one_sample

if TYPE_CHECKING:  # pandas is imported by the results, not by start-up
    import pandas as pd


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """``pandas.concat``, imported when a claim is evaluated (not at start-up)."""
    import pandas

    return pandas.concat(frames)


__all__ = [
    "BeatsContextLogisticRegression",
    "CovarianceShiftHurtsLinearAttention",
    "GDLinearRate",
    "GapRateInM",
    "GapRateInN",
    "LimitOneOverN",
    "LimitOneOverNMulticlass",
    "OneLayerMoreRobustToMeanShift",
]

TASK = "icl-gmm"
PAPER = Source("Shen, Zhou, Yang, Shen, ICML 2025", "2410.11778")
GD = "linear-attention-gd"
N_GRID = [80, 160, 320, 640]
M_GRID = [16, 64, 256, 1024]
SEEDS = 6
RESAMPLES = 2000


def _where(where: str) -> Source:
    return Source(PAPER.paper, PAPER.arxiv, where)


def _flag(rows: pd.DataFrame, column: str, value: bool) -> pd.Series:
    return rows[column].astype(str).str.lower().eq(str(value).lower())


def _per_seed(rows: pd.DataFrame, metric: str, by: str | None = None) -> pd.DataFrame:
    """Mean of ``metric`` per seed (and per ``by``): one value per unit."""
    keys = ["seed"] + ([by] if by else [])
    frame = rows.assign(seed=rows["seed"].astype(str))
    if by:
        frame = frame.assign(**{by: frame[by].astype(float)})
    return frame.groupby(keys, as_index=False)[metric].mean()


def _slope_within(x, y, units, reference: float, margin: float) -> Estimate:
    """:func:`harness.stats.loglog_slope` with the two one-sided bootstrap p-values of
    equivalence to ``reference +- margin`` (the larger one), as TOST does."""
    low = loglog_slope(x, y, units, null=reference - margin, resamples=RESAMPLES)
    high = loglog_slope(x, y, units, null=reference + margin, resamples=RESAMPLES)
    p = max(low.p_value, high.p_value, 2 / (RESAMPLES + 1)) / 2  # a bootstrap p is never 0
    return Estimate(low.estimate, low.low, low.high, p, low.n, low.mde,
                    low.test + f", TOST within {reference:g} +- {margin:g}")  # fmt: skip


class _SlopeClaim(Claim):
    """A log-log slope of ``metric`` against the dataset param ``along`` over seeds, on the
    rows whose ``method.shuffle_labels`` is False."""

    metric: ClassVar[str]
    along: ClassVar[str]
    reference: ClassVar[float]
    margin: ClassVar[float]

    def statistic(self, results: pd.DataFrame) -> Estimate:
        rows = results[_flag(results, "method.shuffle_labels", False)]
        units = _per_seed(rows, self.metric, f"dataset.{self.along}")
        return _slope_within(units[f"dataset.{self.along}"], units[self.metric], units["seed"],
                             self.reference, self.margin)  # fmt: skip


class GDLinearRate(Claim):
    """GD on the single-layer model converges to W* linearly, at the local rate.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.1.
    Control: the identity c I in place of W* (a point GD does not converge to).
    """

    name = "gd-linear-rate"
    task = TASK
    source = _where("Theorem 3.1 (linear convergence)")
    statement = (
        "Gradient descent on the single-layer linear-attention model converges to the global "
        "minimiser W* at a linear rate: over the second half of 1,000 steps, log||W_t - W*||_F "
        "falls per step at the local rate log max|1 - eta lambda_i(H*)| (ratio within 1 +- 0.1); "
        "the paper proves a linear rate without a number."
    )
    requires = (
        Cells("gaussian-mixture", (GD,), {"classes": 2, "train_length": 40},
              {"solver": "gd", "shuffle_labels": False, "steps": 1000}, min_seeds=SEEDS),
    )  # fmt: skip
    hypothesis = Within(1.0, 0.1)
    unit = "seed"
    control_description = "the identity c I in place of W* (distance to a non-limit)"

    def statistic(self, results: pd.DataFrame) -> Estimate:
        return equivalence(_per_seed(results, "gd-rate.ratio")["gd-rate.ratio"], 1.0, 0.1)

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        return results.assign(**{"gd-rate.ratio": results["gd-rate.identity_ratio"]})


class LimitOneOverN(_SlopeClaim):
    """||W*/2 - Lambda^-1||_max shrinks like 1/N (binary).

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.1.
    Control: the identity in place of Lambda^-1.
    """

    name = "limit-one-over-n"
    task = TASK
    source = _where("Theorem 3.1 (W* = 2(Lambda^-1 + G), ||G||_max = O(1/N))")
    statement = (
        "The trained binary model's W*/2 approaches Lambda^-1 like 1/N: the log-log slope of "
        "||G||_max (paired estimate) over N = 80..640 is within -1 +- 0.25."
    )
    requires = (
        Cells("gaussian-mixture", (GD,), {"classes": 2, "train_length": N_GRID,
              "test_length": 40, "train_prompts": 50_000},
              {"solver": "newton", "shuffle_labels": False}, min_seeds=SEEDS),
    )  # fmt: skip
    hypothesis = Within(-1.0, 0.25)
    metric, along, reference, margin = "limit-distance.paired", "train_length", -1.0, 0.25
    control_description = "the identity in place of Lambda^-1 (||W/2 - I||_max)"

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        return results.assign(**{self.metric: results["limit-distance.identity"]})


class LimitOneOverNMulticlass(LimitOneOverN):
    """||W*/3 - Lambda^-1||_max shrinks like 1/N (three classes).

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 4.1.
    Control: the identity in place of Lambda^-1.
    """

    name = "limit-one-over-n-multiclass"
    source = _where("Theorem 4.1 (W* = c(Lambda^-1 + G), ||G||_max = O(c/N))")
    statement = (
        "With c = 3 classes, W*/3 approaches Lambda^-1 like 1/N: the log-log slope of "
        "||G||_max (paired estimate) over N = 80..640 is within -1 +- 0.25."
    )
    requires = (
        Cells("gaussian-mixture", (GD,), {"classes": 3, "train_length": N_GRID,
              "test_length": 40, "train_prompts": 50_000},
              {"solver": "newton", "shuffle_labels": False}, min_seeds=SEEDS),
    )  # fmt: skip


class GapRateInM(_SlopeClaim):
    """The inference error shrinks like 1/sqrt(M) in the test prompt length.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.2.
    Control: the model trained on shuffled context labels.
    """

    name = "gap-rate-in-m"
    task = TASK
    source = _where("Theorem 3.2 (inference error O(1/N) + O(1/sqrt(M)))")
    statement = (
        "At N = 640, the trained model's mean total-variation gap to the true label posterior "
        "falls like M^(-1/2): its log-log slope over M = 16..1024 is within -0.5 +- 0.15."
    )
    requires = tuple(
        Cells("gaussian-mixture", (GD,), {"classes": 2, "train_length": 640,
              "test_length": M_GRID, "train_prompts": 50_000},
              {"solver": "newton", "shuffle_labels": shuffled}, min_seeds=SEEDS)
        for shuffled in (False, True)
    )  # fmt: skip
    hypothesis = Within(-0.5, 0.15)
    metric, along, reference, margin = "posterior-gap", "test_length", -0.5, 0.15
    control_description = "the model trained on shuffled context labels in place of the trained one"

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        return _swap_shuffled(results)


class GapRateInN(_SlopeClaim):
    """The training-prompt term of the inference error shrinks like 1/N.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.2.
    Control: the identity in place of the trained W.
    """

    name = "gap-rate-in-n"
    task = TASK
    source = _where("Theorem 3.2 (the O(1/N) term)")
    statement = (
        "With infinitely long test contexts, the posterior gap between the model trained at N "
        "and the same-sample N = infinity model falls like 1/N: log-log slope over N = 80..640 "
        "within -1 +- 0.25."
    )
    requires = LimitOneOverN.requires
    hypothesis = Within(-1.0, 0.25)
    metric, along, reference, margin = "limit-posterior-gap.paired", "train_length", -1.0, 0.25
    control_description = "the identity c I in place of the trained W (its gap to the truth)"

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        return results.assign(**{self.metric: results["limit-posterior-gap.identity"]})


class BeatsContextLogisticRegression(Claim):
    """The trained model classifies in context better than logistic regression per prompt.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), v3 experiments (superior
    ICL performance over traditional baselines on Gaussian mixtures).
    Control: the model trained on shuffled context labels.
    """

    name = "beats-context-logistic-regression"
    task = TASK
    source = _where("Section 5, comparison with traditional baselines (v3)")
    statement = (
        "With M = 20 context points, the model trained by GD at N = 40 has a lower test error "
        "than logistic regression fitted on each prompt's context (paired by seed)."
    )
    requires = (
        *(Cells("gaussian-mixture", (GD,), {"classes": 2, "train_length": 40, "test_length": 20},
                {"solver": "newton", "shuffle_labels": shuffled}, min_seeds=SEEDS)
          for shuffled in (False, True)),
        Cells("gaussian-mixture", ("context-logistic-regression",),
              {"classes": 2, "train_length": 40, "test_length": 20}, min_seeds=SEEDS),
    )  # fmt: skip
    hypothesis = Greater(0.0)
    unit = "seed"
    subject = GD
    control_description = "the model trained on shuffled context labels in place of the trained one"

    def statistic(self, results: pd.DataFrame) -> Estimate:
        model = results[results["method"].eq(GD)]
        if "method.shuffle_labels" in model:
            model = model[_flag(model, "method.shuffle_labels", False)]
        mine = _per_seed(model, "test-error").set_index("seed")["test-error"]
        base = _per_seed(results[results["method"].eq("context-logistic-regression")],
                         "test-error").set_index("seed")["test-error"]  # fmt: skip
        seeds = sorted(set(mine.index) & set(base.index))
        return one_sample(base[seeds].to_numpy() - mine[seeds].to_numpy(), alternative="greater")

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        return _swap_shuffled(results)


class OneLayerMoreRobustToMeanShift(Claim):
    """The 1-layer model loses less than the 3-layer softmax transformer under a mean shift.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), v3 robustness comparison of
    1-layer and 3-layer models under distribution shift; the direction and the shift are this
    plugin's reconstruction (science notes §3: not read in the paper).
    Control: the unshifted test prompts in place of the shifted ones.
    """

    name = "one-layer-robust-to-mean-shift"
    task = TASK
    source = _where("Section 5, robustness under distribution shift (v3)")
    statement = (
        "When test class means are 3 times farther apart than in training, the 3-layer softmax "
        "transformer's test error rises more than the 1-layer linear-attention model's "
        "(difference in differences over seeds > 0)."
    )
    requires = (
        Cells("gaussian-mixture-shift", (GD, "softmax-transformer"),
              {"mean_scale": [1.0, 3.0], "covariance_mix": 0.0}, min_seeds=5),
    )  # fmt: skip
    hypothesis = Greater(0.0)
    unit = "seed"
    subject = GD
    control_description = "the unshifted test prompts (mean_scale 1) in place of the shifted ones"

    def statistic(self, results: pd.DataFrame) -> Estimate:
        rows = results.assign(shifted=results["dataset.mean_scale"].astype(float) > 1.0)
        table = rows.groupby(["seed", "shifted", "method"])["test-error"].mean().unstack("method")
        excess = (table["softmax-transformer"] - table[GD]).unstack("shifted").dropna()
        return one_sample(excess[True] - excess[False], alternative="greater")

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        base = results[results["dataset.mean_scale"].astype(float) == 1.0]
        return _concat([base, base.assign(**{"dataset.mean_scale": "3.0"})])


class CovarianceShiftHurtsLinearAttention(Claim):
    """Under a covariance shift the 1-layer model, which applies the training Lambda^-1,
    falls away from the Bayes error.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.1 (W* -> 2
    Lambda^-1 of the training law) and the v3 shift experiments; science notes §4.6.
    Control: the unshifted test prompts in place of the shifted ones.
    """

    name = "covariance-shift-hurts-linear-attention"
    task = TASK
    source = _where("Theorem 3.1 and Section 5 (covariance shift)")
    statement = (
        "With the test covariance in a fresh eigenbasis (covariance_mix = 1), the trained "
        "1-layer model's error gap to the Bayes classifier grows (paired by seed, > 0)."
    )
    requires = (
        Cells("gaussian-mixture-shift", (GD,), {"mean_scale": 1.0, "covariance_mix": [0.0, 1.0]},
              min_seeds=5),
    )  # fmt: skip
    hypothesis = Greater(0.0)
    unit = "seed"
    control_description = "the unshifted test prompts (covariance_mix 0) in place of the shifted"

    def statistic(self, results: pd.DataFrame) -> Estimate:
        rows = _per_seed(results, "error-gap", "dataset.covariance_mix")
        table = rows.pivot(index="seed", columns="dataset.covariance_mix", values="error-gap")
        table = table.dropna()
        return one_sample(table[1.0] - table[0.0], alternative="greater")

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        base = results[results["dataset.covariance_mix"].astype(float) == 0.0]
        return _concat([base, base.assign(**{"dataset.covariance_mix": "1.0"})])


def _swap_shuffled(results: pd.DataFrame) -> pd.DataFrame:
    """The shuffled-label model's rows in place of the trained model's."""
    if "method.shuffle_labels" not in results:
        raise ValueError("no shuffled-label rows (method.shuffle_labels) among the results")
    shuffled = _flag(results, "method.shuffle_labels", True)
    trained = _flag(results, "method.shuffle_labels", False)
    swapped = results[shuffled].assign(**{"method.shuffle_labels": "False"})
    return _concat([results[~shuffled & ~trained], swapped])


CLAIMS = [
    GDLinearRate,
    LimitOneOverN,
    LimitOneOverNMulticlass,
    GapRateInN,
    GapRateInM,
    BeatsContextLogisticRegression,
    OneLayerMoreRobustToMeanShift,
    CovarianceShiftHurtsLinearAttention,
]
