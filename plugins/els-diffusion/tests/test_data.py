"""The task's data and output types validate what they hold."""

import numpy as np
import pytest
from harness_els_diffusion.data import DiffusionData, Samples


def _data(**change) -> DiffusionData:
    images = np.zeros((4, 8, 8), dtype=np.float32)
    fields = {
        "train_images": images,
        "heldout_images": images,
        "eval_noise": images[:2],
        "reference": images[:2],
        "calibration_states": np.zeros((3, 1, 8, 8), dtype=np.float32),
        "calibration_x0": np.zeros((3, 1, 8, 8), dtype=np.float32),
        "steps": 3,
        "network_parameters": 1,
    }
    return DiffusionData(**(fields | change))


def test_valid_data_is_accepted():
    assert _data().image_shape == (8, 8)


@pytest.mark.parametrize(
    "change",
    [
        {"reference": np.full((2, 8, 8), np.nan, dtype=np.float32)},
        {"reference": np.zeros((3, 8, 8), dtype=np.float32)},
        {"steps": 4},
        {"train_images": np.zeros((4, 64), dtype=np.float32)},
    ],
    ids=["nan", "unpaired-reference", "steps", "flat-images"],
)
def test_inconsistent_data_is_refused(change):
    with pytest.raises(ValueError):
        _data(**change)


def test_samples_refuse_non_finite_images():
    with pytest.raises(ValueError, match="non-finite"):
        Samples(np.full((1, 8, 8), np.inf), np.zeros(0, dtype=np.int64))
