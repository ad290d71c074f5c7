"""Shared fixtures: small loaded datasets, cached per session."""

from __future__ import annotations

import pytest
from harness_fair_regression import datasets


@pytest.fixture(scope="session")
def crime():
    ds = datasets.CommunitiesCrime()
    return ds.load(ds.Params(), seed=0)


@pytest.fixture(scope="session")
def law():
    ds = datasets.LawSchool()
    return ds.load(ds.Params(), seed=0)
