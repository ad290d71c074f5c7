"""Every claim of a family evaluated together, each in isolation, and Holm within the family.

A claim's family is its plugin's claims (``Claim.family``; default the plugin's package).
Holm's adjustment counts every member of the family, whichever of them a command asked
for: a member without a p-value of its own (not run, in error) counts as p = 1. So a
plugin's suite, ``all.yaml``, ``--claim NAME`` and ``harness claims --results`` give the
same verdict for the same evidence, and a third party's claims never move a paper's.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.claims.contract import Claim, core_only
from harness.claims.hypotheses import ALPHA
from harness.claims.isolation import Isolated, call_isolated_each, claim_timeout
from harness.claims.selection import Table
from harness.claims.stats import holm
from harness.claims.verdicts import Status, Verdict

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["evaluate_claims", "family_of", "max_units"]


def family_of(cls: type[Claim], registered: Iterable[type[Claim]]) -> list[type[Claim]]:
    """The claims of ``registered`` in ``cls``'s family (``cls`` included), in order."""
    name = cls.family_name()
    members = [c for c in registered if c.family_name() == name]
    return members if cls in members else [*members, cls]


def evaluate_claims(
    claims: Iterable[type[Claim]],
    results: pd.DataFrame,
    registered: Sequence[type[Claim]] = (),
    timeout: float | None = None,
    anytime: Collection[str] = (),
) -> list[Verdict]:
    """The verdicts of ``claims`` on ``results``, Holm-adjusted within each family.

    :param registered: every installed claim; the families are taken from it (default:
        the claims asked for make up their families).
    :param timeout: seconds per claim (default ``HARNESS_CLAIM_TIMEOUT`` or 60); a claim
        past it, or whose code ends its process, is ``error``.
    :param anytime: names of declared claims read through confidence sequences (their units
        were added by looking: ``harness run --decide``).
    """
    asked = list(dict.fromkeys(claims))
    pool = list(dict.fromkeys([*registered, *asked]))
    limit = claim_timeout() if timeout is None else timeout
    verdicts: dict[type[Claim], Verdict] = {}
    families = _families(asked, pool if registered else asked)
    _import_statistics(cls for family in families for cls in family)
    tasks: dict[tuple[str, ...], Table] = {}
    filled = results.notna().to_numpy() if "task" in results else None
    for family in families:
        for cls in family:
            key = tuple(cls.tasks())
            if key not in tasks:  # factorized here, once: every claim's child reads it
                tasks[key] = Table.prepared(_of_task(results, cls, filled))
        calls = [(cls, tasks[tuple(cls.tasks())], cls.name in anytime) for cls in family]
        trusted = [core_only(cls) for cls in family]  # these share a child: only core code
        outcomes = call_isolated_each(_build_and_evaluate, calls, limit, trusted)
        for cls, outcome in zip(family, outcomes, strict=True):
            verdicts[cls] = _verdict_of(cls, outcome)
        _adjust(family, verdicts)
    return [verdicts[cls] for cls in asked]


def _import_statistics(claims: Iterable[type[Claim]]) -> None:
    """Import, once in this process, what statistics import lazily: an import made in a
    forked child is lost with it. The core's samples need scipy.special; a claim of the
    first contract (its own statistic, usually harness.claims.stats) scipy.stats and statsmodels,
    which take a second or more to import (8 such claims took 21.7 s isolated without this,
    1.4 s in process), so they are imported only when such a claim is evaluated. What
    other claim code imports is imported by the isolation's server after the first claim
    that needs it (:data:`harness.claims.isolation.SHARED_IMPORTS`)."""
    import scipy.special

    if any(not cls.declared() for cls in claims):
        import scipy.stats  # noqa: F401
        import statsmodels.stats.multitest
        import statsmodels.stats.proportion  # noqa: F401


def _families(asked: list[type[Claim]], pool: list[type[Claim]]) -> list[list[type[Claim]]]:
    names = list(dict.fromkeys(cls.family_name() for cls in asked))
    return [[c for c in pool if c.family_name() == name] for name in names]


