"""Quantum classifiers of the ``margin-qml`` task, trained on the torch simulator.

Source: Hur & Park, ICML 2025, official ``QPR/models/QPR.py`` and ``NQE/`` (papers file §3, §6).
"""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, Field
from pydantic.dataclasses import dataclass

from harness import Method, Skip
from harness_margin_qml.data import QMLData, QNNGroupOutput, QNNOutput

# torch and the simulator are imported inside ``run`` (``_engine``), so that registering the
# plugin stays light (issue 20).

__all__ = [
    "NQE",
    "IQPEmbedding",
    "QCNNGroupMethod",
    "QCNNMethod",
    "StronglyEntanglingGroupMethod",
    "StronglyEntanglingMethod",
]

_FAST = {"max_steps": 5, "window": 2}


def _distinct(depths: list[int]) -> list[int]:
    if len(set(depths)) != len(depths):
        raise ValueError(f"must not repeat a depth, got {depths}")
    return depths


Count = Annotated[int, Field(ge=1)]
Depths = Annotated[list[Count], Field(min_length=1), AfterValidator(_distinct)]
"""layers of a group method: one model per depth, each >= 1, none repeated."""


@dataclass
class _TrainParams:
    layers: Count = 1
    lr: Annotated[float, Field(gt=0)] = 1e-3
    max_steps: Count = 5000
    window: Count = 500
    loss: Literal["softmax-probs", "nll"] = "softmax-probs"
    batch_size: int = 0
    precision: Literal["complex64", "complex128"] = "complex64"
    n_threads: Count = 1
    retain_heap: bool = False


def _amplitude(data: QMLData, name: str) -> None:
    if data.encoding != "amplitude":
        raise Skip(f"'{name}' reads quantum states; this dataset has classical features")


class QCNNMethod(Method):
    """QCNN of 15-parameter U_SU4 blocks on amplitude-embedded ground states.

    Source: Hur & Park, ICML 2025, ``QCNN_shared`` / ``QCNN_not_shared`` in ``QPR/models/QPR.py``
    (papers file §3): no pooling gates, L brickwork repeats per level, readout ``probs`` of
    wire 0 (two classes) or wires (0, 2) (four classes); Adam, full batch, plateau stop.

    Parameters
    ----------
    shared : bool, default=False
        One block per level repetition (15(2L + 1) parameters at 8 qubits) or one per block
        (180L + 15).
    layers : int, default=1
        L.
    lr : float, default=1e-3
        Adam step size.
    max_steps : int, default=5000
    window : int, default=500
        W of the plateau rule (500 at 8 qubits, 300 at 10 in the paper).
    loss : {"softmax-probs", "nll"}, default="softmax-probs"
        The official loss (cross-entropy of probabilities as logits) or -log p_y.
    batch_size : int, default=0
        0 = full batch.
    precision : {"complex64", "complex128"}, default="complex64"
    n_threads : int, default=1
        torch intra-op threads during the run.
    retain_heap : bool, default=False
        Train inside ``_training.retained_heap`` (glibc keeps the step's temporaries in
        the heap; about 7% less CPU at 10 qubits), restored after the run.

    Returns
    -------
    QNNOutput

    Raises
    ------
    Skip
        On classical-feature data.
    ValueError
        If the dataset's n_qubits is odd or below 4 (names ``n_qubits``).
    """

    name = "qcnn"
    task = "margin-qml"
    test_params: ClassVar[dict] = _FAST

    @dataclass
    class Params(_TrainParams):
        shared: bool = False

    def run(self, data: QMLData, params: QCNNMethod.Params, seed: int) -> QNNOutput:
        _amplitude(data, self.name)
        from harness import limit_threads
        from harness_margin_qml import _circuits as circuits
        from harness_margin_qml import _engine

        ansatz = circuits.QCNN(data.n_qubits, params.layers, params.shared)
        with limit_threads(params.n_threads, torch=True):  # the batched engine with one model
            return _engine.train_group([ansatz], circuits.amplitude_states, data, params, seed)[0]


