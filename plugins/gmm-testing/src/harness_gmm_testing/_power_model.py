"""Power models of the Henze-Zirkler and Hermite tests on parallel pancakes (a model, not a
measurement: :func:`harness_gmm_testing._comparison.model_check` sets it against every
measured power).

Henze-Zirkler (exact-MMD model). HZ = n V_n, V_n the V-statistic of the squared MMD between
the standardised sample and N(0, I_d) under the Gaussian kernel exp(-beta^2 |x - y|^2 / 2).
Under pancakes (mean 0, covariance I, so standardisation is ignored) the kernel factorises
over coordinates and

    MMD^2 = (1 + 2 beta^2)^(-(d-1)/2) MMD_1^2(B, N(0, 1)),

exact in closed form for the 1-D law B = sum_i w_i N(mu_i, 1 - delta). The model takes
HZ under H1 as T0 + n MMD^2 + L: T0 the null statistic (Henze and Zirkler's log-normal with
their exact moments, also for the 0.95 quantile), L ~ N(0, 4 n zeta_1) the linear term,
zeta_1 = Var_P(E_Y[k~(x, Y)]) computed exactly (quadrature in 1-D).

Hermite (normal model). U = lambda^2 + linear + degenerate part: variance
2 N_(m+1) / (n (n - 1)) + 4 lambda^2 Var_B(h_(m+1)) / n; the closed form of
:meth:`PancakeLaw.predicted_n90` drops the second term.

Source: Henze and Zirkler, Comm. Stat. Theory Methods 19 (1990) (statistic, beta, null
moments); Gretton et al., JMLR 13 (2012), the MMD's U/V-statistic expansion; science notes
§3.2 (Hermite statistic).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial import hermite_e

from harness import LazyModule
from harness_gmm_testing._hermite import chaos_dimension, normalised_hermite
from harness_gmm_testing.data import PancakeLaw

optimize = LazyModule("scipy.optimize")
stats = LazyModule("scipy.stats")

__all__ = ["hermite_power", "hz_linear_variance", "hz_mmd2", "hz_power", "n_at_power"]

_Z_ALPHA = 1.6448536269514722  # one-sided level 0.05
_NODES, _QW = hermite_e.hermegauss(60)
_QW = _QW / _QW.sum()


def _beta2(n: float, d: int) -> float:
    """Henze-Zirkler's squared bandwidth beta^2 = ((2d+1) n / 4)^(2/(d+4)) / 2."""
    return ((2 * d + 1) * n / 4) ** (2 / (d + 4)) / 2


def _pair(a: np.ndarray, s2: float, b: np.ndarray, t2: float, b2: float) -> np.ndarray:
    """E exp(-b2 (X - Y)^2 / 2), X ~ N(a, s2), Y ~ N(b, t2) independent (broadcast)."""
    c = 1 + b2 * (s2 + t2)
    return np.exp(-b2 * (a - b) ** 2 / (2 * c)) / math.sqrt(c)


def _one_d(law: PancakeLaw, b2: float) -> tuple[float, float, float]:
    """(E_BB k, E_BN k, E_NN k) of the 1-D kernel."""
    mu, w, s2 = law.centres, law.weights, law.noise_sd**2
    bb = float(w @ _pair(mu[:, None], s2, mu[None, :], s2, b2) @ w)
    bn = float(w @ _pair(mu, s2, np.zeros(1), 1.0, b2))
    return bb, bn, 1 / math.sqrt(1 + 2 * b2)


def hz_mmd2(law: PancakeLaw, d: int, b2: float) -> float:
    """Squared MMD between the pancakes (law B along v, N(0, 1) across) and N(0, I_d) under
    the kernel exp(-b2 |x - y|^2 / 2); exact."""
    bb, bn, nn = _one_d(law, b2)
    return (1 + 2 * b2) ** (-(d - 1) / 2) * (bb - 2 * bn + nn)


