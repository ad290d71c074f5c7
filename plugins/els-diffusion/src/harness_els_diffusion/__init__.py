"""harness plugin ``els-diffusion``: locality and equivariance predict what a convolutional
diffusion model samples.

Paper: Kamb, Ganguli, "An analytic theory of creativity in convolutional diffusion models",
ICML 2025 (arXiv 2412.20292).
"""

from __future__ import annotations

from harness import hookimpl
from harness_els_diffusion import claims, datasets, methods, metrics, reports


@hookimpl
def harness_datasets():
    """scikit-learn's digits with a small convolutional diffusion model trained on them."""
    return [datasets.Digits]


@hookimpl
def harness_methods():
    """The trained network, the ELS, LS and ideal machines, and two non-local rivals."""
    return [
        methods.TrainedNetwork,
        methods.ELSMachine,
        methods.LSMachine,
        methods.IdealScore,
        methods.GaussianDenoiser,
        methods.NearestNeighbour,
    ]


@hookimpl
def harness_metrics():
    """Agreement with the network, distance to the training set, patch provenance, the
    calibrated patch sizes."""
    return [metrics.R2ToTrained, metrics.NearestImage, metrics.Mosaic, metrics.PatchSchedule]


@hookimpl
def harness_reports():
    """Patch sizes and the metrics per method."""
    return [reports.MethodTable]


@hookimpl
def harness_claims():
    """ELS predicts the network; beats LS and the rivals; the ideal machine memorises."""
    return list(claims.CLAIMS)
