"""Public API of the ``gmm-testing`` task for method authors.

A method receives a :class:`TestingData` (``trials`` samples of shape (n, d) under H0 =
N(0, I_d) and as many under H1, the parallel-pancakes mixture) and returns a
:class:`TestOutput` (one p-value and one statistic per sample). The simplest way to write one
is a statistic ``f(X, rng) -> float`` (X of shape (n, d), larger = more evidence against H0)
handed to :func:`apply_test`, which calibrates it by Monte Carlo under N(0, I_d) and times it.

Exports
-------
TestingData, TestOutput, PancakeLaw
    The task's data and output types (:mod:`harness_gmm_testing.data`).
Statistic, apply_test
    Monte Carlo calibration of a statistic (:mod:`harness_gmm_testing._calibration`).
hermite_u_statistic, hermite_z, chaos_dimension, normalised_hermite
    Hermite-chaos building blocks (:mod:`harness_gmm_testing._hermite`): ``hermite_z(X, m)``
    is the standardised degree-m U-statistic, about N(0, 1) under H0.
uniform_centres, gauss_hermite_centres, mostly_uniform_centres, mixture_hermite_moments
    Centre laws that match N(0, 1) moments, to build new instances
    (:mod:`harness_gmm_testing._centres`).

Source: Diakonikolas, Kane, Karmalkar, Lee, Pittas, ICML 2025 (Problem 1.1); the Hermite
statistic follows the project's science notes (§3.2), a derivation not in the paper.
"""

from __future__ import annotations

from harness_gmm_testing._calibration import Statistic, apply_test
from harness_gmm_testing._centres import (
    gauss_hermite_centres,
    mixture_hermite_moments,
    mostly_uniform_centres,
    uniform_centres,
)
from harness_gmm_testing._hermite import chaos_dimension, hermite_u_statistic, normalised_hermite
from harness_gmm_testing._statistics import hermite_z
from harness_gmm_testing.data import PancakeLaw, TestingData, TestOutput

__all__ = [
    "PancakeLaw",
    "Statistic",
    "TestOutput",
    "TestingData",
    "apply_test",
    "chaos_dimension",
    "gauss_hermite_centres",
    "hermite_u_statistic",
    "hermite_z",
    "mixture_hermite_moments",
    "mostly_uniform_centres",
    "normalised_hermite",
    "uniform_centres",
]
