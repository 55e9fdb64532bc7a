"""vision/artcheck.py: unsure faces looked at again against the print art."""

import math

import cv2
import numpy as np
import pytest

from companion.layouts import Layout, Slot
from tests.vision.synthetic_views import printed_faces_view
from vision.artcheck import (ART_PX_PER_MM, art_scores, art_template, check_faces, core_mask, face_window,
                             reweigh, tile_angle, unsure_faces, visible_region, window_points_mm)


def _window_of(face_id: str, variant: str = "mindful", angle_deg: float = 0.0, turned: bool = False,
               shift_px=(0, 0), blur: float = 0.0, seed: int = 0) -> np.ndarray:
    """The art of one face as a face window would show it: on an ivory
    surround 4.5 mm wide, turned by ``angle_deg``, shifted, blurred, noisy."""
    art = art_template(variant, face_id).copy()
    if turned:
        art = art[::-1, ::-1].copy()
    m = int(round(4.5 * ART_PX_PER_MM))
    win = np.full((art.shape[0] + 2 * m, art.shape[1] + 2 * m), 215.0, np.float32)
    win[m:m + art.shape[0], m:m + art.shape[1]] = art
    h, w = win.shape
    M = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), -angle_deg, 1.0)   # +angle: x towards y (down)
    M[:, 2] += shift_px
    win = cv2.warpAffine(win, M, (w, h), flags=cv2.INTER_LINEAR, borderValue=215.0)
    if blur:
        win = cv2.GaussianBlur(win, (0, 0), blur)
    return win + np.random.default_rng(seed).normal(0, 3, win.shape).astype(np.float32)


@pytest.mark.parametrize("face", ["circles-5", "bamboo-3", "characters-3"])
@pytest.mark.parametrize("angle", [-5.0, -2.0, 0.0, 3.0, 6.0])
def test_tile_angle_reads_the_turn_of_the_art(face, angle):
    got = math.degrees(tile_angle(_window_of(face, angle_deg=angle)))
    assert got == pytest.approx(angle, abs=0.8)


def test_tile_angle_is_clipped_to_a_tile_on_its_slot():
    # a window turned 30 degrees is read within +-8 degrees (MAX_ANGLE_DEG)
    assert abs(math.degrees(tile_angle(_window_of("bamboo-3", angle_deg=30.0)))) <= 8.0 + 1e-9


@pytest.mark.parametrize("truth,other", [("circles-5", "circles-6"), ("bamboo-7", "bamboo-8"),
                                         ("characters-3", "characters-2")])
def test_the_right_art_correlates_best_even_blurred_shifted_and_turned(truth, other):
    for turned in (False, True):
        win = _window_of(truth, angle_deg=0.0, turned=turned, shift_px=(3, -2), blur=1.0)
        sc = art_scores(win, "mindful", [truth, other])
        assert sc[0] > 0.8 and sc[0] > sc[1] + 0.05


def test_art_scores_refuse_a_window_smaller_than_the_art():
    with pytest.raises(ValueError, match="smaller than the art"):
        art_scores(np.zeros((20, 20), np.float32), "mindful", ["circles-5"])


def test_reweigh_by_hand():
    # 0.3 and 0.2 with correlations 0.5 and 0.7, weight 10: the odds of the
    # second become (0.2 / 0.3) e^(10 x 0.2) = 4.926; the mass 0.5 is kept
    out = reweigh(np.array([0.3, 0.2]), np.array([0.5, 0.7]), 10.0)
    assert out.sum() == pytest.approx(0.5)
    assert out[1] / out[0] == pytest.approx((0.2 / 0.3) * math.exp(2.0))
    assert out[0] == pytest.approx(0.5 / (1 + 4.926), abs=1e-3)
    # weight 0 changes nothing
    assert reweigh(np.array([0.3, 0.2]), np.array([0.5, 0.7]), 0.0) == pytest.approx([0.3, 0.2])


