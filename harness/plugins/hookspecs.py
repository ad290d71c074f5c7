"""Every hook of the harness plugin API; all are optional for a plugin.

A plugin module (the target of a ``[project.entry-points.harness]`` entry) marks its hook
implementations with :data:`harness.hookimpl`. Each hook is called once per process when
the registry is built, after every ``harness`` entry point not in
``HARNESS_DISABLE_PLUGINS`` is loaded. All implementations are called and their results
concatenated (no hook is ``firstresult``). ``(task, name)`` is unique per kind across
plugins; a clash is a fault naming both plugins, and the plugin registered second is left
out whole (``registry.build_registry``).
"""

from __future__ import annotations

from collections.abc import Iterable

import pluggy

from harness.claims import Claim
from harness.components import Dataset, Method, Metric, Report

hookspec = pluggy.HookspecMarker("harness")

# -- components contributed by plugins ------------------------------------------------


@hookspec
def harness_datasets() -> Iterable[type[Dataset]]:
    """Contribute Dataset classes.

    Called once when the registry is built.

    :returns: Dataset subclasses, not instances; each loads the data object of its
        ``task`` (documented by the plugin that owns the task).
    """


@hookspec
def harness_methods() -> Iterable[type[Method]]:
    """Contribute Method classes.

    Called once when the registry is built. A method may serve several tasks
    (``task = ("a", "b")``) and may belong to a task that another plugin owns.

    :returns: Method subclasses, not instances.
    """


@hookspec
def harness_metrics() -> Iterable[type[Metric]]:
    """Contribute Metric classes.

    Called once when the registry is built.

    :returns: Metric subclasses, not instances. ``compute`` returns a float, a
        ``dict[str, float]`` (logged as ``<metric>.<key>``) or a :class:`harness.Curve`.
    """


@hookspec
def harness_reports() -> Iterable[type[Report]]:
    """Contribute Report classes: plots and cross-run statistics over a finished suite.

    Called once when the registry is built. ``harness run`` and ``harness report``
    build every report of each task the suite ran.

    :returns: Report subclasses, not instances.
    """


# -- claims: what the paper says the results show ------------------------------------------


@hookspec
def harness_claims() -> Iterable[type[Claim]]:
    """Contribute Claim classes: the paper's claims as pre-registered hypotheses.

    Called once when the registry is built. ``harness run`` evaluates, after the tally,
    every claim some of whose required cells the suite holds; ``harness claims`` does the
    same from the store or from a ``harness results`` export (docs/design.md, "Claims").

    :returns: :class:`harness.Claim` subclasses, not instances; ``(task, name)`` is unique.
    """
