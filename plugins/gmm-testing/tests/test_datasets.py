"""Instance construction: moment matching, signal, sampling and bad input."""

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from harness_gmm_testing._centres import (
    MATCH_TOLERANCE,
    gauss_hermite_centres,
    mixture_hermite_moments,
    mostly_uniform_centres,
    uniform_centres,
)
from harness_gmm_testing.datasets import (
    GaussHermitePancakes,
    MostlyUniformPancakes,
    SeparatedMixture,
    UniformPancakes,
)

CASES = [
    (UniformPancakes, {"k": 4}),
    (UniformPancakes, {"k": 8}),
    (UniformPancakes, {"k": 7}),
    (GaussHermitePancakes, {"k": 3}),
    (GaussHermitePancakes, {"k": 5}),
    (MostlyUniformPancakes, {"k": 8, "k_prime": 2}),
    (SeparatedMixture, {}),
]


def _load(cls, **params):
    p = cls.Params(n=10, d=2, trials=1, **params)
    return cls(p).load(p, 0)


@pytest.mark.parametrize(("cls", "params"), CASES)
def test_law_matches_gaussian_moments_through_m_and_differs_at_m_plus_one(cls, params):
    law = _load(cls, **params).law
    moments = mixture_hermite_moments(
        law.centres, law.weights, law.noise_sd, law.matched_degree + 1
    )
    assert np.max(np.abs(moments[1 : law.matched_degree + 1])) < 1e-8
    assert abs(moments[law.matched_degree + 1]) > 1e3 * MATCH_TOLERANCE
    assert moments[law.matched_degree + 1] == pytest.approx(law.signal, abs=1e-12)
    assert law.weights.sum() == pytest.approx(1.0, abs=1e-12)


def test_centre_sets_match_pilot_degrees():
    # docs/papers/gmm-testing.md §6: uniform k = 4, 8, 32 -> m = 3, 5, 7 (pilot, family b);
    # Gauss-Hermite k nodes -> m = 2k - 1 (closed form); mostly uniform k=16, k'=2 -> m = 7
    # (pilot); the cheaper k=8, k'=2 fit reaches 7 as well.
    def degree(s, w):
        moments = mixture_hermite_moments(s, w, 0.0, 16)
        return int(np.argmax(np.abs(moments[1:]) > MATCH_TOLERANCE))

    assert [degree(*uniform_centres(k)) for k in (4, 8)] == [3, 5]
    assert degree(*gauss_hermite_centres(4)) == 7
    assert degree(*mostly_uniform_centres(8, 2)) == 7


def test_signal_is_ornstein_uhlenbeck_scaling_of_centre_moment():
    # lambda = delta^((m+1)/2) E_A[h_(m+1)]; pilot §6: d=8, k=8, delta=0.95 -> lambda_6 = -0.156.
    data = _load(UniformPancakes, k=8, delta=0.95)
    s, w = uniform_centres(8)
    e_a = mixture_hermite_moments(s, w, 0.0, 6)[6]
    assert data.law.matched_degree == 5
    assert data.law.signal == pytest.approx(0.95**3 * e_a, rel=1e-10)
    assert data.law.signal == pytest.approx(-0.156, abs=5e-4)


def test_line_law_has_unit_variance():
    # Var(B) = 1 exactly (degree 2 matched); 400k draws: s.e. of the variance ~ sqrt(2/4e5)
    # = 0.0022 for near-Gaussian laws, tolerance 5 s.e.
    law = _load(UniformPancakes, k=8, delta=0.95).law
    y = law.sample_line(400_000, np.random.default_rng(0))
    assert abs(y.mean()) < 5 / math.sqrt(4e5)
    assert y.var() == pytest.approx(1.0, abs=0.011)


def test_h1_sample_has_identity_covariance():
    # Under H1 the covariance is exactly I_d; entries of the sample covariance have s.e.
    # <= sqrt(2/n) = 0.0045 at n = 1e5; tolerance 5 s.e.
    p = UniformPancakes.Params(n=100_000, d=4, trials=1)
    X = UniformPancakes(p).load(p, 3).sample("h1", 0)
    assert X.shape == (100_000, 4)
    assert np.max(np.abs(X.T @ X / X.shape[0] - np.eye(4))) < 0.023


def test_samples_are_lazy_and_deterministic():
    p = UniformPancakes.Params(n=20, d=3, trials=3)
    data = UniformPancakes(p).load(p, 5)
    first = list(data.samples("h1"))
    assert len(first) == 3 and all(x.shape == (20, 3) for x in first)
    assert np.array_equal(first[1], data.sample("h1", 1))
    assert not np.array_equal(first[0], first[1])
    assert not np.array_equal(data.sample("h0", 0), data.sample("h1", 0))


