"""harness plugin ``icl-gmm``: transformers trained for in-context classification of
Gaussian mixtures.

Paper: Shen, Zhou, Yang, Shen, "On the Training Convergence of Transformers for In-Context
Classification of Gaussian Mixtures", ICML 2025 (arXiv 2410.11778).
"""

from __future__ import annotations

from harness import hookimpl
from harness_icl_gmm import claims, datasets, methods, metrics


@hookimpl
def harness_datasets():
    """In-distribution prompts and prompts with a shifted test law."""
    return [datasets.GaussianMixture, datasets.GaussianMixtureShift]


@hookimpl
def harness_methods():
    """The paper's model (trained, closed form, shuffled labels), the oracle, baselines."""
    return [
        methods.LinearAttentionGD,
        methods.LinearAttentionClosedForm,
        methods.ShuffledLabelAttention,
        methods.BayesOptimal,
        methods.ContextLogisticRegression,
        methods.SoftmaxTransformer,
    ]


@hookimpl
def harness_metrics():
    """In-context error, gaps to Bayes, W's distance to its limit and GD's rate."""
    return [
        metrics.TestError,
        metrics.ErrorGap,
        metrics.PosteriorGap,
        metrics.LimitPosteriorGap,
        metrics.LimitDistance,
        metrics.GDDistance,
        metrics.GDRate,
    ]


@hookimpl
def harness_claims():
    """Linear convergence, the 1/N and 1/sqrt(M) rates, baselines and shifts."""
    return list(claims.CLAIMS)
