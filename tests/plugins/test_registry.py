from __future__ import annotations

import json
import os
import sys
import types

import pytest
import toy_plugin

import harness
from harness import hookimpl
from harness.errors import PluginError, SuiteError
from harness.plugins.registry import build_registry
from harness.runs.runner import run_suite
from harness.store.tracking import Tracker
from harness.suites.loading import load_suite


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

    monkeypatch.setattr(
        "harness.plugins.discovery.entry_points", lambda group: [BrokenEntryPoint()]
    )
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


# -- the code fingerprint, whatever the plugin's layout (issue 30, item 3) --------------------

PLUGIN_CODE = '''
from dataclasses import dataclass

from harness import Method, hookimpl
from {helpers} import OFFSET


class Shifted(Method):
    """Returns OFFSET (a method whose result depends on a helper module)."""

    name = "shifted"
    task = "{task}"

    @dataclass
    class Params:
        pass

    def run(self, data, params, seed):
        return OFFSET


@hookimpl
def harness_methods():
    return [Shifted]
'''


def _install(site, entry: str, module: str, files: dict[str, str]) -> None:
    """An installed distribution in ``site`` whose entry point ``entry`` names ``module``,
    with ``files`` ({path relative to site: text}) as its code."""
    info = site / f"harness_{entry}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: harness-{entry}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[harness]\n{entry} = {module}\n")
    for relative, text in files.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_text(text)


def _fingerprint_of(entry: str, site, monkeypatch, prefix: str) -> str:
    """The fingerprint of plugin ``entry`` in a fresh registry (modules named ``prefix*``
    imported anew, as a new process would)."""
    import importlib
    from importlib.metadata import entry_points

    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    for name in [m for m in sys.modules if m.startswith(prefix)]:
        monkeypatch.delitem(sys.modules, name)
    others = {ep.name for ep in entry_points(group="harness")} - {entry}
    registry = build_registry(disabled=others, strict=True)
    assert registry.names("method", f"{entry}-task") == ["shifted"]
    return registry.fingerprint(entry)


def test_a_namespace_package_plugin_gets_a_fingerprint_that_an_edit_changes(tmp_path, monkeypatch):
    """A PEP 420 plugin (``nsplug/`` without ``__init__.py``, hooks in ``nsplug/plugin.py``,
    code in ``nsplug/helpers.py``). Before: fingerprint 'unknown', so editing it reran
    nothing."""
    from harness.plugins.fingerprint import UNFINGERPRINTED

    site = tmp_path / "site"
    code = PLUGIN_CODE.format(helpers="nsplug.helpers", task="nsplug-task")
    files = {"nsplug/plugin.py": code, "nsplug/helpers.py": "OFFSET = 0.0\n"}
    _install(site, "nsplug", "nsplug.plugin", files)
    first = _fingerprint_of("nsplug", site, monkeypatch, "nsplug")
    assert first != UNFINGERPRINTED
    (site / "nsplug" / "helpers.py").write_text("OFFSET = 1000.0\n")
    assert _fingerprint_of("nsplug", site, monkeypatch, "nsplug") != first


def test_a_package_inside_a_namespace_package_is_fingerprinted_alone(tmp_path, monkeypatch):
    """``acme/`` (a namespace shared with other distributions) holding the plugin's regular
    package ``acme/harness_sub``: its edits count, a sibling distribution's do not."""
    site = tmp_path / "site"
    code = PLUGIN_CODE.format(helpers="acmens.harness_sub.helpers", task="acmesub-task")
    files = {
        "acmens/harness_sub/__init__.py": code,
        "acmens/harness_sub/helpers.py": "OFFSET = 0.0\n",
        "acmens/other_dist/__init__.py": "# another distribution's package\n",
    }
    _install(site, "acmesub", "acmens.harness_sub", files)
    first = _fingerprint_of("acmesub", site, monkeypatch, "acmens")
    (site / "acmens" / "other_dist" / "__init__.py").write_text("# edited\n")
    assert _fingerprint_of("acmesub", site, monkeypatch, "acmens") == first
    (site / "acmens" / "harness_sub" / "helpers.py").write_text("OFFSET = 1.0\n")
    assert _fingerprint_of("acmesub", site, monkeypatch, "acmens") != first


