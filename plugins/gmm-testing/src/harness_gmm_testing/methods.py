"""Methods of the ``gmm-testing`` task: tests of H0 = N(0, I_d), one p-value per sample.

Every method returns a :class:`~harness_gmm_testing.data.TestOutput`. Unless a closed-form
null is chosen, p-values come from ``calibration_trials`` Monte Carlo samples of N(0, I_d)
drawn with the cell's seed (exact for this simple null).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field
from pydantic.dataclasses import dataclass

from harness import Method
from harness_gmm_testing import _statistics as st
from harness_gmm_testing._calibration import apply_test
from harness_gmm_testing.data import TestingData, TestOutput

__all__ = [
    "CovarianceSpectral",
    "Energy",
    "HenzeZirkler",
    "HermiteMomentTest",
    "Mardia",
    "MomentTensorTest",
    "ProjectionKS",
]

_TEST_PARAMS = {"calibration_trials": 19}

Draws = Annotated[int, Field(ge=1)]
"""R, a number of Monte Carlo null samples."""
Degree = Annotated[int, Field(ge=0)]
"""A chaos or tensor degree; 0 means the oracle m + 1 (or one degree for ``max_degree``)."""


@dataclass
class _TrialsParams:
    """Params of a Monte Carlo-only test: the number of null samples."""

    calibration_trials: Draws = 200


def _oracle_degree(degree: int, data: TestingData) -> int:
    """``degree`` if set, else the first unmatched degree m + 1 of the hidden law (oracle)."""
    return degree if degree > 0 else data.law.matched_degree + 1


class HermiteMomentTest(Method):
    """Degree-m Hermite-chaos U-statistic test: ``Z = U_m / sqrt(2 N_m / (n (n - 1)))``,
    rejecting for large Z.

    Source: docs/papers/gmm-testing.md §3.2 (a derivation, not from the paper); matches the
    NGCA rate n ~ d^(m/2) / lambda^2 of Diakonikolas, Karmalkar, Pang, Potechin (FOCS 2024).

    Parameters
    ----------
    degree : int, default=0
        Chaos degree m >= 1; 0 uses the oracle m + 1 (the first unmatched degree of the
        hidden law, an upper baseline).
    max_degree : int, default=0
        If > 0, m is unknown: the statistic is ``max_j Z_j`` over degrees 1..max_degree
        (``degree`` is ignored); the notes suggest ``2k' + 2 log2 k + 2`` as a safe cap.
    calibration_trials : int, default=200
        R, the Monte Carlo null samples (``p = (1 + #{Z_r >= Z}) / (R + 1)``, exact level).

    Returns
    -------
    TestOutput
        Statistic Z (unitless).

    Notes
    -----
    U_m is computed in power-sum form (``_hermite.hermite_u_statistic``): cost
    O(n C(d + m/2, m/2)^2), never the C(d + m - 1, m)-dimensional tensor.

    The null is calibrated by Monte Carlo only. The normal approximation ``p = 1 - Phi(Z)``
    is not offered: its type-I error at alpha = 0.01 was 0.012-0.019 (2,000 null draws,
    s.e. 0.0022; d = 3-8, m = 4-8, n = 60-5,000), and the chi-square approximation
    ``(n - 1) U + N_m ~ chi2_(N_m)`` was 0.028-0.059 at alpha = 0.05 (README, "Calibration").
    """

    name = "hermite-moment-test"
    task = "gmm-testing"
    test_params = _TEST_PARAMS

    @dataclass
    class Params:
        degree: Degree = 0
        max_degree: Degree = 0
        calibration_trials: Draws = 200

    def run(self, data: TestingData, params: HermiteMomentTest.Params, seed: int) -> TestOutput:
        if params.max_degree:
            degrees = list(range(1, params.max_degree + 1))
        else:
            degrees = [_oracle_degree(params.degree, data)]
        return apply_test(
            data,
            lambda X, rng: max(st.hermite_z(X, m) for m in degrees),
            seed,
            calibration_trials=params.calibration_trials,
        )


class MomentTensorTest(Method):
    """The paper's tester: a far-sample (norm) check, then every unique entry of the
    empirical moment tensors of orders 1..M against the Gaussian ones.

    Statistic: ``max(T_norm, T_moments)``, with ``T_norm = Phi^-1(1 - p_norm)`` from the exact
    law of ``max_i |x_i|^2`` and ``T_moments`` the largest standardised entry
    ``sqrt(n) |M_alpha - M'_alpha| / sd_N(x^alpha)``; the threshold is calibrated by Monte
    Carlo under N(0, I_d).

    Source: Diakonikolas et al., ICML 2025, App. D, Algs 2-3; practical standardised version
    of docs/papers/gmm-testing.md §3.1 (the paper's constants C are unspecified).

    Parameters
    ----------
    max_degree : int, default=0
        M, the highest tensor order; 0 uses the oracle m + 1.
    calibration_trials : int, default=200

    Returns
    -------
    TestOutput
    """

    name = "moment-tensor-test"
    task = "gmm-testing"
    test_params = _TEST_PARAMS

    @dataclass
    class Params:
        max_degree: Degree = 0
        calibration_trials: Draws = 200

    def run(self, data: TestingData, params: MomentTensorTest.Params, seed: int) -> TestOutput:
        top = _oracle_degree(params.max_degree, data)

        def statistic(X, rng):
            return max(st.norm_outlier_z(X), st.max_standardised_moment(X, top))

        return apply_test(data, statistic, seed, calibration_trials=params.calibration_trials)


class Mardia(Method):
    """Mardia's multivariate skewness and kurtosis tests, combined by Bonferroni:
    ``p = min(1, 2 min(p_skew, p_kurt))``.

    Source: Mardia, Biometrika 57 (1970), eqs (2.23)-(2.24); hand-written (absent from scipy).

    Parameters
    ----------
    calibration : {"asymptotic", "mc"}, default="mc"
        Chi-square / normal limits, or a Monte Carlo null of the combined statistic.
    calibration_trials : int, default=200

    Returns
    -------
    TestOutput
        Statistic ``-log10`` of the combined asymptotic p-value.

    Notes
    -----
    Degree-3/4 statistics: blind once the hidden law matches 4 moments.
    """

    name = "mardia"
    task = "gmm-testing"
    test_params = _TEST_PARAMS

    @dataclass
    class Params:
        calibration: Literal["asymptotic", "mc"] = "mc"
        calibration_trials: Draws = 200

    def run(self, data: TestingData, params: Mardia.Params, seed: int) -> TestOutput:
        def statistic(X, rng):
            p = min(1.0, 2 * min(st.mardia(X)))
            return -math.log10(max(p, 1e-300))

        analytic = (lambda s: 10.0**-s) if params.calibration == "asymptotic" else None
        return apply_test(
            data, statistic, seed, calibration_trials=params.calibration_trials, analytic_p=analytic
        )


class HenzeZirkler(Method):
    """Henze-Zirkler test: a Gaussian-kernel distance between the standardised sample's
    characteristic function and the normal one.

    Source: Henze and Zirkler, Comm. Stat. Theory Methods 19 (1990); hand-written (pingouin
    0.7's ``multivariate_normality`` computes the same HZ and log-normal p-value).

    Parameters
    ----------
    calibration : {"lognormal", "mc"}, default="lognormal"
    calibration_trials : int, default=200

    Returns
    -------
    TestOutput
        Statistic HZ (unitless). O(n^2) time, O(1024 n) memory.
    """

    name = "henze-zirkler"
    task = "gmm-testing"
    test_params = _TEST_PARAMS

    @dataclass
    class Params:
        calibration: Literal["lognormal", "mc"] = "lognormal"
        calibration_trials: Draws = 200

    def run(self, data: TestingData, params: HenzeZirkler.Params, seed: int) -> TestOutput:
        analytic = None
        if params.calibration == "lognormal":

            def analytic(hz):
                return st.henze_zirkler_lognormal_p(hz, data.n, data.d)

        return apply_test(
            data,
            lambda X, rng: st.henze_zirkler(X),
            seed,
            calibration_trials=params.calibration_trials,
            analytic_p=analytic,
        )


class Energy(Method):
    """One-sample energy goodness-of-fit test against N(0, I_d) (no standardisation: the
    null is simple), Monte Carlo null.

    Source: Szekely and Rizzo, J. Multivariate Anal. 93 (2005); reference R
    ``energy::mvnorm.test``.

    Parameters
    ----------
    calibration_trials : int, default=200

    Returns
    -------
    TestOutput
        Statistic n E_n (unitless). O(n^2 d) time.
    """

    name = "energy"
    task = "gmm-testing"
    test_params = _TEST_PARAMS

    Params = _TrialsParams

    def run(self, data: TestingData, params: Energy.Params, seed: int) -> TestOutput:
        return apply_test(
            data,
            lambda X, rng: st.energy_statistic(X),
            seed,
            calibration_trials=params.calibration_trials,
        )


class ProjectionKS(Method):
    """Random projections plus 1-D goodness-of-fit tests against N(0, 1).

    Each test draws ``directions`` fresh directions uniformly on the sphere, applies a
    Kolmogorov-Smirnov or Anderson-Darling test to each projection, and combines them by
    Bonferroni (``min(1, L min_l p_l)``, KS only) or by a Monte Carlo null of the largest
    statistic (exact; the directions are redrawn in every null sample too).

    Source: scipy.stats.kstwo (exact KS law); docs/papers/gmm-testing.md §4.

    Parameters
    ----------
    directions : int, default=50
        L, number of random directions.
    test : {"ks", "ad"}, default="ks"
    combine : {"mc", "bonferroni"}, default="mc"
    calibration_trials : int, default=200

    Returns
    -------
    TestOutput
        Statistic: the largest per-direction statistic.
    """

    name = "projection-ks"
    task = "gmm-testing"
    test_params = _TEST_PARAMS

    @dataclass
    class Params:
        directions: Annotated[int, Field(ge=1)] = 50
        test: Literal["ks", "ad"] = "ks"
        combine: Literal["mc", "bonferroni"] = "mc"
        calibration_trials: Draws = 200

        def __post_init__(self) -> None:  # a constraint between two fields
            if self.combine == "bonferroni" and self.test != "ks":
                raise ValueError("combine='bonferroni' needs test='ks' (AD has no p-value here)")

    def run(self, data: TestingData, params: ProjectionKS.Params, seed: int) -> TestOutput:
        if params.combine == "bonferroni":
            cache: dict[float, float] = {}

            def statistic(X, rng):
                value, p_min = st.projection_statistic(
                    X, rng, params.directions, "ks", exact_p=True
                )
                cache[value] = min(1.0, params.directions * p_min)
                return value

            return apply_test(
                data, statistic, seed, calibration_trials=1, analytic_p=cache.__getitem__
            )
        return apply_test(
            data,
            lambda X, rng: st.projection_statistic(X, rng, params.directions, params.test)[0],
            seed,
            calibration_trials=params.calibration_trials,
        )


class CovarianceSpectral(Method):
    """Top eigenvalue of the sample covariance ``X^T X / n`` above the Marchenko-Pastur
    edge ``(1 + sqrt(d/n))^2``, Monte Carlo null.

    Source: Johnstone, Ann. Statist. 29 (2001); docs/papers/gmm-testing.md §4.

    Parameters
    ----------
    calibration_trials : int, default=200

    Returns
    -------
    TestOutput
        Statistic ``lambda_max - (1 + sqrt(d/n))^2`` (variance units).

    Notes
    -----
    Blind to pancakes: under H1 the covariance is exactly I_d.
    """

    name = "covariance-spectral"
    task = "gmm-testing"
    test_params = _TEST_PARAMS

    Params = _TrialsParams

    def run(self, data: TestingData, params: CovarianceSpectral.Params, seed: int) -> TestOutput:
        return apply_test(
            data,
            lambda X, rng: st.covariance_top_eigenvalue(X),
            seed,
            calibration_trials=params.calibration_trials,
        )