class StronglyEntanglingMethod(Method):
    """StronglyEntanglingLayers (Rot + CZ ring) baseline on amplitude-embedded states.

    Source: Hur & Park, ICML 2025, ``SEL`` ansatz (``qml.StronglyEntanglingLayers`` with CZ
    imprimitive, papers file §3); 3nL parameters.

    Parameters
    ----------
    layers : int, default=1
    lr, max_steps, window, loss, batch_size, precision, n_threads, retain_heap
        As for ``qcnn``.

    Returns
    -------
    QNNOutput

    Raises
    ------
    Skip
        On classical-feature data.
    """

    name = "strongly-entangling"
    task = "margin-qml"
    test_params: ClassVar[dict] = _FAST

    @dataclass
    class Params(_TrainParams):
        pass

    def run(self, data: QMLData, params: StronglyEntanglingMethod.Params, seed: int) -> QNNOutput:
        _amplitude(data, self.name)
        from harness import limit_threads
        from harness_margin_qml import _circuits as circuits
        from harness_margin_qml import _engine

        ansatz = circuits.StronglyEntangling(data.n_qubits, params.layers)
        with limit_threads(params.n_threads, torch=True):  # the batched engine with one model
            return _engine.train_group([ansatz], circuits.amplitude_states, data, params, seed)[0]


def _paper_layers() -> list[int]:
    return [1, 3, 5, 7, 9]


_FAST_GROUP = {**_FAST, "layers": [2, 1]}


def _run_group(name: str, data: QMLData, params, make, seed: int) -> QNNGroupOutput:
    _amplitude(data, name)
    from harness import limit_threads
    from harness_margin_qml import _circuits as circuits
    from harness_margin_qml import _engine

    ansatze = [make(circuits, data.n_qubits, layers) for layers in params.layers]
    with limit_threads(params.n_threads, torch=True):
        members = _engine.train_group(ansatze, circuits.amplitude_states, data, params, seed)
    return QNNGroupOutput.of(members, [f"L{layers}" for layers in params.layers])


class QCNNGroupMethod(Method):
    """The QCNNs of several depths L, trained on one cell's data as one batched simulation.

    Source: as ``qcnn`` (Hur & Park, ICML 2025, papers file §3); batching is this plugin's
    (:func:`harness_margin_qml._engine.train_group`). Member ``L<k>`` equals the ``qcnn``
    cell with ``layers = k`` and the same seed and other params (tested to 1e-10 in
    complex128), so one group cell stands for ``len(layers)`` single cells; the report
    expands it into one row per model.

    Parameters
    ----------
    layers : list of int, default=[1, 3, 5, 7, 9]
        The depths L of the members (distinct).
    shared, lr, max_steps, window, loss, batch_size, precision, n_threads, retain_heap
        As for ``qcnn``.

    Returns
    -------
    QNNGroupOutput
        One member per entry of ``layers``, keyed ``"L<k>"``.

    Raises
    ------
    Skip
        On classical-feature data.
    """

    name = "qcnn-group"
    task = "margin-qml"
    test_params: ClassVar[dict] = _FAST_GROUP

    @dataclass
    class Params(_TrainParams):
        layers: Depths = field(default_factory=_paper_layers)
        shared: bool = False

    def run(self, data: QMLData, params: QCNNGroupMethod.Params, seed: int) -> QNNGroupOutput:
        return _run_group(
            self.name, data, params, lambda c, n, k: c.QCNN(n, k, params.shared), seed
        )


class StronglyEntanglingGroupMethod(Method):
    """StronglyEntanglingLayers of several depths L, trained as one batched simulation.

    Source: as ``strongly-entangling`` (Hur & Park, ICML 2025, papers file §3); batching as
    in ``qcnn-group``. Member ``L<k>`` equals the ``strongly-entangling`` cell with
    ``layers = k`` and the same seed.

    Parameters
    ----------
    layers : list of int, default=[1, 3, 5, 7, 9]
    lr, max_steps, window, loss, batch_size, precision, n_threads, retain_heap
        As for ``qcnn``.

    Returns
    -------
    QNNGroupOutput

    Raises
    ------
    Skip
        On classical-feature data.
    """

    name = "strongly-entangling-group"
    task = "margin-qml"
    test_params: ClassVar[dict] = _FAST_GROUP

    @dataclass
    class Params(_TrainParams):
        layers: Depths = field(default_factory=_paper_layers)

    def run(
        self, data: QMLData, params: StronglyEntanglingGroupMethod.Params, seed: int
    ) -> QNNGroupOutput:
        return _run_group(self.name, data, params, lambda c, n, k: c.StronglyEntangling(n, k), seed)