def test_a_zipped_and_a_sourceless_plugin_are_fingerprinted(tmp_path, monkeypatch):
    """A plugin imported from a zip archive on sys.path, and one installed as ``.pyc``
    files only. Before: 'unknown' for the zip; for the ``.pyc`` the digest of no file at
    all, the same whatever the code (an edit reran nothing)."""
    import py_compile
    import zipfile

    from harness.plugins.fingerprint import UNFINGERPRINTED

    site = tmp_path / "site"
    _install(site, "zipplug", "zipplug", {})
    _install(site, "pycplug", "pycplug", {})
    code = PLUGIN_CODE.format(helpers="zipplug.helpers", task="zipplug-task")

    def zipped(offset: str) -> str:
        archive = tmp_path / f"code-{offset}.zip"
        with zipfile.ZipFile(archive, "w") as opened:
            opened.writestr("zipplug/__init__.py", code)
            opened.writestr("zipplug/helpers.py", f"OFFSET = {offset}\n")
        monkeypatch.syspath_prepend(str(archive))
        return _fingerprint_of("zipplug", site, monkeypatch, "zipplug")

    first = zipped("0.0")
    assert first != UNFINGERPRINTED and zipped("1.0") != first

    def compiled(offset: str) -> str:
        source = tmp_path / "pycplug.py"
        text = PLUGIN_CODE.format(helpers="math", task="pycplug-task")
        source.write_text(text.replace("from math import OFFSET", f"OFFSET = {offset}"))
        py_compile.compile(str(source), cfile=str(site / "pycplug.pyc"), doraise=True)
        return _fingerprint_of("pycplug", site, monkeypatch, "pycplug")

    first = compiled("0.0")
    assert first != UNFINGERPRINTED and compiled("1.0") != first


def test_a_plugin_without_locatable_code_is_unfingerprinted_and_its_cells_rerun(write_suite, store):
    """A plugin object defined in ``__main__`` has no code to hash: its cells are marked
    (``Cell.fingerprinted`` False) and rerun, not resumed on params alone (before: resumed,
    so an edit to such a plugin reran nothing)."""
    from harness.plugins.fingerprint import UNFINGERPRINTED

    class Elsewhere(toy_plugin.Mean):
        """The toy's mean under another name, from a plugin defined in ``__main__``."""

        name = "elsewhere"

    def harness_methods(self):
        return [Elsewhere]

    hooks = {"__module__": "__main__", "harness_methods": harness.hookimpl(harness_methods)}
    main = type("Main", (), hooks)()
    registry = build_registry({"main-toy": main, "toy": toy_plugin}, entry_points=False)
    assert registry.fingerprint("main-toy") == UNFINGERPRINTED
    run = "  - {task: toy, datasets: [noise], methods: [elsewhere, mean], metrics: [abs-error]}\n"
    cells = load_suite(write_suite("name: s\nruns:\n" + run), registry).cells
    assert {c.method: c.fingerprinted for c in cells} == {"elsewhere": False, "mean": True}
    from harness.runs.runner import planned_states

    suite = load_suite(write_suite("name: s\nruns:\n" + run), registry)
    assert run_suite(suite, registry, Tracker(store)).ran == 2
    states = planned_states(suite, Tracker(store))
    assert {c.method: states[c.cell_hash] for c in suite.cells} == {
        "elsewhere": "plugin code has no fingerprint",
        "mean": "done",
    }
    assert run_suite(suite, registry, Tracker(store)).ran == 1  # rerun, not resumed


