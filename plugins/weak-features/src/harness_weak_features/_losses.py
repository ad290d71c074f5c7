"""The weak-observation likelihood loss and the posterior of a weak feature.

Source: Sugiyama & Uchida, ICML 2025, §2; loss ``L_weak(f) = -log Σ_v P(o | v) p_f(v | x_o)``
as reconstructed in ``docs/papers/weak-features.md`` §2 (not checked against the paper).

One formula covers every observation model: forward correction for noisy values
(Patrini et al. 2017), no loss on missing rows (``P(o | v)`` constant), the complementary
loss ``-log(1 - p_f(v_bar)) + log(K - 1)`` (Yu et al. 2018) and the CC partial-label loss
``-log Σ_{v in S} p_f(v)`` (Feng et al. 2020). With a clean observation
(``P(o | v) = 1[v = o]``) it is plain cross-entropy.
"""

from __future__ import annotations

import torch

__all__ = ["posterior", "weak_nll"]


def weak_nll(logits: torch.Tensor, lik: torch.Tensor) -> torch.Tensor:
    """Mean negative log-likelihood of weak observations under ``p_f = softmax(logits)``.

    Parameters
    ----------
    logits : Tensor of float, shape (n, K)
        Scores of the feature estimator f.
    lik : Tensor of float, shape (n, K)
        ``P(o_i | v = u)``, non-negative, at least one positive entry per row.

    Returns
    -------
    Tensor, shape ()
        ``mean_i -log Σ_u lik[i, u] softmax(logits_i)[u]``, in nats.

    Examples
    --------
    >>> import torch
    >>> logits = torch.tensor([[2.0, 0.0, -1.0]])
    >>> clean = torch.tensor([[1.0, 0.0, 0.0]])
    >>> bool(torch.isclose(weak_nll(logits, clean),
    ...                    torch.nn.functional.cross_entropy(logits, torch.tensor([0]))))
    True
    """
    log_p = torch.log_softmax(logits, dim=-1)
    return -torch.logsumexp(log_p + torch.log(lik), dim=-1).mean()


def posterior(logits: torch.Tensor, lik: torch.Tensor) -> torch.Tensor:
    """``p(v | x_o, o) ∝ p_f(v | x_o) P(o | v)``, keeping the observation's own information.

    Parameters
    ----------
    logits : Tensor of float, shape (n, K)
    lik : Tensor of float, shape (n, K)

    Returns
    -------
    Tensor of float, shape (n, K)
        Rows sum to 1.
    """
    return torch.softmax(torch.log_softmax(logits, dim=-1) + torch.log(lik), dim=-1)
