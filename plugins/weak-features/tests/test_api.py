"""The public API module and the README's example method."""

import re
import typing
from pathlib import Path

import numpy as np
from harness_weak_features import api
from harness_weak_features.datasets import Synthetic

README = Path(__file__).resolve().parents[1] / "README.md"


def test_api_exports_resolve_and_have_docstrings():
    for name in api.__all__:
        obj = getattr(api, name)
        if callable(obj):
            assert obj.__doc__, name


def test_readme_example_method_runs_and_is_typed():
    block = re.search(r"## Add a method.*?```python\n(.*?)```", README.read_text(), re.S)
    namespace: dict = {}
    exec(block.group(1), namespace)  # the README's own example
    cls = namespace["LikelihoodFeatures"]
    hints = typing.get_type_hints(cls.run, globalns=namespace, localns=dict(vars(cls)))
    assert hints["return"] is api.WeakOutput
    data = Synthetic().load(Synthetic.Params(n=300, weak_kind="complementary", rate=0.0), 0)
    out = cls().run(data, cls.Params(), 0)
    assert out.y_pred.shape == data.y_test.shape
    assert np.all((out.y_score >= 0) & (out.y_score <= 1))
