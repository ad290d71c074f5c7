"""A claim's verdict and how it is shown: its status, the estimate with its interval, the
control's and each rival's outcome, and the verdict table (terminal, Markdown, HTML rows).

:class:`Verdict` is what :func:`harness.claims.evaluate_claims` returns; it is immutable
(``dataclasses.replace`` makes a changed copy). ``harness run``, ``harness claims`` and the
report print it with :func:`table_rows`, :func:`count_line` and :func:`verdicts_markdown`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from harness.stats import Estimate, json_ready

__all__ = ["HEADER", "Outcome", "Status", "Verdict", "count_line", "table_rows",
           "verdicts_markdown"]  # fmt: skip


class Status(StrEnum):
    """A claim's verdict."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not-reproduced"
    INCONCLUSIVE = "inconclusive"
    UNINFORMATIVE = "uninformative"
    NOT_RUN = "not-run"
    ERROR = "error"


@dataclass(frozen=True)
class Outcome:
    """What a claim's test gave with other evidence in its place: its control (``name`` is
    ``"control"``), a rival method or a method added with ``--add-method``.

    ``draws`` is 1 for a deterministic control; for a randomised one ``failed`` is the share
    of draws that came out ``not-reproduced`` (the control fails when it is at least 0.95).
    ``outcome["status"]`` reads a field as ``as_dict`` writes it.
    """

    name: str
    status: Status
    estimate: Estimate | None = None
    description: str = ""
    draws: int = 1
    failed: float | None = None
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = json_ready(dataclasses.asdict(self))
        out["status"] = str(self.status)
        out["estimate"] = self.estimate.as_dict() if self.estimate else None
        return out

    def __getitem__(self, key: str) -> Any:
        return self.as_dict()[key]

    @property
    def summary(self) -> str:
        """``not-reproduced`` or ``not-reproduced (20/20 draws)``."""
        if self.draws > 1 and self.failed is not None:
            return f"{self.status} ({round(self.failed * self.draws)}/{self.draws} failed)"
        return str(self.status)


def _frozen(mapping: Mapping[str, Outcome]) -> Mapping[str, Outcome]:
    return dict(mapping)  # a copy: the verdict's own (a mappingproxy does not pickle)


@dataclass(frozen=True)
class Verdict:
    """What the harness says of one claim, with everything a reader needs to check it.

    ``estimate`` is None for ``not-run`` and ``error``; ``reason`` then says which cells
    are missing, or holds the traceback. ``p_adjusted`` is Holm's adjustment within the
    claim's ``family`` (its plugin's claims, whichever command evaluates them), compared
    with ``alpha``. ``band`` is the range of the statistic the claim allows. ``control`` is
    the negative control's outcome; ``rivals`` and ``added`` map each rival method and each
    method added with ``--add-method`` to its outcome in the subject's place.
    ``units_needed``: for an inconclusive claim, the units that would decide it at the
    estimated effect and spread (power 0.8, after Holm).
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
    control: Outcome | None = None
    rivals: Mapping[str, Outcome] = field(default_factory=dict)
    added: Mapping[str, Outcome] = field(default_factory=dict)
    run_ids: tuple[str, ...] = ()
    reason: str = ""
    family: str = ""
    alpha: float = 0.05
    band: tuple[float, float] | None = None
    units_needed: int | None = None
    statistic: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))
        object.__setattr__(self, "rivals", _frozen(self.rivals))
        object.__setattr__(self, "added", _frozen(self.added))
        object.__setattr__(self, "run_ids", tuple(self.run_ids))

    def replace(self, **changes: Any) -> Verdict:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["status"] = str(self.status)
        out["estimate"] = self.estimate.as_dict() if self.estimate else None
        out["control"] = self.control.as_dict() if self.control else None
        out["rivals"] = [o.as_dict() for o in self.rivals.values()]
        out["added"] = {k: o.as_dict() for k, o in self.added.items()}
        out["run_ids"] = list(self.run_ids)
        out["band"] = list(self.band) if self.band else None
        return json_ready(out)

    @property
    def interval(self) -> str:
        """``estimate [low, high]`` with three significant digits (the level added where it
        is not 95%), or ``-``."""
        e = self.estimate
        if e is None:
            return "-"
        level = "" if math.isclose(e.level, 0.95) else f" ({e.level:.0%})"
        return f"{_g(e.estimate)} [{_g(e.low)}, {_g(e.high)}]{level}"

    @property
    def why(self) -> str:
        """Why the verdict is what it is, where the interval alone does not say it."""
        if self.status in (Status.NOT_RUN, Status.ERROR):
            lines = self.reason.strip().splitlines()
            return (lines[-1] if self.status == Status.ERROR else lines[0])[:200] if lines else ""
        if self.status in (Status.INCONCLUSIVE, Status.UNINFORMATIVE) and self.reason:
            return self.reason
        return ""


def _g(value: float) -> str:
    return f"{value:.3g}" if math.isfinite(value) else str(value)


ORDER = [Status.REPRODUCED, Status.NOT_REPRODUCED, Status.INCONCLUSIVE, Status.UNINFORMATIVE,
         Status.NOT_RUN, Status.ERROR]  # fmt: skip


def count_line(verdicts: Sequence[Verdict]) -> str:
    """``"9 reproduced, 2 not reproduced, 3 inconclusive, 1 not run"`` (zero counts left out)."""
    counts = {s: sum(v.status == s for v in verdicts) for s in ORDER}
    parts = [f"{n} {str(s).replace('-', ' ')}" for s, n in counts.items() if n]
    return ", ".join(parts) or "no claims"


HEADER = ["paper", "claim", "verdict", "estimate [95% CI]", "tested", "n", "p (Holm)", "MDE",
          "control", "rivals", "why"]  # fmt: skip


def table_rows(verdicts: Sequence[Verdict]) -> list[list[str]]:
    """One row per verdict, the columns of :data:`HEADER`."""
    rows = []
    for v in verdicts:
        e = v.estimate
        adjusted = float("nan") if v.p_adjusted is None else v.p_adjusted
        p = "-" if e is None else f"{_g(e.p_value)} ({_g(adjusted)})"
        mde = "-" if e is None or not math.isfinite(e.mde) else _g(e.mde)
        control = "-" if not v.control else v.control.summary
        rivals = "; ".join(f"{name}: {o.status}" for name, o in v.rivals.items()) or "-"
        rows.append([v.task, v.claim, str(v.status), v.interval, v.hypothesis or "-",
                     str(e.n) if e else "-", p, mde, control, rivals, v.why or ""])  # fmt: skip
    return rows


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def verdicts_markdown(verdicts: Sequence[Verdict]) -> str:
    """The verdict table in Markdown, then the count line."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table_rows(verdicts)]
    return "\n".join(lines) + f"\n\n{count_line(verdicts)}\n"
