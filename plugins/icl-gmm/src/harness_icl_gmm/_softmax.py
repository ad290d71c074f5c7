"""A small softmax-attention transformer trained for in-context classification (torch).

Tokens are ``[x_i, e(y_i)]`` for the context and ``[x_q, 0]`` for the query, embedded
linearly; ``layers`` pre-norm encoder blocks (softmax self-attention over the whole prompt,
no positional encoding, so the model sees the context as a set and accepts any prompt
length) and a linear read-out of the query token give the c logits. The paper's comparison
model is a 3-layer GPT-2-style transformer (science notes §3); this one is bidirectional and
tiny so that it trains in seconds on a CPU.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from harness import limit_threads
from harness_icl_gmm.data import Prompts

__all__ = ["SetTransformer", "tokens", "train"]


class SetTransformer(nn.Module):
    """Embedding, ``layers`` encoder blocks of ``width`` and ``heads``, query read-out."""

    def __init__(self, dim: int, classes: int, width: int, heads: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Linear(dim + classes, width)
        block = nn.TransformerEncoderLayer(
            width, heads, dim_feedforward=2 * width, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.readout = nn.Linear(width, classes)

    def forward(self, prompt_tokens: torch.Tensor) -> torch.Tensor:
        """Logits (prompts, c) from tokens (prompts, L + 1, d + c), the query last."""
        return self.readout(self.encoder(self.embed(prompt_tokens))[:, -1])


def tokens(prompts: Prompts, classes: int) -> torch.Tensor:
    """The prompt's tokens, float32 of shape (prompts, L + 1, d + c)."""
    labels = np.eye(classes)[prompts.context_y]
    context = np.concatenate([prompts.context_x, labels], axis=2)
    query = np.concatenate([prompts.query_x, np.zeros((len(prompts), classes))], axis=1)
    return torch.from_numpy(np.concatenate([context, query[:, None]], axis=1)).float()


def train(
    train_prompts: Prompts,
    test_prompts: Prompts,
    classes: int,
    *,
    width: int,
    heads: int,
    layers: int,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
) -> np.ndarray:
    """Train with Adam on the cross-entropy of the training queries; return the predicted
    class probabilities (test prompts, c) of the test queries, float64."""
    with limit_threads(1):
        torch.manual_seed(seed)
        dim = train_prompts.query_x.shape[1]
        model = SetTransformer(dim, classes, width, heads, layers)
        optimiser = torch.optim.Adam(model.parameters(), lr=lr)
        inputs = tokens(train_prompts, classes)
        targets = torch.from_numpy(train_prompts.query_y)
        order = torch.Generator().manual_seed(seed)
        for _ in range(steps):
            index = torch.randint(0, len(targets), (batch,), generator=order)
            loss = nn.functional.cross_entropy(model(inputs[index]), targets[index])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        with torch.no_grad():
            test = tokens(test_prompts, classes)
            logits = torch.cat([model(part) for part in test.split(1024)])
        return torch.softmax(logits.double(), dim=1).numpy()
