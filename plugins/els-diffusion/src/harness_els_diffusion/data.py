"""Data and output objects of the 'els-diffusion' task."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Sample:
    """Observations of one real quantity.

    Attributes
    ----------
    y : ndarray of float, shape (n,)
        Observations, unitless.
    mean : float
        The true mean (known for synthetic data).
    """

    y: np.ndarray
    mean: float


@dataclass(frozen=True)
class Estimate:
    """A method's estimate of the mean.

    Attributes
    ----------
    mean : float
        In the units of ``Sample.y``.
    """

    mean: float