def hz_linear_variance(law: PancakeLaw, d: int, b2: float) -> float:
    """zeta_1 = Var_P of h(x) = E_(Y~P) k(x, Y) - E_(Y~N) k(x, Y), the variance of the
    MMD's linear term (60-node Gauss-Hermite quadrature over each component of B)."""
    mu, w, s2 = law.centres, law.weights, law.noise_sd**2
    y = (mu[:, None] + law.noise_sd * _NODES[None, :]).ravel()  # quadrature over B
    mass = (w[:, None] * _QW[None, :]).ravel()
    f_b = w @ _pair(mu[:, None], s2, y[None, :], 0.0, b2)
    f_n = _pair(np.zeros(1), 1.0, y, 0.0, b2)
    diff = f_b - f_n
    g1 = (1 + 2 * b2) ** (-(d - 1) / 2)  # E g(z), g the across-v factor
    g2 = ((1 + b2) * (1 + 3 * b2)) ** (-(d - 1) / 2)  # E g(z)^2
    return float(mass @ diff**2 * g2 - (mass @ diff * g1) ** 2)


def _hz_null_lognormal(n: float, d: int) -> tuple[float, float]:
    """(mu, sigma) of ln HZ under H0: Henze and Zirkler's moments, log-normal fit."""
    b2 = _beta2(n, d)
    a = 1 + 2 * b2
    wb = (1 + b2) * (1 + 3 * b2)
    mean = 1 - a ** (-d / 2) * (1 + d * b2 / a + d * (d + 2) * b2**2 / (2 * a**2))
    var = (
        2 * (1 + 4 * b2) ** (-d / 2)
        + 2 * a**-d * (1 + 2 * d * b2**2 / a**2 + 3 * d * (d + 2) * b2**4 / (4 * a**4))
        - 4 * wb ** (-d / 2) * (1 + 3 * d * b2**2 / (2 * wb) + d * (d + 2) * b2**4 / (2 * wb**2))
    )
    s2 = math.log1p(var / mean**2)
    if not s2 > 1e-20:  # sd of ln HZ near float64's resolution of HZ (about 1 + 1e-16)
        raise ValueError(
            f"HZ's null spread at n={n:.3g}, d={d} is below float64 precision "
            f"(var {var:.3g}): the model holds for d <= 32"
        )
    return math.log(mean) - s2 / 2, math.sqrt(s2)


def hz_power(law: PancakeLaw, n: float, d: int) -> float:
    """Modelled power of the Henze-Zirkler test at level 0.05 (exact-MMD model, module
    docstring): E_(T0)[Phi((T0 + n MMD^2 - q) / sqrt(4 n zeta_1))], q the null 0.95
    quantile."""
    b2 = _beta2(n, d)
    shift = n * hz_mmd2(law, d, b2)
    sd = math.sqrt(max(4 * n * hz_linear_variance(law, d, b2), 0.0))
    mu, sigma = _hz_null_lognormal(n, d)
    q = math.exp(mu + _Z_ALPHA * sigma)
    t0 = np.exp(mu + sigma * _NODES)  # T0 by quadrature over its log-normal law
    if sd == 0:  # no linear term: the log-normal tail beyond q - shift, exactly
        return float(stats.norm.sf((math.log(q - shift) - mu) / sigma)) if shift < q else 1.0
    return float(_QW @ stats.norm.cdf((t0 + shift - q) / sd))


def hermite_power(law: PancakeLaw, n: float, d: int) -> float:
    """Modelled power of the degree-(m+1) Hermite U-statistic test at level 0.05 (normal
    model with the H1 linear term; module docstring)."""
    m1 = law.matched_degree + 1
    y = (law.centres[:, None] + law.noise_sd * _NODES[None, :]).ravel()
    mass = (law.weights[:, None] * _QW[None, :]).ravel()
    var_h = float(mass @ normalised_hermite(m1, y) ** 2) - law.signal**2
    null_sd = math.sqrt(2 * chaos_dimension(d, m1) / (n * (n - 1)))
    alt_sd = math.sqrt(null_sd**2 + 4 * law.signal**2 * var_h / n)
    return float(stats.norm.sf((_Z_ALPHA * null_sd - law.signal**2) / alt_sd))


def n_at_power(power, law: PancakeLaw, d: int, target: float = 0.9) -> float:
    """n (Brent's root of ``power(law, n, d) = target`` in ln n over [10, 1e12], to a
    relative 1e-5 in n); ``inf`` if the power stays below ``target`` up to 1e12."""
    if power(law, 1e12, d) < target:
        return math.inf
    return math.exp(
        optimize.brentq(
            lambda t: power(law, math.exp(t), d) - target, math.log(10), 27.6, xtol=1e-5
        )
    )