@pytest.mark.parametrize(
    ("cls", "params", "name"),
    [
        (UniformPancakes, {"d": 0}, "d"),
        (UniformPancakes, {"n": 1}, "n"),
        (UniformPancakes, {"delta": 1.0}, "delta"),
        (GaussHermitePancakes, {"delta": 0.0}, "delta"),
        (GaussHermitePancakes, {"k": 2, "moments": 5}, "k"),
        (UniformPancakes, {"k": 2, "moments": 5}, "k"),
        (MostlyUniformPancakes, {"k": 8, "k_prime": 3}, "k_prime"),
        (SeparatedMixture, {"separation": 0.0}, "separation"),
    ],
)
def test_bad_params_name_the_parameter(cls, params, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        cls.Params(**params)


def test_uniform_fit_short_of_requested_moments_names_k():
    # 4 equal weights match only 3 moments (§6 pilot), so 5 is out of reach.
    p = UniformPancakes.Params(n=10, d=2, trials=1, k=4, moments=5)
    with pytest.raises(ValueError, match=r"k=4.*raise k"):
        UniformPancakes(p).load(p, 0)


def test_describe_reports_degree_signal_and_prediction():
    data = _load(UniformPancakes, k=8)
    facts = UniformPancakes().describe(data)
    assert facts["matched_degree"] == 5
    # 2.93 sqrt(2 C(d+5, 6)) / lambda^2 at d=2: C(7, 6) = 7
    assert facts["predicted_n90"] == round(2.926 * math.sqrt(14) / data.law.signal**2)


# -- every shipped configuration is what its name says ----------------------------------

SUITES = Path(__file__).resolve().parents[3] / "suites"
LAW_FREE = {"n", "d", "trials"}


def _shipped_configs():
    """(dataset name, params) of every pancakes dataset in suites/gmm-testing*.yaml and
    suites/paper/gmm-testing*.yaml, with grids expanded, leaving out n, d and trials (which
    do not change the law)."""
    configs = set()
    paths = [*SUITES.glob("gmm-testing*.yaml"), *SUITES.glob("paper/gmm-testing*.yaml")]
    for path in sorted(paths):
        for run in yaml.safe_load(path.read_text())["runs"]:
            for ds in run["datasets"]:
                if isinstance(ds, str) or not ds["name"].startswith("pancakes-"):
                    continue
                params = {k: v for k, v in ds.get("params", {}).items() if k not in LAW_FREE}
                grid = {k: v for k, v in ds.get("grid", {}).items() if k not in LAW_FREE}
                for values in itertools.product(*grid.values()):
                    configs.add(
                        (
                            ds["name"],
                            tuple(
                                sorted({**params, **dict(zip(grid, values, strict=True))}.items())
                            ),
                        )
                    )
    return sorted(configs)


CLASSES = {c.name: c for c in (UniformPancakes, GaussHermitePancakes, MostlyUniformPancakes)}


def _gap_problems(name, law, min_gap_sd):
    """What makes an instance other than its name says (empty list when it is fine)."""
    problems = []
    gaps_sd = np.diff(np.sort(law.centres)) / law.noise_sd
    if name == "pancakes-mostly-uniform" and gaps_sd.min() < min_gap_sd - 1e-9:
        problems.append(f"centres {gaps_sd.min():.3f} s.d. apart < {min_gap_sd}")
    if name == "pancakes-uniform" and np.ptp(law.weights) > 1e-15:
        problems.append("weights not equal")
    return problems


def test_suites_ship_every_pancakes_family():
    assert {name for name, _ in _shipped_configs()} == set(CLASSES)


@pytest.mark.parametrize(("name", "items"), _shipped_configs())
def test_shipped_configuration_matches_moments_and_keeps_its_centres_apart(name, items):
    params = dict(items)
    cls = CLASSES[name]
    p = cls.Params(n=10, d=2, trials=1, **params)
    law = cls(p).load(p, 0).law
    moments = mixture_hermite_moments(
        law.centres, law.weights, law.noise_sd, law.matched_degree + 1
    )
    assert np.max(np.abs(moments[1 : law.matched_degree + 1])) < 1e-8
    assert abs(moments[law.matched_degree + 1]) > 1e3 * MATCH_TOLERANCE
    assert law.centres.size == params.get("k", p.k)
    assert _gap_problems(name, law, getattr(p, "min_gap_sd", 0.0)) == []


def test_gap_check_catches_the_collapsed_mostly_uniform_fit():
    # Wrong variant: the fit without the gap constraint (min_gap_sd = 0) collapses six
    # "uniform" centres into gaps of about 0.1 pancake s.d. (issue 17): the check flags it.
    p = MostlyUniformPancakes.Params(n=10, d=2, trials=1, k=8, k_prime=2, min_gap_sd=0.0)
    law = MostlyUniformPancakes(p).load(p, 0).law
    assert _gap_problems("pancakes-mostly-uniform", law, 1.0)
    q = MostlyUniformPancakes.Params(n=10, d=2, trials=1, k=8, k_prime=2)
    fixed = MostlyUniformPancakes(q).load(q, 0).law
    assert _gap_problems("pancakes-mostly-uniform", fixed, 1.0) == []
    assert fixed.matched_degree == 7


def test_mostly_uniform_refuses_gaps_it_cannot_keep():
    # delta = 0.2: one pancake s.d. is 2 units of A; 4 centres that far apart cannot have
    # variance 1, let alone match 3 moments.
    p = MostlyUniformPancakes.Params(n=10, d=2, trials=1, k=4, k_prime=2, delta=0.2)
    with pytest.raises(ValueError, match="min_gap_sd"):
        MostlyUniformPancakes(p).load(p, 0)
    with pytest.raises(ValueError, match="min_gap_sd"):
        MostlyUniformPancakes.Params(min_gap_sd=-1.0)
