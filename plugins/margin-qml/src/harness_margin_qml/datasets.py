"""Datasets of the ``margin-qml`` task: two spin-chain phase sets and binary digits.

Source: Hur & Park, ICML 2025, ``QPR/data/data_gen_Cluster.py`` and ``NQE/data.py`` as
summarised in ``docs/papers/margin-qml.md`` §2 and §6.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field
from pydantic.dataclasses import dataclass

from harness import Dataset
from harness_margin_qml.data import QMLData

# scipy (exact diagonalisation) and scikit-learn are imported where used, so that
# registering the plugin stays light (issue 20).

__all__ = ["ClusterPhases", "DigitsBinary", "TfimPhases", "add_label_noise"]

# Areas of the four phases in [-4, 4]^2 (papers file §2): SPT, FM, AFM, trivial.
_CLUSTER_AREAS = np.array([29.0, 15.5, 15.5, 4.0])


def add_label_noise(y: np.ndarray, r: float, n_classes: int, rng: np.random.Generator):
    """Redraw ⌊r·len(y)⌋ labels, at indices drawn without replacement, uniformly from the
    classes (so the expected corrupted fraction is r(K-1)/K).

    Returns
    -------
    numpy.ndarray of int64, shape like ``y``
    """
    y = y.copy()
    idx = rng.choice(len(y), size=int(np.floor(r * len(y))), replace=False)
    y[idx] = rng.integers(0, n_classes, size=len(idx))
    return y


SplitSize = Annotated[int, Field(ge=2)]


@dataclass
class _SplitParams:
    """Fields and validation shared by every dataset's ``Params``."""

    n_qubits: Annotated[int, Field(ge=4)] = 8
    n_train: SplitSize = 20
    n_test: SplitSize = 200
    noise: Annotated[float, Field(ge=0, le=1)] = 0.0  # label-noise fraction r


def _sample_cluster(n: int, n_classes: int, rng: np.random.Generator):
    from harness_margin_qml import _hamiltonians as hamiltonians

    accept = 4.0 / _CLUSTER_AREAS if n_classes == 4 else np.array([1.0, 29 / 35, 29 / 35, 29 / 35])
    out: list[tuple[float, float, int]] = []
    while len(out) < n:
        j1, j2 = rng.uniform(-4, 4, size=2)
        phase = hamiltonians.cluster_phase(j1, j2)
        if rng.uniform() < accept[phase]:
            out.append((j1, j2, phase if n_classes == 4 else int(phase != 0)))
    arr = np.array(out)
    return arr[:, :2], arr[:, 2].astype(np.int64)


def _sample_tfim(n: int, rng: np.random.Generator):
    out: list[tuple[float, float]] = []
    while len(out) < n:
        j, g = rng.uniform(-1, 1), rng.uniform(-0.9, 0.9)
        if abs(j) >= 0.1:
            out.append((j, g))
    arr = np.array(out)
    return arr, (arr[:, 0] < 0).astype(np.int64)  # 0 = ferromagnet (J > 0), 1 = AFM


def _noisy_data(params, seed: int, x, y, couplings, n_classes: int, encoding) -> QMLData:
    """QMLData from (train, test) pairs of x, clean y and couplings, with label noise drawn
    from ``[seed, 1]`` (train first, then test)."""
    noise_rng = np.random.default_rng([seed, 1])
    return QMLData(
        x_train=x[0],
        y_train=add_label_noise(y[0], params.noise, n_classes, noise_rng),
        x_test=x[1],
        y_test=add_label_noise(y[1], params.noise, n_classes, noise_rng),
        y_train_clean=y[0],
        y_test_clean=y[1],
        couplings_train=couplings[0],
        couplings_test=couplings[1],
        n_qubits=params.n_qubits,
        n_classes=n_classes,
        encoding=encoding,
        noise=params.noise,
    )


def _phase_data(model, sampler, params, n_classes: int, seed: int) -> QMLData:
    from harness_margin_qml import _hamiltonians as hamiltonians

    train_c, train_y = sampler(params.n_train, np.random.default_rng(seed))
    test_c, test_y = sampler(params.n_test, np.random.default_rng([params.test_seed, 7]))
    x = [hamiltonians.ground_states(model, params.n_qubits, c) for c in (train_c, test_c)]
    return _noisy_data(
        params, seed, x, (train_y, test_y), (train_c, test_c), n_classes, "amplitude"
    )


def _describe(data: QMLData) -> dict[str, float | int | str]:
    return {"train_labels_changed": int((data.y_train != data.y_train_clean).sum())}


