"""The plugin manager: hooks called, components checked and indexed, names resolved.

:func:`build_registry` takes the plugins :mod:`harness.plugins.discovery` imports (or the explicit
plugin objects a test passes), calls the hooks of :mod:`harness.plugins.hookspecs`, checks what they
return and indexes the components by ``(kind, task, name)``; a faulty plugin is left out
whole. :meth:`Registry.fingerprint` is :mod:`harness.plugins.fingerprint`'s digest of a
plugin's code.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pluggy

from harness.claims import Claim
from harness.components import (
    RESERVED_METRIC_NAMES,
    Component,
    Dataset,
    Method,
    Metric,
    Report,
    no_unannotated_attributes,
    params_fields,
)
from harness.errors import PluginError, SuiteError
from harness.plugins import hookspecs
from harness.plugins.discovery import GROUP, Loaded, cut_text, load_entry_points
from harness.plugins.fingerprint import code_fingerprint, plugin_source
from harness.redaction import shown

DISABLE_ENV = "HARNESS_DISABLE_PLUGINS"
KINDS: dict[str, type[Component]] = {
    "dataset": Dataset,
    "method": Method,
    "metric": Metric,
    "report": Report,
    "claim": Claim,
}
_HOOK_OF_KIND = {kind: f"harness_{kind}s" for kind in KINDS}
_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")  # whole names only: fullmatch (no "x\n")


@dataclass(frozen=True)
class Entry:
    """One registered component: its class and the plugin (name, version) providing it."""

    cls: type[Component]
    plugin: str
    version: str


@dataclass
class Registry:
    """Components of every loaded plugin, indexed by kind, task and name.

    Attributes
    ----------
    plugins : dict[str, str]
        ``{plugin name: version}`` of every loaded plugin.
    entries : dict[str, dict[tuple[str, str], Entry]]
        ``{kind: {(task, name): Entry}}`` for kind in dataset, method, metric, report.
    broken : dict[str, str]
        ``{plugin name: its fault}`` of plugins left out (see :func:`build_registry`).
    sources : dict[str, Path]
        ``{plugin name: its package folder or module file}``: what :meth:`fingerprint`
        hashes.
    companions : dict[str, list[str]]
        ``{plugin name: the top-level names its distribution installs}`` (its
        ``top_level.txt``), for plugins installed with one: :meth:`fingerprint` hashes the
        other packages among them too.
    """

    plugins: dict[str, str] = field(default_factory=dict)
    entries: dict[str, dict[tuple[str, str], Entry]] = field(
        default_factory=lambda: {kind: {} for kind in KINDS}
    )
    sources: dict[str, Path] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)
    companions: dict[str, list[str]] = field(default_factory=dict)
    _fingerprints: dict[str, str] = field(default_factory=dict, repr=False)

    def data_type(self, task: str) -> type | None:
        """The task's data type: the return annotation of its datasets' ``load`` (the
        most common one, should they differ); ``None`` when none is annotated."""
        return _common(_hint(entry.cls, "load", "return") for entry in self._of("dataset", task))

    def output_type(self, task: str) -> type | None:
        """The task's output type: the annotation of the ``output`` argument of its
        metrics' ``compute`` (the most common one); ``None`` when none is annotated."""
        return _common(_hint(entry.cls, "compute", "output") for entry in self._of("metric", task))

    def _of(self, kind: str, task: str) -> list[Entry]:
        return [entry for (t, _), entry in self.entries[kind].items() if t == task]

    def fingerprint(self, plugin: str) -> str:
        """A digest of the installed code of ``plugin`` (part of every cell's identity).

        SHA-256 over the relative path and bytes of every file of the plugin's code (its
        top-level package, module file, or its folder in a namespace package; see
        :func:`harness.plugins.fingerprint.plugin_source`) and of the other packages its
        distribution installs (``__pycache__``, editor files, claims and reports left out);
        computed once per process. An edit to any source or package data file changes it,
        so the cells that use the plugin run again on resume.

        :returns: 16 hex digits, or :data:`harness.plugins.fingerprint.UNFINGERPRINTED` when the
            code cannot be located or read (a plugin object defined in ``__main__``, say):
            such cells are rerun, never resumed
            (:attr:`harness.suites.identity.Cell.fingerprinted`).
        """
        if plugin not in self._fingerprints:
            self._fingerprints[plugin] = code_fingerprint(
                self.sources.get(plugin), self.companions.get(plugin, ())
            )
        return self._fingerprints[plugin]

    def classes(self, kind: str, task: str) -> list[type[Component]]:
        """The ``kind`` component classes of ``task``, sorted by name."""
        return [self.entries[kind][(task, name)].cls for name in self.names(kind, task)]

    def tasks(self) -> list[str]:
        """Every task some component belongs to, sorted."""
        return sorted({task for by_key in self.entries.values() for task, _ in by_key})

    def names(self, kind: str, task: str) -> list[str]:
        """Sorted names of the ``kind`` components of ``task``."""
        return sorted(name for t, name in self.entries[kind] if t == task)

    def get(self, kind: str, task: str, name: str, where: str = "") -> Entry:
        """The entry for ``(kind, task, name)``.

        :raises SuiteError: naming the task, the place ``where`` and the known names, and
            each plugin left out as broken with its fault (the component may be one of
            theirs: a name clash, a failed import).
        """
        if task not in self.tasks():
            blocked = disabled_plugins()
            hint = (
                f" (HARNESS_DISABLE_PLUGINS blocks: {', '.join(sorted(blocked))})"
                if blocked
                else ""
            )
            if self.broken:
                hint += f" (left out as broken: {', '.join(sorted(self.broken))})"
            raise SuiteError(
                f"Unknown task {shown(task)}{_at(where)}. Known:"
                f" {', '.join(self.tasks()) or '(none)'}."
                f" Is its plugin installed{hint}? See 'harness list'."
            )
        try:
            return self.entries[kind][(task, name)]
        except KeyError:
            known = ", ".join(self.names(kind, task)) or "(none)"
            left_out = "".join(f" Left out: {fault}" for _, fault in sorted(self.broken.items()))
            empty = self.empty_plugins()
            if empty:
                left_out += (
                    f" Installed but contributing nothing: {', '.join(empty)} (are its hook"
                    " functions decorated with @hookimpl?)"
                )
            raise SuiteError(
                f"Unknown {kind} {shown(name)} for task '{task}'{_at(where)}. Known: {known}."
                f" See 'harness list'.{left_out}"
            ) from None

    def empty_plugins(self) -> list[str]:
        """Sorted names of the loaded plugins that contribute no component (a plugin whose
        hook functions lack ``@hookimpl``, say)."""
        used = {entry.plugin for by_key in self.entries.values() for entry in by_key.values()}
        return sorted(set(self.plugins) - used)