def test_unsure_faces_are_those_whose_best_face_holds_little_of_the_mass():
    fp = np.array([[0.5, 0.4, 0.1],      # best 0.5 of 1.0: unsure
                   [0.9, 0.05, 0.05],    # sure
                   [0.0, 0.0, 0.0],      # no face mass at all
                   [0.2, 0.05, 0.05]])   # best 0.2 of 0.3 = 0.67: sure at 0.6
    assert unsure_faces(fp, range(4), 0.6) == [0]
    assert unsure_faces(fp, [1, 3], 0.7) == [3]


@pytest.fixture(scope="module")
def flat_scene():
    """Six tiles on the mat, looked at from 20 degrees, no photographic effects
    but tiles off their slots and turned a few degrees."""
    from vision.synth import SceneSpec, render_scene
    from vision.synth.scene import Augment
    slots = tuple(Slot(2 * i + 10, 6, 0) for i in range(3)) + tuple(Slot(2 * i + 10, 9, 0) for i in range(3))
    layout = Layout("six", slots, "test")
    faces = ("circles-5", "circles-6", "bamboo-7", "bamboo-8", "characters-2", "characters-3")
    aug = Augment(jitter_mm=2.0, jitter_deg=3.0, flip=0.5, lighting=0, shadows=0, glare=0, blur=0, noise=0, jpeg=0)
    scene = render_scene(SceneSpec("mindful", layout, faces=faces, n_removed=0, tilt_deg=(20.0, 20.0),
                                   augment=aug), np.random.default_rng(3))
    return layout, faces, scene


def test_face_window_rectifies_the_slot_at_its_height(flat_scene):
    from vision.mat import MatSpec
    layout, faces, scene = flat_scene
    win = face_window(scene.image, layout.slots[0], MatSpec.default(), scene.truth.pose())
    m = 4.5 * ART_PX_PER_MM
    assert win.shape == (round((40 + 9) * ART_PX_PER_MM), round((30 + 9) * ART_PX_PER_MM))
    assert win.dtype == np.float32
    # the art of the face dealt there is found in it, near the middle (the
    # tile is at most 2 mm off its slot)
    t = art_template("mindful", faces[0])
    r0 = cv2.matchTemplate(win, np.ascontiguousarray(t), cv2.TM_CCOEFF_NORMED)
    r1 = cv2.matchTemplate(win, np.ascontiguousarray(t[::-1, ::-1]), cv2.TM_CCOEFF_NORMED)
    r = np.maximum(r0, r1)
    y, x = np.unravel_index(np.argmax(r), r.shape)
    assert r.max() > 0.6
    assert abs(x - m) <= 2.5 * ART_PX_PER_MM and abs(y - m) <= 2.5 * ART_PX_PER_MM


def test_check_faces_settles_ties_between_look_alikes_on_a_rendered_scene(flat_scene):
    from companion.tiles import tileset
    from vision.mat import MatSpec
    layout, faces, scene = flat_scene
    labels = [f.id for f in tileset("mindful").faces]
    # each slot torn between its own face and its look-alike, the wrong one ahead
    twin = {"circles-5": "circles-6", "circles-6": "circles-5", "bamboo-7": "bamboo-8", "bamboo-8": "bamboo-7",
            "characters-2": "characters-3", "characters-3": "characters-2"}
    fp = np.full((len(faces), len(labels)), 0.001)
    for i, f in enumerate(faces):
        fp[i, labels.index(twin[f])] = 0.45
        fp[i, labels.index(f)] = 0.40
    out = check_faces(scene.image, "mindful", layout.slots, fp, labels, MatSpec.default(), scene.truth.pose())
    assert out.sum(axis=1) == pytest.approx(fp.sum(axis=1))
    assert [labels[int(np.argmax(row))] for row in out] == list(faces)


def test_core_mask_is_the_face_less_its_inset():
    from vision.mat import MatSpec
    spec = MatSpec.default()
    shape = (round(49 * ART_PX_PER_MM), round(39 * ART_PX_PER_MM))       # 98 x 78 at 2 px/mm
    core = core_mask(shape, spec)
    # the face (30 x 40 mm) less 3.5 mm a side: 23 x 33 mm = 46 x 66 px, centred
    assert core.sum() == 46 * 66
    rows, cols = np.nonzero(core)
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (16, 81, 16, 61)


