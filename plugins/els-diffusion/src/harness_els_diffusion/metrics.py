"""Metrics of the 'els-diffusion' task: agreement with the trained network, distance to the
training set, and the patch-mosaic provenance of each sample."""

from __future__ import annotations

import numpy as np

from harness import Metric, Skip
from harness_els_diffusion.data import DiffusionData, Samples

__all__ = [
    "Mosaic",
    "NearestImage",
    "PatchSchedule",
    "R2ToTrained",
    "pearson_r2",
    "rms_to_nearest",
]

#: RMS distance (pixel units, images in [-1, 1]) under which a sample counts as a copy
COPY_RMS = 0.05


def pearson_r2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared Pearson correlation over pixels of each pair of images.

    Parameters
    ----------
    a, b : ndarray, shape (n, H, W)

    Returns
    -------
    ndarray, shape (n,)
        In [0, 1]; 0 where either image is constant.
    """
    x = a.reshape(len(a), -1).astype(np.float64)
    y = b.reshape(len(b), -1).astype(np.float64)
    x = x - x.mean(axis=1, keepdims=True)
    y = y - y.mean(axis=1, keepdims=True)
    den = (x * x).sum(axis=1) * (y * y).sum(axis=1)
    num = (x * y).sum(axis=1) ** 2
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def rms_to_nearest(samples: np.ndarray, images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-pixel RMS distance of each sample to its nearest image, and that image's index.

    Parameters
    ----------
    samples : ndarray, shape (n, H, W)
    images : ndarray, shape (m, H, W)

    Returns
    -------
    distance : ndarray of float, shape (n,)
        In pixel units (images in [-1, 1]).
    index : ndarray of int, shape (n,)
    """
    s = samples.reshape(len(samples), -1).astype(np.float64)
    y = images.reshape(len(images), -1).astype(np.float64)
    d2 = (s * s).sum(1)[:, None] - 2 * s @ y.T + (y * y).sum(1)[None, :]
    index = d2.argmin(axis=1)
    return np.sqrt(np.maximum(d2[np.arange(len(s)), index], 0) / s.shape[1]), index


class R2ToTrained(Metric):
    """Squared correlation between a method's sample and the trained network's sample from
    the same noise, the median over noise draws.

    Source: Kamb & Ganguli, ICML 2025 (arXiv 2412.20292), abstract ("median r^2 of 0.95,
    0.94, 0.94, 0.96"). Reconstruction (not read in the paper): r^2 is taken here as the
    squared Pearson correlation over pixels of the two images; the authors' public
    evaluation script reports the unsquared correlation.

    Returns
    -------
    dict
        ``median``: the median over draws of r^2(sample_i, network_i), in [0, 1], unitless,
        higher is better. ``mismatched``: the same with the network's sample from another
        draw (``i + 1``), the chance level of two digit-like images (a control).
    """

    name = "r2-to-trained"
    task = "els-diffusion"
    higher_is_better = True

    def compute(self, data: DiffusionData, output: Samples) -> dict[str, float]:
        other = np.roll(data.reference, 1, axis=0)
        return {
            "median": float(np.median(pearson_r2(output.images, data.reference))),
            "mismatched": float(np.median(pearson_r2(output.images, other))),
        }


class NearestImage(Metric):
    """How close each sample is to a training image: memorisation.

    Source: Kamb & Ganguli, ICML 2025 (arXiv 2412.20292), abstract (the ideal machine
    "should only be able to produce memorized training examples"); the measure is this
    plugin's.

    Returns
    -------
    dict
        ``train``: median over samples of the RMS distance to the nearest training image,
        pixel units (images span [-1, 1]), lower is closer. ``heldout``: the same to the
        nearest of as many held-out images (a control: a copy of a training image is not a
        copy of a held-out one). ``copies``: share of samples within 0.05 RMS of a
        training image, in [0, 1].
    """

    name = "nearest-image"
    task = "els-diffusion"
    higher_is_better = False

    def compute(self, data: DiffusionData, output: Samples) -> dict[str, float]:
        train, _ = rms_to_nearest(output.images, data.train_images)
        heldout, _ = rms_to_nearest(output.images, data.heldout_images)
        return {
            "train": float(np.median(train)),
            "heldout": float(np.median(heldout)),
            "copies": float(np.mean(train < COPY_RMS)),
        }


class Mosaic(Metric):
    """Patch-mosaic provenance: where each pixel's 3x3 neighbourhood comes from.

    For every pixel of a sample, the nearest 3x3 training patch (any training image, any
    position, circular boundary) is found.

    Source: Kamb & Ganguli, ICML 2025 (arXiv 2412.20292), abstract ("a locally consistent
    patch mosaic ... mixing and matching different local training set patches at different
    scales and image locations"). The measure is this plugin's (reconstruction, not read in
    the paper).

    Returns
    -------
    dict
        ``sources``: mean over samples of the number of distinct training images that
        supply those nearest patches, in [1, H*W] (1: one image copied). ``patch_rms``:
        median over pixels and samples of the RMS distance of the 3x3 patch to its nearest
        training patch, pixel units, lower is more locally consistent.
    """

    name = "mosaic"
    task = "els-diffusion"
    higher_is_better = None  # a description, not a score: a copy and noise both fail it

    def compute(self, data: DiffusionData, output: Samples) -> dict[str, float]:
        train = _patches(data.train_images)  # (n_train, H*W, 9)
        _, positions, dim = train.shape
        flat = train.reshape(-1, dim)
        norms = (flat * flat).sum(1)
        sources, distances = [], []
        for sample in _patches(output.images):
            d2 = (sample * sample).sum(1)[:, None] - 2 * sample @ flat.T + norms[None, :]
            best = d2.argmin(axis=1)
            sources.append(len(np.unique(best // positions)))
            distances.append(np.sqrt(np.maximum(d2[np.arange(len(best)), best], 0) / dim))
        return {
            "sources": float(np.mean(sources)),
            "patch_rms": float(np.median(np.concatenate(distances))),
        }


class PatchSchedule(Metric):
    """The patch sizes a patch machine used, from high noise to low noise.

    Source: Kamb & Ganguli, ICML 2025 (arXiv 2412.20292), abstract (one calibrated
    time-dependent hyperparameter). That the calibrated scale shrinks as the noise falls is
    what the authors' published calibrations show (project science notes, section 1), not
    read in the paper.

    Returns
    -------
    dict
        ``high_noise`` / ``low_noise``: mean patch side (pixels) over the first / last half
        of the steps; ``non_increasing``: 1 if the size never grows as t goes from 1 to 0,
        else 0.

    Raises
    ------
    Skip
        For a method that uses no patches.
    """

    name = "patch-schedule"
    task = "els-diffusion"
    higher_is_better = None

    def compute(self, data: DiffusionData, output: Samples) -> dict[str, float]:
        sizes = output.patch_sizes.astype(float)
        if sizes.size == 0:
            raise Skip("the method uses no patches")
        half = max(1, sizes.size // 2)
        return {
            "high_noise": float(sizes[:half].mean()),
            "low_noise": float(sizes[-half:].mean()),
            "non_increasing": float(np.all(np.diff(sizes) <= 0)),
        }


def _patches(images: np.ndarray) -> np.ndarray:
    """Circular 3x3 patches at every pixel: (n, H*W, 9), float64."""
    x = images.astype(np.float64)
    n, h, w = x.shape
    rolled = [np.roll(x, (-dy, -dx), axis=(1, 2)) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
    return np.stack(rolled, axis=-1).reshape(n, h * w, 9)
