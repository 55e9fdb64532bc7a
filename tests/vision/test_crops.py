"""vision/crops.py: the shared crop-and-normalise function."""

import math

import cv2
import numpy as np
import pytest

from vision.crops import (CropSettings, extract_patches, extract_raw, normalise, sampling_maps, sampling_maps_xy,
                          square_to_quad)
from vision.mat import MatSpec
from vision.pose import Camera, MatPose, project_slot_faces


def test_square_to_quad_maps_the_corners():
    q = np.array([[[10, 20], [50, 25], [55, 80], [8, 70]]], float)
    H = square_to_quad(q)[0]
    for (u, v), want in zip([(0, 0), (1, 0), (1, 1), (0, 1)], q[0]):
        p = H @ (u, v, 1)
        assert np.allclose(p[:2] / p[2], want)
    # agrees with OpenCV's perspective transform on an inner point
    M = cv2.getPerspectiveTransform(np.float32([[0, 0], [1, 0], [1, 1], [0, 1]]), q[0].astype(np.float32))
    p, r = M @ (0.3, 0.7, 1), H @ (0.3, 0.7, 1)
    assert np.allclose(p[:2] / p[2], r[:2] / r[2])


def test_axis_aligned_quad_samples_the_right_pixels():
    # a 30 x 40 px face at (100, 50): with margin 0 and a 40 x 30 patch each patch
    # pixel centre lands on an image pixel centre
    s = CropSettings(height=40, width=30, margin=0.0, prefilter_above=99)
    img = np.zeros((200, 300, 3), np.uint8)
    img[..., 0] = np.arange(300)[None, :] % 256
    img[..., 1] = np.arange(200)[:, None]
    q = np.array([[[99.5, 49.5], [129.5, 49.5], [129.5, 89.5], [99.5, 89.5]]], np.float32)
    raw = extract_raw(img, q, s)
    assert raw.shape == (1, 40, 30, 3)
    assert np.array_equal(raw[0], img[50:90, 100:130])


def _scene(tilt_deg: float = 25.0):
    """A synthetic photo of the default mat with a distinct colour on each of
    three slot faces (two on layer 0, one on layer 1), and its true pose."""
    spec = MatSpec.default()
    w, h = 1280, 720
    f = 1000.0
    cam = Camera(np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]]), np.zeros(5), (w, h))
    t = math.radians(tilt_deg)
    R = cv2.Rodrigues(np.array([-t, 0.0, 0.0]))[0]
    centre_mm = np.array([297.0, 210.0 + 700 * math.sin(t), -700 * math.cos(t)])
    tvec = -R @ centre_mm
    pose = MatPose(cv2.Rodrigues(R)[0], tvec, cam, 0.0, 0)
    slots = [(4, 4, 0), (20, 8, 0), (12, 2, 1)]
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
    quads = project_slot_faces(slots, spec, pose)
    img = np.full((h, w, 3), 128, np.uint8)
    for q, c in zip(quads, colours):
        cv2.fillConvexPoly(img, np.round(q * 16).astype(np.int32), c, cv2.LINE_AA, shift=4)
    return img, spec, pose, slots, colours


def test_crops_of_a_scene_at_known_pose_land_on_the_faces():
    img, spec, pose, slots, colours = _scene()
    s = CropSettings()
    quads = project_slot_faces(slots, spec, pose)
    raw = extract_raw(img, quads, s)
    assert raw.shape == (3, s.height, s.width, 3)
    mh, mw = int(s.height * s.margin / (1 + 2 * s.margin)) + 2, int(s.width * s.margin / (1 + 2 * s.margin)) + 2
    for patch, colour in zip(raw, colours):
        inner = patch[mh:-mh, mw:-mw].reshape(-1, 3).astype(int)
        assert np.abs(inner - colour).max() <= 2        # the whole face area is the face's colour
        border = np.concatenate([patch[0], patch[-1], patch[:, 0], patch[:, -1]]).astype(int)
        assert np.abs(border - 128).max() <= 2          # the margin shows the surroundings


def test_wrong_height_crop_is_offset_in_a_tilted_view():
    img, spec, pose, slots, colours = _scene(30.0)
    s = CropSettings()
    low = project_slot_faces([(12, 2, 0)], spec, pose)   # under the layer-1 face
    patch = extract_raw(img, low, s)[0].astype(int)
    frac = (np.abs(patch - colours[2]).max(axis=2) <= 2).mean()
    assert 0.2 < frac < 0.75           # the layer-1 face only partly fills the layer-0 window


def test_normalise_shapes_and_statistics():
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, (5, 48, 36, 3), dtype=np.uint8)
    x = normalise(raw)
    assert x.shape == (5, 3, 48, 36) and x.dtype == np.float32
    assert np.allclose(x.mean(axis=(2, 3)), 0, atol=1e-4)
    assert np.allclose(np.sqrt((x ** 2).mean(axis=(1, 2, 3))), 1, atol=1e-3)
    flat = np.full((1, 48, 36, 3), 200, np.uint8)
    flat[0, 0, 0] = 210
    assert np.abs(normalise(flat)).max() < 1.0           # the std floor keeps flat patches flat
    # a brightness change does not change the normalised patch
    dim = (raw.astype(np.float32) * 0.5).astype(np.uint8)
    assert np.abs(normalise(dim) - x).mean() < 0.05


def test_extract_patches_batches_and_empty_input():
    img, spec, pose, slots, _ = _scene()
    quads = project_slot_faces(slots, spec, pose)
    one_by_one = np.concatenate([extract_patches(img, quads[i:i + 1]) for i in range(3)])
    assert np.allclose(extract_patches(img, quads), one_by_one)
    assert extract_patches(img, np.zeros((0, 4, 2), np.float32)).shape == (0, 3, 48, 36)
    assert sampling_maps(quads).shape == (3 * 48, 36, 2)


