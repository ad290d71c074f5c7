"""Claims of the ``weak-features`` task (Sugiyama & Uchida, ICML 2025), as declarations.

Read: the abstract (PMLR 267:57249-57269; OpenReview ``kcE0TdWKji``) and the authors' code
(``KOHsEMP/discrete_WFL`` at ``aed6d67``: ``exp1.py``, ``calc_bound.ipynb``); the body was not
available, so no claim carries a published number. The paper family tests what the abstract
states, "the interdependencies between the estimation errors of WFs and the prediction error
of a downstream task"; gains of WFL over naive, which the paper does not report, are
``exploratory``. Margins and seeds: a pilot on seeds 100-104 (``results/README.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from harness import Cells, Claim, Greater, Rival, Select, Source
from harness.claims import PairedGain, Statistic, Swap, Transform, TSample, UseMetric, Within

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BOUND_RATIO", "CLAIMS", "EPSILONS", "SIZES"]

TASK = "weak-features"
PAPER = "Sugiyama & Uchida, ICML 2025 (PMLR 267:57249-57269)"
EXPERIMENT = "experiment exp1.py (est_error_rate); abstract: estimation vs downstream error"
EMULATED = "emulated-estimator"
EPSILONS = (0.0, 0.3, 0.6)
SIZES = (1000, 2000, 5000, 15000)
FIGURE = {"weak_columns": "marital-status,race,relationship", "n": 5000}
LOGISTIC_H = {"label_model": "logistic", "C": 1.0}
AUTHORS_H = {"label_model": "mlp", "h_hidden": 500, "h_solver": "adam", "h_epochs": 100}


def _error_slopes(rows: pd.DataFrame, metric: str, unit: str, subject: Select) -> TSample:
    """Per seed, the OLS slope of the 0-1 error (1 - ``metric``) on epsilon."""
    mine = subject.rows(rows)
    fits = [np.polyfit(part["method.epsilon"].astype(float), part[metric], 1)[0]
            for _, part in mine.groupby(unit) if part["method.epsilon"].nunique() > 1]  # fmt: skip
    slopes = np.round(-np.asarray(fits), 12)  # a flat error's slope is 0, not the fit's 1e-17
    return TSample.of(slopes, f"OLS slope of error on epsilon per seed, t over {len(slopes)}")


def _exact_estimates(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Each seed's accuracy at epsilon 0 in every cell of that seed and n."""
    exact = rows[metric].where(rows["method.epsilon"].astype(float).eq(0))
    exact = exact.groupby([rows["seed"], rows["dataset.n"]]).transform("max")
    return rows.assign(**{metric: exact})


class _ErrorRises(Claim):
    """Slope > 0 (pilot, synthetic: 0.18-0.22); control: estimates without error at every
    epsilon. No rival: no other method of the plugin reads epsilon."""

    task = TASK
    metric = "accuracy"
    unit = "seed"
    kind = Statistic(_error_slopes, "slope of the 0-1 error on epsilon (per unit epsilon)")
    hypothesis = Greater(0.0)
    control = Transform(_exact_estimates, "estimates without error at every epsilon")
    subject = Select(EMULATED, LOGISTIC_H)


class ErrorRisesWithEpsilonSynthetic(_ErrorRises):
    """The downstream error rises with the estimation error rate (synthetic, n = 5,000).
    Source: Sugiyama & Uchida, ICML 2025, abstract; experiment ``exp1.py``."""

    name = "error-rises-with-epsilon-synthetic"
    source = Source(PAPER, "", EXPERIMENT)
    statement = ("With estimates of error rate epsilon in {0, 0.3, 0.6} and a logistic h on 5,000"
                 " synthetic rows, the test 0-1 error rises with epsilon (slope > 0).")  # fmt: skip
    requires = (Cells("synthetic", (EMULATED,), {"n": 5000},
                      {"epsilon": list(EPSILONS), **LOGISTIC_H}, 10),)  # fmt: skip


class ErrorRisesWithEpsilonAdult(_ErrorRises):
    """The same on UCI Adult, weak columns of ``calc_bound.ipynb``'s ``weak_cols_dict``.
    Source: Sugiyama & Uchida, ICML 2025, abstract; experiment ``exp1.py``."""

    name = "error-rises-with-epsilon-adult"
    source = Source(PAPER, "", EXPERIMENT + "; Adult, calc_bound.ipynb's weak columns")
    statement = ("On UCI Adult (5,000 rows) with marital-status, race and relationship weak"
                 " and a logistic h, the test 0-1 error rises with epsilon.")  # fmt: skip
    requires = (Cells("adult", (EMULATED,), FIGURE, {"epsilon": list(EPSILONS), **LOGISTIC_H},
                      20),)  # fmt: skip


