"""The report document and its one renderer: the same :class:`Document` rendered by two
Jinja2 templates (``templates/report.md.j2``, ``templates/report.html.j2``) to Markdown
and to self-contained HTML.

A :class:`Document` holds what a report says (title, tallies, verdicts, per task the best
methods, the mean ± CI table, what it leaves out, each plugin report's tables and figures);
the templates only decide how each format shows it. A table is turned into text once
(:func:`grid`: numbers to 3 significant digits) and laid out by each template's ``table``
macro.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.claims.verdicts import (
    HEADER,
    Verdict,
    count_line,
    legend,
    table_rows,
    verdicts_markdown,
)
from harness.components import visible
from harness.lazy import LazyModule
from harness.reports.aggregates import format_number, noise_floor

pd = LazyModule("pandas")

__all__ = [
    "FOREST_CAPTION",
    "Document",
    "Grid",
    "Part",
    "Section",
    "anchor",
    "fenced",
    "grid",
    "markdown_cell",
    "markdown_text",
    "render",
]


FOREST_CAPTION = (
    "Every claim on a row of its own, on its own scale: the grey numbers at a row's ends are"
    " the values there, so that a rate exponent, an error and a ratio are each read against"
    " their own margin. The shaded span holds the values the claim allows (its margin a"
    " dashed line); the dot and line are the estimate and its interval (95% unless the row"
    " says otherwise), coloured by verdict; x marks a rival and a hollow diamond the control,"
    " each with its own estimate in the subject's place (both must fail); a mark at a row's"
    " very end lies beyond it."
)
"""Under the forest plot (``claims.png``) in both formats."""


@dataclass(frozen=True)
class Part:
    """One output of a plugin report in a task's section: a table, a figure (a PNG file
    beside the report, embedded in the HTML as base64), or a note that the report was
    skipped or failed."""

    name: str
    anchor: str = ""
    table: pd.DataFrame | None = None
    image: str = ""  # the PNG's file name in the report folder
    data: str = ""  # the PNG, base64
    note: str = ""


@dataclass(frozen=True)
class Section:
    """What a report says about one task."""

    task: str
    anchor: str
    tally: str
    best: pd.DataFrame  # harness.reports.tables.best_methods; empty: no line
    table: pd.DataFrame  # harness.reports.tables.summary_table; empty: no table
    table_anchor: str
    settings: str = ""  # harness.reports.tables.shared_settings
    problems: Sequence[str] = ()  # harness.reports.tables.problem_lines
    parts: Sequence[Part] = ()


@dataclass(frozen=True)
class Document:
    """A whole report: its header, the claims' verdicts, then one section per task."""

    title: str
    tally: str  # over the whole suite
    provenance: str  # the tally, the latest cell's time and the commits
    coverage: str = ""  # how many of the suite's cells have no result
    chosen: str = ""  # the options that chose the cells
    verdicts: Sequence[Verdict] = ()
    forest: str = ""  # the verdicts' forest plot (claims.png), base64
    sequences: str = ""  # the decided claims' confidence sequences (sequences.png), base64
    sections: Sequence[Section] = field(default_factory=list)


def anchor(*parts: str) -> str:
    """An HTML id from text: every character that is not a letter or digit as ``-``."""
    return "-".join("".join(ch if ch.isalnum() else "-" for ch in p) for p in parts)


@dataclass(frozen=True)
class Grid:
    """A table as text, as both formats show it: column names and rows of cell strings
    (floats to 3 significant digits, round-off noise as ``0``, a missing float as ``""``)."""

    columns: list[str]
    rows: list[list[str]]


def grid(table: pd.DataFrame) -> Grid:
    """The text of a table: a named index as the first columns, float columns by
    :func:`harness.reports.aggregates.format_number` below the column's
    :func:`harness.reports.aggregates.noise_floor`, every other value as ``str``. One pass over the
    cells: linear in rows times columns, however wide."""
    named = any(name is not None for name in table.index.names)
    frame = table.reset_index() if named else table
    values = frame.to_numpy(dtype=object)
    rows = [[str(v) for v in row] for row in values]
    for i, dtype in enumerate(frame.dtypes):
        if pd.api.types.is_float_dtype(dtype):
            column = values[:, i].astype(float)
            noise = noise_floor(column)
            for row, value in zip(rows, column, strict=True):
                row[i] = format_number(value, noise=noise)
    return Grid([str(c) for c in frame.columns], rows)


_MARKUP = re.compile(r"([\\`\[\]<>|])")
"""What would make Markdown of a text: a backslash, a code span, a link, raw HTML, a column."""

_LEADING = re.compile(r"^([#>+=*-]|\d+(?=[.)]))")
"""What makes a heading, a quote, a list item or a setext underline of a line's start."""


def markdown_cell(value: str) -> str:
    """A Markdown table cell shown as written: one line (line breaks as spaces), ``|``
    escaped so that a label such as ``mode=a|b`` stays in its column, and every character
    that would make a link, a code span or raw HTML escaped (``[x](javascript:...)``,
    ``<img onerror>`` are printed, never followed), control characters as escapes."""
    return _MARKUP.sub(r"\\\1", " ".join(visible(str(value)).splitlines()))


def markdown_text(value: str) -> str:
    """A text from a plugin, a suite or a store as one Markdown paragraph shown as written:
    :func:`markdown_cell`, and a leading ``#``, ``>``, ``-``, ``1.`` escaped, so that it
    never starts a heading, a quote or a list."""
    text = markdown_cell(value).strip()
    return _LEADING.sub(
        lambda m: m.group() + "\\" if m.group()[0].isdigit() else "\\" + m.group(), text
    )


def fenced(text: str, info: str = "text") -> str:
    """``text`` in a Markdown code block that no text can close: the fence is one backtick
    longer than the longest run of backticks in ``text`` (CommonMark closes a fence only with
    one at least as long), so a traceback holding a code fence stays inside it; control
    characters as escapes."""
    text = visible(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


@functools.cache
def _environment(kind: str) -> Any:
    """The Jinja2 environment of one format (``"md"`` or ``"html"``, autoescaped), built
    on first use: jinja2 is imported only by a command that writes a report."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("harness.reports", "templates"),
        autoescape=kind == "html",
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["grid"] = grid
    env.filters["markdown_cell"] = markdown_cell
    env.filters["markdown_text"] = markdown_text
    env.filters["fenced"] = fenced
    env.globals.update(
        header=HEADER,
        table_rows=table_rows,
        count_line=count_line,
        legend=legend,
        forest_caption=FOREST_CAPTION,
        verdicts_markdown=verdicts_markdown,
    )
    return env


def render(document: Document) -> tuple[str, str]:
    """The report as ``(markdown, html)``: one document, two templates."""
    md = _environment("md").get_template("report.md.j2").render(doc=document)
    page = _environment("html").get_template("report.html.j2").render(doc=document)
    return md.rstrip("\n") + "\n", page
