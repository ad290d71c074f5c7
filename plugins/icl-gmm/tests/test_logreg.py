"""Per-prompt logistic regression against scikit-learn."""

import numpy as np
import pytest
from harness_icl_gmm._logreg import fit_predict
from harness_icl_gmm.data import IclData, MixtureLaw
from sklearn.linear_model import LogisticRegression


def test_three_class_fit_matches_scikit_learn():
    law = MixtureLaw(np.eye(2), 1.0, 3)
    prompts = IclData(law, law, 5, 30, 10, 4, 0).prompts("test")
    mine = fit_predict(prompts, 3, C=1.0)
    for b in range(len(prompts)):
        model = LogisticRegression(C=1.0, tol=1e-10, max_iter=1000)
        model.fit(prompts.context_x[b], prompts.context_y[b])
        if len(model.classes_) < 3:
            continue
        theirs = model.predict_proba(prompts.query_x[b : b + 1])[0]
        assert mine[b] == pytest.approx(theirs, abs=1e-4)
