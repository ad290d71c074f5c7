"""Public API of the ``label-noise`` task for method authors.

A method receives a :class:`NoisyLabelData` (training patches with observed, partly flipped
labels; a validation split with flipped labels; a test split with true labels) and returns a
:class:`TrainingOutput`: its model's scores on every training input at every iteration, and
on the validation and test inputs at recorded iterations, with the index of the model it
returns. The simplest way to write one is to call :func:`train` (full-batch gradient descent
on the logistic loss, vectorised in torch) with your own sample weights or step choice.

Exports
-------
NoisyLabelData, TrainingOutput
    The task's data and output types (:mod:`harness_label_noise.data`).
train, History, record_steps
    The gradient-descent loop of the two-layer CNN and the linear model
    (:mod:`harness_label_noise._gd`).
flip_labels
    Fixed-count symmetric label flips (:mod:`harness_label_noise.datasets`).
signal_noise_coefficients, coefficient_curves, fit_curves, loss_curves, stage_times
    The signal-noise decomposition and the stage read-outs the metrics use (T_1 and T_2:
    the training losses ``T1_LOSS`` and ``T2_LOSS`` reached)
    (:mod:`harness_label_noise._decomposition`).

Source: Han, Huang, Zhou, Niu, Chen, Yan, Takeda, Suzuki, ICML 2025 (arXiv 2505.18909),
Section 3 (model and training) and Section 4 (decomposition).
"""

from __future__ import annotations

from harness_label_noise._decomposition import (
    T1_LOSS,
    T2_LOSS,
    coefficient_curves,
    fit_curves,
    loss_curves,
    signal_noise_coefficients,
    stage_times,
)
from harness_label_noise._gd import History, record_steps, train
from harness_label_noise.data import NoisyLabelData, TrainingOutput
from harness_label_noise.datasets import flip_labels

__all__ = [
    "T1_LOSS",
    "T2_LOSS",
    "History",
    "NoisyLabelData",
    "TrainingOutput",
    "coefficient_curves",
    "fit_curves",
    "flip_labels",
    "loss_curves",
    "record_steps",
    "signal_noise_coefficients",
    "stage_times",
    "train",
]
