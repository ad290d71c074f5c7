"""Claims of the ``label-noise`` task (Han et al., ICML 2025) on the claims contract v2.

Read: the abstract and the authors' code (``zzp1012/label-noise-theory``); the theorems'
statements could not be read. At ``n SNR^2 = 16`` Stage I lasts tens of steps; the stages are
read at training losses (T_1: the clean samples' mean loss at 0.3; T_2: the training loss at
0.1). Margins were fixed on seeds 100-102 (never in a suite); pilots in each docstring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from harness import Cells, Claim, Greater, Less, Rival, Select, Source, Within
from harness.claims import Mean, PairedGain, Permute, Statistic, Swap, TSample, UseMetric

if TYPE_CHECKING:  # pandas comes with the results
    import pandas as pd

__all__ = ["CLAIMS", "theory_t1"]

TASK, SEEDS, ARXIV = "label-noise", 10, "2505.18909"
PAPER = "Han, Huang, Zhou, Niu, Chen, Yan, Takeda, Suzuki, ICML 2025"
SYNTHETIC, DIGITS, CNN = "signal-noise-patches", "digits-binary", "two-layer-cnn"
NOISY = {"n": 200, "d": 500, "noise_sd": 1.0, "signal_norm": 6.3246, "tau": 0.2}
CNN_PARAMS = {"width": 10, "learning_rate": 0.1, "steps": 1000}
# the T_1 settings at n SNR^2 = 16, tau = 0.2: (n, d, sigma_p, ||mu||), (m, eta) of the CNN
SETTINGS = tuple(
    (dict(zip(("n", "d", "noise_sd", "signal_norm"), data, strict=True)),
     dict(zip(("width", "learning_rate"), cnn, strict=True)))
    for data, cnn in (((100, 500, 1.0, 8.9443), (10, 0.1)), ((200, 500, 1.0, 6.3246), (10, 0.1)),
                      ((400, 1000, 1.0, 6.3246), (5, 0.025)), ((200, 1000, 0.5, 4.4721), (20, 0.1)))
)  # fmt: skip
SUBJECT, NOISY_CNN = Select(CNN, CNN_PARAMS), Select(CNN, CNN_PARAMS, NOISY)
LINEAR = Rival("linear-logistic", {"learning_rate": 0.1},
               "no hidden layer: the same gradient descent, loss and step")  # fmt: skip
LINEAR_SLOW = Rival("linear-logistic", {"learning_rate": 0.01},
                    "no hidden layer, step eta / m: the CNN's time scale")  # fmt: skip
SIGNAL_FREE = Swap(Select(CNN, CNN_PARAMS, {**NOISY, "signal_norm": 0.0}), NOISY_CNN,
                   "the signal-free model (mu = 0) in its place")  # fmt: skip


def _cells(method: str, data: dict, params: dict, dataset: str = SYNTHETIC) -> Cells:
    return Cells(dataset, (method,), data, params, min_seeds=SEEDS)


def theory_t1(rows: pd.DataFrame) -> np.ndarray:
    """``n m / (eta sigma_p^2 d)`` of each row's setting (the CNN's m, eta), shape (rows,)."""
    scale = {tuple(float(data[k]) for k in ("n", "d", "noise_sd")):
             data["n"] * cnn["width"] / (cnn["learning_rate"] * data["noise_sd"] ** 2 * data["d"])
             for data, cnn in SETTINGS}  # fmt: skip
    keys = zip(*(rows[f"dataset.{k}"].astype(float) for k in ("n", "d", "noise_sd")), strict=True)
    return np.array([scale[key] for key in keys])


def _t1_slopes(rows: pd.DataFrame, metric: str, unit: Any, subject: Select) -> TSample:
    """Per seed, the OLS slope of log T_1 on log :func:`theory_t1` over the settings."""
    mine = subject.rows(rows)
    x, y = np.log(theory_t1(mine)), np.log(mine[metric].astype(float).to_numpy())
    slopes = [np.polyfit(x[i], y[i], 1)[0] for i in mine.groupby("seed").indices.values()
              if np.unique(x[i]).size >= 3]  # fmt: skip
    return TSample.of(slopes, f"log-log slope of T_1 per seed, t over {len(slopes)} units")


def _above_half_tau(rows: pd.DataFrame, metric: str, unit: Any, subject: Select) -> TSample:
    """Per seed, the least over tau of (test error at T_2) - tau / 2."""
    mine = subject.rows(rows)
    worst = (mine[metric].astype(float) - 0.5 * mine["dataset.tau"].astype(float)).groupby(
        mine["seed"].to_numpy()).min()  # fmt: skip
    return TSample.of(worst.to_numpy(), f"min over tau per seed, t over {worst.size} units")


class _Claim(Claim):
    """A claim of the task, one value per seed (a draw of the data and the init)."""

    task, unit = TASK, "seed"


class StageOneRejectsFlippedLabels(_Claim):
    """Stage I at T_1. Pilot (seeds 100-102): CNN 0.02 (T_1 = 25-28 steps), signal-free 1.0,
    linear at eta 0.00 (T_1 = 1 step: the first step's mean difference), at eta / m 0.00.
    Source: Han et al., ICML 2025, abstract (Stage I).
    """

    name = "stage-one-rejects-flipped-labels"
    source = Source(PAPER, ARXIV, "Abstract, Stage I (Theorem 4.1 not read)")
    statement = (
        "When the two-layer CNN's clean samples reach a mean loss of 0.3 (T_1; n SNR^2 = 16,"
        " tau = 0.2), fewer than 20% of the flipped samples are fitted (the paper: none)."
    )
    requires = (_cells(CNN, NOISY, CNN_PARAMS),
                _cells(CNN, {**NOISY, "signal_norm": 0.0}, CNN_PARAMS))  # fmt: skip
    metric = "stage-one.flipped_fit"
    kind = Mean(of=NOISY_CNN)
    hypothesis = Less(0.2)
    subject = SUBJECT
    rivals = (LINEAR, LINEAR_SLOW)
    control = SIGNAL_FREE


class StageTwoMemorisesFlippedLabels(StageOneRejectsFlippedLabels):
    """Stage II: by T_2 the flipped samples are fitted. Pilot: a rise of 0.95 for the CNN
    (T_2 = 490-532 steps), 0.0 for the signal-free control, 1.0 for both linear rivals.
    Source: Han et al., ICML 2025, abstract (Stage II).
    """

    name = "stage-two-memorises-flipped-labels"
    source = Source(PAPER, ARXIV, "Abstract, Stage II (Theorem 4.2 not read)")
    statement = (
        "From T_1 to T_2 (the training loss at 0.1) the share of flipped samples the two-layer"
        " CNN fits rises by more than 0.5 (the paper: it memorises them)."
    )
    metric = "stage-two.memorised"
    hypothesis = Greater(0.5)


class SignalLeadsThenNoiseOvertakes(StageOneRejectsFlippedLabels):
    """gamma leads the flipped samples' rho at T_1, trails it at T_2 (both models decomposed
    exactly, see ``_gd``). Pilot: CNN 0.41, signal-free -1, both linear rivals 0.31.
    Source: Han et al., ICML 2025, abstract; signal-noise decomposition.
    """

    name = "signal-leads-then-noise-overtakes"
    source = Source(PAPER, ARXIV, "Abstract, Stage II; signal-noise decomposition")
    statement = (
        "min((gamma - rho)/(gamma + rho) at T_1, (rho - gamma)/(gamma + rho) at T_2) > 0 for"
        " max gamma and the flipped samples' mean max rho."
    )
    metric = "coefficient-order.both"
    hypothesis = Greater(0.0)


class StageOneTimeScale(_Claim):
    """T_1 over four settings varying n, d, sigma_p, eta and m. The order is issue 45's
    reading of Theorem 4.1; it follows from the update (gamma grows by about ``eta ||mu||^2 /
    m`` a step, ``||mu||^2 = 16 sigma_p^2 d / n``). Pilot: slopes 0.98-1.02 (T_1 = 13, 27,
    56, 105 steps); the linear model 0.73 (T_1 = 1, 1, 6, 3: no m in its time scale).
    Source: Han et al., ICML 2025, Theorem 4.1's T_1 (quoted in issue 45).
    """

    name = "stage-one-time-scale"
    source = Source(PAPER, ARXIV, "Theorem 4.1, T_1 = Theta(n m / (eta sigma_p^2 d)) (quoted)")
    statement = (
        "Over settings with n m / (eta sigma_p^2 d) = 20, 40, 80, 160 the two-layer CNN's T_1"
        " grows as n m / (eta sigma_p^2 d): a log-log slope within 1 +- 0.15."
    )
    requires = (Cells(SYNTHETIC, (CNN,), {k: sorted({d[k] for d, _ in SETTINGS}) for k in
                ("n", "d", "noise_sd", "signal_norm")} | {"tau": 0.2}, {"width": [5, 10, 20],
                "learning_rate": [0.025, 0.1]}, min_seeds=SEEDS),)  # fmt: skip
    metric = "stage-one.t1"
    kind = Statistic(_t1_slopes, "log-log slope of stage-one.t1 in n m / (eta sigma_p^2 d)")
    hypothesis = Within(1.0, 0.15)
    subject = CNN
    rivals = (Rival("linear-logistic", {"learning_rate": [0.025, 0.1]}, LINEAR.why),)
    control = Permute("stage-one.t1", within=("seed", "method"))


class EarlyStoppingRecoversPeak(_Claim):
    """The test accuracy's fall and its remedy, one fact counted once. Pilot: 0.011-0.028;
    0 with clean labels. Margin 0.005: five of the 1,000 test points.
    Source: Han et al., ICML 2025, abstract; Proposition 4.3.
    """

    name = "early-stopping-recovers-peak"
    source = Source(PAPER, ARXIV, "Abstract; Proposition 4.3 (early stopping)")
    statement = (
        "The two-layer CNN stopped at its best validation accuracy (flipped validation labels)"
        " beats the same run at 1,000 steps by more than 0.5 points of test accuracy."
    )
    requires = (_cells("early-stopping-cnn", NOISY, CNN_PARAMS),
                _cells("early-stopping-cnn", {**NOISY, "tau": 0.0}, CNN_PARAMS))  # fmt: skip
    metric = "test-summary.recovered"
    kind = Mean()
    hypothesis = Greater(0.005)
    subject = Select("early-stopping-cnn", CNN_PARAMS, NOISY)
    control = Swap(Select("early-stopping-cnn", CNN_PARAMS, {**NOISY, "tau": 0.0}), subject,
                   "clean labels (tau = 0) in its place: nothing to recover")  # fmt: skip


class SmallLossSelectionRecoversPeak(_Claim):
    """Retraining on the samples of loss below log 2 lowers the test error at T_2. Pilot:
    errors 0.000 (small-loss), 0.006-0.017 (all samples), 0.002-0.011 (a random subset).
    Source: Han et al., ICML 2025, abstract; Proposition 4.3.
    """

    name = "small-loss-selection-recovers-peak"
    source = Source(PAPER, ARXIV, "Abstract; Proposition 4.3 (small-loss sample selection)")
    statement = (
        "The two-layer CNN retrained on its samples of loss < log 2 at the early-stopping"
        " iteration has a test error at T_2 over 0.5 points below that with all samples."
    )
    requires = (_cells("small-loss-cnn", NOISY, {**CNN_PARAMS, "selection": ["small-loss",
                "random"]}), _cells(CNN, NOISY, CNN_PARAMS))  # fmt: skip
    metric = "stage-two.test_error"
    kind = PairedGain(SUBJECT, higher_is_better=False)
    hypothesis = Greater(0.005)
    subject = Select("small-loss-cnn", {"selection": "small-loss"})
    control = Swap(Select("small-loss-cnn", {"selection": "random"}), subject,
                   "a random subset of the same size (flip rate tau) in its place")  # fmt: skip


class ErrorBoundAfterStageTwo(_Claim):
    """Exploratory: ``0.5 min(tau_+, tau_-)`` is summaries' (papernotes, themoonlight), the
    theorem's statement and conditions were not read. Pilot: least margin over tau -0.09.
    Source: Han et al., ICML 2025, Theorem 4.2 (statement not read).
    """

    name = "error-at-least-half-tau-after-stage-two"
    exploratory = True
    source = Source(PAPER, ARXIV, "Theorem 4.2, as summarised (statement not read)")
    statement = (
        "At T_2 the two-layer CNN's test error exceeds tau / 2 at each of tau = 0.1, 0.2, 0.3"
        " (the least margin over tau per seed)."
    )
    requires = (_cells(CNN, {**NOISY, "tau": [0.1, 0.2, 0.3]}, CNN_PARAMS),)
    metric = "stage-two.test_error"
    kind = Statistic(_above_half_tau, "least over tau of stage-two.test_error - tau / 2")
    hypothesis = Greater(0.0)
    subject = Select(CNN, CNN_PARAMS)
    control = UseMetric("stage-one.test_error", "the test error at T_1, before Stage II")


class DigitsTestAccuracyFalls(_Claim):
    """Exploratory: the paper's real-data section (VGG, CIFAR-10) was not read. Pilot:
    0.07-0.15; 0 with clean labels. Margin 0.03: about three of the 89 test images.
    Source: Han et al., ICML 2025, abstract (real-world experiments).
    """

    name = "digits-test-accuracy-falls"
    exploratory = True
    source = Source(PAPER, ARXIV, "Abstract, real-world experiments (not read; digits here)")
    statement = (
        "On digits 3 vs 8 (n = 100, tau = 0.2) the two-layer CNN's test accuracy falls by more"
        " than 3 points from its peak to 1,000 steps."
    )
    requires = (_cells(CNN, {"pair": "3-vs-8", "n": 100, "tau": [0.2, 0.0]},
                       {"width": 5, "learning_rate": 4.0, "steps": 1000}, DIGITS),)  # fmt: skip
    metric = "test-summary.drop"
    kind = Mean()
    hypothesis = Greater(0.03)
    subject = Select(CNN, dataset_params={"tau": 0.2})
    control = Swap(Select(CNN, dataset_params={"tau": 0.0}), subject, "clean labels in its place")


CLAIMS: tuple[type[Claim], ...] = (
    StageOneRejectsFlippedLabels, StageTwoMemorisesFlippedLabels, SignalLeadsThenNoiseOvertakes,
    StageOneTimeScale, EarlyStoppingRecoversPeak, SmallLossSelectionRecoversPeak,
    ErrorBoundAfterStageTwo, DigitsTestAccuracyFalls,
)  # fmt: skip
