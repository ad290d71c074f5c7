"""A cell and its identity: the hashes that decide resume, the seeds derived from them.

A :class:`Cell` is one (dataset with params, method with params, seed) of a suite. Its
hashes are SHA-256 digests of canonical JSON (sorted keys, no spaces, ``-0.0`` written as
``0.0``): ``cell_hash`` over everything that determines the result (the resume key,
docs/design.md 'Resume'), ``config_hash`` over the configuration alone, ``metrics_hash`` over
the metric list. The dataset and method seeds are derived from the suite seed and the
identity with ``numpy.random.SeedSequence``. :meth:`Cell.params` gives the MLflow params of a
cell, none over MLflow's length limit and none cut silently.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.components import params_as_dict
from harness.plugins.fingerprint import UNFINGERPRINTED

__all__ = ["PARAM_VALUE_MAX", "Cell", "canonical", "json_params", "param_text"]

#: Longest param value MLflow stores (``mlflow.utils.validation.MAX_PARAM_VAL_LENGTH``).
PARAM_VALUE_MAX = 6000


def _plain_zero(obj: Any) -> Any:
    """``obj`` with every ``-0.0`` replaced by ``0.0`` (they are one configuration)."""
    if isinstance(obj, float):
        return 0.0 if obj == 0.0 else obj
    if isinstance(obj, dict):
        return {k: _plain_zero(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain_zero(v) for v in obj]
    return obj


def canonical(obj: Any) -> str:
    """Canonical JSON of ``obj``: sorted keys, no spaces, ``str()`` of what JSON cannot
    hold, ``-0.0`` as ``0.0``; equal configurations give equal text."""
    return json.dumps(_plain_zero(obj), sort_keys=True, default=str, separators=(",", ":"))


def _digest(obj: Any) -> str:
    return hashlib.sha256(canonical(obj).encode()).hexdigest()[:20]


def _derive_seed(seed: int, identity: str) -> int:
    words = np.frombuffer(hashlib.sha256(identity.encode()).digest()[:16], dtype=np.uint32)
    return int(
        np.random.SeedSequence(seed, spawn_key=tuple(int(w) for w in words)).generate_state(1)[0]
    )


def json_params(params: Any) -> dict[str, Any]:
    """A ``Params`` instance as the plain JSON values a cell holds (``-0.0`` as ``0.0``)."""
    return json.loads(canonical(params_as_dict(params)))


def param_text(value: Any) -> str:
    """A param value as MLflow logs it: a string as it is, anything else as JSON; a text
    over :data:`PARAM_VALUE_MAX` characters is cut to a head that ends with its length and
    the SHA-256 of the whole (``... (10,000 characters, sha256 1a2b...)``), so two values
    that differ only after the cut still log as two values. The full value is kept in the
    logged suite (``suite.yaml``) and in the cell's identity."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if len(text) <= PARAM_VALUE_MAX:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    tail = f"... ({len(text):,} characters, sha256 {digest})"
    return text[: PARAM_VALUE_MAX - len(tail)] + tail


@dataclass(frozen=True)
class Cell:
    """One (dataset with params, method with params, seed) of a suite.

    Attributes
    ----------
    task, dataset, method : str
        Component names.
    dataset_params, method_params : dict
        Full parameter values (defaults filled in), JSON-serialisable.
    seed : int
        The suite seed; ``dataset_seed`` and ``method_seed`` are derived from it and the
        cell identity with ``numpy.random.SeedSequence``, so every method of one suite seed
        sees the same data.
    metrics : tuple of (name, params dict)
    timeout : float or None
        Hard limit in seconds.
    versions : tuple of (plugin, version)
        The dataset's and the method's plugins.
    code : tuple of (plugin, fingerprint)
        :meth:`harness.plugins.registry.Registry.fingerprint` of every plugin that contributes a
        component (dataset, method or metric) to the cell, sorted by plugin name.
    experiment : str
        The MLflow experiment the cell is logged to: the ``name`` of the suite file that
        declares its run (an included suite keeps its own experiment, so each paper's runs
        are compared alone). Not part of the identity.
    cell_hash : str
        Hex digest of everything that determines the result (the resume key, docs/design.md
        "Resume"): task, component names and params, seed, the metric list with metric
        params, plugin versions and ``code``. A change in any of them makes a new cell.
    config_hash : str
        Hex digest of task, names, params and seed only: the same experiment before and
        after a code or metric change (used to say *why* a cell runs again).
    metrics_hash : str
        Hex digest of the metric list with its params.
    """

    task: str
    dataset: str
    dataset_params: dict[str, Any]
    method: str
    method_params: dict[str, Any]
    seed: int
    metrics: tuple[tuple[str, dict[str, Any]], ...]
    timeout: float | None
    versions: tuple[tuple[str, str], ...]
    code: tuple[tuple[str, str], ...] = ()
    experiment: str = ""
    dataset_seed: int = field(init=False)
    method_seed: int = field(init=False)
    cell_hash: str = field(init=False)
    config_hash: str = field(init=False)
    metrics_hash: str = field(init=False)

    def __post_init__(self) -> None:
        data_id = canonical([self.task, self.dataset, self.dataset_params])
        cell_id = canonical(
            [self.task, self.dataset, self.dataset_params, self.method, self.method_params]
        )
        object.__setattr__(self, "dataset_seed", _derive_seed(self.seed, data_id))
        object.__setattr__(self, "method_seed", _derive_seed(self.seed, cell_id))
        config = _digest([cell_id, self.seed])
        metrics = _digest([list(m) for m in self.metrics])
        identity = [cell_id, self.seed, self.versions, metrics, self.code]
        object.__setattr__(self, "config_hash", config)
        object.__setattr__(self, "metrics_hash", metrics)
        object.__setattr__(self, "cell_hash", _digest(identity))

    @property
    def fingerprinted(self) -> bool:
        """Whether the code of every plugin of the cell has a fingerprint; a cell whose code
        cannot be located (:data:`harness.plugins.fingerprint.UNFINGERPRINTED`) cannot tell an edit
        from none and is run again rather than resumed."""
        return all(code != UNFINGERPRINTED for _, code in self.code)

    @property
    def data_key(self) -> str:
        """Identity of the loaded data: cells sharing it can reuse one ``load``."""
        return canonical([self.task, self.dataset, self.dataset_params, self.dataset_seed])

    def params(self) -> dict[str, str]:
        """MLflow params of the cell: task, names, seed and ``dataset.<p>``/``method.<p>``/
        ``metric.<name>.<p>``, each value as :func:`param_text` gives it (at most
        :data:`PARAM_VALUE_MAX` characters, a longer one ending in its length and hash)."""
        out = {
            "task": self.task,
            "dataset": self.dataset,
            "method": self.method,
            "seed": str(self.seed),
        }
        out |= {f"dataset.{k}": param_text(v) for k, v in self.dataset_params.items()}
        out |= {f"method.{k}": param_text(v) for k, v in self.method_params.items()}
        for name, params in self.metrics:
            out |= {f"metric.{name}.{k}": param_text(v) for k, v in params.items()}
        return out
