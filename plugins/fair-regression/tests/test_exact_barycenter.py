"""The default order-statistic rule against exact W2 barycenters of small discrete laws.

The barycenter of M uniform empirical laws on n atoms each, with weights p, is found here by
brute force over every coupling by permutations (no port, no quantile formula): its atoms
are sum_s p_s x_s,sigma_s(i) for the cheapest permutations sigma. The fitted map
(``split=False``, no jitter) must send each calibration point to its barycenter atom.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from harness_fair_regression.api import fit_barycenter_map


def _brute_force_barycenter(samples: list[np.ndarray], p: np.ndarray) -> np.ndarray:
    """Atoms z_i (paired with samples[0][i]) of the exact W2 barycenter, by enumeration.

    For fixed couplings sigma_s (sigma_0 = identity), the best atoms are
    z_i = sum_s p_s x_s[sigma_s(i)] and the cost is sum_i sum_s p_s (x_s[sigma_s(i)] - z_i)^2.
    """
    n = samples[0].size
    best, atoms = np.inf, None
    for perms in itertools.product(itertools.permutations(range(n)), repeat=len(samples) - 1):
        stacked = np.stack(
            [samples[0]] + [x[list(q)] for x, q in zip(samples[1:], perms, strict=True)]
        )
        z = p @ stacked
        cost = float(np.sum(p[:, None] * (stacked - z) ** 2))
        if cost < best - 1e-12:
            best, atoms = cost, z
    return atoms


def _fit_and_map(samples: list[np.ndarray], convention: str = "order-statistic") -> list:
    pred = np.concatenate(samples)
    s = np.concatenate([np.full(x.size, g) for g, x in enumerate(samples)])
    rng = np.random.default_rng(0)
    fitted = fit_barycenter_map(
        pred, s, len(samples), jitter=0.0, split=False, rng=rng, convention=convention
    )
    return [fitted.transform(x, np.full(x.size, g), rng) for g, x in enumerate(samples)]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("groups", [2, 3])
def test_order_statistic_map_is_the_exact_barycenter_on_equal_sizes(groups, seed):
    rng = np.random.default_rng(seed)
    n = 5 if groups == 2 else 4
    samples = [rng.normal(g, 1 + g, n) for g in range(groups)]
    p = np.full(groups, 1 / groups)  # equal sizes: the frequency weights
    mapped = _fit_and_map(samples)
    for g in range(groups):
        others = samples[g:] + samples[:g]  # group g first: atoms paired with its points
        exact = _brute_force_barycenter(others, np.roll(p, -g))
        np.testing.assert_allclose(mapped[g], exact, atol=1e-12)
    # DP: every group lands on the same atoms
    for g in range(1, groups):
        np.testing.assert_allclose(np.sort(mapped[g]), np.sort(mapped[0]), atol=1e-12)


def test_equipy_rule_is_not_the_exact_barycenter_on_these_cases():
    # The check discriminates: equipy's right-continuous ECDF with interpolated quantiles
    # maps the same points elsewhere.
    rng = np.random.default_rng(0)
    samples = [rng.normal(0, 1, 5), rng.normal(1, 2, 5)]
    exact = _brute_force_barycenter(samples, np.array([0.5, 0.5]))
    wrong = _fit_and_map(samples, convention="equipy")[0]
    assert np.max(np.abs(wrong - exact)) > 0.05


def test_order_statistic_map_with_unequal_sizes_is_within_one_quantile_step():
    # Group sizes 3 and 6 (weights 1/3, 2/3): atom a_(i) of group 0 carries mass 1/3, which
    # the exact barycenter splits over two atoms p0 a_(i) + p1 b_(2i) and p0 a_(i) + p1
    # b_(2i+1). The order-statistic rule sends it to the first (its left quantile): off by
    # p1 (b_(2i+1) - b_(2i)) on half its mass, one quantile step of group 1, no more.
    a = np.array([0.0, 1.0, 3.0])
    b = np.array([-1.0, 0.5, 2.0, 2.5, 4.0, 7.0])
    p0, p1 = 1 / 3, 2 / 3
    mapped = _fit_and_map([a, b])[0]
    left = p0 * a + p1 * b[0::2]
    right = p0 * a + p1 * b[1::2]
    np.testing.assert_allclose(mapped, left, atol=1e-12)
    # the exact barycenter quantile function (average of quantiles at u = (j + 1/2) / 6):
    u = (np.arange(6) + 0.5) / 6
    exact = p0 * a[np.floor(u * 3).astype(int)] + p1 * b[np.floor(u * 6).astype(int)]
    np.testing.assert_allclose(np.sort(np.concatenate([left, right])), np.sort(exact))
