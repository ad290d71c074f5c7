"""harness: turn research papers into runnable, comparable, MLflow-tracked benchmarks.

The names a plugin needs::

    from harness import hookimpl, Dataset, Method, Metric, Report, Curve, Skip
    from harness import Claim, Cells, Source, Greater, Less, Within   # paper claims
    from harness import Rival, Select                                 # rivals, row groups
    from harness.claims import Mean, PairedGain, LogLogSlope, Swap    # kinds, controls

and ``LazyModule`` to import a heavy package on first use (fast registration), and
``limit_threads`` to run a block with a bounded number of BLAS and torch threads.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import pluggy

from harness.claims import Cells, Claim, Greater, Less, Rival, Select, Source, Verdict, Within
from harness.components import Curve, Dataset, Method, Metric, Report, Skip
from harness.lazy import LazyModule
from harness.threads import limit_threads

hookimpl = pluggy.HookimplMarker("harness")
"""Marker for hook implementations in a plugin module (``@hookimpl``)."""

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