def test_window_points_follow_the_slot_and_the_turn():
    from vision.mat import MatSpec, slot_face_corners_mm
    spec = MatSpec.default()
    slot = (10, 6, 0)
    centre = slot_face_corners_mm([slot], spec)[0, :, :2].mean(axis=0)
    pts = window_points_mm(slot, spec)
    assert pts.shape == (98, 78, 2)
    # pixel (0, 0) is a quarter mm (half a pixel) inside the window's corner
    assert pts[0, 0] == pytest.approx(centre + [-19.5 + 0.25, -24.5 + 0.25])
    assert pts[48:50, 38:40].reshape(-1, 2).mean(axis=0) == pytest.approx(centre)
    # turned 90 degrees, the window's x axis runs along the mat's y
    turned = window_points_mm(slot, spec, angle=math.pi / 2)
    assert turned[49, 60] - turned[49, 38] == pytest.approx([0.0, 11.0], abs=1e-9)


def test_visible_region_is_the_largest_band_of_the_core_in_full_sight():
    core = np.zeros((10, 8), bool)
    core[2:8, 1:7] = True                        # a 6 x 6 core
    seen = core.copy()
    seen[6:, :] = False                          # a strip hidden along the bottom
    assert visible_region(seen, core) == (2, 6, 1, 7)
    seen = core.copy()
    seen[:, :3] = False                          # a wider strip along the left
    assert visible_region(seen, core) == (2, 8, 3, 7)
    seen = core.copy()
    seen[4, 4] = False                           # a hole: the larger band beside it
    assert visible_region(seen, core) in ((2, 8, 5, 7), (5, 8, 1, 7), (2, 4, 1, 7))
    assert visible_region(np.zeros_like(core), core) is None


