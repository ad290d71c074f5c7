"""What every ``harness`` command shares: the consoles, the exit codes, the installed
plugins, the options that shape a suite and the helpers that print values as they are."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from rich.table import Table

from harness.components import visible
from harness.errors import StoreError, SuiteError

if TYPE_CHECKING:
    from harness.plugins.registry import Registry
    from harness.store.tracking import Tracker
    from harness.suites.loading import Suite
    from harness.suites.overrides import Overrides


class ShownConsole(Console):
    """A rich console that shows every character it is given and obeys none: what is left
    of a control character (ESC, OSC, C1, a bidi override) after the text was built is
    written as its escape (:func:`harness.components.visible`) just before rich adds its
    own styles. The net under :func:`plain` and :func:`literal`, which also escape markup."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        shown = (s if s.control else Segment(visible(s.text), s.style) for s in buffer)
        return super()._render_buffer(shown)


# Wide tables stay readable in log files (rich would wrap them at 80 columns).
console = ShownConsole(highlight=False, width=None if sys.stdout.isatty() else 200)
err_console = ShownConsole(stderr=True, highlight=False)


class ExitCode(IntEnum):
    """What ``harness`` exits with: one meaning each, mapped from errors in ``main``."""

    OK = 0
    FAILED = 1  # cells failed or timed out, check-plugin failed, the UI or server failed
    BAD_INPUT = 2  # a bad suite, option, plugin or store: nothing was run
    CLAIMS_FAILED = 3  # --strict-claims: a claim not reproduced or uninformative
    INTERRUPTED = 130  # Ctrl-C
    TERMINATED = 143  # 128 + SIGTERM, as shells report a process ended by it


@dataclass(frozen=True)
class Session:
    """What one ``harness`` command line runs with (click's ``ctx.obj``).

    :param argv: the arguments after ``harness``, as typed (the resume command repeats them).
    :param registry: the components to use; ``None``: every installed plugin's.
    """

    argv: tuple[str, ...] = ()
    registry: Registry | None = None


