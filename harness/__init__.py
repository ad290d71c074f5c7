"""harness: turn research papers into runnable, comparable, MLflow-tracked benchmarks.

The names a plugin needs::

    from harness import hookimpl, Dataset, Method, Metric, Report, Curve, Skip
    from harness import Claim, Cells, Source, Greater, Less, Within   # paper claims
    from harness import Rival, Select                                 # rivals, row groups
    from harness.claims import Mean, PairedGain, LogLogSlope, Swap    # kinds, controls

and ``LazyModule`` to import a heavy package on first use (fast registration), and
``limit_threads`` to run a block with a bounded number of BLAS and torch threads.

The core's modules are grouped by concern (docs/design.md, "Layout"): ``harness.store``,
``harness.suites``, ``harness.runs``, ``harness.claims``, ``harness.reports``,
``harness.plugins``. A module's old path (``harness.tracking``, ``harness.testing``, ...)
still imports the module from its new home, with a DeprecationWarning.
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

import pluggy

from harness.claims import Cells, Claim, Greater, Less, Rival, Select, Source, Verdict, Within
from harness.components import Curve, Dataset, Method, Metric, Report, Skip
from harness.lazy import LazyModule, MovedModules
from harness.threads import limit_threads

hookimpl = pluggy.HookimplMarker("harness")
"""Marker for hook implementations in a plugin module (``@hookimpl``)."""

MOVED = {  # a module's old path under harness. -> where it lives now
    "backends": "harness.store.backends",
    "catalog": "harness.plugins.catalog",
    "cell": "harness.runs.cell",
    "discovery": "harness.plugins.discovery",
    "eta": "harness.runs.eta",
    "events": "harness.runs.events",
    "evidence": "harness.claims.evidence",
    "executors": "harness.runs.executors",
    "expansion": "harness.suites.expansion",
    "fingerprint": "harness.plugins.fingerprint",
    "hookspecs": "harness.plugins.hookspecs",
    "identity": "harness.suites.identity",
    "isolation": "harness.plugins.readonly",
    "layout": "harness.store.layout",
    "liveness": "harness.store.liveness",
    "mlflow_store": "harness.store.mlflow_store",
    "overrides": "harness.suites.overrides",
    "readback": "harness.store.readback",
    "registry": "harness.plugins.registry",
    "render": "harness.reports.render",
    "report": "harness.reports.folder",
    "runner": "harness.runs.runner",
    "safe_yaml": "harness.suites.safe_yaml",
    "scaffold": "harness.plugins.scaffold",
    "schema": "harness.suites.schema",
    "secrets": "harness.redaction",
    "server": "harness.store.server",
    "sqlite_direct": "harness.store.sqlite_direct",
    "sqlite_store": "harness.store.sqlite_store",
    "stats": "harness.claims.stats",
    "suite": "harness.suites.loading",
    "summary": "harness.reports.aggregates",
    "tables": "harness.reports.tables",
    "testing": "harness.plugins.testing",
    "tracking": "harness.store.tracking",
    "verdicts": "harness.claims.verdicts",
}
"""Old module paths kept importable for third-party plugins (``harness.store``, once the
preflight module, is the store package, which re-exports that module's names)."""
if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
    sys.meta_path.insert(0, MovedModules("harness", MOVED))

try:
    __version__ = version("harness")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "Cells",
    "Claim",
    "Curve",
    "Dataset",
    "Greater",
    "LazyModule",
    "Less",
    "Method",
    "Metric",
    "Report",
    "Rival",
    "Select",
    "Skip",
    "Source",
    "Verdict",
    "Within",
    "__version__",
    "hookimpl",
    "limit_threads",
]
