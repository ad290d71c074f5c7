"""Batched-over-models simulation of a group of circuits on one register, without per-gate
permutation copies.

Source: this plugin's engine (a reconstruction of standard statevector simulation, not the
paper's code); the circuits are those of :mod:`harness_margin_qml._circuits` (Hur & Park,
ICML 2025, papers file §3). Checked against the per-model simulator and PennyLane in
``tests/test_batched.py`` and ``tests/test_gradients.py``.

Layout ("ring" contraction). The states of ``M`` models are one tensor of shape
``(M, B * 2**n)``: per model, a flat array whose axes are the batch axis (label ``BATCH``,
size B) and the n wires (labels 0..n-1, size 2) in some *order*. A gate on the last ``k``
axes of the order (matrix ``(M, d, d)``, ``d = 2**k``, first of those axes = high bit) is one
batched matrix product ``G @ psi.view(M, R, d).T`` whose result ``(M, d, R)`` is contiguous:
the acted-on axes move to the front of the order and no copy is made. Two-qubit blocks of
one brickwork half-layer (disjoint pairs) are Kronecker-fused two at a time into 16x16
matrices; Rot gates of StronglyEntanglingLayers four at a time. One permutation copy per
half-layer (or per SEL layer) brings the next half-layer's wires to the end of the order,
where the previous order cannot be reused. Models of different depths (L) are sorted by L,
deepest first, so that the models taking part in a slot (a half-layer, or an SEL layer) are
a prefix of the batch.

Two reductions that leave the Born probabilities of the readout wires exactly as they are
(``GroupCircuit.plan``):

- *QCNN tail.* After its first level the QCNN acts on every second wire only (papers file
  §3). From the first slot after which every gate (and every readout wire) lies on at most
  n/2 wires S, the rest of the circuit (the tail) is one unitary V on S. V is simulated
  once per call on the 2**|S| basis states of S (the same ring plan on an |S|-wire
  register: 4**|S| amplitudes per model against the states' B * 2**n, B times fewer at
  |S| = n/2) and applied to
  the states as one batched matrix product, 2**|S| complex multiply-adds per amplitude,
  where the tail's blocks through the ring plan cost several times more (QCNN, 10 qubits,
  L = 9: 38 of 128 blocks; the plan's cost estimate is as large as the first level's).
  It is used when the cost estimate says it is cheaper and the tail holds more than one
  slot (the last StronglyEntanglingLayers layer, once pruned as below to the readout
  wires, is a one-slot tail, not taken: measured slower). The states are brought to the
  tail's wires first, the rest of their order kept, and V acts on the leading axes.
- *Light cone of the last slot.* Gates of the last slot that touch no readout wire act on
  traced-out wires after everything else, and a diagonal just before a computational-basis
  measurement changes no probability; both are dropped (StronglyEntanglingLayers read out
  on 2 of 10 wires: 8 of the last layer's 10 Rot gates and its CZ ring). Layers of
  StronglyEntanglingLayers models of different depths are aligned at their last layer so
  that the pruned slot is shared; their CZ ranges then differ per model (one diagonal per
  row).

The slots run as one autograd node (:class:`Evolution`) whose backward pass is written by
hand: it carries the conjugate of the gradient, so that a ring product's backward is two
matrix products on transposed views and no copy (``conj(grad_x) = conj(grad_out).T @ G``,
``conj(grad_G) = conj(grad_out) @ x``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from harness_margin_qml import _circuits as circuits

__all__ = ["BATCH", "Evolution", "GroupCircuit", "group_slots"]

BATCH = -1  # label of the batch axis in an order


# -- plans ---------------------------------------------------------------------------------


@dataclass
class _Chunk:
    width: int  # axes consumed from the end of the order (a window of the wire ring)
    wires: tuple[int, ...]  # those axes, high bit first (ring order)
    comps: tuple[tuple[int, ...], ...]  # window positions of each gate's wires (a, b)
    sources: list[np.ndarray]  # per gate: gate index of each active model
    uid: int = 0  # position in the plan


@dataclass
class _Slot:
    m: int  # active models: rows [0, m)
    order: tuple[int, ...]  # order the active rows are brought to before the chunks
    chunks: list[_Chunk]
    diag_ranges: tuple[int, ...] = ()  # per row: CZ ring range after the chunks (0: none)
    final_order: tuple[int, ...] = ()
    cost: float = 0.0  # estimated work: rows x (_bmm_cost + _perm_cost)


@dataclass
class _Plan:
    slots: list[_Slot]
    n_qubits: int
    gather: list | None = None


def _arc(n: int, wires: tuple[int, ...]) -> tuple[int, ...]:
    """The wires a gate spans on the ring 0 -> 1 -> ... -> n-1 -> 0 (the shorter way); a
    fused brick (four wires) lists its ring-contiguous wires already."""
    if len(wires) != 2:
        return wires
    a, b = wires
    fwd, bwd = (b - a) % n + 1, (a - b) % n + 1
    start, length = (a, fwd) if fwd <= bwd else (b, bwd)
    return tuple((start + i) % n for i in range(length))


def _traverse(n, arcs, end, available, max_width):
    """Windows that consume the ring backwards from wire ``end`` until every arc is inside
    one window; None if impossible within ``available`` wires.

    A window may only start after a "valid cut" (an edge w|w+1 inside no arc) and must hold
    at least one whole arc; the largest such window of at most ``max_width`` wires is taken
    (a longer one only when no shorter one holds an arc).
    Returns a list of (window wires in ring order, indices of the arcs it holds).
    """
    inside = {w for arc in arcs for w in arc[:-1]}
    if end in inside:
        return None
    remaining = set(range(len(arcs)))
    pos, used, windows = end, 0, []
    while remaining:
        options = []
        for k in range(1, available - used + 1):
            if (pos - k) % n in inside:
                continue
            window = tuple((pos - k + 1 + i) % n for i in range(k))
            got = sorted(g for g in remaining if set(arcs[g]) <= set(window))
            if got:  # a window without a gate would be a wasted product
                options.append((k, window, got))
        if not options:
            return None
        small = [o for o in options if o[0] <= max_width]
        k, window, got = max(small) if small else min(options)
        windows.append((window, got))
        remaining -= set(got)
        pos, used = (pos - k) % n, used + k
    return windows


def _bmm_cost(windows) -> float:
    """Rough cost per amplitude: memory traffic plus d complex MACs per window."""
    return sum(4 + 2 ** len(w) for w, _ in windows)


def _perm_cost(src, dst) -> float:
    """Rough cost per amplitude of copying from order ``src`` to ``dst``: the copy is slow
    when the innermost contiguous run it can keep is short."""
    if src == dst:
        return 0.0
    run, k = 1, len(dst) - 1
    while k >= 0:
        run *= 16 if dst[k] == BATCH else 2
        if k == 0 or src.index(dst[k - 1]) != src.index(dst[k]) - 1:
            break
        k -= 1
    return 4 + 64 / min(run, 64)


def group_slots(ansatz) -> list[tuple[tuple, list[tuple[tuple[int, ...], object]], int]]:
    """The circuit of one model as slots of commuting gates.

    Parameters
    ----------
    ansatz : circuits.QCNN or circuits.StronglyEntangling

    Returns
    -------
    list of (key, gates, diag_range)
        ``key`` orders and aligns slots across models (QCNN: (level, repetition, half) and
        finals; SEL: (layer - L,), so that the models' last layers line up); ``gates`` are
        (wires, gate index) with disjoint wires: four (a brick of three U_SU4 blocks in
        the QCNN's first level, indices (left, right, middle); see ``_fuse_bricks``), two
        (a U_SU4 block, index into the model's block matrices) or one (a Rot gate, index
        layer·n + wire); ``diag_range`` the CZ ring range after the slot (SEL) or 0.

    Raises
    ------
    TypeError
        For another ansatz.
    """
    if isinstance(ansatz, circuits.QCNN):
        return [(key, gates, 0) for key, gates in _qcnn_slots(ansatz)]
    if isinstance(ansatz, circuits.StronglyEntangling):
        n = ansatz.n_qubits
        return [
            (
                (layer - ansatz.layers,),
                [((w,), layer * n + w) for w in range(n)],
                layer % (n - 1) + 1,
            )
            for layer in range(ansatz.layers)
        ]
    raise TypeError(f"no group plan for {type(ansatz).__name__}")


def _qcnn_slots(ansatz) -> list[tuple[tuple, list[tuple[tuple[int, int], int]]]]:
    """Split ``qcnn_layout`` into runs of disjoint blocks of one group (a half-layer) keyed
    (level, repetition, half); the final blocks are keyed (99, j, half), j counted from the
    first final block, so that models of different L line up."""
    n, layers = ansatz.n_qubits, ansatz.layers
    n_rep_groups = layers * _n_levels(n)
    out: list = []
    cur: list = []
    last, half = None, 0
    for k, (a, b, g) in enumerate(ansatz.layout):
        if cur and (g != last or any(w in (a, b) for ws, _ in cur for w in ws)):
            out.append((_key(last, half, layers, n_rep_groups), cur))
            half = half + 1 if g == last else 0
            cur = []
        cur.append(((a, b), g if ansatz.shared else k))
        last = g
    out.append((_key(last, half, layers, n_rep_groups), cur))
    return _fuse_bricks(out, n)


def _fuse_bricks(slots, n: int):
    """Fuse, in each repetition of the first level, an odd-half block (w, w+1) with the two
    even-half blocks it follows, (w-1, w) and (w+1, w+2), into one four-wire *brick*
    ``(w-1, w, w+1, w+2)``, gate index ``(left, right, middle)``; its matrix is
    (1 ⊗ M ⊗ 1)(L ⊗ R) (:func:`_brick`). Bricks are taken left to right without sharing
    a block, so every second odd block moves into the even half: at 10 qubits the halves
    become [brick(0-3), brick(4-7), (8, 9)] and [(9, 0), (3, 4), (7, 8)].

    Exact: an odd block only has to follow the even blocks on its own wires, and the odd
    blocks are disjoint, so moving some of them earlier changes no product. Cheaper: a
    brick is one 16×16 product for three blocks, against 16×16 products for two blocks
    (two Kronecker-fused neighbours) before; per repetition at 10 qubits 5 products and 56
    complex multiply-adds per amplitude instead of 6 and 72. (This plugin's own
    reorganisation of the brickwork, checked against the per-model simulator.)
    """
    out = []
    k = 0
    while k < len(slots):
        key, gates = slots[k]
        nxt = slots[k + 1] if k + 1 < len(slots) else None
        if key[0] != 0 or key[2] != 0 or nxt is None or nxt[0][:2] != key[:2]:
            out.append((key, gates))
            k += 1
            continue
        even = {ws: g for ws, g in gates}
        bricks, odd_left = [], []
        for ws, g in nxt[1]:
            a, b = ws
            left, right = (a - 1, a), (b, b + 1)
            if b == a + 1 and left in even and right in even:
                bricks.append(((a - 1, a, b, b + 1), (even.pop(left), even.pop(right), g)))
            else:
                odd_left.append((ws, g))
        before = _n_windows([ws for ws, _ in gates], n) + _n_windows([ws for ws, _ in nxt[1]], n)
        after = len(bricks) + _n_windows(list(even), n) + _n_windows([w for w, _ in odd_left], n)
        if after >= before:  # no product saved (8, 12 qubits): bricks would only cost
            return slots
        out.append((key, [*bricks, *even.items()]))
        out.append((nxt[0], odd_left))
        k += 2
    return out


def _n_windows(pairs: list[tuple[int, int]], n: int) -> int:
    """Four-wire windows the ring plan needs for disjoint neighbouring blocks (a, a+1 mod n):
    two neighbours along the ring share one, so a run of r blocks takes ceil(r / 2).
    Used only to decide whether bricks save a product (measured at 8 qubits: bricks that
    save none made the QCNN group step 4-8% slower; at 10 qubits, 6 products become 5 and
    the step 1.10-1.14x faster)."""
    starts = {a for a, _ in pairs}
    if not starts:
        return 0
    heads = [a for a in starts if (a - 2) % n not in starts]
    if not heads:  # the blocks go round the whole ring
        return -(-len(starts) // 2)
    total = 0
    for a in heads:
        run = 0
        while a in starts:
            run, a = run + 1, (a + 2) % n
        total += -(-run // 2)
    return total


def _broadcast_rows(offsets: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """Row offsets (rows,) shaped to add to gate indices (rows,) or a brick's (rows, 3)."""
    return offsets.reshape(-1, *[1] * (sources.ndim - 1))


def _brick(blocks: torch.Tensor) -> torch.Tensor:
    """Matrices (k, 16, 16) of bricks from their blocks (k, 3, 4, 4) = (L, R, M): M on the
    middle two wires after L on the first two and R on the last two (see _fuse_bricks)."""
    left, right, middle = blocks.unbind(1)
    k = blocks.shape[0]
    outer = _kron(left, right)
    eye = torch.eye(2, dtype=blocks.dtype)
    inner = (  # 1 ⊗ M ⊗ 1, axes (k, row wires 0 | 1 2 | 3, column wires 0 | 1 2 | 3)
        eye.view(1, 2, 1, 1, 2, 1, 1)
        * middle.reshape(k, 1, 4, 1, 1, 4, 1)
        * eye.view(1, 1, 1, 2, 1, 1, 2)
    ).reshape(k, 16, 16)
    return inner @ outer


@functools.cache
def _n_levels(n_qubits: int) -> int:
    """Brickwork levels of the QCNN (see ``circuits.qcnn_layout``)."""
    wires, level = list(range(n_qubits)), 0
    while len(wires) > 2 and not (n_qubits == 10 and level == 2):
        wires, level = wires[::2], level + 1
    return level


def _key(group: int, half: int, layers: int, n_rep_groups: int) -> tuple[int, int, int]:
    if group < n_rep_groups:
        return (group // layers, group % layers, half)
    return (99, group - n_rep_groups, half)


class GroupCircuit:
    """Several models of one family (QCNN or StronglyEntanglingLayers) on ``n`` qubits,
    simulated as one batch over models.

    Parameters
    ----------
    ansatze : sequence of circuits.QCNN or circuits.StronglyEntangling
        One per model; all of one class and one ``n_qubits``; QCNNs of one ``shared``.
        Depths (``layers``) may differ.
    max_width : int, default=4
        Most wires fused into one matrix (d = 2**max_width).

    Notes
    -----
    Call with states ``(M_in, B, 2**n)`` (``M_in`` = 1: the same states for every model)
    and a list of angle tensors (one per model, shape ``(ansatz.n_params,)``); returns the
    Born probabilities of ``wires`` for every model, ``(M, B, 2**len(wires))``, in the
    order of ``ansatze``. ``active`` (a sequence of model indices) restricts the call to
    those models (rows in that order).
    """

    def __init__(self, ansatze, max_width: int = 4):
        ansatze = list(ansatze)
        if not ansatze:
            raise ValueError("ansatze must hold at least one model")
        kinds = {type(a) for a in ansatze}
        ns = {a.n_qubits for a in ansatze}
        if len(kinds) != 1 or len(ns) != 1:
            raise ValueError("a group holds models of one class and one n_qubits")
        if isinstance(ansatze[0], circuits.QCNN) and len({a.shared for a in ansatze}) != 1:
            raise ValueError("a QCNN group holds models of one 'shared' setting")
        self.ansatze = ansatze
        self._qcnn = isinstance(ansatze[0], circuits.QCNN)
        self.n_qubits = ns.pop()
        self.max_width = max_width
        self.slots = [group_slots(a) for a in ansatze]
        self._plans: dict[tuple, _GroupPlan] = {}

    # -- planning -----------------------------------------------------------------------

    def plan(self, active: tuple[int, ...], wires: tuple[int, ...] = ()) -> _GroupPlan:
        """The plan of the models ``active`` (their rows in that order) read out on ``wires``.

        The QCNN's later levels act on every second wire only, so its circuit is split where
        the rest of it acts on at most half of the wires (``_tail_split``); that rest (the
        *tail*) is simulated once as a unitary on its own wires and applied to the states
        as one matrix product (see the module notes).
        """
        cache_key = (active, tuple(wires))
        if cache_key in self._plans:
            return self._plans[cache_key]
        n = self.n_qubits
        per_model = [{key: (g, d) for key, g, d in self.slots[i]} for i in active]
        keys = sorted({k for s in per_model for k in s})
        if wires:
            _prune_last_slot(per_model, keys, wires)
        split, sub = _tail_split(per_model, keys, n, wires)
        slots = _plan_slots(per_model, keys, n, self.max_width)
        if sub:
            # Work per state amplitude: the tail through the ring plan, against the tail's
            # unitary applied after one permutation copy (its build, on 4**s amplitudes
            # against the states' B * 2**n, is not counted). The copy brings the tail's
            # wires to the front and keeps the rest of the order, so that an innermost batch
            # axis (as in every QCNN plan) stays the innermost run: bringing them to the end
            # instead interleaved every second wire with the batch axis, a copy 5-10x slower
            # (2.5 ms of a 50 ms QCNN group step at 10 qubits, forward alone).
            end = slots[split - 1].final_order
            target = (*sub, *(w for w in end if w not in sub))
            direct = sum(slot.cost for slot in slots[split:])
            # A tail of one slot (the pruned last StronglyEntanglingLayers layer) is not
            # taken: what the estimate leaves out (the unitary's build, a dozen more
            # operations forward and backward) is not paid for by one slot's products
            # (measured at 10 qubits: 4-10% slower read out on two wires)
            one_slot = len(keys) - split < 2
            if one_slot or len(active) * (2 ** len(sub) + _perm_cost(end, target)) >= direct:
                split, sub = len(keys), ()
        head = _Plan(slots[:split], n)
        tail = None
        if sub:
            index = {w: k for k, w in enumerate(sub)}
            relabelled = [
                {
                    key: ([(tuple(index[w] for w in ws), g) for ws, g in gates], d)
                    for key, (gates, d) in model.items()
                    if key in keys[split:]
                }
                for model in per_model
            ]
            tail_slots = _plan_slots(relabelled, keys[split:], len(sub), self.max_width)
            tail = _Plan(tail_slots, len(sub))
        plan = _GroupPlan(head, tail, sub, target if sub else ())
        self._plans[cache_key] = plan
        return plan

    # -- execution ----------------------------------------------------------------------

    def _offsets(self, active: tuple[int, ...]) -> list[int]:
        """First row of each active model's gates in the stacked gate matrices."""
        width = circuits.BLOCK_PARAMS if self._qcnn else 3
        sizes = [self.ansatze[i].n_params // width for i in active]
        return [int(x) for x in np.concatenate([[0], np.cumsum(sizes)[:-1]])]

    def _gather(self, plan: _Plan, active: tuple[int, ...]) -> list:
        """Per chunk shape: (width, gate positions, chunk ids, gate-row indices, rows per
        chunk); built once per plan so that a call only indexes."""
        off = self._offsets(active)
        by_sig: dict[tuple, list[_Chunk]] = {}
        for slot in plan.slots:
            for ch in slot.chunks:
                by_sig.setdefault((ch.width, ch.comps), []).append(ch)
        out = []
        for (width, comps), chunks in by_sig.items():
            indices = []
            for pos in range(len(comps)):
                glob = np.concatenate(  # a fused brick's sources are (rows, 3)
                    [
                        _broadcast_rows(np.asarray(off)[: len(c.sources[pos])], c.sources[pos])
                        + c.sources[pos]
                        for c in chunks
                    ]
                )
                indices.append(torch.as_tensor(glob, dtype=torch.int64))
            sizes = [len(c.sources[0]) for c in chunks]
            out.append((width, comps, [c.uid for c in chunks], indices, sizes))
        return out

    def _matrices(self, thetas, active) -> torch.Tensor:
        """Every gate of the active models as a matrix, stacked: (gates, 4, 4) or (gates, 2, 2)."""
        width = circuits.BLOCK_PARAMS if self._qcnn else 3
        if len(active) == 1:
            flat = thetas[active[0]].reshape(-1, width)
        else:
            flat = torch.cat([thetas[i].reshape(-1, width) for i in active])
        return circuits.su4_blocks(flat) if self._qcnn else _rot(flat)

    def _gates(self, plan: _Plan, mats: torch.Tensor, active) -> dict[int, torch.Tensor]:
        """Every chunk's matrix (m, d, d), built with one embedding pass per chunk shape."""
        if plan.gather is None:
            plan.gather = self._gather(plan, active)
        out: dict[int, torch.Tensor] = {}
        for width, comps, uids, indices, sizes in plan.gather:
            operands = [_brick(mats[idx]) if idx.dim() == 2 else mats[idx] for idx in indices]
            g = _embed(width, comps, operands, sum(sizes), mats.dtype)
            pieces = g.split(sizes) if len(sizes) > 1 else (g,)
            for uid, piece in zip(uids, pieces, strict=True):
                out[uid] = piece
        return out

    def __call__(
        self,
        psi: torch.Tensor,
        thetas: list[torch.Tensor],
        wires: tuple[int, ...],
        active: tuple[int, ...] | None = None,
    ) -> torch.Tensor:
        """Born probabilities ``(len(active), B, 2**len(wires))`` of the models ``active``.

        Parameters
        ----------
        psi : torch.Tensor of complex, shape (1 or len(active), B, 2**n)
            Input states, shared by every model (first axis 1) or one set per model.
        thetas : list of torch.Tensor of float, one per model of the group
            Shape ``(ansatz.n_params,)``; only the active models' entries are read.
        wires : tuple of int
            Readout wires (first = high bit).
        active : tuple of int, optional
            Model indices, deepest first (default: all, which must then be so sorted).
        """
        active = tuple(range(len(self.ansatze))) if active is None else tuple(active)
        plan = self.plan(active, tuple(wires))
        n, batch = self.n_qubits, psi.shape[1]
        state = psi.reshape(psi.shape[0], -1).expand(len(active), -1)
        mats = self._matrices(thetas, active)
        parts = _evolve(
            plan.head, [(state, (BATCH, *range(n)))], self._gates(plan.head, mats, active), batch
        )
        if plan.tail is None:
            return _marginals(parts, batch, tuple(wires))
        s = len(plan.sub)
        eye = torch.eye(2**s, dtype=psi.dtype).reshape(1, -1).expand(len(active), -1)
        ends = _evolve(
            plan.tail, [(eye, (BATCH, *range(s)))], self._gates(plan.tail, mats, active), 2**s
        )
        # Row j of each model's block is V|j>: the block is V transposed, (m, 2**s, 2**s).
        v_t = torch.cat([_to_order(x, o, (BATCH, *range(s)), 2**s) for x, o in ends])
        v = v_t.view(len(active), 2**s, 2**s).transpose(1, 2)
        target = plan.tail_order  # the tail's wires first: V acts on the leading axes
        x = torch.cat([_to_order(x, o, target, batch) for x, o in parts])
        out = torch.bmm(v, x.view(len(active), 2**s, -1)).reshape(len(active), -1)
        return _marginals([(out, target)], batch, tuple(wires))


@dataclass
class _GroupPlan:
    head: _Plan  # slots on all n wires
    tail: _Plan | None  # slots on ``sub`` only, on a register of len(sub) wires
    sub: tuple[int, ...]  # the tail's wires (ascending); () without a tail
    tail_order: tuple[int, ...]  # order the states take for the tail's unitary: sub first


def _prune_last_slot(per_model, keys: list, wires: tuple[int, ...]) -> None:
    """Drop from the last slot (``keys[-1]``, in place) what cannot change the Born
    probabilities of ``wires``: its gates that act on none of them (nothing acts on their
    wires afterwards, so they are unitaries on traced-out wires) and its diagonal (a
    diagonal unitary just before a computational-basis measurement). For
    StronglyEntanglingLayers read out on 2 of 10 wires this removes 8 of the last layer's
    10 Rot gates and its CZ ring. The dropped angles get the gradient they have: zero.
    (Standard light-cone reasoning, this plugin's own; checked against the per-model
    simulator and PennyLane in ``tests/test_batched.py`` and ``tests/test_gradients.py``.)
    """
    last = keys[-1]
    for model in per_model:
        if last in model:
            gates, _ = model[last]
            model[last] = ([(ws, g) for ws, g in gates if set(ws) & set(wires)], 0)
    if not any(model[last][0] for model in per_model if last in model):
        for model in per_model:
            model.pop(last, None)
        keys.pop()


def _tail_split(per_model, keys, n, wires) -> tuple[int, tuple[int, ...]]:
    """Where the circuit is split into head and tail: the first slot from which every later
    slot (and the readout ``wires``) acts on at most n / 2 wires, with the tail's wires
    (ascending). ``(len(keys), ())``: no tail. A slot with a diagonal (a CZ ring on all n
    wires) ends the tail. QCNN: the tail starts at the second level. StronglyEntanglingLayers:
    every layer acts on every wire, so at most the last, pruned to the readout wires by
    ``_prune_last_slot``, can form a tail, of one slot (which ``GroupCircuit.plan`` does not
    take).

    Why: a tail of g two-qubit blocks on s wires costs the states about 8 g complex
    multiply-adds per amplitude through the ring plan, against 2**s as one s-wire unitary
    (built on 2**s basis states: 4**s amplitudes against the states' B * 2**n). Whether
    the tail is used is decided in ``GroupCircuit.plan`` from the plan's cost estimates.
    """
    touched: set[int] = set(wires)
    split, sub = len(keys), ()
    for k in range(len(keys) - 1, -1, -1):
        for model in per_model:
            if keys[k] in model:
                gates, diag = model[keys[k]]
                touched |= set(range(n)) if diag else {w for ws, _ in gates for w in ws}
        if len(touched) > n // 2:
            break
        split, sub = k, tuple(sorted(touched))
    if split == 0:  # nothing before the tail: no head to split from
        return len(keys), ()
    return split, sub


def _plan_slots(per_model, keys, n: int, max_width: int) -> list[_Slot]:
    """The slots ``keys`` of the models ``per_model`` (rows, deepest first) as ring windows
    on ``n`` wires; see the module notes."""
    slots: list[_Slot] = []
    parts = [(0, len(per_model), (BATCH, *range(n)))]  # (row start, row end, order)
    for key in keys:
        members = [j for j, s in enumerate(per_model) if key in s]
        m = len(members)
        if members != list(range(m)):
            raise ValueError(
                "models taking part in a slot must be a prefix of the batch; sort the "
                "group by depth, deepest first"
            )
        gates_ref = per_model[0][key][0]
        diags = tuple(per_model[j][key][1] for j in range(m))
        wires = [g for g, _ in gates_ref]
        for j in range(1, m):
            if [g for g, _ in per_model[j][key][0]] != wires:
                raise ValueError(f"slot {key} acts on different wires in different models")
        head = [p for p in parts if p[0] < m]
        arcs = [_arc(n, g) for g in wires]
        current = head[0][2]
        options = []
        if len(head) == 1:  # no copy: traverse what lies after the batch axis
            tail = current[current.index(BATCH) + 1 :]
            t = _traverse(n, arcs, tail[-1], len(tail), max_width) if tail else None
            if t is not None:
                options.append((_bmm_cost(t), current, t))
        for end in range(n):
            t = _traverse(n, arcs, end, n, max_width)
            if t is None:
                continue
            used = sum(len(w) for w, _ in t)
            seg = tuple((end - used + 1 + i) % n for i in range(used))
            target = (*(w for w in current if w not in seg), *seg)
            options.append((_bmm_cost(t) + _perm_cost(current, target), target, t))
        if not options:
            raise ValueError(f"slot {key}: no window plan within {n} wires")
        cost, order, windows = min(options, key=lambda o: o[0])
        slot_chunks, cur = [], order
        for window, got in windows:
            comps = tuple(tuple(window.index(w) for w in wires[g]) for g in got)
            sources = [
                np.asarray([per_model[j][key][0][g][1] for j in range(m)], dtype=np.int64)
                for g in got
            ]
            uid = sum(len(x.chunks) for x in slots) + len(slot_chunks)
            slot_chunks.append(_Chunk(len(window), window, comps, sources, uid))
            cur = (*window, *cur[: len(cur) - len(window)])
        slots.append(_Slot(m, order, slot_chunks, diags if any(diags) else (), cur, m * cost))
        rest = []
        for start, end, o in parts:
            if end > m:
                rest.append((max(start, m), end, o))
        parts = [(0, m, cur), *rest]
    return slots


def _sizes(order, batch: int) -> list[int]:
    return [batch if w == BATCH else 2 for w in order]


def _to_order(x: torch.Tensor, src, dst, batch: int) -> torch.Tensor:
    """Rows ``x`` (m, flat) in axis order ``src`` rearranged to ``dst`` (a copy unless equal)."""
    if src == dst:
        return x
    perm = [1 + src.index(w) for w in dst]
    return x.reshape(x.shape[0], *_sizes(src, batch)).permute(0, *perm).reshape(x.shape[0], -1)


def _evolve(plan: _Plan, parts, gates, batch: int):
    """Run the slots of ``plan`` on the row blocks ``parts`` [(rows (m, flat), order)];
    returns the row blocks after the last slot (row order kept). Differentiable in the
    gate matrices and the states (:class:`Evolution`)."""
    uids = [ch.uid for slot in plan.slots for ch in slot.chunks]
    orders: list = []
    states, in_orders = zip(*parts, strict=True)
    xs = Evolution.apply(plan, batch, list(in_orders), orders, *states, *(gates[u] for u in uids))
    return list(zip(xs, orders, strict=True))


class Evolution(torch.autograd.Function):
    """The slots of a plan as one autograd node: permutation copies, ring products
    ``G @ psi.view(m, R, d).mT`` and CZ diagonals, with a hand-written backward pass.

    The backward pass carries the *conjugate* of the incoming gradient, h = conj(g), through
    the circuit in reverse: for a ring product ``out = G @ X`` (X the acted-on view of the
    input, (m, d, R)), autograd's gradients ``g_X = G^H g_out`` and ``g_G = g_out X^H``
    become ``h_X = G^T h_out`` and ``conj(g_G) = h_out X^T``: transposes, which the matrix
    product takes as strides, and no conjugate copy of a state (a per-gate autograd
    function makes one per gate); a diagonal D gives ``h_in = D h_out``. Only the returned
    gradients (small gate matrices, and the states when they require it) are conjugated.
    One node instead of one per gate also saves autograd's per-node overhead; it keeps every
    saved state until its backward ends (the same peak memory as one node per gate).
    Once differentiable: a second derivative (``create_graph=True``) raises. Tested against
    finite differences and the per-model simulator (``tests/test_batched.py``).

    Parameters (of ``apply``)
    -------------------------
    plan : _Plan
    batch : int
        Size of the batch axis of the orders.
    orders : list of orders
        Axis order of each input row block.
    out_orders : list
        Filled with the axis order of each returned row block.
    *tensors
        The input row blocks (m_i, B * 2**n), then one matrix (m, d, d) per chunk of the
        plan, in plan order.

    Returns
    -------
    tuple of torch.Tensor
        The row blocks after the last slot.
    """

    N_ARGS = 4  # arguments of ``apply`` before the tensors

    @staticmethod
    def forward(ctx, plan, batch, orders, out_orders, *tensors):
        n_in = len(orders)
        parts = list(zip(tensors[:n_in], orders, strict=True))
        gates = iter(tensors[n_in:])
        tape, saved = [], []
        for slot in plan.slots:
            head, rest, taken, split = [], [], 0, False
            for x, o in parts:
                r = x.shape[0]
                if taken >= slot.m:
                    rest.append((x, o))
                elif taken + r <= slot.m:
                    head.append((x, o))
                else:
                    a, b = x.split([slot.m - taken, taken + r - slot.m])
                    head.append((a, o))
                    rest.append((b, o))
                    split = True
                taken += r
            pieces = [(h.shape[0], o) for h, o in head]
            if len(head) == 1:
                x = _to_order(head[0][0], head[0][1], slot.order, batch)
            else:
                x = torch.cat([_to_order(h, o, slot.order, batch) for h, o in head])
            for ch in slot.chunks:
                gate = next(gates)
                saved += [gate, x]
                x = torch.bmm(gate, x.view(slot.m, -1, 2**ch.width).transpose(1, 2))
                x = x.view(slot.m, -1)
            if slot.diag_ranges:
                diag = _cz_diag(plan.n_qubits, slot.diag_ranges, slot.final_order, x.dtype)
                x = (x.view(slot.m, *_sizes(slot.final_order, batch)) * diag).view(slot.m, -1)
            tape.append((pieces, split))
            parts = [(x, slot.final_order), *rest]
        ctx.plan, ctx.batch, ctx.tape, ctx.n_in = plan, batch, tape, n_in
        ctx.save_for_backward(*saved)
        out_orders.extend(o for _, o in parts)
        return tuple(x for x, _ in parts)

    @staticmethod
    def backward(ctx, *grads):
        if torch.is_grad_enabled() and any(g.requires_grad for g in grads):
            raise RuntimeError(
                "batched.Evolution is once differentiable: its backward reads states saved "
                "outside autograd, so a second derivative (create_graph=True) would be wrong"
            )
        plan, batch = ctx.plan, ctx.batch
        saved = ctx.saved_tensors  # (gate, input state) per chunk, in plan order
        first_tensor = Evolution.N_ARGS
        want_states = any(ctx.needs_input_grad[first_tensor : first_tensor + ctx.n_in])
        want_gates = ctx.needs_input_grad[first_tensor + ctx.n_in :]
        position = len(saved) // 2  # chunks left to undo
        hs = [g.conj().resolve_conj() for g in grads]  # h = conj(g), per row block
        gate_grads: list = []
        for slot, (pieces, split) in zip(reversed(plan.slots), reversed(ctx.tape), strict=True):
            h, rest = hs[0].reshape(slot.m, -1), hs[1:]
            if slot.diag_ranges:
                diag = _cz_diag(plan.n_qubits, slot.diag_ranges, slot.final_order, h.dtype)
                h = (h.view(slot.m, *_sizes(slot.final_order, batch)) * diag).view(slot.m, -1)
            first = slot is plan.slots[0]
            for k, ch in reversed(list(enumerate(slot.chunks))):
                position -= 1
                gate, x = saved[2 * position], saved[2 * position + 1]
                d = 2**ch.width
                hv = h.view(slot.m, d, -1)
                gate_grads.append(
                    torch.bmm(hv, x.view(slot.m, -1, d)).conj().resolve_conj()
                    if want_gates[position]
                    else None
                )
                if k or not first or want_states:
                    h = torch.bmm(hv.transpose(1, 2), gate).view(slot.m, -1)
                else:
                    h = None
            if h is None:
                break
            # undo the gathering of the head rows into slot.order
            rows = [r for r, _ in pieces]
            chunks = h.split(rows) if len(rows) > 1 else (h,)
            head = [
                _to_order(c, slot.order, o, batch) for c, (_, o) in zip(chunks, pieces, strict=True)
            ]
            if split:  # the block straddling row m: its head piece, then rest[0]
                head[-1] = torch.cat([head[-1], rest[0]])
                rest = rest[1:]
            hs = [*head, *rest]
        gate_grads.reverse()
        # hs are now the input row blocks', in their own orders
        state_grads = [hh.conj().resolve_conj() for hh in hs] if want_states else [None] * ctx.n_in
        return (None, None, None, None, *state_grads, *gate_grads)


def _marginals(parts, batch: int, labels: tuple[int, ...]) -> torch.Tensor:
    """Born probabilities (rows, batch, 2**len(labels)) of the wires ``labels`` of the row
    blocks ``parts`` [(rows (m, flat), order)]."""
    probs = []
    for x, o in parts:
        # |x|² as (re², im²) · (1, 1): 1.1-3x faster forward and backward than re² + im² or a
        # sum over the (re, im) axis of length 2 (measured, complex64 and complex128)
        p = torch.view_as_real(x).square() @ torch.ones(2, dtype=x.real.dtype)
        p = p.reshape(x.shape[0], *_sizes(o, batch))
        drop = tuple(1 + k for k, w in enumerate(o) if w != BATCH and w not in labels)
        p = p.sum(dim=drop) if drop else p
        kept = [w for w in o if w == BATCH or w in labels]
        p = p.permute(0, *(1 + kept.index(w) for w in (BATCH, *labels)))
        probs.append(p.reshape(x.shape[0], batch, -1))
    return probs[0] if len(probs) == 1 else torch.cat(probs)


def _embed(width, comps, operands, count, dtype) -> torch.Tensor:
    """Matrices (count, 2**width, 2**width) of a window: the gates ``operands[c]`` (count,
    2**a, 2**a) on window positions ``comps[c]`` (their own high bit first), identity on the
    other (spectator) positions. Window position 0 is the high bit.

    Built as the Kronecker product in the order [gate wires..., spectators] (broadcast
    products), then one permutation of the small (count, d, d) tensor into window order.
    """
    placed = [p for comp in comps for p in comp]
    spectators = [p for p in range(width) if p not in placed]
    factors = list(operands)
    if spectators:
        factors.append(torch.eye(2 ** len(spectators), dtype=dtype)[None])
    g = factors[0]
    for h in factors[1:]:
        g = _kron(g, h)
    order = placed + spectators
    if order == list(range(width)):
        return g
    src = [order.index(p) for p in range(width)]
    d = 2**width
    g = g.reshape(count, *[2] * (2 * width))
    return g.permute(0, *(1 + k for k in src), *(1 + width + k for k in src)).reshape(count, d, d)


def _kron(g: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Kronecker products g_k ⊗ h_k of (k, p, p) and (k or 1, q, q): (k, pq, pq)."""
    k, p, q = g.shape[0], g.shape[-1], h.shape[-1]
    return (g[:, :, None, :, None] * h[:, None, :, None, :]).reshape(k, p * q, p * q)


@functools.cache
def _cz_diag_np(n: int, rng: int, order: tuple[int, ...]) -> np.ndarray:
    diag = circuits._cz_ring_diagonal(n, rng).reshape([2] * n)
    wire_order = [w for w in order if w != BATCH]
    diag = diag.transpose(wire_order)
    shape = [1 if w == BATCH else 2 for w in order]
    return np.ascontiguousarray(diag).reshape(shape)


@functools.cache
def _cz_diag(n, ranges: tuple[int, ...], order, dtype):
    """The CZ ring diagonals of ranges ``ranges`` (one per row; 0: identity) in axis order
    ``order``: shape (1, sizes...) when the rows share one range, else (rows, sizes...)."""
    if len(set(ranges)) == 1:
        return torch.as_tensor(_cz_diag_np(n, ranges[0], order), dtype=dtype)
    rows = [_cz_diag_np(n, r, order) if r else None for r in ranges]
    ones = np.ones_like(next(row for row in rows if row is not None))
    rows = [ones if row is None else row for row in rows]
    return torch.as_tensor(np.stack(rows), dtype=dtype)


def _rot(angles: torch.Tensor) -> torch.Tensor:
    """``qml.Rot(φ, θ, ω)`` = RZ(ω) RY(θ) RZ(φ) in closed form, for angles (k, 3) -> (k, 2, 2):
    [[c e^{-i(φ+ω)/2}, -s e^{i(φ-ω)/2}], [s e^{-i(φ-ω)/2}, c e^{i(φ+ω)/2}]], c, s = cos,
    sin of θ/2 (same matrix as ``sim.rot``, fewer operations)."""
    phi, theta, omega = angles.unbind(-1)
    c, s = torch.cos(theta / 2), torch.sin(theta / 2)
    a, b = (phi + omega) / 2, (phi - omega) / 2
    phase = torch.stack([-a, b, -b, a], -1)
    mag = torch.stack([c, -s, s, c], -1)
    return torch.complex(mag * torch.cos(phase), mag * torch.sin(phase)).reshape(-1, 2, 2)