def _adjust(family: list[type[Claim]], verdicts: dict[type[Claim], Verdict]) -> None:
    """Holm within ``family``: every member counted, members without a p-value as 1 (a
    first-contract statistic that gives none is decided by its interval alone)."""
    raw = []
    for cls in family:
        e = verdicts[cls].estimate
        raw.append(1.0 if e is None else e.p_value)
    adjusted = holm(raw)
    for cls, p in zip(family, adjusted, strict=True):
        v = verdicts[cls]
        if v.estimate is None or not math.isfinite(p):
            continue
        changes: dict = {"p_adjusted": p}
        if v.status == Status.REPRODUCED and p >= v.alpha:
            changes["status"] = Status.INCONCLUSIVE
            changes["reason"] = (f"Holm-adjusted p = {p:.3g} >= {v.alpha:g} across the"
                                 f" {len(family)} claims of {v.family}")  # fmt: skip
        verdicts[cls] = v.replace(**changes)
        _units_needed(cls, verdicts, len(family))


def _units_needed(cls: type[Claim], verdicts: dict[type[Claim], Verdict], size: int) -> None:
    """For an inconclusive declared claim: units to decide it at the estimated effect and
    spread, power 0.8, at the Bonferroni level of its family (Holm's first step)."""
    v = verdicts[cls]
    if v.status != Status.INCONCLUSIVE or v.estimate is None or v.band is None:
        return
    e = v.estimate
    if not cls.declared() or not math.isfinite(e.mde) or e.mde <= 0:
        return
    from harness.claims.samples import normal_quantile as z

    low, high = v.band
    distance = min(abs(e.estimate - low), abs(high - e.estimate))
    if not math.isfinite(distance) or distance <= 0:
        return
    # the MDE scales as 1/sqrt(n): units for the effect at the stricter level
    z_now = z(1 - v.alpha) + z(0.8)
    z_need = z(1 - ALPHA / size) + z(0.8)
    needed = math.ceil(e.n * (e.mde * z_need / z_now / distance) ** 2)
    verdicts[cls] = v.replace(units_needed=max(needed, e.n + 1))


def _verdict_of(cls: type[Claim], outcome: Isolated) -> Verdict:
    """The verdict ``cls().evaluate(results)`` gave in isolation; ``error`` if it could not
    be built, ran past its time or ended its process."""
    if outcome.ok and isinstance(outcome.value, Verdict):
        return outcome.value
    task = cls.tasks()[0] if getattr(cls, "task", None) else ""
    reason = outcome.error or f"evaluate returned {type(outcome.value).__name__}"
    return Verdict(cls.name, task, str(getattr(cls, "source", "")),
                   str(getattr(cls, "statement", "")), str(getattr(cls, "hypothesis", "")),
                   str(getattr(cls, "unit", "")), Status.ERROR, family=cls.family_name(),
                   reason=reason)  # fmt: skip


def _build_and_evaluate(cls: type[Claim], results: Table, anytime: bool) -> Verdict:
    claim = cls()
    if anytime and cls.declared():
        from harness.claims.sequential import Anytime

        claim.kind = Anytime(cls.kind, max_units(cls))  # type: ignore[misc]
    return claim.evaluate(results)


def max_units(cls: type[Claim]) -> int:
    """The most units ``--decide`` gives ``cls``: its ``max_units``, else 4 x its largest
    ``min_seeds``."""
    if cls.max_units:
        return int(cls.max_units)
    return 4 * max((need.min_seeds for need in cls.requires), default=2)


def _of_task(results: pd.DataFrame, cls: type[Claim], filled: Any = None) -> pd.DataFrame:
    """The rows of ``cls``'s task, without the columns none of them fills (other tasks'
    params and metrics): the table a claim reads is its task's whichever tasks the results
    hold, as in its plugin's own suite. ``filled``: ``results.notna().to_numpy()``, when
    known (the columns are chosen before any is copied: the results of all.yaml hold every
    task's columns)."""
    if "task" not in results:
        return results
    rows = np.flatnonzero(results["task"].isin(cls.tasks()).to_numpy())
    if filled is None:
        filled = results.notna().to_numpy()
    return results.iloc[rows, np.flatnonzero(filled[rows].any(axis=0))]
