"""Metrics of the ``margin-qml`` task: accuracy, gap, margins, parameter counts, trace distance.

Source: Hur & Park, ICML 2025, official ``score_and_margins`` and ``get_mu_params``
(papers file §4) and the Helstrom bound (§6).
"""

from __future__ import annotations

import numpy as np

from harness import Metric, Skip
from harness_margin_qml.data import QMLData, QNNGroupOutput, QNNOutput

__all__ = [
    "EffectiveParameters",
    "GeneralizationGap",
    "MarginMean",
    "MarginQ25",
    "MarginQ50",
    "MarginQ75",
    "ParameterCount",
    "TestAccuracy",
    "TraceDistance",
    "TrainAccuracy",
    "margins",
    "trace_distance",
]


def margins(probs: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Born-probability margins d_i = p_{y_i}(x_i) - max_{j≠y_i} p_j(x_i).

    Parameters
    ----------
    probs : numpy.ndarray of float, shape (n, K)
    y : numpy.ndarray of int, shape (n,)

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        In [-1, 1]; positive where the point is classified correctly (no ties).

    Examples
    --------
    >>> margins(np.array([[0.7, 0.3], [0.4, 0.6]]), np.array([0, 0])).round(2).tolist()
    [0.4, -0.2]
    """
    p = np.asarray(probs, dtype=float)
    rows = np.arange(len(y))
    own = p[rows, y]
    others = p.copy()
    others[rows, y] = -np.inf
    return own - others.max(axis=1)


class _ModelMetric(Metric):
    """A metric of one trained model; on a :class:`QNNGroupOutput` it scores every member
    and returns ``{"<key>": value}`` (or ``{"<key>.<sub>": value}`` for several values), so
    a group cell logs ``<metric>.<key>`` columns that the report turns back into one row per
    model."""

    def value(self, data: QMLData, output: QNNOutput) -> float | dict[str, float]:
        raise NotImplementedError

    def compute(self, data: QMLData, output: QNNOutput) -> float | dict[str, float]:
        if not isinstance(output, QNNGroupOutput):
            return self.value(data, output)
        out: dict[str, float] = {}
        for key, member in zip(output.keys, output.members, strict=True):
            v = self.value(data, member)
            if isinstance(v, dict):
                out |= {f"{key}.{sub}": x for sub, x in v.items()}
            else:
                out[key] = v
        return out


def _accuracy(probs: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.argmax(probs, axis=1) == y))


class TrainAccuracy(_ModelMetric):
    """Fraction of training points whose most probable class is their (noisy) label.

    Source: Hur & Park, ICML 2025, ``score_and_margins``. In [0, 1], higher is better.
    """

    name = "train-accuracy"
    task = "margin-qml"
    higher_is_better = True

    def value(self, data: QMLData, output: QNNOutput) -> float:
        return _accuracy(output.train_probs, data.y_train)


class TestAccuracy(_ModelMetric):
    """Fraction of test points whose most probable class is their label (noisy, as in the paper).

    Source: Hur & Park, ICML 2025, ``score_and_margins``. In [0, 1], higher is better.
    """

    name = "test-accuracy"
    task = "margin-qml"
    higher_is_better = True

    def value(self, data: QMLData, output: QNNOutput) -> float:
        return _accuracy(output.test_probs, data.y_test)


class GeneralizationGap(_ModelMetric):
    """Generalisation gap g = train accuracy - test accuracy.

    Source: Hur & Park, ICML 2025, §5 (the quantity the measures should predict).
    In [-1, 1], unitless, lower is better.
    """

    name = "generalization-gap"
    task = "margin-qml"
    higher_is_better = False

    def value(self, data: QMLData, output: QNNOutput) -> float:
        return _accuracy(output.train_probs, data.y_train) - _accuracy(
            output.test_probs, data.y_test
        )


class MarginMean(_ModelMetric):
    """Mean signed training margin (before zeroing misclassified margins).

    Source: Hur & Park, ICML 2025, ``score_and_margins`` ("Margin Mean"). In [-1, 1].
    """

    name = "margin-mean"
    task = "margin-qml"
    higher_is_better = True

    def value(self, data: QMLData, output: QNNOutput) -> float:
        return float(margins(output.train_probs, data.y_train).mean())


class _MarginQuantile(_ModelMetric):
    q: float = 0.5
    higher_is_better = True
    task = "margin-qml"

    def value(self, data: QMLData, output: QNNOutput) -> float:
        d = margins(output.train_probs, data.y_train)
        d = np.where(d > 0, d, 0.0)  # misclassified margins set to 0, as the official code
        return float(np.quantile(d, self.q))  # linear interpolation = torch.quantile


class MarginQ25(_MarginQuantile):
    """First quartile Q1 of training margins, misclassified margins set to 0.

    Source: Hur & Park, ICML 2025, ``score_and_margins`` (``torch.quantile`` after zeroing).
    In [0, 1].
    """

    name = "margin-q25"
    q = 0.25


class MarginQ50(_MarginQuantile):
    """Median Q2 of training margins, misclassified margins set to 0.

    Source: Hur & Park, ICML 2025, ``score_and_margins``. In [0, 1].
    """

    name = "margin-q50"
    q = 0.5


class MarginQ75(_MarginQuantile):
    """Third quartile Q3 of training margins, misclassified margins set to 0.

    Source: Hur & Park, ICML 2025, ``score_and_margins``. In [0, 1].
    """

    name = "margin-q75"
    q = 0.75


class ParameterCount(_ModelMetric):
    """μ_param: number of trainable circuit angles.

    Source: Hur & Park, ICML 2025, ``get_mu_params``. Count, unitless; no direction.
    """

    name = "parameter-count"
    task = "margin-qml"

    def value(self, data: QMLData, output: QNNOutput) -> float:
        return float(output.theta_final.size)


class EffectiveParameters(_ModelMetric):
    """μ_eff: number of angles that moved more than 0.1 and more than 0.01 rad in training.

    Source: Hur & Park, ICML 2025, ``get_mu_params`` (μ_eff10, μ_eff100). Counts, unitless.
    Keys ``above-0.1`` and ``above-0.01``.
    """

    name = "effective-parameters"
    task = "margin-qml"

    def value(self, data: QMLData, output: QNNOutput) -> dict[str, float]:
        moved = np.abs(output.theta_final - output.theta_init)
        return {"above-0.1": float((moved > 0.1).sum()), "above-0.01": float((moved > 0.01).sum())}


def trace_distance(states: np.ndarray, y: np.ndarray) -> float:
    """D_tr(ρ0, ρ1) = ½‖ρ1 - ρ0‖₁ of the class-averaged density matrices.

    Parameters
    ----------
    states : numpy.ndarray of complex, shape (n, 2**n_qubits)
    y : numpy.ndarray of int, shape (n,), labels in {0, 1}

    Returns
    -------
    float
        In [0, 1].
    """
    w = np.where(y == 1, 1.0 / max((y == 1).sum(), 1), -1.0 / max((y == 0).sum(), 1))
    diff = (states.T * w) @ states.conj()  # Σ_i w_i |ψ_i><ψ_i|, (d, d)
    return float(0.5 * np.abs(np.linalg.eigvalsh(diff)).sum())


class TraceDistance(_ModelMetric):
    """Trace distance between the two classes' average embedded training states.

    Source: Hur & Park, ICML 2025, §6 / Helstrom: the mean signed margin of any two-outcome
    measurement is at most this. In [0, 1], higher is better (more separable embedding).

    Raises
    ------
    Skip
        If the method does not report embedded states, or the data have more than 2 classes.
    """

    name = "trace-distance"
    task = "margin-qml"
    higher_is_better = True

    def value(self, data: QMLData, output: QNNOutput) -> float:
        if output.train_states is None:
            raise Skip("trace-distance needs an embedding method's states (iqp-embedding, nqe)")
        if data.n_classes != 2:
            raise Skip(f"trace-distance needs two classes, got {data.n_classes}")
        return trace_distance(output.train_states, data.y_train)
