"""What a run tells its listeners, the way pytest emits ``pytest_runtest_logreport``: the
driver loop (:func:`harness.runs.runner.run_suite`) calls these hooks, and the store writer, the
tally and the progress display subscribe.

A listener is any object with some of the methods below (by name; no marker needed, as
pytest's own plugins) and is passed to ``run_suite(..., listeners=[...])``. Listeners run
in the driver's writer thread, one cell at a time, in the order results arrive; the store
writer runs first, so every other listener sees the result as logged (a result the store
refused arrives as ``failed``). An exception in a listener stops the run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pluggy

from harness.runs.cell import CellResult
from harness.suites.identity import Cell

__all__ = ["CellReport", "RunEvents", "listener", "run_events"]

_spec = pluggy.HookspecMarker("harness-run")

#: Marks a listener method with options (``tryfirst``, ``trylast``), as ``pytest.hookimpl``.
listener = pluggy.HookimplMarker("harness-run")


@dataclass
class CellReport:
    """One cell's result, as logged: the cell, its result, and the experiment and parent
    run it was logged under. A listener that logs it may replace ``result`` (the store
    refused it: a ``failed`` result saying why)."""

    cell: Cell
    result: CellResult
    experiment_id: str = ""
    parent_run_id: str = ""


class RunEvents:
    """The hooks of a run (called with keyword arguments; all optional for a listener)."""

    @_spec
    def harness_run_start(self, total: int, todo: int, cells: list[Cell]) -> None:
        """Called once before the first cell: ``total`` cells in the suite, ``todo`` of
        them to run (the others are done), ``cells`` those to run, in suite order."""

    @_spec
    def harness_run_notice(self, line: str) -> None:
        """Called with one line for each thing the user should know before the cells run
        (runs marked KILLED, why cells run again)."""

    @_spec
    def harness_cell_logreport(self, report: CellReport) -> None:
        """Called once per cell that ran, when its result arrives (pytest's
        ``pytest_runtest_logreport``)."""


class _Listeners(pluggy.PluginManager):
    """A plugin manager whose plugins' methods named ``harness_*`` implement the hook of
    that name, marked or not (a misspelled one is an error, :meth:`check_pending`)."""

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith("harness_") and callable(getattr(plugin, name)):
            return {}  # type: ignore[typeddict-item]  # pluggy fills in the defaults
        return opts


def run_events(listeners: Iterable[object]) -> pluggy.PluginManager:
    """A manager of the run's hooks with ``listeners`` registered (their ``pm.hook``
    calls them all).

    :raises pluggy.PluginValidationError: a listener method named after no hook
        (``harness_cell_report``) or with an argument the hook does not have.
    """
    manager = _Listeners("harness-run")
    manager.add_hookspecs(RunEvents)
    for each in listeners:
        manager.register(each)
    manager.check_pending()
    return manager