def test_a_region_compares_only_the_part_of_a_face_in_sight():
    # characters-3 and characters-5 differ in their numeral (top half) and share
    # the character below it; the lower half here is hidden by another tile's
    # face (bamboo-7) standing in front
    win = _window_of("characters-3", shift_px=(2, 1), blur=0.8)
    other = art_template("mindful", "bamboo-7")
    h = win.shape[0]
    win[h // 2:, :] = other.mean() + 0.9 * (cv2.resize(other, (win.shape[1], h))[h // 2:] - other.mean())
    from vision.mat import MatSpec
    core = core_mask(win.shape, MatSpec.default())
    seen = core.copy()
    seen[h // 2 - 2:, :] = False
    region = visible_region(seen, core)
    assert region == (16, h // 2 - 2, 16, 62)
    plain = art_scores(win, "mindful", ["characters-3", "characters-5"])
    part = art_scores(win, "mindful", ["characters-3", "characters-5"], region=region)
    assert part[0] > 0.8 and part[0] > part[1] + 0.05
    assert part[0] - part[1] > plain[0] - plain[1]


def _torn_at_slot_0():
    """Mindful's face ids and one row of face probabilities torn between
    circles-6 (0.45) and circles-5 (0.40, the face dealt at the flat scene's
    slot 0)."""
    from companion.tiles import tileset
    labels = [f.id for f in tileset("mindful").faces]
    fp = np.full((1, len(labels)), 0.001)
    fp[0, labels.index("circles-6")] = 0.45
    fp[0, labels.index("circles-5")] = 0.40
    return labels, fp


def test_check_faces_leaves_a_face_hidden_whole_by_a_tile_in_front(flat_scene):
    from vision.mat import MatSpec
    layout, faces, scene = flat_scene
    labels, fp = _torn_at_slot_0()
    spec, pose = MatSpec.default(), scene.truth.pose()
    s = layout.slots[0]
    # a tile standing right over it (one layer up) hides its whole face: unchanged
    over = check_faces(scene.image, "mindful", [s], fp, labels, spec, pose, occluders=[[Slot(s.x, s.y, 1)]])
    assert over == pytest.approx(fp)
    # nothing in front: the art settles it
    free = check_faces(scene.image, "mindful", [s], fp, labels, spec, pose, occluders=[[]])
    assert labels[int(np.argmax(free[0]))] == "circles-5"


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_height_evidence_tells_a_top_tile_from_the_face_below_seen_straight_down(seed):
    from vision.artcheck import height_evidence
    from vision.mat import MatSpec
    from vision.synth import SceneSpec, render_scene
    from vision.synth.scene import Augment
    # two stacks of two near the middle of the mat, the camera right above (no
    # parallax to speak of: only the size tells the heights apart)
    slots = (Slot(14, 6, 0), Slot(14, 6, 1), Slot(18, 6, 0), Slot(18, 6, 1))
    layout = Layout("two-stacks", slots, "test")
    faces = ("circles-5", "bamboo-7", "characters-3", "circles-8")
    aug = Augment(jitter_mm=2.0, jitter_deg=3.0, flip=0.5, lighting=0, shadows=0, glare=0, blur=0, noise=0, jpeg=0)
    spec = MatSpec.default()
    for removed in ((), (slots[1], slots[3])):
        scene = render_scene(SceneSpec("mindful", layout, faces=faces, removed=removed, tilt_deg=(0.0, 0.0),
                                       fill=(0.9, 0.95), augment=aug), np.random.default_rng(seed))
        pose = scene.truth.pose()
        assert pose.tilt_deg < 0.5
        for top in (1, 3):
            seen_face = faces[top] if not removed else faces[top - 1]
            ev = height_evidence(scene.image, "mindful", slots[top], seen_face, spec, pose)
            if removed:
                assert ev < -0.03           # the face below, 20 mm lower: smaller
            else:
                assert ev > 0.01            # the top tile's own face, at its height


def test_height_evidence_is_silent_when_the_camera_is_no_higher_than_the_tiles():
    from types import SimpleNamespace

    from vision.artcheck import height_evidence
    from vision.mat import MatSpec
    low = SimpleNamespace(camera_centre_mm=np.array([100.0, 100.0, -50.0]))     # 50 mm above the mat
    assert height_evidence(np.zeros((720, 1280, 3), np.uint8), "mindful", (4, 4, 1), "circles-5",
                           MatSpec.default(), low) == 0.0


def test_degenerate_inputs_give_empty_answers_not_errors():
    from vision.mat import MatSpec
    assert check_faces(np.zeros((10, 10, 3), np.uint8), "mindful", [], np.zeros((0, 42)), ["x"] * 42,
                       MatSpec.default(), None).shape == (0, 42)
    assert reweigh(np.zeros(0), np.zeros(0), 10.0).shape == (0,)
    assert visible_region(np.zeros((6, 6), bool), np.zeros((6, 6), bool)) is None
    with pytest.raises(ValueError, match="empty region"):
        art_scores(_window_of("circles-5"), "mindful", ["circles-5"], region=(10, 10, 5, 40))
    # a window of another dtype is read as float32
    win = _window_of("circles-5")
    assert art_scores(win.astype(np.uint8), "mindful", ["circles-5"])[0] == pytest.approx(
        art_scores(np.clip(win, 0, 255).astype(np.uint8).astype(np.float32), "mindful", ["circles-5"])[0])


def test_noise_level_correlations_leave_the_classifier_reading_alone(flat_scene):
    from vision.mat import MatSpec
    layout, faces, scene = flat_scene
    labels, fp = _torn_at_slot_0()
    noise = np.random.default_rng(0).integers(0, 256, scene.image.shape, dtype=np.uint8)   # no face to see
    out = check_faces(noise, "mindful", [layout.slots[0]], fp, labels, MatSpec.default(), scene.truth.pose())
    assert out == pytest.approx(fp)
    # the same correlations, counted, would move the row
    moved = check_faces(noise, "mindful", [layout.slots[0]], fp, labels, MatSpec.default(), scene.truth.pose(),
                        min_score=-1.0)
    assert np.abs(moved - fp).max() > 0.01


def test_a_grey_photo_gives_the_same_window_as_the_colour_one(flat_scene):
    from vision.artcheck import grey_of
    from vision.mat import MatSpec
    layout, faces, scene = flat_scene
    spec, pose = MatSpec.default(), scene.truth.pose()
    colour = face_window(scene.image, layout.slots[2], spec, pose, angle=0.03)
    grey = face_window(grey_of(scene.image), layout.slots[2], spec, pose, angle=0.03)
    assert grey.shape == colour.shape
    assert np.abs(grey - colour).max() <= 2.0          # interpolation before or after the conversion


@pytest.mark.parametrize("shrink", [1.0, 0.95])
def test_face_scale_reads_how_large_the_faces_are_printed(shrink):
    from vision.artcheck import face_scale
    grey, slots, faces, pose, spec = printed_faces_view(shrink, tilt_deg=10.0)
    fits = [face_scale(grey, "mindful", s, f, spec, pose) for s, f in zip(slots, faces)]
    assert all(f.score > 0.7 for f in fits)
    assert np.median([f.ratio for f in fits]) == pytest.approx(shrink, abs=0.01)
    # the faces lie centred on their slots
    assert max(abs(f.dx_mm) for f in fits) < 0.5 and max(abs(f.dy_mm) for f in fits) < 0.5


def test_face_scale_sees_a_face_one_layer_down_as_smaller():
    """Read at layer 1's height, a face on layer 0 is k = (H - 40) / (H - 20)
    times the size a face there would have (camera H mm above the mat)."""
    from vision.artcheck import face_scale
    grey, slots, faces, pose, spec = printed_faces_view(1.0)
    H = -float(pose.camera_centre_mm[2])
    k = (H - 40.0) / (H - 20.0)
    fits = [face_scale(grey, "mindful", (s.x, s.y, 1), f, spec, pose) for s, f in zip(slots, faces)]
    assert np.median([f.ratio for f in fits]) == pytest.approx(k, abs=0.006)


def test_height_evidence_with_the_photos_scale_is_not_fooled_by_small_prints():
    """Faces printed at 95 % seen straight down: against the art's own size the
    faces on layer 0, asked as if they stood on layer 1, are... what they are
    (smaller: the lower height); and a face at its own height printed small
    looks like a lower one unless the photo's scale is given."""
    from vision.artcheck import face_scale, height_evidence
    grey, slots, faces, pose, spec = printed_faces_view(0.95)
    scale = float(np.median([face_scale(grey, "mindful", s, f, spec, pose).ratio for s, f in zip(slots, faces)]))
    # ask about layer 0's faces as raised slots would be asked about a face one
    # layer down: z = 0 read at z = 0 (its own height) against z = -1
    own = [height_evidence(grey, "mindful", (s.x, s.y, 0), f, spec, pose) for s, f in zip(slots, faces)]
    fixed = [height_evidence(grey, "mindful", (s.x, s.y, 0), f, spec, pose, scale=scale)
             for s, f in zip(slots, faces)]
    assert np.median(own) < 0                 # printed small: taken for a face lower down
    assert min(fixed) > 0                     # with the photo's scale: at its own height


def test_face_scale_is_not_led_astray_by_a_wrong_tile_angle(monkeypatch):
    """tile_angle can read an unturned tile as turned by its 8 degree clip (the
    independent renderer's 'love' faces, break-test of session 17): turned
    that far the window correlated 0.43-0.70 instead of 0.7-0.85 and the
    ratios scattered 0.92-0.98 about a true 0.95.  The unturned window is
    tried too, and the better correlation wins."""
    import math

    import vision.artcheck as ac
    grey, slots, faces, pose, spec = printed_faces_view(0.95, tilt_deg=10.0)
    monkeypatch.setattr(ac, "tile_angle", lambda win: math.radians(ac.MAX_ANGLE_DEG))
    fits = [ac.face_scale(grey, "mindful", s, f, spec, pose) for s, f in zip(slots, faces)]
    assert all(f.score > 0.7 for f in fits)
    assert np.median([f.ratio for f in fits]) == pytest.approx(0.95, abs=0.01)
    assert max(abs(f.dx_mm) for f in fits) < 0.5 and max(abs(f.dy_mm) for f in fits) < 0.5


@pytest.mark.parametrize("angle,tries", [(0.0, 1), (0.3, 1), (-0.3, 1), (2.0, 2), (-4.0, 2)])
def test_face_scale_turns_the_window_only_for_a_turn_worth_it(angle, tries):
    # half a degree moves the art's corners by a third of a window pixel:
    # below that (MIN_ANGLE) the unturned window alone is searched
    from vision.artcheck import _angles_to_try
    got = _angles_to_try(_window_of("bamboo-3", angle_deg=angle))
    assert len(got) == tries and got[0] == 0.0
    if tries == 2:
        assert math.degrees(got[1]) == pytest.approx(angle, abs=0.8)


def test_face_scale_tries_the_turned_window_one_way_round(monkeypatch):
    # tile_angle reading 3 degrees: the unturned window tells the way round
    # (both arts tried), the turned window tries that way round only, and
    # the four other ratios follow: 7 correlations instead of 8
    import vision.artcheck as ac
    grey, slots, faces, pose, spec = printed_faces_view(1.0, tilt_deg=10.0)
    calls = []
    real = ac.cv2.matchTemplate

    def counted(img, templ, method):
        calls.append(templ.shape)
        return real(img, templ, method)
    monkeypatch.setattr(ac.cv2, "matchTemplate", counted)
    monkeypatch.setattr(ac, "tile_angle", lambda win: math.radians(3.0))
    fit = ac.face_scale(grey, "mindful", slots[0], faces[0], spec, pose)
    # 2 ways round unturned + 1 turned + 4 other ratios
    assert len(calls) == 7
    assert fit.score > 0.6 and fit.ratio == pytest.approx(1.0, abs=0.03)


@pytest.mark.parametrize("how", ["black", "tiny", "off the mat", "unknown face", "no scales"])
def test_face_scale_degrades_to_no_fit(how):
    from vision.artcheck import FaceFit, face_scale
    grey, slots, faces, pose, spec = printed_faces_view(1.0)
    slot, face, scales = slots[0], faces[0], (0.92, 0.96, 1.0, 1.04, 1.08)
    if how == "black":
        grey = np.zeros_like(grey)
    elif how == "tiny":
        grey = cv2.resize(grey, (40, 30))
    elif how == "off the mat":
        slot = (500, 500, 0)
    elif how == "unknown face":
        face = "no-such-face"
    else:
        scales = ()
    assert face_scale(grey, "mindful", slot, face, spec, pose, scales=scales) == FaceFit(1.0, -1.0, 0.0, 0.0)


def test_size_evidence_places_a_face_between_the_two_heights():
    """Faces on layer 0 seen straight down, 700 mm away.  Asked at their own
    height (the slot z = 0 against the mat plane below it) they have the size
    of a face at that height: place 1, log-likelihood ratio
    ((1 + 0.2)^2 - (1 - 0.9)^2) / (2 0.42^2) = 4.05 for a sharp fit.  Asked
    as the top of a stack (layer 1) they have the size of the face one layer
    lower: place 0, ((0.2)^2 - (0.9)^2) / (2 0.42^2) = -2.18.  The ratio's
    error is well under the 2.9 % between the two heights (camera H mm above
    the mat: k = (H - 40) / (H - 20) at layer 1)."""
    from vision.artcheck import face_scale, size_evidence
    grey, slots, faces, pose, spec = printed_faces_view(1.0)
    assert all(face_scale(grey, "mindful", s, f, spec, pose).score >= 0.8 for s, f in zip(slots, faces))
    own = [size_evidence(grey, "mindful", (s.x, s.y, 0), f, spec, pose) for s, f in zip(slots, faces)]
    raised = [size_evidence(grey, "mindful", (s.x, s.y, 1), f, spec, pose) for s, f in zip(slots, faces)]
    assert np.median(own) == pytest.approx(4.05, abs=1.5)
    assert np.median(raised) == pytest.approx(-2.18, abs=1.0)
    assert min(own) > 0 > max(raised)


def test_size_evidence_reads_small_prints_at_the_photos_scale():
    """Faces printed at 95 % look 5 % small, more than the 2.9 % a face one
    layer lower loses: without the photo's scale every face is placed under
    the lower height (place < 0: evidence under -0.91 even at the widest
    spread, 0.65 for these fits); with it they are where they stand."""
    from vision.artcheck import face_scale, size_evidence
    grey, slots, faces, pose, spec = printed_faces_view(0.95)
    scale = float(np.median([face_scale(grey, "mindful", s, f, spec, pose).ratio for s, f in zip(slots, faces)]))
    blind = [size_evidence(grey, "mindful", (s.x, s.y, 0), f, spec, pose) for s, f in zip(slots, faces)]
    seen = [size_evidence(grey, "mindful", (s.x, s.y, 0), f, spec, pose, scale=scale) for s, f in zip(slots, faces)]
    assert max(blind) < -1.5
    # place about 1: 4.05 at a sharp fit's spread, 1.69 at 0.65's
    assert min(seen) > 0 and np.median(seen) > 1.5


def test_size_evidence_gives_nothing_for_a_size_beyond_the_ratios_tried(monkeypatch):
    """A best fit at the end of the ratios tried is no measurement (a face
    read wrongly, or sized against the wrong art): no evidence."""
    import vision.artcheck as ac
    grey, slots, faces, pose, spec = printed_faces_view(1.0)
    slot = (slots[0].x, slots[0].y, 1)
    for ratio, silent in ((0.92, True), (1.08, True), (0.95, False)):
        monkeypatch.setattr(ac, "face_scale", lambda *a, r=ratio, **k: ac.FaceFit(r, 0.9, 0.0, 0.0))
        assert (ac.size_evidence(grey, "mindful", slot, faces[0], spec, pose) == 0.0) == silent


@pytest.mark.parametrize("how", ["camera too low", "black", "unknown face", "no scale"])
def test_size_evidence_is_silent_without_a_face_or_a_view(how):
    from types import SimpleNamespace

    from vision.artcheck import size_evidence
    grey, slots, faces, pose, spec = printed_faces_view(1.0)
    slot, face, scale = (slots[0].x, slots[0].y, 1), faces[0], 1.0
    if how == "camera too low":
        pose = SimpleNamespace(camera_centre_mm=np.array([100.0, 100.0, -50.0]))
    elif how == "black":
        grey = np.zeros_like(grey)
    elif how == "unknown face":
        face = "no-such-face"
    else:
        scale = 0.0
    assert size_evidence(grey, "mindful", slot, face, spec, pose, scale=scale) == 0.0


@pytest.mark.parametrize("min_score", [-1.0, float("-inf")])
def test_size_evidence_takes_no_fit_for_a_size_even_with_no_minimum_correlation(min_score):
    """face_scale's answer for a view it cannot size (ratio 1, correlation -1:
    a black photo, an unknown face, a slot out of the picture) is no
    measurement, even where every correlation is accepted: it would place the
    face at the slot's height (+1.38 at the widest spread)."""
    from vision.artcheck import size_evidence
    grey, slots, faces, pose, spec = printed_faces_view(1.0)
    slot = (slots[0].x, slots[0].y, 1)
    assert size_evidence(np.zeros_like(grey), "mindful", slot, faces[0], spec, pose, min_score=min_score) == 0.0
    assert size_evidence(grey, "mindful", slot, "no-such-face", spec, pose, min_score=min_score) == 0.0
    assert size_evidence(grey, "mindful", (1e6, 0, 1), faces[0], spec, pose, min_score=min_score) == 0.0
    # a face that is there is still sized
    assert size_evidence(grey, "mindful", slot, faces[0], spec, pose, min_score=min_score) < 0
