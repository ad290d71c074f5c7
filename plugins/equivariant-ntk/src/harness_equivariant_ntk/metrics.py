"""Metrics of the ``equivariant-ntk`` task."""

from __future__ import annotations

import hashlib

import numpy as np

from harness import Metric, Skip, limit_threads
from harness_equivariant_ntk import _kernels
from harness_equivariant_ntk.data import MeanPredictions, RotatedImages

__all__ = ["Accuracy", "GcnnGap", "gcnn_reference", "relative_gap"]

TASK = "equivariant-ntk"
_REFERENCES: dict[tuple, np.ndarray] = {}  # the last few references of this process


def gcnn_reference(data: RotatedImages, output: MeanPredictions) -> np.ndarray:
    """The C_4 GCNN-NTK mean prediction matching ``output``'s depth, times and step size.

    The GCNN with group convolutions over the whole group, through its own lifted recursion
    (:func:`_kernels.gcnn_ntk` with ``mixing``), trained on the upright digits only.

    Returns
    -------
    ndarray of float64, shape (len(output.times), n_test + n_off, classes)
    """
    key = (
        hashlib.sha256(data.x_train.tobytes() + data.points.tobytes()).hexdigest(),
        output.depth,
        tuple(output.times),
        output.lr,
    )
    if key not in _REFERENCES:
        with limit_threads(1):
            gram = _kernels.gcnn_ntk(data.x_train, data.x_train, output.depth, mixing=True)
            cross = _kernels.gcnn_ntk(data.points, data.x_train, output.depth, mixing=True)
            mean = _kernels.mean_predictions(cross, gram, data.targets, output.times, output.lr)
        if len(_REFERENCES) >= 4:
            _REFERENCES.pop(next(iter(_REFERENCES)))
        _REFERENCES[key] = mean
    return _REFERENCES[key].copy()


def relative_gap(mean: np.ndarray, reference: np.ndarray, norm: str = "max") -> float:
    """max over times of ||mean_t - reference_t|| / ||reference_t||, shapes (times, m, c).

    ``norm`` "max" uses the largest absolute entry, "rms" the root mean square.
    """
    diff, ref = np.abs(mean - reference), np.abs(reference)
    if norm == "max":
        per_time = diff.max(axis=(1, 2)) / ref.max(axis=(1, 2))
    else:
        per_time = np.sqrt((diff**2).mean(axis=(1, 2)) / (ref**2).mean(axis=(1, 2)))
    return float(per_time.max())


class GcnnGap(Metric):
    """Distance of a method's mean predictions from the C_4 GCNN-NTK's, at every training time.

    Source: Misof, Kessel, Gerken, ICML 2025 (arXiv 2406.06504), abstract: augmented training
    and GCNNs "share the same expected prediction over initializations at all training times
    and even off the data manifold". The reference is :func:`gcnn_reference`.

    Returns
    -------
    dict
        ``max``: max over times of max |mu - mu_GC| / max |mu_GC| over test and noise points;
        ``test`` and ``off``: the same over test points or noise points only; ``rms``: with
        root mean squares in place of maxima (the finite-width statistic); ``shifted``: ``max``
        with the method's prediction at each time set against the reference at the next time
        of the grid (a negative control: the identity must hold time by time). All relative,
        unitless, >= 0, lower is closer; 0 is the identity.
    """

    name = "gcnn-gap"
    task = TASK
    higher_is_better = False

    def compute(self, data: RotatedImages, output: MeanPredictions) -> dict[str, float]:
        reference = gcnn_reference(data, output)
        mean = np.concatenate([output.test, output.off], axis=1)
        n_test = output.test.shape[1]
        return {
            "max": relative_gap(mean, reference),
            "test": relative_gap(mean[:, :n_test], reference[:, :n_test]),
            "off": relative_gap(mean[:, n_test:], reference[:, n_test:]),
            "rms": relative_gap(mean, reference, "rms"),
            "shifted": relative_gap(mean[:-1], reference[1:]),
        }


class Accuracy(Metric):
    """Share of test digits whose largest mean output at the last training time is their class.

    Source: the kernel predictor's classification accuracy (Misof, Kessel, Gerken, ICML 2025,
    arXiv 2406.06504, abstract: equivariant NTKs "outperform their non-equivariant
    counterparts as kernel predictors").

    Returns
    -------
    dict
        ``all``: over every test digit; ``upright``: over the digits left in the training
        orientation (0 quarter turns); ``turned``: over the others. Each in [0, 1], unitless,
        higher is better.

    Raises
    ------
    Skip
        Never for ``all``; ``upright`` or ``turned`` are left out (as 0 digits) by raising
        only when the test set has no upright or no turned digit.
    """

    name = "test-accuracy"
    task = TASK
    higher_is_better = True

    def compute(self, data: RotatedImages, output: MeanPredictions) -> dict[str, float]:
        hits = output.test[-1].argmax(axis=1) == data.y_test
        upright = data.test_turns == 0
        if upright.all() or not upright.any():
            raise Skip("test-accuracy needs both upright and turned test digits")
        return {
            "all": float(hits.mean()),
            "upright": float(hits[upright].mean()),
            "turned": float(hits[~upright].mean()),
        }
