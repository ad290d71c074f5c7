"""Metrics of the ``icl-gmm`` task: in-context error, its gap to Bayes, W* and GD's rate."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from harness import Curve, Metric, Skip
from harness_icl_gmm.data import IclData, IclOutput, softmax

__all__ = [
    "ErrorGap",
    "GDDistance",
    "GDRate",
    "LimitDistance",
    "LimitPosteriorGap",
    "PosteriorGap",
    "TestError",
    "total_variation",
    "window_rates",
]

TASK = "icl-gmm"


def total_variation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(1/2) sum_k |p_k - q_k| per row of (prompts, c) arrays; for c = 2 it is |p_1 - q_1|."""
    return 0.5 * np.abs(p - q).sum(axis=1)


def window_rates(
    steps: np.ndarray, distances: np.ndarray, window: int = 100, floor: float = 1e-11
) -> np.ndarray:
    """The log-contraction per step of each whole ``window``-step stretch of a run, from its
    first recorded step to its last recorded distance above ``floor`` (round-off): shape
    (stretches,). A linear rate makes them all alike; a plateau gives one near 0.

    >>> window_rates(np.arange(301), 0.95 ** np.arange(301)).round(4).tolist()
    [-0.0513, -0.0513, -0.0513]
    """
    above = np.nonzero(distances > floor)[0]
    last = steps[above[-1]] if above.size else steps[0]
    edges = np.arange(steps[0], last - window + 1, window)
    if edges.size < 2:
        raise Skip(f"fewer than 2 stretches of {window} steps above {floor:g}")
    log_d = np.log(np.interp(np.concatenate([edges, edges[-1:] + window]), steps, distances))
    return np.diff(log_d) / window


class TestError(Metric):
    """0-1 error of the predicted label (argmax) on the test queries.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Section 5 (ICL accuracy).
    In [0, 1], unitless, lower is better.
    """

    __test__ = False
    name = "test-error"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: IclData, output: IclOutput) -> float:
        return float(np.mean(output.probs.argmax(axis=1) != data.context_means("test").query_y))


class ErrorGap(Metric):
    """Test error minus the Bayes-optimal classifier's error on the same test queries.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.2 (the trained
    model approaches the Bayes-optimal prediction). In [-1, 1], unitless, lower is better;
    negative only by chance on a finite test set.
    """

    name = "error-gap"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: IclData, output: IclOutput) -> float:
        test = data.context_means("test")
        bayes = data.test_law.posterior(test.means, test.query_x).argmax(axis=1)
        model = output.probs.argmax(axis=1)
        return float(np.mean(model != test.query_y) - np.mean(bayes != test.query_y))


class PosteriorGap(Metric):
    """Mean total-variation distance between the predicted and the true label distribution.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.2 / 4.2: the ICL
    inference error, bounded by O(1/N) + O(1/sqrt(M)). In [0, 1], unitless, lower is better.
    """

    name = "posterior-gap"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: IclData, output: IclOutput) -> float:
        test = data.context_means("test")
        truth = data.test_law.posterior(test.means, test.query_x)
        return float(np.mean(total_variation(output.probs, truth)))


class LimitPosteriorGap(Metric):
    """:class:`PosteriorGap` of the model's W with infinitely long test contexts (M -> inf):
    the training-prompt term of the inference error, O(1/N).

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.2 (the 1/N term).

    Returns ``truth`` (gap to the true posterior), ``paired`` (gap to the same model with
    W_ref, fitted on the same training prompts with infinitely long contexts: the low-variance
    estimate of the 1/N term, where the method provides W_ref) and ``identity`` (the truth gap
    of W = c I). In [0, 1], unitless, lower is better. Skips models without a W.
    """

    name = "limit-posterior-gap"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: IclData, output: IclOutput) -> dict[str, float]:
        if output.weights is None:
            raise Skip("the model has no single-layer weights W")
        test = data.context_means("test").infinite()
        truth = data.test_law.posterior(test.means, test.query_x)

        def probs(w: np.ndarray) -> np.ndarray:
            return softmax(np.einsum("pkd,de,pe->pk", test.class_means, w, test.query_x))

        mine = probs(output.weights)
        identity = probs(data.classes * np.eye(data.dim))
        out = {"truth": float(np.mean(total_variation(mine, truth))),
               "identity": float(np.mean(total_variation(identity, truth)))}  # fmt: skip
        if output.reference_weights is not None:
            reference = probs(output.reference_weights)
            out["paired"] = float(np.mean(total_variation(mine, reference)))
        return out


