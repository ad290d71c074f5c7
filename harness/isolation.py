"""Keeps a cell from changing what other cells read: the data's shared parts made
read-only, and hashed so that a change made anyway is found and named by path.

Used by :mod:`harness.cell` on every loaded dataset and method output, and by
:mod:`harness.testing` (check-plugin's [run-keeps-data] check).
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import types
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

__all__ = [
    "MAX_PARTS_VISITED",
    "READ_ONLY_HINT",
    "changed_parts",
    "differing_paths",
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

_SCALARS = (str, bytes, int, float, complex, bool)
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def shared_parts(obj: Any) -> dict[str, Any]:
    """The mutable values in ``obj`` that a cell could change in place, by path
    (``data.y_test``, ``data.table['w']``, ``data.parts[1]``): NumPy arrays, torch tensors,
    pandas objects and lists of scalars, found in ``obj`` itself, its dataclass fields,
    tuples, lists, dict values and the attributes of plain objects (a ``SimpleNamespace``,
    a scipy sparse matrix), at most 12 levels down and :data:`MAX_PARTS_VISITED` objects,
    each once (at the first path that reaches it)."""
    parts: dict[str, Any] = {}
    seen: set[int] = set()
    torch = sys.modules.get("torch")

    def walk(value: Any, path: str, depth: int) -> None:
        if value is None or isinstance(value, _SCALARS + _OPAQUE) or id(value) in seen:
            return
        if depth > 12 or len(seen) >= MAX_PARTS_VISITED:
            return
        seen.add(id(value))
        children: Iterable[tuple[str, Any]]
        if isinstance(value, np.ndarray):
            if value.dtype != object:
                parts[path] = value
                return
            children = ((f"[{i}]", v) for i, v in enumerate(value.ravel()))  # what it holds
        elif (torch is not None and isinstance(value, torch.Tensor)) or _is_pandas(value):
            parts[path] = value
            return
        elif isinstance(value, dict):
            children = [(f"[{k!r}]", v) for k, v in value.items()]
        elif isinstance(value, list) and all(isinstance(x, _SCALARS) for x in value):
            parts[path] = value
            return
        elif isinstance(value, (list, tuple)):
            children = ((f"[{i}]", v) for i, v in enumerate(value))
        elif dataclasses.is_dataclass(value):
            children = [
                (f".{f.name}", getattr(value, f.name, None)) for f in dataclasses.fields(value)
            ]
        elif hasattr(value, "__dict__"):
            children = [(f".{k}", v) for k, v in vars(value).items()]
        else:
            return
        for key, child in children:
            walk(child, path + key, depth + 1)

    walk(obj, "data", 0)
    return parts


def _is_pandas(value: Any) -> bool:
    return type(value).__module__.startswith("pandas")


def read_only(obj: Any) -> None:
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


def _part_hash(part: Any) -> str:
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
        elif isinstance(part, list):
            digest.update(repr(part).encode())
        else:  # pandas: values, index and column labels
            import pandas as pd

            digest.update(repr(getattr(part, "columns", None)).encode())
            digest.update(pd.util.hash_pandas_object(part, index=True).to_numpy().data)
    except Exception:
        return "?"
    return digest.hexdigest()


def part_hashes(obj: Any) -> dict[str, str]:
    """``{path: hash}`` of every part of ``obj`` (:func:`shared_parts`)."""
    return {path: _part_hash(part) for path, part in shared_parts(obj).items()}


def changed_parts(before: Mapping[str, str], obj: Any) -> list[str]:
    """The paths of ``before`` (:func:`part_hashes` taken earlier) whose part is now gone,
    replaced or changed in ``obj``. Parts added since (a cache filled lazily) do not count."""
    return differing_paths(before, part_hashes(obj)) if before else []


def differing_paths(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The paths of ``before`` whose hash in ``now`` differs or is missing."""
    return [path for path, digest in before.items() if now.get(path, "gone") != digest]
