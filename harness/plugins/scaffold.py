"""``harness new-plugin NAME``: a ready-to-install plugin package skeleton.

The skeleton has the plugin shape of docs/design.md and one working dataset, method and metric,
so ``pip install -e plugins/NAME && harness check-plugin NAME`` passes before any edit;
:func:`write_method_plugin` (``harness new-plugin NAME --task TASK``) writes a package that
adds one method to an existing task.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from harness.components import NAME_MAX
from harness.errors import SuiteError
from harness.plugins.registry import Registry

__all__ = ["write_method_plugin", "write_skeleton"]

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

    pip install -e {folder}
    harness list --task {task}
    harness check-plugin {task}
    harness run {folder}/suites/{task}.yaml
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
from typing import Annotated

import numpy as np
from pydantic import Field

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
        n: Annotated[int, Field(ge=1)] = 100  # the harness checks the declared range
        mean: float = 0.0

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
from harness.plugins.testing import parametrize_with_checks


@parametrize_with_checks("{task}")
def test_conformance(component, check):
    check(component)
""",
    "suites/{task}.yaml": """\
name: {task}
description: The example dataset, method and metric of the '{task}' skeleton.
seeds: [0, 1, 2]
timeout: 5m
runs:
  - task: {task}
    datasets:
      - name: gaussian-mean
        grid: {{n: [10, 100, 1000]}}
    methods: [predict-mean]
    metrics: [squared-error]
""",
}


def write_skeleton(task: str, parent: Path) -> Path:
    """Write ``parent/<task>/`` with the plugin shape, a working example component set and
    a suite that runs it.

    :param task: the task name (lower-case words joined by '-'), also the entry-point name.
    :returns: the package folder.
    :raises SuiteError: if the name is not kebab-case or the folder already exists.
    """
    folder = _new_folder(task, parent)
    module = "harness_" + task.replace("-", "_")
    _write(folder, _FILES, task=task, module=module, folder=typed_path(folder))
    return folder


def write_method_plugin(name: str, task: str, parent: Path, registry: Registry) -> Path:
    """Write ``parent/<name>/``: a package that adds one method to an existing task.

    The package depends on the plugin that owns ``task``, imports the task's data and
    output types from that plugin's public API module (``harness_<task>.api`` where it
    exists), has one method typed against them (its body starts as the task's first
    method, to be replaced), a suite that runs it beside the task's methods on the task's
    first dataset, and a conformance test.

    :param name: the new plugin's name and its method's name (kebab-case).
    :param task: an installed task (see ``harness list``).
    :raises SuiteError: if a name is not kebab-case, the task is unknown or lacks a dataset,
        a method or annotated data/output types, or the folder exists.
    """
    if task not in registry.tasks():
        registry.get("dataset", task, "", where="--task")  # raises, listing the known tasks
    data_type, output_type = registry.data_type(task), registry.output_type(task)
    datasets, methods = registry.names("dataset", task), registry.names("method", task)
    if data_type is None or output_type is None or not datasets or not methods:
        raise SuiteError(
            f"--task {task}: the task needs a dataset with an annotated load(), a method and a"
            " metric with an annotated compute(data, output) to build on (docs/design.md,"
            " 'Plugin API')."
        )
    if name in methods:
        raise SuiteError(f"--task {task} already has a method '{name}'; choose another name.")
    folder = _new_folder(name, parent)
    baseline = registry.entries["method"][(task, methods[0])]
    owner = registry.entries["dataset"][(task, datasets[0])].plugin
    owner_module = data_type.__module__.split(".")[0]
    api = f"{owner_module}.api"
    if importlib.util.find_spec(api) is None:
        api = data_type.__module__
    values = {
        "name": name,
        "task": task,
        "module": "harness_" + name.replace("-", "_"),
        "cls": "".join(part.capitalize() for part in name.split("-")),
        "owner": owner,
        "owner_dist": _distribution(owner_module) or f"harness-{owner}",
        "api": api,
        "data_type": data_type.__name__,
        "output_type": output_type.__name__,
        "baseline": baseline.cls.__name__,
        "baseline_name": baseline.cls.name,
        "baseline_module": baseline.cls.__module__,
        "dataset": datasets[0],
        "others": ", ".join(methods[:8]),
        "folder": typed_path(folder),
    }
    _write(folder, _METHOD_FILES, **values)
    return folder


