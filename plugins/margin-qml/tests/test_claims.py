"""The claims of margin-qml: configuration-level statistics, controls, wrong variants, and
the README's claim table rebuilt from the committed evidence."""

from __future__ import annotations

from pathlib import Path

import harness_margin_qml
import numpy as np
import pandas as pd
import pytest
from harness_margin_qml import claims as mc
from harness_margin_qml._reference import authors_results
from scipy.stats import binom

from harness import stats as hstats
from harness.claims import Greater, Status, evaluate_claims, verdicts_markdown

PLUGIN = Path(__file__).parents[1]
RESULTS = PLUGIN / "results"
TRIALS = 200
# A test at level 0.05 passes at most this many of 200 null trials (99% binomial band).
BAND = int(binom.ppf(0.99, TRIALS, 0.05))


def evidence() -> pd.DataFrame:
    frames = [pd.read_parquet(p) for p in sorted(RESULTS.glob("*.parquet"))]
    return pd.concat(frames, ignore_index=True)


def authors_r1() -> pd.DataFrame:
    a = authors_results()
    columns = ("margin-mean", "margin-q25", "margin-q50", *mc.PARAMETER_MEASURES)
    return mc.configuration_models(a[a["dataset.noise"].eq("1.0")], columns)


def readme_table() -> str:
    text = (PLUGIN / "README.md").read_text()
    start = text.index("<!-- claims:begin -->") + len("<!-- claims:begin -->")
    return text[start : text.index("<!-- claims:end -->")].strip()


def test_plugin_contributes_every_claim_once():
    names = [c.name for c in harness_margin_qml.harness_claims()]
    assert names == [c.name for c in mc.CLAIMS]
    assert len(set(names)) == len(names)
    assert all(c.unit in {"configuration", "seed"} for c in mc.CLAIMS)


def test_authors_parquet_is_the_packaged_reference():
    stored = pd.read_parquet(RESULTS / "authors-cluster-10q.parquet")
    pd.testing.assert_frame_equal(stored, authors_results(), check_dtype=False)


def test_readme_claim_table_is_the_verdicts_of_the_committed_evidence():
    verdicts = evaluate_claims(mc.CLAIMS, evidence())
    assert readme_table() == verdicts_markdown(verdicts).strip()
    by_name = {v.claim: v for v in verdicts}
    extra = by_name["margins-beat-parameters-authors-r1"].estimate.extra
    excess = ", ".join(f"{extra['excess ' + c]:+.2f}" for c in mc.PARAMETER_MEASURES)
    assert f"{excess} bits for #params, eff>0.1, eff>0.01" in (PLUGIN / "README.md").read_text()
    status = {v.claim: v.status for v in verdicts}
    assert Status.ERROR not in status.values()
    assert status["margin-information-authors-r1"] == Status.REPRODUCED
    # the paper-scale re-training has no committed rows: not run, never "absent"
    assert status["margin-information-cluster-10q-r1"] == Status.NOT_RUN


def test_readme_power_table_is_the_committed_simulation():
    text = (PLUGIN / "README.md").read_text()
    start = text.index("<!-- power:begin -->") + len("<!-- power:begin -->")
    table = text[start : text.index("<!-- power:end -->")].strip()
    assert table == mc.power_markdown(pd.read_csv(RESULTS / "power.csv"))


def test_readme_per_noise_table_is_the_authors_data():
    text = (PLUGIN / "README.md").read_text()
    start = text.index("<!-- per-r:begin -->") + len("<!-- per-r:begin -->")
    table = text[start : text.index("<!-- per-r:end -->")].strip()
    frame = pd.read_parquet(RESULTS / "authors-cluster-10q.parquet")
    assert table == mc.configuration_markdown(mc.configuration_table(frame))


def test_vectorised_block_null_is_harness_permutation_test():
    """block_mi_excess's null is the ``permute="between"`` test of harness.stats."""
    models = authors_r1()
    ours = mc.block_mi_excess(models, "margin-mean", permutations=2000)
    bins = mc._bins(len(models))
    gap = mc.bin_codes(models[mc.GAP].to_numpy(), bins)
    table = np.zeros((models["config_index"].max() + 1, models["seed_index"].max() + 1), int)
    table[models["config_index"], models["seed_index"]] = gap
    seeds = models["seed_index"].to_numpy()

    def mi(configs, codes):
        return float(mc.mi_from_codes(codes.astype(int), table[configs, seeds], bins))

    measure = mc.bin_codes(models["margin-mean"].to_numpy(), bins).astype(float)
    configs = models["config_index"].to_numpy()
    theirs = hstats.permutation_test(mi, configs, measure, configs, "between", 2000)
    assert ours.extra["mi_bits"] == pytest.approx(theirs.estimate)
    assert ours.extra["null_mean"] == pytest.approx(theirs.extra["null_mean"], abs=0.01)
    assert ours.p_value < 0.01 and theirs.p_value < 0.01


def _reproduced(models: pd.DataFrame, permute: str, seed: int) -> bool:
    e = mc.block_mi_excess(models, "margin-mean", permutations=100, seed=seed, permute=permute)
    return Greater(0.0).decide(e) == Status.REPRODUCED


