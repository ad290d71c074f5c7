"""The Hermite U-statistic (forms, null moments, mean under H1) and every test's level."""

import math

import numpy as np
import pytest
from harness_gmm_testing import methods
from harness_gmm_testing._hermite import (
    chaos_dimension,
    hermite_features,
    hermite_u_statistic,
    kernel_coefficients,
    u_statistic_from_features,
)
from harness_gmm_testing._statistics import henze_zirkler, mardia
from harness_gmm_testing.datasets import GaussHermitePancakes, SeparatedMixture
from harness_gmm_testing.metrics import Power


@pytest.mark.parametrize(("d", "m"), [(1, 3), (3, 1), (3, 2), (4, 3), (3, 4), (5, 5), (3, 6)])
def test_power_sum_form_equals_explicit_features(d, m):
    X = np.random.default_rng(d * 10 + m).standard_normal((30, d)) * 1.2
    explicit = u_statistic_from_features(hermite_features(X, m))
    assert hermite_u_statistic(X, m) == pytest.approx(explicit, abs=1e-10, rel=1e-10)


def test_degree_two_kernel_closed_form():
    # K_2(x, y) = (<x,y>^2 - |x|^2 - |y|^2 + d) / 2, from h_2 = (x^2 - 1)/sqrt(2).
    coef = kernel_coefficients(2, 5)
    expected = {(2, 0, 0): 0.5, (0, 1, 0): -0.5, (0, 0, 1): -0.5, (0, 0, 0): 2.5}
    assert coef.keys() == expected.keys()
    assert all(coef[k] == pytest.approx(v, abs=1e-15) for k, v in expected.items())


def test_u_statistic_null_mean_and_variance():
    # E_0 U = 0, Var_0 U = 2 N_m / (n (n-1)) (closed form, §6). 400 null draws: the mean of Z
    # has s.e. 0.05 (tolerance 0.2 = 4 s.e.); var(Z) has s.e. ~0.1 (Z is skewed; tolerance 0.3).
    n, d, m = 200, 3, 4
    rng = np.random.default_rng(0)
    z = np.array(
        [hermite_u_statistic(rng.standard_normal((n, d)), m) for _ in range(400)]
    ) / math.sqrt(2 * chaos_dimension(d, m) / (n * (n - 1)))
    assert abs(z.mean()) < 0.2
    assert z.var() == pytest.approx(1.0, abs=0.3)


def test_u_statistic_is_unbiased_for_lambda_squared_under_h1():
    # E_1 U_(m+1) = lambda^2 (closed form). GH k=2, delta=0.9: m=3, lambda_4 = 0.81 * (-2/sqrt(24)).
    p = GaussHermitePancakes.Params(n=2000, d=3, trials=30, k=2, delta=0.9)
    data = GaussHermitePancakes(p).load(p, 1)
    assert data.law.signal == pytest.approx(0.81 * -2 / math.sqrt(24), rel=1e-10)
    u = np.array([hermite_u_statistic(X, 4) for X in data.samples("h1")])
    # s.e. of the mean over 30 trials, from the spread of the draws themselves; 4 s.e.
    assert abs(u.mean() - data.law.signal**2) < 4 * u.std(ddof=1) / math.sqrt(30)


def test_mardia_and_henze_zirkler_are_affine_invariant():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 3))
    A = np.array([[2.0, 0.3, 0.0], [0.1, 1.0, -0.4], [0.0, 0.2, 0.5]])
    Y = X @ A.T + np.array([1.0, -2.0, 0.5])
    assert np.allclose(mardia(X), mardia(Y), rtol=1e-8)
    assert henze_zirkler(X) == pytest.approx(henze_zirkler(Y), rel=1e-8)


ALL_TESTS = [
    (methods.HermiteMomentTest, {}),
    (methods.MomentTensorTest, {}),
    (methods.Mardia, {}),
    (methods.HenzeZirkler, {}),
    (methods.Energy, {}),
    (methods.ProjectionKS, {"directions": 10}),
    (methods.CovarianceSpectral, {}),
]


