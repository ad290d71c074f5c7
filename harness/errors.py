"""The one error module of harness: a shallow tree under :class:`HarnessError`.

Each error carries the exit code ``harness`` ends with (``exit_code``, one of
``harness.cli.ExitCode``): :class:`SuiteError` and :class:`PluginError` exit 2 (bad input,
nothing written), any other :class:`HarnessError` exits 1; ``harness.cli.main`` reads it
once. :class:`harness.Skip` is deliberately *not* a :class:`HarnessError`: skipping is a
result, not a failure. :func:`missing_dependency` is the one message for an optional package
that is not installed.
"""

from __future__ import annotations


class HarnessError(Exception):
    """Base class of every error harness raises on purpose."""

    exit_code: int = 1  # ExitCode.FAILED


class SuiteError(HarnessError):
    """A suite file, a CLI argument or a component name is invalid (exit code 2)."""

    exit_code = 2  # ExitCode.BAD_INPUT


class PluginError(HarnessError):
    """A plugin fails to import, has a bad hook implementation or clashes with another (exit 2)."""

    exit_code = 2  # ExitCode.BAD_INPUT


class StoreError(SuiteError):
    """The tracking store cannot be used: a missing database driver, an unreachable server
    or database, refused credentials, or the same suite already running in it (exit 2,
    nothing run)."""


class ParamsError(HarnessError):
    """A component's parameters are invalid; carries ``(path, message)`` pairs.

    Raised by :func:`harness.components.validate_params`; the suite loader turns it into a
    :class:`SuiteError` that names the file and the path inside it.
    """

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{path}: {msg}" if path else msg for path, msg in problems))


def missing_dependency(needed_by: str, what: str, package: str) -> str:
    """The message for an optional package that is not installed: what needs it and the
    command that installs it.

    >>> missing_dependency("--basic-auth", "Flask-WTF", "'mlflow[auth]'")
    "--basic-auth needs Flask-WTF, which is not installed: pip install 'mlflow[auth]'"
    """
    return f"{needed_by} needs {what}, which is not installed: pip install {package}"
