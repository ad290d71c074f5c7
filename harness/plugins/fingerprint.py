"""A plugin's code fingerprint: a digest of its installed files, part of every cell's identity.

:func:`plugin_source` finds the code of a plugin whatever its layout: a top-level package or
module, a regular package inside a namespace package, a namespace package (PEP 420) whose
modules hold the hooks, a sourceless (``.pyc``) install or a zip archive on ``sys.path``.
:func:`code_fingerprint` hashes it, and with it the other top-level packages its
distribution installs. A plugin whose code cannot be found or holds no file is
:data:`UNFINGERPRINTED`; its cells are rerun rather than resumed on params alone.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import types
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "RESULT_FREE_MODULES",
    "UNFINGERPRINTED",
    "code_fingerprint",
    "digests",
    "distribution_packages",
    "find_source",
    "plugin_source",
    "source_stats",
]

#: The fingerprint of a plugin whose code cannot be located or read.
UNFINGERPRINTED = "unknown"

RESULT_FREE_MODULES = frozenset({"claims.py", "reports.py", "_claims.py", "_reports.py"})
"""Modules of a plugin that read finished results and never compute a cell's (its claims
and reports): left out of the fingerprint, so editing a claim or a plot reruns no cell."""


def plugin_source(plugin: object, module: str | None = None) -> Path | None:
    """The folder or file holding a plugin's code.

    :param plugin: the plugin object (a module, or an object whose class defines the hooks).
    :param module: the module the plugin was loaded from (an entry point's module), when
        known; else the plugin module's name or its class's module.
    :returns: the outermost regular package (its folder) or top-level module file on the
        path of that module; for a module that lies directly in a namespace package (no
        ``__init__.py``: a PEP 420 plugin), the namespace package's folder that holds it;
        None for ``__main__`` or a module with no file.
    """
    if module is None:
        is_module = isinstance(plugin, types.ModuleType)
        module = plugin.__name__ if is_module else type(plugin).__module__
    if module == "__main__":
        return None
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        file = getattr(sys.modules.get(".".join(parts[:depth])), "__file__", None)
        if file:
            path = Path(file).resolve()
            if path.stem == "__init__":  # a regular package, in a namespace package or not
                return path.parent
            return path if depth == 1 else path.parent  # a module in a namespace: its folder
    return None


def code_fingerprint(source: Path | None, companions: Iterable[str] = ()) -> str:
    """SHA-256 (16 hex digits) over the relative path and bytes of every code file of
    ``source`` and of the companion packages its distribution installs beside it.

    Left out: bytecode caches, hidden and backup files, and :data:`RESULT_FREE_MODULES`. A
    source inside a zip archive is read from the archive.

    :param source: from :func:`plugin_source`.
    :param companions: the top-level names the plugin's distribution installs
        (``top_level.txt``).
    :returns: the digest, or :data:`UNFINGERPRINTED` when ``source`` is None, missing or
        holds no code file.
    """
    return digests(source, companions)[0]


def digests(source: Path | None, companions: Iterable[str] = ()) -> tuple[str, str]:
    """``(code fingerprint, digest of every source file)`` in one reading of the files: the
    first is :func:`code_fingerprint`'s; the second also covers the result-free modules
    (claims, reports), which describe the plugin though they compute no cell
    (:mod:`harness.plugins.catalog` keys a plugin's description on it)."""
    if source is None:
        return UNFINGERPRINTED, UNFINGERPRINTED
    code, every, count = hashlib.sha256(), hashlib.sha256(), 0
    for relative, read in _source_files(source, companions):
        record = relative.encode() + b"\0" + read() + b"\0"
        every.update(record)
        if Path(relative).name not in RESULT_FREE_MODULES:
            code.update(record)
            count += 1
    if not count:
        return UNFINGERPRINTED, every.hexdigest()[:16]
    return code.hexdigest()[:16], every.hexdigest()[:16]


def _source_files(source: Path, companions: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """:func:`_files` of every root (:func:`_code_roots`) that :func:`_is_source_file`
    keeps."""
    roots = _code_roots(source, companions) if source.exists() else [source]
    for root in roots:
        for relative, read in _files(root):
            if _is_source_file(Path(relative)):
                yield relative, read


def source_stats(source: Path | None, companions: Iterable[str] = ()) -> list[list[Any]]:
    """``[relative path, mtime_ns, size]`` of every file :func:`digests` reads, from the
    file system's metadata alone (no file is read: cheap at every start-up); for a source
    inside a zip archive, the archive's own. Equal stats mean equal files, unless a file
    was rewritten to the same size within the clock's resolution of the stats being taken
    (:mod:`harness.plugins.catalog` rehashes such recent files)."""
    if source is None:
        return []
    if not source.exists():
        archive = next((p for p in source.parents if p.is_file()), None)
        if archive is None:
            return []
        stat = archive.stat()
        return [[str(archive), stat.st_mtime_ns, stat.st_size]]
    out = []
    for root in _code_roots(source, companions):
        for path in [root] if root.is_file() else sorted(_walk(root)):
            relative = str(path.relative_to(root.parent))
            if _is_source_file(Path(relative)):
                stat = path.stat()
                out.append([relative, stat.st_mtime_ns, stat.st_size])
    return out


def _walk(folder: Path) -> Iterator[Path]:
    """Every file under ``folder`` that ``rglob`` would give (links to folders not
    entered), skipping bytecode caches and hidden folders without entering them."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir() and not entry.is_symlink():
                if entry.name != "__pycache__" and not entry.name.startswith("."):
                    yield from _walk(Path(entry.path))
            elif entry.is_file():
                yield Path(entry.path)


def find_source(module: str) -> Path | None:
    """:func:`plugin_source` of the module ``module`` without running any of its code: its
    location is read from the import system's specs (a namespace package on the way is
    imported, which runs nothing). None where it cannot be found."""
    from importlib.util import find_spec

    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        try:
            spec = find_spec(".".join(parts[:depth]))
        except (ImportError, ValueError, AttributeError):
            return None
        if spec is None:
            return None
        origin = spec.origin if spec.has_location else None
        if origin:
            path = Path(origin).resolve()
            if path.stem == "__init__":
                return path.parent
            return path if depth == 1 else path.parent
    return None


def _files(root: Path) -> Iterator[tuple[str, object]]:
    """``(path relative to root's parent, reader of its bytes)`` of every file of ``root``
    (a folder or a file), in sorted order; from the archive when ``root`` is inside a zip."""
    if root.exists():
        for path in [root] if root.is_file() else sorted(root.rglob("*")):
            if path.is_file():
                yield str(path.relative_to(root.parent)), path.read_bytes
        return
    archive = next((p for p in root.parents if p.is_file() and zipfile.is_zipfile(p)), None)
    if archive is None:
        return
    inner = root.relative_to(archive).as_posix()
    with zipfile.ZipFile(archive) as opened:
        for name in sorted(opened.namelist()):
            if (name == inner or name.startswith(inner + "/")) and not name.endswith("/"):
                prefix = inner.rpartition("/")[0]
                yield (
                    name.removeprefix(prefix + "/" if prefix else ""),
                    functools.partial(opened.read, name),
                )


def _is_source_file(relative: Path) -> bool:
    """False for what an editor, a notebook or Python leaves beside the code: bytecode
    caches, hidden files and folders (``.x.py.swp``, ``.DS_Store``, ``.ipynb_checkpoints``)
    and backups ending in ``~``; these change no result and would rerun cells for nothing."""
    parts = relative.parts
    return not (
        "__pycache__" in parts
        or any(part.startswith(".") for part in parts)
        or relative.name.endswith("~")
    )


@functools.cache
def distribution_packages() -> Mapping[str, list[str]]:
    """``{top-level import name: its distributions}`` (importlib.metadata), read once."""
    from importlib.metadata import packages_distributions

    return packages_distributions()


def _code_roots(source: Path, companions: Iterable[str]) -> list[Path]:
    """The plugin's package (or module) and every other top-level package or module its
    distribution installs beside it (``src/harness_x`` and ``src/x_core``, say), so that an
    edit to any of them changes the fingerprint. A top-level name that other distributions
    install too (a stray ``tests`` package) is left out: its files are not the plugin's
    alone. Only ``source`` when its distribution installs nothing else (``companions``, the
    names of its ``top_level.txt``, hold no other name; then no distribution is scanned) or
    it belongs to none (a test's plugin module)."""
    from importlib.util import find_spec

    top = source.stem if source.is_file() else source.name
    others = set(companions) - {top}
    if not others:  # the common case, and fast: harness run's start-up pays no scan
        return [source]
    mine = set(distribution_packages().get(top, []))
    roots = {source}
    for name in sorted(others):
        dists = set(distribution_packages().get(name, []))
        if not mine or not dists or not dists <= mine:  # ``tests`` of several: not ours
            continue
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            continue
        locations = (spec.submodule_search_locations or [spec.origin]) if spec else []
        for location in locations:
            if location and location not in ("built-in", "frozen"):
                path = Path(location).resolve()
                if path.parent == source.parent:  # installed beside it, not found elsewhere
                    roots.add(path)
    return sorted(roots, key=lambda root: (root.name, str(root)))