def _hint(cls: type, method: str, name: str) -> type | None:
    """The resolved annotation ``name`` of ``cls.<method>`` when it is a class, else None
    (the class namespace resolves names such as a nested ``Params``)."""
    import typing

    try:
        hint = typing.get_type_hints(getattr(cls, method), localns=dict(vars(cls))).get(name)
    except Exception:  # an unresolvable annotation is reported by check-plugin, not here
        return None
    return hint if isinstance(hint, type) else None


def _common(hints: Iterable[type | None]) -> type | None:
    from collections import Counter

    counts = Counter(h for h in hints if h is not None and h is not object)
    return counts.most_common(1)[0][0] if counts else None


def _at(where: str) -> str:
    return f" ({where})" if where else ""


def disabled_plugins() -> set[str]:
    """Plugin names listed in ``HARNESS_DISABLE_PLUGINS`` (comma-separated)."""
    return {p.strip() for p in os.environ.get(DISABLE_ENV, "").split(",") if p.strip()}


def build_registry(
    plugins: Mapping[str, object] | None = None,
    *,
    entry_points: bool = True,
    disabled: Iterable[str] | None = None,
    strict: bool = False,
) -> Registry:
    """Load plugins, call their hooks and index the components they return.

    A plugin that fails (it fails to import, exits on import with ``sys.exit`` or
    ``os._exit`` or raises ``KeyboardInterrupt`` there (a real Ctrl-C still stops; see
    :mod:`harness.plugins.discovery`), implements an unknown hook or a hook with a wrong
    signature, a
    hook raises (a generator hook: while it is iterated) or returns something that is not an
    iterable of well-formed component classes, or a ``(task, name)`` clashes with another
    plugin's) is left out whole, and the fault, naming the plugin, the hook and the way
    out (``HARNESS_DISABLE_PLUGINS=<name>``), is kept in ``Registry.broken``: the other
    plugins still work.

    :param plugins: extra plugin objects ``{name: module or object with hookimpls}``,
        registered as given (tests use this instead of installing packages).
    :param entry_points: also load every installed ``harness`` entry point.
    :param disabled: plugin names to block; defaults to ``HARNESS_DISABLE_PLUGINS``.
    :param strict: raise the first fault instead (``harness check-plugin``, tests).
    :returns: the :class:`Registry`.
    :raises PluginError: with ``strict``, the first plugin fault.
    """
    blocked = disabled_plugins() if disabled is None else set(disabled)
    broken: dict[str, str] = {}

    def fault(name: str, message: str) -> None:
        text = f"{message} Fix the plugin, or leave it out with {DISABLE_ENV}={name}."
        if strict:
            raise PluginError(text)
        broken.setdefault(name, text)

    candidates = load_entry_points(blocked, fault) if entry_points else []
    for name, plugin in (plugins or {}).items():
        if name not in blocked:
            version = str(getattr(plugin, "__version__", "0"))
            candidates.append(Loaded(name, plugin, version, [], None))
    pm, versions = _register(candidates, blocked, fault)
    registry = Registry(plugins=versions)
    for loaded in candidates:
        registry.companions[loaded.name] = loaded.companions
        source = plugin_source(loaded.plugin, loaded.module)
        if source is not None:
            registry.sources[loaded.name] = source
    returned = _call_hooks(pm, versions, fault)
    for name, components in returned.items():
        if name not in broken:
            _index(registry, name, components, fault)
    _check_claims(registry, fault)
    for name in broken:
        registry.plugins.pop(name, None)
    registry.broken = broken
    return registry


