"""Methods of the 'els-diffusion' task: the trained network itself, the paper's analytic
machines (ELS, LS, ideal score) and two non-local rivals, each sampling from the data's
evaluation noise with the network's DDIM sampler."""

from dataclasses import dataclass
from typing import Annotated

import numpy as np
from pydantic import Field

from harness import LazyModule, Method, limit_threads
from harness_els_diffusion.data import DiffusionData, Samples

_machines = LazyModule("harness_els_diffusion._machines")  # torch loads when a cell runs

__all__ = [
    "ELSMachine",
    "GaussianDenoiser",
    "IdealScore",
    "LSMachine",
    "NearestNeighbour",
    "TrainedNetwork",
]

_NO_PATCHES = np.zeros(0, dtype=np.int64)


def _sample(data: DiffusionData, denoise: "_machines.Denoiser") -> np.ndarray:
    with limit_threads(1, torch=True):
        return _machines.run_sampler(denoise, data.eval_noise, data.steps)


class TrainedNetwork(Method):
    """The trained convolution-only network's own samples (the machines' target).

    Source: the dataset's network (:class:`harness_els_diffusion.datasets.Digits`); its
    samples are recorded when the data is loaded.

    Returns
    -------
    Samples
        ``DiffusionData.reference``, no patch sizes.
    """

    name = "trained-network"
    task = "els-diffusion"

    def run(self, data: DiffusionData, params: Method.Params, seed: int) -> Samples:
        return Samples(images=data.reference.copy(), patch_sizes=_NO_PATCHES)


class _PatchMachine(Method):
    """Shared run of the LS and ELS machines."""

    equivariant: bool

    @dataclass
    class Params:
        patch: Annotated[int, Field(ge=0)] = 0

    def run(self, data: DiffusionData, params: Params, seed: int) -> Samples:
        if params.patch == 0:
            h, w = data.image_shape
            candidates = (*range(1, min(h, w), 2), min(h, w))
            with limit_threads(1, torch=True):
                patches = _machines.calibrate_patches(
                    data.train_images, data.calibration_states, data.calibration_x0,
                    candidates, self.equivariant,
                )  # fmt: skip
        else:
            patches = [params.patch] * data.steps
        denoise = _machines.patch_denoiser(data.train_images, patches, self.equivariant)
        return Samples(images=_sample(data, denoise), patch_sizes=np.asarray(patches))


class ELSMachine(_PatchMachine):
    """The equivariant local score (ELS) machine with a calibrated patch size per step.

    Source: Kamb & Ganguli, ICML 2025 (arXiv 2412.20292), abstract (the ELS machine and
    its one calibrated time-dependent hyperparameter). Reconstruction (not read in the
    paper): the posterior over all training patches at all positions and the calibration
    rule, :mod:`harness_els_diffusion._machines`.

    Parameters
    ----------
    patch : int, default=0
        0: the patch size of each step calibrated on the network's calibration trajectories
        (odd sizes below the image side, or the whole image); an odd k >= 1: k at every
        step (``>= 8``: the whole image, the equivariant score machine).

    Returns
    -------
    Samples
        Samples from ``eval_noise``, and the patch size of every step.
    """

    name = "els-machine"
    task = "els-diffusion"
    equivariant = True


class LSMachine(_PatchMachine):
    """The local score (LS) machine: locality without equivariance (ELS's ablation).

    Source: Kamb & Ganguli, ICML 2025 (arXiv 2412.20292), abstract. Reconstruction (not
    read in the paper): candidates are the training patches at the query pixel's own
    position only, :mod:`harness_els_diffusion._machines`.

    Parameters
    ----------
    patch : int, default=0
        As for ``els-machine`` (0: calibrated per step, for LS itself).

    Returns
    -------
    Samples
    """

    name = "ls-machine"
    task = "els-diffusion"
    equivariant = False


class IdealScore(Method):
    """The ideal score machine: the exact score of the noised empirical training set.

    Source: Kamb & Ganguli, ICML 2025 (arXiv 2412.20292), abstract ("optimal score-matching
    ... should only be able to produce memorized training examples"); the softmax posterior
    over training images is the standard closed form (reconstruction, not read in the paper).

    Returns
    -------
    Samples
    """

    name = "ideal-score"
    task = "els-diffusion"

    def run(self, data: DiffusionData, params: Method.Params, seed: int) -> Samples:
        denoise = _machines.ideal_denoiser(data.train_images)
        return Samples(images=_sample(data, denoise), patch_sizes=_NO_PATCHES)


class GaussianDenoiser(Method):
    """Rival without locality or patches: the Wiener filter of a whole-image Gaussian fitted
    to the training set.

    Source: this plugin (the linear-Gaussian posterior mean, a textbook closed form).

    Parameters
    ----------
    ridge : float, default=1e-3
        Added to the covariance's eigenvalues, in squared pixel units.

    Returns
    -------
    Samples
    """

    name = "gaussian-denoiser"
    task = "els-diffusion"

    @dataclass
    class Params:
        ridge: Annotated[float, Field(gt=0)] = 1e-3

    def run(self, data: DiffusionData, params: Params, seed: int) -> Samples:
        denoise = _machines.gaussian_denoiser(data.train_images, params.ridge)
        return Samples(images=_sample(data, denoise), patch_sizes=_NO_PATCHES)


class NearestNeighbour(Method):
    """Rival without locality: the training image nearest to the rescaled state.

    Source: this plugin (the ideal machine's zero-temperature limit).

    Returns
    -------
    Samples
    """

    name = "nearest-neighbour"
    task = "els-diffusion"

    def run(self, data: DiffusionData, params: Method.Params, seed: int) -> Samples:
        denoise = _machines.nearest_denoiser(data.train_images)
        return Samples(images=_sample(data, denoise), patch_sizes=_NO_PATCHES)
