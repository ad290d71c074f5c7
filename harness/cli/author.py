"""Commands for plugin authors: ``harness new-plugin`` and ``harness check-plugin``."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from harness.cli.common import ExitCode, console, get_registry, session


@click.command("new-plugin")
@click.argument("name")
@click.option(
    "--task",
    default=None,
    metavar="TASK",
    help="Add one method to this existing task (a method-only package) instead of a new task.",
)
@click.option(
    "--dir",
    "parent",
    default="plugins",
    show_default=True,
    type=click.Path(),
    help="Where the package folder is created.",
)
def new_plugin(name: str, task: str | None, parent: str) -> None:
    """Create a ready-to-install plugin package: a new task NAME, or with --task one method
    NAME for an existing task (typed against its public API, with a suite and a test).

    Examples: harness new-plugin my-paper; harness new-plugin my-method --task fair-regression
    """
    from harness.plugins.scaffold import typed_path, write_method_plugin, write_skeleton

    if task:
        folder = write_method_plugin(name, task, Path(parent), get_registry())
    else:
        folder = write_skeleton(name, Path(parent))
    shown = typed_path(folder)
    console.print(
        escape(
            f"Created {shown}. Next: pip install -e {shown} && harness check-plugin {name}"
            f" && harness run {shown}/suites/{name}.yaml"
        )
    )


@click.command("check-plugin")
@click.argument("name")
def check_plugin(name: str) -> None:
    """Run the conformance checks of harness.plugins.testing on the installed plugin NAME: its
    components, and every claim's cells, subject and rivals against its task's datasets,
    methods and params."""
    from harness.plugins.testing import run_checks

    results = run_checks(name, session().registry)
    table = Table(title=f"Conformance of '{name}'")
    for col in ("check", "result", "message"):
        table.add_column(col, overflow="fold")
    colour = {"passed": "green", "failed": "red", "skipped": "yellow"}
    for check_id, outcome, message in results:
        table.add_row(escape(check_id), f"[{colour[outcome]}]{outcome}[/]", escape(message))
    console.print(table)
    failed = sum(outcome == "failed" for _, outcome, _ in results)
    console.print(f"{len(results) - failed} passed or skipped, {failed} failed")
    if failed:
        sys.exit(ExitCode.FAILED)
