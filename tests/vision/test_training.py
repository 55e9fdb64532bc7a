"""vision/training/train_classifier.py: the training patches cut in cached
blocks of scenes (no PyTorch needed for this part)."""

import numpy as np

from vision.crops import CropSettings
from vision.training.dataset import LabelSettings, make_scene_samples
from vision.training.train_classifier import DATA_VERSION, generate, generate_blocks


def test_blocks_hold_the_scenes_of_one_run_and_are_cached_apart(tmp_path):
    crop = CropSettings()
    raw, labels, summary = generate_blocks(7, 3, 2, crop, tmp_path, workers=1)
    names = sorted(p.name for p in tmp_path.glob("*.npz"))
    assert names == [f"train-seed7-from2-n1-48x36-v{DATA_VERSION}.npz", f"train-seed7-n2-48x36-v{DATA_VERSION}.npz"]
    # the second block is scene 2 of seed 7, exactly as the dataset cuts it
    r2, l2, _ = make_scene_samples(7, 2, crop, LabelSettings())
    b2, bl2, s2 = generate(7, 1, crop, tmp_path, 1, "train", start=2)
    np.testing.assert_array_equal(b2, r2)
    assert bl2 == list(l2) and s2["scenes"] == 1
    assert summary["scenes"] == 3 and summary["patches"] == len(labels) == len(raw)
    np.testing.assert_array_equal(raw[-len(b2):], b2)
    # a longer run reuses the cached blocks (same arrays, read back)
    again, labels_again, _ = generate_blocks(7, 3, 2, crop, tmp_path, workers=1)
    np.testing.assert_array_equal(again, raw)
    assert labels_again == labels
