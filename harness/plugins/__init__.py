"""Plugins: found, imported, hashed and indexed; the hooks they implement; checks for authors.

- :func:`build_registry` and :class:`Registry`: the installed plugins' components, checked
  and indexed by kind, task and name;
- :mod:`harness.plugins.testing`: the conformance checks a plugin's tests run
  (``parametrize_with_checks``) and ``harness check-plugin`` reuses;
- :mod:`harness.plugins.hookspecs`: every hook of the plugin API.

The modules behind them: ``registry``, ``catalog``, ``discovery``, ``fingerprint``, ``hookspecs``,
``readonly``, ``metric_values``, ``checks``, ``testing``, ``scaffold``. The component base
classes are :mod:`harness.components`, below the claims that extend them.
"""

from harness.plugins.registry import KINDS, Registry, build_registry

__all__ = ["KINDS", "Registry", "build_registry"]
