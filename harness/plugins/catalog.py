"""Each installed plugin described once and kept: its components and claims, cached by its code.

A plugin's :class:`Description` holds what the commands read without running the plugin:
each component's kind, name, tasks, summary and params (types, ranges, defaults), each
claim's statement, hypothesis, source, family and the components it names, and the code
fingerprint of its cells. Building one imports the plugin (:mod:`harness.plugins.registry`); it is
then kept as a JSON file of its own in :func:`cache_dir`, so that a command imports only the
plugins whose tasks it touches (docs/design.md, "Plugin API").

An entry is used only when everything it was made from is unchanged: the plugin's entry
point, distribution version and location, its source folder, the Python and harness core
that described it (:func:`core_digest`), and its files, checked by their stats (path, size
and modification time: no file is read); where the stats changed, or are too recent to tell
an edit apart (:data:`RACY_NS`), the files are hashed and the entry is kept only if the
hash is the same. An entry that cannot be read, is malformed or differs in any of these is
rebuilt, never trusted. A plugin that fails to load is never cached: it is tried afresh by
every command.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

from harness.plugins.fingerprint import digests, source_stats

__all__ = [
    "CACHE_ENV",
    "ClaimFacts",
    "Description",
    "Param",
    "Part",
    "Sources",
    "cache_dir",
    "claim_references",
    "claim_selects",
    "core_digest",
    "describe_class",
    "param_facts",
]

#: The folder of the cache; default ``$XDG_CACHE_HOME/harness/plugins`` (``~/.cache``).
CACHE_ENV = "HARNESS_CACHE_DIR"

FORMAT = 1
"""The layout of a cache entry; an entry of another layout is rebuilt."""

RACY_NS = 2_000_000_000
"""Files modified less than this before their stats were taken (2 s, coarser than any
file system's clock) are hashed again at the next check: an edit within the clock's tick
that kept the size would leave the stats equal."""


class Param(NamedTuple):
    """A param as ``harness list`` shows it: ``type`` as a reader writes it, ``range`` its
    bounds (``>= 0, < 1``; empty when none), ``default`` its ``repr`` (None: required)."""

    name: str
    type: str
    range: str
    default: str | None


class ClaimFacts(NamedTuple):
    """A claim's facts: its statement, hypothesis and source as text, Holm's family, and
    every ``(field, kind, name)`` of a dataset or method it names."""

    statement: str
    hypothesis: str
    source: str
    family: str
    references: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class Part:
    """One component of a plugin as described: its kind (dataset, method, metric, report,
    claim), name, tasks, class (``module:qualname``), the first line of its docstring, its
    params and, for a claim, its :class:`ClaimFacts`."""

    kind: str
    name: str
    tasks: tuple[str, ...]
    qualname: str
    summary: str
    params: tuple[Param, ...] = ()
    claim: ClaimFacts | None = None


@dataclass(frozen=True)
class Description:
    """A plugin as its components describe it, and the code fingerprint of its cells."""

    parts: tuple[Part, ...]
    fingerprint: str

    def to_json(self) -> dict[str, Any]:
        parts = [{**asdict(p), "claim": p.claim._asdict() if p.claim else None} for p in self.parts]
        return {"parts": parts, "fingerprint": self.fingerprint}

    @classmethod
    def from_json(cls, data: Any) -> Description:
        """The description ``data`` holds; raises ``TypeError``, ``ValueError`` or
        ``KeyError`` when it is not one."""
        parts = []
        for p in data["parts"]:
            claim = p["claim"]
            if claim is not None:
                refs = tuple(tuple(_texts(r, 3)) for r in claim.pop("references"))
                claim = ClaimFacts(**_strict_texts(claim), references=refs)  # type: ignore[arg-type]
            params = tuple(Param(*_texts(q, 4, last_optional=True)) for q in p["params"])
            tasks = tuple(_texts(p["tasks"]))
            texts = _strict_texts({k: p[k] for k in ("kind", "name", "qualname", "summary")})
            parts.append(Part(**texts, tasks=tasks, params=params, claim=claim))
        fingerprint = data["fingerprint"]
        if not isinstance(fingerprint, str):
            raise TypeError("fingerprint")
        return cls(tuple(parts), fingerprint)


def _texts(values: Any, length: int | None = None, last_optional: bool = False) -> list[Any]:
    if not isinstance(values, list) or (length is not None and len(values) != length):
        raise ValueError(values)
    for i, value in enumerate(values):
        if not isinstance(value, str) and not (last_optional and i == len(values) - 1):
            raise TypeError(value)
        if value is not None and not isinstance(value, str):
            raise TypeError(value)
    return values


def _strict_texts(mapping: dict[str, Any]) -> dict[str, str]:
    if not all(isinstance(v, str) for v in mapping.values()):
        raise TypeError(mapping)
    return mapping


def cache_dir() -> Path:
    """Where descriptions are kept: ``$HARNESS_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/harness/plugins``, else ``~/.cache/harness/plugins``."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "harness" / "plugins"


class Sources:
    """The cache: a plugin's description and code fingerprint where its entry is fresh
    (:meth:`lookup`), an entry written for a plugin just described (:meth:`store`).

    :param folder: the cache's folder (default :func:`cache_dir`); a folder that cannot be
        written makes every lookup a miss and every store a no-op: harness still works,
        importing every plugin.
    """

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else cache_dir()

    def lookup(self, key: dict[str, Any], source: Path | None, companions: Iterable[str]) -> Any:
        """``(description or None, state)``: the description of the plugin ``key`` names
        when its entry is fresh; ``state`` is what :meth:`store` needs on a miss."""
        taken = time.time_ns()
        stats = source_stats(source, companions)
        entry = self._read(key)
        state = {"key": key, "stats": stats, "taken": taken, "hashes": None}
        if entry is None:
            return None, state
        if entry["stats"] == stats and _settled(stats, entry["taken"]):
            return entry["description"], state
        state["hashes"] = digests(source, companions)
        if list(state["hashes"]) != entry["hashes"]:
            return None, state
        self._write(key, {**entry, "stats": stats, "taken": taken})  # same files, new stats
        return entry["description"], state

    def hashes(self, state: dict[str, Any], source: Path | None, companions: Iterable[str]) -> Any:
        """``(code fingerprint, digest of every file)`` of a missed plugin (hashed once)."""
        if state["hashes"] is None:
            state["hashes"] = digests(source, companions)
        return state["hashes"]

    def store(self, state: dict[str, Any], description: Description) -> None:
        """Keep ``description`` for the plugin of ``state`` (from :meth:`lookup`)."""
        if state["hashes"] is None:
            return
        entry = {
            "stats": state["stats"],
            "taken": state["taken"],
            "hashes": list(state["hashes"]),
            "description": description.to_json(),
        }
        self._write(state["key"], entry)

    def forget(self, key: dict[str, Any]) -> None:
        """Remove the entry of ``key`` (a plugin that no longer loads as described)."""
        with contextlib.suppress(OSError):
            self._path(key).unlink()

    def _path(self, key: dict[str, Any]) -> Path:
        """One file per plugin and environment: its name and a digest of where it is
        installed (two virtual environments never share an entry)."""
        where = json.dumps([sys.prefix, key["value"], key["location"]]).encode()
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in key["plugin"])[:60]
        return self.folder / f"{safe}-{hashlib.sha256(where).hexdigest()[:12]}.json"

    def _read(self, key: dict[str, Any]) -> dict[str, Any] | None:
        """The entry of ``key`` when it is readable, well formed and made for ``key``."""
        try:
            raw = json.loads(self._path(key).read_text(encoding="utf-8"))
            if raw.get("format") != FORMAT or raw.get("key") != key:
                return None
            entry = {k: raw[k] for k in ("stats", "taken", "hashes")}
            if not isinstance(entry["taken"], int) or not isinstance(entry["stats"], list):
                return None
            entry["description"] = Description.from_json(raw["description"])
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # missing, unreadable or corrupt: rebuilt
        return entry

    def _write(self, key: dict[str, Any], entry: dict[str, Any]) -> None:
        """Write the entry atomically (a reader sees the old file or the new one whole)."""
        description = entry["description"]
        if isinstance(description, Description):
            description = description.to_json()
        body = {"format": FORMAT, "key": key, **entry, "description": description}
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(body, out)
            os.replace(temporary, path)
        except OSError:
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(temporary)


