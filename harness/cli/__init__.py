"""The ``harness`` command. The only package that prints or exits.

Exit codes (:class:`ExitCode`): 0 every cell ok or skipped; 1 some cells failed or timed
out; 2 bad input (suite, arguments, unknown plugin or component), with nothing written to
the store; 3 with --strict-claims, a claim not reproduced or uninformative (every cell ok);
130 interrupted (Ctrl-C), 143 terminated (SIGTERM), every finished cell kept.

One module per concern: ``run`` (and ``plan``, ``progress``, ``summary``: its dry run, its
progress display, what it prints at the end), ``read`` (results, claims, report, validate),
``listing`` (list), ``serve`` (ui, server), ``author`` (new-plugin, check-plugin), and
``common`` (what they share).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from harness.cli.author import check_plugin, new_plugin
from harness.cli.common import ExitCode, Session, err_console, literal
from harness.cli.listing import list_
from harness.cli.read import claims, report, results, validate
from harness.cli.run import run
from harness.cli.serve import server, ui
from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.plugins.registry import Registry

__all__ = ["ExitCode", "cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="harness")
def cli() -> None:
    """Run research-paper benchmarks from plugins and track them in MLflow."""


for _command in (run, results, claims, validate, list_, report, ui, server, new_plugin):
    cli.add_command(_command)
cli.add_command(check_plugin)


def main(args: Sequence[str] | None = None, *, registry: Registry | None = None) -> None:
    """Console-script entry point: run ``harness ARGS`` and map harness errors to exit
    codes once, here.

    :param args: the arguments after ``harness``; default: ``sys.argv[1:]``.
    :param registry: the components to use (a :class:`harness.plugins.registry.Registry`, e.g. one
        built from explicit plugin objects in a test); default: every installed plugin's.
    :raises SystemExit: with an :class:`ExitCode` when the command did not succeed.
    """
    argv = tuple(sys.argv[1:] if args is None else args)
    try:
        cli.main(list(argv), "harness", standalone_mode=False, obj=Session(argv, registry))
    except (click.exceptions.Abort, KeyboardInterrupt) as err:  # click: Ctrl-C is Abort
        _interrupted(err)
    except click.ClickException as err:
        err.show()
        sys.exit(ExitCode.BAD_INPUT)
    except HarnessError as err:  # each error carries its exit code (harness.errors)
        text = str(err)
        if err.exit_code == ExitCode.BAD_INPUT:  # input echoed back: no invisible character
            text = "".join(c if c.isprintable() or c == "\n" else ascii(c)[1:-1] for c in text)
        err_console.print(f"[bold red]error:[/] {literal(text)}", soft_wrap=True)
        sys.exit(ExitCode(err.exit_code))
    except PermissionError as err:  # the driver's own files (a cell's errors stay in the cell)
        where = err.filename or "a file"
        err_console.print(
            f"[bold red]error:[/] cannot write {literal(where)}: {literal(err.strerror or '')}."
            " Fix its permissions, or pass another --tracking-uri or --report-dir;"
            " finished cells are kept in the store.",
            soft_wrap=True,
        )
        sys.exit(ExitCode.BAD_INPUT)
    except Exception as err:
        _connection_lost(err)


def _interrupted(err: BaseException) -> None:
    """Ctrl-C or SIGTERM: say what is kept (and how to resume), exit 130 or 143."""
    from harness.runs.runner import Terminated

    terminated = isinstance(err, Terminated) or isinstance(err.__context__, Terminated)
    what = "Terminated (SIGTERM)" if terminated else "Interrupted"
    note = getattr(err, "harness_note", None) or getattr(err.__context__, "harness_note", "")
    err_console.print(
        f"[yellow]{what}: finished cells are kept in the store{literal(note)}.[/]",
        soft_wrap=True,
    )
    sys.exit(ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED)


def _connection_lost(err: Exception) -> None:
    """A tracking server that stopped answering: one line and exit 2; re-raise the rest."""
    from harness.store.tracking import connection_lost

    if not connection_lost(err):
        raise err
    first = str(err).strip().splitlines()[0][:300] if str(err).strip() else type(err).__name__
    err_console.print(
        "[bold red]error:[/] the tracking server stopped answering while harness was"
        f" using it ({literal(first)}). Cells logged before are kept in the store; when"
        " it answers again, run the same command: it resumes (a parent run left RUNNING"
        " is marked KILLED). MLflow retries each request first:"
        " MLFLOW_HTTP_REQUEST_MAX_RETRIES and MLFLOW_HTTP_REQUEST_TIMEOUT set how long.",
        soft_wrap=True,
    )
    sys.exit(ExitCode.BAD_INPUT)
