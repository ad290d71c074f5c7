"""One family, the paper (issue 58, item 5): Holm's family is the plugin's claims whichever
command evaluates them, so a plugin's suite, ``all.yaml``, ``--claim NAME`` and ``harness
claims --results`` give the same verdicts for the same evidence; a third party's claims never
change a paper's; a claim name two tasks share is refused by ``--claim``.

The fixture family holds two exact binomial claims over 12 seeds, each seed's value above 0:
a strong one (share > 0.3, p = 0.3^12) and a marginal one (share > 0.71, p = 0.71^12 =
0.0164). Holm keeps the marginal one reproduced only when its family is counted whole
(with its sibling counted as p = 1, or among more claims, its adjusted p passes 0.025).
"""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from harness import Dataset, Method, Metric, hookimpl
from harness.claims import Cells, Claim, Greater, Rate, Source, Status, UseMetric
from harness.claims import evaluate_claims as evaluate
from harness.claims.evidence import registered, suite_claims
from harness.errors import SuiteError
from harness.plugins.registry import build_registry


class Points(Dataset):
    """The seed.

    Source: test fixture.
    """

    name = "pts"
    task = "fam"

    def load(self, params, seed):
        return seed


class Level(Method):
    """``mu`` plus a small draw of the seed (above 0 for ``mu`` >= 0.1).

    Source: test fixture.
    """

    name = "level"
    task = "fam"

    @dataclass
    class Params:
        mu: float = 0.0

    def run(self, data, params, seed) -> float:
        return params.mu + 0.01 * float(np.random.default_rng(seed).uniform(-1, 1))


class Value(Metric):
    """The output.

    Source: test fixture.
    """

    name = "value"
    task = "fam"

    def compute(self, data, output) -> float:
        return output


class Below(Metric):
    """Below -1 whatever the output: the control's metric.

    Source: test fixture.
    """

    name = "below"
    task = "fam"

    def compute(self, data, output) -> float:
        return -abs(output) - 1


class Strong(Claim):
    """More than 30% of level(mu=3)'s seeds score above 0 (all do: p = 0.3^12).

    Source: test fixture.
    """

    name = "strong"
    task = "fam"
    source = Source("fixture")
    statement = "More than 30% of level(mu=3)'s seeds score above 0."
    requires = (Cells("pts", ("level",), method_params={"mu": 3.0}, min_seeds=12),)
    metric = "value"
    kind = Rate(0.0)
    hypothesis = Greater(0.3)
    subject = "level"
    control = UseMetric("below")


class Marginal(Strong):
    """More than 71% of level(mu=0.65)'s seeds score above 0 (all do: p = 0.0164).

    Source: test fixture.
    """

    name = "marginal"
    statement = "More than 71% of level(mu=0.65)'s seeds score above 0."
    requires = (Cells("pts", ("level",), method_params={"mu": 0.65}, min_seeds=12),)
    hypothesis = Greater(0.71)


class Paper:
    @hookimpl
    def harness_datasets(self):
        return [Points]

    @hookimpl
    def harness_methods(self):
        return [Level]

    @hookimpl
    def harness_metrics(self):
        return [Value, Below]

    @hookimpl
    def harness_claims(self):
        return [Strong, Marginal]


def _copies(n: int, module: str, family: str | None = None) -> list[type[Claim]]:
    """``n`` claims like :class:`Marginal` as another package (``module``) declares them."""
    return [type(f"Extra{i}", (Marginal,), {"name": f"extra-{i}", "__module__": module,
                                            "family": family, "__doc__": "x\n\nSource: t."})
            for i in range(n)]  # fmt: skip


class ThirdParty:
    """100 more claims on the paper's task, from another package."""

    claims = _copies(100, "harness_third_party")

    @hookimpl
    def harness_claims(self):
        return self.claims


def _rows(task: str = "fam", seeds=range(12)) -> pd.DataFrame:
    """The results table the fixture's cells give (as ``harness results`` holds them)."""
    rows = []
    for mu in (3.0, 0.65):
        for seed in seeds:
            value = mu + 0.01 * float(np.random.default_rng(seed).uniform(-1, 1))
            rows.append({"task": task, "dataset": "pts", "method": "level", "seed": seed,
                         "status": "ok", "method.mu": str(mu), "value": value,
                         "below": -abs(value) - 1, "run_id": f"{task}{mu}{seed}"})  # fmt: skip
    return pd.DataFrame(rows)