def test_editing_a_namespace_package_plugin_reruns_its_cells(tmp_path, monkeypatch, store):
    """End to end: cells of a PEP 420 plugin's method run, its helper module is edited, and
    the next run names the plugin's code as the reason to rerun them (before: 'unknown'
    both times, the old numbers kept)."""
    import importlib
    from importlib.metadata import entry_points

    from harness.runs.runner import planned_states
    from harness.suites.loading import load_suite

    site = tmp_path / "site"
    code = PLUGIN_CODE.format(helpers="nsrun.helpers", task="toy")
    _install(site, "nsrun", "nsrun.plugin", {"nsrun/plugin.py": code, "nsrun/helpers.py": ""})
    (site / "nsrun" / "helpers.py").write_text("OFFSET = 0.0\n")
    monkeypatch.syspath_prepend(str(site))
    others = {ep.name for ep in entry_points(group="harness")} - {"nsrun"}
    run = "  - {task: toy, datasets: [noise], methods: [shifted, mean], metrics: [abs-error]}\n"
    path = tmp_path / "ns.yaml"
    path.write_text("name: ns\nruns:\n" + run)

    def fresh_suite():  # a new registry with the plugin imported anew, as a new process
        importlib.invalidate_caches()
        for name in [m for m in sys.modules if m.startswith("nsrun")]:
            monkeypatch.delitem(sys.modules, name)
        registry = build_registry({"toy": toy_plugin}, disabled=others, strict=True)
        return load_suite(path, registry), registry

    suite, registry = fresh_suite()
    assert run_suite(suite, registry, Tracker(store)).ran == 2
    (site / "nsrun" / "helpers.py").write_text("OFFSET = 1000.0\n")
    suite, _ = fresh_suite()
    states = planned_states(suite, Tracker(store))
    assert {c.method: states[c.cell_hash] for c in suite.cells} == {
        "shifted": "code of plugin nsrun changed",
        "mean": "done",
    }


# -- each plugin's description cached by its code (harness.plugins.catalog) ------------------


def _fresh_registry(site, monkeypatch, prefix: str, entries: set[str]):
    """A registry built as a new process would: modules named ``prefix*`` forgotten, every
    installed plugin but ``entries`` blocked."""
    import importlib
    from importlib.metadata import entry_points

    importlib.invalidate_caches()
    for name in [m for m in sys.modules if m.startswith(prefix)]:
        monkeypatch.delitem(sys.modules, name)
    others = {ep.name for ep in entry_points(group="harness")} - entries
    return build_registry(disabled=others, strict=True)


