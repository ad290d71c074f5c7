"""Paper claims as objects: a falsifiable statement, its statistic, its negative control and
the verdict computed from stored results.

A plugin contributes :class:`Claim` subclasses through the ``harness_claims()`` hook
(:mod:`harness.hookspecs`). ``harness run`` evaluates the claims its suite touches after the
tally, ``harness claims`` from the store or from a ``harness results`` export. The contract
(docs/design.md, "Claims"):

- ``requires``: the cells the claim needs (:class:`Cells`: dataset and method with the
  params they must have, and the fewest seeds);
- ``statistic(results) -> harness.stats.Estimate`` over the rows those cells produced, with
  each unit of replication once;
- ``hypothesis``: what the estimate must show (:class:`Greater`, :class:`Less`,
  :class:`Within`), with the margin declared before any evaluation;
- ``control(results) -> results``: a transformation (or other cells) under which the claim
  must *not* hold, decided by the same ``statistic``; a claim whose control is reproduced too
  is ``uninformative``.
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from harness.components import Component
from harness.stats import Estimate, holm
from harness.verdicts import Status, Verdict, verdicts_markdown

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Cells",
    "Claim",
    "Greater",
    "Less",
    "Source",
    "Status",
    "Verdict",
    "Within",
    "evaluate_claims",
    "verdicts_markdown",
]

ALPHA = 0.05


@dataclass(frozen=True)
class Source:
    """Where a claim comes from: ``paper`` (short citation), ``arxiv`` id, and ``where``
    in it (``"Theorem 3.1"``, ``"Table 2"``, ``"Figure 4"``)."""

    paper: str
    arxiv: str = ""
    where: str = ""

    def __str__(self) -> str:
        parts = [self.paper, f"arXiv:{self.arxiv}" if self.arxiv else "", self.where]
        return ", ".join(p for p in parts if p)


@dataclass(frozen=True)
class Cells:
    """Cells a claim needs: a dataset and one or more methods, each with the params the
    cells must have (others free), and the fewest distinct seeds per method.

    ``dataset_params`` and ``method_params`` values may be a list: any of its values.
    """

    dataset: str
    methods: tuple[str, ...]
    dataset_params: Mapping[str, Any] = field(default_factory=dict)
    method_params: Mapping[str, Any] = field(default_factory=dict)
    min_seeds: int = 2

    def __post_init__(self) -> None:
        if isinstance(self.methods, str):
            object.__setattr__(self, "methods", (self.methods,))
        if self.min_seeds < 1:
            raise ValueError(f"Cells.min_seeds must be >= 1, got {self.min_seeds}")

    def __str__(self) -> str:
        dataset = _named(self.dataset, self.dataset_params)
        methods = ", ".join(_named(m, self.method_params) for m in self.methods)
        return f"{dataset} x {methods}, >= {self.min_seeds} seeds"

    def rows(self, results: pd.DataFrame, method: str | None = None) -> pd.DataFrame:
        """The rows of ``results`` (a ``harness results`` table) these cells produced."""
        keep = results["dataset"].eq(self.dataset)
        keep &= results["method"].isin([method] if method else self.methods)
        for prefix, wanted in (("dataset", self.dataset_params), ("method", self.method_params)):
            if method and prefix == "method":
                continue  # an added method has params of its own
            for key, value in wanted.items():
                column = f"{prefix}.{key}"
                if column not in results:
                    return results.iloc[:0]
                keep &= results[column].map(lambda v, want=value: _param_matches(v, want))
        return results[keep]

    def matches_cell(self, cell: Any) -> bool:
        """Whether a suite's cell (``harness.identity.Cell``) is one of these cells."""
        return (
            cell.dataset == self.dataset
            and cell.method in self.methods
            and all(
                _param_matches(cell.dataset_params.get(k), v)
                for k, v in self.dataset_params.items()
            )
            and all(
                _param_matches(cell.method_params.get(k), v) for k, v in self.method_params.items()
            )
        )