def _settled(stats: list[list[Any]], taken: int) -> bool:
    """True when every file's modification time lies :data:`RACY_NS` before ``taken``."""
    return all(mtime < taken - RACY_NS for _, mtime, _ in stats)


def core_digest(sources: Sources | None = None) -> str:
    """A digest of the harness core that describes plugins (its version and every file of
    the ``harness`` package, through the same stat check as a plugin's): an upgrade or an
    edit of the core rebuilds every description."""
    import harness

    sources = sources or Sources()
    root = Path(harness.__file__).resolve().parent
    key = {"plugin": "harness-core", "value": str(root), "location": "", "version": _version()}
    found, state = sources.lookup(key, root, ())
    if found is not None:
        return found.fingerprint
    digest = sources.hashes(state, root, ())[1]
    sources.store(state, Description((), digest))
    return digest


def _version() -> str:
    from harness import __version__

    return f"{__version__} on Python {sys.version.split()[0]}"


def describe_class(kind: str, cls: Any) -> Part:
    """The :class:`Part` of a checked component class of kind ``kind``."""
    import inspect

    summary = (inspect.getdoc(cls) or "").split("\n", 1)[0]
    claim = None
    if kind == "claim":
        claim = ClaimFacts(
            str(getattr(cls, "statement", summary)),
            str(getattr(cls, "hypothesis", "")),
            str(getattr(cls, "source", "")),
            cls.family_name(),
            tuple(claim_references(cls)),
        )
    qualname = f"{cls.__module__}:{cls.__qualname__}"
    return Part(kind, cls.name, tuple(cls.tasks()), qualname, summary, param_facts(cls), claim)


