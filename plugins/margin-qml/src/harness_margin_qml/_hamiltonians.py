"""Spin-chain Hamiltonians, their phase labels, and cached exact ground states.

Source: Hur & Park, ICML 2025, official ``QPR/data/data_gen_Cluster.py`` (generalised cluster
chain, phase lines J2 = J1 - 1, J2 = -J1 - 1, J2 = 1) and the TFIM set, as summarised in
``docs/papers/margin-qml.md`` §2; fast exact diagonalisation with ``scipy.sparse.linalg.eigsh``.

Ground states are cached on disk by ``joblib.Memory``, one entry per (model, n, J1, J2), in a
folder per version of this module's code (:func:`code_digest`) under
``$HARNESS_CACHE_DIR/margin-qml`` (default ``~/.cache/harness/margin-qml``), never in the
repository. Set ``HARNESS_CACHE_DIR`` to move it.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh

__all__ = [
    "cache_dir",
    "cluster_hamiltonian",
    "cluster_phase",
    "code_digest",
    "ground_state",
    "ground_states",
    "tfim_hamiltonian",
]

_DEGENERATE_TOL = 1e-9  # eigenvalues closer than this (in units of H) count as degenerate


def cache_dir() -> Path:
    """Folder of the ground-state cache: ``$HARNESS_CACHE_DIR/margin-qml`` or
    ``~/.cache/harness/margin-qml``."""
    root = os.environ.get("HARNESS_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "harness"
    return base / "margin-qml"


@functools.cache
def code_digest() -> str:
    """The first 12 hex digits of the SHA-256 of this module's source, part of every
    cache path: after an edit to the Hamiltonians or the diagonalisation, the states are
    computed again instead of read from what other code computed."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def _bits(n: int) -> np.ndarray:
    k = np.arange(2**n)[:, None]
    return (k >> (n - 1 - np.arange(n))[None, :]) & 1  # (2**n, n); wire 0 = high bit


def _pauli_string(n: int, xs: tuple[int, ...], zs: tuple[int, ...]) -> sp.csr_matrix:
    """Sparse product of X on wires ``xs`` and Z on wires ``zs`` (disjoint), (2**n, 2**n)."""
    bits = _bits(n)
    rows = np.arange(2**n)
    flip = sum(1 << (n - 1 - w) for w in xs)
    sign = np.prod(1 - 2 * bits[:, list(zs)], axis=1) if zs else np.ones(2**n)
    # <r ^ flip| P |r> : X flips the bits, Z acts on the ket first (column index r).
    return sp.csr_matrix((sign.astype(float), (rows ^ flip, rows)), shape=(2**n, 2**n))


@functools.cache
def _cluster_terms(n: int) -> tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
    z = sum(_pauli_string(n, (), (j,)) for j in range(n))
    xx = sum(_pauli_string(n, (j, j + 1), ()) for j in range(n - 1))
    xzx = sum(_pauli_string(n, (j, j + 2), (j + 1,)) for j in range(n - 2))
    return z.tocsr(), xx.tocsr(), xzx.tocsr()


def cluster_hamiltonian(n: int, j1: float, j2: float) -> sp.csr_matrix:
    """H = Σ Z_j - J1 Σ X_j X_{j+1} - J2 Σ X_j Z_{j+1} X_{j+2}, open chain; (2**n, 2**n)."""
    z, xx, xzx = _cluster_terms(n)
    return (z - j1 * xx - j2 * xzx).tocsr()


@functools.cache
def _tfim_terms(n: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    zz = sum(_pauli_string(n, (), (j, j + 1)) for j in range(n - 1))
    x = sum(_pauli_string(n, (j,), ()) for j in range(n))
    return zz.tocsr(), x.tocsr()


def tfim_hamiltonian(n: int, j: float, g: float) -> sp.csr_matrix:
    """H = -J Σ Z_i Z_{i+1} - J g Σ X_i, open chain; (2**n, 2**n)."""
    zz, x = _tfim_terms(n)
    return (-j * zz - j * g * x).tocsr()


def cluster_phase(j1: float, j2: float) -> int:
    """Phase label of the cluster chain at (J1, J2) (papers file §2 table).

    Returns
    -------
    int
        0 SPT/cluster, 1 ferromagnet (large +J1), 2 antiferromagnet (large -J1), 3 trivial.
    """
    above_a, above_b = j2 > j1 - 1, j2 > -j1 - 1
    if above_b and not above_a:
        return 1
    if above_a and not above_b:
        return 2
    if above_a and above_b and j2 < 1:
        return 3
    return 0


def _lowest_state(h: sp.csr_matrix) -> np.ndarray:
    """Lowest eigenvector with a deterministic choice inside a degenerate ground space and
    a sign fix (largest |amplitude| positive)."""
    dim = h.shape[0]
    v0 = np.random.default_rng(0).standard_normal(dim)
    vals, vecs = eigsh(h, k=3, which="SA", tol=1e-12, v0=v0, maxiter=100_000)
    order = np.argsort(vals)
    vals, vecs = vals[order], vecs[:, order]
    space = vecs[:, np.abs(vals - vals[0]) < _DEGENERATE_TOL * max(1.0, abs(vals[0]))]
    state = vecs[:, 0]
    if space.shape[1] > 1:  # project a fixed reference vector onto the ground space
        for ref in (np.ones(dim), v0):
            cand = space @ (space.T @ ref)
            if np.linalg.norm(cand) > 1e-6:
                state = cand
                break
    state = state / np.linalg.norm(state)
    state = state * np.sign(state[np.argmax(np.abs(state))])
    return state


def ground_state(model: str, n: int, a: float, b: float, use_cache: bool = True) -> np.ndarray:
    """Real ground state of ``model`` ("cluster": (J1, J2); "tfim": (J, g)) at ``n`` qubits.

    Parameters
    ----------
    model : {"cluster", "tfim"}
    n : int
        Number of qubits.
    a, b : float
        (J1, J2) for the cluster chain, (J, g) for the TFIM.
    use_cache : bool, default=True
        Read and write the on-disk cache (``joblib.Memory``, keyed by :func:`code_digest`
        too).

    Returns
    -------
    numpy.ndarray of float64, shape (2**n,)
        Unit norm; the largest-magnitude amplitude is positive.
    """
    a, b = float(a), float(b)
    solve = _cached_solve(cache_dir() / code_digest()) if use_cache else _solve
    return solve(model, n, a, b)


@functools.lru_cache(maxsize=8)
def _cached_solve(location: Path) -> Callable[[str, int, float, float], np.ndarray]:
    """:func:`_solve` memoised on disk under ``location`` (joblib writes each entry
    atomically, so worker processes can share the folder)."""
    import joblib

    return joblib.Memory(location, verbose=0).cache(_solve)


def _solve(model: str, n: int, a: float, b: float) -> np.ndarray:
    h = cluster_hamiltonian(n, a, b) if model == "cluster" else tfim_hamiltonian(n, a, b)
    return _lowest_state(h)


def ground_states(model: str, n: int, couplings: np.ndarray) -> np.ndarray:
    """Ground states for each row (a, b) of ``couplings`` (n_points, 2): (n_points, 2**n)."""
    return np.stack([ground_state(model, n, float(a), float(b)) for a, b in couplings])