@pytest.fixture
def cached_site(tmp_path, monkeypatch):
    """A site with plugin ``cachy`` (method ``shifted`` of task ``cachy-task``) on sys.path,
    and a cache folder of its own."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    site = tmp_path / "site"
    code = PLUGIN_CODE.format(helpers="cachy_helpers", task="cachy-task")
    _install(
        site, "cachy", "cachy", {"cachy/__init__.py": code, "cachy_helpers.py": "OFFSET = 0\n"}
    )
    monkeypatch.syspath_prepend(str(site))
    return site


def test_a_cached_plugin_is_described_without_being_imported(cached_site, monkeypatch):
    """The second registry reads the plugin's description: its names and params are known
    and its fingerprint is the same, yet its module is imported only when its class is used.
    Fails with the cache unused (the module imported while the registry is built)."""

    first = _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
    assert "cachy" in sys.modules
    second = _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
    assert "cachy" not in sys.modules
    assert second.names("method", "cachy-task") == ["shifted"]
    assert second.get("method", "cachy-task", "shifted").part.summary.startswith("Returns OFFSET")
    assert second.fingerprint("cachy") == first.fingerprint("cachy")
    assert "cachy" not in sys.modules
    assert second.get("method", "cachy-task", "shifted").cls.__module__ == "cachy"
    assert "cachy" in sys.modules


def test_an_edit_to_a_plugin_is_seen_at_once_even_with_the_same_size_and_time(
    cached_site, monkeypatch
):
    """A method renamed to a name of the same length, the file's modification time then set
    back to what it was (a clock too coarse to tell the edit apart): its stats are equal, but
    the entry was taken too soon after the last edit to trust them, so the files are hashed
    and the new name is seen. Fails with ``RACY_NS = 0`` (the old name is listed)."""

    _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
    init = cached_site / "cachy" / "__init__.py"
    before = init.stat()
    init.write_text(init.read_text().replace('name = "shifted"', 'name = "shafted"'))
    os.utime(init, ns=(before.st_atime_ns, before.st_mtime_ns))
    registry = _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
    assert registry.names("method", "cachy-task") == ["shafted"]
    init.write_text(init.read_text().replace("return OFFSET", "return OFFSET + 1  # edited"))
    edited = _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
    assert edited.fingerprint("cachy") != registry.fingerprint("cachy")


def test_a_claim_edit_changes_the_description_but_not_the_fingerprint(cached_site, monkeypatch):
    """``claims.py`` is left out of the code fingerprint (no cell reruns when a claim is
    edited), yet it describes the plugin: an edit to it alone is seen by the next registry.
    Fails with the description keyed on the code fingerprint alone (the raising hook is not
    called: the cached description is used)."""
    init = cached_site / "cachy" / "__init__.py"
    init.write_text(init.read_text() + "\nfrom cachy.claims import harness_claims  # noqa\n")
    claims = cached_site / "cachy" / "claims.py"
    claims.write_text("from harness import hookimpl\n\n\n@hookimpl\ndef harness_claims():\n")
    claims.write_text(claims.read_text() + "    return []\n")
    _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
    first = _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})  # from the cache
    claims.write_text(claims.read_text().replace("return []", "raise RuntimeError('edited')"))
    with pytest.raises(PluginError, match=r"harness_claims\(\) failed: RuntimeError: edited"):
        _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
    claims.write_text(claims.read_text().replace("raise RuntimeError('edited')", "return ()"))
    again = _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
    assert again.fingerprint("cachy") == first.fingerprint("cachy")


def test_a_corrupt_cache_is_rebuilt_never_trusted(cached_site, monkeypatch, tmp_path):
    """Garbage, a truncated file, valid JSON of another shape, and an entry whose
    description names another method: each is read as no entry, the plugin described afresh
    and the file rewritten. Fails when an entry is trusted on its key and stats alone
    (the forged method is listed)."""

    _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
    (entry,) = (tmp_path / "cache").glob("cachy-*.json")
    good = json.loads(entry.read_text())
    forged = json.loads(entry.read_text())
    forged["description"]["parts"][0]["name"] = "forged"
    forged["hashes"] = ["0" * 16, "0" * 16]
    forged["taken"] = 0  # files newer than the entry: hashed, and the hashes differ
    for garbage in ("\x00garbage{", entry.read_text()[:50], '{"format": 1}', json.dumps(forged)):
        entry.write_text(garbage)
        registry = _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
        assert registry.names("method", "cachy-task") == ["shifted"]
        assert json.loads(entry.read_text())["description"] == good["description"]


def test_a_plugin_that_no_longer_imports_as_described_is_an_error_and_forgotten(
    cached_site, monkeypatch, tmp_path
):
    """A module outside the plugin's package (here its helper) breaks after the plugin was
    described: the plugin's own files are unchanged, so its cached description is used, and
    the class, when used, raises a PluginError naming the plugin; the entry is removed, so
    the next registry describes it afresh and leaves it out as broken."""
    _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
    (cached_site / "cachy_helpers.py").write_text("raise ImportError('helper gone')\n")
    registry = _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})
    assert registry.names("method", "cachy-task") == ["shifted"]
    with pytest.raises(PluginError, match=r"Plugin 'cachy' changed.*helper gone"):
        registry.get("method", "cachy-task", "shifted").cls  # noqa: B018
    assert list((tmp_path / "cache").glob("cachy-*.json")) == []
    with pytest.raises(PluginError, match=r"'cachy'.*failed to import.*helper gone"):
        _fresh_registry(cached_site, monkeypatch, "cachy", {"cachy"})


def test_a_scoped_registry_holds_the_tasks_looked_up_and_their_families():
    """Nothing in scope at first; looking up task ``toy`` brings in the toy plugin, and the
    plugin whose claim (of task ``other-task``) is in the toy claims' Holm family (the same
    package) comes in with it: Holm counts every member of a family. A third plugin enters only when
    its task is looked up (here by key, as ``--add-method`` does). Fails with the family
    closure removed from ``Registry._enter`` (the sibling's plugin stays out)."""

    class Noise(toy_plugin.Noise):
        """The toy's data, for another task."""

        task = "other-task"

    class Mean(toy_plugin.Mean):
        """The toy's mean, for another task."""

        task = "other-task"

    class Sibling(toy_plugin.ShiftCostsAccuracy):
        """The shift claim on another task, from the toy's package: in its claims' family
        (a second entry point of the same package)."""

        name = "sibling-claim"
        task = "other-task"

    Sibling.__module__ = toy_plugin.__name__
    assert Sibling.family_name() == toy_plugin.ShiftCostsAccuracy.family_name()

    class Other:
        @harness.hookimpl
        def harness_datasets(self):
            return [Noise]

        @harness.hookimpl
        def harness_methods(self):
            return [Mean]

        @harness.hookimpl
        def harness_claims(self):
            return [Sibling]

    class Lonely(toy_plugin.Mean):
        """A method of a third task."""

        name = "lonely"
        task = "lonely-task"

    class Lone:
        @harness.hookimpl
        def harness_methods(self):
            return [Lonely]

    plugins = {"toy": toy_plugin, "other": Other(), "lone": Lone()}
    built = build_registry(plugins, entry_points=False, strict=True)
    scoped = built.scoped()

    def held() -> set[str]:
        return {e.plugin for by_key in scoped.entries.values() for e in by_key.values()}

    assert held() == set() and "lonely-task" in scoped.tasks()  # every task is known
    assert "mean" in scoped.names("method", "toy")
    assert held() == {"toy", "other"}
    assert ("lonely-task", "lonely") in scoped.entries["method"]
    assert held() == {"toy", "other", "lone"}
    assert {e.plugin for by_key in built.entries.values() for e in by_key.values()} == set(plugins)


class GeneratorHook:
    @hookimpl
    def harness_methods(self):
        yield from ()
        raise RuntimeError("weights not found")


def test_a_generator_hook_that_raises_leaves_its_plugin_out_and_the_others_work():
    """Before: the RuntimeError escaped build_registry, so every command failed."""
    registry = build_registry({"toy": toy_plugin, "gen": GeneratorHook()}, entry_points=False)
    assert "gen" not in registry.plugins and "mean" in registry.names("method", "toy")
    assert "harness_methods() failed: RuntimeError: weights not found" in registry.broken["gen"]
    with pytest.raises(PluginError, match="weights not found"):
        build_registry({"toy": toy_plugin, "gen": GeneratorHook()}, entry_points=False, strict=True)


def test_a_component_name_ending_in_a_newline_is_not_kebab_case():
    class Shadow:
        @harness.hookimpl
        def harness_methods(self):
            class Mean(toy_plugin.Mean):
                name = "mean-x\n"

            return [Mean]

    built = build_registry({"toy": toy_plugin, "shadow": Shadow()}, entry_points=False)
    assert "lower-case words joined by '-'" in built.broken["shadow"]
    assert "mean-x\\n" in built.broken["shadow"]


class RaisingHook:
    @hookimpl
    def harness_methods(self):
        raise RuntimeError("database of weights not found")


class NonIterableHook:
    @hookimpl
    def harness_metrics(self):
        return 42


class BareClassHook:
    @hookimpl
    def harness_datasets(self):
        return dict  # the class itself, not a list of classes (iterable only as a type)


@pytest.mark.parametrize(
    ("plugin", "words"),
    [
        (RaisingHook(), ["'bad'", "harness_methods()", "RuntimeError", "database of weights"]),
        (NonIterableHook(), ["'bad'", "harness_metrics()", "returned 42", "list of classes"]),
        (BareClassHook(), ["harness_datasets()", "list of classes", "e.g. [dict]"]),
    ],
)
def test_a_broken_hook_leaves_its_plugin_out_and_the_others_work(plugin, words):
    registry = build_registry({"toy": toy_plugin, "bad": plugin}, entry_points=False)
    assert "bad" not in registry.plugins and "toy" in registry.plugins
    for word in [*words, "HARNESS_DISABLE_PLUGINS=bad"]:
        assert word in registry.broken["bad"]
    assert "mean" in registry.names("method", "toy")
    with pytest.raises(PluginError, match="harness_"):
        build_registry({"toy": toy_plugin, "bad": plugin}, entry_points=False, strict=True)
