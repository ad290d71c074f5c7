"""The plugin manager: entry-point loading, name resolution and duplicate checks.

:func:`build_registry` loads every ``harness`` entry point (or the explicit plugin objects
a test passes), calls the four hooks of :mod:`harness.hookspecs`, checks what they return
and indexes the components by ``(kind, task, name)``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import signal
import sys
import threading
import types
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pluggy

from harness import hookspecs
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
from harness.secrets import shown

GROUP = "harness"
DISABLE_ENV = "HARNESS_DISABLE_PLUGINS"
KINDS: dict[str, type[Component]] = {
    "dataset": Dataset,
    "method": Method,
    "metric": Metric,
    "report": Report,
    "claim": Claim,
}
_HOOK_OF_KIND = {kind: f"harness_{kind}s" for kind in KINDS}
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


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

        SHA-256 over the relative path and bytes of every file of the plugin's top-level
        package (``__pycache__`` and compiled files left out), or of its module file for a
        single-module plugin; computed once per process. An edit to any source or package
        data file changes it, so the cells that use the plugin run again on resume.

        :returns: 16 hex digits, or ``"unknown"`` when the source cannot be located (a
            plugin object defined in ``__main__``, say): such cells resume on params alone.
        """
        if plugin not in self._fingerprints:
            self._fingerprints[plugin] = _fingerprint(
                self.sources.get(plugin), self.companions.get(plugin, ())
            )
        return self._fingerprints[plugin]

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


def _source_of(plugin: object) -> Path | None:
    """The top-level package folder (or module file) that defines a plugin object."""
    module = plugin.__name__ if isinstance(plugin, types.ModuleType) else type(plugin).__module__
    top = sys.modules.get(module.split(".")[0])
    file = getattr(top, "__file__", None)
    if not file or module == "__main__":
        return None
    path = Path(file).resolve()
    return path.parent if path.name == "__init__.py" else path