def _named(name: str, params: Mapping[str, Any]) -> str:
    inner = ", ".join(f"{k}={v}" for k, v in params.items())
    return f"{name}({inner})" if inner else name


def _param_matches(value: Any, wanted: Any) -> bool:
    """A logged param (a string in a results table, or a value in a suite's cell) against a
    wanted value or list of values; numbers compare as numbers."""
    if isinstance(wanted, (list, tuple, set, frozenset)):
        return any(_param_matches(value, w) for w in wanted)
    if value is None:
        return False
    if isinstance(wanted, bool) or isinstance(value, bool):
        return str(value).lower() == str(wanted).lower()
    if isinstance(wanted, (int, float)):
        try:
            return math.isclose(float(value), float(wanted), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return str(value) == str(wanted)


# -- hypotheses: how an estimate decides a status ----------------------------------------


@dataclass(frozen=True)
class Greater:
    """The claim: the estimate exceeds ``margin`` (superiority when 0, non-inferiority
    when negative). Reproduced when the interval lies above it, not reproduced when below."""

    margin: float = 0.0

    def decide(self, e: Estimate) -> Status:
        if e.low > self.margin:
            return Status.REPRODUCED
        if e.high <= self.margin:
            return Status.NOT_REPRODUCED
        return Status.INCONCLUSIVE

    def __str__(self) -> str:
        return f"> {self.margin:g}"


@dataclass(frozen=True)
class Less:
    """The claim: the estimate is below ``margin``."""

    margin: float = 0.0

    def decide(self, e: Estimate) -> Status:
        if e.high < self.margin:
            return Status.REPRODUCED
        if e.low >= self.margin:
            return Status.NOT_REPRODUCED
        return Status.INCONCLUSIVE

    def __str__(self) -> str:
        return f"< {self.margin:g}"


@dataclass(frozen=True)
class Within:
    """The claim: the estimate equals ``reference`` within ``+- margin`` (equivalence).
    Reproduced when the interval lies inside the band, not reproduced when it lies wholly
    outside, inconclusive when it covers a band edge."""

    reference: float
    margin: float

    def __post_init__(self) -> None:
        if not self.margin > 0:
            raise ValueError(f"Within.margin must be > 0, got {self.margin}")

    def decide(self, e: Estimate) -> Status:
        low, high = self.reference - self.margin, self.reference + self.margin
        if e.low >= low and e.high <= high:
            return Status.REPRODUCED
        if e.high < low or e.low > high:
            return Status.NOT_REPRODUCED
        return Status.INCONCLUSIVE

    def __str__(self) -> str:
        return f"within {self.reference:g} +- {self.margin:g}"


Hypothesis = Greater | Less | Within


# -- the claim -----------------------------------------------------------------------------


class Claim(Component):
    """Base class of paper claims: a pre-registered hypothesis about results.

    Class attributes a claim declares (all fixed before any evaluation runs):

    name, task : str
        Kebab-case name and the task whose results it reads.
    source : Source
        Paper, arXiv id and the table, figure or theorem.
    statement : str
        One falsifiable sentence, with the paper's number where it gives one.
    requires : tuple of Cells
        The cells the statistic reads; missing ones make the verdict ``not-run``.
    hypothesis : Greater, Less or Within
        What ``statistic``'s estimate must show, with the declared margin.
    unit : str
        The unit of replication the statistic treats as exchangeable ("seed",
        "configuration", ...).
    control_description : str
        What the negative control does, in one sentence.
    subject : str or None
        The method whose place a user's added method may take (comparative claims).

    Subclasses implement :meth:`statistic` and :meth:`control`; :meth:`evaluate` is the
    harness's and should not be overridden.
    """

    source: ClassVar[Source]
    statement: ClassVar[str]
    requires: ClassVar[tuple[Cells, ...]] = ()
    hypothesis: ClassVar[Hypothesis]
    unit: ClassVar[str] = "seed"
    control_description: ClassVar[str] = ""
    subject: ClassVar[str | None] = None

    def statistic(self, results: pd.DataFrame) -> Estimate:
        """The claim's test over ``results``: the ok rows of the cells in ``requires``
        (columns as in ``harness results``: ``dataset``, ``method``, ``seed``, params as
        strings under ``dataset.<p>`` / ``method.<p>``, metrics as floats).

        :raises ValueError: the rows do not allow the test (too few units, ...).
        """
        raise NotImplementedError(f"{type(self).__name__}.statistic is not implemented")

    def control(self, results: pd.DataFrame) -> pd.DataFrame:
        """The negative control: ``results`` transformed (the measure shuffled across
        exchangeable units, the signal replaced by noise) so that the claim must not hold.
        Must be deterministic (seed any randomness from the claim)."""
        raise NotImplementedError(f"{type(self).__name__}.control is not implemented")

    # -- the harness's side ------------------------------------------------------------

    @classmethod
    def declaration_problems(cls) -> list[str]:
        """What is wrong with the class's declaration (checked when the registry is built,
        so a malformed claim leaves its plugin out instead of failing a run at its end)."""
        problems = []
        if not isinstance(getattr(cls, "source", None), Source):
            problems.append("source must be a harness.Source(paper, arxiv, where)")
        if not isinstance(getattr(cls, "statement", None), str) or not cls.statement.strip():
            problems.append("statement must be one falsifiable sentence")
        if not isinstance(getattr(cls, "hypothesis", None), (Greater, Less, Within)):
            problems.append("hypothesis must be Greater(margin), Less(margin) or Within(ref, m)")
        requires = getattr(cls, "requires", None)
        if not isinstance(requires, tuple) or not all(isinstance(c, Cells) for c in requires):
            problems.append("requires must be a tuple of harness.Cells (a one-element tuple"
                            " needs its trailing comma)")  # fmt: skip
        elif not requires:
            problems.append("requires names no cells")
        try:
            cls()
        except Exception as err:
            problems.append(f"cannot be built without arguments ({type(err).__name__}: {err})")
        return problems

    def selected(self, results: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
        """``(ok rows of the required cells, [each requirement short of seeds])``."""
        import pandas as pd

        ok = results[results["status"].eq("ok")] if "status" in results else results
        parts, missing = [], []
        for need in self.requires:
            rows = need.rows(ok)
            for method in need.methods:
                seeds = rows.loc[rows["method"].eq(method), "seed"].nunique()
                if seeds < need.min_seeds:
                    missing.append(
                        f"{_named(need.dataset, need.dataset_params)} x"
                        f" {_named(method, need.method_params)}: {seeds} of"
                        f" {need.min_seeds} seeds"
                    )
            parts.append(rows)
        frame = pd.concat(parts).drop_duplicates() if parts else ok.iloc[:0]
        return frame, missing

    def evaluate(self, results: pd.DataFrame) -> Verdict:
        """The verdict from ``results`` (a ``harness results`` table of the task, any
        number of rows). Never raises: a failing claim is ``error`` with its traceback."""
        verdict = Verdict(self.name, self.tasks()[0], str(getattr(self, "source", "")),
                          str(getattr(self, "statement", "")),
                          str(getattr(self, "hypothesis", "")), str(self.unit), Status.ERROR,
                          self.subject)  # fmt: skip
        try:
            rows, missing = self.selected(results)
            if missing:
                verdict.status = Status.NOT_RUN
                verdict.reason = "missing cells: " + "; ".join(missing)
                return verdict
            estimate = self.statistic(rows)
            verdict.estimate = estimate
            verdict.status = self.hypothesis.decide(estimate)
            verdict.run_ids = sorted(map(str, rows.get("run_id", [])))
            verdict.control = self._control(rows)
            if verdict.control["status"] == Status.REPRODUCED:
                verdict.status = Status.UNINFORMATIVE
                verdict.reason = "its negative control is reproduced too"
            verdict.added = self._added(results, rows)
        except (KeyboardInterrupt, GeneratorExit):
            raise
        except BaseException:  # plugin code, sys.exit included: its fault is its verdict
            verdict.status = Status.ERROR
            verdict.estimate = None
            verdict.reason = traceback.format_exc()
        return verdict

    def _control(self, rows: pd.DataFrame) -> dict[str, Any]:
        estimate = self.statistic(self.control(rows.copy()))
        status = self.hypothesis.decide(estimate)
        return {"status": status, "description": self.control_description,
                "estimate": estimate.as_dict()}  # fmt: skip

    def _added(self, results: pd.DataFrame, rows: pd.DataFrame) -> dict[str, dict[str, Any]]:
        """Each method of ``results`` no requirement names, put in the subject's place."""
        if self.subject is None or "method" not in results:
            return {}
        import pandas as pd

        named = {m for need in self.requires for m in need.methods}
        ok = results[results["status"].eq("ok")] if "status" in results else results
        candidates = set(ok["method"]) - named
        if "plugin" in ok and rows["method"].eq(self.subject).any():
            # the paper's own baselines are not "added": only other plugins' methods are
            own = set(rows.loc[rows["method"].eq(self.subject), "plugin"])
            candidates = set(ok.loc[~ok["plugin"].isin(own), "method"]) - named
        out = {}
        for method in sorted(candidates):
            needs = [need for need in self.requires if self.subject in need.methods]
            theirs = [need.rows(ok, method) for need in needs]
            mine = pd.concat(theirs) if theirs else ok.iloc[:0]
            if mine.empty:
                continue
            others = rows[rows["method"].ne(self.subject)]
            frame = pd.concat([others, mine.assign(method=self.subject)])
            try:
                e = self.statistic(frame)
            except Exception as err:  # the statistic may not apply to this method's rows
                reason = f"{type(err).__name__}: {err}"
                out[method] = {"status": str(Status.ERROR), "reason": reason}
                continue
            out[method] = {"status": str(self.hypothesis.decide(e)), "estimate": e.estimate,
                           "low": e.low, "high": e.high, "n": e.n}  # fmt: skip
        return out


def evaluate_claims(
    claims: Iterable[type[Claim]], results: pd.DataFrame, alpha: float = ALPHA
) -> list[Verdict]:
    """Evaluate every claim on ``results`` and adjust their p-values together (Holm).

    A reproduced claim whose Holm-adjusted p-value is not below ``alpha`` becomes
    ``inconclusive`` (its interval alone excluded the negation, the family does not).
    """
    verdicts = [_evaluate(cls, _of_task(results, cls)) for cls in claims]
    raw = [v.estimate.p_value if v.estimate else float("nan") for v in verdicts]
    for verdict, adjusted in zip(verdicts, holm(raw), strict=True):
        verdict.p_adjusted = adjusted if math.isfinite(adjusted) else None
        # a test without a p-value (nan) is decided by its interval alone
        if verdict.status == Status.REPRODUCED and math.isfinite(adjusted) and adjusted >= alpha:
            verdict.status = Status.INCONCLUSIVE
            verdict.reason = f"Holm-adjusted p = {adjusted:.3g} across {len(verdicts)} claims"
    return verdicts


def _evaluate(cls: type[Claim], results: pd.DataFrame) -> Verdict:
    """``cls().evaluate(results)``, an ``error`` verdict if the claim cannot be built."""
    try:
        claim = cls()
    except Exception:
        task = cls.tasks()[0] if getattr(cls, "task", None) else ""
        reason = traceback.format_exc()
        return Verdict(cls.name, task, "", "", "", "", Status.ERROR, None, reason=reason)
    return claim.evaluate(results)


def _of_task(results: pd.DataFrame, cls: type[Claim]) -> pd.DataFrame:
    if "task" not in results:
        return results
    return results[results["task"].isin(cls.tasks())]
