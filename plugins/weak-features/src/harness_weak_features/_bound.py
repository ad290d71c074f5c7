"""The generalisation bound of discrete weak-features learning (Sugiyama & Uchida, ICML 2025).

Source of the form and the constants: the authors' public code, repository
``KOHsEMP/discrete_WFL`` (commit ``aed6d67``), notebook ``calc_bound.ipynb``, function
``risk_bound_f_fixed_g_discrete`` and the cells that draw the paper's risk-and-bound figure
(``delta = 1e-4``, ``layer_norm = 1``, ``M_l = U_l = 2``, Lipschitz constant 1 for the
logistic loss, ``best_risk = 0``). It is the bound on the l-risk ``R_{g,l}(f_{g,S})`` of a
label model f trained on the estimates of *fixed* feature-estimation models g_j, in terms of
their 0-1 risks ``R_{01,j}(g_j)``. The paper's own text (theorem and equation numbers) was not
available here, so the statement below is read off that code, not checked against the paper;
this module is our own implementation of it, not a copy.

Bound (n training rows, ``E = sum_j R_{01,j}(g_j)`` over the weak features)::

    Rad = L_l * B * sqrt(min(2, 4 ln(2 d)) * X^2 / n)        (times K^2 when K > 2 classes)
    dev = U_l * sqrt(ln(2 / delta) / (2 n))
    bound = R* + 4 (2 Rad + dev)
               + 2 sqrt(2 U_l E (R* + 4 Rad + dev + 2 U_l sqrt(2 E)))

with ``Rad`` the Rademacher-complexity bound of a two-layer perceptron with weight norm at most
B on inputs of squared L2 norm at most X^2 in dimension d, ``R*`` the best l-risk in the class
on the true features (``R_l(f_F)``), ``U_l`` a bound on the loss and ``L_l`` its Lipschitz
constant. It holds with probability at least ``1 - delta`` over the training sample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["BoundTerms", "rademacher_two_layer", "wfl_risk_bound"]


def rademacher_two_layer(
    n: int,
    input_dim: int,
    input_norm_sq: float,
    weight_norm: float = 1.0,
    lipschitz: float = 1.0,
    n_classes: int = 2,
) -> float:
    """Rademacher-complexity term of the bound, ``L_l B sqrt(min(2, 4 ln 2d) X^2 / n)``.

    Source: ``calc_bound.ipynb`` of ``KOHsEMP/discrete_WFL`` (see the module docstring); the
    multiclass factor ``K^2`` applies for ``n_classes > 2`` only.

    Parameters
    ----------
    n : int
        Training rows of the label model, >= 1.
    input_dim : int
        d, the dimension of the label model's input, >= 1.
    input_norm_sq : float
        X^2, the largest squared L2 norm of an input, >= 0.
    weight_norm, lipschitz : float
        B (layer-norm bound) and L_l (Lipschitz constant of the loss), >= 0.
    n_classes : int
        K, number of label classes, >= 2.

    Returns
    -------
    float
        Unitless, >= 0.

    Raises
    ------
    ValueError
        Naming the argument out of range.
    """
    if n < 1 or input_dim < 1 or n_classes < 2:
        raise ValueError(
            f"n, input_dim must be >= 1 and n_classes >= 2, got {n}, {input_dim}, {n_classes}"
        )
    if input_norm_sq < 0 or weight_norm < 0 or lipschitz < 0:
        raise ValueError(
            "input_norm_sq, weight_norm and lipschitz must be >= 0, got "
            f"{input_norm_sq}, {weight_norm}, {lipschitz}"
        )
    width = min(2.0, 4.0 * math.log(2 * input_dim))
    rad = lipschitz * math.sqrt(weight_norm**2 * width * input_norm_sq / n)
    return rad * n_classes**2 if n_classes > 2 else rad


@dataclass(frozen=True)
class BoundTerms:
    """The bound and its parts (unitless, in units of the loss l).

    Attributes
    ----------
    bound : float
        The whole right-hand side.
    rademacher : float
        ``Rad`` of :func:`rademacher_two_layer`.
    deviation : float
        ``dev = U_l sqrt(ln(2/delta) / (2n))``.
    complexity : float
        ``4 (2 Rad + dev)``, the part that does not depend on g.
    estimation : float
        ``2 sqrt(2 U_l E (R* + 4 Rad + dev + 2 U_l sqrt(2E)))``, the part that vanishes when
        every g_j is exact (``E = 0``).
    est_error_sum : float
        ``E = sum_j R_{01,j}(g_j)``.
    """

    bound: float
    rademacher: float
    deviation: float
    complexity: float
    estimation: float
    est_error_sum: float


def wfl_risk_bound(
    n: int,
    est_error_rates: Sequence[float],
    input_dim: int,
    input_norm_sq: float,
    *,
    delta: float = 1e-4,
    loss_bound: float = 2.0,
    lipschitz: float = 1.0,
    weight_norm: float = 1.0,
    best_risk: float = 0.0,
    n_classes: int = 2,
) -> BoundTerms:
    """Upper bound on the l-risk of a label model trained on fixed estimators' outputs.

    Source: Sugiyama & Uchida, ICML 2025, as computed by the authors' ``calc_bound.ipynb``
    (``risk_bound_f_fixed_g_discrete``, repository ``KOHsEMP/discrete_WFL``); the defaults are
    the constants of the paper's figure there (``delta = 1e-4``, ``U_l = 2``, ``B = 1``,
    ``L_l = 1``, ``R* = 0``). The equation number in the paper is not known here (its text was
    not available); see the module docstring for the formula.

    Parameters
    ----------
    n : int
        Training rows of the label model, >= 1.
    est_error_rates : sequence of float
        ``R_{01,j}(g_j)`` in [0, 1], one per weak feature (at least one).
    input_dim, input_norm_sq
        d and X^2 of the label model's inputs (see :func:`rademacher_two_layer`).
    delta : float
        Confidence level: the bound holds with probability >= 1 - delta; in (0, 1).
    loss_bound : float
        ``U_l``, an upper bound of the loss, > 0.
    lipschitz, weight_norm : float
        ``L_l`` and ``B``.
    best_risk : float
        ``R* = R_l(f_F)``, the best l-risk in the class on the true features, >= 0. The
        authors plot the bound with 0, which can only make it smaller than the bound with the
        true ``R*``.
    n_classes : int
        Label classes K.

    Returns
    -------
    BoundTerms

    Raises
    ------
    ValueError
        Naming the argument out of range.
    """
    rates = [float(r) for r in est_error_rates]
    if not rates or any(not 0.0 <= r <= 1.0 for r in rates):
        raise ValueError(f"est_error_rates must be one or more rates in [0, 1], got {rates}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if loss_bound <= 0 or best_risk < 0:
        raise ValueError(
            f"loss_bound must be > 0 and best_risk >= 0, got {loss_bound}, {best_risk}"
        )
    rad = rademacher_two_layer(n, input_dim, input_norm_sq, weight_norm, lipschitz, n_classes)
    dev = loss_bound * math.sqrt(math.log(2.0 / delta) / (2.0 * n))
    e_sum = sum(rates)
    complexity = 4.0 * (2.0 * rad + dev)
    inner = best_risk + 4.0 * rad + dev + 2.0 * loss_bound * math.sqrt(2.0 * e_sum)
    estimation = 2.0 * math.sqrt(2.0 * loss_bound * e_sum * inner)
    return BoundTerms(
        bound=best_risk + complexity + estimation,
        rademacher=rad,
        deviation=dev,
        complexity=complexity,
        estimation=estimation,
        est_error_sum=e_sum,
    )