def param_facts(cls: Any) -> tuple[Param, ...]:
    """Each param of ``cls.Params`` as a :class:`Param`: its type as a reader writes it,
    its bounds (from ``Annotated[..., Field(ge=...)]`` or a pydantic field's constraints)
    and its default's ``repr`` (None where it is required)."""
    import dataclasses

    from harness.components import describe_type, params_fields

    model_fields = getattr(cls.Params, "model_fields", {})
    out = []
    for key, (annotation, default) in params_fields(cls.Params).items():
        required = default is dataclasses.MISSING or repr(default) == "PydanticUndefined"
        extra = getattr(model_fields.get(key), "metadata", ())
        bounds = _bounds(annotation, extra)
        out.append(
            Param(key, describe_type(annotation), bounds, None if required else repr(default))
        )
    return tuple(out)


_SIGNS = (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="))


def _bounds(annotation: Any, metadata: Iterable[Any] = ()) -> str:
    """``>= 0, < 1`` from the constraints in ``Annotated`` metadata (``Field(ge=0)``,
    ``annotated_types.Gt(0)``, ``Interval``) and ``metadata``; empty when there are none."""
    import typing

    items = list(metadata)
    if typing.get_origin(annotation) is typing.Annotated:
        items += list(typing.get_args(annotation)[1:])
    out: list[str] = []
    for item in items:
        for inner in (item, *(getattr(item, "metadata", None) or ())):
            for attribute, sign in _SIGNS:
                value = getattr(inner, attribute, None)
                text = f"{sign} {value!r}"
                if isinstance(value, int | float) and text not in out:
                    out.append(text)
    return ", ".join(out)


def claim_references(claim: Any) -> list[tuple[str, str, str]]:
    """Each ``(field, kind, name)`` of a dataset or method that ``claim`` names: its cells
    (``requires[i].dataset``, ``requires[i].methods``), ``subject``, ``rivals[i].method``
    and every :class:`~harness.claims.Select` of its ``kind`` and ``control``
    (``kind.baseline``, ``control.source``)."""
    named: list[tuple[str, str, Any]] = []
    for i, need in enumerate(getattr(claim, "requires", ()) or ()):
        named.append((f"requires[{i}].dataset", "dataset", need.dataset))
        named += [(f"requires[{i}].methods", "method", m) for m in need.methods]
    named.append(("subject", "method", claim.subject_method()))
    named += [(f"rivals[{i}].method", "method", r.method) for i, r in enumerate(claim.rivals)]
    for where, select in claim_selects(claim):
        named.append((where, "method", select.method))
        named.append((f"{where}.dataset", "dataset", select.dataset))
    return [(where, kind, name) for where, kind, name in named if name is not None]


def claim_selects(claim: Any) -> list[tuple[str, Any]]:
    """Each ``(field, select)`` of a :class:`~harness.claims.Select` in the fields of
    ``claim``'s ``kind`` and ``control`` (``kind.baseline``, ``control.source``)."""
    import dataclasses

    from harness.claims import Select

    found: list[tuple[str, Any]] = []
    for part in ("kind", "control"):
        value = getattr(claim, part, None)
        if not dataclasses.is_dataclass(value) or isinstance(value, type):
            continue
        for f in dataclasses.fields(value):
            select = getattr(value, f.name)
            if isinstance(select, Select):
                found.append((f"{part}.{f.name}", select))
    return found
