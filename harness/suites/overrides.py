"""Command-line changes to a suite: ``--seeds``, ``--repetitions``, ``--timeout``, the ``--set``
override language, ``--add-method`` and the ``--dataset``/``--method`` selections.

:class:`Overrides` holds the options as typed; :func:`apply_overrides` applies them to the
flattened runs of :mod:`harness.suites.expansion` (after includes, before counting), every problem
naming the option it came from (``--set dataset.n=abc: ...``), the option's text escaped and
cut when long.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.components import params_fields
from harness.errors import SuiteError
from harness.plugins.registry import Registry
from harness.redaction import shown
from harness.suites.expansion import FlatRun, Item, Selection
from harness.suites.safe_yaml import parse_yaml
from harness.suites.schema import check_seeds, check_timeout

__all__ = ["MAX_CELLS", "Overrides", "apply_overrides", "option_text", "unmatched_selections"]

#: Default cap on the cells of one suite (after includes, overrides and selection), checked
#: by counting before anything is expanded; ``harness run --max-cells N`` raises it.
MAX_CELLS = 100_000


@dataclass(frozen=True)
class Overrides:
    """Command-line changes to a suite, applied after it is read and before it is counted.

    Every field holds the option's text as typed, so an error can name the option.

    Attributes
    ----------
    seeds : str or None
        ``--seeds 0,1,2``: these seeds for every run (replaces ``seeds``/``repetitions``).
    repetitions : int or None
        ``--repetitions N``: seeds ``0 .. N-1`` for every run.
    timeout : str or None
        ``--timeout 20m``: this per-cell limit for every run.
    set : tuple of str
        ``--set KEY=VALUE`` (VALUE is YAML): ``runs[i].datasets[j].params.P``,
        ``runs[i].methods[j].grid.P`` (a list), ``runs[i].metrics[j].params.P``,
        ``runs[i].seeds``/``repetitions``/``timeout``, ``seeds``/``repetitions``/``timeout``
        (every run), or ``dataset.P``/``method.P``/``metric.P`` (every entry whose component
        has param ``P``). ``runs[i]`` counts the runs after includes are resolved, in order.
    methods, datasets : tuple of str
        ``--method NAME[param=value,...]``/``--dataset ...``: keep only these entries
        (repeatable, OR within a kind, AND across kinds); params pick configurations.
    add_methods : tuple of str
        ``--add-method NAME[param=value,...]``: add the method to every run of its task
        that keeps one of its own methods (or the added one, named by ``--method``) and a
        dataset after the selections.
    max_cells : int
        Refuse a suite with more cells than this (:data:`MAX_CELLS` by default).
    """

    seeds: str | None = None
    repetitions: int | None = None
    timeout: str | None = None
    set: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    add_methods: tuple[str, ...] = ()
    max_cells: int = MAX_CELLS

    def options(self) -> list[str]:
        """The overrides as command-line options, in the order they are applied."""
        out = [f"--seeds {self.seeds}"] if self.seeds is not None else []
        out += [f"--repetitions {self.repetitions}"] if self.repetitions is not None else []
        out += [f"--timeout {self.timeout}"] if self.timeout is not None else []
        out += [f"--set {s}" for s in self.set]
        out += [f"--dataset {s}" for s in self.datasets]
        out += [f"--method {s}" for s in self.methods]
        out += [f"--add-method {s}" for s in self.add_methods]
        out += [f"--max-cells {self.max_cells}"] if self.max_cells != MAX_CELLS else []
        return out


_SET_ITEM = re.compile(
    r"runs\[(\d+)\]\.(datasets|methods|metrics)\[(\d+)\]\.(params|grid)\.([A-Za-z_]\w*)"
)
_SET_RUN = re.compile(r"runs\[(\d+)\]\.(seeds|repetitions|timeout)")
_SET_EVERY = re.compile(r"(dataset|method|metric)\.([A-Za-z_]\w*)")
_SET_KEYS = (
    "runs[i].datasets[j].params.P (also .grid.P, methods[j], metrics[j]), runs[i].seeds,"
    " runs[i].repetitions, runs[i].timeout, seeds, repetitions, timeout, dataset.P, method.P"
    " or metric.P"
)
_SELECTOR = re.compile(r"\s*([a-z0-9]+(?:-[a-z0-9]+)*)\s*(?:\[(.*)\])?\s*", re.DOTALL)


def option_text(flag: str, text: str, limit: int = 200) -> str:
    """``--flag TEXT`` as messages name it: non-ASCII and invisible characters escaped, a
    text longer than ``limit`` cut with its length stated."""
    if not (text.isascii() and text.isprintable()):
        text = ascii(text)[1:-1]
    if len(text) > limit:
        text = f"{text[: limit - 50]}... ({len(text):,} characters)"
    return f"{flag} {text}"


def _option_value(option: str, text: str, problems: list[str]) -> tuple[bool, Any]:
    """(ok, value) of a command-line value read as YAML (``500``, ``[1, 2]``, ``ridge``)."""
    try:
        return True, parse_yaml(option, text)
    except SuiteError as err:
        problems.append(str(err))
        return False, None


def _split_commas(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char in "[{(") - (char in "]})")
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


def _selector(option: str, text: str, problems: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``NAME`` or ``NAME[param=value,...]`` -> (name, {param: value})."""
    match = _SELECTOR.fullmatch(text)
    if not match:
        problems.append(
            f"{option}: expected NAME or NAME[param=value,...] (e.g. 'mean[shift=1.0]')."
        )
        return None
    params: dict[str, Any] = {}
    for part in _split_commas(match.group(2) or ""):
        key, sep, value = part.partition("=")
        if not sep or not key.strip().isidentifier():
            problems.append(f"{option}: expected param=value inside [...], got {shown(part)}.")
            return None
        if key.strip() in params:
            problems.append(f"{option}: param '{key.strip()}' is given twice inside [...].")
            return None
        ok, params[key.strip()] = _option_value(option, value, problems)
        if not ok:
            return None
    return match.group(1), params


