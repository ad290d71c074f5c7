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

from harness.claims.stats import Estimate, json_ready

__all__ = ["HEADER", "Outcome", "Status", "Verdict", "count_line", "legend", "notes",
           "table_rows", "verdicts_markdown"]  # fmt: skip


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
    exploratory: bool = False
    trajectory: tuple[tuple[int, float, float, float], ...] = ()

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
        level = "" if math.isclose(e.level, 0.95) else f" ({e.level:.0%} CI)"
        return f"{_g(e.estimate)} [{_g(e.low)}, {_g(e.high)}]{level}"

    @property
    def why(self) -> str:
        """Why the verdict is what it is where the interval alone does not say it, in full:
        the missing cells or the error of a claim without an estimate; for an
        uninformative claim the rival or control that holds too; for an inconclusive one
        what left it undecided (the interval across its margin, its Holm-adjusted p, an
        undecided control or rival) and the units that would decide it."""
        if self.status in (Status.NOT_RUN, Status.ERROR):
            lines = self.reason.strip().splitlines()
            return (lines[-1] if self.status == Status.ERROR else lines[0]) if lines else ""
        if self.status == Status.UNINFORMATIVE:
            return self.reason
        if self.status != Status.INCONCLUSIVE:
            return ""
        parts = [self.reason] if self.reason else []
        side = self._side()
        if not parts and side == "across":
            parts.append(f"its interval reaches both sides of {self._margin()}")  # a band: [a, b]
        elif not parts and side == "claim":
            p = "-" if self.estimate is None else _g(self.estimate.p_value)
            parts.append(f"its interval is on the claim's side, but p = {p} >= {self.alpha:g}")
        if self.units_needed and self.estimate is not None and not self._decided_but_checks():
            parts.append(f"~{self.units_needed} units would decide it (has {self.estimate.n})")
        return "; ".join(parts)

    @property
    def why_short(self) -> str:
        """:attr:`why` in a few words, for a narrow table (the terminal's)."""
        if self.status == Status.NOT_RUN:
            return "missing cells"
        if self.status == Status.ERROR:
            return "unsound estimate" if "unsound estimate" in self.reason else "error"
        if self.status not in (Status.INCONCLUSIVE, Status.UNINFORMATIVE):
            return ""
        checks = [("control", self.control)] if self.control else []
        checks += [(f"rival {name}", o) for name, o in self.rivals.items()]
        for name, o in checks:
            if o.status == Status.REPRODUCED:
                return f"{name} holds too"
        side, p = self._side(), self.p_adjusted
        if side == "across":
            units = f"; ~{self.units_needed} units" if self.units_needed else ""
            return f"interval crosses {self._margin()}{units}"
        if side == "claim" and p is not None and p >= self.alpha:
            return f"Holm p {p:.2g} >= {self.alpha:g}"
        for name, o in checks:
            if o.status != Status.NOT_REPRODUCED:
                return f"{name} undecided"
        return self.why

    def _decided_but_checks(self) -> bool:
        """Whether the claim's own test is decided (its interval on its side, Holm's p
        below its level) and only its control or a rival is undecided: more units of the
        claim would not decide it."""
        p = self.p_adjusted
        return self._side() == "claim" and p is not None and p < self.alpha

    def _side(self) -> str:
        """Where the interval lies against the band: ``"claim"`` (inside it), ``"negation"``
        (wholly outside), ``"across"`` (both), or ``""`` (no interval or band)."""
        e, band = self.estimate, self.band
        if e is None or band is None:
            return ""
        low, high = band
        if low <= e.low and e.high <= high:
            return "claim"
        if e.high <= low or e.low >= high:
            return "negation"
        return "across"

    def _margin(self) -> str:
        low, high = self.band or (-math.inf, math.inf)
        if math.isinf(low) or math.isinf(high):
            return _g(high if math.isinf(low) else low)
        return f"[{_g(low)}, {_g(high)}]"


def _g(value: float) -> str:
    return f"{value:.3g}" if math.isfinite(value) else str(value)


ORDER = [Status.REPRODUCED, Status.NOT_REPRODUCED, Status.INCONCLUSIVE, Status.UNINFORMATIVE,
         Status.NOT_RUN, Status.ERROR]  # fmt: skip