def _register(
    candidates: list[Loaded], blocked: set[str], fault: Callable[[str, str], None]
) -> tuple[pluggy.PluginManager, dict[str, str]]:
    """A plugin manager with the candidates registered: ``(manager, {name: version})`` of
    those whose hooks are valid (the others go to ``fault``)."""
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    for name in blocked:
        pm.set_blocked(name)
    versions: dict[str, str] = {}
    for loaded in candidates:
        try:
            pm.register(loaded.plugin, name=loaded.name)
        except (pluggy.PluginValidationError, ValueError) as err:
            fault(loaded.name, f"Plugin '{loaded.name}' has an invalid hook implementation: {err}.")
            continue
        versions[loaded.name] = loaded.version
    while True:
        try:
            pm.check_pending()
            return pm, versions
        except pluggy.PluginValidationError as err:
            name = pm.get_name(err.plugin)
            hooks = ", ".join(_HOOK_OF_KIND.values())
            fault(
                name,
                f"Plugin '{name}' implements a hook harness does not define: {err}."
                f" Hooks: {hooks}.",
            )
            pm.unregister(err.plugin)
            versions.pop(name, None)


def _call_hooks(
    pm: pluggy.PluginManager, versions: dict[str, str], fault: Callable[[str, str], None]
) -> dict[str, list[tuple[str, object]]]:
    """``{plugin: [(kind, class), ...]}`` from every hook of every registered plugin; a hook
    that raises (a generator: while iterated) or returns no iterable of classes goes to
    ``fault``."""
    returned: dict[str, list[tuple[str, object]]] = {name: [] for name in versions}
    for kind, hook_name in _HOOK_OF_KIND.items():
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            plugin = impl.plugin_name
            try:
                value = impl.function()
                if isinstance(value, (type, str)) or not hasattr(value or (), "__iter__"):
                    fault(
                        plugin,
                        f"Plugin '{plugin}': its hook {hook_name}() returned"
                        f" {shown(value, 200)}; it must return a list of classes, e.g."
                        f" [{getattr(value, '__name__', 'MyComponent')}].",
                    )
                    continue
                classes = list(value or ())  # a generator runs (and raises) here
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as err:  # a raising hook
                fault(
                    plugin,
                    f"Plugin '{plugin}': its hook {hook_name}() failed:"
                    f" {type(err).__name__}: {cut_text(str(err))}.",
                )
                continue
            returned[plugin] += [(kind, cls) for cls in classes]
    return returned


def _index(
    registry: Registry,
    plugin: str,
    components: list[tuple[str, object]],
    fault: Callable[[str, str], None],
) -> None:
    """Add one plugin's components to ``registry``; on a malformed one or a clash, none of
    them (the whole plugin goes to ``fault``)."""
    try:
        for kind, cls in components:
            _add(registry, kind, cls, plugin, registry.plugins[plugin])
    except PluginError as err:
        _leave_out(registry, plugin)
        fault(plugin, str(err).split(" Uninstall one or set")[0])