def _set_param(item: Item, part: str, key: str, value: Any, option: str, problems: list[str]):
    if part == "grid":
        if not isinstance(value, list) or not value:
            problems.append(f"{option}: a grid is a non-empty list of values like [1, 2, 3].")
            return
        item.grid[key] = value
        item.params.pop(key, None)
    else:
        item.params[key] = value
        item.grid.pop(key, None)
    item.origins[key] = option


def _set_run(run: FlatRun, key: str, value: Any, option: str, problems: list[str]) -> None:
    if key == "timeout":
        before = len(problems)
        timeout = check_timeout(value, option, problems)
        if len(problems) == before:
            run.timeout = timeout
        return
    seeds = check_seeds(
        value if key == "seeds" else None,
        value if key == "repetitions" else None,
        f"{option}: ",
        problems,
    )
    if seeds is not None:
        run.seeds = seeds


def _apply_set(text: str, runs: list[FlatRun], registry: Registry, problems: list[str]) -> None:
    option = option_text("--set", text)
    key, sep, value_text = text.partition("=")
    key = key.strip()
    if not sep:
        problems.append(f"{option}: expected KEY=VALUE (e.g. --set dataset.n=500).")
        return
    ok, value = _option_value(option, value_text, problems)
    if not ok:
        return
    if key in ("seeds", "repetitions", "timeout"):
        for run in runs:
            _set_run(run, key, value, option, problems)
        return
    if match := _SET_EVERY.fullmatch(key):
        kind, param = match.groups()
        count = 0
        for run in runs:
            for item in getattr(run, f"{kind}s"):
                entry = registry.entries[kind].get((run.task, item.name))
                if entry is not None and param in params_fields(entry.cls.Params):
                    _set_param(item, "params", param, value, option, problems)
                    count += 1
        if not count:
            names = sorted({item.name for run in runs for item in getattr(run, f"{kind}s")})
            problems.append(
                f"{option}: no {kind} of the suite has a param '{param}' (its {kind}s:"
                f" {', '.join(names) or '(none)'}). See 'harness list'."
            )
        return
    match = _SET_ITEM.fullmatch(key) or _SET_RUN.fullmatch(key)
    if match is None:
        problems.append(f"{option}: unknown key {shown(key)}. Use {_SET_KEYS}.")
        return
    i = int(match.group(1))
    if i >= len(runs):
        problems.append(
            f"{option}: the suite has {len(runs)} run(s), runs[0] to runs[{len(runs) - 1}]"
            " (included suites' runs first, in file order)."
        )
        return
    if match.re is _SET_RUN:
        _set_run(runs[i], match.group(2), value, option, problems)
        return
    _, kind, j, part, param = match.groups()
    entries = getattr(runs[i], kind)
    if int(j) >= len(entries):
        problems.append(f"{option}: runs[{i}] has {len(entries)} {kind}.")
    elif kind == "metrics" and part == "grid":
        problems.append(f"{option}: metrics take params only, no grid.")
    else:
        _set_param(entries[int(j)], part, param, value, option, problems)


