"""vision/training/train_classifier.py: the training patches cut in cached
blocks of scenes with their hidden masks, the synthetic occluders over part
of some faces and the blanked hidden parts (no PyTorch needed for these
parts)."""

import numpy as np

from vision.crops import CropSettings
from vision.training.dataset import LabelSettings, make_scene_samples
from vision.training.train_classifier import (DATA_VERSION, OCCLUDE_BAND, OCCLUDE_GAIN, _augment, _blank,
                                              _occlude, generate, generate_blocks)


def test_blocks_hold_the_scenes_of_one_run_and_are_cached_apart(tmp_path):
    crop = CropSettings()
    raw, labels, summary, hidden = generate_blocks(7, 3, 2, crop, tmp_path, workers=1)
    names = sorted(p.name for p in tmp_path.glob("*.npz"))
    assert names == [f"train-seed7-from2-n1-48x36-v{DATA_VERSION}.npz", f"train-seed7-n2-48x36-v{DATA_VERSION}.npz"]
    # the second block is scene 2 of seed 7, exactly as the dataset cuts it,
    # with its hidden masks
    r2, l2, _, h2 = make_scene_samples(7, 2, crop, LabelSettings(), masks=True)
    b2, bl2, s2, bh2 = generate(7, 1, crop, tmp_path, 1, "train", start=2)
    np.testing.assert_array_equal(b2, r2)
    np.testing.assert_array_equal(bh2, h2)
    assert bl2 == list(l2) and s2["scenes"] == 1
    assert summary["scenes"] == 3 and summary["patches"] == len(labels) == len(raw) == len(hidden)
    assert hidden.shape == (len(raw), 48, 36) and hidden.dtype == bool
    assert summary["partly_hidden"] == int(hidden.any(axis=(1, 2)).sum())
    np.testing.assert_array_equal(raw[-len(b2):], b2)
    # a longer run reuses the cached blocks (same arrays, read back)
    again, labels_again, _, hidden_again = generate_blocks(7, 3, 2, crop, tmp_path, workers=1)
    np.testing.assert_array_equal(again, raw)
    np.testing.assert_array_equal(hidden_again, hidden)
    assert labels_again == labels


def test_hidden_masks_change_no_patch_and_mark_some_windows_of_a_steep_view():
    from vision.synth import SceneSpec, render_scene
    from vision.training.dataset import builtin_layouts, scene_samples

    crop = CropSettings()
    layout = builtin_layouts(("turtle",))[0]
    spec = SceneSpec("mindful", layout, tilt_deg=(38.0, 40.0), hands=0.0)
    scene = render_scene(spec, np.random.default_rng(11))
    raw, labels, info = scene_samples(scene, np.random.default_rng(5), crop)
    raw_m, labels_m, info_m, hid = scene_samples(scene, np.random.default_rng(5), crop, masks=True)
    # the same patches and labels either way: the masks draw nothing
    np.testing.assert_array_equal(raw, raw_m)
    assert labels == labels_m and info == info_m
    assert hid.shape == (len(raw), crop.height, crop.width)
    # a steep view of a stacked layout: some windows partly hidden, not all
    part = hid.any(axis=(1, 2))
    assert 0 < part.sum() < len(raw)


def test_a_window_gets_the_mask_of_the_standing_taller_tiles_only_where_no_tile_covers_it():
    from types import SimpleNamespace

    from companion.layouts import Layout, Slot
    from vision.mat import MatSpec
    from vision.reconstruct import window_hidden_masks
    from vision.training.dataset import _hidden_masks

    spec, crop = MatSpec.default(), CropSettings()
    gx, gy = spec.grid_origin_mm
    # a row of three on layer 0, a tile on the middle one; C (4,0,0) seen from
    # low on the left, past the raised TOP (2,0,1), which hides about half of it
    layout = Layout("row-and-top", (Slot(0, 0, 0), Slot(2, 0, 0), Slot(4, 0, 0), Slot(2, 0, 1)), "test")
    pose = SimpleNamespace(camera_centre_mm=np.array([gx + 75.0 - 750.0, gy + 20.0, -1000.0]))
    present = np.array([True, True, True, True])
    covered = np.array([False, True, False, False])
    keep = [0, 1, 2, 3, 4]                   # the four slots and one virtual window (index 4 >= n)
    out = np.zeros((5, 48, 36), bool)
    _hidden_masks(out, keep, 4, layout, present, covered, spec, pose, crop)
    want = window_hidden_masks([(4, 0, 0)], [(2, 0, 1)], pose.camera_centre_mm, spec, crop)[0]
    assert 0.3 < want[4:44, 3:33].mean() < 0.8
    np.testing.assert_array_equal(out[2], want)
    # A in front of TOP (nothing hides it from there), B under TOP (covered),
    # TOP itself (nothing higher) and the virtual window: no mask
    assert not out[[0, 1, 3, 4]].any()
    # with TOP taken, nothing hides C
    out[:] = False
    _hidden_masks(out, keep, 4, layout, np.array([True, True, True, False]), np.zeros(4, bool), spec, pose, crop)
    assert not out.any()



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


