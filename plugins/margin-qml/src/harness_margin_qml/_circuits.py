"""The paper's circuits on the torch simulator: QCNN, StronglyEntanglingLayers, embeddings.

Source: Hur & Park, ICML 2025, official code ``takh04/Q-margin`` (``QPR/models/QPR.py``,
``model_utils.py``) as summarised in ``docs/papers/margin-qml.md`` §3; PennyLane templates
``StronglyEntanglingLayers``, ``IQPEmbedding`` and ``AmplitudeEmbedding`` for the gate order.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from harness_margin_qml import _sim as sim

__all__ = [
    "BLOCK_PARAMS",
    "QCNN",
    "StronglyEntangling",
    "amplitude_states",
    "iqp_states",
    "qcnn_layout",
    "readout_wires",
    "su4_blocks",
]

BLOCK_PARAMS = 15
# The 10-qubit QCNN ends with two blocks instead of a third pooling level (papers file §3).
_FINAL_10 = ((4, 6), (6, 0))
# Angles of the four U3 gates of a block: first (a), first (b), last (a), last (b).
_U3_SLOTS = [0, 1, 2, 3, 4, 5, 9, 10, 11, 12, 13, 14]


def su4_blocks(theta: torch.Tensor) -> torch.Tensor:
    """The 15-parameter two-qubit block U_SU4 on ``|a b>`` as a matrix.

    Gate order: U3(a) U3(b); CNOT(a→b); RY(a) RZ(b); CNOT(b→a); RY(a); CNOT(a→b);
    U3(a) U3(b) (papers file §3). Parameters 0-2 and 3-5 feed the first U3 pair, 6 and 7 the
    RY/RZ pair, 8 the second RY, 9-11 and 12-14 the last U3 pair.

    Parameters
    ----------
    theta : torch.Tensor of float, shape (n_blocks, 15)
        Angles in radians; float32 gives complex64 matrices, float64 complex128.

    Returns
    -------
    torch.Tensor of complex, shape (n_blocks, 4, 4)
    """
    p = theta.shape[0]
    u = sim.u3(*theta[:, _U3_SLOTS].reshape(p, 4, 3).unbind(-1))  # (p, 4, 2, 2)
    ctype = u.dtype
    first, last = sim.kron(u[:, 0], u[:, 1]), sim.kron(u[:, 2], u[:, 3])
    middle = sim.kron(sim.ry(theta[:, 6]), sim.rz(theta[:, 7]))
    second_ry = sim.kron(sim.ry(theta[:, 8]), torch.eye(2, dtype=ctype).expand(p, 2, 2))
    ab, ba = sim.cnot(True, ctype), sim.cnot(False, ctype)
    return last @ ab @ second_ry @ ba @ middle @ ab @ first


def _brick(wires: list[int]) -> list[tuple[int, int]]:
    m = len(wires)
    even = [(wires[2 * k], wires[2 * k + 1]) for k in range(m // 2)]
    shifted = [(wires[m - 1], wires[0])] + [
        (wires[2 * k - 1], wires[2 * k]) for k in range(1, m // 2)
    ]
    return even + shifted


@functools.cache
def qcnn_layout(n_qubits: int, layers: int) -> tuple[tuple[int, int, int], ...]:
    """Blocks of the QCNN as ``(a, b, group)``, in circuit order.

    Each level repeats a brickwork of blocks ``layers`` times over its active wires (pairs
    (w0, w1), (w2, w3), ... then the periodic shift (w_{m-1}, w0), (w1, w2), ...), then drops
    every second active wire ("pooling" without gates). ``group`` numbers the level
    repetitions (and each final block); the shared QCNN gives every group one parameter set.

    Parameters
    ----------
    n_qubits : int
        Even, at least 4. 8 and 10 reproduce the papers file's layouts exactly; other even
        sizes follow the same rule until two wires remain, then one block (w1, w0).
    layers : int
        L, the repetitions per level, at least 1.

    Returns
    -------
    tuple of (int, int, int)
        180L + 15 parameters unshared / 15(2L + 1) shared at 8 qubits; 210L + 30 /
        15(2L + 2) at 10 qubits.

    Raises
    ------
    ValueError
        If ``n_qubits`` is odd or below 4, or ``layers`` below 1.
    """
    if n_qubits < 4 or n_qubits % 2:
        raise ValueError(f"n_qubits must be even and >= 4 for the QCNN, got {n_qubits}")
    if layers < 1:
        raise ValueError(f"layers must be >= 1, got {layers}")
    out: list[tuple[int, int, int]] = []
    wires, group, level = list(range(n_qubits)), 0, 0
    while len(wires) > 2 and not (n_qubits == 10 and level == 2):
        for _ in range(layers):
            out += [(a, b, group) for a, b in _brick(wires)]
            group += 1
        wires, level = wires[::2], level + 1
    finals = _FINAL_10 if n_qubits == 10 else ((wires[1], wires[0]),)
    for a, b in finals:
        out.append((a, b, group))
        group += 1
    return tuple(out)


def readout_wires(n_classes: int) -> tuple[int, ...]:
    """Measured wires: (0,) for two classes, (0, 2) for four (papers file §3).

    Raises
    ------
    ValueError
        If ``n_classes`` is not 2 or 4.
    """
    if n_classes == 2:
        return (0,)
    if n_classes == 4:
        return (0, 2)
    raise ValueError(f"n_classes must be 2 or 4, got {n_classes}")


@dataclass(frozen=True)
class QCNN:
    """Quantum convolutional network of U_SU4 blocks without pooling gates.

    Parameters
    ----------
    n_qubits : int
    layers : int
    shared : bool
        One 15-parameter set per level repetition (``QCNN_shared``) or per block.
    """

    n_qubits: int
    layers: int
    shared: bool

    @property
    def layout(self) -> tuple[tuple[int, int, int], ...]:
        return qcnn_layout(self.n_qubits, self.layers)

    @property
    def n_params(self) -> int:
        """Number of trainable angles."""
        n_sets = (self.layout[-1][2] + 1) if self.shared else len(self.layout)
        return BLOCK_PARAMS * n_sets

    def __call__(self, psi: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
        """Apply the circuit to states (batch, 2, ..., 2) with angles ``theta`` (n_params,)."""
        mats = su4_blocks(theta.reshape(-1, BLOCK_PARAMS)).unbind(0)
        for k, (a, b, group) in enumerate(self.layout):
            psi = sim.apply_2q(psi, mats[group if self.shared else k], a, b)
        return psi


@functools.cache
def _cz_ring_diagonal(n_qubits: int, rng: int) -> np.ndarray:
    bits = (1 - sim.z_signs(n_qubits).astype(np.int64)) // 2
    parity = np.zeros(2**n_qubits, dtype=np.int64)
    for i in range(n_qubits):
        parity += bits[:, i] * bits[:, (i + rng) % n_qubits]
    return (-1.0) ** parity


@dataclass(frozen=True)
class StronglyEntangling:
    """StronglyEntanglingLayers with CZ entanglers (``qml.StronglyEntanglingLayers``).

    Layer l: Rot(φ, θ, ω) on every wire, then CZ(i, (i + r_l) mod n) for every i, with range
    r_l = (l mod (n - 1)) + 1 (PennyLane's default ranges). 3nL parameters, ordered as
    PennyLane's weights of shape (L, n, 3).
    """

    n_qubits: int
    layers: int

    @property
    def n_params(self) -> int:
        """Number of trainable angles."""
        return 3 * self.n_qubits * self.layers

    def __call__(self, psi: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
        """Apply the circuit to states (batch, 2, ..., 2) with angles ``theta`` (n_params,)."""
        n = self.n_qubits
        w = theta.reshape(self.layers, n, 3)
        gates = sim.rot(w[..., 0], w[..., 1], w[..., 2])  # (L, n, 2, 2), all layers at once
        fused = [_kron_chunk(gates[:, i : i + 4]) for i in range(0, n, 4)]  # one per 4 wires
        for layer in range(self.layers):
            for i, chunk in zip(range(0, n, 4), fused, strict=True):
                psi = sim.apply_local(psi, chunk[layer], i, min(4, n - i))
            diag = torch.as_tensor(_cz_ring_diagonal(n, layer % (n - 1) + 1), dtype=psi.dtype)
            psi = sim.apply_diagonal(psi, diag)
        return psi


def _kron_chunk(gates: torch.Tensor) -> torch.Tensor:
    """Kronecker product over axis 1 of (L, m, 2, 2) one-qubit gates: (L, 2**m, 2**m)."""
    out = gates[:, 0]
    for j in range(1, gates.shape[1]):
        g = gates[:, j]
        d = out.shape[-1] * 2
        out = torch.einsum("...ij,...kl->...ikjl", out, g).reshape(*out.shape[:-2], d, d)
    return out


def amplitude_states(states: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """``AmplitudeEmbedding(normalize=True)``: real or complex vectors (batch, 2**n) as states.

    Returns
    -------
    torch.Tensor of complex, shape (batch, 2, ..., 2)
    """
    x = np.asarray(states)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    n = int(np.log2(x.shape[1]))
    return torch.as_tensor(x, dtype=dtype).reshape(x.shape[0], *([2] * n))


def iqp_states(x: torch.Tensor, n_repeats: int, dtype: torch.dtype) -> torch.Tensor:
    """``IQPEmbedding(x, n_repeats)``: repeat [H on all wires; RZ(x_i) on wire i;
    MultiRZ(x_i x_j) on every pair i < j] from |0...0>.

    Parameters
    ----------
    x : torch.Tensor of float, shape (batch, n_qubits)
        Features in radians; differentiable (the NQE trains through it).
    n_repeats : int
    dtype : torch.dtype
        complex64 or complex128.

    Returns
    -------
    torch.Tensor of complex, shape (batch, 2, ..., 2)
    """
    batch, n = x.shape
    z = torch.as_tensor(sim.z_signs(n), dtype=x.dtype)
    zx = x @ z.T  # (batch, 2**n): sum_i x_i z_i
    pairs = (zx**2 - (x**2).sum(1, keepdim=True)) / 2  # sum_{i<j} x_i x_j z_i z_j
    angle = -(zx + pairs) / 2
    phase = torch.complex(torch.cos(angle), torch.sin(angle)).to(dtype)
    psi = torch.zeros(batch, 2**n, dtype=dtype)
    psi[:, 0] = 1
    psi = psi.reshape(batch, *([2] * n))
    for _ in range(n_repeats):
        psi = sim.apply_diagonal(sim.hadamard_all(psi), phase)
    return psi
