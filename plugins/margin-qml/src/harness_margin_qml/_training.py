"""The training loop of the paper: Adam, plateau early stop, the probabilities-as-logits loss.

Source: Hur & Park, ICML 2025, official ``QPR/models/model_utils.py`` ``train`` (papers file §3).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
from collections.abc import Callable, Iterator
from typing import Literal

import numpy as np
import torch
from torch.nn import functional

__all__ = ["class_loss", "fit", "plateaued", "retained_heap", "retained_heap_if"]


def plateaued(losses: list[float], window: int) -> bool:
    """The official early stop: |mean(last W) - mean(previous W)| <= std(last W) / (2√W).

    (``<=`` rather than ``<`` so that an exactly flat loss also stops.)

    Parameters
    ----------
    losses : list of float
        Loss per step so far.
    window : int
        W, at least 1; never true before 2W steps.
    """
    if len(losses) < 2 * window:
        return False
    last = np.asarray(losses[-window:])
    prev = np.asarray(losses[-2 * window : -window])
    return abs(last.mean() - prev.mean()) <= last.std() / (2 * np.sqrt(window))


def class_loss(
    probs: torch.Tensor, y: torch.Tensor, kind: Literal["softmax-probs", "nll"]
) -> torch.Tensor:
    """Training loss on class probabilities (batch, K) and labels (batch,).

    ``"softmax-probs"`` is the official code's ``CrossEntropyLoss`` applied to the
    probabilities as if they were logits; ``"nll"`` is -mean log p_y.
    """
    if kind == "softmax-probs":
        return functional.cross_entropy(probs, y)
    return functional.nll_loss(torch.log(probs.clamp_min(1e-12)), y)


def fit(
    forward: Callable[[torch.Tensor], torch.Tensor],
    params: list[torch.Tensor],
    y: torch.Tensor,
    *,
    lr: float,
    max_steps: int,
    window: int,
    loss: Literal["softmax-probs", "nll"],
    batch_size: int,
    generator: torch.Generator,
) -> np.ndarray:
    """Minimise ``class_loss(forward(idx), y[idx])`` with Adam until the plateau rule fires.

    Parameters
    ----------
    forward : callable
        Maps row indices (batch,) of the training set to class probabilities (batch, K).
    params : list of torch.Tensor
        Leaf tensors with ``requires_grad``; updated in place.
    y : torch.Tensor of int64, shape (n_train,)
    batch_size : int
        Rows per step, drawn without replacement; 0 or >= n_train means full batch.

    Returns
    -------
    numpy.ndarray of float64, shape (n_steps,)
        The loss at each step.
    """
    opt = torch.optim.Adam(params, lr=lr)
    n = len(y)
    full = torch.arange(n)
    losses: list[float] = []
    for _ in range(max_steps):
        idx = (
            full
            if batch_size <= 0 or batch_size >= n
            else torch.randperm(n, generator=generator)[:batch_size]
        )
        opt.zero_grad()
        value = class_loss(forward(idx), y[idx], loss)
        value.backward()
        opt.step()
        losses.append(float(value.detach()))
        if plateaued(losses, window):
            break
    return np.asarray(losses)


# glibc's mallopt parameters (malloc.h): the free memory at the heap's top kept, and the
# size from which an allocation gets pages of its own (mmap) instead of heap memory
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_GLIBC_DEFAULT = 128 * 1024  # both thresholds' documented defaults (glibc manual)


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    if libc is None or not all(hasattr(libc, f) for f in ("mallopt", "malloc_trim")):
        return None  # not glibc (musl, macOS): nothing to tune
    libc.mallopt.argtypes, libc.mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
    return libc


@contextlib.contextmanager
def retained_heap(limit_bytes: int = 32 << 20) -> Iterator[None]:
    """Serve allocations up to ``limit_bytes`` from the heap and keep up to ``limit_bytes``
    of freed memory there, instead of returning it to the system (glibc; elsewhere, or if
    glibc refuses a value, a no-op).

    A training step allocates and frees the same large temporaries every step (states of
    0.1-1 MB, gate products, their gradients; at most about 10 MB when the test states are
    evaluated). glibc gives an allocation above its mmap threshold pages of its own and
    unmaps them when it is freed, and returns the free memory above its trim threshold at
    the heap's top; either way the next step faults those pages in again. This raises both
    thresholds (``mallopt``) to ``limit_bytes`` (default 32 MiB, the largest mmap threshold
    every glibc accepts). Raising only the trim threshold is not enough: a ``mallopt`` call
    freezes glibc's adaptive mmap threshold at its value, and in fresh processes 10 group
    steps then faulted 2 to 1,862 pages against about 15,000 plain (three runs). Measured
    with both at 32 MiB, in fresh processes, 10 steps of a 10-qubit QCNN group (five
    depths, batch 20): 150-1,400 faults against 9,700-20,500 (``tests/test_batched.py``);
    with both at 256 MiB, 200 steps took 0.93x the CPU time in six paired whole-process
    runs. ``_engine.train``, ``train_group`` and ``pretrain_nqe`` run inside it.

    Scoped: on leaving the block both thresholds are set back to glibc's documented
    defaults (128 KiB) and the heap is trimmed (``malloc_trim``), so later cells on the
    same worker (of any plugin) run with glibc's default settings. (glibc cannot return to
    its *adaptive* mmap threshold once ``mallopt`` was called; the fixed default is the
    nearest.) The methods enter it only when their ``retain_heap`` param is true (the
    paper-scale suite sets it; :func:`retained_heap_if`). Source: glibc manual, "Malloc
    Tunable Parameters".

    Raises
    ------
    ValueError
        If ``limit_bytes`` is not in [0, 32 MiB].
    """
    if not 0 <= limit_bytes <= 32 << 20:
        raise ValueError(f"limit_bytes must be in [0, 32 MiB], got {limit_bytes}")
    libc = _glibc()
    applied = libc is not None and all(
        libc.mallopt(param, limit_bytes) == 1 for param in (_M_MMAP_THRESHOLD, _M_TRIM_THRESHOLD)
    )
    try:
        yield
    finally:
        if applied:
            for param in (_M_MMAP_THRESHOLD, _M_TRIM_THRESHOLD):
                libc.mallopt(param, _GLIBC_DEFAULT)
            libc.malloc_trim(0)


def retained_heap_if(name: str) -> Callable[[Callable], Callable]:
    """Decorator: run the function inside :func:`retained_heap` when its keyword or
    positional argument ``name`` (a params object) has ``retain_heap`` true."""

    def decorate(function: Callable) -> Callable:
        import inspect

        position = list(inspect.signature(function).parameters).index(name)

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            params = kwargs[name] if name in kwargs else args[position]
            if not getattr(params, "retain_heap", False):
                return function(*args, **kwargs)
            with retained_heap():
                return function(*args, **kwargs)

        return wrapper

    return decorate
