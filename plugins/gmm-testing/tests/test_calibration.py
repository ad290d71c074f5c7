"""Type-I error of every test, checked tightly enough that a test of true level 0.08 fails.

Each check draws N(0, I_3) samples (n = 50) and compares the rejection rate at alpha with a
band ``alpha +- 2.576 SE`` (two-sided 99%). SE is the binomial standard error of the rate over
T null trials; a Monte Carlo test with R calibration draws adds the variance of its level given
those draws, about ``alpha (1 - alpha) / R`` (the R-draw threshold is a sample quantile), so
``SE^2 = alpha (1 - alpha) (1/T + 1/R)``. With T = R = 3,200 the band at alpha = 0.05 is
[0.036, 0.064], and a test of level 0.08 lands below 0.064 with probability < 0.01
(test_band_fails_a_level_0_08_test). Analytic nulls (no R term) use T = 1,600: same band.
"""

import functools
import math

import numpy as np
import pytest
from harness_gmm_testing import methods
from harness_gmm_testing.data import PancakeLaw, TestingData, TestOutput
from scipy import stats

Z_99 = stats.norm.isf(0.005)  # two-sided 99% band
MC_TRIALS = 1600  # per hypothesis; both hypotheses are null here, so T = 3,200
MC_DRAWS = 3200  # R
ANALYTIC_TRIALS = 800  # T = 1,600


def level_band(alpha: float, trials: int, draws: int | None = None) -> tuple[float, float]:
    """``alpha +- 2.576 SE`` with ``SE^2 = alpha (1 - alpha) (1/T + 1/R)`` (no R term for an
    analytic null, ``draws=None``)."""
    var = alpha * (1 - alpha) * (1 / trials + (1 / draws if draws else 0.0))
    return alpha - Z_99 * math.sqrt(var), alpha + Z_99 * math.sqrt(var)


def null_data(trials: int) -> TestingData:
    """``trials`` N(0, I_3) samples of size 50 under each hypothesis: the "H1" law along v is
    B = N(0, 1) itself, so the H1 samples are null samples from another seed stream and the
    check sees 2 * trials null samples. ``matched_degree = 3`` makes the oracle degree 4."""
    law = PancakeLaw(np.zeros(1), np.ones(1), 1.0, matched_degree=3, signal=0.0)
    return TestingData(law, n=50, d=3, trials=trials, seed=31)


@functools.cache
def null_p_values(cls: type, **params) -> np.ndarray:
    """The method's p-values on every null sample of :func:`null_data` (cached: the
    anti-conservative variant reuses them)."""
    mp = cls.Params(**params)
    draws = params.get("calibration_trials", 1)
    output = cls(mp).run(null_data(MC_TRIALS if draws > 1 else ANALYTIC_TRIALS), mp, 7)
    assert isinstance(output, TestOutput)
    return np.concatenate([output.p_null, output.p_alt])


def _hermite_p() -> np.ndarray:
    return null_p_values(methods.HermiteMomentTest, calibration_trials=MC_DRAWS)


@pytest.mark.parametrize(("true_level", "draws"), [(0.08, MC_DRAWS), (0.08, None)])
def test_band_fails_a_level_0_08_test(true_level, draws):
    # The observed rate of a level-0.08 test is about N(0.08, 0.08 * 0.92 (1/T + 1/R)); it
    # must fall inside the alpha = 0.05 band with probability below 0.01. A level-0.05 test
    # falls outside with probability 0.01 by construction.
    trials = 2 * (MC_TRIALS if draws else ANALYTIC_TRIALS)
    _, high = level_band(0.05, trials, draws)
    sd = math.sqrt(true_level * (1 - true_level) * (1 / trials + (1 / draws if draws else 0.0)))
    assert stats.norm.cdf((high - true_level) / sd) < 0.01


MC_TESTS = [
    (methods.HermiteMomentTest, {}),
    (methods.MomentTensorTest, {}),
    (methods.Mardia, {}),
    (methods.HenzeZirkler, {"calibration": "mc"}),
    (methods.Energy, {}),
    (methods.ProjectionKS, {"directions": 10}),
    (methods.CovarianceSpectral, {}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("cls", "params"), MC_TESTS, ids=[c.name for c, _ in MC_TESTS])
def test_monte_carlo_level_is_alpha(cls, params):
    # Monte Carlo p-values (1 + #{T_r >= T}) / (R + 1) are exact for the simple null: the rate
    # over T = 3,200 null samples must lie in the 99% band [0.036, 0.064] (R = 3,200).
    p = null_p_values(cls, calibration_trials=MC_DRAWS, **params)
    low, high = level_band(0.05, p.size, MC_DRAWS)
    assert low <= np.mean(p <= 0.05) <= high


def test_hermite_level_is_alpha_at_0_01_too():
    # Band at alpha = 0.01 (T = R = 3,200): [0.0036, 0.0164].
    p = _hermite_p()
    low, high = level_band(0.01, p.size, MC_DRAWS)
    assert low <= np.mean(p <= 0.01) <= high


def test_anti_conservative_variant_fails_the_level_check():
    # The deliberately wrong variant: Hermite p-values scaled by 0.05 / 0.08, so it rejects
    # whenever the calibrated test would at alpha = 0.08 (true level 0.08). The same samples
    # that pass test_monte_carlo_level_is_alpha must fail the band.
    p = _hermite_p() * 0.05 / 0.08
    _, high = level_band(0.05, p.size, MC_DRAWS)
    assert np.mean(p <= 0.05) > high


ANALYTIC_TESTS = [
    (methods.HenzeZirkler, {"calibration": "lognormal"}, "two-sided"),
    (methods.Mardia, {"calibration": "asymptotic"}, "upper"),
    (methods.ProjectionKS, {"directions": 10, "combine": "bonferroni"}, "upper"),
]


@pytest.mark.parametrize(
    ("cls", "params", "side"), ANALYTIC_TESTS, ids=[c.name for c, _, _ in ANALYTIC_TESTS]
)
def test_analytic_null_is_not_anti_conservative(cls, params, side):
    # T = 1,600 null samples, band [0.036, 0.064] (no Monte Carlo term). Bonferroni over
    # correlated directions and Mardia's small-n limits are conservative by design, so only
    # the upper end is checked for them.
    p = null_p_values(cls, **params)
    low, high = level_band(0.05, p.size)
    rate = np.mean(p <= 0.05)
    assert rate <= high
    if side == "two-sided":
        assert rate >= low
