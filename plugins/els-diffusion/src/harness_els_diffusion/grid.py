"""A picture of the task: samples of the trained network and of the machines from the same
noise, one row per method, one column per noise draw.

Run ``python -m harness_els_diffusion.grid OUT.png [--seed S] [--columns N]``: it loads the
``digits`` dataset at its default params (the network is read from the weight cache when
present, else trained: about 15 CPU-seconds) and runs every method's default configuration.
The seed is passed to ``Digits.load`` as is (a suite derives another seed per cell), so
the picture shows a network of its own, not one of the suite's.

Source: this plugin.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from harness_els_diffusion import datasets, methods
from harness_els_diffusion.metrics import pearson_r2

__all__ = ["ROWS", "main", "sample_grid"]

ROWS = (
    ("trained network", methods.TrainedNetwork),
    ("ELS machine", methods.ELSMachine),
    ("LS machine", methods.LSMachine),
    ("ideal score", methods.IdealScore),
    ("Gaussian (rival)", methods.GaussianDenoiser),
)


def sample_grid(seed: int, columns: int):
    """The figure: a (len(ROWS), columns) grid of 8x8 samples, each machine's median r^2
    with the network in its row label. Returns a matplotlib Figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dataset = datasets.Digits()
    data = dataset.load(dataset.Params(), seed)
    fig, axes = plt.subplots(len(ROWS), columns, figsize=(1.1 * columns + 1.6, 1.2 * len(ROWS)))
    for row, (label, method_class) in enumerate(ROWS):
        method = method_class()
        images = method.run(data, method.Params(), seed).images
        r2 = float(np.median(pearson_r2(images, data.reference)))
        for col in range(columns):
            ax = axes[row, col]
            ax.imshow(images[col], cmap="gray_r", vmin=-1, vmax=1)
            ax.set_xticks([])
            ax.set_yticks([])
        axes[row, 0].set_ylabel(f"{label}\nr²={r2:.2f}", rotation=0, ha="right", va="center")
    fig.suptitle(f"Samples from the same noise (columns); digits, seed {seed}")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> None:
    """Write the grid to the PNG file given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--columns", type=int, default=8)
    args = parser.parse_args(argv)
    sample_grid(args.seed, args.columns).savefig(args.out, dpi=110)


if __name__ == "__main__":
    main()