def test_blanking_in_training_uses_the_real_masks_and_bands_along_one_side_of_other_faces():
    from vision.crops import blank_hidden

    x = _flat_patches(12)
    x[:, :, 18:] += 3                        # two tones per patch, so a blanked part is plain to see
    h, w = x.shape[1:3]
    hidden = np.zeros((12, h, w), bool)
    hidden[:4, 30:, :] = True                 # patches 0-3: a tile in front hides their lower rows
    faces = np.arange(12) < 8                 # 0-7 faces, 8-11 "none"
    out = x.copy()
    done = _blank(out, np.random.default_rng(3), hidden, faces, share=1.0, band_share=1.0)
    # every masked patch blanked by its own mask; every other face by a band;
    # no "none" patch without a mask
    np.testing.assert_array_equal(done, np.arange(12) < 8)
    np.testing.assert_array_equal(out[:4], blank_hidden(x[:4], hidden[:4]))
    np.testing.assert_array_equal(out[8:], x[8:])
    for i in range(4, 8):
        changed = (out[i] != x[i]).any(axis=2)
        rows, cols = changed.any(axis=1), changed.any(axis=0)
        band, n_max = (cols, w) if rows.all() else (rows, h)
        n = int(band.sum())
        assert band[:n].all() or band[len(band) - n:].all()               # along one side
        assert n <= OCCLUDE_BAND[1] * n_max + 1
    # with no share nothing is blanked, and _augment blanks only when given masks
    out = x.copy()
    assert not _blank(out, np.random.default_rng(3), hidden, faces, share=0.0, band_share=0.0).any()
    np.testing.assert_array_equal(out, x)


def test_quantize_refuses_a_classifier_trained_the_other_way(capsys):
    # tiles.onnx must be the plain classifier (the decision rules were fitted
    # to it) and tiles-blank.onnx the one trained on blanked windows
    import pytest

    from vision.faces import MODELS_DIR
    from vision.training.quantize import main

    plain, blank = MODELS_DIR / "tiles-fp32.onnx", MODELS_DIR / "tiles-blank-fp32.onnx"
    if not plain.exists() or not blank.exists():
        pytest.skip("the float classifiers are not bundled in this checkout")
    for argv, says in ((["--models", "tiles-blank", "--tiles-blank-fp32", str(plain)], "was not trained on blanked"),
                       (["--models", "tiles", "--tiles-fp32", str(blank)], "was trained on blanked"),
                       (["--models", "tiles-blank", "--tiles-blank-fp32", str(blank.with_suffix(".json"))],
                        "no float model")):
        with pytest.raises(SystemExit) as e:
            main(argv + ["--out", "/nonexistent-out"])
        assert e.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert "error:" in err[-1] and says in err[-1]     # argparse's usage, then the one-line reason
        assert not any("Traceback" in line for line in err)


def test_the_gpu_run_renders_a_prefix_of_the_same_scenes(tmp_path):
    # vision/training/train_gpu.py: scenes 0 .. K-1 of the seed, as
    # train_classifier cuts them (no PyTorch needed for this part)
    from vision.training.train_gpu import render_prefix
    crop = CropSettings()
    raw, labels, k = render_prefix(5, 2, 600.0, crop, workers=1, tmp=tmp_path, chunk=1, log=lambda s: None)
    r0, l0, _, _ = make_scene_samples(5, 0, crop, LabelSettings(), masks=True)
    r1, l1, _, _ = make_scene_samples(5, 1, crop, LabelSettings(), masks=True)
    assert k == 2 and labels == list(l0) + list(l1)
    np.testing.assert_array_equal(raw, np.concatenate([r0, r1]))
    assert not list(tmp_path.glob("*.npz"))          # the parts are removed once read


def test_the_gpu_augmentation_puts_one_band_of_another_patch_along_one_side_of_each_face():
    torch = __import__("pytest").importorskip("torch", reason="PyTorch is the optional train extra")
    from vision.training.train_gpu import augment_t
    h, w, n = 48, 36, 64
    # patch i a flat grey 40 + 3 i: a band of another patch differs from it
    x = torch.tensor(np.repeat(np.arange(40, 40 + 3 * n, 3, dtype=np.uint8), h * w * 3).reshape(n, h, w, 3))
    faces = torch.ones(n, dtype=torch.bool)
    faces[::2] = False
    gen = torch.Generator().manual_seed(3)
    out = augment_t(x, faces, gen, occlude=1.0, turn=0.0, gain=(1.0, 1.0), noise_sd=0.0).numpy()
    assert out.shape == (n, 3, h, w) and out.dtype == np.float32
    np.testing.assert_allclose(out.mean(axis=(2, 3)), 0.0, atol=1e-5)       # normalised per patch
    for i in range(n):
        img = out[i, 0]
        odd = ~np.isclose(img, np.median(img))
        if not faces[i]:
            assert not odd.any()                  # not a face: no band
            continue
        rows, cols = odd.any(axis=1), odd.any(axis=0)
        if rows.all():                            # a band of columns along the left or right side
            k = int(cols.sum())
            assert cols[:k].all() or cols[-k:].all()
            assert round(OCCLUDE_BAND[0] * w) <= k <= round(OCCLUDE_BAND[1] * w)
        else:                                     # a band of rows along the top or the bottom
            k = int(rows.sum())
            assert cols.all() and (rows[:k].all() or rows[-k:].all())
            assert round(OCCLUDE_BAND[0] * h) <= k <= round(OCCLUDE_BAND[1] * h)


def test_the_classifier_s_width_scales_its_stages():
    __import__("pytest").importorskip("torch", reason="PyTorch is the optional train extra")
    from vision.training.train_classifier import build_model
    crop = CropSettings()
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    # 16-32-64-96 channels, 3 x 3 after the pool, 155 classes; twice as wide: 32-64-128-192
    assert count(build_model(155, crop)) == 213_259
    assert count(build_model(155, crop, width=2)) == 583_035