def test_more_patches_than_one_remap_can_hold():
    # cv2.remap writes at most 32767 rows: 800 patches of 48 rows are cut in
    # several calls, each patch the same as when cut alone
    rng = np.random.default_rng(2)
    img = rng.integers(0, 256, (200, 300, 3), dtype=np.uint8)
    x0 = rng.uniform(0, 250, 800)
    y0 = rng.uniform(0, 150, 800)
    quads = np.stack([np.stack([x0, y0], 1), np.stack([x0 + 30, y0], 1), np.stack([x0 + 30, y0 + 40], 1),
                      np.stack([x0, y0 + 40], 1)], 1).astype(np.float32)
    raw = extract_raw(img, quads)
    assert raw.shape == (800, 48, 36, 3)
    for k in (0, 681, 682, 799):
        np.testing.assert_array_equal(raw[k], extract_raw(img, quads[k:k + 1])[0])


def test_sampling_maps_of_an_upright_rectangle_by_hand():
    # a face 36 px wide and 48 px tall with its top-left corner at (10, 20):
    # the patch's 36 x 48 grid (margin 0.1) samples pixel centres u = (j +
    # 0.5) / 36 * 1.2 - 0.1 across and v = (i + 0.5) / 48 * 1.2 - 0.1 down,
    # so x = 10 + 36 u = 7.0 + 1.2 j and y = 20 + 48 v = 15.8 + 1.2 i
    quad = np.array([[[10, 20], [46, 20], [46, 68], [10, 68]]], np.float32)
    mx, my = sampling_maps_xy(quad, CropSettings(margin=0.1))
    assert mx.shape == my.shape == (48, 36) and mx.dtype == my.dtype == np.float32
    np.testing.assert_allclose(mx[0, :3], [7.0, 8.2, 9.4], atol=1e-4)
    np.testing.assert_allclose(mx[:, 5], 13.0, atol=1e-4)
    np.testing.assert_allclose(my[:3, 0], [15.8, 17.0, 18.2], atol=1e-4)
    np.testing.assert_allclose(my[47], 15.8 + 1.2 * 47, atol=1e-4)
    # after a pyrDown (scale 0.5) the same pixel centres in the half image
    hx, hy = sampling_maps_xy(quad, CropSettings(margin=0.1), scale=0.5)
    np.testing.assert_allclose(hx, (mx + 0.5) * 0.5 - 0.5, atol=1e-4)
    np.testing.assert_allclose(hy, (my + 0.5) * 0.5 - 0.5, atol=1e-4)
    # the interleaved form is the same grid
    np.testing.assert_array_equal(sampling_maps(quad, CropSettings(margin=0.1)), np.stack([mx, my], axis=-1))


def test_sampling_maps_of_a_degenerate_quad_stay_finite():
    # a "face" whose corners cross (a pose gone wrong): the homography's
    # denominator changes sign inside the patch; the maps stay finite and
    # remap samples the border instead of failing
    quad = np.array([[[0, 0], [40, 40], [40, 0], [0, 40]]], np.float32)
    mx, my = sampling_maps_xy(quad)
    assert np.isfinite(mx).all() and np.isfinite(my).all()
    img = np.full((60, 60, 3), 7, np.uint8)
    assert (extract_raw(img, quad) == 7).all()


def test_blanking_gives_the_hidden_part_the_mean_colour_of_the_part_in_sight():
    from vision.crops import blank_hidden

    raw = np.zeros((3, 4, 6, 3), np.uint8)
    raw[:, :, :3] = (10, 20, 30)          # left half
    raw[:, :, 3:] = (200, 100, 50)        # right half: the part a tile in front hides
    raw[0, 0, 0] = (14, 24, 34)           # one brighter pixel in sight
    hidden = np.zeros((3, 4, 6), bool)
    hidden[0, :, 3:] = True
    hidden[1] = True                      # all hidden: nothing left to take a colour from
    out = blank_hidden(raw, hidden)
    # patch 0: mean of the 12 pixels in sight, (10 * 11 + 14) / 12 = 10.33 -> 10, 20.33 -> 20, 30.33 -> 30
    assert (out[0, :, 3:] == (10, 20, 30)).all()
    np.testing.assert_array_equal(out[0, :, :3], raw[0, :, :3])
    # wholly hidden and not hidden at all: as they were; the input is not changed
    np.testing.assert_array_equal(out[1:], raw[1:])
    assert (raw[0, :, 3:] == (200, 100, 50)).all()
    # normalised (std floored at 12 grey levels), the blanked part sits at the
    # patch's mean: channel 0's mean is (23 * 10 + 14) / 24 = 10.167, so the
    # blanked pixels read (10 - 10.167) / 12 = -0.014 and the bright one
    # (14 - 10.167) / 12 = 0.319
    x = normalise(out[:1])
    np.testing.assert_allclose(x[0, 0, :, 3:], -0.1667 / 12, atol=1e-4)
    assert x[0, 0, 0, 0] == pytest.approx(3.8333 / 12, abs=1e-4)
    # a mask of another shape or kind, or patches that are not uint8 BGR, are refused
    for bad_raw, bad_hidden in ((raw, hidden.transpose(0, 2, 1)), (raw, hidden.astype(float)),
                                (raw.astype(np.float32), hidden), (raw[..., 0], hidden[..., 0])):
        with pytest.raises(ValueError):
            blank_hidden(bad_raw, bad_hidden)
