"""Marker detection: the batched side-line refinement and the half-size look.

Views are mat.png warped by a known camera (synthetic_views.py); ground truth
is ``cv2.projectPoints`` with that camera.  The refinement is checked against
a plain per-marker transcription of the same algorithm (loops over the sides,
``cv2.fitLine``) and against a square drawn at known corners; the half-size
look against the full-size one, which it must never find fewer markers than.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from synthetic_views import camera_matrix, look_at_pose, project, render_view

import vision.markers as markers
from companion.errors import BadInput
from vision.mat import aruco_dictionary
from vision.markers import detect_markers, refine_corners_batch, refine_marker_corners

SIZE = (1280, 960)
CENTRE = (297.0, 210.0, 0.0)
D = "DICT_4X4_50"


def _view(spec, mat_png, f, distance, tilt, yaw=7.0, azimuth=0.0):
    """``(image, truth)``: a view and the true corners ``{id: (4, 2) px}``."""
    K = camera_matrix(SIZE, f)
    rv, tv = look_at_pose(CENTRE, distance, tilt, yaw_deg=yaw, azimuth_deg=azimuth)
    objs = spec.marker_object_points()
    truth = {m.id: project(objs[(D, m.id)], K, rv, tv) for m in spec.markers}
    return render_view(mat_png, spec.px_per_mm, K, rv, tv, SIZE), truth


def _detector_corners(gray) -> np.ndarray:
    """The OpenCV detector's own corners ``(K, 4, 2)`` (before our refinement)."""
    det = cv2.aruco.ArucoDetector(aruco_dictionary(D), markers.detector_parameters())
    corners, ids, _ = det.detectMarkers(gray)
    return np.asarray(corners, np.float64).reshape(-1, 4, 2)


