"""Modules imported on first use: a plugin's entry module must register its components
without importing heavy packages (``harness list`` and start-up stay fast; see docs/design.md
'Plugin API'). Write ``stats = LazyModule("scipy.stats")`` at module level and use ``stats.norm``
as usual: scipy is imported the first time an attribute is read."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import warnings
from types import ModuleType
from typing import Any

__all__ = ["LazyModule", "MovedModules"]


class LazyModule(ModuleType):
    """Stands for the module ``name`` and imports it at the first attribute access.

    >>> math = LazyModule("math")
    >>> math.sqrt(4.0)
    2.0
    """

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_module"] = None

    def __getattr__(self, attribute: str) -> Any:
        module = self.__dict__["_module"]
        if module is None:
            module = importlib.import_module(self.__name__)
            self.__dict__["_module"] = module
        return getattr(module, attribute)


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Old module paths kept importable: ``import harness.tracking`` gives the module now at
    ``harness.store.tracking`` (the same module object, so patching either name patches
    both), with a DeprecationWarning that names the new path. Nothing is imported until an
    old path is; a package moved (``harness.executors``) takes its submodules with it.

    >>> finder = MovedModules("pkg", {"old": "json"})
    >>> finder.new_name("pkg.old.decoder"), finder.new_name("pkg.other")
    ('json.decoder', None)
    """

    def __init__(self, package: str, moved: dict[str, str]) -> None:
        self.package = package
        self.moved = moved
        self._found: dict[str, tuple[ModuleType, Any]] = {}

    def new_name(self, fullname: str) -> str | None:
        """Where ``fullname`` lives now, or None if it did not move."""
        prefix, _, rest = fullname.partition(".")
        if prefix != self.package or not rest:
            return None
        head, _, tail = rest.partition(".")
        new = self.moved.get(head)
        if new is None:
            return None
        return f"{new}.{tail}" if tail else new

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = self.new_name(fullname)
        if new is None:
            return None
        warnings.warn(
            f"'{fullname}' moved to '{new}'; import it from there (docs/design.md, 'Layout')",
            DeprecationWarning,
            stacklevel=3,
        )
        module = importlib.import_module(new)
        self._found[fullname] = (module, module.__spec__)
        return importlib.machinery.ModuleSpec(
            fullname, self, is_package=hasattr(module, "__path__")
        )

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self._found[spec.name][0]

    def exec_module(self, module: ModuleType) -> None:
        # the import system set __spec__ to the old name's spec: the module keeps its own
        for found, own in self._found.values():
            if found is module:
                module.__spec__ = own
