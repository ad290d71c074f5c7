"""The plugin manager: hooks called, components checked and indexed, names resolved.

:func:`build_registry` takes the installed plugins (:mod:`harness.plugins.discovery`) and the
explicit plugin objects a test passes, calls the hooks of :mod:`harness.plugins.hookspecs`, checks
what they return and indexes the components by ``(kind, task, name)``; a faulty plugin is
left out whole. An installed plugin whose description is cached (:mod:`harness.plugins.catalog`)
is not imported until a class of its is used; :meth:`Registry.scoped` holds only the
plugins of the tasks a command looks up. :meth:`Registry.fingerprint` is
:mod:`harness.plugins.fingerprint`'s digest of a plugin's code.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from harness.plugins.catalog import (
    Description,
    Part,
    Sources,
    claim_references,
    core_digest,
    describe_class,
)
from harness.plugins.discovery import GROUP, Installed, Loaded, cut_text, installed, load
from harness.plugins.fingerprint import code_fingerprint, find_source, plugin_source
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


class Entry:
    """One registered component: its class, the plugin (name, version) providing it, and
    its description (``part``: name, tasks, summary, params). ``cls`` imports the plugin
    the first time it is read, where the registry was built from its cached description."""

    def __init__(
        self,
        cls: type[Component] | None,
        plugin: str,
        version: str,
        part: Part | None = None,
        loader: _Lazy | None = None,
    ) -> None:
        self._cls, self.plugin, self.version, self.part, self._loader = (
            cls,
            plugin,
            version,
            part,
            loader,
        )

    @property
    def loaded(self) -> bool:
        """Whether the class is imported already (reading :attr:`cls` costs nothing)."""
        return self._cls is not None

    @property
    def cls(self) -> type[Component]:
        if self._cls is None:
            assert self._loader is not None and self.part is not None
            self._cls = self._loader.load(self.part)
        return self._cls

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (to a dask worker) as its class where it is imported, else as its
        description and loader."""
        if self._cls is not None:
            return (Entry, (self._cls, self.plugin, self.version))
        return (Entry, (None, self.plugin, self.version, self.part, self._loader))

    def __repr__(self) -> str:
        name = self.part.qualname if self.part else getattr(self._cls, "__qualname__", "?")
        return f"Entry({name}, plugin={self.plugin!r}, version={self.version!r})"


class _Lazy:
    """An installed plugin described from the cache and not imported yet: imported, its
    hooks called and its description checked again the first time one of its classes is
    used. Pickled as its entry point alone (a dask worker imports the plugin itself)."""

    def __init__(self, found: Installed, description: Description, key: Any, cache: Any) -> None:
        self.found, self.description, self.key, self.cache = found, description, key, cache
        self._classes: dict[Any, type[Component]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "found": self.found._replace(entry_point=None), "cache": None}

    def load(self, part: Part) -> type[Component]:
        if self._classes is None:
            self._classes = self._import()
        return self._classes[(part.kind, part.name, part.tasks)]

    def _import(self) -> dict[Any, type[Component]]:
        """Import the plugin and index its classes by ``(kind, name, tasks)``; raises
        :class:`PluginError` when it fails now or its components differ from the description
        the registry was built from (the cached entry is dropped, so the next command
        describes the plugin afresh)."""
        name = self.found.name
        faults: list[str] = []
        found = self.found
        if found.entry_point is None:
            from importlib.metadata import EntryPoint

            found = found._replace(entry_point=EntryPoint(name, found.value, GROUP))

        def note(_: str, message: str) -> None:
            faults.append(message)

        loaded = load(found, note)
        described = _describe(loaded, note, describe=False) if loaded else None
        same = described is not None and _shape(described[0]) == _shape(self.description)
        if not same:
            if self.cache is not None:
                self.cache.forget(self.key)
            why = faults[0] if faults else "its components differ from its cached description"
            raise PluginError(
                f"Plugin '{name}' changed since harness described it: {why} Run the command"
                f" again (its description is rebuilt), or leave it out with {DISABLE_ENV}={name}."
            )
        return described[1]