def _reference_refine(gray, corners, step=0.25):
    """The side-line refinement written marker by marker and side by side
    (as vision/markers.py had it before the batched form), with the line fit
    by ``cv2.fitLine`` on points centred first (``fitLine`` accumulates
    squares in float32, which costs up to 0.05 px at x ~ 1000 px)."""
    c = np.asarray(corners, np.float64).reshape(4, 2)
    area = 0.5 * float(np.sum(c[:, 0] * np.roll(c[:, 1], -1) - np.roll(c[:, 0], -1) * c[:, 1]))
    sign = 1.0 if area > 0 else -1.0
    module = np.mean([np.linalg.norm(c[(k + 1) % 4] - c[k]) for k in range(4)]) / 6.0
    r = float(np.clip(0.5 * module, 1.5, 4.0))
    offs = np.arange(-r, r + 1e-9, step)
    q = max(1, len(offs) // 5)
    img = gray.astype(np.float32)
    lines = []
    for k in range(4):
        p0, p1 = c[k], c[(k + 1) % 4]
        length = float(np.linalg.norm(p1 - p0))
        if length < 4:
            return c
        d = (p1 - p0) / length
        normal = sign * np.array([d[1], -d[0]])
        edge = []
        for t in np.linspace(0.12, 0.88, int(max(8, length / 1.5))):
            base = p0 + t * (p1 - p0)
            pts = base[None, :] + offs[:, None] * normal[None, :]
            mx, my = (pts[:, i].astype(np.float32).reshape(1, -1) for i in (0, 1))
            prof = cv2.remap(img, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).ravel()
            dark, light = prof[:q].mean(), prof[-q:].mean()
            mid = np.float32((dark + light) / 2)
            js = [j for j in range(len(offs) - 1) if prof[j] < mid <= prof[j + 1]]
            if light - dark < 20 or not js:
                continue
            j = min(js, key=lambda j: abs(offs[j]))
            s = offs[j] + (mid - prof[j]) / (prof[j + 1] - prof[j]) * step
            edge.append(base + s * normal)
        if len(edge) < 4:
            return c
        edge = np.array(edge)
        centre = edge.mean(axis=0)
        vx, vy, x0, y0 = cv2.fitLine((edge - centre).astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01).ravel()
        lines.append((centre + [x0, y0], np.array([vx, vy], np.float64)))
    out = np.empty((4, 2))
    for k in range(4):
        (a, u), (b, v) = lines[k - 1], lines[k]
        A = np.array([u, -v]).T
        if abs(np.linalg.det(A)) < 1e-6:
            return c
        out[k] = a + np.linalg.solve(A, b - a)[0] * u
    if np.max(np.linalg.norm(out - c, axis=1)) > max(2.0, module / 2):
        return c
    return out


# --------------------------------------------------------------------------- refinement

def test_batched_refinement_equals_the_per_marker_refinement(spec, mat_png):
    img, _ = _view(spec, mat_png, 1100.0, 650.0, 30.0, azimuth=20.0)
    gray = markers.as_gray(img)
    start = _detector_corners(gray)
    assert len(start) >= 10
    # also starts up to ~1.5 px off, and markers of different sizes in one batch
    shaken = start + np.random.default_rng(3).normal(0.0, 0.5, start.shape)
    for corners in (start, shaken):
        batch = refine_corners_batch(gray, corners)
        assert batch.shape == start.shape and batch.dtype == np.float64
        want = np.array([_reference_refine(gray, c) for c in corners])
        assert np.abs(batch - want).max() < 0.01
        assert not np.any(np.all(batch == corners, axis=(1, 2)))  # every marker refined
        # one marker at a time gives the same as all at once
        one = np.array([refine_marker_corners(gray, c) for c in corners])
        assert np.abs(one - batch).max() < 1e-4  # float32 sample positions differ in the last bits


def test_refinement_finds_the_corners_of_a_drawn_square():
    # a dark 48 x 48 px square rotated by 10 degrees, corners known: each
    # pixel's grey level is its area covered (8 x 8 samples at the sub-pixel
    # centres), as a camera's pixel averages the light falling on it
    a = np.radians(10.0)
    R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    truth = np.array([[-24.0, -24.0], [24.0, -24.0], [24.0, 24.0], [-24.0, 24.0]]) @ R.T + [60.3, 58.7]
    s = 8
    u = (np.arange(120 * s) + 0.5) / s - 0.5                          # sample positions, px
    x, y = np.meshgrid(u, u)
    inside = np.ones(x.shape, bool)
    for k in range(4):                                                # clockwise in the image
        (x0, y0), (x1, y1) = truth[k], truth[(k + 1) % 4]
        inside &= (x1 - x0) * (y - y0) - (y1 - y0) * (x - x0) >= 0
    big = np.where(inside, 20.0, 230.0)
    gray = np.round(big.reshape(120, s, 120, s).mean(axis=(1, 3))).astype(np.uint8)
    start = truth + np.array([[0.6, -0.4], [-0.5, 0.5], [0.4, 0.6], [-0.6, -0.3]])
    got = refine_marker_corners(gray, start)
    assert np.abs(got - truth).max() < 0.03
    assert np.abs(start - truth).max() > 0.5


def test_refinement_keeps_the_input_when_it_cannot_fit():
    gray = np.full((100, 100), 200, np.uint8)
    square = np.array([[30.0, 30.0], [60.0, 30.0], [60.0, 60.0], [30.0, 60.0]])
    # no edges at all (no contrast): unchanged
    np.testing.assert_array_equal(refine_marker_corners(gray, square), square)
    # a side shorter than 4 px, and a marker outside the image: unchanged
    tiny = np.array([[10.0, 10.0], [12.0, 10.0], [12.0, 12.0], [10.0, 12.0]])
    away = square + 500.0
    cv2.rectangle(gray, (30, 30), (60, 60), 10, -1)
    out = refine_corners_batch(gray, np.stack([tiny, away, square + [0.7, -0.5]]))
    np.testing.assert_array_equal(out[0], tiny)
    np.testing.assert_array_equal(out[1], away)
    assert np.abs(out[2] - square - [0.7, -0.5]).max() > 0.3  # the real square is refined
    # a start 6 px off a 24 px square (module 4 px: at most 2 px may move): unchanged
    gray = np.full((100, 100), 200, np.uint8)
    cv2.rectangle(gray, (40, 40), (63, 63), 10, -1)
    off = np.array([[46.0, 46.0], [70.0, 46.0], [70.0, 70.0], [46.0, 70.0]])
    np.testing.assert_array_equal(refine_marker_corners(gray, off), off)
    assert refine_corners_batch(gray, np.zeros((0, 4, 2))).shape == (0, 4, 2)


# --------------------------------------------------------------------------- half-size look

VIEWS = [  # f px, distance mm, tilt deg, yaw deg, azimuth deg: marker sides ~20-55 px
    (1100.0, 700.0, 0.0, 7.0, 0.0),
    (1100.0, 650.0, 20.0, 7.0, 30.0),
    (1100.0, 800.0, 40.0, -20.0, 10.0),
    (1000.0, 1300.0, 25.0, 30.0, 0.0),
    (1000.0, 1600.0, 15.0, 30.0, 0.0),
]


@pytest.mark.parametrize("view", VIEWS)
def test_half_size_look_finds_every_marker_the_full_size_look_finds(spec, mat_png, view):
    img, truth = _view(spec, mat_png, *view)
    gray = markers.as_gray(img)
    half = markers._detect_half(gray, spec)
    assert half is not None  # the half-size look was used, not the fallback
    full = markers._detect(gray, spec, 1)
    ids_half, corners_half = half[D]
    ids_full, corners_full = full[D]
    assert set(ids_full.tolist()) <= set(ids_half.tolist())
    assert len(ids_half) >= 11 and list(ids_half) == sorted(ids_half)
    err_half = [np.linalg.norm(c - truth[int(i)], axis=1).max() for i, c in zip(ids_half, corners_half)]
    err_full = [np.linalg.norm(c - truth[int(i)], axis=1).max() for i, c in zip(ids_full, corners_full)]
    assert max(err_half) < 0.3 and max(err_full) < 0.3
    # and the public entry point returns the half-size look's answer
    ids, corners = detect_markers(img, spec)
    np.testing.assert_array_equal(ids, ids_half)
    np.testing.assert_allclose(corners, corners_half)


def test_half_size_look_searches_only_small_regions_at_full_size(spec, mat_png, monkeypatch):
    img, _ = _view(spec, mat_png, 1000.0, 1300.0, 25.0, yaw=30.0)
    seen = []
    find = markers._find
    monkeypatch.setattr(markers, "_find", lambda gray, *a: seen.append(gray.shape) or find(gray, *a))
    ids, _ = detect_markers(img, spec)
    assert len(ids) == 12
    assert seen[0] == (480, 640)  # the half-size image first
    assert (960, 1280) not in seen  # never the whole photo at full size
    assert all(h * w < 100 * 100 for h, w in seen[1:])  # regions around the markers it missed


def test_hands_over_markers(spec, mat_png):
    img, truth = _view(spec, mat_png, 1100.0, 650.0, 20.0, azimuth=30.0)
    hand = img.copy()
    for i in (1, 8):  # skin-coloured blobs over two markers
        cx, cy = truth[i].mean(axis=0).astype(int)
        cv2.ellipse(hand, (int(cx), int(cy)), (60, 40), 30, 0, 360, (120, 160, 215), -1)
    gray = markers.as_gray(hand)
    half = markers._detect_half(gray, spec)
    full = markers._detect(gray, spec, 1)
    assert half is not None
    assert set(half[D][0].tolist()) == set(full[D][0].tolist()) == set(range(12)) - {1, 8, 10}
    for i, c in zip(*half[D]):
        assert np.linalg.norm(c - truth[int(i)], axis=1).max() < 0.3


def test_marker_with_a_stack_against_its_edge_is_left_to_the_full_size_look(spec):
    # six markers where one homography puts them, and one 3 px off it (as a
    # half-size outline that took a tile's edge for the marker's): that one is
    # not trusted; with fewer than 4 markers nothing can be judged
    objs = spec.marker_object_points()
    H = np.array([[2.0, 0.1, 50.0], [-0.05, 1.9, 40.0], [1e-4, 2e-4, 1.0]])
    found = {(D, i): cv2.perspectiveTransform(objs[(D, i)][:, :2].reshape(-1, 1, 2), H).reshape(4, 2)
             for i in (0, 2, 4, 6, 8, 10)}
    found[(D, 4)] = found[(D, 4)] + [[0, 0], [0, 0], [0, 3.0], [0, 3.0]]
    kept, fitted = markers._agreeing(found, objs)
    assert set(kept) == {(D, i) for i in (0, 2, 6, 8, 10)}
    np.testing.assert_allclose(fitted / fitted[2, 2], H, rtol=1e-6, atol=1e-9)
    few = {k: found[k] for k in [(D, 0), (D, 4), (D, 8)]}
    assert set(markers._agreeing(few, objs)[0]) == set(few)


def test_small_photo_skips_the_half_size_look(spec, mat_png):
    img, _ = _view(spec, mat_png, 1100.0, 650.0, 20.0)
    small = cv2.resize(img, (620, 465), interpolation=cv2.INTER_AREA)
    assert markers._detect_half(markers.as_gray(small), spec) is None
    ids, corners = detect_markers(small, spec)
    assert len(ids) >= 10 and corners.shape == (len(ids), 4, 2)


def test_not_an_image_is_bad_input(spec):
    with pytest.raises(BadInput):
        detect_markers(np.zeros((10, 10), np.float32), spec)


def _whole_photo_look(gray, spec, monkeypatch):
    """The markers of the whole-photo path alone (1x, then 2x and sharpened
    while fewer than 4), as before the half-size look existed."""
    with monkeypatch.context() as m:
        m.setattr(markers, "_detect_half", lambda *a: None)
        return markers.detect_markers_by_dictionary(gray, spec)[D][0]


def _distorted(img, K, dist):
    """``img`` as a lens with distortion ``dist`` (OpenCV's model) would see it."""
    h, w = img.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    # for every output pixel, where its ray lands in the distortion-free image
    und = cv2.undistortPoints(np.stack([xs, ys], -1).reshape(-1, 1, 2), K, dist, P=K).reshape(h, w, 2)
    return cv2.remap(img, und[..., 0], und[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                     borderValue=(90, 110, 130))


@pytest.mark.parametrize("k1", [-0.45, 0.2])
def test_strong_lens_distortion_loses_no_marker(spec, mat_png, monkeypatch, k1):
    # a plane homography bends away from the mat seen through a strong lens:
    # the markers it predicts at the mat's corners lie far off, so their
    # regions are grown when fewer than 4 markers agree with it
    img, _ = _view(spec, mat_png, 800.0, 560.0, 20.0, yaw=5.0, azimuth=15.0)
    K = camera_matrix(SIZE, 800.0)
    gray = markers.as_gray(_distorted(img, K, np.array([k1, 0.0, 0.0, 0.0, 0.0])))
    whole = _whole_photo_look(gray, spec, monkeypatch)
    ids, _ = detect_markers(gray, spec)
    assert len(whole) >= 8
    assert set(whole.tolist()) <= set(ids.tolist())


def test_blurred_markers_are_found_in_their_regions_through_an_unsharp_mask(spec, mat_png, monkeypatch):
    # the half-size look finds 2 of these markers; the full-size regions
    # around the others decode only through the unsharp mask
    img, truth = _view(spec, mat_png, 1000.0, 1300.0, 25.0, yaw=30.0)
    gray = markers.as_gray(cv2.GaussianBlur(img, (0, 0), 2.0))
    whole = _whole_photo_look(gray, spec, monkeypatch)
    ids, corners = detect_markers(gray, spec)
    assert len(whole) >= 7
    assert set(whole.tolist()) <= set(ids.tolist())
    for i, c in zip(ids, corners):
        assert np.linalg.norm(c - truth[int(i)], axis=1).max() < 1.0


def test_two_mats_in_the_picture_read_the_one_nearer_the_centre():
    # a break-test's photo of two tables side by side was read on whichever
    # mat the homography met first (its markers' ids are the same): the mat
    # nearer the picture's centre is read, and the pose says another showed
    from companion import codex
    from vision.mat import MatSpec
    from vision.pose import estimate_pose
    from vision.reconstruct import recognize
    from vision.synth import SceneSpec, render_scene

    spec = MatSpec.default()
    own = render_scene(SceneSpec("love", codex.builtin("sprint-flat"), tilt_deg=(20, 20)), np.random.default_rng(4))
    other = render_scene(SceneSpec("mindful", codex.builtin("sprint-flat"), tilt_deg=(20, 20)),
                         np.random.default_rng(5))
    h, w = own.image.shape[:2]
    canvas = np.full((h, 2 * w, 3), 90, np.uint8)
    canvas[:, w // 2:w // 2 + w] = own.image                           # the own table in the middle
    canvas[h // 4:h // 4 + h // 2, :w // 2] = cv2.resize(other.image, (w // 2, h // 2))   # the next one, far left
    alone = estimate_pose(own.image, spec)
    pose = estimate_pose(canvas, spec)
    assert pose.other_mat and not alone.other_mat
    # the own mat's markers, where the own picture put them (shifted by w/2)
    shift = np.array([w // 2, 0])
    assert pose.n_markers >= alone.n_markers - 1
    assert np.abs(pose.image_points.mean(axis=0) - (alone.image_points.mean(axis=0) + shift)).max() < 30
    rec = recognize(canvas, "love", codex.builtin("sprint-flat"))
    read_alone = recognize(own.image, "love", codex.builtin("sprint-flat"))
    same = sum(a.present == b.present and a.face == b.face for a, b in zip(rec.tiles, read_alone.tiles))
    assert same >= len(rec.tiles) - 2
    assert rec.advice[0] == ("a second mat is in the picture (a marker read twice): the one nearer the centre was "
                             "read; frame only your own table")
    # without a repeated id, nothing is dropped
    keys = [("d", 0), ("d", 1), ("d", 2), ("d", 3)]
    assert markers.nearer_mat(keys, np.zeros((4, 4, 2)), {}, (640, 480)) == ([0, 1, 2, 3], False)
