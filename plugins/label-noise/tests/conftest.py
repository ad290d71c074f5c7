"""Shared fixtures: a small synthetic draw, cached per session."""

from __future__ import annotations

import pytest
from harness_label_noise import datasets


@pytest.fixture(scope="session")
def small():
    ds = datasets.SignalNoisePatches()
    params = ds.Params(n=40, n_val=20, n_test=50, d=60)
    return ds.load(params, seed=3)
