"""Modules imported on first use: a plugin's entry module must register its components
without importing heavy packages (``harness list`` and start-up stay fast; see docs/design.md
'Plugin API'). Write ``stats = LazyModule("scipy.stats")`` at module level and use ``stats.norm``
as usual: scipy is imported the first time an attribute is read."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["LazyModule"]


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
