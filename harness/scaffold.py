"""``harness new-plugin NAME``: a ready-to-install plugin package skeleton.

The skeleton has the plugin shape of docs/design.md and one working dataset, method and metric,
so ``pip install -e plugins/NAME && harness check-plugin NAME`` passes before any edit.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.errors import SuiteError

__all__ = ["write_skeleton"]

_FILES = {
    "pyproject.toml": """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "harness-{task}"
version = "0.1.0"
description = "harness plugin for the task '{task}'."
requires-python = ">=3.11"
dependencies = ["harness", "numpy"]

[project.entry-points.harness]
{task} = "{module}"

[tool.setuptools.packages.find]
where = ["src"]

[tool.setuptools.package-data]
{module} = ["data/*"]
""",
    "README.md": """\
# harness-{task}

The paper, what the suite shows, and measured results go here.

    pip install -e plugins/{task}
    harness list
    harness check-plugin {task}
""",
    "src/{module}/__init__.py": '''\
"""Hook implementations of the '{task}' plugin: they only return classes."""

from harness import hookimpl
from {module}.datasets import GaussianMean
from {module}.methods import PredictMean
from {module}.metrics import SquaredError


@hookimpl
def harness_datasets():
    return [GaussianMean]


@hookimpl
def harness_methods():
    return [PredictMean]


@hookimpl
def harness_metrics():
    return [SquaredError]
''',
    "src/{module}/data.py": '''\
"""Data and output objects of the '{task}' task."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Sample:
    """Observations of one real quantity.

    Attributes
    ----------
    y : ndarray of float, shape (n,)
        Observations, unitless.
    mean : float
        The true mean (known for synthetic data).
    """

    y: np.ndarray
    mean: float


@dataclass(frozen=True)
class Estimate:
    """A method's estimate of the mean.

    Attributes
    ----------
    mean : float
        In the units of ``Sample.y``.
    """

    mean: float
''',
    "src/{module}/datasets.py": '''\
"""Datasets of the '{task}' task."""

from dataclasses import dataclass

import numpy as np

from harness import Dataset
from {module}.data import Sample


class GaussianMean(Dataset):
    """Draws from N(mean, 1).

    Source: a textbook example.

    Parameters
    ----------
    n : int, default=100
        Sample size; at least 1.
    mean : float, default=0.0
        True mean.
    """

    name = "gaussian-mean"
    task = "{task}"

    @dataclass
    class Params:
        n: int = 100
        mean: float = 0.0

        def __post_init__(self) -> None:
            if self.n < 1:
                raise ValueError(f"n must be at least 1, got {{self.n}}")

    def load(self, params: Params, seed: int) -> Sample:
        rng = np.random.default_rng(seed)
        return Sample(y=rng.normal(params.mean, 1.0, params.n), mean=params.mean)
''',
    "src/{module}/methods.py": '''\
"""Methods of the '{task}' task."""

from harness import Method
from {module}.data import Estimate, Sample


class PredictMean(Method):
    """The sample mean.

    Source: a textbook example.
    """

    name = "predict-mean"
    task = "{task}"

    def run(self, data: Sample, params: Method.Params, seed: int) -> Estimate:
        return Estimate(mean=float(data.y.mean()))
''',
    "src/{module}/metrics.py": '''\
"""Metrics of the '{task}' task."""

from harness import Metric
from {module}.data import Estimate, Sample


class SquaredError(Metric):
    """Squared error of the estimated mean, in squared units of ``y``; lower is better.

    Source: a textbook example.
    """

    name = "squared-error"
    task = "{task}"
    higher_is_better = False

    def compute(self, data: Sample, output: Estimate) -> float:
        return (output.mean - data.mean) ** 2
''',
    "src/{module}/reports.py": '''\
"""Reports of the '{task}' task (none yet): return {{name: Figure or DataFrame}}."""
''',
    "src/{module}/data/DATA.md": """\
# Data shipped with harness-{task}

None yet. For each file: source, licence, rows, sha256.
""",
    "tests/test_conformance.py": """\
from harness.testing import parametrize_with_checks


@parametrize_with_checks("{task}")
def test_conformance(component, check):
    check(component)
""",
}


def write_skeleton(task: str, parent: Path) -> Path:
    """Write ``parent/<task>/`` with the plugin shape and a working example component set.

    :param task: the task name (lower-case words joined by '-'), also the entry-point name.
    :returns: the package folder.
    :raises SuiteError: if the name is not kebab-case or the folder already exists.
    """
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", task):
        raise SuiteError(f"Plugin name {task!r}: use lower-case words joined by '-'.")
    folder = parent / task
    if folder.exists():
        raise SuiteError(f"{folder} already exists; choose another name or remove it.")
    module = "harness_" + task.replace("-", "_")
    for relative, text in _FILES.items():
        path = folder / relative.format(module=module)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(task=task, module=module))
    return folder
