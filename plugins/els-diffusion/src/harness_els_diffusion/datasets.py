"""Datasets of the 'els-diffusion' task: a training set and a network trained on it."""

from dataclasses import dataclass
from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field

from harness import Dataset, LazyModule, limit_threads
from harness_els_diffusion.data import DiffusionData

_diffusion = LazyModule("harness_els_diffusion._diffusion")  # torch loads when a cell runs

__all__ = ["Digits"]


class Digits(Dataset):
    """scikit-learn's 8x8 handwritten digits and a small convolutional diffusion model
    trained on a random subset of them.

    Source: scikit-learn's bundled ``load_digits`` (UCI optical recognition of handwritten
    digits, 1,797 images, 8x8, grey levels 0-16; shipped with scikit-learn, BSD-3 licence);
    the network and its training: :mod:`harness_els_diffusion._diffusion` (a CPU-sized
    stand-in for the paper's ResNets, reconstruction, not read in the paper). The paper's
    data sets (MNIST, FashionMNIST, CIFAR10, CelebA) need downloads and are out of reach here.

    Each seed draws its own training subset, held-out subset, network initialisation and
    batches, calibration noise and evaluation noise: seeds are independently trained models
    evaluated on independent noise draws.

    Parameters
    ----------
    n_train : int, default=200
        Training images (and as many held-out images), at most 898.
    n_eval : int, default=16
        Evaluation noise draws: the samples every method produces.
    n_calibration : int, default=5
        Calibration noise draws (odd, so a median is a candidate patch size).
    steps : int, default=10
        DDIM sampler steps.
    width : int, default=32
        Channels of the network's hidden layers.
    layers : int, default=2
        Residual 3x3 layers between the input and output convolutions.
    train_steps : int, default=300
        Adam steps of the training budget (batch ``batch``; 300 x 128 = 38,400 noised
        images, about 8 CPU-seconds).
    batch : int, default=128
    lr : float, default=3e-3
        Adam's initial learning rate (cosine decay to 0).
    """

    name = "digits"
    task = "els-diffusion"
    test_params: ClassVar[dict] = {
        "n_train": 60,
        "n_eval": 4,
        "n_calibration": 1,
        "steps": 4,
        "train_steps": 20,
    }

    @dataclass
    class Params:
        n_train: Annotated[int, Field(ge=10, le=898)] = 200
        n_eval: Annotated[int, Field(ge=2)] = 16
        n_calibration: Annotated[int, Field(ge=1)] = 5
        steps: Annotated[int, Field(ge=2, le=100)] = 10
        width: Annotated[int, Field(ge=1)] = 32
        layers: Annotated[int, Field(ge=0)] = 2
        train_steps: Annotated[int, Field(ge=1)] = 300
        batch: Annotated[int, Field(ge=1)] = 128
        lr: Annotated[float, Field(gt=0)] = 3e-3

    def load(self, params: Params, seed: int) -> DiffusionData:
        from sklearn.datasets import load_digits

        rng = np.random.default_rng(seed)
        images = (load_digits().images / 8.0 - 1.0).astype(np.float32)
        order = rng.permutation(len(images))
        train = images[order[: params.n_train]]
        heldout = images[order[params.n_train : 2 * params.n_train]]
        h, w = train.shape[1:]
        eval_noise = rng.standard_normal((params.n_eval, h, w)).astype(np.float32)
        calibration_noise = rng.standard_normal((params.n_calibration, h, w)).astype(np.float32)
        net_seed = int(rng.integers(2**62))
        with limit_threads(1, torch=True):
            state = _diffusion.train_denoiser(
                train, params.width, params.layers, params.train_steps, params.batch,
                params.lr, net_seed,
            )  # fmt: skip
            net = _diffusion.load_network(state, params.width, params.layers)
            reference, _, _ = _diffusion.sample_network(net, eval_noise, params.steps)
            _, states, x0 = _diffusion.sample_network(net, calibration_noise, params.steps)
        return DiffusionData(
            train_images=train,
            heldout_images=heldout,
            eval_noise=eval_noise,
            reference=reference,
            calibration_states=states,
            calibration_x0=x0,
            steps=params.steps,
            network_parameters=sum(p.numel() for p in net.parameters()),
        )

    def describe(self, data: DiffusionData) -> dict[str, int]:
        """The network's size, logged as ``dataset.network_parameters``."""
        return {"network_parameters": data.network_parameters}