def _fingerprint(source: Path | None, companions: Iterable[str] = ()) -> str:
    if source is None or not source.exists():
        return "unknown"
    digest = hashlib.sha256()
    for root in _code_roots(source, companions):
        files = [root] if root.is_file() else sorted(root.rglob("*"))
        for path in files:
            if not path.is_file() or not _is_code_file(path.relative_to(root.parent)):
                continue
            digest.update(str(path.relative_to(root.parent)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


RESULT_FREE_MODULES = frozenset({"claims.py", "reports.py", "_claims.py", "_reports.py"})
"""Modules of a plugin that read finished results and never compute a cell's (its claims
and reports): left out of the fingerprint, so editing a claim or a plot reruns no cell."""


def _is_code_file(relative: Path) -> bool:
    """False for what an editor, a notebook or Python leaves beside the code: bytecode,
    hidden files and folders (``.x.py.swp``, ``.DS_Store``, ``.ipynb_checkpoints``) and
    backups ending in ``~``; these change no result and would rerun cells for nothing. False
    too for :data:`RESULT_FREE_MODULES` (a plugin's ``claims.py`` and ``reports.py``)."""
    parts = relative.parts
    return not (
        relative.name in RESULT_FREE_MODULES
        or "__pycache__" in parts
        or relative.suffix in (".pyc", ".pyo")
        or any(part.startswith(".") for part in parts)
        or relative.name.endswith("~")
    )


@functools.cache
def _distribution_packages() -> Mapping[str, list[str]]:
    """``{top-level import name: its distributions}`` (importlib.metadata)."""
    from importlib.metadata import packages_distributions

    return packages_distributions()


def _code_roots(source: Path, companions: Iterable[str]) -> list[Path]:
    """The plugin's package (or module) and every other top-level package or module its
    distribution installs beside it (``src/harness_x`` and ``src/x_core``, say), so that an
    edit to any of them changes the fingerprint. A top-level name that other distributions
    install too (a stray ``tests`` package) is left out: its files are not the plugin's
    alone. Only ``source`` when its distribution installs nothing else (``companions``, the
    names of its ``top_level.txt``, hold no other name; then no distribution is scanned) or
    it belongs to none (a test's plugin module)."""
    from importlib.util import find_spec

    top = source.stem if source.is_file() else source.name
    others = set(companions) - {top}
    if not others:  # the common case, and fast: harness run's start-up pays no scan
        return [source]
    mine = set(_distribution_packages().get(top, []))
    roots = {source}
    for name in sorted(others):
        dists = set(_distribution_packages().get(name, []))
        if not mine or not dists or not dists <= mine:  # ``tests`` of several: not ours
            continue
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            continue
        locations = (spec.submodule_search_locations or [spec.origin]) if spec else []
        for location in locations:
            if location and location not in ("built-in", "frozen"):
                path = Path(location).resolve()
                if path.parent == source.parent:  # installed beside it, not found elsewhere
                    roots.add(path)
    return sorted(roots, key=lambda root: (root.name, str(root)))


def _cut(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else f"{text[: limit - 50]}... ({len(text):,} characters)"


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
    :func:`_import_guard`), implements an unknown hook or a hook with a wrong signature, a
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

    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    for name in blocked:
        pm.set_blocked(name)
    versions: dict[str, str] = {}
    candidates: list[tuple[str, object, str]] = []
    companions: dict[str, list[str]] = {}
    if entry_points:
        candidates += _load_entry_points(blocked, fault, companions)
    for name, plugin in (plugins or {}).items():
        if name not in blocked:
            candidates.append((name, plugin, str(getattr(plugin, "__version__", "0"))))
    for name, plugin, version in candidates:
        try:
            pm.register(plugin, name=name)
        except (pluggy.PluginValidationError, ValueError) as err:
            fault(name, f"Plugin '{name}' has an invalid hook implementation: {err}.")
            continue
        versions[name] = version
    while True:
        try:
            pm.check_pending()
            break
        except pluggy.PluginValidationError as err:
            name = pm.get_name(err.plugin)
            fault(
                name,
                f"Plugin '{name}' implements a hook harness does not define: {err}. Hooks: "
                + ", ".join(_HOOK_OF_KIND.values())
                + ".",
            )
            pm.unregister(err.plugin)
            versions.pop(name, None)
    registry = Registry(plugins=versions, companions=companions)
    for name, plugin, _ in candidates:
        source = _source_of(plugin)
        if source is not None:
            registry.sources[name] = source
    returned: dict[str, list[tuple[str, object]]] = {name: [] for name in versions}
    for kind, hook_name in _HOOK_OF_KIND.items():
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            try:
                returned_value = impl.function()
                if isinstance(returned_value, (type, str)) or not hasattr(
                    returned_value or (), "__iter__"
                ):
                    fault(
                        impl.plugin_name,
                        f"Plugin '{impl.plugin_name}': its hook {hook_name}() returned"
                        f" {shown(returned_value, 200)}; it must return a list of classes, e.g."
                        f" [{getattr(returned_value, '__name__', 'MyComponent')}].",
                    )
                    continue
                classes = list(returned_value or ())  # a generator runs (and raises) here
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as err:  # a raising hook
                fault(
                    impl.plugin_name,
                    f"Plugin '{impl.plugin_name}': its hook {hook_name}() failed:"
                    f" {type(err).__name__}: {_cut(str(err))}.",
                )
                continue
            returned[impl.plugin_name] += [(kind, cls) for cls in classes]
    for name, components in returned.items():
        if name in broken:
            continue
        try:
            for kind, cls in components:
                _add(registry, kind, cls, name, versions[name])
        except PluginError as err:
            for by_key in registry.entries.values():  # leave the whole plugin out
                for key in [k for k, e in by_key.items() if e.plugin == name]:
                    del by_key[key]
            fault(name, str(err).split(" Uninstall one or set")[0])
    for name in broken:
        registry.plugins.pop(name, None)
    registry.broken = broken
    return registry


class _ExitAtImport(BaseException):
    """A plugin called ``os._exit(code)`` while it was imported (see :func:`_import_guard`)."""


@contextlib.contextmanager
def _import_guard() -> Iterator[list[bool]]:
    """While a plugin is imported: ``os._exit()`` called from this thread raises
    :class:`_ExitAtImport` instead of ending harness silently, and a Ctrl-C is told from a
    ``KeyboardInterrupt`` the plugin raises itself (the yielded list holds ``True`` after a
    real SIGINT). A plugin that calls ``posix._exit`` directly, or exits from another thread
    or a child process, still ends that process: nothing in-process can stop it."""
    interrupted = [False]
    real_exit, pid, thread = os._exit, os.getpid(), threading.get_ident()

    def refuse_exit(code: int = 0) -> None:
        if os.getpid() != pid or threading.get_ident() != thread:  # a child's or a thread's
            real_exit(code)
        raise _ExitAtImport(code)

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGINT)
        if callable(previous):

            def on_sigint(signum: int, frame: Any) -> None:
                interrupted[0] = True
                previous(signum, frame)

            signal.signal(signal.SIGINT, on_sigint)
    os._exit = refuse_exit
    try:
        yield interrupted
    finally:
        os._exit = real_exit
        if callable(previous):
            signal.signal(signal.SIGINT, previous)


def _load_entry_points(
    blocked: set[str], fault: Any, companions: dict[str, list[str]]
) -> list[tuple[str, object, str]]:
    """Import every ``harness`` entry point not blocked: ``[(name, module, version)]``;
    ``companions`` gets each one's distribution's top-level names (``top_level.txt``)."""
    loaded = []
    for ep in entry_points(group=GROUP):
        if ep.name in blocked:
            continue
        dist = getattr(ep, "dist", None)
        try:
            with _import_guard() as interrupted:
                module = ep.load()
        except KeyboardInterrupt:
            if interrupted[0]:  # Ctrl-C: stop
                raise
            fault(
                ep.name,
                f"Plugin '{ep.name}' ({ep.value}) raised KeyboardInterrupt while imported"
                " (no Ctrl-C was pressed).",
            )
            continue
        except _ExitAtImport as err:
            fault(
                ep.name,
                f"Plugin '{ep.name}' ({ep.value}) called os._exit({err.args[0]}) while imported,"
                " which would end every harness command.",
            )
            continue
        except BaseException as err:  # an import error, or sys.exit() at import time
            fault(
                ep.name,
                f"Plugin '{ep.name}' ({ep.value}) failed to import:"
                f" {type(err).__name__}: {_cut(str(err))}.",
            )
            continue
        loaded.append((ep.name, module, dist.version if dist is not None else "0"))
        try:
            text = dist.read_text("top_level.txt") if dist is not None else None
        except OSError:
            text = None
        companions[ep.name] = (text or "").split()
    return loaded


def _add(registry: Registry, kind: str, cls: object, plugin: str, version: str) -> None:
    base = KINDS[kind]
    hook = _HOOK_OF_KIND[kind]
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise PluginError(
            f"Plugin '{plugin}': {hook}() returned {cls!r}; expected a subclass of"
            f" harness.{base.__name__} (the class, not an instance)."
        )
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _NAME.match(name):
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
