"""Methods of the ``equivariant-ntk`` task: kernel predictors and finite-width ensembles.

Every method returns the mean prediction over initialisations of a network trained on the
mean squared error by gradient flow (kernels, :func:`_kernels.mean_predictions`) or gradient
descent (ensembles), at the training times of :data:`TIMES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field

from harness import Method, Skip, limit_threads
from harness_equivariant_ntk import _ensemble, _kernels
from harness_equivariant_ntk.data import TIMES, MeanPredictions, RotatedImages

__all__ = ["CnnEnsemble", "CnnNtk", "GcnnNtk", "MlpNtk", "augmented", "kernel_predictions"]

TASK = "equivariant-ntk"
Depth = Annotated[int, Field(ge=1, le=4)]
Group = Literal["none", "c2", "c4"]


def augmented(data: RotatedImages, group: str) -> tuple[np.ndarray, np.ndarray]:
    """The training set under full ``group``-orbit augmentation: images (|G| n, 8, 8), targets."""
    images = _kernels.orbit(data.x_train, group).reshape(-1, 8, 8)
    return images, np.tile(data.targets, (len(_kernels.GROUPS[group]), 1))


def kernel_predictions(
    kernel, x_train, targets, data: RotatedImages, depth: int
) -> MeanPredictions:
    """Gradient-flow mean predictions of ``kernel(a, b, depth)`` at :data:`TIMES`."""
    with limit_threads(1):
        gram = kernel(x_train, x_train, depth)
        cross = kernel(data.points, x_train, depth)
        mean = _kernels.mean_predictions(cross, gram, targets, TIMES)
    n_test = len(data.x_test)
    return MeanPredictions(np.array(TIMES), mean[:, :n_test], mean[:, n_test:], depth)


class CnnNtk(Method):
    """The infinite-width CNN's NTK predictor, trained on the (optionally augmented) digits.

    Source: Misof, Kessel, Gerken, ICML 2025 (arXiv 2406.06504), abstract: "data augmented
    training of their non-equivariant counterparts"; the CNN and its NTK recursion are in
    :mod:`harness_equivariant_ntk._kernels` (Arora et al., NeurIPS 2019).

    Parameters
    ----------
    depth : int, default=2
        Convolution + ReLU layers (1 to 4).
    augment : {"none", "c2", "c4"}, default="none"
        Train on every image under every element of this rotation group (full-orbit data
        augmentation; "c2" is the half-turn subgroup of C_4, "none" no augmentation).

    Returns
    -------
    MeanPredictions
        mu_t on the test and noise images at :data:`TIMES`, gradient flow.
    """

    name = "cnn-ntk"
    task = TASK

    @dataclass
    class Params:
        depth: Depth = 2
        augment: Group = "none"

    def run(self, data: RotatedImages, params: Params, seed: int) -> MeanPredictions:
        x_train, targets = augmented(data, params.augment)
        return kernel_predictions(_kernels.cnn_ntk, x_train, targets, data, params.depth)


class GcnnNtk(Method):
    """The infinite-width group-convolutional network's NTK predictor, without augmentation.

    Source: Misof, Kessel, Gerken, ICML 2025 (arXiv 2406.06504), abstract (GCNN NTKs for
    C_n x R^2); the lifting, group-convolution and group-pooling recursion here is a
    reconstruction (not read in the paper): see :func:`_kernels.gcnn_ntk`.

    Parameters
    ----------
    depth : int, default=2
        Lifting + group-convolution layers (1 to 4).
    group : {"c2", "c4"}, default="c4"
        The rotation group of the lifting and pooling.
    mixing : bool, default=True
        Group convolutions that sum over the whole group (the lifted recursion), or that act
        on each orientation alone (computed through the CNN kernel of rotated inputs); the
        two give the same kernel.

    Returns
    -------
    MeanPredictions
        mu_t on the test and noise images at :data:`TIMES`, gradient flow.
    """

    name = "gcnn-ntk"
    task = TASK

    @dataclass
    class Params:
        depth: Depth = 2
        group: Literal["c2", "c4"] = "c4"
        mixing: bool = True

    def run(self, data: RotatedImages, params: Params, seed: int) -> MeanPredictions:
        def kernel(a: np.ndarray, b: np.ndarray, depth: int) -> np.ndarray:
            return _kernels.gcnn_ntk(a, b, depth, params.group, params.mixing)

        return kernel_predictions(kernel, data.x_train, data.targets, data, params.depth)


class MlpNtk(Method):
    """The infinite-width ReLU MLP's NTK predictor on flattened pixels: no spatial structure.

    Source: Jacot, Gabriel, Hongler, NeurIPS 2018 (the NTK recursion); a non-equivariant
    baseline of this plugin.

    Parameters
    ----------
    depth : int, default=2
        Hidden layers (1 to 4).

    Returns
    -------
    MeanPredictions
        mu_t on the test and noise images at :data:`TIMES`, gradient flow.
    """

    name = "mlp-ntk"
    task = TASK

    @dataclass
    class Params:
        depth: Depth = 2

    def run(self, data: RotatedImages, params: Params, seed: int) -> MeanPredictions:
        return kernel_predictions(_kernels.mlp_ntk, data.x_train, data.targets, data, params.depth)


class CnnEnsemble(Method):
    """An ensemble of finite-width one-layer CNNs trained by gradient descent with augmentation.

    Source: Misof, Kessel, Gerken, ICML 2025 (arXiv 2406.06504), abstract: the equivalence
    "still holds approximately for finite-width ensembles". Network and training are in
    :mod:`harness_equivariant_ntk._ensemble` (centred outputs, NTK parameterisation); the
    widths, ensemble size and step size are this plugin's (the paper's were not read).

    Parameters
    ----------
    width : int, default=64
        Channels of the convolution.
    members : int, default=4
        Networks in the ensemble (independent initialisations).
    augment : {"none", "c2", "c4"}, default="c4"
        Full-orbit augmentation group of the training set.
    lr : float, default=1.0
        Gradient-descent step size.
    steps : int, default=10
        Gradient-descent steps; the mean is recorded at the times of :data:`TIMES` up to
        t = lr x steps.

    Returns
    -------
    MeanPredictions
        The ensemble mean at those times, with ``lr`` (gradient descent) and depth 1.
    """

    name = "cnn-ensemble"
    task = TASK
    test_params: ClassVar[dict] = {"width": 8, "members": 2}

    @dataclass
    class Params:
        width: Annotated[int, Field(ge=1, le=4096)] = 64
        members: Annotated[int, Field(ge=1, le=256)] = 4
        augment: Group = "c4"
        lr: Annotated[float, Field(gt=0, le=2)] = 1.0
        steps: Annotated[int, Field(ge=1, le=10_000)] = 10

    def run(self, data: RotatedImages, params: Params, seed: int) -> MeanPredictions:
        x_train, targets = augmented(data, params.augment)
        times = [t for t in TIMES if t <= params.lr * params.steps]
        if not times:
            raise Skip(f"no time of {TIMES} within lr x steps = {params.lr * params.steps:g}")
        net = _ensemble.CnnEnsemble(params.members, params.width, data.classes, seed)
        with limit_threads(1, torch=True):
            mean = _ensemble.train_ensemble(net, x_train, targets, data.points, times, params.lr)
        n_test = len(data.x_test)
        return MeanPredictions(np.array(times), mean[:, :n_test], mean[:, n_test:], 1, params.lr)