def _add_methods(runs: list[FlatRun], texts: Sequence[str], registry, problems) -> None:
    for text in texts:
        option = option_text("--add-method", text)
        selected = _selector(option, text, problems)
        if selected is None:
            continue
        name, params = selected
        targets = [r for r in runs if (r.task, name) in registry.entries["method"]]
        if not targets:
            tasks = sorted({r.task for r in runs})
            known = sorted({n for t in tasks for n in registry.names("method", t)})
            owners = [t for t in registry.tasks() if (t, name) in registry.entries["method"]]
            hint = f" '{name}' is a method of task {', '.join(owners)}." if owners else ""
            problems.append(
                f"{option}: no method {shown(name)} for the suite's tasks ({', '.join(tasks)})."
                f"{hint}"
                f" Known: {', '.join(known) or '(none)'}. See 'harness list'."
            )
            continue
        for run in targets:
            origins = dict.fromkeys(params, option)
            run.methods.append(Item(name, dict(params), {}, option, origins, added=True))


def _select(runs: list[FlatRun], kind: str, texts: Sequence[str], problems: list[str]) -> bool:
    """Keep the ``kind`` entries named by ``texts``; False when nothing was selected."""
    if not texts:
        return False
    attr = f"{kind}s"
    selectors = []
    for text in texts:
        option = option_text(f"--{kind}", text)
        selected = _selector(option, text, problems)
        if selected is not None:
            selectors.append((option, *selected))
    present = sorted({item.name for run in runs for item in getattr(run, attr)})
    hint = " To run a method the suite does not list, use --add-method." if kind == "method" else ""
    for option, name, _ in selectors:
        if name not in present:
            missing = f"{option}: no {kind} {shown(name)} in the suite"
            problems.append(f"{missing}. Known: {', '.join(present)}.{hint}")
    for run in runs:
        kept = []
        for item in getattr(run, attr):
            chosen = [(option, params) for option, name, params in selectors if name == item.name]
            if item.added:  # asked for explicitly: kept whole
                kept.append(item)
            elif chosen:
                item.filters = None if any(not p for _, p in chosen) else chosen
                kept.append(item)
        setattr(run, attr, kept)
    return True


def apply_overrides(
    runs: list[FlatRun], ov: Overrides, registry: Registry, problems: list[str]
) -> None:
    """Apply the overrides, added methods and selections of ``ov`` to ``runs`` (in place),
    appending each problem, naming its option, to ``problems``."""
    if ov.seeds is not None and ov.repetitions is not None:
        both = f"{option_text('--seeds', ov.seeds)} --repetitions {ov.repetitions}"
        problems.append(f"{both}: give one, not both.")
    elif ov.seeds is not None:
        option = option_text("--seeds", ov.seeds)
        try:
            values = [int(part) for part in ov.seeds.split(",")]
        except ValueError:
            problems.append(f"{option}: expected whole numbers separated by commas, like 0,1,2.")
        else:
            for run in runs:
                _set_run(run, "seeds", values, option, problems)
    elif ov.repetitions is not None:
        for run in runs:
            _set_run(
                run, "repetitions", ov.repetitions, f"--repetitions {ov.repetitions}", problems
            )
    if ov.timeout is not None:
        option = option_text("--timeout", ov.timeout)
        for run in runs:
            if ov.timeout.strip().lower() == "none":
                run.timeout = None
            else:
                _set_run(run, "timeout", ov.timeout, option, problems)
    for text in ov.set:
        _apply_set(text, runs, registry, problems)
    _add_methods(runs, ov.add_methods, registry, problems)
    selected = _select(runs, "dataset", ov.datasets, problems)
    selected = _select(runs, "method", ov.methods, problems) or selected
    if selected:
        # An added method joins only the runs that keep one of their own methods (or the
        # added one, named by --method): a run whose methods --method removed is dropped,
        # not run with the added method alone (its cells doubled another run's).
        named = {m.group(1) for t in ov.methods if (m := _SELECTOR.fullmatch(t))}
        for run in runs:
            if not any(not item.added or item.name in named for item in run.methods):
                run.methods = []
        runs[:] = [run for run in runs if run.datasets and run.methods]
        if not runs and not problems:
            options = [option_text("--dataset", d) for d in ov.datasets] + [
                option_text("--method", m) for m in ov.methods
            ]
            problems.append(
                f"{' '.join(options)}: no run of the suite has both a selected dataset and a"
                " selected method."
            )


def unmatched_selections(ov: Overrides, selection: Selection, problems: list[str]) -> None:
    """Append a problem for each ``--dataset``/``--method`` selection with params that
    matched no configuration while the runs expanded (``selection``), naming what it met."""
    for text in ov.datasets + ov.methods:
        kind = "dataset" if text in ov.datasets else "method"
        option = option_text(f"--{kind}", text)
        if "[" in text and option not in selection.hits:
            if any(p.startswith(option) for p in problems):
                continue
            tried = "; ".join(dict.fromkeys(selection.seen.get(option, [])).keys()) or "none"
            problems.append(
                f"{option}: no configuration in the suite matches these params (it has:"
                f" {tried[:300]})."
            )