def test_negative_controls_pass_at_most_at_alpha_with_the_configuration_null():
    """On the authors' 75 models at r = 1, the margin replaced by (a) one random number per
    configuration and (b) uniform noise per model: each "reproduced" in at most BAND of 200
    trials (the claim's one-sided level is 0.025)."""
    models = authors_r1()
    rng = np.random.default_rng(0)
    n_config = models["config_index"].max() + 1
    per_config = per_model = 0
    for trial in range(TRIALS):
        fake = models.assign(**{"margin-mean": rng.random(n_config)[models["config_index"]]})
        per_config += _reproduced(fake, "configurations", trial)
        fake = models.assign(**{"margin-mean": rng.random(len(models))})
        per_model += _reproduced(fake, "configurations", trial)
    assert per_config <= BAND and per_model <= BAND, (per_config, per_model, BAND)
    readme = (PLUGIN / "README.md").read_text()
    assert f"configuration-level null in {per_config} of 200" in readme
    assert f"configuration-level null: in {per_model} of 200" in readme
    assert f"(at most\n{BAND} of 200)" in readme


def test_model_level_null_fails_the_random_per_configuration_control():
    """The wrong variant (gap permuted across models, as the earlier report did) passes the
    random-number-per-configuration control far more often than its level allows."""
    models = authors_r1()
    rng = np.random.default_rng(0)
    n_config = models["config_index"].max() + 1
    hits = 0
    for trial in range(TRIALS):
        fake = models.assign(**{"margin-mean": rng.random(n_config)[models["config_index"]]})
        hits += _reproduced(fake, "models", trial)
    assert hits > BAND, (hits, BAND)
    assert f"model-level\n  null in {hits} of 200" in (PLUGIN / "README.md").read_text()


def test_positive_control_at_tau_0_4_is_detected_and_can_fail():
    """Synthetic configurations (15 x 5, ICC 0.5): at Kendall τ 0.4 the claim's test detects
    the link in most trials but not all (results/power.csv has the full table)."""
    rng = np.random.default_rng(1)
    hits = sum(
        _reproduced(mc.synthetic_models(0.4, 15, 5, 0.5, rng), "configurations", t)
        for t in range(40)
    )
    assert 12 <= hits < 40, hits


def test_point_comparison_is_fooled_where_the_interval_is_not():
    """Two measures with equal information about the gap (τ 0.4 each): the earlier verdict
    ("margin excess larger than parameter excess") says yes about half the time; the
    bootstrap interval over configurations rarely excludes 0."""
    rng = np.random.default_rng(2)
    point = interval = 0
    trials = 20
    for t in range(trials):
        models = mc.synthetic_models(0.4, 15, 5, 0.5, rng)
        rho = np.sin(np.pi * 0.4 / 2)
        noise = rng.standard_normal(len(models)) * np.sqrt(1 - rho**2)
        models["parameter-count"] = rho * models[mc.GAP] + noise
        e = mc.excess_difference(models, ("margin-mean",), ("parameter-count",), 200, 10, t)
        point += e.estimate > 0
        interval += Greater(0.0).decide(e) == Status.REPRODUCED
    assert point >= trials // 4, point
    assert interval <= 2, interval
    text = (PLUGIN / "README.md").read_text()
    assert f"says yes in {point} of 20 trials, the\nbootstrap interval in {interval} of 20" in text


@pytest.mark.parametrize(
    "claim",
    [mc.AuthorsMarginInformation, mc.AuthorsMarginsBeatParameters],
    ids=lambda c: c.name,
)
def test_authors_claims_fail_on_the_wrong_variant(claim):
    """Margins replaced by uniform noise per model: the claim is not reproduced."""
    a = authors_results()
    rng = np.random.default_rng(3)
    for column in ("margin-mean", "margin-q25", "margin-q50"):
        a[column] = rng.random(len(a))
    rows, _ = claim().selected(a)
    assert claim.hypothesis.decide(claim().statistic(rows)) != Status.REPRODUCED


def test_margins_beat_parameters_fails_when_the_margin_is_a_parameter_count():
    """The margins replaced by the parameter count itself (no more information than the
    parameter family): not reproduced."""
    a = authors_results()
    for column in ("margin-mean", "margin-q25", "margin-q50"):
        a[column] = a["parameter-count"]
    claim = mc.AuthorsMarginsBeatParameters()
    rows, _ = claim.selected(a)
    assert claim.hypothesis.decide(claim.statistic(rows)) != Status.REPRODUCED


def test_tfim_and_nqe_claims_fail_on_the_wrong_variant():
    results = evidence()
    tfim = results[results["dataset"].eq("tfim-phases")].copy()
    rng = np.random.default_rng(4)
    for column in [c for c in tfim if c.startswith("margin-q25")]:
        tfim[column] = rng.random(len(tfim))
    claim = mc.TfimTau8q()
    assert claim.hypothesis.decide(claim.statistic(claim.selected(tfim)[0])) != Status.REPRODUCED
    digits = results[results["dataset"].eq("digits-binary")].copy()
    iqp = digits[digits["method"].eq("iqp-embedding")].set_index("seed")["trace-distance"]
    is_nqe = digits["method"].eq("nqe")
    digits.loc[is_nqe, "trace-distance"] = digits.loc[is_nqe, "seed"].map(iqp).to_numpy()
    claim = mc.NqeTraceDistance()
    assert claim.hypothesis.decide(claim.statistic(claim.selected(digits)[0])) != Status.REPRODUCED