class ClusterPhases(Dataset):
    """Ground states of the generalised cluster chain, labelled by phase.

    Source: Hur & Park, ICML 2025, QPR dataset (``data_gen_Cluster.py``); Hamiltonian
    H = Σ Z_j - J1 Σ X_j X_{j+1} - J2 Σ X_j Z_{j+1} X_{j+2} (open chain, papers file §2).

    (J1, J2) ~ U[-4, 4]^2, accepted with probability 4/area(phase) (four classes) or 1 and
    29/35 (two classes: SPT vs rest), so classes are balanced in expectation. Ground states by
    ``eigsh`` (tol 1e-12), sign-fixed, cached on disk. The test set is drawn from
    ``test_seed`` only, so every suite seed shares it (as the paper's one test set).

    Parameters
    ----------
    n_qubits : int, default=8
        Chain length, >= 4.
    n_train : int, default=20
    n_test : int, default=200
    noise : float, default=0.0
        Label-noise fraction r in [0, 1], applied to train and test labels.
    n_classes : {4, 2}, default=4
    test_seed : int, default=0

    Returns
    -------
    QMLData
        ``encoding="amplitude"``; x of shape (n_rows, 2**n_qubits).

    Raises
    ------
    ValueError
        If n_qubits < 4, noise outside [0, 1], or n_train / n_test < 2.
    """

    name = "cluster-phases"
    task = "margin-qml"
    test_params: ClassVar[dict] = {"n_qubits": 4, "n_train": 8, "n_test": 8}

    @dataclass
    class Params(_SplitParams):
        n_classes: Literal[4, 2] = 4
        test_seed: int = 0

    def load(self, params: ClusterPhases.Params, seed: int) -> QMLData:
        sampler = lambda n, rng: _sample_cluster(n, params.n_classes, rng)  # noqa: E731
        return _phase_data("cluster", sampler, params, params.n_classes, seed)

    def describe(self, data: QMLData) -> dict[str, float | int | str]:
        return _describe(data)


class TfimPhases(Dataset):
    """Ground states of the transverse-field Ising chain: ferromagnet (0) vs antiferromagnet (1).

    Source: Hur & Park, official code TFIM set (papers file §2): H = -J Σ Z Z - J g Σ X,
    open chain, J ~ U[-1, 1] with |J| >= 0.1, g ~ U[-0.9, 0.9], label from the sign of J.

    Parameters
    ----------
    n_qubits : int, default=8
    n_train : int, default=20
    n_test : int, default=200
    noise : float, default=0.0
        Label-noise fraction r in [0, 1].
    test_seed : int, default=0

    Returns
    -------
    QMLData
        Two classes, ``encoding="amplitude"``. In the ordered phase the two lowest levels are
        nearly degenerate; the state is the projection of |+...+> onto the degenerate space.

    Raises
    ------
    ValueError
        If n_qubits < 4, noise outside [0, 1], or n_train / n_test < 2.
    """

    name = "tfim-phases"
    task = "margin-qml"
    test_params: ClassVar[dict] = {"n_qubits": 4, "n_train": 8, "n_test": 8}

    @dataclass
    class Params(_SplitParams):
        test_seed: int = 0

    def load(self, params: TfimPhases.Params, seed: int) -> QMLData:
        return _phase_data("tfim", _sample_tfim, params, 2, seed)

    def describe(self, data: QMLData) -> dict[str, float | int | str]:
        return _describe(data)


class DigitsBinary(Dataset):
    """scikit-learn's bundled 8x8 digits, 0 vs 1, reduced by PCA to one feature per qubit.

    Source: Hur, Araujo & Park, arXiv 2311.11412 (NQE) data pipeline (papers file §6), with
    ``sklearn.datasets.load_digits`` as the offline stand-in for MNIST.

    The 360 images are shuffled by ``seed`` and split; PCA is fitted on the training split
    only (the official code fits it on each split, a bug not copied); each sample's features
    are then min-max scaled to [0, π] (per sample, as in ``NQE/data.py``).

    Parameters
    ----------
    n_qubits : int, default=8
        Number of PCA features, >= 4.
    n_train : int, default=160
    n_test : int, default=200
        n_train + n_test <= 360.
    noise : float, default=0.0
        Label-noise fraction r in [0, 1].

    Returns
    -------
    QMLData
        ``encoding="features"``; x of shape (n_rows, n_qubits), radians.

    Raises
    ------
    ValueError
        If n_qubits < 4, noise outside [0, 1], or n_train + n_test > 360.
    """

    name = "digits-binary"
    task = "margin-qml"
    test_params: ClassVar[dict] = {"n_qubits": 4, "n_train": 16, "n_test": 16}

    @dataclass
    class Params(_SplitParams):
        n_train: SplitSize = 160

        def __post_init__(self) -> None:  # a constraint between two fields
            if self.n_train + self.n_test > 360:
                raise ValueError(
                    f"n_train + n_test must be <= 360 (digits 0 and 1), got "
                    f"{self.n_train + self.n_test}"
                )

    def load(self, params: DigitsBinary.Params, seed: int) -> QMLData:
        from sklearn.datasets import load_digits
        from sklearn.decomposition import PCA

        x, y = load_digits(n_class=2, return_X_y=True)
        order = np.random.default_rng(seed).permutation(len(y))
        tr, te = order[: params.n_train], order[params.n_train : params.n_train + params.n_test]
        pca = PCA(n_components=params.n_qubits, random_state=0).fit(x[tr])
        feats = [_scale_rows(pca.transform(x[idx])) for idx in (tr, te)]
        y = y.astype(np.int64)
        empty = (np.zeros((len(tr), 0)), np.zeros((len(te), 0)))
        return _noisy_data(params, seed, feats, (y[tr], y[te]), empty, 2, "features")

    def describe(self, data: QMLData) -> dict[str, float | int | str]:
        return _describe(data)


def _scale_rows(f: np.ndarray) -> np.ndarray:
    lo, hi = f.min(axis=1, keepdims=True), f.max(axis=1, keepdims=True)
    return np.pi * (f - lo) / np.where(hi > lo, hi - lo, 1.0)