def session() -> Session:
    """The :class:`Session` of the running command (an empty one outside ``main``)."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_object(Session) if ctx is not None else None
    return obj if obj is not None else Session(tuple(sys.argv[1:]))


def get_registry() -> Registry:
    """The installed plugins (or the session's registry), scoped: a plugin enters when a
    task of its is looked up, and is imported only when a class of its is used
    (:meth:`harness.plugins.registry.Registry.scoped`), so a command imports the plugins of the
    tasks it names and no other. Each plugin left out as broken is reported here, once."""
    given = session().registry
    if given is not None:
        return given.scoped() if hasattr(given, "scoped") else given
    from harness.plugins.registry import build_registry

    built = build_registry()
    for name, fault in built.broken.items():
        err_console.print(f"[yellow]warning:[/] plugin '{name}' left out: {escape(fault)}")
    return built.scoped()


def load(path: str, overrides: Overrides | None = None) -> tuple[Registry, Suite]:
    """``(registry, suite)``: the suite at ``path`` shaped by ``overrides``; the registry
    holds the plugins of the suite's tasks (:func:`get_registry`)."""
    from harness.suites.loading import load_suite

    components = get_registry()
    return components, load_suite(Path(path), components, overrides)


def suite_options(command: Any) -> Any:
    """The options that shape the suite before it runs (issue 13/14): overrides, selection
    and the cell cap; errors in them exit 2 naming the option
    (see harness.suites.overrides.Overrides)."""
    options = [
        click.option("--seeds", metavar="0,1,...", help="Run these seeds in every run."),
        click.option(
            "--repetitions",
            type=click.IntRange(min=1),
            metavar="N",
            help="Run seeds 0 to N-1 in every run.",
        ),
        click.option(
            "--timeout",
            metavar="DURATION",
            help="Per-cell limit for every run, e.g. 20m or 90s ('none': no limit).",
        ),
        click.option(
            "--set",
            "set_",
            multiple=True,
            metavar="KEY=VALUE",
            help="Change one value (YAML): runs[0].datasets[0].params.n=500, or dataset.n=500"
            " for every dataset with param n (also method.P, metric.P, seeds, timeout).",
        ),
        click.option(
            "--dataset",
            "datasets",
            multiple=True,
            metavar="NAME[p=v,...]",
            help="Keep only these datasets (repeatable); [p=v] picks configurations.",
        ),
        click.option(
            "--method",
            "methods",
            multiple=True,
            metavar="NAME[p=v,...]",
            help="Keep only these methods (repeatable); [p=v] picks configurations.",
        ),
        click.option(
            "--add-method",
            "add_methods",
            multiple=True,
            metavar="NAME[p=v,...]",
            help="Add this method to every run of its task that keeps a method and a dataset"
            " after --method/--dataset (repeatable).",
        ),
        click.option(
            "--max-cells",
            type=click.IntRange(min=1),
            metavar="N",
            default=None,
            help="Refuse suites with more cells than this [default: 100,000].",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def overrides(shape: dict[str, Any]) -> Any:
    """The :class:`harness.suites.overrides.Overrides` of the :func:`suite_options` given."""
    from harness.suites.overrides import MAX_CELLS, Overrides

    return Overrides(
        seeds=shape["seeds"],
        repetitions=shape["repetitions"],
        timeout=shape["timeout"],
        set=tuple(shape["set_"]),
        methods=tuple(shape["methods"]),
        datasets=tuple(shape["datasets"]),
        add_methods=tuple(shape["add_methods"]),
        max_cells=shape["max_cells"] or MAX_CELLS,
    )


def plain(*values: Any) -> list[str]:
    """``values`` as table cells shown as they are: rich reads ``[word]`` in a string as
    markup, so a docstring's ``[a, b]`` or a param value's ``[x]`` would vanish and a
    ``[/]`` would raise ``MarkupError``; escaped, every bracket is printed, and every
    control character is written as its escape (:func:`literal`)."""
    return [literal(v) for v in values]


def literal(value: Any) -> str:
    """``value`` as text for a rich console, shown and never obeyed: its markup escaped
    (``[bold]`` printed as written) and its control characters written as escapes (an ESC
    or OSC sequence, a right-to-left override: :func:`harness.components.visible`). Every
    text from a plugin, a suite or a store is printed through it."""
    return escape(visible(str(value)))


def duration(seconds: float) -> str:
    """``8 min 42 s``, ``1 h 3 min``, ``12.3 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def existing_store(tracking_uri: str | None) -> Tracker:
    """The store at ``tracking_uri``, which must exist already: reading results never
    creates one (a mistyped path would answer 'no runs' from a new, empty store)."""
    from harness.store.tracking import Tracker, resolve_uri, sqlite_store_missing

    uri = resolve_uri(tracking_uri)
    if sqlite_store_missing(uri):
        raise StoreError(f"No store at {uri}: check --tracking-uri, or run 'harness run' first.")
    return Tracker(uri)


def report_folder(
    report_dir: Path, name: str, selection: list[str], claims: tuple[str, ...] = ()
) -> Path:
    """Where a suite's report goes: ``report_dir/<suite>`` for the whole suite (also with
    --seeds or --add-method, which the report names). A part of it (cells chosen by --set,
    --dataset, --method or --claim) goes apart, never over the whole suite's report nor
    over another suite's: ``<suite>+claim-<names>``, then the options as a name
    (``<suite>+dataset-noise``; '+' is no character of a suite name), with an 8-hex-digit
    digest of them when a character could not be kept or the name would pass 200
    characters (``<suite>+method-mean-shift-1-<digest>`` for ``--method mean[shift=1]``)."""
    import hashlib
    import re

    from harness.suites.schema import safe_name

    chosen = [o for o in selection if o.startswith(("--set ", "--dataset ", "--method "))]
    part = f"+claim-{'-'.join(claims)}" if claims else ""
    text = " ".join(option[2:] for option in chosen)
    if chosen:
        part += "+" + re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")
    folder = safe_name(name) + re.sub(r"[^A-Za-z0-9._+-]+", "-", part)
    digest = hashlib.sha256(f"{part} {text}".encode()).hexdigest()[:8]
    if re.search(r"[^A-Za-z0-9._ -]", text) or len(folder) > 200:
        folder = f"{folder[:191]}-{digest}"
    return report_dir / folder


def claim_cells(registry: Registry, spec: Suite, names: Sequence[str]) -> Any:
    """``spec`` with only the cells the claims ``names`` need (``harness run --claim``), and
    ``--claim NAME`` added to its options (``expanded["overrides"]``), which the logged suite
    keeps: ``harness report`` without SUITE selects the same cells again, and the report
    names the claims.

    :raises SuiteError: a name no installed claim has, or a claim none of whose cells is
        in ``spec``.
    """
    import dataclasses

    from harness.claims.evidence import cells_of, suite_claims

    options = list(spec.expanded.get("overrides") or [])
    cells = cells_of(suite_claims(registry, spec.cells, names), spec.cells, _added(options))
    if not cells:
        raise SuiteError(
            f"Suite '{spec.name}' has no cell that claim {', '.join(names)} needs; its"
            " requirements are in 'harness claims SUITE --format json'."
        )
    claims = [f"--claim {n}" for n in names if f"--claim {n}" not in options]
    expanded = {**spec.expanded, "overrides": [*options, *claims]}
    return dataclasses.replace(spec, cells=cells, expanded=expanded)


def _added(options: Sequence[str]) -> list[str]:
    """The methods ``--add-method`` adds, from a suite's options."""
    return [
        option.split(" ", 1)[1].split("[", 1)[0].strip()
        for option in options
        if option.startswith("--add-method ")
    ]


def family_cells(registry: Registry, spec: Suite, names: Sequence[str]) -> Any:
    """``spec`` with only the cells that the families of the claims ``names`` need: the
    evidence from which ``harness run --claim`` gives its verdicts (read from the store),
    so that Holm counts each family as the whole suite does and a claim's verdict is the
    one the whole suite gives it (docs/design.md, "Claims")."""
    import dataclasses

    from harness.claims import family_of
    from harness.claims.evidence import cells_of, registered, suite_claims

    every = registered(registry)
    asked = suite_claims(registry, spec.cells, names)
    family = list(dict.fromkeys(c for cls in asked for c in family_of(cls, every)))
    added = _added(spec.expanded.get("overrides") or [])
    return dataclasses.replace(spec, cells=cells_of(family, spec.cells, added))


def _set_claim_timeout(ctx: click.Context, param: click.Parameter, value: float | None) -> None:
    """``--claim-timeout``: set ``HARNESS_CLAIM_TIMEOUT`` for the claims this command
    evaluates; without it, refuse a bad ``HARNESS_CLAIM_TIMEOUT`` now (exit 2), not after
    the cells ran."""
    import os

    from harness.claims.isolation import claim_timeout

    if value is not None:
        os.environ["HARNESS_CLAIM_TIMEOUT"] = repr(value)
        return
    try:
        claim_timeout()
    except ValueError as err:
        raise SuiteError(f"{err}; or pass --claim-timeout SECONDS.") from None


def claim_timeout_option(command: Any) -> Any:
    """``--claim-timeout SECONDS`` (``harness run`` and ``harness claims``)."""
    return click.option(
        "--claim-timeout",
        type=click.FloatRange(min=0, min_open=True),
        metavar="SECONDS",
        default=None,
        expose_value=False,
        callback=_set_claim_timeout,
        help="Time limit of each claim's evaluation, which runs in a process of its own; a"
        " claim past it, or whose code ends its process, is 'error' and the others stand"
        " [default: $HARNESS_CLAIM_TIMEOUT, else 60].",
    )(command)


def print_frame(table: Any, title: str, per_table: int = 6) -> None:
    """Print a summary table about ``per_table`` metric columns at a time (many metrics
    would squeeze every column to a few characters), never splitting a dict metric's keys
    (``power.rate``, ``power.high``) across two tables."""
    if table.empty:
        return
    metrics = [c for c in table.columns if c != "seeds"]
    chunks: list[list[str]] = [[]]
    for col in metrics:
        family = col.split(".", 1)[0].split(" ", 1)[0]
        last = chunks[-1][-1].split(".", 1)[0].split(" ", 1)[0] if chunks[-1] else None
        if len(chunks[-1]) >= per_table and family != last:
            chunks.append([])
        chunks[-1].append(col)
    for i, chunk in enumerate(chunks):
        rich_table = Table(title=escape(title) if i == 0 else None)
        for name in plain(*table.index.names):
            rich_table.add_column(name, overflow="fold")
        for col in plain("seeds", *chunk):
            rich_table.add_column(col, justify="right", overflow="fold")
        for index, row in table[["seeds", *chunk]].iterrows():
            keys = index if isinstance(index, tuple) else (index,)
            rich_table.add_row(*plain(*keys, *row))
        console.print(rich_table)
