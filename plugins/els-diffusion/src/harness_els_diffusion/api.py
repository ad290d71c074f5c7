"""What a method author needs for the 'els-diffusion' task.

The data type :class:`DiffusionData` holds a training set and a trained convolutional
diffusion network's samples from ``eval_noise``; a method returns :class:`Samples` from
the same noise. A new machine is a denoiser ``x0_hat(x, abar, step)`` run by
:func:`run_sampler`:

>>> from dataclasses import dataclass
>>> from harness import Method
>>> from harness_els_diffusion.api import DiffusionData, Samples, ideal_denoiser, run_sampler
>>> class Blurred(Method):
...     '''The ideal machine's samples, for illustration. Source: this example.'''
...     name = "blurred-ideal"
...     task = "els-diffusion"
...     def run(self, data: DiffusionData, params: Method.Params, seed: int) -> Samples:
...         out = run_sampler(ideal_denoiser(data.train_images), data.eval_noise, data.steps)
...         return Samples(images=out, patch_sizes=np.zeros(0, dtype=np.int64))
"""

from harness_els_diffusion._diffusion import alpha_bar, ddim_step, time_grid
from harness_els_diffusion._machines import (
    Denoiser,
    calibrate_patches,
    gaussian_denoiser,
    ideal_denoiser,
    nearest_denoiser,
    patch_denoiser,
    run_sampler,
)
from harness_els_diffusion.data import DiffusionData, Samples
from harness_els_diffusion.metrics import pearson_r2, rms_to_nearest

__all__ = [
    "Denoiser",
    "DiffusionData",
    "Samples",
    "alpha_bar",
    "calibrate_patches",
    "ddim_step",
    "gaussian_denoiser",
    "ideal_denoiser",
    "nearest_denoiser",
    "patch_denoiser",
    "pearson_r2",
    "rms_to_nearest",
    "run_sampler",
    "time_grid",
]
