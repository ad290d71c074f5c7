"""Claims end to end: every verdict status produced for real by the toy plugin's claims
(tests/toy_plugin.py), from the store, from an export, with --claim and --strict-claims."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from fake_plugins import harness

from harness.claims import (
    Cells,
    Claim,
    Greater,
    PairedGain,
    Rival,
    Source,
    Status,
    Swap,
    Transform,
    evaluate_claims,
)
from harness.claims.stats import paired_difference

CLAIMS_SUITE = """
name: toy-claims
seeds: [0, 1, 2, 3, 4, 5]
runs:
  - task: toy
    datasets: [{name: noise, params: {n: 40}}]
    methods:
      - {name: mean, grid: {shift: [0.0, 1.0]}}
      - {name: mean, params: {kind: noisy}}
    metrics: [abs-error]
"""

EXPECTED = {
    "shift-raises-error": "reproduced",
    "shift-lowers-error": "not-reproduced",
    "noisy-matches-plain": "inconclusive",
    "error-is-non-negative": "uninformative",
    "shift-rival-noise": "inconclusive",
    "needs-fragile": "not-run",
    "broken-claim": "error",
    "legacy-shift-raises-error": "reproduced",
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """The claims suite run once into a fresh store: ``(env, suite path, store, folder, out)``."""
    from fake_plugins import toy_environment

    folder = tmp_path_factory.mktemp("claims")
    env = toy_environment(folder / "site")
    path = folder / "suite.yaml"
    path.write_text(CLAIMS_SUITE)
    store = f"sqlite:///{folder}/mlflow.db"
    out = harness(env, "run", str(path), "-j", "0", "--tracking-uri", store, cwd=folder)
    return env, str(path), store, folder, out


def test_run_ends_with_a_verdict_per_claim_and_every_status(ran):
    _, _, _, folder, out = ran
    assert out.returncode == 0, out.stderr
    tail = out.stdout[out.stdout.index("Claims: verdict per claim") :]
    for claim, status in EXPECTED.items():
        line = next(line for line in tail.splitlines() if f" {claim} " in line)
        assert status in line, line
    assert (
        "2 reproduced, 1 not reproduced, 2 inconclusive, 1 uninformative, 1 not run, 1 error"
        in tail
    )
    assert "needs-fragile: missing cells: noise(n=40) x fragile" in tail
    assert "no metric column" in tail  # the broken claim's last traceback line
    report = (folder / "reports" / "toy-claims" / "report.md").read_text()
    assert report.index("## Claims") < report.index("## toy")
    saved = json.loads((folder / "reports" / "toy-claims" / "claims.json").read_text())
    assert {v["claim"]: v["status"] for v in saved} == EXPECTED
    assert "Traceback" in (folder / "reports" / "toy-claims" / "report.html").read_text()


def test_claims_tags_on_the_parent_run(ran):
    import mlflow

    _, _, store, _, _ = ran
    client = mlflow.MlflowClient(store)
    experiment = client.get_experiment_by_name("toy-claims")
    parents = client.search_runs([experiment.experiment_id], "tags.`harness.kind` = 'suite'")
    assert parents[0].data.tags["claim.shift-raises-error"] == "reproduced"


def test_claims_from_the_store_and_from_an_export_agree(ran):
    env, path, store, folder, _ = ran
    stored = harness(env, "claims", path, "--tracking-uri", store, "--format", "json", cwd=folder)
    assert stored.returncode == 0, stored.stderr
    verdicts = json.loads(stored.stdout)
    assert {v["claim"]: v["status"] for v in verdicts} == EXPECTED
    export = folder / "toy.parquet"
    made = harness(env, "results", path, "--tracking-uri", store, "--format", "parquet",
                   "--out", str(export), cwd=folder)  # fmt: skip
    assert made.returncode == 0, made.stderr
    from_file = harness(env, "claims", path, "--results", str(export), "--format", "markdown")
    from_store = harness(env, "claims", path, "--tracking-uri", store, "--format", "markdown")
    assert from_file.returncode == 0, from_file.stderr
    assert from_file.stdout == from_store.stdout
    assert from_file.stdout.startswith("| paper | claim | verdict |")
    rows = pd.read_parquet(export)  # the exports of two included suites, say
    rows[rows["seed"] < 3].to_parquet(folder / "a.parquet")
    rows[rows["seed"] >= 3].to_parquet(folder / "b.parquet")
    split = harness(env, "claims", path, "--results", str(folder / "a.parquet"),
                    "--results", str(folder / "b.parquet"), "--format", "markdown")  # fmt: skip
    assert split.stdout == from_file.stdout


def test_strict_claims_exits_3_and_without_it_verdicts_do_not_change_the_exit(ran):
    env, path, store, folder, _ = ran
    strict = harness(env, "claims", path, "--tracking-uri", store, "--strict-claims")
    assert strict.returncode == 3
    one = harness(env, "claims", path, "--tracking-uri", store, "--strict-claims",
                  "--claim", "shift-raises-error")  # fmt: skip
    assert one.returncode == 0, one.stdout + one.stderr
    rerun = harness(env, "run", path, "--tracking-uri", store, "--strict-claims", cwd=folder)
    assert rerun.returncode == 3 and "0 to run" in rerun.stdout


def test_a_resumed_run_with_nothing_new_keeps_the_report_and_rebuilds_a_missing_one(ran):
    env, path, store, folder, _ = ran
    report = folder / "reports" / "toy-claims" / "report.html"
    report.write_text(report.read_text() + "<!-- kept -->")
    kept = harness(env, "run", path, "--tracking-uri", store, cwd=folder)
    assert "not rebuilt" in kept.stdout and report.read_text().endswith("<!-- kept -->")
    report.unlink()
    rebuilt = harness(env, "run", path, "--tracking-uri", store, cwd=folder)
    assert "not rebuilt" not in rebuilt.stdout and report.is_file()
    assert "2 reproduced" in rebuilt.stdout  # the verdicts are printed either way


def test_run_claim_runs_only_the_cells_the_claim_needs(ran, tmp_path):
    env, path, _, _, _ = ran
    store = f"sqlite:///{tmp_path}/mlflow.db"
    out = harness(env, "run", path, "--claim", "shift-raises-error", "-j", "0",
                  "--tracking-uri", store, cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "12 cells, 0 already finished, 12 to run" in out.stdout  # not the 6 noisy cells
    assert "1 reproduced" in out.stdout
    added = harness(env, "run", path, "--claim", "shift-raises-error", "--add-method", "fragile",
                    "-j", "0", "--tracking-uri", store, cwd=tmp_path)  # fmt: skip
    assert "18 cells, 12 already finished, 6 to run" in added.stdout  # the added method's
    unknown = harness(env, "run", path, "--claim", "no-such-claim", "--tracking-uri", store)
    assert unknown.returncode == 2 and "Unknown claim 'no-such-claim'" in unknown.stderr


def test_a_results_file_of_another_suite_or_version_is_refused(ran, tmp_path):
    env, path, store, _, _ = ran
    export = tmp_path / "toy.csv"
    harness(env, "results", path, "--tracking-uri", store, "--out", str(export))
    rows = pd.read_csv(export)
    rows.assign(dataset="other-data").to_csv(tmp_path / "other.csv", index=False)
    other = harness(env, "claims", path, "--results", str(tmp_path / "other.csv"))
    assert other.returncode == 2 and "another suite" in other.stderr
    rows.assign(plugin_version="9.9").to_csv(tmp_path / "old.csv", index=False)
    old = harness(env, "claims", path, "--results", str(tmp_path / "old.csv"))
    assert old.returncode == 2 and "made with toy 9.9" in old.stderr
    missing = harness(env, "claims", path, "--results", str(tmp_path / "none.parquet"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


# -- the verdict rules, on tables made by hand ------------------------------------------


def _table(effect: float, seeds: int = 8, noise: float = 0.1, method: str = "new"):
    rng = np.random.default_rng(1)
    rows = []
    for seed in range(seeds):
        base = rng.normal(0, 1)
        for name, shift in (("old", 0.0), (method, effect)):
            value = base + shift + rng.normal(0, noise)
            rows.append({"task": "t", "dataset": "d", "method": name, "seed": seed,
                         "status": "ok", "score": value, "run_id": f"{name}{seed}"})  # fmt: skip
    return pd.DataFrame(rows)


def _exchange(results, metric):
    """'new' and 'old' trade their rows: the effect must reverse."""
    names = results["method"].map({"new": "old", "old": "new"}).fillna(results["method"])
    return results.assign(method=names)


class NewBeatsOld(Claim):
    """'new' scores higher than 'old', paired over seeds.

    Source: test fixture.
    """

    name = "new-beats-old"
    task = "t"
    source = Source("fixture")
    statement = "new scores above old."
    requires = (Cells("d", ("new", "old")),)
    metric = "score"
    subject = "new"
    kind = PairedGain(baseline="old")
    hypothesis = Greater(0.0)
    control = Transform(_exchange, "new and old exchanged")


class LegacyNewBeatsOld(Claim):
    """The same claim with its own statistic and control (first contract).

    Source: test fixture.
    """

    name = "legacy-new-beats-old"
    task = "t"
    source = Source("fixture")
    statement = "new scores above old."
    requires = (Cells("d", ("new", "old")),)
    hypothesis = Greater(0.0)
    control_description = "new and old exchanged"
    subject = "new"

    def statistic(self, results):
        wide = results.pivot_table(index="seed", columns="method", values="score")
        return paired_difference(wide["new"], wide["old"])

    def control(self, results):
        return _exchange(results, "score")


def test_a_real_effect_is_reproduced_and_noise_in_its_place_is_not():
    for claim in (NewBeatsOld, LegacyNewBeatsOld):
        (real,) = evaluate_claims([claim], _table(1.0))
        assert real.status == Status.REPRODUCED, real
        assert real.control.status == Status.NOT_REPRODUCED
        (noise,) = evaluate_claims([claim], _table(0.0))
        assert noise.status == Status.INCONCLUSIVE  # not detected: never "not reproduced"
        assert noise.estimate.mde > 0  # with the smallest effect this n detects


def test_a_claim_its_control_also_passes_is_uninformative():
    class Trivial(NewBeatsOld):
        name = "trivial"
        control = Transform(lambda rows, metric: rows, "nothing changed")

    (verdict,) = evaluate_claims([Trivial], _table(1.0))
    assert verdict.status == Status.UNINFORMATIVE


def test_an_undecided_control_leaves_the_claim_inconclusive():
    def noise_for_new(rows, metric):
        noise = np.random.default_rng(3).normal(0, 1, len(rows))
        old = rows["method"].eq("old")
        return rows.assign(score=np.where(old, rows["score"], rows["score"] - 1 + noise))

    class Undecided(NewBeatsOld):
        name = "undecided"
        control = Transform(noise_for_new, "noise in new's place: neither side")

    class ExactlyZero(NewBeatsOld):
        name = "exactly-zero"
        control = Swap(source="old", target="new")  # a gain of exactly 0 is no gain

    (zero,) = evaluate_claims([ExactlyZero], _table(1.0))
    assert zero.status == Status.REPRODUCED and zero.control.status == Status.NOT_REPRODUCED

    (verdict,) = evaluate_claims([Undecided], _table(1.0))
    assert verdict.status == Status.INCONCLUSIVE and "control undecided" in verdict.reason


def test_a_rival_that_reproduces_makes_the_claim_uninformative():
    table = pd.concat([_table(1.0), _table(1.0, method="rival").query("method == 'rival'")])

    class WithRival(NewBeatsOld):
        name = "with-rival"
        rivals = (Rival("rival", why="the same effect without the mechanism"),)

    (verdict,) = evaluate_claims([WithRival], table)
    assert verdict.status == Status.UNINFORMATIVE and "rival rival" in verdict.reason
    assert verdict.rivals["rival"].status == Status.REPRODUCED
    weak = pd.concat([_table(1.0), _table(-1.0, method="rival").query("method == 'rival'")])
    (verdict,) = evaluate_claims([WithRival], weak)
    assert verdict.status == Status.REPRODUCED
    assert verdict.rivals["rival"].status == Status.NOT_REPRODUCED


def test_holm_turns_a_marginal_claim_inconclusive_among_many():
    from harness.claims.stats import Estimate

    class Marginal(LegacyNewBeatsOld):
        name = "marginal"

        def statistic(self, results):
            if results["method"].eq("exchanged").any():
                return Estimate(-0.5, -1.0, -0.01, 0.02, 8, 0.4, "given")
            return Estimate(0.5, 0.01, 1.0, 0.02, 8, 0.4, "given")

        def control(self, results):
            return results.assign(method="exchanged")

    alone = evaluate_claims([Marginal], _table(1.0))
    assert alone[0].status == Status.REPRODUCED and alone[0].p_adjusted == pytest.approx(0.02)
    five = [type(f"Marginal{i}", (Marginal,), {"name": f"marginal-{i}"}) for i in range(5)]
    many = evaluate_claims(five, _table(1.0))
    assert all(v.status == Status.INCONCLUSIVE for v in many)
    assert many[0].p_adjusted == pytest.approx(0.1) and many[0].estimate.p_value == 0.02


def test_an_added_method_is_placed_in_the_subjects_place():
    table = pd.concat([_table(1.0), _table(-1.0, method="mine").query("method == 'mine'")])
    (verdict,) = evaluate_claims([NewBeatsOld], table)
    assert verdict.status == Status.REPRODUCED
    assert verdict.added["mine"].status == Status.NOT_REPRODUCED
    assert verdict.added["mine"].estimate.estimate == pytest.approx(-1.0, abs=0.2)


def test_too_few_seeds_is_not_run_naming_the_cells():
    (verdict,) = evaluate_claims([NewBeatsOld], _table(1.0, seeds=1))
    assert verdict.status == Status.NOT_RUN and "d x new: 1 of 2 seeds" in verdict.reason


def test_list_shows_each_claim_with_its_statement_and_hypothesis(ran):
    env, *_ = ran
    listed = harness(env, "list", "--task", "toy")
    assert listed.returncode == 0, listed.stderr
    line = next(line for line in listed.stdout.splitlines() if "shift-raises-error" in line)
    assert "claim" in line and "estimate > 0" in listed.stdout


def test_only_other_plugins_methods_are_placed_against_a_claim():
    paper = _table(1.0).assign(plugin="paper")
    baseline = _table(0.5, method="paper-baseline").query("method == 'paper-baseline'")
    mine = _table(-1.0, method="mine").query("method == 'mine'").assign(plugin="mine")
    table = pd.concat([paper, baseline.assign(plugin="paper"), mine])
    (verdict,) = evaluate_claims([NewBeatsOld], table)
    assert set(verdict.added) == {"mine"} and verdict.subject == "new"


# -- faults a breaker found (each fails on the first cut of the contract) ------------------


def test_a_malformed_claim_leaves_its_plugin_out_when_the_registry_is_built():
    from harness import hookimpl
    from harness.plugins.registry import build_registry

    class NoTuple(LegacyNewBeatsOld):
        name = "no-tuple"
        requires = Cells("d", ("new", "old"))  # the trailing comma forgotten

    class Plugin:
        @hookimpl
        def harness_claims(self):
            return [NoTuple]

    registry = build_registry({"bad": Plugin()}, entry_points=False)
    assert "requires must be a tuple of harness.Cells" in registry.broken["bad"]


def test_a_claim_that_exits_or_returns_nonsense_is_an_error_verdict():
    class Exits(LegacyNewBeatsOld):
        name = "exits"

        def statistic(self, results):
            raise SystemExit(0)

    class Inverted(LegacyNewBeatsOld):
        name = "inverted"

        def statistic(self, results):
            from harness.claims.stats import Estimate

            return Estimate(0.5, 0.9, 0.3, 0.01, 8, 0.1, "inverted interval")

    exits, inverted = evaluate_claims([Exits, Inverted], _table(1.0))
    assert exits.status == Status.ERROR and "SystemExit" in exits.reason
    assert inverted.status == Status.ERROR and "inverted" in inverted.reason


def test_exports_holding_one_cell_twice_are_refused_and_other_seeds_left_out(ran, tmp_path):
    env, path, store, folder, _ = ran
    export = folder / "toy.parquet"
    if not export.exists():
        harness(env, "results", path, "--tracking-uri", store, "--format", "parquet",
                "--out", str(export))  # fmt: skip
    rows = pd.read_parquet(export)
    rows.assign(run_id=rows["run_id"] + "-again").to_parquet(tmp_path / "again.parquet")
    twice = harness(env, "claims", path, "--results", str(export),
                    "--results", str(tmp_path / "again.parquet"))  # fmt: skip
    assert twice.returncode == 2 and "more than once" in twice.stderr
    two_seeds = harness(env, "claims", path, "--results", str(export), "--seeds", "0,1",
                        "--format", "json")  # fmt: skip
    shift = next(v for v in json.loads(two_seeds.stdout) if v["claim"] == "shift-raises-error")
    assert shift["status"] == "not-run"  # 2 of 5 seeds: the export's other seeds left out


def test_claims_of_a_suite_never_run_exit_2(ran, tmp_path, store):
    env, path, *_ = ran
    never = harness(env, "claims", path, "--tracking-uri", store)
    assert never.returncode == 2 and "has no runs" in never.stderr


def _export(rows: list[dict]) -> pd.DataFrame:
    base = {"task": "t", "dataset": "d", "method": "m", "status": "ok", "score": 1.0}
    return pd.DataFrame([base | {"seed": i, "run_id": f"r{i}", "cell_hash": f"c{i}",
                                  "start_time": 1796404879057} | row
                         for i, row in enumerate(rows)])  # fmt: skip


def test_an_export_holding_a_run_or_cell_twice_with_other_values_is_refused(tmp_path):
    from harness.claims.evidence import read_results
    from harness.errors import SuiteError

    same = _export([{}, {}])
    same.iloc[[0, 1, 1]].to_parquet(tmp_path / "same.parquet")  # an exact repeat: one row
    assert len(read_results(tmp_path / "same.parquet")) == 2
    for column, value in (("run_id", "r0"), ("cell_hash", "c0")):
        other = _export([{}, {"score": 0.0}])
        other.loc[1, column] = value
        other.to_parquet(tmp_path / "other.parquet")
        with pytest.raises(SuiteError, match=f"other.parquet holds .* {value} twice"):
            read_results(tmp_path / "other.parquet")


def test_a_cut_csv_export_is_refused_naming_its_first_bad_row(tmp_path):
    from harness.claims.evidence import read_results
    from harness.errors import SuiteError

    text = _export([{}, {}, {}]).to_csv(index=False)
    (tmp_path / "whole.csv").write_text(text)
    assert len(read_results(tmp_path / "whole.csv")) == 3
    (tmp_path / "cut.csv").write_text(text[: text.rindex("ok,")])  # last row cut mid-field
    with pytest.raises(SuiteError, match=r"cut\.csv: row 3 has no run_id, cell_hash, status"):
        read_results(tmp_path / "cut.csv")
    (tmp_path / "end.csv").write_text(text[:-3])  # only the last value's tail cut
    with pytest.raises(SuiteError, match=r"end\.csv: row 3 ends without a newline"):
        read_results(tmp_path / "end.csv")


def test_min_seeds_counts_each_configuration_not_a_described_fact():
    """Seven opponents with one short of seeds: not run; a dataset fact drawn with the data
    (another value every seed) is no configuration of its own."""
    rows = []
    for opponent in range(7):
        for seed in range(2 if opponent else 1):
            for method in ("new", "old"):
                rows.append({"task": "t", "dataset": "d", "method": method, "seed": seed,
                             "status": "ok", "score": float(method == "new") + seed,
                             "dataset.opponent": str(opponent),
                             "dataset.drawn": f"{seed}-{opponent}"})  # fmt: skip
    table = pd.DataFrame(rows)
    (short,) = evaluate_claims([NewBeatsOld], table)
    assert short.status == Status.NOT_RUN and "dataset.opponent=0" in short.reason
    assert "dataset.drawn" not in short.reason
    full = pd.concat([table, table[table["dataset.opponent"].eq("1")].assign(
        **{"dataset.opponent": "0", "dataset.drawn": "x"})])  # fmt: skip
    (enough,) = evaluate_claims([NewBeatsOld], full)
    assert enough.status != Status.NOT_RUN, enough.reason
