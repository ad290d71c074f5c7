"""Installed plugins found and imported: every ``harness`` entry point, each import guarded.

:func:`installed` reads the entry points from the distributions' metadata without importing
any plugin; :func:`load` imports one of them, :func:`load_entry_points` every one.

A plugin that fails while it is imported (an exception, ``sys.exit``, ``os._exit``, a
``KeyboardInterrupt`` it raises itself) is reported to the caller's ``fault`` callback and
left out; a real Ctrl-C still stops. See :func:`load_entry_points`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any, NamedTuple

__all__ = ["GROUP", "Installed", "Loaded", "cut_text", "installed", "load", "load_entry_points"]

#: The entry-point group plugins register under (``[project.entry-points.harness]``).
GROUP = "harness"


class _ExitAtImport(BaseException):
    """A plugin called ``os._exit(code)`` while it was imported (see :func:`_import_guard`)."""


@contextlib.contextmanager
def _import_guard() -> Iterator[list[bool]]:
    """While a plugin is imported: ``os._exit()`` called from this thread raises
    :class:`_ExitAtImport` instead of ending harness silently, and a Ctrl-C is told from a
    ``KeyboardInterrupt`` the plugin raises itself (the yielded list holds ``True`` after a
    real SIGINT). A plugin that calls ``posix._exit`` directly, or exits from another thread
    or a child process, still ends that process: nothing in-process can stop it."""
    interrupted = [False]
    real_exit, pid, thread = os._exit, os.getpid(), threading.get_ident()

    def refuse_exit(code: int = 0) -> None:
        if os.getpid() != pid or threading.get_ident() != thread:  # a child's or a thread's
            real_exit(code)
        raise _ExitAtImport(code)

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGINT)
        if callable(previous):

            def on_sigint(signum: int, frame: Any) -> None:
                interrupted[0] = True
                previous(signum, frame)

            signal.signal(signal.SIGINT, on_sigint)
    os._exit = refuse_exit
    try:
        yield interrupted
    finally:
        os._exit = real_exit
        if callable(previous):
            signal.signal(signal.SIGINT, previous)


class Loaded(NamedTuple):
    """One imported entry point: its name, the object it names, its distribution's version
    and top-level names (``top_level.txt``), and the module it was loaded from."""

    name: str
    plugin: object
    version: str
    companions: list[str]
    module: str


class Installed(NamedTuple):
    """One ``harness`` entry point as its distribution's metadata tells it, nothing
    imported: its name, value (``module`` or ``module:attr``), the module, its
    distribution's version and top-level names (``top_level.txt``), and where the
    distribution's metadata lies (a key of the plugin's description cache)."""

    name: str
    value: str
    module: str
    version: str
    companions: list[str]
    location: str
    entry_point: Any


def installed(blocked: set[str] = frozenset()) -> list[Installed]:
    """Every ``harness`` entry point not named in ``blocked``, in entry-point order, read
    from the distributions' metadata alone (no plugin is imported)."""
    out = []
    for ep in entry_points(group=GROUP):
        if ep.name in blocked:
            continue
        dist = getattr(ep, "dist", None)
        try:
            text = dist.read_text("top_level.txt") if dist is not None else None
        except OSError:
            text = None
        version = dist.version if dist is not None else "0"
        module = getattr(ep, "module", None) or ep.value.partition(":")[0]
        location = str(getattr(dist, "_path", "")) if dist is not None else ""
        out.append(
            Installed(ep.name, ep.value, module, version, (text or "").split(), location, ep)
        )
    return out


def load_entry_points(blocked: set[str], fault: Callable[[str, str], None]) -> list[Loaded]:
    """Import every ``harness`` entry point not named in ``blocked``.

    :param fault: called as ``fault(name, message)`` for each one that fails to import
        (raises, calls ``sys.exit`` or ``os._exit``, raises ``KeyboardInterrupt`` itself);
        it is left out.
    :returns: the ones imported, in entry-point order.
    :raises KeyboardInterrupt: on a real Ctrl-C during an import.
    """
    loaded = (load(found, fault) for found in installed(blocked))
    return [one for one in loaded if one is not None]


def load(found: Installed, fault: Callable[[str, str], None]) -> Loaded | None:
    """Import the entry point ``found`` (see :func:`load_entry_points`); None when it
    fails, after telling ``fault``."""
    ep = found.entry_point
    try:
        with _import_guard() as interrupted:
            module = ep.load()
    except KeyboardInterrupt:
        if interrupted[0]:  # Ctrl-C: stop
            raise
        fault(
            ep.name,
            f"Plugin '{ep.name}' ({ep.value}) raised KeyboardInterrupt while imported"
            " (no Ctrl-C was pressed).",
        )
        return None
    except _ExitAtImport as err:
        fault(
            ep.name,
            f"Plugin '{ep.name}' ({ep.value}) called os._exit({err.args[0]}) while imported,"
            " which would end every harness command.",
        )
        return None
    except BaseException as err:  # an import error, or sys.exit() at import time
        fault(
            ep.name,
            f"Plugin '{ep.name}' ({ep.value}) failed to import:"
            f" {type(err).__name__}: {cut_text(str(err))}.",
        )
        return None
    return Loaded(ep.name, module, found.version, found.companions, found.module)


def cut_text(text: str, limit: int = 300) -> str:
    """``text`` cut to ``limit`` characters, its length stated when longer."""
    return text if len(text) <= limit else f"{text[: limit - 50]}... ({len(text):,} characters)"
