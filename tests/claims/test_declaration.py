"""Bad input: a malformed claim is refused when the registry is built, naming the plugin and
the field; ``harness check-plugin`` names every dataset, method and param a claim gets wrong.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import pytest

from harness import Dataset, Method, Metric, hookimpl
from harness.claims import Cells, Claim, Greater, Hypothesis, Rival, Source, Swap, UseMetric
from harness.claims.kinds import Mean, PairedGain
from harness.errors import PluginError
from harness.plugins.registry import build_registry


class Points(Dataset):
    """Three numbers.

    Source: test fixture.
    """

    name = "points"
    task = "decl"

    @dataclass
    class Params:
        n: int = 3

    def load(self, params, seed):
        return [float(seed)] * params.n

    def describe(self, data) -> dict:
        return {"drawn": len(data)}


class Level(Method):
    """A constant.

    Source: test fixture.
    """

    name = "level"
    task = "decl"

    @dataclass
    class Params:
        mu: float = 0.0

    def run(self, data, params, seed) -> float:
        return params.mu


class Flat(Level):
    """Another constant.

    Source: test fixture.
    """

    name = "flat"


class Value(Metric):
    """The output.

    Source: test fixture.
    """

    name = "value"
    task = "decl"

    def compute(self, data, output) -> float:
        return float(output)


class Good(Claim):
    """A well-formed declaration.

    Source: test fixture.
    """

    name = "good"
    task = "decl"
    source = Source("fixture")
    statement = "level scores above 0."
    requires = (Cells("points", ("level", "flat"), {"n": 3}, {"mu": 1.0}),)
    metric = "value"
    kind = Mean()
    hypothesis = Greater(0.0)
    subject = "level"
    rivals = (Rival("flat", {"mu": 1.0}, "a constant"),)
    control = UseMetric("value")


def _plugin(*claims: type[Claim]) -> object:
    class Plugin:
        @hookimpl
        def harness_datasets(self):
            return [Points]

        @hookimpl
        def harness_methods(self):
            return [Level, Flat]

        @hookimpl
        def harness_metrics(self):
            return [Value]

        @hookimpl
        def harness_claims(self):
            return list(claims)

    return Plugin()


def _broken(claim: type[Claim]) -> str:
    """The fault of plugin 'paper' holding ``claim`` (asserting it was left out)."""
    registry = build_registry({"paper": _plugin(claim)}, entry_points=False)
    assert "paper" in registry.broken and "paper" not in registry.plugins
    assert not registry.entries["method"], "the whole plugin is left out"
    return registry.broken["paper"]


def test_a_well_formed_claim_is_registered():
    registry = build_registry({"paper": _plugin(Good)}, entry_points=False)
    assert not registry.broken and ("decl", "good") in registry.entries["claim"]


def test_an_unknown_hypothesis_object_is_refused_naming_plugin_and_field():
    class Words(Good):
        hypothesis = "greater than zero"

    class Unwritten(Hypothesis):  # a hypothesis class that runs no test
        pass

    class Empty(Good):
        hypothesis = Unwritten()

    words = _broken(Words)
    assert "Plugin 'paper': claim 'good'" in words and "hypothesis must be Greater" in words
    assert "'greater than zero'" in words
    empty = _broken(Empty)
    assert "hypothesis Unwritten does not implement band, p_value, p_negation" in empty


def test_a_margin_that_is_a_string_is_refused_naming_the_field():
    sneaked = Greater(0.0)
    object.__setattr__(sneaked, "margin", "0.2")  # past Greater's own check

    class Text(Good):
        hypothesis = sneaked

    assert "hypothesis.margin is '0.2' (must be a finite number)" in _broken(Text)


def test_a_margin_that_is_a_string_leaves_an_installed_plugin_out_naming_it(tmp_path):
    from fake_plugins import install_fake_plugin

    source = (
        "from harness.claims import Greater\n"
        "THRESHOLD = Greater('0.2')  # the margin typed as a string\n"
    )
    install_fake_plugin(tmp_path, "stringy", "stringy_plugin", source)
    sys.path.insert(0, str(tmp_path))
    try:
        others = {"stringy"}
        from importlib.metadata import entry_points

        blocked = {ep.name for ep in entry_points(group="harness")} - others
        registry = build_registry(disabled=blocked)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("stringy_plugin", None)
    fault = registry.broken["stringy"]
    assert "Plugin 'stringy'" in fault and "Greater.margin must be a finite number" in fault
    assert "'0.2'" in fault


@pytest.mark.parametrize(
    ("change", "field", "name"),
    [
        ({"requires": (Cells("points", ("level", "levle")),)}, "requires[0].methods", "levle"),
        ({"requires": (Cells("pionts", ("level", "flat")),)}, "requires[0].dataset", "pionts"),
        ({"rivals": (Rival("flta"),)}, "rivals[0].method", "flta"),
        ({"kind": PairedGain("nope")}, "kind.baseline", "nope"),
        ({"control": Swap("ghost", "level")}, "control.source", "ghost"),
    ],
)
def test_cells_naming_a_component_that_does_not_exist_are_refused(change, field, name):
    bad = type("Bad", (Good,), {"__doc__": "Bad.\n\nSource: test fixture.\n", **change})
    fault = _broken(bad)
    assert f"Plugin 'paper': claim 'good': {field} names" in fault
    assert f"'{name}', which task 'decl' does not have" in fault


def test_a_claim_naming_another_plugins_method_is_registered():
    class Extra:
        @hookimpl
        def harness_methods(self):
            return [type("Other", (Level,), {"name": "other", "__doc__": "x\n\nSource: t."})]

    class Rivalled(Good):
        rivals = (Rival("other"),)

    both = {"paper": _plugin(Rivalled), "extra": Extra()}
    assert not build_registry(both, entry_points=False).broken
    without = build_registry(both, entry_points=False, disabled={"extra"})
    assert "rivals[0].method names method 'other'" in without.broken["paper"]


def test_a_rival_equal_to_the_subject_is_refused():
    class Itself(Good):
        rivals = (Rival("level", {"mu": 1.0}),)

    assert "rival 'level' is the subject itself" in _broken(Itself)


def test_a_claim_whose_construction_needs_arguments_is_refused():
    class Needs(Good):
        def __init__(self, width):
            super().__init__()

    assert "cannot be built without arguments" in _broken(Needs)


def test_building_the_registry_runs_no_claim_code():
    class ExitsWhenBuilt(Good):
        def __init__(self, params=None):
            os._exit(7)  # would end every harness command if the registry built it

    registry = build_registry({"paper": _plugin(ExitsWhenBuilt)}, entry_points=False)
    assert not registry.broken  # its verdict says what it does (tests/claims/test_isolation.py)


def test_strict_registry_raises_the_refusal():
    class Itself(Good):
        rivals = (Rival("level", {"mu": 1.0}),)

    with pytest.raises(PluginError, match=r"Plugin 'paper': claim 'good': rival 'level'"):
        build_registry({"paper": _plugin(Itself)}, entry_points=False, strict=True)


# -- harness check-plugin ------------------------------------------------------------------


def test_check_plugin_names_each_unknown_param_by_claim_and_field():
    from harness.plugins.testing import run_checks

    class Misnamed(Good):
        name = "misnamed"
        requires = (Cells("points", ("level", "flat"), {"n": 3, "drawn": 3, "size": 3},
                          {"mu": 1.0, "sigma": 2}),)  # fmt: skip
        rivals = (Rival("flat", {"mean": 1.0}),)

    registry = build_registry({"paper": _plugin(Good, Misnamed)}, entry_points=False)
    results = {
        check: (outcome, message) for check, outcome, message in run_checks("paper", registry)
    }
    assert results["good-check_claim_names_existing_components"] == ("passed", "")
    outcome, message = results["misnamed-check_claim_names_existing_components"]
    assert outcome == "failed" and "claim 'misnamed'" in message
    assert "requires[0].dataset_params names param 'size', which dataset 'points'" in message
    assert "'drawn'" not in message  # a key of describe(): logged as a param too
    assert "requires[0].method_params names param 'sigma', which method 'level'" in message
    assert "requires[0].method_params names param 'sigma', which method 'flat'" in message
    assert "rivals[0].params names param 'mean', which method 'flat'" in message


def test_check_plugin_command_reports_a_claim_naming_a_missing_method(capsys):
    from harness.cli import main

    class Missing(Good):
        rivals = (Rival("flta"),)

    registry = build_registry({"paper": _plugin(Missing)}, entry_points=False)
    with pytest.raises(SystemExit) as ended:
        main(["check-plugin", "paper"], registry=registry)
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert "claim 'good': rivals[0].method names method 'flta'" in " ".join(err.split())