def _shape(description: Description) -> list[tuple[str, str, tuple[str, ...], str]]:
    return sorted((p.kind, p.name, p.tasks, p.qualname) for p in description.parts)


class _Index(dict):  # type: ignore[type-arg]
    """``{(task, name): Entry}`` of one kind in a scoped registry: a lookup of a task whose
    plugins are outside the scope brings them in first (see :meth:`Registry.scoped`)."""

    registry: Registry | None = None

    def _enter(self, key: Any) -> None:
        if self.registry is not None and isinstance(key, tuple) and key:
            self.registry._enter(key[0])

    def __contains__(self, key: object) -> bool:
        self._enter(key)
        return super().__contains__(key)

    def __getitem__(self, key: Any) -> Entry:
        self._enter(key)
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._enter(key)
        return super().get(key, default)


@dataclass
class Registry:
    """Components of every loaded plugin, indexed by kind, task and name.

    Attributes
    ----------
    plugins : dict[str, str]
        ``{plugin name: version}`` of every loaded plugin.
    entries : dict[str, dict[tuple[str, str], Entry]]
        ``{kind: {(task, name): Entry}}`` for kind in dataset, method, metric, report,
        claim: every plugin's, or in a :meth:`scoped` registry those of the plugins in
        scope (a lookup by key brings a task's plugins in).
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
    _every: dict[str, dict[tuple[str, str], Entry]] | None = field(default=None, repr=False)
    _scope: set[str] | None = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to a dask worker) with the plugins of its scope alone."""
        state = dict(self.__dict__)
        if self._every is not None and self._scope is not None:
            scope = self._scope
            state["_every"] = {
                kind: {k: e for k, e in by_key.items() if e.plugin in scope}
                for kind, by_key in self._every.items()
            }
        return state

    def scoped(self) -> Registry:
        """This registry holding no plugin in :attr:`entries` until a lookup by task
        (:meth:`get`, :meth:`names`, ``(task, name) in entries[kind]``) brings in the
        plugins with a component of that task, and with them every plugin holding a claim
        of the same Holm family: code that iterates over :attr:`entries` (the claims a
        suite touches, the reports of its tasks) sees only the tasks the command named, and
        imports no other plugin. Each call gives a new registry; ``self`` is unchanged."""
        every = self._every if self._every is not None else self.entries
        scoped = dataclasses.replace(
            self, entries={kind: _Index() for kind in KINDS}, _every=every, _scope=set()
        )
        for index in scoped.entries.values():
            index.registry = scoped  # type: ignore[attr-defined]
        return scoped

    def _enter(self, task: str) -> None:
        """Bring the plugins of ``task`` (and of their claims' families) into scope."""
        if self._every is None or self._scope is None:
            return
        owners = {
            e.plugin for by_key in self._every.values() for (t, _), e in by_key.items() if t == task
        }
        if owners <= self._scope:
            return
        scope = self._scope | owners
        while True:  # a family's claims come in together: Holm counts every member
            families = {
                e.part.claim.family
                for e in self._every["claim"].values()
                if e.plugin in scope and e.part is not None and e.part.claim is not None
            }
            more = {
                e.plugin
                for e in self._every["claim"].values()
                if e.part is not None
                and e.part.claim is not None
                and e.part.claim.family in families
            }
            if more <= scope:
                break
            scope |= more
        self._scope = scope
        for kind, index in self.entries.items():
            dict.clear(index)
            for key, entry in self._every[kind].items():
                if entry.plugin in scope:
                    dict.__setitem__(index, key, entry)

    def data_type(self, task: str) -> type | None:
        """The task's data type: the return annotation of its datasets' ``load`` (the
        most common one, should they differ); ``None`` when none is annotated."""
        return _common(_hint(entry.cls, "load", "return") for entry in self._of("dataset", task))

    def output_type(self, task: str) -> type | None:
        """The task's output type: the annotation of the ``output`` argument of its
        metrics' ``compute`` (the most common one); ``None`` when none is annotated."""
        return _common(_hint(entry.cls, "compute", "output") for entry in self._of("metric", task))

    def _of(self, kind: str, task: str) -> list[Entry]:
        self._enter(task)
        return [entry for (t, _), entry in self.entries[kind].items() if t == task]

    def fingerprint(self, plugin: str) -> str:
        """A digest of the installed code of ``plugin`` (part of every cell's identity).

        SHA-256 over the relative path and bytes of every file of the plugin's code (its
        top-level package, module file, or its folder in a namespace package; see
        :func:`harness.plugins.fingerprint.plugin_source`) and of the other packages its
        distribution installs (``__pycache__``, editor files, claims and reports left out);
        computed once per process, or read from the plugin's cached description where its
        files' stats are unchanged (:mod:`harness.plugins.catalog`). An edit to any source or
        package data file changes it, so the cells that use the plugin run again on resume.

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
        """Every task some component belongs to, sorted (in a :meth:`scoped` registry too,
        those outside its scope)."""
        every = self._every if self._every is not None else self.entries
        return sorted({task for by_key in every.values() for task, _ in by_key})

    def names(self, kind: str, task: str) -> list[str]:
        """Sorted names of the ``kind`` components of ``task``."""
        self._enter(task)
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
        self._enter(task)
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
        every = self._every if self._every is not None else self.entries
        used = {entry.plugin for by_key in every.values() for entry in by_key.values()}
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

    An installed plugin whose description is cached and fresh (:mod:`harness.plugins.catalog`) is
    indexed from it without being imported: its classes are imported when first used
    (:attr:`Entry.cls`). The others are imported and described, and their descriptions
    kept for the next command.

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

    registry = Registry()
    described = _installed(registry, blocked, fault) if entry_points else []
    for name, plugin in (plugins or {}).items():
        if name not in blocked:
            version = str(getattr(plugin, "__version__", "0"))
            registry.companions[name] = []
            source = plugin_source(plugin, None)
            if source is not None:
                registry.sources[name] = source
            made = _describe(Loaded(name, plugin, version, [], None), fault)
            if made is not None:
                described.append((name, version, *made))
    for name, version, description, classes in described:
        registry.plugins[name] = version
        _index(registry, name, version, description, classes, fault)
    _check_claims(registry, fault)
    for name in broken:
        registry.plugins.pop(name, None)
    registry.broken = broken
    return registry


def _installed(registry: Registry, blocked: set[str], fault: Callable[[str, str], None]) -> list:
    """``[(name, version, description, classes or loader)]`` of every installed plugin not
    ``blocked``: from its cached description where that is fresh (not imported: a
    :class:`_Lazy` loader), else imported and described, and the description kept."""
    cache, core = Sources(), None
    out: list = []
    for found in installed(blocked):
        source = find_source(found.module)
        registry.companions[found.name] = found.companions
        key = None
        if source is not None:
            registry.sources[found.name] = source
            core = core or core_digest(cache)
            key = {
                "plugin": found.name,
                "value": found.value,
                "version": found.version,
                "location": found.location,
                "source": str(source),
                "companions": found.companions,
                "core": core,
            }
            description, state = cache.lookup(key, source, found.companions)
            if description is not None:
                registry._fingerprints[found.name] = description.fingerprint
                lazy = _Lazy(found, description, key, cache)
                out.append((found.name, found.version, description, lazy))
                continue
            cache.hashes(state, source, found.companions)  # before the import: an edit while
            # it imports leaves a digest older than the description, so it is described again
        loaded = load(found, fault)
        made = _describe(loaded, fault) if loaded is not None else None
        if made is None:
            continue
        actual = plugin_source(loaded.plugin, loaded.module)  # what the fingerprint hashes
        if actual is not None:
            registry.sources[found.name] = actual
        if key is not None and actual == source:
            fingerprint = cache.hashes(state, source, found.companions)[0]
            made = (dataclasses.replace(made[0], fingerprint=fingerprint), made[1])
            cache.store(state, made[0])
            registry._fingerprints[found.name] = fingerprint
        out.append((found.name, found.version, *made))
    return out


def _describe(
    loaded: Loaded, fault: Callable[[str, str], None], describe: bool = True
) -> tuple[Description, dict[Any, type[Component]]] | None:
    """``(description, {(kind, name, tasks): class})`` of one imported plugin, its hooks
    called and every component checked alone (names, tasks, ``Params``, claims'
    declarations, two classes of its own under one ``(task, name)``); None after telling
    ``fault`` when any of it fails. Clashes with other plugins and the names its claims
    use are checked when the registry is assembled. Without ``describe``, the parts hold
    kind, name, tasks and class alone (what :class:`_Lazy` checks a cached description by).
    """
    failed: list[str] = []

    def note(name: str, message: str) -> None:
        failed.append(name)
        fault(name, message)

    pm, versions = _register([loaded], note)
    returned = _call_hooks(pm, versions, note)
    if failed:
        return None
    alone = Registry(plugins=dict(versions))
    try:
        for kind, cls in returned.get(loaded.name, []):
            _add(alone, kind, cls, loaded.name)
    except PluginError as err:
        note(loaded.name, str(err).split(" Uninstall one or set")[0])
        return None
    classes: dict[Any, type[Component]] = {}
    for kind, by_key in alone.entries.items():
        for entry in by_key.values():
            cls = entry.cls
            classes.setdefault((kind, cls.name, tuple(cls.tasks())), cls)
    if not describe:  # the plugin's shape alone, to check a cached description
        shape = ((k, n, t, f"{c.__module__}:{c.__qualname__}") for (k, n, t), c in classes.items())
        return Description(tuple(Part(*fields, "") for fields in shape), ""), classes
    parts = tuple(describe_class(kind, cls) for (kind, _, _), cls in classes.items())
    return Description(parts, ""), classes


def _register(
    candidates: list[Loaded], fault: Callable[[str, str], None]
) -> tuple[pluggy.PluginManager, dict[str, str]]:
    """A plugin manager with the candidates registered: ``(manager, {name: version})`` of
    those whose hooks are valid (the others go to ``fault``)."""
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
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
    version: str,
    description: Description,
    classes: dict[Any, type[Component]] | _Lazy,
    fault: Callable[[str, str], None],
) -> None:
    """Add one plugin's described components to ``registry``; on a clash with another
    plugin's, none of them (the whole plugin goes to ``fault``)."""
    lazy = classes if isinstance(classes, _Lazy) else None
    try:
        for part in description.parts:
            cls = None if lazy else classes[(part.kind, part.name, part.tasks)]  # type: ignore[index]
            entry = Entry(cls, plugin, version, part, lazy)
            for task in part.tasks:
                key = (task, part.name)
                other = registry.entries[part.kind].get(key)
                if other is not None and other.plugin != plugin:
                    raise PluginError(
                        f"{part.kind.capitalize()} '{part.name}' (task '{task}') comes from both"
                        f" '{other.plugin}' and '{plugin}': rename one of them."
                    )
                registry.entries[part.kind][key] = entry
    except PluginError as err:
        _leave_out(registry, plugin)
        fault(plugin, str(err))


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
            assert entry.part is not None and entry.part.claim is not None
            problems = _unknown(entry.part.claim.references, entry.part.tasks, registry)
            if problems and entry.plugin not in faulty:
                faulty[entry.plugin] = (
                    f"Plugin '{entry.plugin}': claim '{entry.part.name}': {'; '.join(problems)}."
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
    return _unknown(claim_references(claim), claim.tasks(), registry)


def _unknown(
    references: Iterable[tuple[str, str, str]], tasks: Iterable[str], registry: Registry
) -> list[str]:
    tasks = list(tasks)
    known = {
        kind: sorted({name for task in tasks for name in registry.names(kind, task)})
        for kind in ("dataset", "method")
    }
    where = "/".join(tasks)
    return [
        f"{field_name} names {kind} {shown(name)}, which task '{where}' does not have"
        f" (known: {', '.join(known[kind]) or '(none)'})"
        for field_name, kind, name in references
        if name not in known[kind]
    ]


def _add(registry: Registry, kind: str, cls: object, plugin: str) -> None:
    """Check one component class of ``plugin`` and index it in ``registry`` (the plugin's
    own: a second class under one ``(task, name)`` is a fault)."""
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
        registry.entries[kind][key] = Entry(cls, plugin, registry.plugins[plugin])
