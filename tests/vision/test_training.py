"""vision/training/train_classifier.py: the training patches cut in cached
blocks of scenes, and the synthetic occluders over part of some faces (no
PyTorch needed for these parts)."""

import numpy as np

from vision.crops import CropSettings
from vision.training.dataset import LabelSettings, make_scene_samples
from vision.training.train_classifier import (DATA_VERSION, OCCLUDE_BAND, OCCLUDE_GAIN, _augment, _occlude,
                                              generate, generate_blocks)


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


def _flat_patches(n=40, h=48, w=36):
    """Patch i filled with the value 5 * (i + 1): where each pixel came from is plain."""
    return np.repeat((5 * np.arange(1, n + 1, dtype=np.uint8))[:, None, None, None], h * w * 3, 1).reshape(n, h, w, 3)


def test_an_occluder_is_a_band_of_another_patch_along_one_side_of_a_face():
    x = _flat_patches()
    h, w = x.shape[1:3]
    sides = set()
    for seed in range(40):
        rng = np.random.default_rng(seed)
        i = int(rng.integers(len(x)))
        faces = np.arange(len(x)) == i                   # one face; the others are "none"/"occluded"
        out = _occlude(x.copy(), rng, faces, share=1.0)
        np.testing.assert_array_equal(np.delete(out, i, 0), np.delete(x, i, 0))
        changed = out[i, :, :, 0] != x[i, :, :, 0]
        rows, cols = changed.any(axis=1), changed.any(axis=0)
        band, n_max = (cols, w) if rows.all() else (rows, h)
        n = int(band.sum())
        assert changed.sum() == n * (w if band is rows else h)         # whole rows or whole columns
        side = (band is cols, bool(band[0]))
        assert band[:n].all() if side[1] else band[len(band) - n:].all()   # along one side
        sides.add(side)
        assert OCCLUDE_BAND[0] * n_max - 1 <= n <= OCCLUDE_BAND[1] * n_max + 1
        # one other patch's value (5, 10, ... 200: far apart) times a gain in range
        v = np.unique(out[i][changed])
        assert len(v) == 1
        assert any(OCCLUDE_GAIN[0] * x[j, 0, 0, 0] - 1 <= v[0] <= OCCLUDE_GAIN[1] * x[j, 0, 0, 0] + 1
                   for j in range(len(x)) if j != i)
    assert len(sides) == 4                                # top, bottom, left and right all drawn


def test_no_occluder_without_faces_or_share():
    x = _flat_patches()
    np.testing.assert_array_equal(_occlude(x.copy(), np.random.default_rng(0), np.ones(len(x), bool), 0.0), x)
    np.testing.assert_array_equal(_occlude(x.copy(), np.random.default_rng(0), np.zeros(len(x), bool), 1.0), x)
    # _augment leaves its input alone and occludes only when told which patches are faces
    before = x.copy()
    _augment(x, np.random.default_rng(0), np.ones(len(x), bool), 1.0)
    np.testing.assert_array_equal(x, before)
