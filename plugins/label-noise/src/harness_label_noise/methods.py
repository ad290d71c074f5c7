"""Methods of the ``label-noise`` task: the paper's two-layer CNN trained by full-batch
gradient descent, its early-stopped and sample-selected variants, and a linear baseline.

All train on the observed (possibly flipped) labels of ``x_train`` only; the validation split
is read by early stopping and sample selection, the test split by no method.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field
from pydantic.dataclasses import dataclass

from harness import Method
from harness_label_noise._gd import record_steps, train
from harness_label_noise.data import NoisyLabelData, TrainingOutput

__all__ = ["EarlyStoppingCNN", "LinearLogistic", "SmallLossCNN", "TwoLayerCNN"]


@dataclass
class _LinearParams:
    init_scale: Annotated[float, Field(gt=0)] = 0.001
    learning_rate: Annotated[float, Field(gt=0)] = 0.1
    steps: Annotated[int, Field(ge=1)] = 600
    record: Annotated[int, Field(ge=2, le=1000)] = 60


@dataclass
class _GDParams(_LinearParams):
    width: Annotated[int, Field(ge=1)] = 10


def _fit(
    data: NoisyLabelData, params: _LinearParams, seed: int, weights: np.ndarray, model: str = "cnn"
) -> TrainingOutput:
    """One run of :func:`harness_label_noise._gd.train` as a fixed-horizon output."""
    history = train(data.x_train, data.y_train, weights, data.x_val, data.x_test, model=model,
                    width=getattr(params, "width", 1), init_scale=params.init_scale,
                    learning_rate=params.learning_rate, steps=params.steps,
                    record=record_steps(params.steps, params.record), seed=seed)  # fmt: skip
    return TrainingOutput(history.scores, history.steps, history.val, history.test,
                          history.steps.size - 1, weights > 0, history.coefficients)  # fmt: skip


def _best_on_validation(output: TrainingOutput, y_val: np.ndarray) -> int:
    """Index of the first recorded iteration of highest validation accuracy (noisy labels)."""
    accuracy = (np.sign(output.val_scores) == y_val[None, :]).mean(axis=1)
    return int(np.argmax(accuracy))


class TwoLayerCNN(Method):
    """Two-layer ReLU CNN, second layer fixed at +-1/m, trained by full-batch gradient descent
    on the logistic loss to a fixed horizon.

    Source: Han et al., ICML 2025, Section 3: ``f(W, x) = F_{+1}(W_{+1}, x) - F_{-1}(W_{-1},
    x)``, ``F_j = (1/m) sum_r sum_p ReLU(<w_{j,r}, x_p>)``, ``w_{j,r}(0) ~ N(0, sigma_0^2 I)``.

    Parameters
    ----------
    width : int, default=10
        m, the filters per output sign (2m filters in all).
    init_scale : float, default=0.001
        sigma_0, the standard deviation of the initial filters.
    learning_rate : float, default=0.1
        eta, the constant step of gradient descent.
    steps : int, default=600
        The horizon T (full-batch iterations).
    record : int, default=60
        About this many log-spaced iterations at which held-out scores are recorded.

    Returns
    -------
    TrainingOutput
        The last iterate is the returned model.

    Notes
    -----
    sigma_0, eta, m and T are CPU-scale reconstructions (the paper's values were not
    available); sigma_0 is small enough that ``sigma_0 sigma_p sqrt(d)`` stays below the
    coefficients reached in the first steps.
    """

    name = "two-layer-cnn"
    task = "label-noise"
    test_params: ClassVar[dict[str, int]] = {"steps": 30, "record": 8, "width": 4}
    Params = _GDParams

    def run(self, data: NoisyLabelData, params: _GDParams, seed: int) -> TrainingOutput:
        return _fit(data, params, seed, np.ones(data.y_train.size))


class EarlyStoppingCNN(Method):
    """The two-layer CNN, returning the iterate of highest validation accuracy.

    Source: Han et al., ICML 2025, Proposition 4.3 (early stopping at the end of Stage I);
    the stopping rule (best accuracy on a held-out split with flipped labels) is ours.

    Parameters
    ----------
    width, init_scale, learning_rate, steps, record
        As for ``two-layer-cnn``; the candidates are the recorded iterations.

    Returns
    -------
    TrainingOutput
        The whole run; ``returned`` points at the chosen iteration.
    """

    name = "early-stopping-cnn"
    task = "label-noise"
    test_params = TwoLayerCNN.test_params
    Params = _GDParams

    def run(self, data: NoisyLabelData, params: _GDParams, seed: int) -> TrainingOutput:
        output = _fit(data, params, seed, np.ones(data.y_train.size))
        best = _best_on_validation(output, data.y_val)
        return TrainingOutput(output.train_scores, output.steps, output.val_scores,
                              output.test_scores, best, output.trained_on,
                              output.coefficients)  # fmt: skip


@dataclass
class _SelectionParams(_GDParams):
    selection: Literal["small-loss", "random"] = "small-loss"


class SmallLossCNN(Method):
    """Small-loss sample selection: train, keep the samples whose loss is below log 2 at the
    early-stopping iteration, retrain from the same initialisation on them to the horizon.

    Source: Han et al., ICML 2025, Proposition 4.3 (at the end of Stage I every clean sample
    has loss <= log 2 and every flipped one >= log 2); the selection iteration (best
    validation accuracy) and the retraining are ours.

    Parameters
    ----------
    width, init_scale, learning_rate, steps, record
        As for ``two-layer-cnn``, for both runs.
    selection : {"small-loss", "random"}, default="small-loss"
        ``"random"`` keeps a uniformly drawn subset of the same size instead (a negative
        control: its flip rate stays tau).

    Returns
    -------
    TrainingOutput
        The retraining run (scores on all training inputs); ``trained_on`` is the selection.
    """

    name = "small-loss-cnn"
    task = "label-noise"
    test_params = TwoLayerCNN.test_params
    Params = _SelectionParams

    def run(self, data: NoisyLabelData, params: _SelectionParams, seed: int) -> TrainingOutput:
        first = _fit(data, params, seed, np.ones(data.y_train.size))
        at = first.steps[_best_on_validation(first, data.y_val)]
        # logistic loss < log 2  <=>  margin y~ f > 0
        keep = data.y_train * first.train_scores[at] > 0
        if params.selection == "random":
            rng = np.random.default_rng([seed, 1])
            chosen = rng.choice(keep.size, int(keep.sum()), replace=False)
            keep = np.zeros_like(keep)
            keep[chosen] = True
        if not keep.any():
            keep[:] = True
        return _fit(data, params, seed, keep.astype(float))


class LinearLogistic(Method):
    """Linear classifier ``f(x) = <v, vec(x)>`` trained by full-batch gradient descent on the
    logistic loss to a fixed horizon: the CNN's rival without a hidden layer (no feature
    learning), on the same data with the same loss and steps.

    Source: standard logistic regression by gradient descent; a baseline of ours. With
    ``learning_rate = eta / m`` its output moves as fast as the CNN's (whose second layer
    scales each filter's step by 1/m): the CNN's time scale without its hidden layer.

    Parameters
    ----------
    init_scale, learning_rate, steps, record
        As for ``two-layer-cnn``.

    Returns
    -------
    TrainingOutput
        The last iterate is the returned model; its coefficients as one filter per sign.
    """

    name = "linear-logistic"
    task = "label-noise"
    test_params: ClassVar[dict[str, int]] = {"steps": 30, "record": 8}
    Params = _LinearParams

    def run(self, data: NoisyLabelData, params: _LinearParams, seed: int) -> TrainingOutput:
        return _fit(data, params, seed, np.ones(data.y_train.size), model="linear")
