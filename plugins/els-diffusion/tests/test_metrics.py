"""The metrics on images with known answers, each failing on a wrong variant."""

import numpy as np
import pytest
from harness_els_diffusion.data import DiffusionData, Samples
from harness_els_diffusion.metrics import (
    Mosaic,
    NearestImage,
    PatchSchedule,
    R2ToTrained,
    pearson_r2,
)
from sklearn.datasets import load_digits

from harness import Skip

NO_PATCHES = np.zeros(0, dtype=np.int64)


@pytest.fixture(scope="module")
def data() -> DiffusionData:
    images = (load_digits().images[:40] / 8.0 - 1.0).astype(np.float32)
    rng = np.random.default_rng(0)
    noise = rng.standard_normal((6, 8, 8)).astype(np.float32)
    blank = np.zeros((3, 1, 8, 8), dtype=np.float32)
    return DiffusionData(
        train_images=images[:20],
        heldout_images=images[20:],
        eval_noise=noise,
        reference=images[:6].copy(),
        calibration_states=blank,
        calibration_x0=blank,
        steps=3,
        network_parameters=1,
    )


def test_pearson_r2_is_one_for_affine_copies_and_squared():
    a = np.random.default_rng(1).standard_normal((3, 8, 8))
    assert pearson_r2(a, 2 * a + 1) == pytest.approx(np.ones(3))
    assert pearson_r2(a, -a) == pytest.approx(np.ones(3))  # squared: the sign is lost
    b = np.random.default_rng(2).standard_normal((3, 8, 8))
    assert (pearson_r2(a, b) < 0.2).all()


def test_pearson_r2_of_a_constant_image_is_zero():
    a = np.random.default_rng(1).standard_normal((2, 8, 8))
    assert pearson_r2(a, np.zeros_like(a)) == pytest.approx([0.0, 0.0])


def test_r2_to_trained_pairs_samples_by_noise_draw(data):
    same = R2ToTrained().compute(data, Samples(data.reference.copy(), NO_PATCHES))
    assert same["median"] == pytest.approx(1.0)
    assert same["mismatched"] < 0.9
    # the wrong variant: samples in another order lose the pairing
    shuffled = Samples(np.roll(data.reference, 2, axis=0), NO_PATCHES)
    assert R2ToTrained().compute(data, shuffled)["median"] < 0.9


def test_nearest_image_finds_copies_of_training_images_only(data):
    copies = NearestImage().compute(data, Samples(data.train_images[:6].copy(), NO_PATCHES))
    assert copies["train"] == 0.0 and copies["copies"] == 1.0
    assert copies["heldout"] > 0.2
    blurred = (data.train_images[:6] + np.roll(data.train_images[:6], 1, axis=2)) / 2
    novel = NearestImage().compute(data, Samples(blurred, NO_PATCHES))
    assert novel["train"] > 0.1 and novel["copies"] == 0.0


def test_mosaic_counts_one_source_for_a_copy_and_more_for_a_collage(data):
    copy = Mosaic().compute(data, Samples(data.train_images[:1].copy(), NO_PATCHES))
    assert copy["patch_rms"] == 0.0
    collage = data.train_images[:1].copy()
    collage[:, :, 4:] = data.train_images[5, :, 4:]
    mixed = Mosaic().compute(data, Samples(collage, NO_PATCHES))
    assert mixed["sources"] > copy["sources"]
    noise = Mosaic().compute(data, Samples(data.eval_noise.clip(-1, 1), NO_PATCHES))
    assert noise["patch_rms"] > 0.3  # noise is no mosaic of training patches


def test_patch_schedule_reads_sizes_from_high_to_low_noise(data):
    shrinking = Samples(data.reference.copy(), np.array([8, 7, 5, 3]))
    out = PatchSchedule().compute(data, shrinking)
    assert out == {"high_noise": 7.5, "low_noise": 4.0, "non_increasing": 1.0}
    growing = Samples(data.reference.copy(), np.array([3, 5, 5, 7]))
    assert PatchSchedule().compute(data, growing)["non_increasing"] == 0.0
    with pytest.raises(Skip):
        PatchSchedule().compute(data, Samples(data.reference.copy(), NO_PATCHES))