@pytest.mark.parametrize(("cls", "params"), ALL_TESTS, ids=[c.name for c, _ in ALL_TESTS])
def test_every_test_detects_the_separated_mixture(cls, params):
    # The control of suites/gmm-testing.yaml (n = 500, d = 8): centres 6 apart, weights
    # (0.8, 0.2), sd 0.71 along v.
    p = SeparatedMixture.Params(n=500, d=8, trials=100)
    data = SeparatedMixture(p).load(p, 0)
    mp = cls.Params(calibration_trials=20, **params)
    assert Power().compute(data, cls(mp).run(data, mp, 0))["rate"] >= 0.99


def test_bad_method_params_name_the_parameter():
    with pytest.raises(ValueError, match="calibration_trials"):
        methods.Energy.Params(calibration_trials=0)
    with pytest.raises(ValueError, match="degree"):
        methods.HermiteMomentTest.Params(degree=-1)
    with pytest.raises(ValueError, match="bonferroni"):
        methods.ProjectionKS.Params(test="ad", combine="bonferroni")


def test_combined_degrees_keep_level_and_find_an_unknown_degree():
    # Max of Z_1..Z_6 with a Monte Carlo null (R = 200): at n = 3000, d = 3 the degree-4
    # signal of GH k=2 pancakes (lambda^2 = 0.11, predicted n_0.9 ~ 150) is found, while the
    # degree-1 and degree-2 statistics alone (first unmatched degree is 4) stay blind. The
    # level of the Monte Carlo null is checked in test_calibration.py.
    p = GaussHermitePancakes.Params(n=3000, d=3, trials=40, k=2, delta=0.9)
    data = GaussHermitePancakes(p).load(p, 4)
    mp = methods.HermiteMomentTest.Params(max_degree=6, calibration_trials=200)
    output = methods.HermiteMomentTest(mp).run(data, mp, 5)
    assert Power().compute(data, output)["rate"] == 1.0
    low = methods.HermiteMomentTest.Params(max_degree=2, calibration_trials=200)
    blind = methods.HermiteMomentTest(low).run(data, low, 5)
    assert Power().compute(data, blind)["rate"] <= 0.2


def _power_cells(params, d, grid, degree=0):
    """Results rows of the Hermite test on k = 4 uniform pancakes (m = 3) over an n grid."""
    from harness_gmm_testing.datasets import UniformPancakes

    rows = []
    for n in grid:
        p = UniformPancakes.Params(n=n, d=d, k=4, delta=0.95, trials=100)
        data = UniformPancakes(p).load(p, n)
        output = methods.HermiteMomentTest(params).run(data, params, n + 1)
        rows.append(
            {
                "task": "gmm-testing",
                "dataset": "pancakes-uniform",
                "method": "hermite-moment-test",
                "status": "ok",
                "dataset.n": n,
                "dataset.d": d,
                "dataset.k": 4,
                "dataset.trials": 100,
                "dataset.predicted_n90": data.law.predicted_n90(d),
                "power.rate": Power().compute(data, output)["rate"],
            }
        )
    return rows


@pytest.mark.slow
def test_hermite_n90_follows_the_closed_form_at_d_4_and_8():
    # The rate suite's cheapest cells (k = 4, d = 4 and 8; closed form 451 and 1,385). The
    # target (issue 17): measured n_0.9 within +-20% of the closed form, allowing the 95%
    # sampling error of the probit fit (1.96 s.e. of ln n_0.9, about 0.12 at 100 trials).
    import pandas as pd
    from harness_gmm_testing.reports import n_for_power

    mp = methods.HermiteMomentTest.Params(calibration_trials=99)
    grids = {4: [230, 320, 450, 630], 8: [690, 970, 1400, 1900]}
    rows = [r for d, grid in grids.items() for r in _power_cells(mp, d, grid)]
    table = n_for_power(pd.DataFrame(rows))
    assert (np.abs(np.log(table["ratio"])) < math.log(1.2) + 1.96 * table["log_se"]).all()
    # Wrong variant: the test at the matched degree m = 3 (blind to these pancakes).
    blind = methods.HermiteMomentTest.Params(degree=3, calibration_trials=99)
    wrong = n_for_power(pd.DataFrame(_power_cells(blind, 4, grids[4])))
    assert wrong["bracketed"].iloc[0] == "above n_max"