def _leave_out(registry: Registry, plugin: str) -> None:
    """Remove every component of ``plugin`` from ``registry`` (a faulty plugin goes whole)."""
    for by_key in registry.entries.values():
        for key in [k for k, e in by_key.items() if e.plugin == plugin]:
            del by_key[key]


def _check_claims(registry: Registry, fault: Callable[[str, str], None]) -> None:
    """Leave out each plugin with a claim naming a dataset or method its task lacks (once
    every plugin is indexed: a claim may name another plugin's method), until none is left
    that does (a plugin left out may take a method another plugin's claim names)."""
    while True:
        faulty: dict[str, str] = {}
        for entry in registry.entries["claim"].values():
            problems = unknown_references(entry.cls, registry)
            if problems and entry.plugin not in faulty:
                faulty[entry.plugin] = (
                    f"Plugin '{entry.plugin}': claim '{entry.cls.name}': {'; '.join(problems)}."
                )
        if not faulty:
            return
        for plugin, message in faulty.items():
            _leave_out(registry, plugin)
            fault(plugin, message)


def unknown_references(claim: type[Claim], registry: Registry) -> list[str]:
    """Each dataset or method that ``claim`` names and its task lacks, by field: its cells
    (``requires[i].dataset``, ``requires[i].methods``), ``subject``, ``rivals[i].method``
    and every :class:`~harness.claims.Select` of its ``kind`` and ``control``
    (``kind.baseline``, ``control.source``). Empty when every name exists."""
    from harness.claims import Select

    tasks = claim.tasks()
    known = {
        kind: sorted({name for task in tasks for name in registry.names(kind, task)})
        for kind in ("dataset", "method")
    }
    named: list[tuple[str, str, str | None]] = []  # (field, kind, name)
    for i, need in enumerate(getattr(claim, "requires", ()) or ()):
        named.append((f"requires[{i}].dataset", "dataset", need.dataset))
        named += [(f"requires[{i}].methods", "method", m) for m in need.methods]
    named.append(("subject", "method", claim.subject_method()))
    named += [(f"rivals[{i}].method", "method", r.method) for i, r in enumerate(claim.rivals)]
    for part in ("kind", "control"):
        value = getattr(claim, part, None)
        if not dataclasses.is_dataclass(value) or isinstance(value, type):
            continue
        for f in dataclasses.fields(value):
            select = getattr(value, f.name)
            if isinstance(select, Select):
                named.append((f"{part}.{f.name}", "method", select.method))
                named.append((f"{part}.{f.name}.dataset", "dataset", select.dataset))
    where = "/".join(tasks)
    return [
        f"{field_name} names {kind} {shown(name)}, which task '{where}' does not have"
        f" (known: {', '.join(known[kind]) or '(none)'})"
        for field_name, kind, name in named
        if name is not None and name not in known[kind]
    ]


def _add(registry: Registry, kind: str, cls: object, plugin: str, version: str) -> None:
    base = KINDS[kind]
    hook = _HOOK_OF_KIND[kind]
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise PluginError(
            f"Plugin '{plugin}': {hook}() returned {cls!r}; expected a subclass of"
            f" harness.{base.__name__} (the class, not an instance)."
        )
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PluginError(
            f"Plugin '{plugin}': {cls.__name__}.name must be lower-case words joined by '-',"
            f" got {name!r}."
        )
    if not getattr(cls, "task", None):
        raise PluginError(f"Plugin '{plugin}': {kind} '{name}' does not declare a task.")
    if kind == "metric" and name in RESERVED_METRIC_NAMES:
        raise PluginError(
            f"Plugin '{plugin}': metric '{name}' has the name of a column every result table"
            f" holds ({', '.join(sorted(RESERVED_METRIC_NAMES))}); rename it."
        )
    if kind == "claim":
        problems = cls.declaration_problems()
        if problems:
            raise PluginError(f"Plugin '{plugin}': claim '{name}': {'; '.join(problems)}.")
    try:
        params_fields(cls.Params)
        no_unannotated_attributes(cls.Params)
    except TypeError as err:
        raise PluginError(f"Plugin '{plugin}': {kind} '{name}': {err}.") from err
    for task in cls.tasks():
        key = (task, name)
        other = registry.entries[kind].get(key)
        if other is not None and (other.plugin != plugin or other.cls is not cls):
            raise PluginError(
                f"{kind.capitalize()} '{name}' (task '{task}') comes from both '{other.plugin}'"
                f" and '{plugin}': rename one of them. Uninstall one or set"
                f" {DISABLE_ENV}={plugin}."
            )
        registry.entries[kind][key] = Entry(cls, plugin, version)
