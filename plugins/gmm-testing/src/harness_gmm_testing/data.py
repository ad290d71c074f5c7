"""Data and output objects of the ``gmm-testing`` task.

A cell asks: how well does a test tell N(0, I_d) (H0) from a parallel-pancakes mixture (H1)?
The data object holds the hidden 1-D law B along v and a recipe for ``trials`` samples of
shape (n, d) under each hypothesis, generated lazily from per-trial seeds so that only one
sample is in memory at a time. A method returns one p-value and one statistic per sample.

Source: Diakonikolas, Kane, Karmalkar, Lee, Pittas, ICML 2025, Problem 1.1 / Problem 2.6
(P_{B,v}(x) = B(v^T x) phi_perp(x)).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np

from harness_gmm_testing._hermite import chaos_dimension

__all__ = ["PancakeLaw", "TestOutput", "TestingData"]

Hypothesis = Literal["h0", "h1"]
_HYPOTHESIS_INDEX = {"h0": 0, "h1": 1}
_Z_ALPHA_PLUS_Z_POWER = 2.926  # z_0.95 + z_0.90: one-sided level 0.05, power 0.9


@dataclass(frozen=True)
class PancakeLaw:
    """The 1-D law B = sum_i w_i N(centres_i, noise_sd^2) along the hidden direction v.

    Attributes
    ----------
    centres : ndarray of float64, shape (k,)
        Component means mu_i along v, in units of the N(0, 1) standard deviation
        (``mu_i = sqrt(delta) s_i`` for pancakes).
    weights : ndarray of float64, shape (k,)
        Mixing weights w_i, positive, summing to 1.
    noise_sd : float
        Standard deviation of each component along v, ``sqrt(1 - delta)``; unitless.
    matched_degree : int
        m: E_B[h_j] = 0 (to 1e-9) for j = 1..m.
    signal : float
        lambda = E_B[h_(m+1)], the first unmatched normalised Hermite moment (may be < 0).
    """

    centres: np.ndarray
    weights: np.ndarray
    noise_sd: float
    matched_degree: int
    signal: float

    def __post_init__(self) -> None:
        _check_finite("centres", self.centres)
        _check_finite("weights", self.weights)
        if self.centres.shape != self.weights.shape or self.centres.ndim != 1:
            raise ValueError(
                f"centres and weights must be 1-D of one shape, got {self.centres.shape} "
                f"and {self.weights.shape}"
            )
        if np.any(self.weights < 0) or abs(float(self.weights.sum()) - 1.0) > 1e-9:
            raise ValueError(f"weights must be >= 0 and sum to 1, sum is {self.weights.sum()}")
        if not (math.isfinite(self.noise_sd) and self.noise_sd >= 0):
            raise ValueError(f"noise_sd must be finite and >= 0, got {self.noise_sd}")
        if not math.isfinite(self.signal):
            raise ValueError(f"signal must be finite, got {self.signal}")

    def sample_line(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n draws of B, shape (n,)."""
        component = rng.choice(self.centres.size, size=n, p=self.weights)
        return self.centres[component] + self.noise_sd * rng.standard_normal(n)

    def predicted_n90(self, d: int) -> float:
        """n at which the degree-(m+1) Hermite test reaches power 0.9 at level 0.05:
        ``2.93 sqrt(2 N_(m+1)) / lambda^2`` (normal approximation; §6 of the science notes)."""
        return (
            _Z_ALPHA_PLUS_Z_POWER
            * math.sqrt(2 * chaos_dimension(d, self.matched_degree + 1))
            / self.signal**2
        )


@dataclass(frozen=True)
class TestingData:
    """``trials`` samples of shape (n, d) under H0 = N(0, I_d) and as many under H1.

    Attributes
    ----------
    law : PancakeLaw
        The hidden 1-D law under H1 (testers other than oracle ones must not read it).
    n : int
        Samples per test, ``>= 2``.
    d : int
        Dimension, ``>= 1``.
    trials : int
        Independent samples per hypothesis, ``>= 1``.
    seed : int
        Base seed; trial t of hypothesis h uses ``default_rng([seed, h, t])``.

    Notes
    -----
    Under H1 each trial draws a fresh direction v uniform on the sphere, then
    ``x = y v + (I - v v^T) g`` with y ~ B and g ~ N(0, I_d).
    """

    __test__ = False  # not a pytest class despite the name

    law: PancakeLaw
    n: int
    d: int
    trials: int
    seed: int

    def __post_init__(self) -> None:
        for name, low in (("n", 2), ("d", 1), ("trials", 1)):
            if getattr(self, name) < low:
                raise ValueError(f"{name} must be >= {low}, got {getattr(self, name)}")

    def sample(self, hypothesis: Hypothesis, trial: int) -> np.ndarray:
        """Sample ``trial`` under ``hypothesis``: float64 array of shape (n, d)."""
        rng = np.random.default_rng([self.seed, _HYPOTHESIS_INDEX[hypothesis], trial])
        X = rng.standard_normal((self.n, self.d))
        if hypothesis == "h1":
            v = rng.standard_normal(self.d)
            v /= np.linalg.norm(v)
            y = self.law.sample_line(self.n, rng)
            X += np.outer(y - X @ v, v)
        return X

    def samples(self, hypothesis: Hypothesis) -> Iterator[np.ndarray]:
        """The ``trials`` samples under ``hypothesis``, one at a time."""
        for trial in range(self.trials):
            yield self.sample(hypothesis, trial)


@dataclass(frozen=True)
class TestOutput:
    """One test applied to every sample of a :class:`TestingData`.

    Attributes
    ----------
    p_null, p_alt : ndarray of float64, shape (trials,)
        p-values on the H0 and H1 samples, in (0, 1].
    stat_null, stat_alt : ndarray of float64, shape (trials,)
        The test statistic, oriented so that larger means more evidence against H0.
    seconds : ndarray of float64, shape (2 * trials,)
        Wall-clock seconds of each test call (statistic and p-value), H0 then H1.
    calibration_seconds : float
        Wall-clock seconds spent on Monte Carlo calibration under H0 (0 if none).
    calibration_draws : int
        R, the Monte Carlo null samples behind the p-values (0 for a closed-form null). The
        metrics use it for the spread of a rate that the R-draw threshold adds to the
        binomial one.
    """

    __test__ = False

    p_null: np.ndarray
    p_alt: np.ndarray
    stat_null: np.ndarray
    stat_alt: np.ndarray
    seconds: np.ndarray
    calibration_seconds: float
    calibration_draws: int = 0

    def __post_init__(self) -> None:
        if self.calibration_draws < 0:
            raise ValueError(f"calibration_draws must be >= 0, got {self.calibration_draws}")
        for name in ("p_null", "p_alt", "stat_null", "stat_alt", "seconds"):
            _check_finite(name, getattr(self, name))
        for name in ("p_null", "p_alt"):
            values = getattr(self, name)
            if np.any(values <= 0) or np.any(values > 1):
                raise ValueError(f"{name} must lie in (0, 1]")
        if not math.isfinite(self.calibration_seconds):
            raise ValueError(f"calibration_seconds must be finite, got {self.calibration_seconds}")


def _check_finite(name: str, values: np.ndarray) -> None:
    """ValueError naming ``name`` if ``values`` holds NaN or infinity."""
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite; it holds NaN or infinity")