def _features(data: QMLData, name: str) -> None:
    if data.encoding != "features":
        raise Skip(f"'{name}' embeds classical features; this dataset holds quantum states")


class IQPEmbedding(Method):
    """Fixed IQP embedding of classical features followed by a QCNN classifier.

    Source: Hur, Araujo & Park, arXiv 2311.11412 and Hur & Park, ICML 2025 ``NQE/``
    (papers file §6): ``IQPEmbedding`` (n_repeats = 3) → ``QCNN8_shared`` with L = 1,
    readout ``probs(0)``; Adam lr 1e-3, batch 16, plateau window 300.

    Parameters
    ----------
    n_repeats : int, default=3
    shared : bool, default=True
    layers, lr, max_steps, window, loss, batch_size, precision, n_threads, retain_heap
        As for ``qcnn``; here window=300 and batch_size=16 by default.

    Returns
    -------
    QNNOutput
        With ``train_states`` (the embedded training states) for ``trace-distance``.

    Raises
    ------
    Skip
        On quantum-state data.
    """

    name = "iqp-embedding"
    task = "margin-qml"
    test_params: ClassVar[dict] = _FAST

    @dataclass
    class Params(_TrainParams):
        window: Count = 300
        batch_size: int = 16
        n_repeats: int = 3
        shared: bool = True

    def run(self, data: QMLData, params: IQPEmbedding.Params, seed: int) -> QNNOutput:
        _features(data, self.name)
        from harness import limit_threads
        from harness_margin_qml import _engine

        with limit_threads(params.n_threads, torch=True):
            return _engine.train_iqp(lambda x: x, data, params, seed)


class NQE(Method):
    """Neural quantum embedding: an MLP trained so that same-class IQP states overlap,
    then frozen and followed by a QCNN classifier.

    Source: Hur, Araujo & Park, arXiv 2311.11412 ("PCA-NQE"), as used in Hur & Park,
    ICML 2025 ``NQE/`` (papers file §6): MLP 8→16→32→32→16→8 (ReLU) → IQPEmbedding;
    pre-training minimises MSE(|<ψ(x1)|ψ(x2)>|², 1[y1 = y2]) with SGD lr 0.005 on 64 random
    pairs per step; then the classifier trains as in ``iqp-embedding``.

    Parameters
    ----------
    pretrain_steps : int, default=5000
    pretrain_lr : float, default=0.005
    pairs : int, default=64
    n_repeats, shared, layers, lr, max_steps, window, loss
        As for ``iqp-embedding``.
    batch_size, precision, n_threads, retain_heap
        As for ``iqp-embedding``.

    Returns
    -------
    QNNOutput
        ``train_states`` are the NQE-embedded training states; ``n_embedding_params`` counts
        the MLP weights (not in ``theta``).

    Raises
    ------
    Skip
        On quantum-state data.
    """

    name = "nqe"
    task = "margin-qml"
    test_params: ClassVar[dict] = {**_FAST, "pretrain_steps": 3, "pairs": 4}

    @dataclass
    class Params(IQPEmbedding.Params):
        pretrain_steps: int = 5000
        pretrain_lr: float = 0.005
        pairs: int = 64

    def run(self, data: QMLData, params: NQE.Params, seed: int) -> QNNOutput:
        _features(data, self.name)
        import torch

        from harness import limit_threads
        from harness_margin_qml import _engine

        gen = torch.Generator().manual_seed(seed + 1)
        with limit_threads(params.n_threads, torch=True), torch.random.fork_rng():
            torch.manual_seed(seed)
            net = _engine.mlp(data.n_qubits)
            x = torch.as_tensor(data.x_train)
            _engine.pretrain_nqe(net, x, torch.as_tensor(data.y_train), params, gen)
            net.requires_grad_(False)
            n_net = sum(p.numel() for p in net.parameters())
            return _engine.train_iqp(net, data, params, seed, n_embedding_params=n_net)
