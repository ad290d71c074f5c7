"""Type-I error of every test, checked tightly enough that a test of true level 0.08 fails.

Each check draws N(0, I_3) samples (n = 50) and compares the rejection rate at alpha with a
band ``alpha +- 2.576 SE`` (two-sided 99%). SE is the binomial standard error of the rate over
T null trials; a Monte Carlo test with R calibration draws adds the variance of its level given
those draws, about ``alpha (1 - alpha) / R`` (the R-draw threshold is a sample quantile), so
``SE^2 = alpha (1 - alpha) (1/T + 1/R)``. With T = R = 3,200 the band at alpha = 0.05 is
[0.036, 0.064], and a test of level 0.08 lands below 0.064 with probability < 0.01
(test_band_fails_a_level_0_08_test). Analytic nulls (no R term) use T = 1,600: same band.

A Monte Carlo p-value is exact whatever the statistic, so those checks catch a broken sampler;
the closed-form checks at the end catch a wrong statistic (its null moments, and its mean
under a known alternative).
"""

import functools
import math

import numpy as np
import pytest
from harness_gmm_testing import methods
from harness_gmm_testing._centres import gauss_hermite_centres
from harness_gmm_testing._hermite import (
    chaos_dimension,
    hermite_features,
    hermite_u_statistic,
    normalised_hermite,
    u_statistic_from_features,
)
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


# -- the statistic itself, against its closed-form moments -----------------------------------
# A Monte Carlo p-value is exact for any statistic, so the level checks above catch a broken
# sampler, not a wrong statistic. These checks do: the Hermite U-statistic has null mean 0,
# null variance 2 N_m / (n (n - 1)) and mean lambda^2 under the pancakes (science notes §3.2).

MOMENT_DRAWS = 1500


def _u_draws(statistic, law=None, n=60, d=3, m=4, seed=5):
    """``MOMENT_DRAWS`` values of ``statistic(X, m)`` on N(0, I_d) samples (``law=None``) or
    on pancakes with 1-D law ``law``."""
    data = TestingData(law or PancakeLaw(np.zeros(1), np.ones(1), 1.0, 3, 0.0), n, d,
                       MOMENT_DRAWS, seed)  # fmt: skip
    return np.array([statistic(X, m) for X in data.samples("h1" if law else "h0")])


def _null_moments_hold(statistic) -> bool:
    """Null mean within 4 s.e. of 0 and variance within 25% of 2 N_m / (n (n - 1))."""
    n, d, m = 60, 3, 4
    u = _u_draws(statistic, n=n, d=d, m=m)
    var = 2 * chaos_dimension(d, m) / (n * (n - 1))
    return abs(u.mean()) < 4 * math.sqrt(var / u.size) and abs(u.var() / var - 1) < 0.25


def test_hermite_u_statistic_has_its_closed_form_null_moments():
    assert _null_moments_hold(hermite_u_statistic)


def test_a_v_statistic_fails_the_null_moment_check():
    # Wrong statistic: the diagonal i = j left in (|sum_i phi_i|^2 / (n (n - 1))), null mean
    # N_m / (n - 1).
    def v_statistic(X, m):
        total = hermite_features(X, m).sum(axis=0)
        return float(total @ total) / (X.shape[0] * (X.shape[0] - 1))

    assert not _null_moments_hold(v_statistic)


def test_a_statistic_with_one_wrong_hermite_normalisation_fails_the_null_moment_check():
    # Wrong statistic: the pure x_1^m feature left as He_m(x_1) instead of He_m / sqrt(m!),
    # so its null variance is m! times too large (the U-statistic's variance grows).
    def unnormalised(X, m):
        features = hermite_features(X, m)
        features[:, 0] *= math.sqrt(math.factorial(m))
        return u_statistic_from_features(features)

    assert not _null_moments_hold(unnormalised)


def test_hermite_u_statistic_has_mean_lambda_squared_under_the_pancakes():
    # Gauss-Hermite k = 2, delta = 0.9: lambda_4 = 0.9^2 * E_A[h_4] (closed form); U_4 is
    # unbiased for lambda_4^2. A degree-3 statistic (matched) has mean 0 instead.
    s, w = gauss_hermite_centres(2)
    law = PancakeLaw(math.sqrt(0.9) * s, w, math.sqrt(0.1), 3, 0.0)
    lam = 0.9**2 * float(w @ normalised_hermite(4, s))
    u = _u_draws(hermite_u_statistic, law=law)
    assert abs(u.mean() - lam**2) < 4 * u.std() / math.sqrt(u.size)
    wrong = _u_draws(lambda X, m: hermite_u_statistic(X, m - 1), law=law)
    assert abs(wrong.mean() - lam**2) > 4 * wrong.std() / math.sqrt(wrong.size)


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