def _outcome(verdicts) -> dict[str, tuple[str, float | None]]:
    return {v.claim: (str(v.status), v.p_adjusted) for v in verdicts}


@pytest.fixture
def in_process(monkeypatch):
    """Claims evaluated in this process: isolation is not what these tests pin."""
    monkeypatch.setenv("HARNESS_CLAIM_ISOLATION", "0")


def test_the_fixture_needs_its_whole_family(in_process):
    both = evaluate([Strong, Marginal], _rows())
    assert _outcome(both)["marginal"] == ("reproduced", pytest.approx(0.71**12))
    (alone,) = evaluate([Marginal], _rows()[lambda r: r["method.mu"].eq("0.65")], [Strong])
    assert alone.status == Status.INCONCLUSIVE  # its sibling not run counts as p = 1
    assert alone.p_adjusted == pytest.approx(2 * 0.71**12)


def test_same_evidence_same_verdicts_whichever_claims_are_asked_for(in_process):
    registry = build_registry({"paper": Paper()}, entry_points=False)
    every = registered(registry)
    suite = evaluate(every, _rows(), every)  # the plugin's suite
    side = _rows("other-task").assign(dataset="elsewhere")
    everything = evaluate(every, pd.concat([_rows(), side]), every)  # all.yaml's rows
    (one,) = evaluate([Marginal], _rows(), every)  # --claim marginal
    assert _outcome(suite) == _outcome(everything)
    assert _outcome([one]) == {"marginal": _outcome(suite)["marginal"]}
    assert _outcome(suite)["marginal"][0] == "reproduced"


def test_a_third_partys_100_claims_never_change_the_papers_verdicts(in_process):
    alone = build_registry({"paper": Paper()}, entry_points=False)
    crowded = build_registry({"paper": Paper(), "third": ThirdParty()}, entry_points=False)
    assert not crowded.broken and len(registered(crowded)) == 102
    paper = [Strong, Marginal]
    before = _outcome(evaluate(paper, _rows(), registered(alone)))
    with_them = evaluate(registered(crowded), _rows(), registered(crowded))  # all, as claims does
    assert {k: v for k, v in _outcome(with_them).items() if k in before} == before
    theirs = [v for v in with_them if v.claim.startswith("extra-")]
    assert {v.family for v in theirs} == {"harness_third_party"}
    assert all(v.status == Status.INCONCLUSIVE for v in theirs)  # Holm over their own 100
    # the wrong variant: the same claims in the paper's family would flip its marginal claim
    joined = _copies(3, "harness_third_party", family=Marginal.family_name())
    mixed = _outcome(evaluate(paper, _rows(), [*paper, *joined]))
    assert mixed["marginal"][0] == "inconclusive" and before["marginal"][0] == "reproduced"


# -- the commands, in this process on one store ---------------------------------------------

SUITE = """
name: fam
repetitions: 12
runs:
  - task: fam
    datasets: [pts]
    methods: [{name: level, grid: {mu: [3.0, 0.65]}}]
    metrics: [value, below]
"""


@pytest.fixture
def harness_here(tmp_path, store, monkeypatch):
    """``harness ARGS`` in this process with the fixture's registry: ``(exit code, stdout,
    stderr)``; SIGTERM's handler is restored after (``harness run`` sets its own)."""
    from harness.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "fam.yaml").write_text(SUITE)
    registry = build_registry({"paper": Paper()}, entry_points=False)
    handler = signal.getsignal(signal.SIGTERM)

    def run(*args: str, capsys) -> tuple[int, str, str]:
        try:
            main([*args], registry=registry)
            code = 0
        except SystemExit as ended:
            code = int(ended.code or 0)
        finally:
            signal.signal(signal.SIGTERM, handler)
        out = capsys.readouterr()
        return code, out.out, out.err

    return run, store


def _claims_json(path) -> dict[str, tuple[str, float | None]]:
    return {v["claim"]: (v["status"], v["p_adjusted"]) for v in json.loads(path.read_text())}


