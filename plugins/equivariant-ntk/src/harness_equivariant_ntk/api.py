"""Public API of the ``equivariant-ntk`` task for method authors.

A method receives a :class:`RotatedImages` (upright training digits, quarter-turned test
digits and noise images) and returns a :class:`MeanPredictions` (the mean prediction over
initialisations at the training times of :data:`TIMES`)::

    from harness import Method
    from harness_equivariant_ntk.api import (MeanPredictions, RotatedImages, cnn_ntk,
                                             kernel_predictions)


    class ShallowCnnNtk(Method):
        \"\"\"The one-layer CNN's NTK predictor. Source: example.\"\"\"

        name, task = "shallow-cnn-ntk", "equivariant-ntk"

        def run(self, data: RotatedImages, params: Method.Params, seed: int) -> MeanPredictions:
            return kernel_predictions(cnn_ntk, data.x_train, data.targets, data, depth=1)

Shapes (n training images, m = n_test + n_off evaluation points, c classes, 8x8 pixels):

* ``RotatedImages``: ``x_train`` (n, 8, 8), ``targets`` (n, c), ``points`` (m, 8, 8).
* ``MeanPredictions(times, test, off, depth, lr)``: ``test`` (times, n_test, c), ``off``
  (times, n_off, c); ``lr`` 0 for gradient flow.
* ``cnn_ntk``, ``gcnn_ntk``, ``mlp_ntk``: ``kernel(a, b, depth) -> (len(a), len(b))``;
  ``orbit``, ``rotate``: the C_4 action; ``mean_predictions``: the NTK's mean prediction.
"""

from __future__ import annotations

from harness_equivariant_ntk._kernels import (
    GROUPS,
    cnn_ntk,
    gcnn_ntk,
    mean_predictions,
    mlp_ntk,
    orbit,
    rotate,
)
from harness_equivariant_ntk.data import TIMES, MeanPredictions, RotatedImages
from harness_equivariant_ntk.methods import augmented, kernel_predictions

__all__ = [
    "GROUPS",
    "TIMES",
    "MeanPredictions",
    "RotatedImages",
    "augmented",
    "cnn_ntk",
    "gcnn_ntk",
    "kernel_predictions",
    "mean_predictions",
    "mlp_ntk",
    "orbit",
    "rotate",
]