def _new_folder(name: str, parent: Path) -> Path:
    if len(name) > NAME_MAX:  # it names the folder, the package and the suite (an experiment)
        raise SuiteError(
            f"Plugin name {name[:40]!r}... is {len(name):,} characters; use at most {NAME_MAX}"
            " (it names the package, its folder and its suite's MLflow experiment)."
        )
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name):
        raise SuiteError(f"Plugin name {name!r}: use lower-case words joined by '-'.")
    folder = parent / name
    if folder.exists():
        raise SuiteError(f"{folder} already exists; choose another name or remove it.")
    return folder


def _write(target: Path, files: dict[str, str], **values: str) -> None:
    for relative, text in files.items():
        path = target / relative.format(**values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format(**values))


def typed_path(folder: Path) -> str:
    """The folder as a user would type it from here: relative when inside the current
    directory, else absolute."""
    try:
        return str(folder.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(folder.resolve())


def _distribution(module: str) -> str | None:
    from importlib.metadata import packages_distributions

    names = packages_distributions().get(module)
    return names[0] if names else None


_METHOD_README = """\
# harness-{name}

One method, `{name}`, on the task `{task}` (owned by the plugin `{owner}`). Its data and
output types come from `{api}`.

    pip install -e {folder}
    harness check-plugin {name}
    harness run {folder}/suites/{name}.yaml

Compare it with the paper's methods on the paper's own suite (from the harness repository's
root; one dataset and one seed here, drop `--dataset` and `--seeds` for the whole suite):

    harness run suites/{task}.yaml --add-method {name} --dataset {dataset} --seeds 0
"""

_METHOD_MODULE = '''\
"""The method '{name}' for the task '{task}'."""

from dataclasses import dataclass

from {api} import {data_type}, {output_type}
from {baseline_module} import {baseline}

from harness import Method


class {cls}(Method):
    """Your method: replace this docstring and the body of ``run``.

    Source: your paper, section and equation.

    It starts as '{baseline_name}', the task's first method, so that it runs and passes
    ``harness check-plugin {name}`` before any edit.
    """

    name = "{name}"
    task = "{task}"

    @dataclass
    class Params:
        pass  # typed fields with defaults: everything a suite may set

    def run(self, data: {data_type}, params: Params, seed: int) -> {output_type}:
        baseline = {baseline}.Params()
        return {baseline}(baseline).run(data, baseline, seed)
'''

_METHOD_HOOKS = '''\
"""Hook implementation of the '{name}' plugin: one method for the task '{task}'."""

from harness import hookimpl
from {module}.methods import {cls}


@hookimpl
def harness_methods():
    return [{cls}]
'''

_METHOD_FILES = {
    "pyproject.toml": """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "harness-{name}"
version = "0.1.0"
description = "harness plugin: the method '{name}' on the task '{task}'."
requires-python = ">=3.11"
dependencies = ["harness", "{owner_dist}"]

[project.entry-points.harness]
{name} = "{module}"

[tool.setuptools.packages.find]
where = ["src"]
""",
    "README.md": _METHOD_README,
    "src/{module}/__init__.py": _METHOD_HOOKS,
    "src/{module}/methods.py": _METHOD_MODULE,
    "suites/{name}.yaml": """\
name: {name}
description: The method {name} beside the methods of {task} on its dataset {dataset}.
seeds: [0, 1, 2]
timeout: 10m
runs:
  - task: {task}
    datasets: [{dataset}]
    methods: [{name}, {others}]
""",
    "tests/test_conformance.py": _FILES["tests/test_conformance.py"].replace("{task}", "{name}"),
}