class LimitDistance(Metric):
    """How far the model's W / c is from Lambda^-1, relative to ||Lambda^-1||_max.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.1 / 4.1:
    W* = c (Lambda^-1 + G) with ||G||_max = O(1/N).

    Returns ``max`` = ||W/c - Lambda^-1||_max, ``frobenius`` (the same in Frobenius norm,
    relative to ||Lambda^-1||_F), ``paired`` = ||(W - W_ref)/c||_max with W_ref fitted on
    the same training prompts with infinitely long contexts (the low-variance estimate of
    ||G||_max where the method provides W_ref), and ``identity`` = ||W/c - I||_max (the
    identity in place of Lambda^-1). All relative, unitless, >= 0; lower is closer.
    """

    name = "limit-distance"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: IclData, output: IclOutput) -> dict[str, float]:
        if output.weights is None:
            raise Skip("the model has no single-layer weights W")
        precision = data.train_law.precision
        scale = np.abs(precision).max()
        g = output.weights / data.classes - precision
        to_identity = output.weights / data.classes - np.eye(data.dim)
        out = {
            "max": float(np.abs(g).max() / scale),
            "frobenius": float(np.linalg.norm(g) / np.linalg.norm(precision)),
            "identity": float(np.abs(to_identity).max() / scale),
        }
        if output.reference_weights is not None:
            paired = (output.weights - output.reference_weights) / data.classes
            out["paired"] = float(np.abs(paired).max() / scale)
        return out


class GDDistance(Metric):
    """||W_t - W*||_F / ||W*||_F over the recorded GD steps t (a curve).

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.1: linear
    convergence of GD to the global minimiser. Unitless, >= 0, lower is closer.
    Skips models trained without a recorded trajectory.
    """

    name = "gd-distance"
    task = TASK
    higher_is_better: ClassVar[bool | None] = False

    def compute(self, data: IclData, output: IclOutput) -> Curve:
        if output.trajectory is None or output.minimiser is None:
            raise Skip("the model has no recorded GD trajectory")
        w_star = output.minimiser
        distances = np.linalg.norm(output.trajectory - w_star, axis=(1, 2))
        return Curve(distances / np.linalg.norm(w_star), output.trajectory_steps)


class GDRate(Metric):
    """GD's contraction over its whole run, from its start, against the local rate.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.1: GD converges
    to the global minimiser at a linear rate (from its initialisation, not only near W*);
    the local rate is GD's textbook rate near W*, max_i |1 - eta lambda_i(H*)|.

    Returns ``predicted`` (log max_i |1 - eta lambda_i(H*)| of the merged loss), ``global``
    (log(||W_T - W*|| / ||W_0 - W*||) / T over the whole run, T its last step above
    round-off, over ``predicted``) and ``slowest`` (the slowest 100-step stretch of the run,
    over ``predicted``): 1 for GD at the local rate throughout, 0 for a plateau. Unitless.
    """

    name = "gd-rate"
    task = TASK

    def compute(self, data: IclData, output: IclOutput) -> dict[str, float]:
        if output.trajectory is None or output.step_size is None:
            raise Skip("the model has no recorded GD trajectory")
        steps = output.trajectory_steps
        distances = np.linalg.norm(output.trajectory - output.minimiser, axis=(1, 2))
        rates = window_rates(steps, distances)
        predicted = float(np.log(np.abs(1 - output.step_size * output.hessian_eigenvalues).max()))
        return {"predicted": predicted, "global": float(rates.mean()) / predicted,
                "slowest": float(rates.max()) / predicted}  # fmt: skip
