"""A claim's verdict and how it is shown: its status, the estimate with its interval, the
negative control's outcome, and the verdict table (terminal, Markdown, HTML rows).

:class:`Verdict` is what :meth:`harness.Claim.evaluate` returns (:mod:`harness.claims`);
``harness run``, ``harness claims`` and the report print it with :func:`table_rows`,
:func:`count_line` and :func:`verdicts_markdown`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from harness.stats import Estimate, json_ready

__all__ = ["HEADER", "Status", "Verdict", "count_line", "table_rows", "verdicts_markdown"]


class Status(StrEnum):
    """A claim's verdict."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not-reproduced"
    INCONCLUSIVE = "inconclusive"
    UNINFORMATIVE = "uninformative"
    NOT_RUN = "not-run"
    ERROR = "error"


@dataclass
class Verdict:
    """What the harness says of one claim, with everything a reader needs to check it.

    ``estimate`` is None for ``not-run`` and ``error``; ``reason`` then says which cells
    are missing, or holds the traceback. ``p_adjusted`` is Holm's adjustment across the
    claims evaluated together (:func:`evaluate_claims`). ``control`` is the negative
    control's status and estimate. ``added`` places each method a user added (``harness
    run --add-method``) against the claim: ``{method: {status, estimate, low, high, n}}``.
    """

    claim: str
    task: str
    source: str
    statement: str
    hypothesis: str
    unit: str
    status: Status
    subject: str | None = None
    estimate: Estimate | None = None
    p_adjusted: float | None = None
    control: dict[str, Any] | None = None
    run_ids: list[str] = field(default_factory=list)
    reason: str = ""
    added: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = json_ready(dataclasses.asdict(self))
        out["status"] = str(self.status)
        out["estimate"] = self.estimate.as_dict() if self.estimate else None
        if self.p_adjusted is not None and not math.isfinite(self.p_adjusted):
            out["p_adjusted"] = None
        return out

    @property
    def interval(self) -> str:
        """``estimate [low, high]`` with three significant digits, or ``-``."""
        e = self.estimate
        if e is None:
            return "-"
        return f"{_g(e.estimate)} [{_g(e.low)}, {_g(e.high)}]"


def _g(value: float) -> str:
    return f"{value:.3g}" if math.isfinite(value) else "nan"


ORDER = [Status.REPRODUCED, Status.NOT_REPRODUCED, Status.INCONCLUSIVE, Status.UNINFORMATIVE,
         Status.NOT_RUN, Status.ERROR]  # fmt: skip


def count_line(verdicts: Sequence[Verdict]) -> str:
    """``"9 reproduced, 2 not reproduced, 3 inconclusive, 1 not run"`` (zero counts left out)."""
    counts = {s: sum(v.status == s for v in verdicts) for s in ORDER}
    parts = [f"{n} {str(s).replace('-', ' ')}" for s, n in counts.items() if n]
    return ", ".join(parts) or "no claims"


def table_rows(verdicts: Sequence[Verdict]) -> list[list[str]]:
    """One row per verdict: paper, claim, verdict, estimate [CI], n, p (Holm), control."""
    rows = []
    for v in verdicts:
        e = v.estimate
        adjusted = float("nan") if v.p_adjusted is None else v.p_adjusted
        p = "-" if e is None else f"{_g(e.p_value)} ({_g(adjusted)})"
        control = "-" if not v.control else str(v.control["status"])
        rows.append([v.task, v.claim, str(v.status), v.interval, str(e.n) if e else "-", p,
                     control])  # fmt: skip
    return rows


HEADER = ["paper", "claim", "verdict", "estimate [95% CI]", "n", "p (Holm)", "control"]


def verdicts_markdown(verdicts: Sequence[Verdict]) -> str:
    """The verdict table in Markdown, then the count line."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"
              for row in table_rows(verdicts)]  # fmt: skip
    return "\n".join(lines) + f"\n\n{count_line(verdicts)}\n"
