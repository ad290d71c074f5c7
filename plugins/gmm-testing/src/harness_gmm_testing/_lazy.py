"""A module imported on first use, so that registering the plugin stays fast (scipy and
pandas cost about a second to import; ``harness list`` needs neither)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


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
