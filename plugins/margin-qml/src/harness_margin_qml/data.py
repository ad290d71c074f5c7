"""Data and output objects of the ``margin-qml`` task.

Source: Hur & Park, ICML 2025 (arXiv 2411.06919); field meanings follow
``docs/papers/margin-qml.md`` §2-§4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["QMLData", "QNNGroupOutput", "QNNOutput"]


def _check_finite(obj: object, fields: tuple[str, ...]) -> None:
    """Raise ValueError naming the first field (of ``obj``) with a NaN or infinite entry."""
    for name in fields:
        value = getattr(obj, name)
        if value is None:
            continue
        arr = np.asarray(value)
        if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
            bad = int((~np.isfinite(arr)).sum())
            raise ValueError(
                f"{type(obj).__name__}.{name} has {bad} non-finite value(s) (NaN or inf); "
                f"it must be finite"
            )


@dataclass(frozen=True)
class QMLData:
    """A classification task for a quantum classifier.

    Attributes
    ----------
    x_train : numpy.ndarray of float64
        ``encoding == "amplitude"``: unit-norm real ground states, shape (n_train, 2**n_qubits).
        ``encoding == "features"``: classical features in radians [0, π],
        shape (n_train, n_qubits).
    y_train : numpy.ndarray of int64, shape (n_train,)
        Labels in {0, ..., n_classes - 1}, after label noise.
    x_test : numpy.ndarray of float64
        As ``x_train`` with n_test rows.
    y_test : numpy.ndarray of int64, shape (n_test,)
        Labels after the same label noise (as in the paper).
    y_train_clean, y_test_clean : numpy.ndarray of int64
        Labels before noise (the phase, or the digit), shapes (n_train,), (n_test,).
    couplings_train, couplings_test : numpy.ndarray of float64
        Hamiltonian couplings of each state, shape (n_rows, 2): (J1, J2) for the cluster
        chain, (J, g) for the TFIM; shape (n_rows, 0) for classical data. Unitless.
    n_qubits : int
        Width of the circuit.
    n_classes : int
        2 or 4.
    encoding : {"amplitude", "features"}
        How a row becomes a quantum state: amplitude embedding, or a feature map chosen by
        the method (IQP, NQE).
    noise : float
        Label-noise fraction r in [0, 1]: ⌊r·n⌋ labels of each split redrawn uniformly.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    y_train_clean: np.ndarray
    y_test_clean: np.ndarray
    couplings_train: np.ndarray
    couplings_test: np.ndarray
    n_qubits: int
    n_classes: int
    encoding: Literal["amplitude", "features"]
    noise: float

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        """Validate finiteness, lengths and label range.

        Raises
        ------
        ValueError
            Naming the field: a non-finite entry, rows of x and y that differ in number, or a
            label outside [0, n_classes).
        """
        _check_finite(self, ("x_train", "x_test", "couplings_train", "couplings_test", "noise"))
        for split in ("train", "test"):
            x, y = getattr(self, f"x_{split}"), getattr(self, f"y_{split}")
            if len(x) != len(y):
                raise ValueError(f"x_{split} has {len(x)} rows but y_{split} has {len(y)}")
            for name in (f"y_{split}", f"y_{split}_clean"):
                labels = np.asarray(getattr(self, name))
                if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
                    raise ValueError(
                        f"{name} must hold labels in [0, {self.n_classes}), got "
                        f"[{labels.min()}, {labels.max()}]"
                    )


@dataclass(frozen=True)
class QNNOutput:
    """A trained quantum classifier's class probabilities and parameters.

    Attributes
    ----------
    train_probs : numpy.ndarray of float64, shape (n_train, n_classes)
        Born probabilities p_j(x) of the readout, rows sum to 1.
    test_probs : numpy.ndarray of float64, shape (n_test, n_classes)
    theta_init : numpy.ndarray of float64, shape (n_params,)
        Circuit angles at initialisation, radians.
    theta_final : numpy.ndarray of float64, shape (n_params,)
        Circuit angles after training (final step, not the best one), radians.
    loss : numpy.ndarray of float64, shape (n_steps,)
        Training loss per optimiser step (unitless, nats).
    train_states : numpy.ndarray of complex128 or None
        Embedded training states, shape (n_train, 2**n_qubits), for methods that learn or
        choose an embedding (trace distance); None for amplitude-embedded data.
    n_embedding_params : int
        Trainable classical parameters of the embedding (0 when fixed); not counted in
        ``theta``.
    """

    train_probs: np.ndarray
    test_probs: np.ndarray
    theta_init: np.ndarray
    theta_final: np.ndarray
    loss: np.ndarray
    train_states: np.ndarray | None = None
    n_embedding_params: int = 0

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        """Validate finiteness and shapes.

        Raises
        ------
        ValueError
            Naming the field: a non-finite entry (a diverged training run), probabilities
            that are not 2-D, or ``theta_init`` and ``theta_final`` of different shapes.
        """
        _check_finite(
            self,
            ("train_probs", "test_probs", "theta_init", "theta_final", "loss", "train_states"),
        )
        for name in ("train_probs", "test_probs"):
            if np.ndim(getattr(self, name)) != 2:
                raise ValueError(
                    f"{name} must have shape (n, n_classes), got {np.shape(getattr(self, name))}"
                )
        if np.shape(self.theta_init) != np.shape(self.theta_final):
            raise ValueError(
                f"theta_init {np.shape(self.theta_init)} and theta_final "
                f"{np.shape(self.theta_final)} must have one shape"
            )


@dataclass(frozen=True)
class QNNGroupOutput(QNNOutput):
    """Several trained classifiers from one group cell (one batched simulation).

    A group cell (``qcnn-group``, ``strongly-entangling-group``) trains one model per entry
    of its ``layers`` list on the cell's data and seed; ``members[k]`` is the model keyed
    ``keys[k]`` (``"L1"``, ``"L3"``, ...) and equals what the single-model cell with that
    ``layers`` and the same seed returns (``tests/test_batched.py``). The inherited fields
    repeat ``members[0]`` so that code reading a plain :class:`QNNOutput` sees a valid
    model; this task's metrics score every member (keys ``"<key>"`` or ``"<key>.<sub>"``).

    Attributes
    ----------
    members : tuple of QNNOutput
    keys : tuple of str
        One per member, unique.
    """

    members: tuple[QNNOutput, ...] = ()
    keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        """Validate as :class:`QNNOutput`, plus one unique key per member.

        Raises
        ------
        ValueError
            If ``members`` is empty, or ``keys`` are not one unique string per member.
        """
        super().__post_init__()
        if not self.members:
            raise ValueError("QNNGroupOutput.members must hold at least one model")
        if len(self.keys) != len(self.members) or len(set(self.keys)) != len(self.keys):
            raise ValueError(
                f"QNNGroupOutput.keys must be one unique key per member, got {self.keys}"
            )

    @classmethod
    def of(cls, members: list[QNNOutput], keys: list[str]) -> QNNGroupOutput:
        """Build from member outputs and their keys (inherited fields from ``members[0]``)."""
        if not members:
            raise ValueError("QNNGroupOutput.members must hold at least one model")
        first = members[0]
        return cls(
            train_probs=first.train_probs,
            test_probs=first.test_probs,
            theta_init=first.theta_init,
            theta_final=first.theta_final,
            loss=first.loss,
            members=tuple(members),
            keys=tuple(keys),
        )
