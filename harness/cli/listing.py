"""``harness list``: the installed plugins and each task's components, params and types."""

from __future__ import annotations

import inspect
import re
import typing
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from harness.cli.common import console, get_registry, literal, plain

if TYPE_CHECKING:
    from harness.plugins.registry import Registry


@click.command("list")
@click.option(
    "--task",
    "tasks",
    multiple=True,
    metavar="TASK",
    help="Only this task (repeatable), with its data and output types and their fields.",
)
def list_(tasks: tuple[str, ...]) -> None:
    """Plugins with versions; each task's components with their params (types and
    defaults); with --task, the task's data and output types too.

    Example: harness list --task fair-regression
    """
    registry = get_registry()
    for task in tasks:
        if task not in registry.tasks():
            registry.get("dataset", task, "", where="--task")  # lists the known tasks
    plugins = Table(title="Plugins")
    plugins.add_column("plugin")
    plugins.add_column("version")
    for name, version in sorted(registry.plugins.items()):
        plugins.add_row(*plain(name, version))
    if not tasks:
        console.print(plugins)
    for task in tasks or registry.tasks():
        if tasks:
            _print_task_types(registry, task)
        table = Table(title=f"task: {literal(task)}")
        for col in ("kind", "name", "plugin", "what it is", "params: type = default"):
            table.add_column(col, overflow="fold")
        for kind in registry.entries:  # dataset, method, metric, report, claim
            for name in registry.names(kind, task):
                entry = registry.get(kind, task, name)
                table.add_row(*_texts(kind, name, entry.plugin, *_described(kind, entry)))
        console.print(table)


def _texts(*values: Any) -> list[Any]:
    """``values`` as rich ``Text`` cells, shown as they are (control characters as their
    escapes) and never read as markup: what :func:`plain` gives, without markup to parse
    (a fifth of the rendering of ``harness list``)."""
    from rich.text import Text

    from harness.components import visible

    return [Text(visible(str(value))) for value in values]


def _described(kind: str, entry: Any) -> tuple[str, str]:
    """``(what it is, its params)`` of a component: from its class where that is imported
    already, else from its cached description (the plugin is not imported); for a claim,
    what it states, and what would make it hold."""
    from harness.plugins.catalog import describe_class

    part = describe_class(kind, entry.cls) if entry.loaded or not entry.part else entry.part
    if part.claim is not None:
        return part.claim.statement, f"estimate {part.claim.hypothesis}; {part.claim.source}"
    return part.summary, _params_text(part.params)


def params_text(cls: Any) -> str:
    """``n: int = 100, alpha: float (required)`` for a component's ``Params`` (bounds, where
    the type declares any, after the type: ``T: int (>= 1) = 10000``)."""
    from harness.plugins.catalog import param_facts

    return _params_text(param_facts(cls))


def _params_text(params: Any) -> str:
    out = []
    for param in params:
        bounds = f" ({param.range})" if param.range else ""
        tail = " (required)" if param.default is None else f" = {param.default}"
        out.append(f"{param.name}: {param.type}{bounds}{tail}")
    return ", ".join(out)


def _print_task_types(registry: Registry, task: str) -> None:
    """The task's data and output types (docs/design.md 'Plugin API'), field by field,
    with each field's line from the type's numpydoc ``Attributes`` section."""
    import dataclasses

    from harness.components import describe_type

    for role, kind in (("data", registry.data_type(task)), ("output", registry.output_type(task))):
        if kind is None:
            console.print(f"[yellow]task {literal(task)}: no annotated {role} type[/]")
            continue
        doc = (inspect.getdoc(kind) or "") if kind.__module__ != "builtins" else ""
        console.print(
            f"[bold]task {literal(task)}, {role} type[/] {literal(_type_name(kind))}:"
            f" {literal(doc.split(chr(10))[0])}",
            soft_wrap=True,
        )
        if not dataclasses.is_dataclass(kind):
            continue
        documented = attribute_docs(doc)
        table = Table(show_header=True)
        for col in ("field", "type", "documented as"):
            table.add_column(col, overflow="fold")
        hints = typing.get_type_hints(kind)
        for f in dataclasses.fields(kind):
            kind_text = describe_type(hints.get(f.name, f.type))
            table.add_row(*plain(f.name, kind_text, documented.get(f.name, "")))
        console.print(table)


def _type_name(kind: type) -> str:
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def attribute_docs(doc: str) -> dict[str, str]:
    """``{field: "type, shape (n,): its description"}`` from a numpydoc ``Attributes``
    section; the description is every indented line under the field, joined."""
    out: dict[str, str] = {}
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"^(\w+(?:, \w+)*) : (.+)$", line)
        if not match:
            continue
        follow = []
        for below in lines[i + 1 :]:
            if not below[:1].isspace() or not below.strip():
                break
            follow.append(below.strip())
        text = " ".join(follow)
        for name in match.group(1).split(", "):
            out[name] = match.group(2) + (f": {text}" if text else "")
    return out