class ErrorRisesWithEpsilonAuthorsH(_ErrorRises):
    """The same with the authors' h.
    Source: Sugiyama & Uchida, ICML 2025; ``exp1.py`` (``arch='mlp'``, ``hd`` 500, Adam)."""

    name = "error-rises-with-epsilon-authors-h"
    source = Source(PAPER, "", EXPERIMENT + "; the authors' MLP h")
    statement = ("On UCI Adult with the figure's three weak columns and the authors' h (500 ReLU"
                 " units, Adam, 100 epochs), the test 0-1 error rises with epsilon.")  # fmt: skip
    requires = (Cells("adult", (EMULATED,), FIGURE, {"epsilon": list(EPSILONS), **AUTHORS_H},
                      5),)  # fmt: skip
    subject = Select(EMULATED, AUTHORS_H)


def _bound_over_loss(rows: pd.DataFrame, metric: str, unit: str, subject: Select) -> TSample:
    """Per seed, the mean over its cells of ln(``metric`` / logistic loss): t on the logs,
    shown as a geometric-mean ratio. A larger loss in any cell lowers it."""
    mine = subject.rows(rows)
    logs = np.log(mine[metric].astype(float) / mine["logistic-loss"].astype(float))
    per_seed = logs.groupby(mine[unit]).mean().to_numpy()
    return TSample.of(per_seed, f"geometric-mean bound/loss, t over {len(per_seed)}", "log")


#: The pilot's smallest geometric-mean bound/loss (seeds 100-104: 8.15, 8.27, 8.61, 8.42, 8.64).
BOUND_RATIO = 8.0


class BoundHoldsWithPilotSlack(Claim):
    """The paper's bound on the logistic risk lies above the test logistic loss by at least
    the factor the pilot supports, over the n and epsilon grid of the authors' figure.

    Per seed, the geometric mean over the 12 cells of bound / loss: a bound scaled by c < 8 / r
    (r: the evidence's ratio, c about 0.95) fails, and a model worse in any cell scores lower.
    Rival (pilot 6.9-7.1): h with C = 0.001, losses 0.51-0.66 (a coin flip's: 0.69). Control:
    the bound without its estimation part (flat in epsilon).
    Source: Sugiyama & Uchida, ICML 2025, bound as computed by ``calc_bound.ipynb``."""

    name = "bound-holds-with-pilot-slack"
    task = TASK
    source = Source(PAPER, "", "bound and risk-and-bound figure (calc_bound.ipynb)")
    statement = ("For the emulated estimator with a logistic h on synthetic data, over n = 1,000"
                 " to 15,000 and epsilon in {0, 0.3, 0.6}, the paper's bound exceeds the test"
                 " logistic loss by a geometric-mean factor above 8 (the pilot's).")  # fmt: skip
    requires = (Cells("synthetic", (EMULATED,), {"n": list(SIZES)},
                      {"epsilon": list(EPSILONS), **LOGISTIC_H}, 10),)  # fmt: skip
    metric = "wfl-bound.bound"
    unit = "seed"
    kind = Statistic(_bound_over_loss, "geometric mean over cells of bound / logistic loss")
    hypothesis = Greater(BOUND_RATIO)
    subject = Select(EMULATED, LOGISTIC_H)
    rivals = (Rival(EMULATED, {"epsilon": list(EPSILONS), "label_model": "logistic",
                               "C": 0.001}, "h that learns almost nothing"),)  # fmt: skip
    control = UseMetric("wfl-bound.complexity", "the bound without its estimation part")


WFL = "reconstruction: the paper reports no gain over naive"
NAIVE, JOINT, DROP = Select("naive"), Select("wfl-joint"), Select("drop-feature")
SEQ_HARD = Select("wfl-sequential", {"estimate": "hard"})
SEQ_SOFT = Select("wfl-sequential", {"estimate": "soft"})
NO_WF = Rival("drop-feature", {"label_model": "logistic"}, "h without the weak feature")
KINDS = {"noisy": [0.3, 0.6], "missing-mcar": [0.3, 0.6], "complementary": [0.0]}


def _cells(kinds: dict, arms: tuple[Select, ...], seeds: int) -> tuple[Cells, ...]:
    """Synthetic (n = 2,000) cells of each arm for each weak kind and its rates."""
    return tuple(Cells("synthetic", (arm.method,), {"n": 2000, "weak_kind": k, "rate": r},
                       {"label_model": "logistic", **arm.method_params}, seeds)
                 for k, r in kinds.items() for arm in arms)  # fmt: skip


class _Gain(Claim):
    """Accuracy gain over a baseline, paired by seed (a seed: its mean over the configurations);
    control: the baseline in the subject's place (gain 0). MDE: power 0.8, one-sided 0.025 / 5
    (Holm's smallest level in the exploratory family), at the pilot's spread."""

    task = TASK
    exploratory = True
    metric = "accuracy"
    unit = "seed"
    kind = PairedGain(NAIVE)
    hypothesis = Greater(0.0)
    control = Swap(NAIVE, SEQ_HARD, "naive in sequential WFL's place")


