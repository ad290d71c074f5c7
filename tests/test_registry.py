from __future__ import annotations

import types

import pytest
import toy_plugin

import harness
from harness.errors import PluginError, SuiteError
from harness.registry import build_registry


class ToyPlugin:
    @harness.hookimpl
    def harness_methods(self):
        return [toy_plugin.Mean]


def test_registry_indexes_components_by_kind_task_and_name(registry):
    assert registry.names("method", "toy") == ["boom", "fragile", "mean", "skipper", "sleepy"]
    assert registry.get("dataset", "toy", "noise").plugin == "toy"
    assert registry.tasks() == ["other", "toy"]


def test_duplicate_method_name_names_both_plugins():
    with pytest.raises(PluginError, match=r"'toy'.*'toy-copy'"):
        build_registry(
            {"toy": ToyPlugin(), "toy-copy": ToyPlugin()}, entry_points=False, strict=True
        )


def test_a_clashing_plugin_is_left_out_and_a_suite_naming_its_component_is_told_why():
    class Extra:
        @harness.hookimpl
        def harness_methods(self):
            class Mean(toy_plugin.Mean):
                """The toy's mean again, under its name."""

            class Median(toy_plugin.Mean):
                """A method of the clashing plugin that only it has."""

                name = "median"

            return [Mean, Median]

    registry = build_registry({"toy": ToyPlugin(), "extra": Extra()}, entry_points=False)
    assert "extra" in registry.broken and "toy" in registry.broken["extra"]
    assert registry.get("method", "toy", "mean").plugin == "toy"
    with pytest.raises(SuiteError, match=r"Unknown method 'median'.*Left out: .*'extra'"):
        registry.get("method", "toy", "median")


@pytest.mark.parametrize(
    "name", ["status", "seed", "seeds", "time", "metric", "skipped", "run-id", "reason"]
)
def test_a_metric_named_like_a_result_column_is_refused(name):
    class Named(toy_plugin.AbsError):
        pass

    Named.name = name
    reserved = name in {"status", "seed", "seeds", "time", "metric", "skipped", "reason"}

    class Plugin:
        @harness.hookimpl
        def harness_metrics(self):
            return [Named]

    registry = build_registry({"named": Plugin()}, entry_points=False)
    assert ("named" in registry.broken) == reserved
    if reserved:
        assert f"metric '{name}' has the name of a column" in registry.broken["named"]


def test_misspelled_hook_names_the_plugin():
    class Misspelled:
        @harness.hookimpl
        def harness_method(self):
            return []

    with pytest.raises(PluginError, match=r"'typo'.*harness_method"):
        build_registry({"typo": Misspelled()}, entry_points=False, strict=True)


def test_hook_with_wrong_signature_names_the_plugin():
    class WrongArgs:
        @harness.hookimpl
        def harness_methods(self, task):
            return []

    with pytest.raises(PluginError, match=r"'wrong'.*invalid hook implementation"):
        build_registry({"wrong": WrongArgs()}, entry_points=False, strict=True)


def test_hook_returning_an_instance_is_rejected():
    class Instances:
        @harness.hookimpl
        def harness_methods(self):
            return [toy_plugin.Mean()]

    with pytest.raises(PluginError, match=r"'inst'.*subclass of harness.Method"):
        build_registry({"inst": Instances()}, entry_points=False, strict=True)


def test_disabled_plugin_is_not_loaded(monkeypatch):
    monkeypatch.setenv("HARNESS_DISABLE_PLUGINS", "toy, other")
    registry = build_registry({"toy": toy_plugin}, entry_points=False, strict=True)
    assert registry.plugins == {}


def test_plugin_import_error_is_reported_with_the_error(monkeypatch):
    class BrokenEntryPoint:
        name, value, dist = "broken", "broken_module", None

        def load(self):
            raise ImportError("No module named 'missing_dependency'")

    monkeypatch.setattr("harness.registry.entry_points", lambda group: [BrokenEntryPoint()])
    with pytest.raises(PluginError, match=r"'broken'.*failed to import.*missing_dependency"):
        build_registry(strict=True)
    registry = build_registry()  # not strict: left out, the fault kept with the way out
    assert "broken" not in registry.plugins
    assert "HARNESS_DISABLE_PLUGINS=broken" in registry.broken["broken"]


def test_unknown_method_lists_known_ones(registry):
    with pytest.raises(SuiteError, match=r"Unknown method 'mena'.*Known: boom, fragile, mean"):
        registry.get("method", "toy", "mena", where="s.yaml: runs[0].methods[0]")


def test_bad_component_name_is_rejected():
    bad = types.new_class(
        "Bad", (toy_plugin.Mean,), exec_body=lambda ns: ns.update(name="Bad_Name")
    )

    class Plugin:
        @harness.hookimpl
        def harness_methods(self):
            return [bad]

    with pytest.raises(PluginError, match=r"lower-case words joined by '-'"):
        build_registry({"p": Plugin()}, entry_points=False, strict=True)
