import subprocess
import sys
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import pytest
from harness_margin_qml import api
from harness_margin_qml.datasets import ClusterPhases

from harness import Method, Skip

HEAVY = ("torch", "pennylane", "sklearn", "mlflow", "matplotlib")


@pytest.mark.parametrize("module", ["harness_margin_qml", "harness_margin_qml.api"])
def test_registration_imports_no_heavy_library(module):
    # Issue 20: the entry-point module (and the method-author API) must not import torch,
    # pennylane, scikit-learn, mlflow or matplotlib; components register without them.
    code = (
        f"import sys, {module}, harness_margin_qml as p; "
        "names = [c.name for hook in (p.harness_datasets, p.harness_methods, "
        "p.harness_metrics, p.harness_reports) for c in hook()]; "
        "params = [c.Params() for c in p.harness_methods()]; "
        f"print(len(names), [m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, heavy = out.stdout.strip().split(" ", 1)
    assert int(count) == 20  # 3 datasets, 6 methods, 10 metrics, 1 report
    assert heavy == "[]", f"importing {module} pulled in {heavy}"


def test_api_exports_resolve():
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    with pytest.raises(AttributeError, match="no_such"):
        api.no_such  # noqa: B018
    # the task's own names only: harness's Method and Skip come from harness, and the
    # worker-process settings (threads, glibc's heap) are the plugin's own business (issue 29)
    assert not {"Method", "Skip", "retained_heap", "torch_threads"} & set(api.__all__)


def test_helper_modules_are_private():
    """Only the plugin's entry modules are public; the method author's helpers are reached
    through ``api`` (issue 29)."""
    import pkgutil

    import harness_margin_qml

    public = {m.name for m in pkgutil.iter_modules(harness_margin_qml.__path__)}
    public = {name for name in public if not name.startswith("_")}
    assert public == {"api", "claims", "data", "datasets", "methods", "metrics", "reports"}


class ShallowQCNN(Method):
    """The README's example: shared QCNN, L = 1, trained with the paper's loop."""

    name, task = "shallow-qcnn", "margin-qml"

    @dataclass
    class Params:
        lr: float = 0.05
        max_steps: int = 20
        window: int = 50
        loss: Literal["softmax-probs", "nll"] = "nll"
        batch_size: int = 0
        precision: Literal["complex64", "complex128"] = "complex64"

    def run(self, data: api.QMLData, params: Params, seed: int) -> api.QNNOutput:
        if data.encoding != "amplitude":
            raise Skip("shallow-qcnn reads quantum states")
        ansatz = api.QCNN(data.n_qubits, layers=1, shared=True)
        return api.train_circuit(ansatz, api.amplitude_states, data, params, seed)


def test_readme_example_method_runs_on_the_task_data():
    params = ClusterPhases.Params(n_qubits=4, n_train=8, n_test=8)
    data = ClusterPhases(params).load(params, 0)
    out = ShallowQCNN().run(data, ShallowQCNN.Params(), 0)
    assert isinstance(out, api.QNNOutput)
    assert out.train_probs.shape == (8, 4) and out.theta_final.shape == (
        30,
    )  # 15 x (1 level + final)
    assert api.margins(out.train_probs, data.y_train).shape == (8,)


def _output(**changes):
    base = api.QNNOutput(
        train_probs=np.full((2, 2), 0.5),
        test_probs=np.full((3, 2), 0.5),
        theta_init=np.zeros(4),
        theta_final=np.ones(4),
        loss=np.ones(5),
    )
    return replace(base, **changes)


@pytest.mark.parametrize(
    "field", ["train_probs", "test_probs", "theta_init", "theta_final", "loss"]
)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_output_rejects_non_finite_values_naming_the_field(field, bad):
    value = getattr(_output(), field).copy()
    value.flat[0] = bad
    with pytest.raises(ValueError, match=field):
        _output(**{field: value})


def test_output_rejects_non_finite_states_and_mismatched_theta():
    states = np.ones((2, 4), complex)
    states[0, 0] = complex(np.nan, 0)
    with pytest.raises(ValueError, match="train_states"):
        _output(train_states=states)
    with pytest.raises(ValueError, match="theta_init"):
        _output(theta_init=np.zeros(3))


def test_data_rejects_non_finite_features_and_bad_labels():
    params = ClusterPhases.Params(n_qubits=4, n_train=4, n_test=4)
    data = ClusterPhases(params).load(params, 0)
    x = data.x_train.copy()
    x[1, 2] = np.nan
    with pytest.raises(ValueError, match="x_train"):
        replace(data, x_train=x)
    with pytest.raises(ValueError, match="y_test"):
        replace(data, y_test=data.y_test + 4)
    with pytest.raises(ValueError, match="y_train"):
        replace(data, y_train=data.y_train[:2])
