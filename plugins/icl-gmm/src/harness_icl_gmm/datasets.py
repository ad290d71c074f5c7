"""Datasets of the ``icl-gmm`` task: in-context classification prompts from Gaussian mixtures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field

from harness import Dataset
from harness_icl_gmm.data import IclData, MixtureLaw

__all__ = ["GaussianMixture", "GaussianMixtureShift", "covariance"]

TASK = "icl-gmm"


def covariance(d: int, condition: float, seed: int) -> np.ndarray:
    """Lambda = Q diag(lambda) Q^T with eigenvalues geometric from condition^(-1/2) to
    condition^(1/2) (determinant 1) and Q uniform on O(d) from ``seed``; shape (d, d)."""
    q, r = np.linalg.qr(np.random.default_rng([seed, 7]).standard_normal((d, d)))
    q *= np.sign(np.diag(r))
    values = np.geomspace(condition**-0.5, condition**0.5, d)
    return (q * values) @ q.T


@dataclass
class _MixtureParams:
    d: Annotated[int, Field(ge=1, le=64)] = 4
    classes: Annotated[int, Field(ge=2, le=16)] = 2
    train_length: Annotated[int, Field(ge=1, le=100_000)] = 40
    test_length: Annotated[int, Field(ge=1, le=100_000)] = 40
    train_prompts: Annotated[int, Field(ge=1, le=10_000_000)] = 20_000
    test_prompts: Annotated[int, Field(ge=1, le=1_000_000)] = 4_000
    radius: Annotated[float, Field(gt=0, le=100)] = 1.5
    condition: Annotated[float, Field(ge=1, le=1e6)] = 4.0


_SMALL = {"d": 3, "train_length": 8, "test_length": 8, "train_prompts": 300, "test_prompts": 200}


class GaussianMixture(Dataset):
    """Prompts of N (training) or M (test) labelled points from a c-class Gaussian mixture.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Sections 3-4: x | y = k ~
    N(mu_k, Lambda) with Lambda fixed and the class means drawn afresh for every prompt; the
    mean law and Lambda's spectrum are this plugin's choices (science notes §1, §4).

    Parameters
    ----------
    d : int, default=4
        Dimension of a point.
    classes : int, default=2
        c, equally likely labels 0 .. c-1.
    train_length : int, default=40
        N, labelled points per training prompt.
    test_length : int, default=40
        M, labelled points per test prompt.
    train_prompts, test_prompts : int, default=20000, 4000
        Number of prompts (tasks) per split.
    radius : float, default=1.5
        ||Lambda^(-1/2) mu_k|| of every class mean (unitless signal-to-noise).
    condition : float, default=4.0
        Condition number of Lambda (eigenvalues geometric, determinant 1, random basis
        drawn from the seed).

    Returns
    -------
    IclData
        Training and test prompts from the same law.
    """

    name = "gaussian-mixture"
    task = TASK
    Params = _MixtureParams
    test_params: ClassVar[dict] = _SMALL

    def load(self, params: _MixtureParams, seed: int) -> IclData:
        law = MixtureLaw(covariance(params.d, params.condition, seed), params.radius,
                         params.classes)  # fmt: skip
        return _data(law, law, params, seed)


@dataclass
class _ShiftParams(_MixtureParams):
    mean_scale: Annotated[float, Field(gt=0, le=100)] = 1.0
    covariance_mix: Annotated[float, Field(ge=0, le=1)] = 0.0


class GaussianMixtureShift(Dataset):
    """:class:`GaussianMixture` whose test prompts come from a shifted law.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), the v3 robustness
    experiments under distribution shift (1-layer vs 3-layer); the shift types below are this
    plugin's reconstruction (the notes could not read which shifts the paper uses).

    Parameters
    ----------
    (those of ``gaussian-mixture``, for the training law), and
    mean_scale : float, default=1.0
        Test class means have Lambda^-1 norm ``radius * mean_scale``.
    covariance_mix : float, default=0.0
        Test covariance ``(1 - t) Lambda + t Lambda'`` with t = ``covariance_mix`` and
        Lambda' of the same spectrum in a fresh random basis.

    Returns
    -------
    IclData
        Training prompts from the training law, test prompts from the shifted one.
    """

    name = "gaussian-mixture-shift"
    task = TASK
    Params = _ShiftParams
    test_params: ClassVar[dict] = _SMALL | {"mean_scale": 2.0, "covariance_mix": 0.5}

    def load(self, params: _ShiftParams, seed: int) -> IclData:
        base = covariance(params.d, params.condition, seed)
        other = covariance(params.d, params.condition, seed + 2**31)
        mixed = (1 - params.covariance_mix) * base + params.covariance_mix * other
        train = MixtureLaw(base, params.radius, params.classes)
        test = MixtureLaw(mixed, params.radius * params.mean_scale, params.classes)
        return _data(train, test, params, seed)


def _data(train: MixtureLaw, test: MixtureLaw, params: _MixtureParams, seed: int) -> IclData:
    return IclData(train, test, params.train_length, params.test_length, params.train_prompts,
                   params.test_prompts, seed)  # fmt: skip
