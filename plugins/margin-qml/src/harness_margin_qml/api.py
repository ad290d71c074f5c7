"""Public API of the ``margin-qml`` task for method authors.

Source: Hur & Park, "Understanding Generalization in Quantum Machine Learning with Margins",
ICML 2025 (arXiv 2411.06919); official code ``takh04/Q-margin``.

A method receives a :class:`QMLData` and returns a :class:`QNNOutput`:

- ``QMLData.x_train`` float64, (n_train, 2**n_qubits) unit-norm real ground states when
  ``encoding == "amplitude"``, or (n_train, n_qubits) features in radians when
  ``encoding == "features"``; ``y_train`` (n_train,) int64 labels in [0, n_classes) after label
  noise; the same for ``_test``. ``y_*_clean`` (labels before noise) and ``couplings_*``
  (Hamiltonian parameters, (n, 2)) are oracle knowledge for analysis only.
- ``QNNOutput(train_probs (n_train, K), test_probs (n_test, K), theta_init (p,),
  theta_final (p,), loss (n_steps,), train_states (n_train, 2**n) complex or None,
  n_embedding_params)``; every array finite (checked on construction). The margin metrics
  read ``train_probs``; ``parameter-count`` reads ``theta_final.size``.

Helpers (numpy only): :func:`margins` (probs (n, K), y (n,)) -> (n,) Born-probability margins;
:func:`trace_distance` (states (n, 2**n), y) -> float; :func:`add_label_noise`.

Helpers that import torch on first use (attribute access, not at ``import``):

- ``QCNN(n_qubits, layers, shared)`` and ``StronglyEntangling(n_qubits, layers)``: circuits
  with ``n_params`` and ``__call__(psi (batch, 2, ..., 2) complex, theta (n_params,)) -> psi``.
- ``amplitude_states(x (n, 2**n), dtype) -> psi``, ``iqp_states(x (n, n_qubits) tensor,
  n_repeats, dtype) -> psi``, ``probs(psi, wires) -> (batch, 2**len(wires))``,
  ``readout_wires(n_classes) -> (0,) or (0, 2)``.
- ``train_circuit(ansatz, embed, data, params, seed) -> QNNOutput``: U[0, 2π) init, Adam, the
  paper's plateau stop and loss (``params`` needs ``lr, max_steps, window, loss, batch_size,
  precision``; ``embed(x, complex dtype) -> psi``).
- ``train_group(ansatze, embed, data, params, seed) -> list[QNNOutput]``: the same for several
  circuits of one family (depths may differ) as one batched simulation; each member equals
  ``train_circuit`` of that circuit. ``GroupCircuit(ansatze)(psi (1 or M, batch, 2**n),
  thetas, wires) -> (M, batch, 2**len(wires))``: the batched forward pass.
  ``QNNGroupOutput.of(members, keys)`` returns several models from one cell (every metric of
  the task scores each member; the report expands them into one row per model).
- ``fit`` (the training loop), ``class_loss``, ``plateaued``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness_margin_qml.data import QMLData, QNNGroupOutput, QNNOutput
from harness_margin_qml.datasets import add_label_noise
from harness_margin_qml.metrics import margins, trace_distance

if TYPE_CHECKING:  # resolved lazily by __getattr__ below
    from harness_margin_qml._batched import GroupCircuit
    from harness_margin_qml._circuits import (
        QCNN,
        StronglyEntangling,
        amplitude_states,
        iqp_states,
        readout_wires,
    )
    from harness_margin_qml._engine import train as train_circuit
    from harness_margin_qml._engine import train_group
    from harness_margin_qml._sim import probs
    from harness_margin_qml._training import class_loss, fit, plateaued

__all__ = [
    "QCNN",
    "GroupCircuit",
    "QMLData",
    "QNNGroupOutput",
    "QNNOutput",
    "StronglyEntangling",
    "add_label_noise",
    "amplitude_states",
    "class_loss",
    "fit",
    "iqp_states",
    "margins",
    "plateaued",
    "probs",
    "readout_wires",
    "trace_distance",
    "train_circuit",
    "train_group",
]

# name -> (module, attribute): imported on first access, so ``import api`` stays torch-free.
_LAZY = {
    "QCNN": ("_circuits", "QCNN"),
    "StronglyEntangling": ("_circuits", "StronglyEntangling"),
    "amplitude_states": ("_circuits", "amplitude_states"),
    "iqp_states": ("_circuits", "iqp_states"),
    "readout_wires": ("_circuits", "readout_wires"),
    "probs": ("_sim", "probs"),
    "fit": ("_training", "fit"),
    "class_loss": ("_training", "class_loss"),
    "plateaued": ("_training", "plateaued"),
    "train_circuit": ("_engine", "train"),
    "train_group": ("_engine", "train_group"),
    "GroupCircuit": ("_batched", "GroupCircuit"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f"harness_margin_qml.{module}"), attr)
    raise AttributeError(f"module 'harness_margin_qml.api' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