def test_every_command_gives_a_claim_the_verdict_of_the_whole_suite(harness_here, tmp_path, capsys):
    run, store = harness_here
    uri = ("--tracking-uri", store)
    code, out, err = run("run", "fam.yaml", "-j", "0", *uri, capsys=capsys)
    assert code == 0, err
    whole = _claims_json(tmp_path / "reports" / "fam" / "claims.json")
    assert whole["marginal"][0] == "reproduced" and whole["strong"][0] == "reproduced"

    code, out, err = run("run", "fam.yaml", "-j", "0", "--claim", "marginal", *uri, capsys=capsys)
    assert code == 0, err
    one = _claims_json(tmp_path / "reports" / "fam+claim-marginal" / "claims.json")
    assert one == {"marginal": whole["marginal"]}  # not a family of one

    code, out, err = run("claims", "fam.yaml", "--format", "json", *uri, capsys=capsys)
    assert code == 0, err
    assert {v["claim"]: (v["status"], v["p_adjusted"]) for v in json.loads(out)} == whole

    code, _, err = run("results", "fam.yaml", "--format", "csv", "--out", "fam.csv", *uri,
                       capsys=capsys)  # fmt: skip
    assert code == 0, err
    for only in ((), ("--claim", "marginal")):
        code, out, err = run("claims", "fam.yaml", "--results", "fam.csv", "--format", "json",
                             *only, capsys=capsys)  # fmt: skip
        assert code == 0, err
        given = {v["claim"]: (v["status"], v["p_adjusted"]) for v in json.loads(out)}
        assert given == ({"marginal": whole["marginal"]} if only else whole)


# -- a claim name two tasks share ------------------------------------------------------------


def test_claim_refuses_a_name_two_tasks_share_listing_them(capsys):

    class Twin(Strong):
        name = "strong"
        task = "fam-two"
        requires = (Cells("pts-two", ("level-two",), method_params={"mu": 3.0}),)
        subject = "level-two"

    class Other:
        @hookimpl
        def harness_datasets(self):
            return [type("P2", (Points,), {"name": "pts-two", "task": "fam-two"})]

        @hookimpl
        def harness_methods(self):
            return [type("L2", (Level,), {"name": "level-two", "task": "fam-two"})]

        @hookimpl
        def harness_metrics(self):
            return [type("V2", (Value,), {"task": "fam-two"}),
                    type("B2", (Below,), {"task": "fam-two"})]  # fmt: skip

        @hookimpl
        def harness_claims(self):
            return [Twin]

    registry = build_registry({"paper": Paper(), "other": Other()}, entry_points=False)
    assert not registry.broken
    with pytest.raises(SuiteError) as refused:
        suite_claims(registry, [], ["strong"])
    text = str(refused.value)
    assert "Claim 'strong' is ambiguous" in text
    assert "task 'fam' (plugin 'paper')" in text and "task 'fam-two' (plugin 'other')" in text
    assert [c.name for c in suite_claims(registry, [], ["marginal"])] == ["marginal"]


# -- a family belongs to the distribution whose package names it ------------------------------


class Joiner:
    """A third party whose one claim names label-noise's family."""

    claims = _copies(1, "harness_third_party", family="harness_label_noise")

    @hookimpl
    def harness_claims(self):
        return self.claims


def test_a_third_party_claim_naming_a_papers_family_is_refused():
    """Before the check the registry took the claim in, in label-noise's Holm family (the
    wrong variant of the test above shows what such a member does to a paper's verdict)."""
    from importlib.metadata import packages_distributions

    if "harness_label_noise" not in packages_distributions():
        pytest.skip("the label-noise plugin is not installed here")
    registry = build_registry({"paper": Paper(), "third": Joiner()}, entry_points=False)
    fault = registry.broken.get("third", "")
    assert "Extra0 names family 'harness_label_noise'" in fault, registry.broken
    assert "owned by distribution harness-label-noise" in fault
    assert "\n" not in fault.strip() and "paper" not in registry.broken


def test_a_claim_may_name_its_own_packages_families():
    mine = _copies(1, "harness_third_party", family="harness_third_party:robustness")
    assert mine[0].declaration_problems() == []
    other = _copies(1, "harness_third_party", family="anything-else")
    assert "owned by package 'anything-else', not 'harness_third_party'" in " ".join(
        other[0].declaration_problems()
    )
