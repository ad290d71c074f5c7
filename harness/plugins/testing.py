"""Conformance checks for plugin authors: harness's ``check_estimator``.

Each check is a small function ``check_<what>(component, registry)`` that raises
``AssertionError`` with a message saying what to fix, or :class:`harness.Skip` when it
does not apply. A plugin's test suite runs them all with one decorator::

    from harness.plugins.testing import parametrize_with_checks

    @parametrize_with_checks("fair-regression")
    def test_conformance(component, check):
        check(component)

which gives test ids like ``test_conformance[mse-check_compute_returns_valid_value]``.
``harness check-plugin NAME`` runs the same checks from the command line.

Components may set a class attribute ``test_params: dict`` with small parameter values
that the checks use instead of the defaults, so that they run in about a second.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

from harness.components import Component, Skip
from harness.errors import PluginError
from harness.plugins.checks import CHECKS, KIND_OF_CHECK, Check, check_results
from harness.plugins.registry import KINDS, Registry, build_registry

__all__ = [
    "CHECKS",
    "assert_claims_table",
    "check_results",
    "evidence_verdicts",
    "iter_checks",
    "parametrize_with_checks",
    "run_checks",
]


def iter_checks(
    plugin: str, registry: Registry | None = None
) -> Iterator[tuple[str, type[Component], Callable[[type[Component]], None]]]:
    """Yield ``(id, component, check)`` for every component of ``plugin`` and every check
    that applies to its kind; ``check(component)`` runs it.

    :raises harness.errors.PluginError: if no installed plugin is called ``plugin``.
    """
    registry = registry or build_registry()
    if plugin in registry.broken:
        raise PluginError(registry.broken[plugin])
    if plugin not in registry.plugins:
        known = ", ".join(sorted(registry.plugins)) or "(none)"
        raise PluginError(f"No installed plugin '{plugin}'. Installed: {known}.")
    for kind in KINDS:
        seen = set()
        for entry in registry.entries[kind].values():
            if entry.plugin != plugin or entry.cls in seen:
                continue
            seen.add(entry.cls)
            for check in CHECKS:
                if KIND_OF_CHECK.get(check, kind) != kind:
                    continue
                yield (
                    f"{entry.cls.name}-{check.__name__}",
                    entry.cls,
                    functools.partial(_run_check, check, registry=registry),
                )


def _run_check(check: Check, component: type[Component], registry: Registry) -> None:
    try:
        check(component, registry)
    except Skip as reason:
        import pytest

        pytest.skip(str(reason))


def parametrize_with_checks(plugin: str) -> Any:
    """A ``pytest.mark.parametrize`` over every conformance check of an installed plugin.

    The decorated test takes ``component`` and ``check`` and calls ``check(component)``.
    """
    import pytest

    cases = list(iter_checks(plugin))
    return pytest.mark.parametrize(
        ("component", "check"), [(c, f) for _, c, f in cases], ids=[i for i, _, _ in cases]
    )


def run_checks(plugin: str, registry: Registry | None = None) -> list[tuple[str, str, str]]:
    """Run every check of ``plugin`` outside pytest: ``[(id, "passed"|"failed"|"skipped",
    message)]``. Used by ``harness check-plugin``."""
    results = []
    registry = registry or build_registry()
    for check_id, component, _ in iter_checks(plugin, registry):
        check = next(c for c in CHECKS if check_id.endswith(c.__name__))
        try:
            check(component, registry)
        except Skip as reason:
            results.append((check_id, "skipped", str(reason)))
        except (Exception, SystemExit) as err:  # any error, not just asserts; sys.exit too
            results.append((check_id, "failed", f"{type(err).__name__}: {err}"))
        else:
            results.append((check_id, "passed", ""))
    if not results:
        results.append(("contributes-components", "failed", nothing_contributed(plugin)))
    return results


def nothing_contributed(plugin: str) -> str:
    """What to tell the author of an installed plugin that contributes no component."""
    hooks = ", ".join(f"{h}()" for h in ("harness_datasets", "harness_methods", "harness_metrics"))
    return (
        f"plugin '{plugin}' is installed but contributes no dataset, method, metric or report:"
        f" decorate its hook functions ({hooks}, harness_reports()) with @hookimpl"
        " (from harness import hookimpl)"
    )


# -- a plugin's committed evidence and the claims tables of its READMEs ------------------------

CLAIMS_BEGIN, CLAIMS_END = "<!-- claims:begin -->", "<!-- claims:end -->"


def evidence_verdicts(plugin_root: Any, claims: Any, evidence: str | None = None) -> dict:
    """``{claim name: Verdict}`` of ``claims`` on the plugin's committed evidence,
    ``<plugin_root>/results/<evidence or the folder's name>.parquet``, evaluated as
    ``harness claims --results`` does (one family, each claim isolated).

    :raises FileNotFoundError: no such evidence file (make it with ``harness results``).
    """
    from pathlib import Path

    import pandas as pd

    from harness.claims import evaluate_claims

    root = Path(plugin_root)
    path = root / "results" / f"{evidence or root.name}.parquet"
    return {v.claim: v for v in evaluate_claims(claims, pd.read_parquet(path))}


def assert_claims_table(readme: Any, verdicts: Any) -> None:
    """The claims table between ``<!-- claims:begin -->`` and ``<!-- claims:end -->`` in
    ``readme`` is what ``verdicts`` give (``verdicts_markdown``), or an AssertionError with
    the diff and the command that remakes it."""
    import difflib
    from pathlib import Path

    from harness.claims import verdicts_markdown

    text = Path(readme).read_text()
    if CLAIMS_BEGIN not in text or CLAIMS_END not in text:
        raise AssertionError(f"{readme}: no {CLAIMS_BEGIN} ... {CLAIMS_END} block")
    shown = text.split(CLAIMS_BEGIN, 1)[1].split(CLAIMS_END, 1)[0].strip().splitlines()
    values = verdicts.values() if isinstance(verdicts, dict) else verdicts
    wanted = verdicts_markdown(list(values)).strip().splitlines()
    diff = "\n".join(difflib.unified_diff(shown, wanted, str(readme), "evidence", lineterm=""))
    assert shown == wanted, (
        f"{readme}: the claims table is not what the committed evidence gives; paste the output"
        f" of 'harness claims SUITE --results EVIDENCE --format markdown':\n{diff}"
    )
