"""Keeps a cell from changing what other cells read: the data's shared parts made
read-only, and hashed so that a change made anyway is found and named by path.

Used by :mod:`harness.runs.cell` on every loaded dataset and method output, and by
:mod:`harness.plugins.testing` (check-plugin's [run-keeps-data] check).
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import types
from collections import deque
from collections.abc import Iterable, Mapping

import numpy as np

__all__ = [
    "MAX_DEPTH",
    "MAX_PARTS_VISITED",
    "READ_ONLY_HINT",
    "changed_parts",
    "differing_paths",
    "fully_covered",
    "part_hashes",
    "read_only",
    "shared_parts",
]

#: Appended to the reason of a cell that wrote into a read-only array.
READ_ONLY_HINT = (
    "the task's data and a method's output are read-only, since later cells and metrics"
    " read the same arrays: copy an array before changing it, e.g. y = data.y_train.copy()"
)


#: Python objects :func:`shared_parts` visits at most in one data object.
MAX_PARTS_VISITED = 100_000

#: Levels of nesting :func:`shared_parts` walks down at most.
MAX_DEPTH = 32

_SCALARS = (str, bytes, int, float, complex, bool)
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def shared_parts(obj: object) -> dict[str, object]:
    """The mutable values in ``obj`` that a cell could change in place, by path
    (``data.y_test``, ``data.table['w']``, ``data.parts[1]``): NumPy arrays, torch tensors,
    pandas objects and lists or deques of scalars, found in ``obj`` itself, its dataclass
    fields, tuples, lists, deques, mappings (dicts, ``MappingProxyType``) and the attributes
    of other objects (``__dict__`` and ``__slots__``: a ``SimpleNamespace``, a scipy sparse
    matrix), at most :data:`MAX_DEPTH` levels down and :data:`MAX_PARTS_VISITED` objects,
    each once (at the first path that reaches it). :func:`fully_covered` says whether the
    walk reached everything."""
    return _walk(obj)[0]


def fully_covered(obj: object) -> bool:
    """Whether :func:`shared_parts` reached every part of ``obj``: False for data nested
    deeper than :data:`MAX_DEPTH` or holding more than :data:`MAX_PARTS_VISITED` objects,
    which :mod:`harness.runs.cell` then hands to each cell as a fresh copy."""
    return _walk(obj)[1]


def _children(value: object) -> Iterable[tuple[str, object]] | None:
    """``(path suffix, child)`` of a container or object; None for a part or a leaf."""
    if isinstance(value, (dict, types.MappingProxyType)):
        return [(f"[{k!r}]", v) for k, v in value.items()]
    if isinstance(value, (list, tuple, deque)):
        return ((f"[{i}]", v) for i, v in enumerate(value))
    if dataclasses.is_dataclass(value):
        return [(f".{f.name}", getattr(value, f.name, None)) for f in dataclasses.fields(value)]
    attributes = dict(vars(value)) if hasattr(value, "__dict__") else {}
    for cls in type(value).__mro__:  # __slots__ of the class and its bases
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                attributes.setdefault(name, getattr(value, name))
    return [(f".{k}", v) for k, v in attributes.items()] if attributes else None


def _is_part(value: object, torch: types.ModuleType | None) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype != object
    if (torch is not None and isinstance(value, torch.Tensor)) or _is_pandas(value):
        return True
    return isinstance(value, (list, deque)) and all(isinstance(x, _SCALARS) for x in value)


def _walk(obj: object) -> tuple[dict[str, object], bool]:
    """``(shared_parts(obj), fully_covered(obj))`` in one walk."""
    parts: dict[str, object] = {}
    seen: set[int] = set()
    torch = sys.modules.get("torch")
    complete = True

    def walk(value: object, path: str, depth: int) -> None:
        nonlocal complete
        if value is None or isinstance(value, _SCALARS + _OPAQUE) or id(value) in seen:
            return
        if depth > MAX_DEPTH or len(seen) >= MAX_PARTS_VISITED:
            complete = False
            return
        seen.add(id(value))
        if _is_part(value, torch):
            parts[path] = value
            return
        children: Iterable[tuple[str, object]] | None
        if isinstance(value, np.ndarray):  # of objects: what it holds
            children = ((f"[{i}]", v) for i, v in enumerate(value.ravel()))
        else:
            children = _children(value)
        for key, child in children or ():
            walk(child, path + key, depth + 1)

    walk(obj, "data", 0)
    return parts, complete


def _is_pandas(value: object) -> bool:
    return type(value).__module__.startswith("pandas")


def read_only(obj: object) -> None:
    """Mark every NumPy array in ``obj`` (see :func:`shared_parts`) read-only, so that
    writing into one raises ``ValueError: assignment destination is read-only`` where it
    is done.

    The runner does this to each loaded dataset, which consecutive cells of a worker share,
    and to each method's output before its metrics read it. Torch tensors, pandas objects
    and lists cannot be marked; :func:`changed_parts` finds writes into them.
    """
    for part in shared_parts(obj).values():
        if isinstance(part, np.ndarray):
            part.flags.writeable = False


def _part_hash(part: object) -> str:
    """SHA-1 over a part's type, shape and contents ("?" where it cannot be read here, a
    sparse tensor, say: such a part counts as unchanged)."""
    digest = hashlib.sha1(usedforsecurity=False)
    torch = sys.modules.get("torch")
    try:
        if isinstance(part, np.ndarray):
            digest.update(f"{part.dtype.str}{part.shape}".encode())
            digest.update(np.ascontiguousarray(part).view(np.uint8).data)
        elif torch is not None and isinstance(part, torch.Tensor):
            flat = part.detach().cpu().contiguous().reshape(-1)
            digest.update(f"{part.dtype}{tuple(part.shape)}".encode())
            digest.update(flat.view(torch.uint8).numpy().data)  # any dtype, bfloat16 too
        elif isinstance(part, (list, deque)):
            digest.update(repr(list(part)).encode())
        else:  # pandas: values, index and column labels
            import pandas as pd

            digest.update(repr(getattr(part, "columns", None)).encode())
            digest.update(pd.util.hash_pandas_object(part, index=True).to_numpy().data)
    except Exception:
        return "?"
    return digest.hexdigest()


def part_hashes(obj: object) -> dict[str, str]:
    """``{path: hash}`` of every part of ``obj`` (:func:`shared_parts`)."""
    return {path: _part_hash(part) for path, part in shared_parts(obj).items()}


def changed_parts(before: Mapping[str, str], obj: object) -> list[str]:
    """The paths of ``before`` (:func:`part_hashes` taken earlier) whose part is now gone,
    replaced or changed in ``obj``. Parts added since (a cache filled lazily) do not count."""
    return differing_paths(before, part_hashes(obj)) if before else []


def differing_paths(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The paths of ``before`` whose hash in ``now`` differs or is missing."""
    return [path for path, digest in before.items() if now.get(path, "gone") != digest]
