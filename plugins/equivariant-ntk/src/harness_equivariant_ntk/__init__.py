"""Hook implementations of the 'equivariant-ntk' plugin: they only return classes."""

from harness import hookimpl
from harness_equivariant_ntk.claims import CLAIMS
from harness_equivariant_ntk.datasets import RotatedDigits
from harness_equivariant_ntk.methods import CnnEnsemble, CnnNtk, GcnnNtk, MlpNtk
from harness_equivariant_ntk.metrics import Accuracy, GcnnGap


@hookimpl
def harness_datasets():
    return [RotatedDigits]


@hookimpl
def harness_methods():
    return [CnnNtk, GcnnNtk, MlpNtk, CnnEnsemble]


@hookimpl
def harness_metrics():
    return [Accuracy, GcnnGap]


@hookimpl
def harness_claims():
    return list(CLAIMS)
