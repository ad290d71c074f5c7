"""Datasets of the 'lsmooth-gd' task."""

from dataclasses import dataclass
from typing import Annotated

import numpy as np
from pydantic import Field

from harness import Dataset
from harness_lsmooth_gd.data import Sample


class GaussianMean(Dataset):
    """Draws from N(mean, 1).

    Source: a textbook example.

    Parameters
    ----------
    n : int, default=100
        Sample size; at least 1.
    mean : float, default=0.0
        True mean.
    """

    name = "gaussian-mean"
    task = "lsmooth-gd"

    @dataclass
    class Params:
        n: Annotated[int, Field(ge=1)] = 100  # the harness checks the declared range
        mean: float = 0.0

    def load(self, params: Params, seed: int) -> Sample:
        rng = np.random.default_rng(seed)
        return Sample(y=rng.normal(params.mean, 1.0, params.n), mean=params.mean)
