"""The training loop of the paper: Adam, plateau early stop, the probabilities-as-logits loss.

Source: Hur & Park, ICML 2025, official ``QPR/models/model_utils.py`` ``train`` (papers file §3).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Literal

import numpy as np
import torch
from torch.nn import functional

__all__ = ["class_loss", "fit", "plateaued", "torch_threads"]


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


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``n`` intra-op torch threads, restoring the previous count."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