def count_line(verdicts: Sequence[Verdict]) -> str:
    """``"9 reproduced, 2 not reproduced, 3 inconclusive, 1 not run"`` (zero counts left out);
    exploratory claims (the paper does not make them) are counted apart."""
    tallied = [v for v in verdicts if not v.exploratory]
    counts = {s: sum(v.status == s for v in tallied) for s in ORDER}
    parts = [f"{n} {str(s).replace('-', ' ')}" for s, n in counts.items() if n]
    line = ", ".join(parts) or "no claims"
    apart = len(verdicts) - len(tallied)
    return f"{line} (+ {apart} exploratory)" if apart else line


HEADER = ["paper", "claim", "verdict", "estimate [95% CI]", "tested against", "units",
          "p (Holm)", "MDE", "control", "rivals", "why"]  # fmt: skip
"""The verdict table's columns; ``tested against`` is the values the claim allows, ``units``
the units the verdict rests on (where a decide pass stopped, for a claim it gave seeds)."""

WHY = HEADER.index("why")


def table_rows(verdicts: Sequence[Verdict], why_width: int | None = None) -> list[list[str]]:
    """One row per verdict, the columns of :data:`HEADER`; ``why`` cut to ``why_width``
    characters (ending in ``...``; :func:`notes` holds it whole)."""
    rows = []
    for v in verdicts:
        e = v.estimate
        adjusted = math.nan if v.p_adjusted is None else v.p_adjusted
        p = "-" if e is None else f"{_p(e.p_value)} ({_p(adjusted)})"
        mde = "-" if e is None or not math.isfinite(e.mde) else _g(e.mde)
        control = "-" if not v.control else v.control.summary
        rivals = "; ".join(f"{name}: {o.summary}" for name, o in v.rivals.items()) or "-"
        name = f"{v.claim} (exploratory)" if v.exploratory else v.claim
        rows.append([v.task, name, str(v.status), v.interval, v.hypothesis or "-",
                     str(e.n) if e else "-", p, mde, control, rivals,
                     _cut(" ".join(v.why.split()), why_width)])  # fmt: skip
    return rows


def notes(verdicts: Sequence[Verdict], why_width: int | None = None) -> list[str]:
    """``claim: why`` in full for each row whose ``why`` :func:`table_rows` cut at
    ``why_width``, and where each method added with ``--add-method`` placed the estimate."""
    out = []
    for v in verdicts:
        why = " ".join(v.why.split())
        if why_width is not None and len(why) > why_width:
            out.append(f"{v.claim}: {why}")
        for method, placed in v.added.items():
            e = placed.estimate
            where = placed.reason or (f"{_g(e.estimate)} [{_g(e.low)}, {_g(e.high)}]" if e else "")
            out.append(f"{v.claim} with {method} in {v.subject}'s place: {placed.status} {where}")
    return out


def legend(verdicts: Sequence[Verdict]) -> str:
    """What the columns mean, in one paragraph under the table."""
    levels = sorted({e.level for v in verdicts if (e := v.estimate) is not None})
    other = [f"{level:.0%}" for level in levels if not math.isclose(level, 0.95)]
    level = f" (a {', '.join(other)} interval says so)" if other else ""
    return (
        f"estimate [95% CI]: the statistic and its interval{level}; tested against: the"
        " values the claim allows (a one-sided test at 0.025 of the margin, or equivalence"
        " within the band); units: the units the verdict rests on; p (Holm): the test's"
        " p-value and Holm's adjustment within the"
        " claim's paper, which must be below the claim's level; MDE: the smallest effect its"
        " units detect (power 0.8); control and rivals must come out not-reproduced for the"
        " claim to be reproduced."
    )


def _p(value: float) -> str:
    return f"{value:.2g}" if math.isfinite(value) else "-"


def _cut(text: str, width: int | None) -> str:
    if width is None or len(text) <= width:
        return text
    return text[: max(width - 3, 1)].rstrip(" ,;:") + "..."


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


MARKDOWN_WHY = 160
"""The longest ``why`` a Markdown row shows; longer ones are listed whole under the table."""


def verdicts_markdown(verdicts: Sequence[Verdict]) -> str:
    """The verdict table in Markdown, the count line, then each ``why`` the table cut and
    each added method's placing, whole."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    rows = table_rows(verdicts, MARKDOWN_WHY)
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    text = "\n".join(lines) + f"\n\n{count_line(verdicts)}\n"
    more = notes(verdicts, MARKDOWN_WHY)
    if more:
        text += "\n" + "\n".join(f"- {_cell(line)}" for line in more) + "\n"
    return text
