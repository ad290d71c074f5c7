"""Data and output objects of the ``icl-gmm`` task.

A cell asks: given prompts of labelled points from a Gaussian mixture whose class means change
from prompt to prompt, how well does a model classify each prompt's query *in context*? The
data object holds the mixture laws (training and test) and recipes for the prompts, generated
lazily in chunks of :data:`CHUNK` prompts from per-chunk seeds, so that the same prompts come
back for the same ``(seed, split, index)`` whatever range a method asks for.

Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Section 3 (binary) and
Section 4 (c classes): x | y = k ~ N(mu_k, Lambda), Lambda shared by all classes and fixed,
the means drawn afresh for every prompt. The mean law (mu_k = Lambda^(1/2) u_k with u_k uniform
on the sphere of radius ``radius``, so that every class mean has the same Lambda^-1 norm, the
role of the paper's Assumption 3.1) and the label coding are reconstructions (science notes
§1, [INF]).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

__all__ = ["CHUNK", "ContextMeans", "IclData", "IclOutput", "MixtureLaw", "Prompts"]

#: Prompts generated per seeded chunk; any range of prompts is cut from whole chunks.
CHUNK = 1000
Split = Literal["train", "test"]
_SPLIT = {"train": 0, "test": 1}


@dataclass(frozen=True)
class MixtureLaw:
    """A c-class Gaussian mixture with shared covariance and per-prompt random means.

    Attributes
    ----------
    covariance : ndarray of float64, shape (d, d)
        Lambda, symmetric positive definite; the same for every class and prompt.
    radius : float
        ||Lambda^(-1/2) mu_k|| for every class mean (unitless, > 0).
    classes : int
        c >= 2; labels are 0 .. c-1 with equal prior 1/c.
    """

    covariance: np.ndarray
    radius: float
    classes: int

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        _check_finite("covariance", self.covariance)
        cov = self.covariance
        if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or not np.allclose(cov, cov.T):
            raise ValueError(f"covariance must be a symmetric (d, d) matrix, got {cov.shape}")
        if np.linalg.eigvalsh(cov).min() <= 0:
            raise ValueError("covariance must be positive definite")
        if not (math.isfinite(self.radius) and self.radius > 0):
            raise ValueError(f"radius must be finite and > 0, got {self.radius}")
        if self.classes < 2:
            raise ValueError(f"classes must be >= 2, got {self.classes}")

    @property
    def dim(self) -> int:
        """d, the dimension of a point."""
        return self.covariance.shape[0]

    @property
    def precision(self) -> np.ndarray:
        """Lambda^-1, shape (d, d)."""
        return np.linalg.inv(self.covariance)

    @property
    def root(self) -> np.ndarray:
        """The symmetric square root Lambda^(1/2), shape (d, d)."""
        values, vectors = np.linalg.eigh(self.covariance)
        return (vectors * np.sqrt(values)) @ vectors.T

    def draw(self, prompts: int, length: int, rng: np.random.Generator) -> _Draw:
        """The random parts of ``prompts`` prompts that fix their context means: class means,
        label counts, per-class sums of the context points, and the query."""
        d, c = self.dim, self.classes
        root = self.root
        u = rng.standard_normal((prompts, c, d))
        u *= self.radius / np.linalg.norm(u, axis=-1, keepdims=True)
        means = u @ root  # root is symmetric: mu_k = Lambda^(1/2) u_k
        counts = rng.multinomial(length, np.full(c, 1 / c), size=prompts)
        noise = np.sqrt(counts)[..., None] * (rng.standard_normal((prompts, c, d)) @ root)
        query_y = rng.integers(0, c, size=prompts)
        query_x = means[np.arange(prompts), query_y] + rng.standard_normal((prompts, d)) @ root
        return _Draw(means, counts, counts[..., None] * means + noise, query_x, query_y)

    def expand(self, draw: _Draw, rng: np.random.Generator) -> Prompts:
        """Explicit prompts with the context sums of ``draw``: within class k the noise
        vectors are i.i.d. N(0, Lambda) conditioned on their sum (their deviations from
        their mean are independent of it), and the labels come in random order."""
        prompts, length = draw.counts.shape[0], int(draw.counts[0].sum())
        bounds = np.cumsum(draw.counts, axis=1)
        ordered = (np.arange(length)[None, :, None] >= bounds[:, None, :]).sum(axis=2)
        labels = rng.permuted(ordered, axis=1)
        noise = rng.standard_normal((prompts, length, self.dim)) @ self.root
        onehot = np.eye(self.classes)[labels]
        counts = np.maximum(draw.counts, 1)[..., None]
        centre = (draw.sums - np.einsum("plk,pld->pkd", onehot, noise)) / counts
        points = np.take_along_axis(centre, labels[..., None], axis=1) + noise
        return Prompts(points, labels, draw.query_x, draw.query_y, draw.means)

    def relabel(self, draw: _Draw, rng: np.random.Generator) -> _Draw:
        """``draw`` with context labels drawn independently of the points, uniform over the
        classes: the points shown with label k are then m_kj points of class j,
        m ~ Multinomial(length, 1/c^2), and the x-y pairing of the context is broken."""
        prompts, c = draw.counts.shape
        length = int(draw.counts[0].sum())
        m = rng.multinomial(length, np.full(c * c, 1 / c**2), size=prompts).reshape(-1, c, c)
        noise = np.sqrt(m)[..., None] * (rng.standard_normal((prompts, c, c, self.dim)) @ self.root)
        sums = np.einsum("pkj,pjd->pkd", m, draw.means) + noise.sum(axis=2)
        return replace(draw, counts=m.sum(axis=2), sums=sums)

    def posterior(self, means: np.ndarray, x: np.ndarray) -> np.ndarray:
        """P(y = k | x, means) under equal priors: shape (prompts, c) from ``means``
        (prompts, c, d) and ``x`` (prompts, d); the Bayes-optimal (LDA) posterior."""
        scores = np.einsum("pkd,de,pe->pk", means, self.precision, x)
        scores -= 0.5 * np.einsum("pkd,de,pke->pk", means, self.precision, means)
        return softmax(scores)


@dataclass(frozen=True)
class Prompts:
    """A batch of prompts.

    Attributes
    ----------
    context_x : ndarray of float64, shape (prompts, length, d)
    context_y : ndarray of int64, shape (prompts, length), labels in 0 .. c-1
    query_x : ndarray of float64, shape (prompts, d)
    query_y : ndarray of int64, shape (prompts,)
    means : ndarray of float64, shape (prompts, c, d)
        Each prompt's class means (hidden from in-context learners; the oracle reads them).
    """

    context_x: np.ndarray
    context_y: np.ndarray
    query_x: np.ndarray
    query_y: np.ndarray
    means: np.ndarray

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        for name in ("context_x", "query_x", "means"):
            _check_finite(name, getattr(self, name))

    def __len__(self) -> int:
        return self.query_y.shape[0]

    def class_means(self, classes: int) -> np.ndarray:
        """(1/L) sum_i 1[y_i = k] x_i for each class k: shape (prompts, c, d), the context
        statistic the single-layer linear-attention model reads (science notes §1)."""
        onehot = np.eye(classes)[self.context_y]
        return np.einsum("plk,pld->pkd", onehot, self.context_x) / self.context_y.shape[1]


@dataclass(frozen=True)
class _Draw:
    """What fixes a batch's context means: ``means`` (prompts, c, d), label ``counts``
    (prompts, c), ``sums`` (prompts, c, d) of the context points of each label, and the
    query ``query_x`` (prompts, d), ``query_y`` (prompts,)."""

    means: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    query_x: np.ndarray
    query_y: np.ndarray


@dataclass(frozen=True)
class ContextMeans:
    """Prompts summarised by their per-label context means, all the single-layer
    linear-attention model reads.

    Attributes
    ----------
    class_means : ndarray of float64, shape (prompts, c, d)
        h_k = (1/L) sum_i 1[y_i = k] x_i over the L context points.
    query_x : ndarray of float64, shape (prompts, d)
    query_y : ndarray of int64, shape (prompts,)
    means : ndarray of float64, shape (prompts, c, d)
        Each prompt's true class means (for oracles and the true posterior).
    """

    class_means: np.ndarray
    query_x: np.ndarray
    query_y: np.ndarray
    means: np.ndarray

    def __len__(self) -> int:
        return self.query_y.shape[0]

    def infinite(self) -> ContextMeans:
        """The same prompts with infinitely long contexts: h_k = E[h_k] = mu_k / c."""
        return replace(self, class_means=self.means / self.means.shape[1])


@dataclass(frozen=True)
class IclData:
    """Training and test prompts for in-context classification.

    Attributes
    ----------
    train_law, test_law : MixtureLaw
        The laws of training and test prompts (equal unless the dataset shifts the test).
    train_length : int
        N, labelled points per training prompt.
    test_length : int
        M, labelled points per test prompt.
    train_prompts, test_prompts : int
        Number of prompts (tasks) in each split.
    seed : int
        Chunk j of a split uses ``default_rng([seed, split, j])``.
    """

    train_law: MixtureLaw
    test_law: MixtureLaw
    train_length: int
    test_length: int
    train_prompts: int
    test_prompts: int
    seed: int

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        for name in ("train_length", "test_length", "train_prompts", "test_prompts"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if (self.train_law.dim, self.train_law.classes) != (
            self.test_law.dim,
            self.test_law.classes,
        ):
            raise ValueError("train_law and test_law must share d and the number of classes")

    @property
    def dim(self) -> int:
        return self.train_law.dim

    @property
    def classes(self) -> int:
        return self.train_law.classes

    def prompts(self, split: Split, start: int = 0, stop: int | None = None) -> Prompts:
        """Explicit prompts ``start .. stop - 1`` of ``split`` (all by default)."""
        law = self._law(split)
        parts = [law.expand(draw, np.random.default_rng([self.seed, _SPLIT[split], j, 1]))
                 for j, draw in self._draws(split, start, stop)]  # fmt: skip
        return Prompts(*(np.concatenate(p) for p in zip(*map(_fields, parts), strict=True)))

    def context_means(
        self, split: Split, start: int = 0, stop: int | None = None, random_labels: bool = False
    ) -> ContextMeans:
        """The same prompts as :meth:`prompts` summarised by their context means, without
        drawing every point (cost independent of the prompt length). ``random_labels``:
        context labels drawn independently of the points (the shuffled-label control)."""
        law = self._law(split)
        draws = []
        for j, draw in self._draws(split, start, stop):
            if random_labels:
                draw = law.relabel(draw, np.random.default_rng([self.seed, _SPLIT[split], j, 2]))
            draws.append(draw)
        length = self.train_length if split == "train" else self.test_length
        return ContextMeans(
            np.concatenate([d.sums for d in draws]) / length,
            np.concatenate([d.query_x for d in draws]),
            np.concatenate([d.query_y for d in draws]),
            np.concatenate([d.means for d in draws]),
        )

    def _law(self, split: Split) -> MixtureLaw:
        return self.train_law if split == "train" else self.test_law

    def _draws(self, split: Split, start: int, stop: int | None) -> list[tuple[int, _Draw]]:
        total = self.train_prompts if split == "train" else self.test_prompts
        stop = total if stop is None else min(stop, total)
        if not 0 <= start < stop:
            raise ValueError(f"empty prompt range {start}..{stop} of {total} {split} prompts")
        length = self.train_length if split == "train" else self.test_length
        out = []
        for j in range(start // CHUNK, (stop - 1) // CHUNK + 1):
            rng = np.random.default_rng([self.seed, _SPLIT[split], j])
            draw = self._law(split).draw(min(CHUNK, total - j * CHUNK), length, rng)
            low, high = max(start - j * CHUNK, 0), min(stop - j * CHUNK, CHUNK)
            out.append(
                (j, _Draw(*(getattr(draw, f.name)[low:high] for f in dataclasses.fields(draw))))
            )
        return out


@dataclass(frozen=True)
class IclOutput:
    """A model's predictions on the test prompts, and its weights where it has some.

    Attributes
    ----------
    probs : ndarray of float64, shape (test_prompts, c)
        Predicted P(y_query = k), rows in the simplex.
    weights : ndarray of float64, shape (d, d), or None
        W of a single-layer linear-attention model (logit_k = h_k^T W x_query).
    trajectory : ndarray of float64, shape (k, d, d), or None
        W_t at the gradient-descent steps ``trajectory_steps``.
    trajectory_steps : ndarray of int64, shape (k,), or None
    minimiser : ndarray of float64, shape (d, d), or None
        W*, the exact minimiser of the training loss GD ran on (Newton's method).
    step_size : float or None
        The GD step size eta.
    hessian_eigenvalues : ndarray of float64, shape (d*d,), or None
        Eigenvalues of the training loss's Hessian at W*.
    reference_weights : ndarray of float64, shape (d, d), or None
        W fitted on the same training prompts with infinitely long contexts.
    """

    probs: np.ndarray
    weights: np.ndarray | None = None
    trajectory: np.ndarray | None = None
    trajectory_steps: np.ndarray | None = None
    minimiser: np.ndarray | None = None
    step_size: float | None = None
    hessian_eigenvalues: np.ndarray | None = None
    reference_weights: np.ndarray | None = None

    def __post_init__(self) -> None:  # invariants of a data record, not Params
        _check_finite("probs", self.probs)
        if self.probs.ndim != 2 or np.any(self.probs < -1e-12):
            raise ValueError(f"probs must be (prompts, c) and >= 0, got {self.probs.shape}")
        if not np.allclose(self.probs.sum(axis=1), 1.0, atol=1e-6):
            raise ValueError("every row of probs must sum to 1")
        for name in ("weights", "trajectory", "minimiser", "hessian_eigenvalues",
                     "reference_weights"):  # fmt: skip
            if getattr(self, name) is not None:
                _check_finite(name, getattr(self, name))
        if (self.trajectory is None) != (self.trajectory_steps is None):
            raise ValueError("trajectory and trajectory_steps come together")
        if self.step_size is not None and not (
            math.isfinite(self.step_size) and self.step_size > 0
        ):
            raise ValueError(f"step_size must be finite and > 0, got {self.step_size}")


def softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax of ``scores`` (..., c), stable for large scores."""
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def _fields(prompts: Prompts) -> list[np.ndarray]:
    return [prompts.context_x, prompts.context_y, prompts.query_x, prompts.query_y,
            prompts.means]  # fmt: skip


def _check_finite(name: str, values: np.ndarray) -> None:
    """ValueError naming ``name`` if ``values`` holds NaN or infinity."""
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite; it holds NaN or infinity")
