"""Paper claims as objects: a declaration the core tests, rules out rivals for, and controls.

A plugin contributes :class:`Claim` subclasses through the ``harness_claims()`` hook
(:mod:`harness.plugins.hookspecs`). A claim declares, before any evaluation (docs/design.md,
"Claims"): its ``source`` and ``statement``; the cells it reads (``requires``); the
``metric`` and the ``unit`` of replication; a ``kind`` (:mod:`harness.claims.kinds`) that
turns the rows into a sample; a ``hypothesis`` (:mod:`harness.claims.hypotheses`) that runs
the test at its margin; the ``subject`` (the paper's method); ``rivals``, methods without
the paper's mechanism that must fail in the subject's place; and a ``control``
(:mod:`harness.claims.controls`) that must fail. The core does the rest
(:meth:`Claim.evaluate`; Holm within the plugin's family in :mod:`harness.claims.family`).

A claim written against the first contract (its own ``statistic(results) -> Estimate`` and
``control(results) -> results`` methods, no ``kind``) is still evaluated, with the same
checks of its estimate, control and cells.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import traceback
from collections.abc import Mapping
from numbers import Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from harness.claims.controls import Control
from harness.claims.declaration import Cells, Rival, Source
from harness.claims.hypotheses import ALPHA, Hypothesis
from harness.claims.kinds import Kind
from harness.claims.samples import Sample, refusal
from harness.claims.selection import Select, Table, param_matches
from harness.claims.stats import Estimate
from harness.claims.verdicts import Outcome, Status, Verdict
from harness.components import Component
from harness.redaction import shown

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LEGACY_ALPHA", "Cells", "Claim", "Rival", "Source", "estimate_problems"]


LEGACY_ALPHA = 0.05
"""Holm's level for a claim that computes its own p-value (first contract): as before."""

MIN_UNITS = 2


def _hypothesis_problems(hypothesis: Any, declared: bool) -> list[str]:
    """What makes ``hypothesis`` no test a claim can run: not a :class:`Hypothesis`, a
    hypothesis class that leaves part of its test unwritten, or a margin or reference that
    is no finite number (each named as ``hypothesis.<field>``)."""
    if not isinstance(hypothesis, Hypothesis):
        return [f"hypothesis must be Greater(margin), Less(margin) or Within(reference,"
                f" margin), got {shown(hypothesis, 80)}"]  # fmt: skip
    kind = type(hypothesis).__name__
    needed = ("band", "p_value", "p_negation") if declared else ("band",)
    missing = [m for m in needed if getattr(type(hypothesis), m) is getattr(Hypothesis, m)]
    if missing:
        return [f"hypothesis {kind} does not implement {', '.join(missing)}"]
    if dataclasses.is_dataclass(hypothesis):
        bad = [f"hypothesis.{f.name} is {getattr(hypothesis, f.name)!r} (must be a finite number)"
               for f in dataclasses.fields(hypothesis)
               if not _finite_number(getattr(hypothesis, f.name))]  # fmt: skip
        if bad:
            return bad
    try:
        low, high = hypothesis.band()
    except Exception as err:
        return [f"hypothesis {kind}.band() failed ({type(err).__name__}: {err})"]
    ends = all(isinstance(v, Real) and not isinstance(v, bool) for v in (low, high))
    if not ends or not low < high:
        return [f"hypothesis {kind}.band() is ({low!r}, {high!r}), not an interval of numbers"]
    return []


def _finite_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def estimate_problems(e: Any, legacy: bool = False) -> list[str]:
    """What makes ``e`` no sound estimate (empty when it is one): finite estimate and bounds,
    ``low <= estimate <= high``, at least two units, ``0 <= p <= 1`` (a first-contract
    statistic may give ``nan``: decided by its interval), a level in [0.8, 1)."""
    if not isinstance(e, Estimate):
        return [f"the statistic returned {type(e).__name__}, not a harness.claims.stats.Estimate"]
    problems = []
    for name in ("estimate", "low", "high"):
        if not math.isfinite(getattr(e, name)):
            problems.append(f"Estimate.{name} is {getattr(e, name)} (must be finite)")
    if not problems and not e.low <= e.estimate <= e.high:
        problems.append(f"Estimate.estimate {e.estimate:g} lies outside its own interval"
                        f" [{e.low:g}, {e.high:g}]")  # fmt: skip
    if e.n < MIN_UNITS:
        problems.append(f"Estimate.n is {e.n} (a verdict needs at least {MIN_UNITS} units)")
    if not (0 <= e.p_value <= 1 or (legacy and math.isnan(e.p_value))):
        problems.append(f"Estimate.p_value is {e.p_value} (must be in [0, 1])")
    if not 0.8 <= e.level < 1:
        problems.append(f"Estimate.level is {e.level} (an interval's level is in [0.8, 1))")
    return problems


