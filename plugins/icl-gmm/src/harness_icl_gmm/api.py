"""Public API of the ``icl-gmm`` task for method authors.

A method receives an :class:`IclData` (a training and a test law, N, M and the number of
prompts; prompts are generated on request) and returns an :class:`IclOutput` (predicted class
probabilities of every test query; a single-layer model may add its W)::

    from dataclasses import dataclass

    from harness import Method
    from harness_icl_gmm.api import IclData, IclOutput, linear_attention_output


    class ScaledIdentity(Method):
        \"\"\"The single-layer model with W = c I. Source: example.\"\"\"

        name, task = "scaled-identity", "icl-gmm"

        def run(self, data: IclData, params: Method.Params, seed: int) -> IclOutput:
            return linear_attention_output(data, data.classes * np.eye(data.dim))

Shapes (B prompts, L points per context, d dimensions, c classes):

* ``IclData.prompts(split, start, stop)`` -> :class:`Prompts`: ``context_x`` (B, L, d),
  ``context_y`` (B, L) ints, ``query_x`` (B, d), ``query_y`` (B,), ``means`` (B, c, d)
  (hidden class means, for oracles only).
* ``IclData.context_means(split, start, stop, random_labels=False)`` ->
  :class:`ContextMeans`: the same prompts summarised by h_k = (1/L) sum_i 1[y_i = k] x_i,
  ``class_means`` (B, c, d), at a cost independent of L.
* ``IclData.train_law`` / ``test_law``: :class:`MixtureLaw` (``covariance`` Lambda,
  ``precision``, ``radius``, ``classes``, ``posterior(means, x)``).
* ``IclOutput(probs)``: ``probs`` (test prompts, c), rows in the simplex, finite.
* ``features``, ``minimise``, ``gradient_descent``: the single-layer model as a convex problem
  in W (logit_k = h_k^T W x_q); ``linear_attention_output(data, W)`` evaluates a W.
"""

from __future__ import annotations

from harness_icl_gmm._linear import Features, Trajectory, features, gradient_descent, minimise
from harness_icl_gmm.data import ContextMeans, IclData, IclOutput, MixtureLaw, Prompts, softmax
from harness_icl_gmm.methods import linear_attention_output

__all__ = [
    "ContextMeans",
    "Features",
    "IclData",
    "IclOutput",
    "MixtureLaw",
    "Prompts",
    "Trajectory",
    "features",
    "gradient_descent",
    "linear_attention_output",
    "minimise",
    "softmax",
]
