"""Henze-Zirkler against the Hermite test: the exact-MMD power model checked against an
independent quadrature, the measured delta = 0.5 instance, and the model shown failing the
measured powers when it is broken."""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pandas as pd
import pytest
from harness_gmm_testing import _comparison as comparison
from harness_gmm_testing import _power_model as power_model
from harness_gmm_testing._comparison import uniform_law

PLUGIN = pathlib.Path(__file__).resolve().parents[1]
RESULTS = PLUGIN / "results"
RATE_FILES = ("gmm-testing-rate.parquet", "gmm-testing-hz-n90.parquet")
CHECK_FILES = (
    "gmm-testing.parquet",
    "gmm-testing-hz.parquet",
    "gmm-testing-hz-large.parquet",
    *RATE_FILES,
)


def _frame(names) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(RESULTS / name) for name in names], ignore_index=True)


# -- the model against an independent computation ---------------------------------------------


def _densities(law, t):
    """Density of B and of N(0, 1) on the grid t."""
    sd = law.noise_sd
    p_b = law.weights @ np.exp(-((t[None, :] - law.centres[:, None]) ** 2) / (2 * sd**2))
    return p_b / (sd * math.sqrt(2 * math.pi)), np.exp(-(t**2) / 2) / math.sqrt(2 * math.pi)


@pytest.mark.parametrize("k, delta, b2", [(4, 0.95, 1.0), (8, 0.5, 0.4)])
def test_mmd_and_linear_variance_match_quadrature_on_a_grid(k, delta, b2):
    # 1-D Riemann sums of the kernel against p_B - phi: independent of the closed forms.
    law = uniform_law(k, delta)
    t = np.linspace(-9, 9, 3001)
    step = t[1] - t[0]
    p_b, phi = _densities(law, t)
    kernel = np.exp(-b2 / 2 * (t[:, None] - t[None, :]) ** 2)
    signed = (p_b - phi) * step
    assert power_model.hz_mmd2(law, 1, b2) == pytest.approx(signed @ kernel @ signed, rel=1e-6)
    # Across v every coordinate multiplies the squared MMD by E_(N,N) k = (1 + 2 b2)^(-1/2).
    ratio = power_model.hz_mmd2(law, 5, b2) / power_model.hz_mmd2(law, 1, b2)
    assert ratio == pytest.approx((1 + 2 * b2) ** -2, rel=1e-12)
    h = kernel @ signed  # h(y) = E_B k(y, Y) - E_N k(y, Y)
    zeta = (p_b * step) @ h**2 - ((p_b * step) @ h) ** 2
    assert power_model.hz_linear_variance(law, 1, b2) == pytest.approx(zeta, rel=1e-5)
    # Wrong variant: the same sums for pancakes one notch wider are not the model's value.
    p_wrong, _ = _densities(uniform_law(k, delta - 0.05), t)
    wrong = (p_wrong - phi) * step
    assert power_model.hz_mmd2(law, 1, b2) != pytest.approx(wrong @ kernel @ wrong, rel=0.05)


def test_hermite_model_reduces_to_the_closed_form_without_the_h1_variance():
    law = uniform_law(8, 0.95)
    for d in (4, 8):
        n90 = power_model.n_at_power(power_model.hermite_power, law, d)
        # the H1 linear term only adds variance: n_0.9 at or above the closed form, within 15%
        assert law.predicted_n90(d) <= n90 <= 1.15 * law.predicted_n90(d)


def test_hz_model_power_is_the_level_without_signal():
    law = uniform_law(4, 0.95)
    null = type(law)(np.zeros(1), np.ones(1), 1.0, law.matched_degree, law.signal)
    assert power_model.hz_power(null, 2000, 4) == pytest.approx(0.05, abs=1e-3)


# -- the committed evidence ------------------------------------------------------------------


@pytest.fixture(scope="module")
def check() -> pd.DataFrame:
    return comparison.model_check(_frame(CHECK_FILES))


def test_the_wide_pancakes_need_fewer_samples_with_the_hermite_test():
    # delta = 0.5, k = 4 (m = 3): the Hermite test ahead, measured (d = 2) and modelled.
    measured = comparison.measured_ratios(_frame(RATE_FILES)).set_index(["k", "delta", "d"])
    assert measured.loc[(4, 0.5, 2), "ratio_low"] > 1
    model = comparison.model_ratios(ks=(4,), deltas=(0.5,))
    assert (model["ratio"] > 1).all()


BROKEN_MMD = {
    # HZ as if it saw the pancakes in one dimension: no across-v factor (1 + 2 beta^2)^(-(d-1)/2)
    "no across-v factor": lambda exact: lambda law, d, b2: exact(law, 1, b2),
    "half the squared MMD": lambda exact: lambda law, d, b2: 0.5 * exact(law, d, b2),
}


@pytest.mark.parametrize("variant", sorted(BROKEN_MMD))
def test_a_broken_model_fails_the_measured_powers(check, monkeypatch, variant):
    # Wrong variant of the model: the measured HZ powers reject it (fewer cells hold the
    # model's power in their interval, and its mean gap to them is three times larger).
    hz = check[check["test"] == comparison.HZ]
    monkeypatch.setattr(power_model, "hz_mmd2", BROKEN_MMD[variant](power_model.hz_mmd2))
    broken = comparison.model_check(_frame(CHECK_FILES))
    broken = broken[broken["test"] == comparison.HZ]
    assert broken["inside"].sum() < 2 / 3 * hz["inside"].sum()
    gap = (hz["model"] - hz["power"]).abs().mean()
    assert (broken["model"] - broken["power"]).abs().mean() > 3 * gap


@pytest.mark.parametrize("k", [4, 8])
def test_known_matched_degree_gives_the_same_law_as_the_full_fit(k):
    from harness_gmm_testing.datasets import UniformPancakes

    params = UniformPancakes.Params(n=2, d=1, trials=1, k=k, delta=0.8)
    full = UniformPancakes().load(params, 0).law
    assert np.array_equal(uniform_law(k, 0.8).centres, full.centres)
    assert uniform_law(k, 0.8).matched_degree == full.matched_degree


def test_the_modelled_ratio_lies_in_every_measured_interval(monkeypatch):
    measured = comparison.measured_ratios(_frame(RATE_FILES))
    inside = (measured["model_ratio"] >= measured["ratio_low"]) & (
        measured["model_ratio"] <= measured["ratio_high"]
    )
    assert len(measured) >= 7 and inside.all()
    # Wrong variant: HZ's squared MMD halved moves the ratio out of the intervals.
    exact = power_model.hz_mmd2
    monkeypatch.setattr(power_model, "hz_mmd2", lambda law, d, b2: 0.5 * exact(law, d, b2))
    broken = comparison.measured_ratios(_frame(RATE_FILES))
    assert (broken["model_ratio"] > broken["ratio_high"]).sum() >= 3