class Claim(Component):
    """Base class of paper claims: a pre-registered hypothesis about results.

    Class attributes a claim declares (all fixed before any evaluation runs):

    name, task : str
        Kebab-case name, unique across plugins, and the task whose results it reads.
    source : Source
        Paper, arXiv id and the table, figure or theorem.
    statement : str
        One falsifiable sentence, with the paper's number where it gives one.
    requires : tuple of Cells
        The cells it reads; fewer seeds than ``min_seeds`` make the verdict ``not-run``.
    metric : str
        The results column the kind reads (``name.key`` for a dict metric).
    unit : str
        The unit of replication: ``"seed"``, ``"configuration"`` or a column name.
    kind : Kind
        What is measured over the units (:mod:`harness.claims.kinds`).
    hypothesis : Greater, Less or Within
        The test, with its margin written once.
    subject : str, Select or None
        The paper's method; rivals and added methods take its place.
    rivals : tuple of Rival
        Methods without the paper's mechanism; each must come out ``not-reproduced``.
    control : Control
        A change of the evidence under which the claim must come out ``not-reproduced``.
    family : str or None
        Holm's family (default: the plugin's package, so a third party's claims never
        change a paper's verdicts).
    max_units : int or None
        The most units ``harness run --decide`` may give the claim (default 4 x min_seeds).
    exploratory : bool
        A claim the paper does not make (the plugin's own reconstruction): evaluated and
        shown apart, in a Holm family of its own, outside the tally.
    """

    source: ClassVar[Source]
    statement: ClassVar[str]
    requires: ClassVar[tuple[Cells, ...]] = ()
    hypothesis: ClassVar[Hypothesis]
    unit: ClassVar[Any] = "seed"
    metric: ClassVar[str] = ""
    kind: ClassVar[Kind | None] = None
    subject: ClassVar[str | Select | None] = None
    rivals: ClassVar[tuple[Rival, ...]] = ()
    control_description: ClassVar[str] = ""
    family: ClassVar[str | None] = None
    max_units: ClassVar[int | None] = None
    exploratory: ClassVar[bool] = False

    # -- first contract: the claim's own statistic and control ---------------------------

    def statistic(self, results: pd.DataFrame) -> Estimate:
        """First contract only: the claim's test over the ok rows of its cells."""
        raise NotImplementedError(f"{type(self).__name__}.statistic is not implemented")

    def control(self, results: pd.DataFrame) -> pd.DataFrame:  # type: ignore[override]
        """First contract only: the results transformed so that the claim must not hold."""
        raise NotImplementedError(f"{type(self).__name__}.control is not implemented")

    # -- the declaration ---------------------------------------------------------------

    @classmethod
    def declared(cls) -> bool:
        """Whether the claim is a declaration (a ``kind``), not its own statistic."""
        return isinstance(cls.__dict__.get("kind", getattr(cls, "kind", None)), Kind)

    @classmethod
    def subject_select(cls) -> Select:
        """The subject's rows (all rows when the claim has no subject)."""
        subject = cls.subject
        if isinstance(subject, Select):
            return subject
        return Select(subject) if subject else Select()

    @classmethod
    def subject_method(cls) -> str | None:
        return cls.subject.method if isinstance(cls.subject, Select) else cls.subject

    @classmethod
    def family_name(cls) -> str:
        """Holm's family: ``family`` or the plugin's top-level package; exploratory claims
        form a family of their own beside it."""
        name = cls.family or cls.__module__.split(".")[0]
        return f"{name}:exploratory" if cls.exploratory else name

    @classmethod
    def required_cells(cls) -> tuple[Cells, ...]:
        """``requires`` and, for each rival, the subject's cells with the rival's method."""
        subject = cls.subject_method()
        extra = []
        for rival in cls.rivals:
            for need in cls.requires:
                if subject in need.methods:
                    extra.append(Cells(need.dataset, (rival.method,), need.dataset_params,
                                       dict(rival.params), need.min_seeds))  # fmt: skip
        return tuple(cls.requires) + tuple(extra)

    @classmethod
    def declaration_problems(cls) -> list[str]:
        """What is wrong with the class's declaration (checked when the registry is built,
        so a malformed claim leaves its plugin out instead of failing a run at its end)."""
        problems = []
        if not isinstance(getattr(cls, "source", None), Source):
            problems.append("source must be a harness.Source(paper, arxiv, where)")
        if not isinstance(getattr(cls, "statement", None), str) or not cls.statement.strip():
            problems.append("statement must be one falsifiable sentence")
        problems += _hypothesis_problems(getattr(cls, "hypothesis", None), cls.declared())
        requires = getattr(cls, "requires", None)
        if not isinstance(requires, tuple) or not all(isinstance(c, Cells) for c in requires):
            problems.append("requires must be a tuple of harness.Cells (a one-element tuple"
                            " needs its trailing comma)")  # fmt: skip
        elif not requires:
            problems.append("requires names no cells")
        kind = getattr(cls, "kind", None)
        if isinstance(kind, type):
            problems.append(f"kind must be an instance, e.g. {kind.__name__}(...), not the class")
        if cls.declared():
            problems += cls._declaration_v2_problems()
        problems += _family_problems(cls)
        try:  # its signature only: a claim's code runs in isolation (harness.claims.family)
            inspect.signature(cls).bind()
        except (TypeError, ValueError) as err:
            problems.append(f"cannot be built without arguments ({err})")
        return problems

    @classmethod
    def _declaration_v2_problems(cls) -> list[str]:
        problems = []
        if not isinstance(cls.metric, str) or not cls.metric:
            problems.append("metric must name a results column (a metric, or 'name.key')")
        if not isinstance(getattr(cls, "control", None), Control):
            problems.append("control must be a harness.claims control (Swap, UseMetric,"
                            " Permute, Transform, Randomised)")  # fmt: skip
        if not isinstance(cls.rivals, tuple) or not all(isinstance(r, Rival) for r in cls.rivals):
            problems.append("rivals must be a tuple of harness.Rival")
        else:
            subject = cls.subject_method()
            mine = dict(cls.subject_select().method_params)
            fixed = {  # the subject's params as its cells fix them
                k: v
                for need in _tuple(getattr(cls, "requires", ()))
                if isinstance(need, Cells) and subject in need.methods
                for k, v in need.method_params.items()
                if not isinstance(v, (list, tuple, set, frozenset))
            }
            for rival in cls.rivals:
                if rival.method == subject and any(
                    set(rival.params) == set(params)
                    and all(param_matches(rival.params[k], v) for k, v in params.items())
                    for params in (mine, {**fixed, **mine})
                ):
                    problems.append(f"rival {rival.method!r} is the subject itself")
            if cls.rivals and not subject:
                problems.append("rivals need a subject (the method they stand in for)")
            needs = getattr(cls, "requires", ())
            if (
                cls.rivals
                and subject
                and isinstance(needs, tuple)
                and not any(isinstance(c, Cells) and subject in c.methods for c in needs)
            ):
                problems.append(f"the subject {subject!r} is in none of the required cells")
        if cls.max_units is not None and not (
            isinstance(cls.max_units, int) and cls.max_units >= 2
        ):
            problems.append(f"max_units must be an int >= 2, got {cls.max_units!r}")
        return problems

    # -- evaluation ---------------------------------------------------------------------

    @property
    def alpha(self) -> float:
        return ALPHA if self.declared() else LEGACY_ALPHA

    def _verdict(self, status: Status, **fields: Any) -> Verdict:
        hypothesis = getattr(self, "hypothesis", None)
        band = None
        if isinstance(hypothesis, Hypothesis):
            band = hypothesis.band()
        statistic = self.kind.describe(self.metric) if self.declared() else ""  # type: ignore[union-attr]
        return Verdict(self.name, self.tasks()[0], str(getattr(self, "source", "")),
                       str(getattr(self, "statement", "")), str(hypothesis or ""),
                       str(self.unit), status, self.subject_method(), family=self.family_name(),
                       alpha=self.alpha, band=band, statistic=statistic,
                       exploratory=bool(self.exploratory), **fields)  # fmt: skip

    def selected(self, results: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
        """``(ok rows of the required cells, [each required cell short of seeds])``: the
        rows of each required cell in turn, each row once."""
        rows, missing = self._selected(Table(results))
        return rows.frame(), missing

    def _selected(self, results: Table) -> tuple[Table, list[str]]:
        """:meth:`selected` over a table: the rows as a table of the same frame."""
        ok = results.take(results.isin("status", ("ok",))) if "status" in results else results
        missing, parts = [], []
        for need in self.required_cells():
            mask = need.table_mask(ok)
            missing += need.shortfalls(ok, mask)
            parts.append(np.flatnonzero(mask))
        if not parts:
            return ok.take(np.zeros(len(ok), dtype=bool)), missing
        positions = np.concatenate(parts)
        _, first = np.unique(positions, return_index=True)
        rows = ok.at(positions[np.sort(first)])
        ids = rows.column("run_id")[0] if "run_id" in rows else None
        if ids is None or len(np.unique(ids)) < len(ids):
            rows = rows.at(_first_of_each(rows))  # rows alike in every column: one is kept
        return rows, missing

    def evaluate(self, results: pd.DataFrame | Table) -> Verdict:
        """The verdict from ``results`` (a ``harness results`` table of the task, any
        number of rows, or a :class:`~harness.claims.selection.Table` of one), before
        Holm. Never raises: a failing claim is ``error`` with its traceback, an unsound
        estimate ``error`` naming the field."""
        try:
            every = results if isinstance(results, Table) else Table(results)
            table, missing = self._selected(every)
            if missing:
                return self._verdict(Status.NOT_RUN, reason="missing cells: " + "; ".join(missing))
            estimate, status = self._test(table)
            problems = estimate_problems(estimate, legacy=not self.declared())
            if problems:
                return self._verdict(
                    Status.ERROR, reason="unsound estimate: " + "; ".join(problems)
                )
            control = self._control_outcome(table)
            rivals = {r.label: self._placed(table, r.select(), r.label, r.why)
                      for r in self.rivals}  # fmt: skip
            status, reason = _combine(status, control, rivals)
            if status == Status.INCONCLUSIVE and not reason:
                reason = refusal(estimate.test)
            ids = table.values("run_id") if "run_id" in table else []
            return self._verdict(status, estimate=estimate, control=control, rivals=rivals,
                                 added=self._added(every, table), reason=reason,
                                 run_ids=sorted(map(str, ids)))  # fmt: skip
        except (KeyboardInterrupt, GeneratorExit):
            raise
        except BaseException:  # plugin code, sys.exit included: its fault is its verdict
            return self._verdict(Status.ERROR, reason=traceback.format_exc())

    def _sample(self, rows: Table) -> Sample:
        return self.kind.sample(rows, self.metric, self.unit, self.subject_select())  # type: ignore[union-attr]

    def _test(self, rows: Table) -> tuple[Estimate, Status]:
        """The estimate of the declared margin's test and its status."""
        if not self.declared():
            estimate = self.statistic(rows.frame())
            if not isinstance(estimate, Estimate):
                return estimate, Status.ERROR  # estimate_problems names it
            return estimate, self.hypothesis.decide(estimate)
        sample = self._sample(rows)
        return _estimate(sample, self.hypothesis, self.alpha), self.hypothesis.status(
            sample, self.alpha
        )

    def _status_of(self, rows: Table) -> tuple[Status, Estimate | None, str]:
        try:
            estimate, status = self._test(rows)
        except (KeyboardInterrupt, GeneratorExit):
            raise
        except Exception as err:
            return Status.ERROR, None, f"{type(err).__name__}: {err}"
        problems = estimate_problems(estimate, legacy=not self.declared())
        if problems:
            return Status.ERROR, None, "; ".join(problems)
        return status, estimate, ""

    def _control_outcome(self, rows: Table) -> Outcome | None:
        if not self.declared():
            try:
                changed = self.control(rows.frame().copy())
            except NotImplementedError:
                return None
            status, estimate, reason = self._status_of(Table(changed))
            return Outcome("control", status, estimate, self.control_description, reason=reason)
        control: Control = type(self).control  # type: ignore[assignment]
        if not control.randomised:
            status, estimate, reason = self._status_of(control.applied(rows, self.metric))
            return Outcome("control", status, estimate, str(control), reason=reason)
        statuses, first = [], None
        for draw in range(control.draws):
            rng = np.random.default_rng([draw, 20_251_207])
            status, estimate, _ = self._status_of(control.applied(rows, self.metric, rng))
            statuses.append(status)
            first = first or estimate
        failed = sum(s == Status.NOT_REPRODUCED for s in statuses) / len(statuses)
        held = sum(s == Status.REPRODUCED for s in statuses) / len(statuses)
        status = (Status.NOT_REPRODUCED if failed >= 0.95 else
                  Status.REPRODUCED if held > 0.05 else Status.INCONCLUSIVE)  # fmt: skip
        return Outcome("control", status, first, str(control), control.draws, failed)

    def _placed(self, rows: Table, source: Select, name: str, why: str = "") -> Outcome:
        """The claim's test with ``source``'s rows in the subject's place."""
        try:
            changed = rows.swap(source, self.subject_select())
        except ValueError as err:
            return Outcome(name, Status.NOT_RUN, None, why, reason=str(err))
        status, estimate, reason = self._status_of(changed)
        return Outcome(name, status, estimate, why, reason=reason)

    def _added(self, results: Table, rows: Table) -> dict[str, Outcome]:
        """Each method of another plugin in ``results``, put in the subject's place."""
        subject = self.subject_method()
        if subject is None or "method" not in results:
            return {}
        named = {m for need in self.required_cells() for m in need.methods}
        ok = results.take(results.isin("status", ("ok",))) if "status" in results else results
        candidates = set(ok.values("method")) - named
        theirs = rows.isin("method", (subject,))
        if "plugin" in ok and theirs.any():
            own = set(rows.take(theirs).values("plugin"))
            candidates = set(ok.take(~ok.isin("plugin", list(own))).values("method")) - named
        if not candidates:
            return {}
        import pandas as pd

        out = {}
        frame = ok.frame()
        for method in sorted(candidates):
            needs = [need for need in self.requires if subject in need.methods]
            parts = [need.rows(frame, method) for need in needs]
            mine = pd.concat(parts) if parts else frame.iloc[:0]
            if mine.empty:
                continue
            placed = Table(pd.concat([rows.frame(), mine]))
            out[method] = self._placed(placed, Select(method), method)
        return out


def _first_of_each(rows: Table) -> np.ndarray:
    """The positions of ``rows`` that are the first of rows alike in every column
    (``DataFrame.drop_duplicates``), in order."""
    names = rows.names()
    if not names or not len(rows):
        return np.arange(len(rows))
    stacked = np.stack([rows.column(name)[0] for name in names], axis=1)
    _, first = np.unique(stacked, axis=0, return_index=True)
    return np.sort(first)


_CLASS_KEYS = frozenset({"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                         "__annotations__", "__firstlineno__", "__static_attributes__",
                         "__orig_bases__", "__parameters__"})  # fmt: skip


def core_only(cls: type[Claim]) -> bool:
    """Whether evaluating ``cls`` runs the core's code alone: a declaration whose classes
    below :class:`Claim` hold only values (no method, property or class of their own),
    each a plain value (text, number, None, a tuple, list or mapping of them) or one of the
    core's own kinds, hypotheses, controls, selections and cells, of exactly those types,
    with plain fields. Such claims cannot change what another claim sees, so
    :mod:`harness.claims.family` lets them share a forked child."""
    from harness.claims.controls import Permute, Swap, UseMetric
    from harness.claims.hypotheses import Greater, Less, Within
    from harness.claims.kinds import LogLogSlope, Mean, PairedGain, Rate, Ratio

    core = (Mean, PairedGain, LogLogSlope, Ratio, Rate, Greater, Less, Within, Swap,
            UseMetric, Permute, Select, Cells, Rival, Source)  # fmt: skip

    def plain(value: Any, depth: int = 0) -> bool:
        if depth > 8:
            return False
        if value is None or type(value) in (str, int, float, bool):
            return True
        if type(value) in (tuple, list, frozenset):
            return all(plain(v, depth + 1) for v in value)
        if type(value) is dict:
            return all(plain(k, depth + 1) and plain(v, depth + 1) for k, v in value.items())
        if type(value) in core:
            return all(plain(getattr(value, f.name), depth + 1)
                       for f in dataclasses.fields(value))  # fmt: skip
        return False

    if type(cls) is not type or not cls.declared():
        return False
    for klass in cls.__mro__:  # a mixin after Claim could still bring a __setattr__, say
        if klass in (Claim, Component, object):
            continue
        if type(klass) is not type:
            return False
        for key, value in vars(klass).items():
            if key not in _CLASS_KEYS and not plain(value):
                return False
    return True


def _family_problems(cls: type[Claim]) -> list[str]:
    """A ``family`` the claim's own distribution does not own: a family is named by the
    top-level package whose claims it holds (``harness_label_noise``, or
    ``harness_label_noise:<name>``), and only claims of that package's distribution may
    name it, so a third party's claims never join a paper's Holm family."""
    family = getattr(cls, "family", None)
    if family is None:
        return []
    if not isinstance(family, str) or not family.strip():
        return [f"family must be a name, got {shown(family, 40)}"]
    own, owner = cls.__module__.split(".")[0], family.split(":", 1)[0]
    if owner == own:
        return []
    theirs = _distributions(owner)
    if theirs and theirs & _distributions(own):  # one distribution installs both packages
        return []
    who = (f"distribution {', '.join(sorted(theirs))}" if theirs else
           f"package {owner!r}, not {own!r}")  # fmt: skip
    return [f"{cls.__name__} names family {family!r}, owned by {who}: a claim's family is its"
            f" own package's ({own!r} or '{own}:<name>')"]  # fmt: skip


def _distributions(package: str) -> set[str]:
    """The installed distributions that hold top-level ``package`` (read once, when a
    claim names a family of another package: scanning them takes a fifth of a second)."""
    return set(_packages().get(package, ()))


@functools.cache
def _packages() -> Mapping[str, list[str]]:
    from importlib.metadata import packages_distributions

    return packages_distributions()


def _tuple(value: Any) -> tuple:
    """``value`` if it is a tuple, else ``()`` (its own problem is named elsewhere)."""
    return value if isinstance(value, tuple) else ()


def _estimate(sample: Sample, hypothesis: Hypothesis, alpha: float) -> Estimate:
    low, high = sample.interval(1 - 2 * alpha)
    p = hypothesis.p_value(sample)
    return Estimate(sample.estimate, low, high, p,
                    sample.n, sample.mde(alpha), f"{sample.test}; {hypothesis}",
                    level=1 - 2 * alpha)  # fmt: skip


def _combine(
    status: Status, control: Outcome | None, rivals: Mapping[str, Outcome]
) -> tuple[Status, str]:
    """The claim's status once its control and rivals are known."""
    if status != Status.REPRODUCED:
        return status, ""
    if control is not None and control.status == Status.REPRODUCED:
        return Status.UNINFORMATIVE, "its control is reproduced too"
    held = [name for name, o in rivals.items() if o.status == Status.REPRODUCED]
    if held:
        return Status.UNINFORMATIVE, f"rival {', '.join(held)} reproduces it too"
    if control is not None and control.status != Status.NOT_REPRODUCED:
        return Status.INCONCLUSIVE, f"control undecided ({control.summary})"
    undecided = [
        f"{n} ({o.status})" for n, o in rivals.items() if o.status != Status.NOT_REPRODUCED
    ]
    if undecided:
        return Status.INCONCLUSIVE, f"rival undecided: {', '.join(undecided)}"
    return status, ""
