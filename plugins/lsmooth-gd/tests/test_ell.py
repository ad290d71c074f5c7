"""The step rule: closed forms against quadrature, the L-smooth reduction, the affine bound;
each check shown failing on a wrong variant (a step off by a constant factor, the wrong l)."""

import numpy as np
import pytest
from harness_lsmooth_gd.ell import Ell

G = np.logspace(-8, 8, 161)
PROFILES = {
    "affine": Ell(((2.0, 0.0), (1.0, 1.0))),
    "linear-only": Ell(((1e-3, 0.0), (3.0, 1.0))),
    "quadratic-complex-roots": Ell(((5.0, 0.0), (1.0, 1.0), (1.0, 2.0))),
    "quadratic-real-roots": Ell(((0.5, 0.0), (4.0, 1.0), (1.0, 2.0))),
    "quadratic-double-root": Ell(((1.0, 0.0), (2.0, 1.0), (1.0, 2.0))),
    "barrier": Ell(((2.75, 0.0), (2.0, 1.0), (1.0, 2.0))),
}


def _agrees(ell: Ell, step: np.ndarray) -> bool:
    return np.allclose(step, ell.step(G, "quadrature"), rtol=1e-9, atol=0)


@pytest.mark.parametrize("name", PROFILES)
def test_closed_form_equals_quadrature(name):
    ell = PROFILES[name]
    assert ell.quadratic is not None
    assert _agrees(ell, ell.step(G))
    assert not _agrees(ell, 1.05 * ell.step(G))  # a step off by a constant factor
    assert not _agrees(ell, ell.scaled(0.9).step(G))  # the wrong l


def test_quadrature_matches_an_independent_integral():
    ell = Ell(((1.0, 0.0), (3.0, 2 / 3)))  # power p = 4: no closed form
    v = np.linspace(0, 1, 200_001)
    for g in (1e-3, 1.0, 1e6):
        trapezoid = np.trapezoid(1 / ell(g * (1 + v)), v)
        assert ell.step(np.array(g)) == pytest.approx(trapezoid, rel=1e-8)
        assert ell.step(np.array(g)) != pytest.approx(1 / ell(np.array(g)), rel=1e-3)


def test_constant_l_gives_one_over_l():
    ell = Ell(((4.0, 0.0),))
    assert np.allclose(ell.step(G), 0.25, rtol=1e-14)
    assert np.allclose(ell.step(G, "quadrature"), 0.25, rtol=1e-14)
    assert np.allclose(PROFILES["affine"].constant().step(G), 0.5)


def test_step_is_one_over_l0_at_zero_and_decreases_in_g():
    for ell in PROFILES.values():
        steps = ell.step(np.concatenate([[0.0], G]))
        assert steps[0] == pytest.approx(1 / ell.at_zero)
        assert np.all(np.diff(steps) <= 1e-15 * steps[:-1])


def test_affine_l_step_length_tends_to_ln2_over_l1():
    ell = PROFILES["affine"]
    assert 1e8 * ell.step(np.array(1e8)) == pytest.approx(np.log(2), rel=1e-6)


@pytest.mark.parametrize(
    ("ell", "s_max"),
    [(Ell(((1.0, 0.0), (3.0, 2 / 3))), 1e9), (PROFILES["barrier"], 1e4)],
)
def test_affine_bound_majorises_l(ell, s_max):
    l0, l1 = ell.affine_bound(s_max)
    s = np.logspace(-6, np.log10(s_max), 500)
    assert np.all(ell(s) <= (l0 + l1 * s) * (1 + 1e-12))
    assert not np.all(ell(s) <= (l0 + 0.9 * l1 * s))  # a smaller L1 is no bound


def test_invalid_profiles_are_refused():
    with pytest.raises(ValueError):
        Ell(((1.0, 1.0),))  # l(0) = 0
    with pytest.raises(ValueError):
        Ell(((1.0, 0.0), (-1.0, 1.0)))
    with pytest.raises(ValueError):
        Ell(((1.0, 0.0), (1.0, 0.5), (1.0, 2.0))).affine_bound(10.0)
