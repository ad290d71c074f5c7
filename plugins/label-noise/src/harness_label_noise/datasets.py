"""Datasets of the ``label-noise`` task: the paper's signal-noise patch model and a binary
task from scikit-learn's digits, both with training labels flipped at rate tau.

Flips follow the authors' code (a fixed count ``round(tau * n)`` of samples chosen uniformly,
in the training and validation splits; test labels stay clean) rather than the theory's
independent flips: the flipped fraction is then exactly tau in every seed.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field
from pydantic.dataclasses import dataclass

from harness import Dataset
from harness_label_noise.data import NoisyLabelData

__all__ = ["DigitsBinary", "SignalNoisePatches", "flip_labels"]


def flip_labels(y: np.ndarray, tau: float, rng: np.random.Generator) -> np.ndarray:
    """``y`` with exactly ``round(tau * len(y))`` entries, chosen uniformly, negated."""
    flipped = y.copy()
    flipped[rng.choice(y.size, round(tau * y.size), replace=False)] *= -1
    return flipped


class _NoisyDataset(Dataset):
    """Base: ``describe`` logs the realised flip count and the input shape."""

    def describe(self, data: NoisyLabelData) -> dict[str, float | int | str]:
        _, p, d = data.x_train.shape
        return {"flipped": int(data.noisy.sum()), "patches": p, "patch_dim": d}


class SignalNoisePatches(_NoisyDataset):
    """The paper's synthetic model: ``x = [y mu, xi]`` with ``xi ~ N(0, sigma_p^2 I_d)``.

    Source: Han et al., ICML 2025, Section 3 (data distribution); the flips of the authors'
    code (``scripts/train_binary.py``: a fixed count of flipped indices).

    Parameters
    ----------
    n : int, default=200
        Training samples.
    n_val : int, default=100
        Validation samples (labels flipped at rate tau), for early stopping.
    n_test : int, default=1000
        Test samples (true labels).
    d : int, default=500
        Patch dimension.
    signal_norm : float, default=4.0
        ``||mu||_2``; 0 gives the signal-free control. With the defaults
        ``n * SNR^2 = n ||mu||^2 / (sigma_p^2 d) = 6.4``.
    noise_sd : float, default=1.0
        sigma_p, the standard deviation of each noise coordinate.
    tau : float, default=0.2
        Flip rate, in [0, 0.5).

    Notes
    -----
    ``mu = signal_norm * e_1`` (any fixed direction is equivalent: the noise is isotropic).
    The sizes are CPU-scale choices, not the paper's (its values were not available); the
    paper's regime ``n * SNR^2 = Theta(1)`` is kept.
    """

    name = "signal-noise-patches"
    task = "label-noise"
    test_params: ClassVar[dict[str, int]] = {"n": 40, "n_val": 20, "n_test": 50, "d": 60}

    @dataclass
    class Params:
        n: Annotated[int, Field(ge=4)] = 200
        n_val: Annotated[int, Field(ge=2)] = 100
        n_test: Annotated[int, Field(ge=2)] = 1000
        d: Annotated[int, Field(ge=1)] = 500
        signal_norm: Annotated[float, Field(ge=0)] = 4.0
        noise_sd: Annotated[float, Field(gt=0)] = 1.0
        tau: Annotated[float, Field(ge=0, lt=0.5)] = 0.2

    def load(self, params: Params, seed: int) -> NoisyLabelData:
        rng = np.random.default_rng(seed)
        mu = np.zeros(params.d)
        mu[0] = params.signal_norm

        def split(rows: int, tau: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            y = rng.choice([-1.0, 1.0], rows)
            xi = params.noise_sd * rng.standard_normal((rows, params.d))
            x = np.stack([y[:, None] * mu[None, :], xi], axis=1)
            return x, flip_labels(y, tau, rng), y

        x, y_obs, y = split(params.n, params.tau)
        x_val, y_val, _ = split(params.n_val, params.tau)
        x_test, _, y_test = split(params.n_test, 0.0)
        return NoisyLabelData(x, y_obs, y, x_val, y_val, x_test, y_test, mu, params.tau)

    def describe(self, data: NoisyLabelData) -> dict[str, float | int | str]:
        n, _, d = data.x_train.shape
        snr2 = float(data.mu @ data.mu) / float(np.mean(data.x_train[:, 1] ** 2) * d)
        return super().describe(data) | {"n_snr2": round(n * snr2, 4)}


class DigitsBinary(_NoisyDataset):
    """A binary task from scikit-learn's bundled digits (8x8 images), labels flipped at tau.

    Source: scikit-learn's bundled ``digits.csv.gz``, read as ``load_digits`` reads it (UCI
    optical recognition of handwritten digits, test part; no download); see ``data/DATA.md``.

    Parameters
    ----------
    pair : {"3-vs-8", "1-vs-7", "low-vs-high"}, default="3-vs-8"
        The two classes (the second is +1): two single digits, or 0-4 against 5-9.
    tau : float, default=0.2
        Flip rate of the training and validation labels, in [0, 0.5).
    n : int, default=100
        Training samples, drawn per seed from the images outside the test split.
    n_val : int, default=50
        Validation samples; the test split is a fixed quarter of the pair's images.

    Notes
    -----
    Each image (pixel values / 16, centred on the training mean) is one patch of dimension
    64, so the CNN is a two-layer ReLU network with a fixed second layer. 3 vs 8 has 357
    images: 89 for test, the rest for training and validation draws.
    """

    name = "digits-binary"
    task = "label-noise"
    test_params: ClassVar[dict[str, int]] = {"n": 40, "n_val": 20}

    @dataclass
    class Params:
        pair: Literal["3-vs-8", "1-vs-7", "low-vs-high"] = "3-vs-8"
        tau: Annotated[float, Field(ge=0, lt=0.5)] = 0.2
        n: Annotated[int, Field(ge=4, le=1000)] = 100
        n_val: Annotated[int, Field(ge=2, le=300)] = 50

    def load(self, params: Params, seed: int) -> NoisyLabelData:
        x, y = _digits(params.pair)
        order = np.random.default_rng(_stable(params.pair)).permutation(y.size)
        test, rest = order[: y.size // 4], order[y.size // 4 :]
        rng = np.random.default_rng(seed)
        rest = rng.permutation(rest)
        if params.n + params.n_val > rest.size:
            raise ValueError(
                f"n + n_val = {params.n + params.n_val} exceeds the {rest.size}"
                f" images of pair {params.pair!r} outside the test split"
            )
        val, train = rest[: params.n_val], rest[params.n_val : params.n_val + params.n]
        centre = x[train].mean(axis=0)
        patches = (x - centre).reshape(-1, 1, 64)
        y_train = flip_labels(y[train], params.tau, rng)
        y_val = flip_labels(y[val], params.tau, rng)
        return NoisyLabelData(patches[train], y_train, y[train], patches[val], y_val,
                              patches[test], y[test], None, params.tau)  # fmt: skip


@functools.cache
def _digits(pair: str) -> tuple[np.ndarray, np.ndarray]:
    """Images of shape (rows, 64) scaled to [0, 1] and labels in {-1, +1} (read-only, read
    once per process).

    Reads scikit-learn's ``datasets/data/digits.csv.gz`` as ``load_digits`` does (64 pixel
    columns, then the class), without importing scikit-learn (seconds of CPU a worker)."""
    package = importlib.util.find_spec("sklearn")
    if package is None or not package.submodule_search_locations:
        raise ModuleNotFoundError("digits-binary reads scikit-learn's bundled digits file")
    path = Path(package.submodule_search_locations[0], "datasets", "data", "digits.csv.gz")
    with gzip.open(path, "rt") as stream:
        table = np.loadtxt(stream, delimiter=",")
    images, digits = table[:, :-1], table[:, -1].astype(int)
    if pair == "low-vs-high":
        keep, positive = np.ones(digits.size, bool), digits >= 5
    else:
        a, b = (int(c) for c in pair.split("-vs-"))
        keep, positive = np.isin(digits, [a, b]), digits == b
    x, y = images[keep] / 16.0, np.where(positive[keep], 1.0, -1.0)
    x.flags.writeable = y.flags.writeable = False
    return x, y


def _stable(text: str) -> int:
    """A seed from ``text`` that does not change between processes (unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