class SequentialBeatsNaiveComplementary(_Gain):
    """Sequential WFL (uniform complementary model, hard estimates) against naive. Pilot:
    +1.70 pp, sd 1.67 pp; MDE 1.4 pp at 20 seeds. No rival: drop-feature (pilot -0.9 pp, sd
    2.6 pp) stays undecided at any affordable n.
    Source: Sugiyama & Uchida, Learning from Complementary Features, arXiv 2408.14788 (abstract)."""

    name = "wfl-sequential-beats-naive-complementary"
    source = Source(PAPER + "; CFL", "2408.14788", WFL)
    statement = ("On synthetic data (n = 2,000) where each weak value is observed as a uniformly"
                 " drawn value it is not, sequential WFL is more accurate than naive.")  # fmt: skip
    requires = _cells({"complementary": [0.0]}, (NAIVE, SEQ_HARD), 20)
    subject = SEQ_HARD


class SequentialBeatsNaiveMissing(_Gain):
    """Sequential WFL (ignorable missingness, hard estimates) against missing-as-a-category,
    averaged per seed over the rates 0.3 and 0.6. Pilot: +1.19 pp, sd 0.77 pp (round 3: +0.76
    pp, sd 1.0 pp); MDE at 20 seeds 0.65 pp (0.85 pp at round 3's spread).
    Source: the plugin's reconstruction of sequential WFL (no result of the paper)."""

    name = "wfl-sequential-beats-naive-missing"
    source = Source(PAPER, "", WFL)
    statement = ("On synthetic data (n = 2,000) with a weak feature missing completely at"
                 " random (rates 0.3, 0.6), sequential WFL beats naive.")  # fmt: skip
    requires = _cells({"missing-mcar": [0.3, 0.6]}, (NAIVE, SEQ_HARD), 20)
    subject = SEQ_HARD
    rivals = (NO_WF,)


class JointBeatsNaive(_Gain):
    """Joint WFL against naive over the five configurations. Pilot: +1.29 pp, sd 0.58 pp
    (drop-feature -3.7 pp); MDE 0.77 pp at 10 seeds.
    Source: the plugin's reconstruction of joint WFL (CFL code ``joint_learning.py``)."""

    name = "wfl-joint-beats-naive"
    source = Source(PAPER, "", WFL + " (joint: CFL code joint_learning.py)")
    statement = ("On synthetic data (n = 2,000), averaged per seed over noisy and MCAR weak"
                 " features (0.3, 0.6) and a complementary one, joint WFL wins.")  # fmt: skip
    requires = _cells(KINDS, (NAIVE, JOINT), 10)
    subject = JOINT
    rivals = (NO_WF,)
    control = Swap(NAIVE, JOINT, "naive in joint WFL's place")


class SoftBeatsHardSequential(_Gain):
    """Soft estimates (posterior probabilities) against hard ones in sequential WFL. Pilot:
    +0.47 pp, sd 0.44 pp; MDE 0.37 pp at 20 seeds.
    Source: CFL (arXiv 2408.14788) compares hard and soft estimates; this setting is ours."""

    name = "soft-beats-hard-sequential"
    source = Source(PAPER + "; CFL", "2408.14788", WFL + " (CFL: hard and soft estimates)")
    statement = ("Averaged per seed over the five synthetic configurations, sequential WFL whose"
                 " h sees posterior probabilities beats it with one-hot estimates.")  # fmt: skip
    requires = _cells(KINDS, (SEQ_HARD, SEQ_SOFT), 20)
    kind = PairedGain(SEQ_HARD)
    subject = SEQ_SOFT
    control = Swap(SEQ_HARD, SEQ_SOFT, "hard estimates in the soft ones' place")


class JointMatchesSoftSequential(_Gain):
    """Soft inputs give most of joint WFL's gain: margin 0.75 pp (pilot +0.36, sd 0.16 pp).
    Source: the plugin's analysis of its reconstructions (no result of the paper)."""

    name = "joint-matches-soft-sequential"
    source = Source(PAPER, "", WFL + " (plugin analysis)")
    statement = ("Averaged per seed over the five synthetic configurations, joint WFL's accuracy"
                 " is within 0.75 pp of soft sequential WFL's.")  # fmt: skip
    requires = _cells(KINDS, (SEQ_SOFT, JOINT, DROP), 10)
    kind = PairedGain(SEQ_SOFT)
    hypothesis = Within(0.0, 0.0075)
    subject = JOINT
    control = Swap(DROP, JOINT, "drop-feature (no weak feature) in joint WFL's place")


#: Every claim of the task, in the order of the README table.
CLAIMS: list[type[Claim]] = [
    ErrorRisesWithEpsilonSynthetic, ErrorRisesWithEpsilonAdult, ErrorRisesWithEpsilonAuthorsH,
    BoundHoldsWithPilotSlack, SequentialBeatsNaiveComplementary, SequentialBeatsNaiveMissing,
    JointBeatsNaive, SoftBeatsHardSequential, JointMatchesSoftSequential]  # fmt: skip
