"""Methods: early stopping returns the best validation iterate; small-loss selection keeps
the samples fitted at that iterate; the random control keeps as many."""

from __future__ import annotations

import numpy as np
from harness_label_noise import methods


def _params(cls, **extra):
    return cls.Params(width=4, steps=30, record=8, **extra)


def test_early_stopping_returns_the_first_best_validation_iterate(small):
    out = methods.EarlyStoppingCNN().run(small, _params(methods.EarlyStoppingCNN), 0)
    accuracy = (np.sign(out.val_scores) == small.y_val).mean(axis=1)
    assert out.returned == int(np.argmax(accuracy))
    fixed = methods.TwoLayerCNN().run(small, _params(methods.TwoLayerCNN), 0)
    assert np.array_equal(fixed.test_scores, out.test_scores)
    assert fixed.returned == fixed.steps.size - 1


def test_small_loss_keeps_the_samples_fitted_at_the_early_stopping_iterate(small):
    first = methods.EarlyStoppingCNN().run(small, _params(methods.EarlyStoppingCNN), 0)
    margin = small.y_train * first.train_scores[first.steps[first.returned]]
    out = methods.SmallLossCNN().run(small, _params(methods.SmallLossCNN), 0)
    assert np.array_equal(out.trained_on, margin > 0)


def test_random_selection_keeps_as_many_samples(small):
    chosen = methods.SmallLossCNN().run(small, _params(methods.SmallLossCNN), 0)
    control = methods.SmallLossCNN().run(
        small, _params(methods.SmallLossCNN, selection="random"), 0
    )
    assert control.trained_on.sum() == chosen.trained_on.sum()
    assert not np.array_equal(control.trained_on, chosen.trained_on)


def test_linear_model_gives_its_coefficients_as_one_filter_per_sign(small):
    out = methods.LinearLogistic().run(small, methods.LinearLogistic.Params(steps=10), 0)
    assert out.coefficients.shape == (out.steps.size, 2, 1, 40, 2)
    assert out.train_scores.shape == (11, 40)
