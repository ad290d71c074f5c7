"""Datasets of the ``equivariant-ntk`` task."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field

from harness import Dataset
from harness_equivariant_ntk._kernels import rotate
from harness_equivariant_ntk.data import RotatedImages

__all__ = ["RotatedDigits"]


def _unit_scale(images: np.ndarray) -> np.ndarray:
    """Each image divided by its root mean square pixel (a rotation-invariant scaling)."""
    return images / np.sqrt((images**2).mean(axis=(-2, -1), keepdims=True))


class RotatedDigits(Dataset):
    """scikit-learn's 8x8 handwritten digits: upright for training, turned for testing.

    Source: scikit-learn ``load_digits`` (UCI optical recognition of handwritten digits, 1,797
    images of 8x8 pixels, 16 grey levels; shipped with scikit-learn, BSD-3). The quarter-turn
    test set mirrors the paper's rotation-invariant tasks on a group C_4 acts on exactly
    (reconstruction: the paper uses histology images and QM9, arXiv 2406.06504, abstract).

    Parameters
    ----------
    n_train : int, default=40
        Upright training digits drawn without replacement from classes 0 .. classes - 1.
    n_test : int, default=100
        Held-out test digits, disjoint from the training digits.
    n_off : int, default=20
        Gaussian noise images (off the data manifold), scaled like the digits.
    classes : int, default=10
        Digit classes used, 0 .. classes - 1 (2 to 10).
    test_rotation : {"random", "none"}, default="random"
        Each test digit turned by a uniform number of quarter turns, or left upright.
    """

    name = "rotated-digits"
    task = "equivariant-ntk"
    test_params: ClassVar[dict] = {"n_train": 12, "n_test": 10, "n_off": 4}

    @dataclass
    class Params:
        n_train: Annotated[int, Field(ge=2, le=500)] = 40
        n_test: Annotated[int, Field(ge=1, le=1000)] = 100
        n_off: Annotated[int, Field(ge=1, le=1000)] = 20
        classes: Annotated[int, Field(ge=2, le=10)] = 10
        test_rotation: Literal["random", "none"] = "random"

    def load(self, params: Params, seed: int) -> RotatedImages:
        from sklearn.datasets import load_digits

        digits = load_digits()
        keep = np.flatnonzero(digits.target < params.classes)
        rng = np.random.default_rng(seed)
        order = rng.permutation(keep)
        train = order[: params.n_train]
        test = order[params.n_train : params.n_train + params.n_test]
        images = _unit_scale(digits.images.astype(np.float64))
        turns = (
            rng.integers(0, 4, size=len(test))
            if params.test_rotation == "random"
            else np.zeros(len(test), dtype=np.int64)
        )
        x_test = np.stack([rotate(images[i], k) for i, k in zip(test, turns, strict=True)])
        return RotatedImages(
            x_train=images[train],
            y_train=digits.target[train].astype(np.int64),
            x_test=x_test,
            y_test=digits.target[test].astype(np.int64),
            test_turns=turns.astype(np.int64),
            x_off=_unit_scale(rng.standard_normal((params.n_off, 8, 8))),
            classes=params.classes,
        )
