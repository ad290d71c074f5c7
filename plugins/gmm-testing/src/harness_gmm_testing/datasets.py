"""Datasets of the ``gmm-testing`` task: parallel-pancakes instances against N(0, I_d).

Each dataset fixes the hidden 1-D law B = U_sqrt(delta) A along v (centres
``mu_i = sqrt(delta) s_i``, component variance ``1 - delta``) and returns a
:class:`~harness_gmm_testing.data.TestingData` that draws ``trials`` samples of shape (n, d)
under each hypothesis lazily.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field
from pydantic.dataclasses import dataclass

from harness import Dataset
from harness_gmm_testing._centres import (
    gauss_hermite_centres,
    matched_degree,
    mixture_hermite_moments,
    mostly_uniform_centres,
    uniform_centres,
)
from harness_gmm_testing.data import PancakeLaw, TestingData

__all__ = ["GaussHermitePancakes", "MostlyUniformPancakes", "SeparatedMixture", "UniformPancakes"]

_TEST_PARAMS = {"n": 50, "d": 3, "trials": 3}


SampleSize = Annotated[int, Field(ge=2)]
Dimension = Annotated[int, Field(ge=1)]
Trials = Annotated[int, Field(ge=1)]
Thinness = Annotated[float, Field(gt=0.0, lt=1.0)]
"""delta: the component variance along v is 1 - delta."""
Moments = Annotated[int, Field(ge=0)]
"""A required matched degree; 0 takes what the fit reaches."""


def _law(centres: np.ndarray, weights: np.ndarray, noise_sd: float, top: int) -> PancakeLaw:
    """Wrap a 1-D law, reading m and lambda off its Hermite moments up to degree ``top``."""
    moments = mixture_hermite_moments(centres, weights, noise_sd, top)
    m = matched_degree(moments)
    return PancakeLaw(centres, weights, float(noise_sd), m, float(moments[m + 1]))


def _check_moments(k: int, moments: int, verb: str) -> None:
    """``moments`` must lie in [0, 2k - 1]: k centres match at most 2k - 1 moments."""
    if moments < 0 or moments > 2 * k - 1:
        raise ValueError(
            f"k={k} {verb} 2k-1={2 * k - 1} moments; "
            f"moments={moments} needs k >= {(moments + 2) // 2}"
        )


def _pancakes(s: np.ndarray, w: np.ndarray, params: Any, seed: int) -> TestingData:
    """Pancakes on centre law (s, w): centres ``sqrt(delta) s``, sd ``sqrt(1 - delta)``."""
    law = _law(math.sqrt(params.delta) * s, w, math.sqrt(1.0 - params.delta), 2 * params.k)
    return TestingData(law, params.n, params.d, params.trials, seed)


class _TestingDataset(Dataset):
    """Base of this task's datasets: ``describe`` logs the hidden law's degree, signal and
    shape."""

    def describe(self, data: TestingData) -> dict[str, float | int | str]:
        law = data.law
        gaps = np.diff(np.sort(law.centres))
        return {
            "matched_degree": law.matched_degree,
            "signal": round(law.signal, 6),
            "components": int(law.centres.size),
            "w_min": float(f"{law.weights.min():.4g}"),
            "max_centre": round(float(np.abs(law.centres).max()), 4),
            "min_gap": round(float(gaps.min()), 4) if gaps.size else 0.0,
            "min_gap_over_sd": round(float(gaps.min()) / law.noise_sd, 3) if gaps.size else 0.0,
            "predicted_n90": round(law.predicted_n90(data.d)),
        }


class UniformPancakes(_TestingDataset):
    """k equally weighted pancakes whose law along v matches as many N(0, 1) moments as a
    least-squares fit of the centre set reaches.

    Source: Diakonikolas et al., ICML 2025, Thm 1.3 and Prop 3.1 (existence); centres by a
    least-squares fit (docs/papers/gmm-testing.md §2, family b).

    Parameters
    ----------
    n : int, default=2000
        Samples per test.
    d : int, default=8
        Dimension.
    trials : int, default=100
        Samples per hypothesis.
    k : int, default=8
        Number of centres (>= 2).
    delta : float, default=0.95
        Thinness: component variance along v is 1 - delta; in (0, 1).
    moments : int, default=0
        Required matched degree; 0 takes what the fit reaches.

    Returns
    -------
    TestingData

    Raises
    ------
    ValueError
        For n < 2, d < 1, trials < 1, delta outside (0, 1), or k too small for ``moments``.

    Notes
    -----
    The fit is deterministic (seeded restarts); pilot values: k = 4, 8, 16, 32 give m = 3, 5,
    5, 7. The paper's proof is non-constructive.
    """

    name = "pancakes-uniform"
    task = "gmm-testing"
    test_params = _TEST_PARAMS

    @dataclass
    class Params:
        n: SampleSize = 2000
        d: Dimension = 8
        trials: Trials = 100
        k: Annotated[int, Field(ge=2)] = 8
        delta: Thinness = 0.95
        moments: Moments = 0

        def __post_init__(self) -> None:  # a constraint between two fields
            _check_moments(self.k, self.moments, "centres match at most")

    def load(self, params: UniformPancakes.Params, seed: int) -> TestingData:
        s, w = uniform_centres(params.k, params.moments)
        return _pancakes(s, w, params, seed)


class GaussHermitePancakes(_TestingDataset):
    """Pancakes centred on the k Gauss-Hermite nodes with their weights: the law along v
    matches N(0, 1) through degree 2k - 1.

    Source: Diakonikolas, Kane, Stewart, FOCS 2017 (Gauss-Hermite construction), as recalled
    in Diakonikolas et al., ICML 2025, §1.

    Parameters
    ----------
    n : int, default=2000
    d : int, default=8
    trials : int, default=100
    k : int, default=3
        Number of nodes (>= 1); matched degree 2k - 1.
    delta : float, default=0.95
    moments : int, default=0
        Required matched degree; must be <= 2k - 1.

    Returns
    -------
    TestingData

    Raises
    ------
    ValueError
        For bad n, d, trials, delta, or ``moments > 2k - 1`` (message names k).
    """

    name = "pancakes-gauss-hermite"
    task = "gmm-testing"
    test_params = _TEST_PARAMS

    @dataclass
    class Params:
        n: SampleSize = 2000
        d: Dimension = 8
        trials: Trials = 100
        k: Annotated[int, Field(ge=1)] = 3
        delta: Thinness = 0.95
        moments: Moments = 0

        def __post_init__(self) -> None:  # a constraint between two fields
            _check_moments(self.k, self.moments, "Gauss-Hermite nodes match")

    def load(self, params: GaussHermitePancakes.Params, seed: int) -> TestingData:
        s, w = gauss_hermite_centres(params.k)
        return _pancakes(s, w, params, seed)


class MostlyUniformPancakes(_TestingDataset):
    """k pancakes of which ``k_prime`` carry free weights and the rest share one weight;
    the fit matches about 2 more moments per free weight, with every two centres at least
    ``min_gap_sd`` pancake standard deviations apart.

    Source: Diakonikolas et al., ICML 2025, Thm 1.4 and Prop 4.1; centres and weights by a
    least-squares fit (docs/papers/gmm-testing.md §2, family c).

    Parameters
    ----------
    n : int, default=2000
    d : int, default=8
    trials : int, default=100
    k : int, default=8
        Number of centres, even, >= 2.
    k_prime : int, default=2
        Number of free-weight centres, even, in [0, k).
    delta : float, default=0.95
    moments : int, default=0
        Required matched degree; 0 takes what the fit reaches.
    min_gap_sd : float, default=1.0
        Smallest distance between two centres of B, in units of the pancake s.d.
        ``sqrt(1 - delta)``; >= 0. Without it (0) the fit collapses: k = 8, k' = 2 put six
        "uniform" centres at +-0.70 / 0.72 / 0.75 (gaps 0.1 s.d.) plus +-2.33, Gauss-Hermite
        k = 4 in disguise. With 1 s.d. (delta = 0.95) the fit keeps m = 7: centres +-0.68
        (weight 0.37 each), +-0.92, +-1.15, +-2.36 (0.042 each).

    Returns
    -------
    TestingData

    Raises
    ------
    ValueError
        For bad n, d, trials, delta, odd k or k_prime, min_gap_sd < 0, a fit short of
        ``moments``, or no fit with centres ``min_gap_sd`` apart that matches 3 moments.
    """

    name = "pancakes-mostly-uniform"
    task = "gmm-testing"
    test_params = _TEST_PARAMS

    @dataclass
    class Params:
        n: SampleSize = 2000
        d: Dimension = 8
        trials: Trials = 100
        k: Annotated[int, Field(ge=2, multiple_of=2)] = 8
        k_prime: Annotated[int, Field(ge=0, multiple_of=2)] = 2
        delta: Thinness = 0.95
        moments: Moments = 0
        min_gap_sd: Annotated[float, Field(ge=0.0)] = 1.0

        def __post_init__(self) -> None:  # constraints between fields
            if self.k_prime >= self.k:
                raise ValueError(f"k_prime must be < k={self.k}, got {self.k_prime}")
            _check_moments(self.k, self.moments, "centres match at most")

    def load(self, params: MostlyUniformPancakes.Params, seed: int) -> TestingData:
        # B's centres are sqrt(delta) s, its pancake s.d. sqrt(1 - delta): a gap of g s.d. in
        # B is g sqrt((1 - delta) / delta) between centres s of the law A.
        gap = params.min_gap_sd * math.sqrt((1.0 - params.delta) / params.delta)
        s, w = mostly_uniform_centres(params.k, params.k_prime, params.moments, round(gap, 12))
        data = _pancakes(s, w, params, seed)
        if data.law.matched_degree < 3:
            raise ValueError(
                f"no k={params.k}, k_prime={params.k_prime} law with centres "
                f"min_gap_sd={params.min_gap_sd} pancake s.d. apart (delta={params.delta}) "
                f"matches 3 moments of N(0, 1); raise delta or k, or lower min_gap_sd"
            )
        return data


class SeparatedMixture(_TestingDataset):
    """An easy alternative: k well separated components along v with equally spaced centres,
    the lowest one heavier (mean 0, variance and skewness along v far from N(0, 1)'s), which
    every sound test detects.

    Source: control instance of this benchmark (docs/papers/gmm-testing.md §2 generator with
    centres that match only the mean).

    Parameters
    ----------
    n : int, default=1000
    d : int, default=8
    trials : int, default=100
    k : int, default=2
        Number of components (>= 2).
    separation : float, default=6.0
        Gap between adjacent centres along v, in units of the N(0, 1) sd; > 0.
    first_weight : float, default=0.8
        Weight of the lowest centre, in (0, 1); the others share the rest equally.
    delta : float, default=0.5
        Component variance along v is 1 - delta; in (0, 1).

    Returns
    -------
    TestingData

    Raises
    ------
    ValueError
        For bad n, d, trials, delta, k < 2, separation <= 0 or first_weight outside (0, 1).
    """

    name = "separated-mixture"
    task = "gmm-testing"
    test_params = _TEST_PARAMS

    @dataclass
    class Params:
        n: SampleSize = 1000
        d: Dimension = 8
        trials: Trials = 100
        k: Annotated[int, Field(ge=2)] = 2
        separation: Annotated[float, Field(gt=0.0)] = 6.0
        first_weight: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.8
        delta: Thinness = 0.5

    def load(self, params: SeparatedMixture.Params, seed: int) -> TestingData:
        weights = np.full(params.k, (1.0 - params.first_weight) / (params.k - 1))
        weights[0] = params.first_weight
        centres = params.separation * np.arange(params.k)
        centres -= weights @ centres
        law = _law(centres, weights, math.sqrt(1.0 - params.delta), 4)
        return TestingData(law, params.n, params.d, params.trials, seed)
