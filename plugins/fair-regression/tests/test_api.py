"""The public API for method authors, and a light entry-point import."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import typing

import numpy as np
from harness_fair_regression import api, datasets, metrics

HEAVY = ("torch", "pennylane", "sklearn", "mlflow", "matplotlib")


def test_api_exports_the_task_types_and_helpers():
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    for name in ("FairRegressionData", "RegressionOutput", "Regressor", "base_predictions"):
        assert name in api.__all__
    assert "oracle" in typing.get_args(api.Regressor)


def _docstring_example() -> str:
    """The indented code block of api.py's module docstring."""
    doc = api.__doc__
    start = doc.index("    from dataclasses import dataclass")
    end = doc.index("Shapes and units")
    return textwrap.dedent(doc[start:end])


def test_docstring_example_method_runs_and_removes_unfairness():
    namespace: dict = {}
    exec(_docstring_example(), namespace)  # our own docstring
    cls = namespace["MyPostProcessing"]
    ds = datasets.SyntheticUnequalVariance()
    data = ds.load(ds.Params(n_train=300, n_calib=2000, n_test=2000), seed=0)
    out = cls().run(data, cls.Params(), seed=0)
    assert isinstance(out, api.RegressionOutput) and out.y_pred.shape == data.y_test.shape
    assert api.ks_unfairness(out.base_pred, data.s_test) > 0.3  # unfair base
    assert api.ks_unfairness(out.y_pred, data.s_test) < 0.08  # measured 0.03
    assert metrics.FairRisk().compute(data, out) < 0.1


def test_import_pulls_in_no_heavy_package():
    # Issue 20: the entry-point module and the API (which imports it first) register
    # components without torch, PennyLane, scikit-learn, MLflow or matplotlib; they load
    # when a component runs. The second line shows the probe catches a heavy import.
    probe = f"sorted(set(sys.modules) & set({HEAVY!r}))"
    code = (
        f"import sys, harness_fair_regression.api; print({probe});"
        f" import sklearn.linear_model; print({probe})"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, timeout=120)  # fmt: skip
    light, heavy = result.stdout.strip().splitlines()
    assert light == "[]", light
    assert "sklearn" in heavy


def test_registration_exposes_every_component():
    import harness_fair_regression as plugin

    names = {c.name for hook in (plugin.harness_datasets, plugin.harness_methods,
                                 plugin.harness_metrics, plugin.harness_reports)
             for c in hook()}  # fmt: skip
    assert {"synthetic-unequal-variance", "equipy-fair-wasserstein", "regression-risk",
            "transport-risk", "excess-risk", "trade-off"} <= names  # fmt: skip
    assert np.all([c.task == "fair-regression" for c in plugin.harness_methods()])
