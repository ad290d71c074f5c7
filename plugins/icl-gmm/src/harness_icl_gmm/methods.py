"""Methods of the ``icl-gmm`` task: the paper's model, its closed-form limit and baselines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field

from harness import Method, limit_threads
from harness_icl_gmm import _linear, _logreg
from harness_icl_gmm.data import ContextMeans, IclData, IclOutput, softmax

__all__ = [
    "BayesOptimal",
    "ContextLogisticRegression",
    "LinearAttentionClosedForm",
    "LinearAttentionGD",
    "ShuffledLabelAttention",
    "SoftmaxTransformer",
    "linear_attention_output",
]

TASK = "icl-gmm"


def linear_attention_output(data: IclData, w: np.ndarray, **extra: object) -> IclOutput:
    """The single-layer linear-attention model with weights W (d, d) on the test prompts."""
    test = data.context_means("test")
    return IclOutput(softmax(_linear.logits(test, w)), weights=w, **extra)


class LinearAttentionGD(Method):
    """Single-layer linear-attention transformer trained by gradient descent.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.1 (binary) and
    Theorem 4.1 (c classes): GD on the cross-entropy of the query label over the training
    prompts, in the merged parametrisation logit_k = h_k^T W x_q (science notes §1, [INF]).

    Parameters
    ----------
    steps : int, default=1000
        GD iterations.
    lr_scale : float, default=1.0
        Step size eta = lr_scale / lambda_max(Hessian at W = 0).
    solver : {"gd", "newton"}, default="gd"
        ``"newton"`` returns the minimiser W* GD converges to (Newton's method, no trajectory):
        for suites that need only the trained model.
    init_scale : float, default=0.0
        W_0 = init_scale * R with R (d, d) of N(0, 1/d) entries drawn from the seed (0: the
        origin, the usual start of this line of work).
    parametrisation : {"merged", "factored"}, default="merged"
        ``"factored"``: GD on W = A B from A_0 = sqrt(init_scale) R_1, B_0 = sqrt(init_scale)
        R_2, a non-convex loss whose origin is a saddle (the control of the global rate).

    Returns
    -------
    IclOutput
        Test probabilities, the final W, the recorded iterates, the exact minimiser W*, eta,
        the Hessian's eigenvalues at W*, and the reference W fitted on the same training
        queries with every context mean replaced by its expectation mu_k / c (an infinitely
        long context: the paired estimate of G = W*/c - Lambda^-1 is (W* - W_ref) / c).

    Notes
    -----
    The paper trains W^KQ and W^PV; their product is W. The random starts and the step size
    rule are this plugin's choices.
    """

    name = "linear-attention-gd"
    task = TASK
    test_params: ClassVar[dict] = {"steps": 200}

    @dataclass
    class Params:
        steps: Annotated[int, Field(ge=1, le=1_000_000)] = 1000
        lr_scale: Annotated[float, Field(gt=0, le=2)] = 1.0
        solver: Literal["gd", "newton"] = "gd"
        init_scale: Annotated[float, Field(ge=0, le=100)] = 0.0
        parametrisation: Literal["merged", "factored"] = "merged"

    def run(self, data: IclData, params: Params, seed: int) -> IclOutput:
        with limit_threads(1):
            prompts = data.context_means("train")
            train = _linear.features(prompts)
            extra = _fitted(train, prompts)
            if params.solver == "newton":
                return linear_attention_output(data, extra["minimiser"], **extra)
            start = _start(data.dim, params.init_scale, params.parametrisation, seed)
            path = _linear.gradient_descent(train, params.steps, params.lr_scale, start)
            return linear_attention_output(
                data, path.final, trajectory=path.weights, trajectory_steps=path.steps,
                step_size=path.step_size, **extra,
            )  # fmt: skip


class ShuffledLabelAttention(Method):
    """The single-layer model fitted on prompts whose context labels are independent of the
    points: trained as the paper's model is, it has nothing to learn in context.

    Source: a rival of Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778): the minimiser
    W* of the same loss (Newton's method) when the x-y pairing of the context is broken.

    Returns
    -------
    IclOutput
        Test probabilities, W*, the Hessian's eigenvalues at W* and the reference W of the
        true prompts with infinitely long contexts (as ``linear-attention-gd``).
    """

    name = "shuffled-label-attention"
    task = TASK

    def run(self, data: IclData, params: Method.Params, seed: int) -> IclOutput:
        with limit_threads(1):
            true = data.context_means("train")
            prompts = data.context_means("train", random_labels=True)
            extra = _fitted(_linear.features(prompts), true)
            return linear_attention_output(data, extra["minimiser"], **extra)


def _fitted(train: _linear.Features, prompts: ContextMeans) -> dict[str, np.ndarray]:
    """W* of ``train``, the Hessian's eigenvalues there, and W_ref of ``prompts`` with
    infinitely long contexts."""
    w_star = _linear.minimise(train)
    return {
        "minimiser": w_star,
        "hessian_eigenvalues": np.linalg.eigvalsh(_linear.hessian(train, w_star)),
        "reference_weights": _linear.minimise(_linear.features(prompts.infinite())),
    }


def _start(
    d: int, scale: float, parametrisation: str, seed: int
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """W_0 = scale R, or the factors (sqrt(scale) R_1, sqrt(scale) R_2); R of N(0, 1/d)."""
    rng = np.random.default_rng([seed, 3])
    first, second = rng.standard_normal((2, d, d)) / np.sqrt(d)
    if parametrisation == "factored":
        return np.sqrt(scale) * first, np.sqrt(scale) * second
    return scale * first


class LinearAttentionClosedForm(Method):
    """The single-layer linear-attention model with W = c Lambda^-1, its N -> infinity limit.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Theorem 3.1 (W* = 2(Lambda^-1
    + G)) and Theorem 4.1 (W* = c(Lambda^-1 + G)) with G = 0; Lambda is the training law's.

    Returns
    -------
    IclOutput
        Test probabilities and W.
    """

    name = "linear-attention-closed-form"
    task = TASK

    def run(self, data: IclData, params: Method.Params, seed: int) -> IclOutput:
        return linear_attention_output(data, data.classes * data.train_law.precision)


class BayesOptimal(Method):
    """The Bayes-optimal (LDA) classifier that knows each test prompt's means and Lambda.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), the ground-truth label
    distribution the trained model approaches (Theorem 3.2); an oracle, not in-context.

    Returns
    -------
    IclOutput
        The true posterior P(y_q = k | x_q) of every test query.
    """

    name = "bayes-optimal"
    task = TASK

    def run(self, data: IclData, params: Method.Params, seed: int) -> IclOutput:
        test = data.context_means("test")
        return IclOutput(data.test_law.posterior(test.means, test.query_x))


class ContextLogisticRegression(Method):
    """Multinomial logistic regression fitted on each test prompt's M context points.

    Source: the traditional baseline of Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778,
    v3 experiments); scikit-learn's ``LogisticRegression(C=C)`` objective, solved for all
    prompts at once by batched Newton steps.

    Parameters
    ----------
    C : float, default=1.0
        Inverse L2 penalty of the weights (not the intercepts), as in scikit-learn.

    Returns
    -------
    IclOutput
        Test probabilities.
    """

    name = "context-logistic-regression"
    task = TASK

    @dataclass
    class Params:
        C: Annotated[float, Field(gt=0, le=1e6)] = 1.0

    def run(self, data: IclData, params: Params, seed: int) -> IclOutput:
        with limit_threads(1):
            return IclOutput(_logreg.fit_predict(data.prompts("test"), data.classes, params.C))


class SoftmaxTransformer(Method):
    """A small multi-layer softmax-attention transformer trained on the training prompts.

    Source: Shen, Zhou, Yang, Shen, ICML 2025 (arXiv 2410.11778), Section 5: the 3-layer
    softmax transformer compared with the 1-layer model; here a bidirectional set model
    without positional encoding, trained by Adam (see ``_softmax``).

    Parameters
    ----------
    layers : int, default=3
    width : int, default=16
        Model width (a multiple of ``heads``).
    heads : int, default=2
    steps : int, default=250
        Adam steps.
    batch : int, default=64
        Training prompts per step, drawn with replacement from the training set.
    lr : float, default=3e-3
        Adam's learning rate.

    Returns
    -------
    IclOutput
        Test probabilities.
    """

    name = "softmax-transformer"
    task = TASK
    test_params: ClassVar[dict] = {"steps": 5, "width": 8, "layers": 1}

    @dataclass
    class Params:
        layers: Annotated[int, Field(ge=1, le=12)] = 3
        width: Annotated[int, Field(ge=2, le=512)] = 16
        heads: Annotated[int, Field(ge=1, le=16)] = 2
        steps: Annotated[int, Field(ge=1, le=1_000_000)] = 250
        batch: Annotated[int, Field(ge=1, le=100_000)] = 64
        lr: Annotated[float, Field(gt=0, le=1)] = 3e-3

        def __post_init__(self) -> None:  # a constraint between two fields
            if self.width % self.heads:
                raise ValueError(f"width ({self.width}) must be a multiple of heads ({self.heads})")

    def run(self, data: IclData, params: Params, seed: int) -> IclOutput:
        from harness_icl_gmm import _softmax  # torch: imported by the cells that need it

        probs = _softmax.train(
            data.prompts("train"), data.prompts("test"), data.classes, width=params.width,
            heads=params.heads, layers=params.layers, steps=params.steps, batch=params.batch,
            lr=params.lr, seed=seed,
        )  # fmt: skip
        return IclOutput(probs)
