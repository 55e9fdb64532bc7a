"""vision/reconstruct.py: the layered board from per-slot probabilities
(hand-made inputs; the photo pipeline is exercised in test_recognize_cli.py)."""

import numpy as np
import pytest

from companion.layouts import Layout, Slot
from companion.tiles import tileset
from vision.reconstruct import UNSEEN_CONFIDENCE, ReconstructSettings, reconstruct

VARIANT = "mindful"
FACES = [f.id for f in tileset(VARIANT).faces]
K = len(FACES)

# Three tiles in a row on layer 0 and one on top of the middle one:
#   (0,0,0) (2,0,0) (4,0,0)   and (2,0,1) covering (2,0,0).
LAYOUT = Layout("row-and-top", (Slot(0, 0, 0), Slot(2, 0, 0), Slot(4, 0, 0), Slot(2, 0, 1)), "test")
A, B, C, TOP = range(4)


def probs(rows):
    """rows: per slot, ("face-id", p) / ("none", p) / ("occluded", p); the rest
    of the mass spread evenly over the other labels."""
    fp = np.zeros((len(rows), K))
    pn = np.zeros(len(rows))
    po = np.zeros(len(rows))
    for i, (label, p) in enumerate(rows):
        rest = (1 - p) / (K + 1)
        fp[i] = rest
        pn[i] = po[i] = rest
        if label == "none":
            pn[i] = p
        elif label == "occluded":
            po[i] = p
        else:
            fp[i, FACES.index(label)] = p
    return fp, pn, po


def run(rows, in_view=None):
    fp, pn, po = probs(rows)
    return reconstruct(LAYOUT, VARIANT, fp, pn, po, in_view)


def test_full_board_top_down_implication():
    out = run([("bamboo-1", 0.98), ("none", 0.9), ("bamboo-3", 0.97), ("circles-5", 0.99)])
    assert [t.present for t in out] == [True, True, True, True]
    assert [t.face for t in out] == ["bamboo-1", None, "bamboo-3", "circles-5"]
    # the middle tile is covered: present, face null, free False, as sure as its
    # cover is present (the cover's own confidence also covers its face)
    assert out[B].seen == "covered" and out[B].free is False
    assert out[TOP].confidence <= out[B].confidence
    # ends of the row are free (one side open), the top tile is free
    assert [t.free for t in out] == [True, False, True, True]
    assert out[TOP].confidence > 0.95


def test_removed_top_reveals_the_face_below():
    out = run([("bamboo-1", 0.98), ("bamboo-2", 0.97), ("bamboo-3", 0.97), ("none", 0.95)])
    assert [t.present for t in out] == [True, True, True, False]
    assert out[B].face == "bamboo-2"
    assert out[TOP].free is None and out[TOP].face is None
    # (0,0,0) and (4,0,0) free, (2,0,0) pinched between them
    assert [t.free for t in out] == [True, False, True, None]


def test_empty_slots_and_free_flags():
    out = run([("none", 0.99), ("bamboo-2", 0.97), ("none", 0.99), ("none", 0.99)])
    assert [t.present for t in out] == [False, True, False, False]
    assert [t.free for t in out] == [None, True, None, None]
    assert out[A].confidence > 0.9


def test_occluded_top_is_present_unknown_with_low_confidence():
    # a hand over the stack hides both windows
    out = run([("bamboo-1", 0.98), ("occluded", 0.8), ("bamboo-3", 0.97), ("occluded", 0.9)])
    top = out[TOP]
    assert top.present and top.face is None and top.seen == "occluded"
    assert top.confidence <= UNSEEN_CONFIDENCE
    # what lies under a present (even unseen) tile is present, face null
    assert out[B].present and out[B].face is None and out[B].seen == "covered"
    assert out[B].confidence <= UNSEEN_CONFIDENCE


def test_out_of_view_is_unknown_never_a_confident_answer():
    out = run([("bamboo-1", 0.98), ("bamboo-2", 0.97), ("none", 0.99), ("none", 0.95)],
              in_view=np.array([True, True, False, True]))
    assert out[C].present and out[C].face is None and out[C].confidence <= UNSEEN_CONFIDENCE


def test_face_seen_too_high_belongs_to_the_tile_below():
    # the top tile is gone; its window (too high) still shows the face below,
    # but less cleanly than the window at the right height
    fp, pn, po = probs([("bamboo-1", 0.98), ("bamboo-2", 0.99), ("bamboo-3", 0.97), ("bamboo-2", 0.7)])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po)
    assert [t.present for t in out] == [True, True, True, False]
    assert out[B].face == "bamboo-2" and out[B].seen == "face"
    # and the other way round: the top tile's window is the cleaner one
    fp, pn, po = probs([("bamboo-1", 0.98), ("bamboo-2", 0.7), ("bamboo-3", 0.97), ("bamboo-2", 0.99)])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po)
    assert [t.present for t in out] == [True, True, True, True]
    assert out[TOP].face == "bamboo-2" and out[B].face is None


def test_no_face_more_often_than_its_copies():
    # Mindful's Spring is a single tile: the less sure of two "spring" reads
    # takes its next best face
    fp, pn, po = probs([("season-spring", 0.9), ("none", 0.9), ("season-spring", 0.8), ("none", 0.95)])
    fp[C, FACES.index("season-summer")] = 0.15
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po)
    assert out[A].face == "season-spring"
    assert out[C].face == "season-summer"
    assert out[C].confidence < 0.5


def test_output_json_shape():
    out = run([("bamboo-1", 0.98), ("none", 0.9), ("bamboo-3", 0.97), ("circles-5", 0.99)])
    j = out[B].to_json()
    assert set(j) == {"slot", "present", "face", "confidence", "free"}
    assert j["slot"] == [2, 0, 0] and j["present"] is True and j["face"] is None and j["free"] is False
    assert 0.95 < j["confidence"] <= 1.0


def test_occluded_slot_over_a_visible_face_is_empty():
    # the top window is hidden (a hand), but the tile below shows its own face:
    # a tile on top would hide that face, so the top slot is empty
    out = run([("bamboo-1", 0.98), ("bamboo-2", 0.97), ("bamboo-3", 0.97), ("occluded", 0.9)])
    assert [t.present for t in out] == [True, True, True, False]
    assert out[B].face == "bamboo-2"
    assert out[TOP].confidence <= UNSEEN_CONFIDENCE


def test_a_pinched_slot_cannot_be_empty():
    # the middle tile of the row reads as "none" only weakly, while both its
    # neighbours are surely present: it was never free, so it is still there
    layout = Layout("row", (Slot(0, 0, 0), Slot(2, 0, 0), Slot(4, 0, 0)), "test")
    fp = np.full((3, K), 0.001)
    fp[0, FACES.index("bamboo-1")] = 0.95
    fp[2, FACES.index("bamboo-3")] = 0.95
    fp[1, FACES.index("bamboo-2")] = 0.3
    pn = np.array([0.005, 0.6, 0.005])
    out = reconstruct(layout, VARIANT, fp, pn, np.zeros(3))
    assert [t.present for t in out] == [True, True, True]
    assert out[1].face == "bamboo-2" and out[1].free is False
    # with a sure "none" in the middle and unsure neighbours the reading stands
    pn = np.array([0.5, 0.99, 0.5])
    out = reconstruct(layout, VARIANT, fp, pn, np.zeros(3))
    assert out[1].present is False


def test_pose_with_focal_keeps_the_mat_plane():
    import cv2
    from vision.mat import MatSpec
    from vision.pose import Camera, MatPose, project_points
    from vision.reconstruct import pose_with_focal

    K = np.array([[1000.0, 0, 639.5], [0, 1000.0, 359.5], [0, 0, 1]])
    R = cv2.Rodrigues(np.array([0.05, -0.03, 0.02]))[0]
    centre = np.array([300.0, 220.0, -700.0])
    pose = MatPose(cv2.Rodrigues(R)[0], -R @ centre, Camera(K, np.zeros(5), (1280, 720)), 0.0, 12)
    same = pose_with_focal(pose, 1000.0)
    assert np.allclose(same.tvec, pose.tvec, atol=1e-6) and np.allclose(same.rotation, pose.rotation, atol=1e-9)
    other = pose_with_focal(pose, 800.0)
    mat_pts = np.array([[0, 0, 0], [594, 0, 0], [594, 420, 0], [0, 420, 0], [297, 210, 0]], float)
    # points on the mat project to (nearly: the rotation is re-orthonormalised)
    # the same pixels; the camera moves closer
    assert np.abs(project_points(mat_pts, other) - project_points(mat_pts, pose)).max() < 0.5
    assert other.camera.K[0, 0] == 800.0
    assert -other.camera_centre_mm[2] < -pose.camera_centre_mm[2]
    # raised points do not: their parallax depends on the camera distance
    top = np.array([[100.0, 100.0, -60.0]])
    assert np.linalg.norm(project_points(top, other) - project_points(top, pose)) > 2.0


def test_hidden_fraction_of_a_face_behind_a_taller_neighbour():
    from vision.mat import MatSpec
    from vision.reconstruct import hidden_fraction

    spec = MatSpec.default()
    gx, gy = spec.grid_origin_mm
    target, right_up, on_top = (10, 4, 0), (12, 4, 1), (10, 4, 1)
    centre = np.array([gx + 5 * 30 + 15, gy + 2 * 40 + 20])
    above = np.array([centre[0], centre[1], -1000.0])           # straight above the target
    assert hidden_fraction([target], [right_up], above, spec)[0] == 0
    assert hidden_fraction([target], [on_top], above, spec)[0] == 1
    # seen from far to the right and low, the raised right neighbour hides most of it
    low_right = np.array([centre[0] + 2000.0, centre[1], -300.0])
    assert hidden_fraction([target], [right_up], low_right, spec)[0] > 0.3
    # a neighbour on the same layer never hides a face
    assert hidden_fraction([target], [(12, 4, 0)], low_right, spec)[0] == 0


def test_the_taller_tiles_that_show_in_a_slot_s_window():
    from vision.mat import MatSpec
    from vision.reconstruct import occluders_in_view

    spec = MatSpec.default()
    gx, gy = spec.grid_origin_mm
    target = (10, 4, 0)
    tiles = [(12, 4, 1), (8, 4, 1), (16, 4, 1), (4, 4, 1), (12, 4, 0), (10, 8, 1)]
    centre = np.array([gx + 5 * 30 + 15, gy + 2 * 40 + 20])
    # from far to the right and low (rays rise 0.14 mm a mm): the raised
    # right neighbour, and the one two tiles further right (each tile alone:
    # one behind another counts too); the left neighbour only in the 3 mm
    # margin beside the face, its box rising from the face's height; no
    # tile on the face's own layer, none three tiles to the left, nor the
    # raised tile a tile below (the rays go right, not down)
    low_right = np.array([centre[0] + 2000.0, centre[1], -300.0])
    assert [list(a) for a in occluders_in_view([target], tiles, low_right, spec)] == [[0, 1, 2]]
    # without the margin the left neighbour no longer shows
    assert [list(a) for a in occluders_in_view([target], tiles, low_right, spec, margin=0.0)] == [[0, 2]]
    # straight above: the raised neighbours on either side show in the
    # margin, the tiles further off do not
    above = np.array([centre[0], centre[1], -1000.0])
    assert [list(a) for a in occluders_in_view([target], tiles, above, spec)] == [[0, 1]]
    # from far down the mat, the raised tile a tile below shows (and the
    # raised neighbours, in the margin beside the face); a tile right on
    # top of a face shows from anywhere
    low_down = np.array([centre[0], centre[1] + 2000.0, -300.0])
    got = occluders_in_view([target, (4, 4, 0)], tiles, low_down, spec)
    assert [list(a) for a in got] == [[0, 1, 5], [3]]
    assert occluders_in_view([], tiles, above, spec) == []
    assert [list(a) for a in occluders_in_view([target], [], above, spec)] == [[]]


def test_an_unsure_face_on_a_partly_hidden_tile_is_not_reported():
    from vision.mat import MatSpec
    from vision.reconstruct import hidden_fraction

    spec = MatSpec.default()
    gx, gy = spec.grid_origin_mm
    c_centre = np.array([gx + 2 * 30 + 15, gy + 20])              # centre of C (4,0,0)
    overhead = np.array([c_centre[0], c_centre[1], -1000.0])
    low_left = np.array([c_centre[0] - 750.0, c_centre[1], -1000.0])
    # seen from the left (rays rising ~1.3 mm per mm), the raised TOP (2,0,1) hides about half of C's face
    hid = hidden_fraction([LAYOUT.slots[C]], [LAYOUT.slots[TOP]], low_left, spec, samples=7)[0]
    assert 0.4 < hid < 0.8
    assert hidden_fraction([LAYOUT.slots[C]], [LAYOUT.slots[TOP]], overhead, spec, samples=7)[0] == 0
    # C's window reads bamboo-3 at 0.25 (the rest spread over the other labels):
    # face confidence 0.25 / (face sum + none) ~ 0.26, below partly_hidden_conf 0.5
    rows = [("bamboo-1", 0.98), ("none", 0.9), ("bamboo-3", 0.25), ("circles-5", 0.99)]
    fp, pn, po = probs(rows)
    seen_over = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=overhead, spec=spec)
    assert seen_over[C].face == "bamboo-3" and seen_over[C].seen == "face"
    seen_low = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=low_left, spec=spec)
    assert seen_low[C].present and seen_low[C].face is None and seen_low[C].seen == "occluded"
    assert seen_low[C].confidence <= UNSEEN_CONFIDENCE and seen_low[C].free is True
    # a reading at 0.42 is not reported either (0.5 since session 12), and
    # would be with the limit back at 0.3
    fp, pn, po = probs([("bamboo-1", 0.98), ("none", 0.9), ("bamboo-3", 0.42), ("circles-5", 0.99)])
    unsure = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=low_left, spec=spec)[C]
    assert unsure.face is None and unsure.seen == "occluded"
    old = ReconstructSettings(partly_hidden_conf=0.3)
    assert reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=low_left, spec=spec, settings=old)[C].face == "bamboo-3"
    # a sure reading of the same partly hidden face is kept
    fp, pn, po = probs([("bamboo-1", 0.98), ("none", 0.9), ("bamboo-3", 0.9), ("circles-5", 0.99)])
    assert reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=low_left, spec=spec)[C].face == "bamboo-3"


def test_a_partly_hidden_face_is_decided_on_its_window_read_again_with_the_hidden_part_blanked():
    from vision.mat import MatSpec

    spec = MatSpec.default()
    gx, gy = spec.grid_origin_mm
    c_centre = np.array([gx + 2 * 30 + 15, gy + 20])
    low_left = np.array([c_centre[0] - 750.0, c_centre[1], -1000.0])     # TOP hides about half of C (above)
    overhead = np.array([c_centre[0], c_centre[1], -1000.0])
    # C's plain window hesitates (bamboo-3 at 0.42: withheld, see above); read
    # with TOP's part blanked it is bamboo-4 at 0.9
    fp, pn, po = probs([("bamboo-1", 0.98), ("none", 0.9), ("bamboo-3", 0.42), ("circles-5", 0.99)])
    bfp, bpn, bpo = probs([("bamboo-4", 0.9)])
    asked = []

    def blank_read(idx, standing):
        asked.append((list(idx), list(standing)))
        return bfp, bpn, bpo

    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=low_left, spec=spec, blank_read=blank_read)
    # only C is partly hidden by a standing tile (A and TOP in full sight, B covered)
    assert asked == [([C], [True, True, True, True])]
    assert out[C].face == "bamboo-4" and out[C].seen == "face"
    assert out[C].confidence > 0.5 and out[C].free is True
    # a blanked read that finds the face hidden leaves it unseen, present
    ofp, opn, opo = probs([("occluded", 0.8)])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=low_left, spec=spec,
                      blank_read=lambda idx, standing: (ofp, opn, opo))
    assert out[C].present and out[C].face is None and out[C].seen == "occluded"
    # C's plain window reads "occluded" (unseen, confidence 0.5); a blanked
    # read of bamboo-4 at 0.9 shows it, one at 0.3 (its share of the face
    # probability 0.3 / 0.97 = 0.31, times a presence near 1: under 0.5)
    # leaves it unseen as it was
    fp, pn, po = probs([("bamboo-1", 0.98), ("none", 0.9), ("occluded", 0.8), ("circles-5", 0.99)])
    before = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=low_left, spec=spec)[C]
    assert before.present and before.face is None and before.confidence == UNSEEN_CONFIDENCE
    sure = probs([("bamboo-4", 0.9)])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=low_left, spec=spec, blank_read=lambda i, s: sure)[C]
    # shown on what is left of it: reported under UNSURE_BELOW (0.7), for a look
    assert out.face == "bamboo-4" and out.confidence == ReconstructSettings().blank_shown_max_conf == 0.65
    from vision.reconstruct import unsure_slots
    assert C in unsure_slots(reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=low_left, spec=spec,
                                         blank_read=lambda i, s: sure))
    weak = probs([("bamboo-4", 0.3)])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=low_left, spec=spec, blank_read=lambda i, s: weak)[C]
    assert out == before
    # seen from overhead nothing is hidden: no second read, the plain window decides
    asked.clear()
    fp, pn, po = probs([("bamboo-1", 0.98), ("none", 0.9), ("bamboo-3", 0.9), ("circles-5", 0.99)])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=overhead, spec=spec, blank_read=blank_read)
    assert asked == [] and out[C].face == "bamboo-3"
    # and with the second read turned off, the hesitant reading is withheld as before
    fp, pn, po = probs([("bamboo-1", 0.98), ("none", 0.9), ("bamboo-3", 0.42), ("circles-5", 0.99)])
    off = ReconstructSettings(blank_read_max=0)
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=low_left, spec=spec, blank_read=blank_read,
                      settings=off)
    assert asked == [] and out[C].face is None


def test_the_window_mask_marks_what_a_taller_tile_in_front_hides():
    from vision.crops import CropSettings
    from vision.mat import MatSpec
    from vision.reconstruct import hidden_fraction, window_hidden_masks

    spec, crop = MatSpec.default(), CropSettings()
    gx, gy = spec.grid_origin_mm
    target, front = (0, 0, 0), (0, 2, 1)           # the tile in front (towards +y) one layer up
    # a camera far away at 45 degrees of elevation towards +y: every ray rises
    # 1 mm per mm it runs, so the raised tile's wall (rising 20 mm above the
    # face, starting at y = gy + 40) hides the points of the face less than
    # 20 mm from that edge, and every point of the margin inside its footprint
    far = np.array([gx + 15.0, gy + 20.0 + 1e6, -(20.0 + 1e6)])
    m = window_hidden_masks([target], [front], far, spec, crop)[0]
    assert m.shape == (48, 36) and m.dtype == bool
    # rows: v = (r + 0.5) / 48 * 1.2 - 0.1 > 0.5 from row 24; columns: the
    # face's width, u in [0, 1], columns 3-32
    want = np.zeros((48, 36), bool)
    want[24:, 3:33] = True
    np.testing.assert_array_equal(m, want)
    assert abs(m[4:44, 3:33].mean() - hidden_fraction([target], [front], far, spec, 10)[0]) < 0.05
    # from straight above the face is in full sight: only the margin under the
    # front tile's footprint (v > 1: rows 44-47) is hidden, by the box itself
    above = window_hidden_masks([target], [front], np.array([gx + 15.0, gy + 20.0, -1000.0]), spec, crop)[0]
    want[:] = False
    want[44:, 3:33] = True
    np.testing.assert_array_equal(above, want)
    # a tile on the same layer hides nothing
    assert not window_hidden_masks([target], [(0, 2, 0)], far, spec, crop)[0].any()


def test_a_face_hidden_almost_whole_is_never_reported_however_sure():
    from vision.mat import MatSpec
    from vision.reconstruct import hidden_fraction

    spec = MatSpec.default()
    gx, gy = spec.grid_origin_mm
    c_centre = np.array([gx + 2 * 30 + 15, gy + 20])
    # lower still on the left: the raised TOP hides nearly all of C's face
    steep = np.array([c_centre[0] - 1500.0, c_centre[1], -800.0])
    hid = hidden_fraction([LAYOUT.slots[C]], [LAYOUT.slots[TOP]], steep, spec, samples=7)[0]
    assert hid > 0.8
    # C's window reads a face at 0.99: it is TOP's side or face seen past it, not C's
    fp, pn, po = probs([("bamboo-1", 0.98), ("none", 0.9), ("bamboo-3", 0.99), ("circles-5", 0.99)])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=steep, spec=spec)
    assert out[C].present and out[C].face is None and out[C].seen == "occluded"
    assert out[C].confidence <= UNSEEN_CONFIDENCE
    # with the limit raised above 1 the sure reading would stand
    loose = ReconstructSettings(hidden_face_max=1.01)
    assert reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=steep, spec=spec, settings=loose)[C].face == "bamboo-3"


def test_a_face_is_not_withheld_behind_a_tile_since_found_gone():
    from vision.mat import MatSpec

    spec = MatSpec.default()
    gx, gy = spec.grid_origin_mm
    overhead = np.array([gx + 30 + 15, gy + 20, -1000.0])      # right above B (2,0,0)
    # TOP's window reads "occluded" (a hand, say): present for now; B then shows
    # its face clearly, so TOP cannot be there (it would hide that face).  B's
    # face was judged while TOP still hid all of it; it is reported all the same.
    fp, pn, po = probs([("bamboo-1", 0.98), ("circles-5", 0.95), ("bamboo-3", 0.97), ("occluded", 0.9)])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, camera_mm=overhead, spec=spec)
    assert not out[TOP].present
    assert out[B].face == "circles-5" and out[B].seen == "face"


# --------------------------------------------------------------------------- presence model's say

MODEL_ONLY = ReconstructSettings(presence_weights=(1.0, 0.0, 0.0, 0.0), presence_prior_weight=0.0,
                                 layout_prior_weight=0.0)

def test_presence_model_overrules_a_face_seen_one_layer_too_high():
    # the top tile is gone and the tile below (circles-5) shows through the top
    # window almost as cleanly as through its own: the classifier alone keeps
    # the top tile (a near tie goes to the upper tile) ...
    rows = [("bamboo-1", 0.98), ("circles-5", 0.90), ("bamboo-3", 0.97), ("circles-5", 0.95)]
    fp, pn, po = probs(rows)
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po)
    assert out[TOP].present and out[TOP].face == "circles-5" and out[B].seen == "covered"
    # ... the presence model, sure the slot is empty (log-odds -3), removes it
    q = np.array([np.nan, np.nan, np.nan, -3.0])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, settings=MODEL_ONLY, presence_logit=q)
    assert [t.present for t in out] == [True, True, True, False]
    assert out[B].face == "circles-5" and out[B].seen == "face"
    assert out[TOP].confidence == pytest.approx(1 / (1 + np.exp(-3.0)))
    assert [t.free for t in out] == [True, False, True, None]


def test_presence_model_keeps_a_tile_whose_face_is_unreadable():
    # the classifier sees no face at the top (glare): present by the presence
    # model, face null, never a confident answer; the tile under it is covered
    fp, pn, po = probs([("bamboo-1", 0.98), ("none", 0.9), ("bamboo-3", 0.97), ("none", 0.85)])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, settings=MODEL_ONLY,
                      presence_logit=np.array([np.nan, np.nan, np.nan, 2.5]))
    assert out[TOP].present and out[TOP].face is None and out[TOP].seen == "occluded"
    assert out[TOP].confidence <= UNSEEN_CONFIDENCE
    assert out[B].present and out[B].seen == "covered"
    # a readable face with a sure presence keeps its face and the model's confidence
    fp, pn, po = probs([("bamboo-1", 0.98), ("none", 0.9), ("bamboo-3", 0.97), ("circles-5", 0.6)])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, settings=MODEL_ONLY,
                      presence_logit=np.array([np.nan, np.nan, np.nan, 4.0]))
    assert out[TOP].face == "circles-5"
    assert out[TOP].confidence == pytest.approx(1 / (1 + np.exp(-4.0)) * 0.6 / fp[TOP].sum(), rel=1e-6)


def test_a_slot_hidden_whole_behind_a_tile_in_front_stands_whatever_its_window_says():
    from vision.mat import MatSpec
    from vision.reconstruct import hidden_fraction

    spec = MatSpec.default()
    gx, gy = spec.grid_origin_mm
    c_centre = np.array([gx + 2 * 30 + 15, gy + 20])
    steep = np.array([c_centre[0] - 1500.0, c_centre[1], -800.0])
    assert hidden_fraction([LAYOUT.slots[C]], [LAYOUT.slots[TOP]], steep, spec, samples=7)[0] > 0.9
    # TOP stands (its face reads); C's window shows TOP's side, and the
    # presence model calls C empty: the photo cannot see C, so C stands, unseen
    fp, pn, po = probs([("bamboo-1", 0.98), ("none", 0.9), ("none", 0.9), ("circles-5", 0.99)])
    q = np.array([np.nan, np.nan, -3.0, 4.0])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, settings=MODEL_ONLY, presence_logit=q, camera_mm=steep, spec=spec)
    assert out[C].present and out[C].face is None and out[C].seen == "occluded"
    assert out[C].confidence == UNSEEN_CONFIDENCE
    # seen from above, the same reading makes C empty
    overhead = np.array([c_centre[0], c_centre[1], -1000.0])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, settings=MODEL_ONLY, presence_logit=q, camera_mm=overhead,
                      spec=spec)
    assert not out[C].present


def test_presence_log_odds_weigh_the_model_with_both_windows():
    # used log-odds a q + b lo - c lo_below + d, lo = log(face sum / none) of
    # the slot's window (clipped to +-8), lo_below the same for the slot it
    # covers (B), whose window shows its face at 0.9
    fp, pn, po = probs([("bamboo-1", 0.98), ("circles-5", 0.90), ("bamboo-3", 0.97), ("circles-5", 0.6)])
    lo = np.log(fp.sum(axis=1) + 1e-6) - np.log(pn + 1e-6)
    w = (0.5, 0.25, 0.75, -0.1)
    q_top = 1.2
    used = w[0] * q_top + w[1] * lo[TOP] - w[2] * lo[B] + w[3]
    assert used < 0                     # the lower window's clean face outweighs the model
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po,
                      settings=ReconstructSettings(presence_weights=w, presence_prior_weight=0.0),
                      presence_logit=np.array([np.nan, np.nan, np.nan, q_top]))
    assert not out[TOP].present and out[B].face == "circles-5"
    assert out[TOP].confidence == pytest.approx(1 / (1 + np.exp(used)))


def test_a_lukewarm_presence_does_not_build_a_stack_on_an_empty_mat():
    # the model leans "present" (+1 log-odds) but neither the slot's window nor
    # the one below shows a face (nor do the row's ends): nothing stands there
    fp, pn, po = probs([("none", 0.95), ("none", 0.9), ("none", 0.95), ("none", 0.85)])
    q = np.array([np.nan, np.nan, np.nan, 1.0])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, settings=MODEL_ONLY, presence_logit=q)
    assert not out[TOP].present and not out[B].present
    # a sure model (+3) keeps the tile (face unreadable: unseen)
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, settings=MODEL_ONLY, presence_logit=q + 2.0)
    assert out[TOP].present and out[TOP].seen == "occluded" and out[B].seen == "covered"


def _stacks_layout(n: int) -> Layout:
    """``n`` two-tile stacks far apart: (4k, 0, 0) under (4k, 0, 1)."""
    return Layout("stacks", tuple(Slot(4 * k, 0, z) for k in range(n) for z in (0, 1)), "test")


def test_the_photo_prior_settles_an_ambiguous_stack_the_way_the_clear_ones_went():
    # six stacks; the model is sure about five upper slots and hesitant (+0.3)
    # about the last one; it finds exposed lower tiles present by +2 (not
    # "sure", |2| < 3).  Every window shows a face (the classifier cannot tell)
    layout = _stacks_layout(6)
    n = len(layout.slots)
    fp, pn, po = probs([("bamboo-1", 0.9)] * n)
    settings = ReconstructSettings(presence_weights=(1.0, 0.0, 0.0, 0.0), presence_prior_weight=1.0,
                                   layout_prior_weight=0.0)
    last_top = n - 1

    def model(clear_upper: float):
        asked = []

        def logits(idx):
            asked.extend(idx)
            return np.array([(0.3 if i == last_top else clear_upper) if layout.slots[i].z == 1 else 2.0
                             for i in idx])
        return logits, asked

    # late in the game: the five clear upper tiles are gone -> share (0 + 1) / (5 + 2),
    # prior log(1/6) = -1.79 outweighs +0.3: the hesitant one is gone too
    logits, asked = model(-6.0)
    out = reconstruct(layout, VARIANT, fp, pn, po, settings=settings, presence_logit=logits)
    assert not out[last_top].present and out[last_top - 1].seen == "face"
    assert sorted(asked) == list(range(n))          # each slot asked once, over both passes
    # early in the game: the five clear ones stand -> prior +1.79, it stands
    logits, asked = model(6.0)
    out = reconstruct(layout, VARIANT, fp, pn, po, settings=settings, presence_logit=logits)
    assert out[last_top].present and out[last_top - 1].seen == "covered"
    assert sorted(asked) == [i for i in range(n) if layout.slots[i].z == 1]   # lower ones known covered
    # without the prior the model's +0.3 decides alone
    logits, _ = model(-6.0)
    out = reconstruct(layout, VARIANT, fp, pn, po, settings=MODEL_ONLY, presence_logit=logits)
    assert out[last_top].present


def test_confident_share_counts_sure_answers_with_laplace_smoothing():
    from vision.reconstruct import _confident_share
    nan = float("nan")
    assert _confident_share([nan, 5.0, -4.0, 3.5, 0.2, -2.9], 3.0) == (2 + 1) / (3 + 2)
    assert _confident_share([nan, 0.5], 3.0) == 0.5          # nothing sure: no lean
    assert _confident_share([nan, nan], 3.0) is None         # the model judged nothing


def test_the_photo_prior_never_overturns_a_sure_reading():
    # early in a game: thirty upper tiles clearly stand (+6), the last one was
    # just taken and reads -3.0.  Share (30 + 1) / (30 + 2): logit 3.43, capped
    # at 2.5 -> -3.0 + 2.5 < 0 keeps it empty; uncapped it would come back
    layout = _stacks_layout(31)
    n = len(layout.slots)
    fp, pn, po = probs([("bamboo-1", 0.9)] * n)
    last_top = n - 1

    def logits(idx):
        return np.array([(-3.0 if i == last_top else 6.0) if layout.slots[i].z == 1 else 2.0 for i in idx])

    capped = ReconstructSettings(presence_weights=(1.0, 0.0, 0.0, 0.0), presence_prior_weight=1.0,
                                 layout_prior_weight=0.0)
    assert capped.presence_prior_cap == 2.5
    assert not reconstruct(layout, VARIANT, fp, pn, po, settings=capped, presence_logit=logits)[last_top].present
    uncapped = ReconstructSettings(presence_weights=(1.0, 0.0, 0.0, 0.0), presence_prior_weight=1.0,
                                   presence_prior_cap=99.0, layout_prior_weight=0.0)
    assert reconstruct(layout, VARIANT, fp, pn, po, settings=uncapped, presence_logit=logits)[last_top].present


def _spy_legend(monkeypatch, overlay) -> dict:
    """Record the counts the overlay's legend is made with."""
    seen: dict = {}

    class Spy(overlay._Legend):
        def __init__(self, *counts, **kw):
            seen["counts"], seen["n_unsure"] = counts[:4], counts[4]
            super().__init__(*counts, **kw)
    monkeypatch.setattr(overlay, "_Legend", Spy)
    return seen


def test_overlay_legend_counts_add_up_to_the_tiles_present(monkeypatch):
    # free, blocked, unseen and covered (not drawn) together are every present tile
    import vision.overlay as overlay
    from vision.reconstruct import Recognition

    out = run([("bamboo-1", 0.98), ("none", 0.9), ("occluded", 0.9), ("circles-5", 0.99)])
    quads = np.array([[[10 + 40 * k, 10], [40 + 40 * k, 10], [40 + 40 * k, 50], [10 + 40 * k, 50]]
                      for k in range(4)], np.float32)
    rec = Recognition(VARIANT, LAYOUT, tuple(out), quads)
    seen = _spy_legend(monkeypatch, overlay)
    img = overlay.draw_overlay(np.full((80, 200, 3), 200, np.uint8), rec)
    assert img.shape == (720, 1800, 3)        # 80 px high: drawn 9 times larger
    # A free (row end), C unseen (occluded window, row end), TOP free, B under TOP
    assert seen["counts"] == (2, 0, 1, 1)
    assert sum(seen["counts"]) == sum(t.present for t in out)


def test_overlay_legend_and_advice_keep_off_the_tiles():
    # the four tiles lie in the picture's top-left corner: the legend goes to
    # the top right (the next corner in order), the advice to the bottom edge
    from vision.overlay import draw_overlay
    from vision.reconstruct import Recognition

    out = run([("bamboo-1", 0.98), ("none", 0.9), ("occluded", 0.9), ("circles-5", 0.99)])
    quads = np.array([[[10 + 40 * k, 10], [40 + 40 * k, 10], [40 + 40 * k, 50], [10 + 40 * k, 50]]
                      for k in range(4)], np.float32)
    photo = np.full((720, 1080, 3), 100, np.uint8)
    img = draw_overlay(photo, Recognition(VARIANT, LAYOUT, tuple(out), quads, advice=("tilt the camera",)))
    assert img.shape == photo.shape                     # both fit over the photo: no band added
    boxed = 100 * 0.35 + 0.65 * 255                    # a box lightens what lies under it
    assert abs(int(img[30, 1060, 0]) - boxed) <= 1      # legend: top right
    assert abs(int(img[705, 540, 0]) - boxed) <= 1      # advice: bottom edge
    assert img[250:550, 300:700].max() == 100           # between them, the photo untouched
    assert not (np.abs(img[12:48, 12:38].astype(int) - boxed) <= 1).all(axis=2).any()   # no box over the first tile


def test_overlay_enlarges_a_small_photo_and_keeps_its_marks_on_the_tiles():
    # a 640 x 360 frame is drawn twice as large: pixel (x, y) of the photo is
    # pixels 2x..2x+1 of the overlay, and a tile's outline follows it there
    from vision import overlay
    from vision.reconstruct import Recognition

    assert [overlay.overlay_scale(h, w) for h, w in ((720, 1280), (480, 640), (360, 640), (240, 320),
                                                     (100, 3000))] == [1, 2, 2, 3, 1]
    out = run([("bamboo-1", 0.98), ("none", 0.9), ("occluded", 0.9), ("circles-5", 0.99)])
    quads = np.array([[[200 + 40 * k, 100], [230 + 40 * k, 100], [230 + 40 * k, 140], [200 + 40 * k, 140]]
                      for k in range(4)], np.float32)
    photo = np.full((360, 640, 3), 100, np.uint8)
    photo[300:310, 600:610] = 30                           # a dark square on the bare table
    img = overlay.draw_overlay(photo, Recognition(VARIANT, LAYOUT, tuple(out), quads))
    assert img.shape == (720, 1280, 3)
    # the square, twice as large (bilinear: its edge pixels blend with the table)
    assert (img[601:619, 1201:1219] == 30).all() and (img[598:622, 1198:1222, 0] != 30).sum() == 24 * 24 - 18 * 18
    green = np.abs(img.astype(int) - overlay.FREE_COLOUR).sum(axis=2) < 60
    assert green[199:202, 420:440].any()                   # tile A's top edge, y = 100 -> 199.5
    assert not green[150:190].any()                        # nothing drawn above it


def test_overlay_text_of_a_tall_portrait_photo_fits_its_width():
    # its text was sized by the height: a 500 x 1800 photo's legend ran off
    # the right edge (a re-test, session 36)
    from vision import overlay
    from vision.reconstruct import Recognition

    out = run([("bamboo-1", 0.98), ("none", 0.9), ("occluded", 0.9), ("circles-5", 0.99)])
    quads = np.array([[[50 + 100 * k, 720], [125 + 100 * k, 720], [125 + 100 * k, 900], [50 + 100 * k, 900]]
                      for k in range(4)], np.float32)
    img = overlay.draw_overlay(np.full((1800, 500, 3), 120, np.uint8), Recognition(VARIANT, LAYOUT, tuple(out), quads))
    assert img.shape == (3600, 1000, 3)                     # drawn twice as large
    top = img[:1200]                                         # (the tiles lie lower, from y 1440)
    rows, cols = np.nonzero((np.abs(top.astype(int) - (120 * 0.35 + 0.65 * 255)) <= 1).all(axis=2))
    assert len(cols) and cols.max() < 1000 - 8 and rows.max() < 400       # the legend whole, in a corner


def test_overlay_legend_goes_halfway_down_a_side_when_every_corner_is_taken():
    # a portrait photo: tiles in three corners, a marker in the fourth, bare
    # table halfway down the sides; the legend went into a band below
    from types import SimpleNamespace

    from vision import overlay
    from vision.reconstruct import Recognition

    out = run([("bamboo-1", 0.98), ("none", 0.9), ("occluded", 0.9), ("circles-5", 0.99)])
    box = lambda x, y: [[x, y], [x + 150, y], [x + 150, y + 200], [x, y + 200]]
    # drawn: slot 0 (top left), slot 2 (bottom left), slot 3 (top right); slot 1 lies under slot 3
    quads = np.array([box(0, 0), box(570, 0), box(0, 1080), box(570, 0)], np.float32)
    marker = [[600, 1180], [700, 1180], [700, 1270], [600, 1270]]
    pose = SimpleNamespace(image_points=np.array(marker, np.float64))
    img = overlay.draw_overlay(np.full((1280, 720, 3), 100, np.uint8),
                               Recognition(VARIANT, LAYOUT, tuple(out), quads, pose=pose))
    assert img.shape == (1280, 720, 3)                      # no band
    boxed = 100 * 0.35 + 0.65 * 255
    assert abs(int(img[640, 20, 0]) - boxed) <= 1           # halfway down the left side


def test_overlay_puts_legend_and_advice_in_a_band_when_every_place_hides_tiles():
    # tiles down both sides (slot 1, under slot 3, is not drawn: the top
    # right is bare), and advice along an edge would hide a tile: the photo
    # keeps every pixel, and a band below holds the legend and the advice
    from vision import overlay
    from vision.reconstruct import Recognition

    out = run([("bamboo-1", 0.98), ("none", 0.9), ("occluded", 0.9), ("circles-5", 0.99)])
    box = lambda x, y: [[x, y], [x + 150, y], [x + 150, y + 360], [x, y + 360]]
    quads = np.array([box(0, 0), box(1130, 0), box(0, 360), box(1130, 360)], np.float32)
    photo = np.full((720, 1280, 3), 100, np.uint8)
    img = overlay.draw_overlay(photo, Recognition(VARIANT, LAYOUT, tuple(out), quads,
                                                  advice=("tilt the camera",)))
    assert img.shape[0] > 720 and img.shape[1] == 1280
    band = img[720:]
    assert (band[:, :, 0] < 100).any() and (band == 235).any()      # text on the band's grey
    # no box over the photo: between the tiles, top to bottom, it is as it was
    assert img[:720, 200:1080].max() == 100


def test_overlay_legend_keeps_off_the_markers_and_check_marks_stay_upright():
    # markers in the two top corners, tiles near the top: the legend takes
    # the bottom left, on the bare table
    from types import SimpleNamespace

    from vision import overlay
    from vision.reconstruct import Recognition

    out = run([("bamboo-1", 0.98), ("none", 0.9), ("occluded", 0.9), ("circles-5", 0.99)])
    quads = np.array([[[200 + 40 * k, 10], [230 + 40 * k, 10], [230 + 40 * k, 50], [200 + 40 * k, 50]]
                      for k in range(4)], np.float32)
    marker = lambda x, y: [[x, y], [x + 60, y], [x + 60, y + 60], [x, y + 60]]
    pose = SimpleNamespace(image_points=np.array(marker(5, 5) + marker(1015, 5), np.float64))
    photo = np.full((720, 1080, 3), 100, np.uint8)
    img = overlay.draw_overlay(photo, Recognition(VARIANT, LAYOUT, tuple(out), quads, pose=pose))
    boxed = 100 * 0.35 + 0.65 * 255
    assert abs(int(img[710, 20, 0]) - boxed) <= 1                  # legend: bottom left
    assert (img[5:65, 5:65] == 100).all() and (img[5:65, 1015:1075] == 100).all()   # markers as they were
    # a free tile's mark is the same upright glyph whether the mat lies
    # straight or turned a quarter round
    glyphs = []
    for q in (np.array([[100, 100], [160, 100], [160, 180], [100, 180]], np.float64),
              np.array([[160, 100], [160, 180], [100, 180], [100, 100]], np.float64) + [200, 0]):
        canvas = np.full((300, 400, 3), 100, np.uint8)
        size = 18.0
        overlay._check(canvas, overlay._free_mark_centre(q), size, overlay.FREE_COLOUR, 2, disc=True)
        c = np.round(overlay._free_mark_centre(q)).astype(int)
        r = int(size * 0.5)
        crop = canvas[c[1] - r:c[1] + r, c[0] - r:c[0] + r].astype(int)
        glyphs.append(np.abs(crop - overlay.FREE_COLOUR).sum(axis=2) < 60)      # the mark's own pixels
        assert glyphs[-1].sum() > 20
    assert (glyphs[0] & glyphs[1]).sum() / (glyphs[0] | glyphs[1]).sum() > 0.7    # (sub-pixel offsets aside)
    assert glyphs[0][r:, r:].sum() < glyphs[0][:r, r:].sum()        # its long stroke rises to the right


def _row_readings(readings):
    """Face / "none" probabilities for hand-made slots: ``("face", p)`` puts
    ``p`` on bamboo-2 and ``1 - p`` on "none"; ``("none", p)`` the reverse."""
    fp = np.zeros((len(readings), K))
    pn = np.zeros(len(readings))
    for i, (label, p) in enumerate(readings):
        fp[i, FACES.index("bamboo-2")] = p if label == "face" else 1 - p
        pn[i] = 1 - fp[i].sum()
    return fp, pn, np.zeros(len(readings))


def test_pairs_leave_together_so_an_odd_count_turns_the_least_sure_top():
    # 4 slots, tiles leave in pairs: 0, 2 or 4 of them can be missing.  The
    # presence model finds the top tile gone by log-odds 0.5 only while the
    # other readings are sure: one missing tile is impossible, so the top,
    # the least sure decision, stands after all (face from its own window)
    fp, pn, po = probs([("bamboo-1", 0.98), ("bamboo-2", 0.95), ("bamboo-3", 0.97), ("bamboo-2", 0.9)])
    q = np.array([np.nan, np.nan, np.nan, -0.5])
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, settings=MODEL_ONLY, presence_logit=q, removes_in_pairs=True)
    assert [t.present for t in out] == [True, True, True, True]
    assert out[TOP].face == "bamboo-2" and out[TOP].confidence == pytest.approx(UNSEEN_CONFIDENCE * 0.9 / fp[TOP].sum())
    assert out[B].seen == "covered"
    # Word Mahjong clears words of 3 letters or more: any count is possible
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, settings=MODEL_ONLY, presence_logit=q)
    assert [t.present for t in out] == [True, True, True, False]
    # a sure reading (log-odds 3 > parity_max_cost 0.75) stands: say the photo
    # was taken between a player's two picks
    out = reconstruct(LAYOUT, VARIANT, fp, pn, po, settings=MODEL_ONLY, presence_logit=np.array([np.nan] * 3 + [-3.0]),
                      removes_in_pairs=True)
    assert [t.present for t in out] == [True, True, True, False]


def test_parity_changes_only_what_could_legally_have_happened():
    row = Layout("row", (Slot(0, 0, 0), Slot(2, 0, 0), Slot(4, 0, 0), Slot(10, 0, 0)), "test")
    # the weak face (0.6 : 0.4, log-odds 0.41) is pinched between two sure
    # tiles: it cannot have left, so the odd count stays (no sure change)
    fp, pn, po = _row_readings([("face", 0.98), ("face", 0.6), ("face", 0.98), ("none", 0.99)])
    out = reconstruct(row, VARIANT, fp, pn, po, removes_in_pairs=True)
    assert [t.present for t in out] == [True, True, True, False]
    # the same weak face at the end of the row was free: it left with (10,0,0)
    fp, pn, po = _row_readings([("face", 0.6), ("face", 0.98), ("face", 0.98), ("none", 0.99)])
    out = reconstruct(row, VARIANT, fp, pn, po, removes_in_pairs=True)
    assert [t.present for t in out] == [False, True, True, False]
    assert [t.free for t in out] == [None, True, True, None]
    # an empty slot cannot come back where it would pinch an empty neighbour:
    # (2,0,0) is surely empty with a tile on its left, so a tile at (4,0,0)
    # would have pinched it; with no tile on its left, (4,0,0) comes back
    row6 = Layout("row6", (Slot(0, 0, 0), Slot(2, 0, 0), Slot(4, 0, 0), Slot(6, 0, 0), Slot(20, 0, 0), Slot(24, 0, 0)), "t")
    fp, pn, po = _row_readings([("face", 0.98), ("none", 0.99), ("none", 0.6), ("face", 0.98),
                                ("none", 0.99), ("face", 0.98)])
    out = reconstruct(row6, VARIANT, fp, pn, po, removes_in_pairs=True)
    assert [t.present for t in out] == [True, False, False, True, False, True]
    fp, pn, po = _row_readings([("none", 0.99), ("none", 0.99), ("none", 0.6), ("face", 0.98),
                                ("face", 0.98), ("face", 0.98)])
    out = reconstruct(row6, VARIANT, fp, pn, po, removes_in_pairs=True)
    assert [t.present for t in out] == [False, False, True, True, True, True]


def test_removal_odds_of_random_free_pairs():
    from vision.reconstruct import removal_odds
    # a row of three under a tile on its middle, and one tile apart:
    # A (0,0,0)  B (2,0,0)  C (4,0,0),  T (2,0,1) on B,  D (10,0,0).
    # Free at the start: A, C, T, D (B is covered and pinched).  The first
    # pair is 2 of these 4, so each of them is still there with chance 1/2
    # (3 of the 6 pairs leave it), B surely.
    slots = ((0, 0, 0), (2, 0, 0), (4, 0, 0), (2, 0, 1), (10, 0, 0))
    odds = removal_odds(slots, games=4000)
    assert odds.shape == (3, 5)
    assert odds[0].tolist() == [1.0] * 5
    assert odds[1][1] == 1.0
    assert np.allclose(odds[1][[0, 2, 3, 4]], 0.5, atol=0.03)
    # after two pairs one tile is left: B leaves only in the second pair,
    # once T and one of A, C have gone
    assert odds[2].sum() == pytest.approx(1.0)
    assert odds is removal_odds(slots, games=4000)       # cached: one simulation per layout
    assert np.array_equal(odds, removal_odds.__wrapped__(slots, games=4000))   # seeded
    # the same layout with its slots listed in another order: the same odds
    # per slot (the simulation once followed the file's order)
    turned = (4, 2, 0, 3, 1)
    shuffled = removal_odds(tuple(slots[i] for i in turned), games=4000)
    assert np.array_equal(shuffled, odds[:, list(turned)])


def test_the_layout_prior_leans_a_hesitant_top_tile_with_the_game():
    # one stack (0,0,0) under (0,0,1) and seven lone tiles (4k,0,0): tops and
    # lone tiles are free at the start, so late in a game of free pairs a top
    # tile is rarely still there.  The model hesitates (+0.3) about the top
    layout = Layout("stack-and-lone", (Slot(0, 0, 0), Slot(0, 0, 1)) + tuple(Slot(4 * k, 0, 0) for k in range(1, 8)),
                    "test")
    n = len(layout.slots)
    fp, pn, po = probs([("bamboo-1", 0.9)] * n)
    settings = ReconstructSettings(presence_weights=(1.0, 0.0, 0.0, 0.0), presence_prior_weight=0.0,
                                   layout_prior_weight=0.5)

    def logits(lone: float):
        return lambda idx: np.array([0.3 if i == 1 else 2.0 if i == 0 else lone for i in idx])

    # the seven lone tiles read empty (the first judged by the model, being
    # near the stack; the others by the classifier): late in the game, the
    # top goes too
    fp6, pn6, po6 = probs([("bamboo-1", 0.9)] * 2 + [("none", 0.99)] * 7)
    out = reconstruct(layout, VARIANT, fp6, pn6, po6, settings=settings, presence_logit=logits(-5.0))
    assert sum(not t.present for t in out) == 8
    assert not out[1].present and out[0].present and out[0].seen == "face"
    # nothing taken yet: the top stands, and so it does without the prior
    out = reconstruct(layout, VARIANT, fp, pn, po, settings=settings, presence_logit=logits(5.0))
    assert out[1].present and out[0].seen == "covered"
    out = reconstruct(layout, VARIANT, fp6, pn6, po6, settings=MODEL_ONLY, presence_logit=logits(-5.0))
    assert out[1].present


def test_a_tile_on_offset_layers_keeps_every_tile_under_its_support():
    # a pyramid's layers sit half a tile off: C (2,2,2) lies on B (1,1,1),
    # which lies on A (0,0,0); C does not overlap A itself.  C's face is
    # seen, so B is there (covered), and so is A, whatever A's own window
    # shows through (a present tile implies every tile under it)
    layout = Layout("offset", (Slot(0, 0, 0), Slot(1, 1, 1), Slot(2, 2, 2)), "test")
    fp, pn, po = probs([("none", 0.9), ("none", 0.9), ("bamboo-1", 0.95)])
    out = reconstruct(layout, VARIANT, fp, pn, po)
    assert [t.present for t in out] == [True, True, True]
    assert [t.seen for t in out] == ["covered", "covered", "face"]
    assert out[0].confidence == out[1].confidence >= out[2].confidence


@pytest.fixture(scope="module")
def turtle_photos():
    """The Turtle, 30 tiles gone, seen straight down and tilted 25 degrees."""
    from companion import codex
    from vision.reconstruct import recognize
    from vision.synth import SceneSpec, render_scene
    layout = codex.builtin("turtle")
    out = {}
    for tilt in (0.0, 25.0):
        scene = render_scene(SceneSpec("mindful", layout, n_removed=30, tilt_deg=(tilt, tilt)),
                             np.random.default_rng(5))
        out[tilt] = (scene, recognize(scene.image, "mindful", layout))
    return out


def test_straight_down_photo_advises_tilting_the_camera(turtle_photos):
    import dataclasses

    from vision.mat import MatSpec
    from vision.reconstruct import photo_advice
    scene, rec = turtle_photos[0.0]
    assert rec.pose.tilt_deg < 2
    # straight down without --camera the focal length is searched, not measured
    assert rec.pose.camera.source == "searched"
    advice, guessed = rec.advice
    assert advice.startswith("camera nearly overhead (tilt 0 degrees)") and "tilt the camera 10-30 degrees" in advice
    assert guessed.startswith("focal length guessed") and "pass --camera" in guessed
    assert rec.to_json()["advice"] == [advice, guessed]
    # with the true intrinsics only the parallax advice stays
    with_camera = photo_advice(rec.layout, rec.tiles, MatSpec.default(),
                               dataclasses.replace(rec.pose, camera=scene.truth.camera.camera()))
    assert with_camera == (advice,)
    # a focal length estimated from the mat within 6 degrees of overhead is
    # advised on too; from 25 degrees it is not
    from vision.pose import Camera
    estimated = Camera(rec.pose.camera.K, rec.pose.camera.dist, rec.pose.camera.image_size, "estimated")
    assert photo_advice(rec.layout, rec.tiles, MatSpec.default(),
                        dataclasses.replace(rec.pose, camera=estimated))[1] == guessed
    tilted = turtle_photos[25.0][1]
    assert tilted.pose.camera.source == "estimated" and tilted.advice == ()
    # tilted 25 degrees every stack shows its height: nothing to advise
    assert turtle_photos[25.0][1].advice == ()
    # a pose on 3 markers asks for the markers to be uncovered
    few = dataclasses.replace(turtle_photos[25.0][1].pose, n_markers=3)
    assert photo_advice(rec.layout, turtle_photos[25.0][1].tiles, MatSpec.default(), few) == (
        "only 3 mat markers seen: keep hands and tiles off the markers for a surer pose",)


def test_a_mat_file_whose_tiles_are_not_on_the_table_is_named_first(turtle_photos):
    # a break-test, session 56: a hand-made mat.json giving tiles of 28 x 38
    # mm for the standard tiles on the table read a photo with most slots
    # off their tiles, and the advice blamed a hand.  The same file's tiles
    # at the standard size, or the standard file, give no such advice
    import dataclasses

    from vision.mat import MatSpec
    from vision.reconstruct import recognize
    scene, rec = turtle_photos[25.0]
    small = dataclasses.replace(MatSpec.default(), tile_mm=(28.0, 38.0, 20.0))
    wrong = recognize(scene.image, "mindful", rec.layout, spec=small)
    assert wrong.advice[0] == ("the mat file gives tiles of 28 x 38 x 20 mm, not the standard 30 x 40 x 20 mm, "
                               "and the board reads poorly: check its tile_mm against a tile on the table, and "
                               "that the mat was printed from that file")
    assert rec.advice == () and not any("tile_mm" in a for a in rec.advice)


def test_a_camera_file_the_markers_fit_poorly_is_advised_on(turtle_photos):
    import dataclasses

    from vision.mat import MatSpec
    from vision.pose import Camera
    from vision.reconstruct import photo_advice
    scene, rec = turtle_photos[25.0]
    given = Camera(rec.pose.camera.K, rec.pose.camera.dist, (1280, 720), "calibrated")
    fits = dataclasses.replace(rec.pose, camera=given, reprojection_px=1.6)    # the bench's worst true camera
    assert photo_advice(rec.layout, rec.tiles, MatSpec.default(), fits) == ()
    misfit = dataclasses.replace(fits, reprojection_px=4.65)      # a newcomer's file from another camera
    assert photo_advice(rec.layout, rec.tiles, MatSpec.default(), misfit) == (
        "the mat's markers fit the camera file poorly (reprojection error 4.7 px): check that --camera was "
        "calibrated with this camera, at this resolution and zoom",)
    # without a camera file the same error is the guessed lens's, not the file's
    assert photo_advice(rec.layout, rec.tiles, MatSpec.default(),
                        dataclasses.replace(rec.pose, reprojection_px=4.65)) == ()


def test_a_camera_file_with_another_focal_length_is_advised_on_though_the_markers_fit_it(turtle_photos):
    # the markers of a planar mat fit a wrong focal length well: a newcomer's
    # file 25 % short fitted with 0.88 px and drew no advice, while 14
    # readings went wrong outside the marked slots (session 36)
    import dataclasses

    from vision.mat import MatSpec
    from vision.pose import Camera, markers_focal_px
    from vision.reconstruct import photo_advice
    scene, rec = turtle_photos[25.0]
    K = rec.pose.camera.K
    true_f = float(scene.truth.camera.K[0, 0])
    right = dataclasses.replace(rec.pose, camera=Camera(K, np.zeros(5), (1280, 720), "calibrated"))
    assert markers_focal_px(right) == pytest.approx(true_f, rel=0.03)
    assert photo_advice(rec.layout, rec.tiles, MatSpec.default(), right) == ()
    short = K.copy()
    short[0, 0] *= 0.75
    short[1, 1] *= 0.75
    wrong = dataclasses.replace(right, camera=Camera(short, np.zeros(5), (1280, 720), "calibrated"))
    f_file, est = (short[0, 0] + short[1, 1]) / 2, markers_focal_px(wrong)
    assert est == pytest.approx(true_f, rel=0.03)         # the markers' own, whatever the file says
    assert photo_advice(rec.layout, rec.tiles, MatSpec.default(), wrong) == (
        f"the camera file does not match the mat's markers (its focal length {f_file:.0f} px, theirs {est:.0f} "
        "px): check that --camera was calibrated with this camera, at this resolution and zoom (or leave "
        "--camera out)",)
    # not from a view nearly overhead, nor from a pose on few markers: the
    # markers' own focal length is unsure there (up to 95 % and 24 % off)
    for pose in (dataclasses.replace(wrong, n_markers=5), dataclasses.replace(wrong, rvec=np.zeros(3))):
        assert not any("focal length" in a for a in photo_advice(rec.layout, rec.tiles, MatSpec.default(), pose))


def test_a_wrong_tile_set_or_an_empty_read_is_advised_to_check_the_options(turtle_photos):
    import dataclasses

    from vision.mat import MatSpec
    from vision.reconstruct import UNSURE_BELOW, photo_advice, recognize
    scene, rec = turtle_photos[25.0]
    shown = [t for t in rec.tiles if t.seen == "face"]
    assert len(shown) > 40 and sum(t.confidence < UNSURE_BELOW for t in shown) < len(shown) / 10
    # the Mindful photo read as Word Mahjong: nearly every face unsure
    (advice,) = recognize(scene.image, "word", rec.layout).advice
    assert advice.startswith("most faces read unsurely (")
    # ... and the model, asked over all four sets, says whose faces they are
    assert advice.endswith("and most look like Mindful Mahjong tiles: check --variant (--variant mindful?)")
    # without that answer, the advice names the options to check
    unsure = recognize(scene.image, "word", rec.layout)
    assert photo_advice(rec.layout, unsure.tiles, MatSpec.default(), unsure.pose) == (
        advice.split(" and most")[0] + ": check that --variant names the tile set on the table and --layout "
        "the layout, and that the photo is sharp and evenly lit",)
    # nothing found on any slot: a cleared mat, or the wrong layout
    cleared = [dataclasses.replace(t, present=False, face=None, free=None, seen="empty") for t in rec.tiles]
    assert photo_advice(rec.layout, cleared, MatSpec.default(), rec.pose) == (
        "no tile found for sure on the slots of layout 'turtle': if tiles stand on the mat, check --layout "
        "(and --mat), and that the mat was printed at 100 % (a printer's \"fit to page\" shrinks it: its grid "
        "must measure 540 x 320 mm)",)
    # a very dark or over-exposed photo says so instead (a break-test's dark
    # colour photo was called black and white, and "check --layout")
    assert photo_advice(rec.layout, cleared, MatSpec.default(), rec.pose, colourless=True, exposed="dark") == (
        "the photo is very dark: light the table, or let the camera expose longer",)
    assert photo_advice(rec.layout, unsure.tiles, MatSpec.default(), unsure.pose, exposed="bright") == (
        "the photo is over-exposed (most of the board white): less light on the table, or a shorter exposure",)
    # two tiles read, both unsure (0.13 and 0.06): still nothing found for sure
    faint = list(cleared)
    faint[0] = dataclasses.replace(rec.tiles[0], confidence=0.13)
    faint[5] = dataclasses.replace(rec.tiles[5], confidence=0.06)
    assert [a.split(" ")[0] for a in photo_advice(rec.layout, faint, MatSpec.default(), rec.pose)] == ["no"]
    # seen straight down, a cleared board raises no question about stacks:
    # only the guessed focal length and the empty read are advised on
    overhead = turtle_photos[0.0][1]
    cleared = [dataclasses.replace(t, present=False, face=None, free=None, seen="empty") for t in overhead.tiles]
    advice = photo_advice(overhead.layout, cleared, MatSpec.default(), overhead.pose)
    assert [a.split(" ")[0] for a in advice] == ["focal", "no"]
    # slots read hidden with nothing in front, the focal length guessed: the
    # guess comes first (what stands in front follows the camera; a
    # break-test's upright phone photo was told of a hand first)
    advice = photo_advice(overhead.layout, cleared, MatSpec.default(), overhead.pose, covered=13)
    assert [a.split(" ")[0] for a in advice] == ["focal", "13", "no"]


def test_tiles_where_the_layout_has_no_slot_are_advised_on():
    # a Twin Hearts board read as Cupid's Citadel: few tiles land on its
    # slots, and faces stand on cells it does not use
    from companion import codex
    from vision.faces import TileClassifier
    from vision.mat import MatSpec
    from vision.reconstruct import STRAY_MIN, recognize, stray_tiles
    from vision.synth import SceneSpec, render_scene

    right, wrong = codex.builtin("twin-hearts"), codex.builtin("cupids-citadel")
    scene = render_scene(SceneSpec("love", right, n_removed=30, tilt_deg=(10, 35)), np.random.default_rng(3))
    rec = recognize(scene.image, "love", wrong)
    stray = [a for a in rec.advice if "has no slot" in a]
    assert len(stray) == 1 and stray[0].startswith("faces found on ")
    assert stray[0].endswith(" mat cells where layout 'cupids-citadel' has no slot: check --layout (and --mat)")
    assert int(stray[0].split()[3]) >= STRAY_MIN
    assert sum(t.present for t in rec.tiles) < 0.4 * len(wrong.slots)
    # read with its own layout: no face off its slots
    assert stray_tiles(scene.image, "love", right, MatSpec.default(), rec.pose, TileClassifier()) == 0


def test_a_layout_one_tile_off_the_board_is_advised_on_before_a_hand():
    # a break-test read the built-in Turtle with KMahjongg's default.layout
    # (the same Turtle one tile to the left): 80-116 of 144 tiles read
    # present, with advice on a hand over the board at most; its edge slots
    # fall beside the tiles and read hidden, and the tiles off its slots show
    from companion import codex
    from companion.layouts import Layout, Slot
    from vision.reconstruct import STRAY_MIN, recognize
    from vision.synth import SceneSpec, render_scene

    turtle = codex.builtin("turtle")
    off = Layout("turtle-off", tuple(Slot(s.x - 2, s.y, s.z) for s in turtle.slots))
    scene = render_scene(SceneSpec("love", turtle, n_removed=20, tilt_deg=(10, 35)), np.random.default_rng(0))
    rec = recognize(scene.image, "love", off)
    assert sum(t.present for t in rec.tiles) >= 0.4 * len(off.slots)       # the old trigger never fired
    assert rec.advice[0].startswith("faces found on ") and rec.advice[0].endswith(
        " mat cells where layout 'turtle-off' has no slot: check --layout (and --mat)")
    assert int(rec.advice[0].split()[3]) >= STRAY_MIN
    assert "a hand over the board" in rec.advice[1]
    assert not any("has no slot" in a for a in recognize(scene.image, "love", turtle).advice)


def test_a_side_reads_bare_when_all_its_edge_slots_on_the_mat_read_empty():
    from companion.layouts import Layout, Slot
    from vision.reconstruct import SlotState, empty_side

    # three tiles by two, one raised over the left column's seam
    layout = Layout("block", ((0, 0, 0), (2, 0, 0), (4, 0, 0), (0, 2, 0), (2, 2, 0), (4, 2, 0), (0, 1, 1)))

    def read(*gone):
        return [SlotState(s, Slot(*s) not in gone, None, 0.9, None, "empty") for s in layout.slots]

    assert not empty_side(layout, read())
    # the left column gone, the raised tile standing: a bare side (raised slots do not count)
    assert empty_side(layout, read((0, 0, 0), (0, 2, 0)))
    # one of its two tiles left: not bare; the top row gone: bare
    assert not empty_side(layout, read((0, 0, 0)))
    assert empty_side(layout, read((0, 0, 0), (2, 0, 0), (4, 0, 0)))
    # a side of one slot is no sign: a single tile's row
    single = Layout("single", ((0, 0, 0), (2, 0, 0)))
    assert not empty_side(single, [SlotState(s, i == 1, None, 0.9, None, "empty")
                                   for i, s in enumerate(single.slots)])


def test_a_full_board_a_tile_off_its_layout_is_advised_on_by_its_bare_side():
    # Sprint 2-layer moved a tile right on the mat: 108 of 144 slots read
    # present (past the check of every free cell), its left edge slots read
    # bare, and the board's right column stands beside the layout
    from companion import codex
    from companion.layouts import Layout, Slot
    from vision.reconstruct import STRAY_CHECK_BELOW, STRAY_MIN, empty_side, recognize
    from vision.synth import SceneSpec, render_scene

    board = codex.builtin("sprint-2layer")
    off = Layout("sprint-off", tuple(Slot(s.x + 2, s.y, s.z) for s in board.slots))
    scene = render_scene(SceneSpec("candy", board, n_removed=30, tilt_deg=(15, 30)), np.random.default_rng(1))
    rec = recognize(scene.image, "candy", off)
    assert sum(t.present for t in rec.tiles) >= STRAY_CHECK_BELOW * len(off.slots)
    assert empty_side(off, rec.tiles)
    (said,) = [a for a in rec.advice if "has no slot" in a]
    assert said.startswith("faces on ") and said.endswith(
        " mat cells just past the left edge of layout 'sprint-off', where it has no slot, while its right edge "
        "reads bare: tiles set aside there, or is the board a tile off the layout? (check --layout and --mat)")
    assert int(said.split()[2]) >= STRAY_MIN
    assert not any("hand" in a for a in rec.advice)
    assert not any("has no slot" in a for a in recognize(scene.image, "candy", board).advice)


def test_a_cropped_photo_is_advised_on_as_fitting_no_camera_centred_on_it():
    # a photo cut to the mat's right edge keeps every marker, but the camera
    # it assumes (centred on the picture) projects heights wrongly; a
    # break-test's crops and screenshots read with confident mistakes and
    # no word, or with advice on a hand
    from companion import codex
    from vision.mat import MatSpec
    from vision.pose import CENTRED_MISFIT_MAX, centred_camera_misfit, estimate_pose
    from vision.reconstruct import recognize
    from vision.synth import SceneSpec, render_scene

    layout = codex.builtin("sprint-2layer")
    scene = render_scene(SceneSpec("love", layout, n_removed=20, tilt_deg=(20, 30)), np.random.default_rng(1))
    whole = estimate_pose(scene.image, MatSpec.default())
    right = int(whole.image_points[:, 0].max()) + 10
    cropped = np.ascontiguousarray(scene.image[:, :right])
    assert cropped.shape[1] < 0.7 * scene.image.shape[1]
    assert centred_camera_misfit(whole) < 0.05 < CENTRED_MISFIT_MAX < centred_camera_misfit(
        estimate_pose(cropped, MatSpec.default()))
    advice = recognize(cropped, "love", layout).advice
    assert advice[0] == ("the mat's markers fit no camera centred on the picture (a cropped photo, a screenshot, "
                         "or a strong wide-angle lens?), so stack heights rest on a wrong guess of the camera: "
                         "give the camera's whole photo, or calibrate the camera once (companion calibrate) and "
                         "pass --camera")
    assert not any("centred" in a for a in recognize(scene.image, "love", layout).advice)


def test_slots_off_the_picture_are_counted_as_the_overlay_draws_them():
    # a photo cut through the front row: faces whose window (face and
    # margin) runs off the picture read hidden too, and the advice counted
    # only the faces themselves (a break-test's zoomed photo: 2 said, 5 drawn)
    from companion import codex
    from vision.mat import MatSpec
    from vision.pose import estimate_pose, project_slot_faces
    from vision.reconstruct import recognize
    from vision.synth import SceneSpec, render_scene

    layout = codex.builtin("sprint-flat")          # no stacks: nothing else hides a face
    scene = render_scene(SceneSpec("love", layout, n_removed=10, tilt_deg=(15, 25)), np.random.default_rng(3))
    q = project_slot_faces(layout.slots, MatSpec.default(), estimate_pose(scene.image, MatSpec.default()))
    low = int(np.argmax(q[..., 1].max(axis=1)))
    cut = int(q[low, :, 1].max() - 0.3 * (q[low, :, 1].max() - q[low, :, 1].min()))
    rec = recognize(np.ascontiguousarray(scene.image[:cut]), "love", layout)
    q = project_slot_faces(layout.slots, MatSpec.default(), rec.pose)
    hidden = [t for t in rec.tiles if t.seen == "occluded"]
    assert len(hidden) == 9 > int((q[..., 1].max(axis=1) > cut - 1).sum()) == 8
    assert all(t.present and t.face is None and t.confidence <= 0.5 for t in hidden)
    assert rec.advice[-1] == ("9 slots of the layout lie partly or wholly outside the picture (reported as "
                              "standing, face unseen): keep the whole board in view")


def test_faces_too_small_to_read_are_all_marked_unsure():
    # a 256 x 144 thumbnail (a break-test's, 320 x 180 with faces 5 px wide,
    # read 26 slots wrong, 17 of them at 0.7 or more, advice on the markers first)
    import cv2
    from companion import codex
    from vision.reconstruct import UNREADABLE_CONFIDENCE, recognize, unsure_slots
    from vision.synth import SceneSpec, render_scene

    layout = codex.builtin("turtle")
    scene = render_scene(SceneSpec("love", layout, n_removed=40, tilt_deg=(15, 25)), np.random.default_rng(2))
    thumb = cv2.resize(scene.image, (256, 144), interpolation=cv2.INTER_AREA)
    rec = recognize(thumb, "love", layout)
    assert rec.advice[0].startswith("tiles only ") and " px wide in the picture, too small to read (every " \
        "reading is marked unsure)" in rec.advice[0]
    assert int(rec.advice[0].split()[2]) < 7
    assert not any("no tile found for sure" in a or "centred" in a for a in rec.advice)
    assert max(t.confidence for t in rec.tiles) <= UNREADABLE_CONFIDENCE
    shown = [i for i, t in enumerate(rec.tiles) if t.seen == "face"]
    assert shown and set(shown) <= set(unsure_slots(rec.tiles))
    # the photo itself: read as before
    assert max(t.confidence for t in recognize(scene.image, "love", layout).tiles) > 0.9


def test_a_board_half_a_tile_off_its_layout_is_advised_on():
    # the mat prints every half-unit cell, so a board begun one cell off is
    # an easy slip: a break-test's full Pagoda of Peace a row higher read 28
    # of 144 slots standing, with advice on the faces' size only
    from companion import codex
    from companion.layouts import Layout, Slot
    from vision.faces import TileClassifier
    from vision.mat import MatSpec
    from vision.reconstruct import OFFSET_MIN_FACES, half_tile_offset, recognize
    from vision.synth import SceneSpec, render_scene

    board = codex.builtin("twin-hearts")
    off = Layout("hearts-off", tuple(Slot(s.x + 1, s.y, s.z) for s in board.slots))
    scene = render_scene(SceneSpec("word", board, n_removed=20, tilt_deg=(15, 30)), np.random.default_rng(0))
    rec = recognize(scene.image, "word", off)
    assert rec.advice[0].startswith("the tiles stand half a tile off the slots of layout 'hearts-off' (faces on ")
    assert rec.advice[0].endswith(" slots moved half a tile left or right, on 0 where they are): lay the board on "
                                  "the mat's cells as `companion layouts show hearts-off` draws it, or check "
                                  "--layout")
    assert not any(a.startswith("no tile found for sure") or "hand" in a for a in rec.advice)      # (explained)
    # a layout read from a file is shown by its path (`layouts show hearts-off` names no layout)
    from_file = Layout("hearts-off", off.slots, source="/tables/my layouts/hearts-off.json")
    assert recognize(scene.image, "word", from_file).advice[0].endswith(
        "lay the board on the mat's cells as `companion layouts show '/tables/my layouts/hearts-off.json'` draws "
        "it, or check --layout")
    move, moved, here = half_tile_offset(scene.image, "word", off, MatSpec.default(), rec.pose, TileClassifier())
    assert move in ((-1, 0), (1, 0)) and moved >= OFFSET_MIN_FACES and here == 0
    # read with its own layout: its faces stand where its slots are
    right = recognize(scene.image, "word", board)
    assert half_tile_offset(scene.image, "word", board, MatSpec.default(), right.pose, TileClassifier()) is None
    assert not any("half a tile" in a for a in right.advice)


def test_a_tilted_camera_looking_straight_down_on_some_stacks_is_advised_to_tilt_further():
    # tilted 13 degrees, the camera still looks straight down on part of the
    # Turtle: "nearly overhead" would be wrong, "tilt further" is the advice
    from companion import codex
    from vision.reconstruct import recognize
    from vision.synth import SceneSpec, render_scene

    layout = codex.builtin("turtle")
    scene = render_scene(SceneSpec("mindful", layout, n_removed=30, tilt_deg=(13, 13)), np.random.default_rng(3))
    rec = recognize(scene.image, "mindful", layout)
    assert rec.pose.tilt_deg > 10
    (advice,) = rec.advice
    assert "stacked slots show almost no parallax (the camera, tilted 13 degrees, looks straight down on them)" \
        in advice
    assert advice.endswith("move the camera further to one side of the board, or tilt it more, for a surer reading")


def test_slots_outside_the_picture_are_advised_on(turtle_photos):
    # the same pose for a picture cut to its left half: the slots right of
    # x = 639 px are not in it
    import dataclasses

    from vision.mat import MatSpec
    from vision.pose import Camera, project_slot_faces
    from vision.reconstruct import photo_advice
    _, rec = turtle_photos[25.0]
    cam = rec.pose.camera
    half = dataclasses.replace(rec.pose, camera=Camera(cam.K, cam.dist, (640, cam.image_size[1]), cam.source))
    q = project_slot_faces(rec.layout.slots, MatSpec.default(), rec.pose)
    cut = int((q[..., 0].max(axis=1) > 639).sum())
    assert 0 < cut < len(rec.layout.slots)
    advice = [a for a in photo_advice(rec.layout, rec.tiles, MatSpec.default(), half) if "outside" in a]
    assert advice == [f"{cut} slots of the layout lie partly or wholly outside the picture (reported as standing, "
                      "face unseen): keep the whole board in view"]


def test_a_far_camera_is_advised_to_come_closer(turtle_photos):
    import cv2

    from vision.reconstruct import LOW_FACE_PX, recognize
    scene, rec = turtle_photos[25.0]
    assert rec.advice == ()                       # faces about 36 px wide: nothing to say
    # the same view at half the resolution: faces about 18 px wide
    small = cv2.resize(scene.image, (640, 360), interpolation=cv2.INTER_AREA)
    out = recognize(small, "mindful", rec.layout)
    (advice,) = out.advice
    assert advice.startswith("tiles only 18 px wide in the picture: bring the camera closer")
    assert f"{LOW_FACE_PX:.0f} px or more" in advice


def test_unsure_slots_are_faces_and_empty_slots_read_under_the_threshold():
    # A face at 0.65 and a slot judged empty at 0.55 are unsure; a face at
    # 0.95, a tile under another (covered) and an unseen face (occluded,
    # already null) are not
    from vision.reconstruct import UNSURE_BELOW, SlotState, unsure_slots

    assert UNSURE_BELOW == 0.7
    s = LAYOUT.slots
    states = (SlotState(s[0], True, "bamboo-1", 0.65, True, "face"),
              SlotState(s[1], True, None, 0.40, None, "covered"),
              SlotState(s[2], True, None, 0.50, True, "occluded"),
              SlotState(s[3], False, None, 0.55, None, "empty"))
    assert unsure_slots(states) == [0, 3]
    assert unsure_slots(states, below=0.6) == [3]
    # on a flat row nothing can hide a tile: an empty slot read at 0.55 is no
    # question, a face read at 0.65 still is
    flat = (Slot(0, 0, 0), Slot(2, 0, 0))
    assert unsure_slots((SlotState(flat[0], False, None, 0.55, None, "empty"),
                         SlotState(flat[1], True, "bamboo-1", 0.65, True, "face"))) == [1]
    from vision.reconstruct import Recognition
    assert Recognition(VARIANT, LAYOUT, states).to_json()["unsure"] == [[0, 0, 0], [2, 0, 1]]
    sure = (SlotState(s[0], True, "bamboo-1", 0.95, True, "face"),) + states[1:3] + (
        SlotState(s[3], False, None, 0.9, None, "empty"),)
    assert unsure_slots(sure) == []


def test_overlay_marks_unsure_readings_with_a_badge_once_per_stack(monkeypatch):
    # slot 0: a face read at 0.6 -> badge near its top-right corner; slot 3 (on
    # top of slot 1) judged empty at 0.55 -> badge; slot 1's face, read at 0.6
    # right under it in a view from straight above, shares that badge; slot 2
    # is sure -> none
    import vision.overlay as overlay
    from vision.reconstruct import Recognition, SlotState

    s = LAYOUT.slots
    states = (SlotState(s[0], True, "bamboo-1", 0.6, True, "face"),
              SlotState(s[1], True, "bamboo-2", 0.6, False, "face"),
              SlotState(s[2], True, "bamboo-3", 0.97, True, "face"),
              SlotState(s[3], False, None, 0.55, None, "empty"))
    quads = np.array([[[10 + 60 * k, 20], [50 + 60 * k, 20], [50 + 60 * k, 75], [10 + 60 * k, 75]]
                      for k in range(3)] + [[[71, 19], [111, 19], [111, 74], [71, 74]]], np.float32)
    seen = _spy_legend(monkeypatch, overlay)
    img = overlay.draw_overlay(np.full((100, 200, 3), 128, np.uint8),
                               Recognition(VARIANT, LAYOUT, states, quads))
    assert seen["n_unsure"] == 3           # readings; two of them share a badge
    k = overlay.overlay_scale(100, 200)
    assert k == 8                          # (a 100 px high photo is drawn 8 times larger)

    def badge_px(x0, x1, y0, y1):
        sub = img[y0 * k:y1 * k, x0 * k:x1 * k].astype(int)
        return int((np.abs(sub - np.array(overlay.UNSURE_COLOUR)).sum(axis=2) < 60).sum())

    assert badge_px(32, 52, 18, 40) > 10       # slot 0: top-right corner
    assert badge_px(92, 114, 17, 40) > 10      # the stack of slots 1 and 3
    assert badge_px(150, 175, 18, 40) == 0     # slot 2: sure


def test_slots_to_check_take_in_the_stack_under_a_marked_tile():
    # slot 3 stands on slot 1 and its face is unsure: both are to check; slot 2's
    # face went unseen (its "?" mark); slot 0 is sure
    from companion.rules import Geometry
    from vision.reconstruct import SlotState, slots_to_check

    s = LAYOUT.slots
    g = Geometry.of(LAYOUT)
    assert g.covers[3] == (1,)
    states = (SlotState(s[0], True, "bamboo-1", 0.95, True, "face"),
              SlotState(s[1], True, None, 0.95, None, "covered"),
              SlotState(s[2], True, None, 0.5, True, "occluded"),
              SlotState(s[3], True, "bamboo-2", 0.6, True, "face"))
    assert slots_to_check(states, g) == [1, 2, 3]
    sure_top = states[:3] + (SlotState(s[3], True, "bamboo-2", 0.9, True, "face"),)
    assert slots_to_check(sure_top, g) == [2]


def _art_fit_of(shrink: float, settings: ReconstructSettings = ReconstructSettings(), placement: bool = False):
    from tests.vision.synthetic_views import printed_faces_view
    from vision.reconstruct import photo_art_fit
    grey, slots, faces, pose, spec = printed_faces_view(shrink, tilt_deg=10.0)
    layout = Layout("eight", tuple(slots), "test")
    labels = [f.id for f in tileset("mindful").faces]
    fp = np.zeros((len(slots), len(labels)))
    for i, f in enumerate(faces):
        fp[i, labels.index(f)] = 0.97                     # sure faces
    return photo_art_fit(grey, "mindful", layout, fp, labels, np.ones(len(slots), bool), spec, pose, settings,
                         placement=placement)


def test_the_photos_art_scale_is_read_from_sure_faces_on_layer_0():
    """Faces printed at 95 %: the probe of 4 lies outside the 1.5 % tolerance,
    so all 8 faces are sized and their median is the scale."""
    fit = _art_fit_of(0.95)
    assert fit.scale == pytest.approx(0.95, abs=0.01)
    assert fit.faces == 8
    assert fit.spread_mm is None                          # the spread was not asked for


def test_faces_printed_at_the_arts_size_stop_at_the_probe_and_read_1():
    fit = _art_fit_of(1.0)
    assert fit.scale == 1.0 and fit.faces == 4
    # with the tolerance at 0 all eight are sized, and they read within 1 %
    exact = _art_fit_of(1.0, ReconstructSettings(art_scale_tolerance=0.0))
    assert exact.faces == 8 and exact.scale == pytest.approx(1.0, abs=0.01)


def test_faces_printed_small_are_located_at_their_own_size():
    """The faces lie squarely on their slots.  Located at the photo's scale,
    all 8 are found and their spread is hundredths of a millimetre; with the
    scale left out, the art 5 % too large finds 7 and spreads them 0.5 mm,
    a fifth of what hand-placed tiles show."""
    fit = _art_fit_of(0.95, placement=True)
    assert fit.faces == 8 and fit.spread_mm < 0.1
    off = _art_fit_of(0.95, ReconstructSettings(art_scale=False), placement=True)
    assert off.scale is None
    assert off.spread_mm > 0.3


def _fit_with(monkeypatch, fits, settings=ReconstructSettings(), n=40, placement=True):
    """photo_art_fit on ``n`` sure faces on layer 0 whose face_scale answers
    are ``fits(k)`` (k from 1); returns the fit and the scales face_offset was
    asked at."""
    import vision.artcheck as ac
    from vision.reconstruct import photo_art_fit
    asked = []
    monkeypatch.setattr(ac, "face_scale", lambda *a, **k: fits(len(asked.append(None) or asked)))
    offset_scales = []
    monkeypatch.setattr(ac, "face_offset", lambda *a, scale=1.0, **k: offset_scales.append(scale) or (0.3, 0.4, 0.9))
    layout = Layout("flat", tuple(Slot(2 * (k % 10), 4 * (k // 10), 0) for k in range(n)), "test")
    fp = np.tile([0.97, 0.03], (n, 1))
    fit = photo_art_fit(None, "mindful", layout, fp, ["a", "b"], np.ones(n, bool), None, None, settings, placement)
    return fit, len(asked), offset_scales


def test_the_art_fit_caps_its_tries_and_takes_no_scale_from_too_few_faces(monkeypatch):
    from vision.artcheck import FaceFit
    # every face too weak to size: 2 x art_scale_faces tries, then located at 1
    fit, tries, at = _fit_with(monkeypatch, lambda k: FaceFit(1.0, 0.3, 0.0, 0.0))
    assert tries == 16 and fit.scale is None and set(at) == {1.0} and fit.spread_mm is not None
    # one face sized at 0.92 among weak ones: no scale, and the rest are
    # located at the art's size, not at that one face's
    fit, tries, at = _fit_with(monkeypatch, lambda k: FaceFit(0.92, 0.9 if k == 1 else 0.3, 0.0, 0.0))
    assert fit.scale is None and set(at) == {1.0}
    # enough faces: the rest are located at their median
    fit, tries, at = _fit_with(monkeypatch, lambda k: FaceFit(0.95, 0.9, 0.3, 0.4))
    assert tries == 8 and fit.scale == 0.95 and set(at) == {0.95}


def test_the_art_fit_with_no_minimum_of_faces_takes_no_median_of_nothing(monkeypatch):
    import warnings

    from vision.artcheck import FaceFit
    from vision.reconstruct import ArtFit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit, _, _ = _fit_with(monkeypatch, lambda k: FaceFit(1.0, 0.9, 0.0, 0.0), n=0,
                              settings=ReconstructSettings(placement_min_faces=0))
    assert fit == ArtFit(None, None, 0)


class _EvenPresence:
    """A presence model with no opinion: log-odds 0 for every slot asked."""

    def slot_logits(self, image_bgr, slots, spec, pose):
        return np.zeros(len(slots), np.float32)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_faces_size_alone_tells_both_stacks_heights_seen_straight_down(seed):
    """Two stacks of two near the middle of the mat, the camera right above
    them (no parallax): with a presence model of no opinion and every other
    height cue off, the size evidence (the lower face looks 2-3 % smaller)
    decides whether each top tile stands; without it both tops read the
    same however the stacks stand."""
    from vision.artcheck import preload
    from vision.faces import TileClassifier
    from vision.reconstruct import recognize
    from vision.synth import SceneSpec, render_scene
    from vision.synth.scene import Augment
    slots = (Slot(14, 6, 0), Slot(14, 6, 1), Slot(18, 6, 0), Slot(18, 6, 1))
    layout = Layout("two-stacks", slots, "test")
    faces = ("circles-5", "bamboo-7", "characters-3", "circles-8")
    aug = Augment(jitter_mm=1.0, jitter_deg=2.0, flip=0.5, lighting=0, shadows=0, glare=0, blur=0, noise=0, jpeg=0)
    size_only = ReconstructSettings(presence_weights=(1.0, 0.0, 0.0, 0.0), presence_prior_weight=0.0,
                                    layout_prior_weight=0.0, art_height_weight=0.0, art_parallax_weight=0.0,
                                    art_size_weight=1.0, presence_unsure=0.0)
    blind = ReconstructSettings(**{**size_only.__dict__, "art_size_weight": 0.0})
    clf = TileClassifier()
    preload("mindful")
    reads = {}
    for removed in ((), (slots[1], slots[3])):
        scene = render_scene(SceneSpec("mindful", layout, faces=faces, removed=removed, tilt_deg=(0.0, 0.0),
                                       fill=(0.9, 0.95), augment=aug), np.random.default_rng(seed))
        pose = scene.truth.pose()
        for name, settings in (("size", size_only), ("blind", blind)):
            rec = recognize(scene.image, "mindful", layout, camera=pose.camera, classifier=clf,
                            settings=settings, presence=_EvenPresence())
            reads[name, bool(removed)] = [rec.tiles[i].present for i in (1, 3)]
    assert reads["size", False] == [True, True]
    assert reads["size", True] == [False, False]
    assert reads["blind", False] == reads["blind", True]


@pytest.mark.parametrize("form", ["grey", "grey, one channel", "BGRA"])
def test_recognize_refuses_a_photo_that_is_not_bgr_as_bad_input(form):
    """The mat's markers are found in a grey or BGRA array too, but the
    tiles' crops are cut as three channels: such a photo is refused as
    BadInput (documented), not left to fail as a ValueError in the crops."""
    import cv2

    from companion.errors import BadInput
    from vision.faces import TileClassifier
    from vision.reconstruct import recognize
    from vision.synth import SceneSpec, render_scene
    layout = Layout("two-stacks", (Slot(14, 6, 0), Slot(14, 6, 1), Slot(18, 6, 0), Slot(18, 6, 1)), "test")
    scene = render_scene(SceneSpec("mindful", layout, tilt_deg=(0.0, 0.0), fill=(0.9, 0.95)),
                         np.random.default_rng(1))
    image = {"grey": cv2.cvtColor(scene.image, cv2.COLOR_BGR2GRAY),
             "grey, one channel": cv2.cvtColor(scene.image, cv2.COLOR_BGR2GRAY)[..., None],
             "BGRA": cv2.cvtColor(scene.image, cv2.COLOR_BGR2BGRA)}[form]
    clf = TileClassifier()
    assert len(recognize(scene.image, "mindful", layout, classifier=clf).tiles) == 4
    with pytest.raises(BadInput, match="BGR"):
        recognize(image, "mindful", layout, classifier=clf)


def test_a_board_the_free_rule_cannot_reach_is_mended_cheaply():
    row = Layout("row5", tuple(Slot(2 * i, 0, 0) for i in range(5)), "test")
    # X . . X X with the two gaps read weakly (none 0.7, log-odds 0.85 each)
    # between sure faces: neither gap was ever free, and the pinch rule alone
    # (one gap between two tiles) does not see it.  Mended: both stand, for
    # 1.7 of log-odds (under reach_max_cost 4), unseen (their windows showed
    # no face surely enough: 0.3 < presence_face_min)
    fp, pn, po = _row_readings([("face", 0.98), ("none", 0.7), ("none", 0.7), ("face", 0.98), ("face", 0.98)])
    out = reconstruct(row, VARIANT, fp, pn, po, only_free_left=True)
    assert [t.present for t in out] == [True] * 5
    assert [(t.face, t.seen, t.confidence) for t in out[1:3]] == [(None, "occluded", UNSEEN_CONFIDENCE)] * 2
    assert [t.free for t in out] == [True, False, False, False, True]
    # the referee reads frames of games that may break the rules (a blocked
    # tile lifted is a penalty to see, not a misreading): left as read
    out = reconstruct(row, VARIANT, fp, pn, po)
    assert [t.present for t in out] == [True, False, False, True, True]
    # tiles leave a row from its ends only: X . . . X cannot be reached
    # either.  Sure gaps (none 0.99, log-odds 4.6 each) and a weak face at
    # the row's end (0.6, log-odds 0.41): the cheaper mend is that this tile
    # left first
    fp, pn, po = _row_readings([("face", 0.6), ("none", 0.99), ("none", 0.99), ("face", 0.98), ("face", 0.98)])
    out = reconstruct(row, VARIANT, fp, pn, po, only_free_left=True)
    assert [t.present for t in out] == [False, False, False, True, True]
    assert [t.free for t in out] == [None, None, None, True, True]
    # in a game of pairs three missing tiles cost parity_max_cost (0.75)
    # more: 1.16, still the cheapest
    out = reconstruct(row, VARIANT, fp, pn, po, only_free_left=True, removes_in_pairs=True)
    assert [t.present for t in out] == [False, False, False, True, True]
    # everything sure (faces 0.99): no mend under reach_max_cost, the board
    # stays as read; allowed up to 10, the end tile (4.6) goes rather than
    # both gaps coming back (9.2)
    fp, pn, po = _row_readings([("face", 0.99), ("none", 0.99), ("none", 0.99), ("face", 0.99), ("face", 0.99)])
    out = reconstruct(row, VARIANT, fp, pn, po, only_free_left=True)
    assert [t.present for t in out] == [True, False, False, True, True]
    out = reconstruct(row, VARIANT, fp, pn, po, only_free_left=True, settings=ReconstructSettings(reach_max_cost=10))
    assert [t.present for t in out] == [False, False, False, True, True]


def test_exposure_tells_dark_and_over_exposed_photos(turtle_photos):
    from vision.reconstruct import exposure
    scene, _ = turtle_photos[25.0]
    _, rec = turtle_photos[25.0]
    assert exposure(scene.image) is None and exposure(scene.image, rec.quads) is None
    assert exposure((scene.image * 0.1).astype(np.uint8), rec.quads) == "dark"          # 10 % of the light
    assert exposure(np.clip(scene.image * 2.5, 0, 255).astype(np.uint8), rec.quads) == "bright"
    # the board, not the table: a white table round a well-lit board is no over-exposure
    white = scene.image.copy()
    q = np.asarray(rec.quads).reshape(-1, 2)
    x0, y0 = q.min(axis=0).astype(int)
    x1, y1 = q.max(axis=0).astype(int)
    board = white[y0:y1, x0:x1].copy()
    white[:] = 255
    white[y0:y1, x0:x1] = board
    assert exposure(white) == "bright" and exposure(white, rec.quads) is None
    assert exposure(np.zeros((0, 0, 3), np.uint8)) is None and exposure(scene.image.astype(np.float32)) is None
    # with no mat found, the hint on the whole picture: clipped in one channel at least
    from vision.reconstruct import exposure_hint
    assert exposure_hint(scene.image) == ""
    assert exposure_hint(np.clip(scene.image * 2.5, 0, 255).astype(np.uint8)) == (
        "; the picture is mostly white (over-exposed?): less light, or a shorter exposure")
    assert exposure_hint((scene.image * 0.1).astype(np.uint8)).startswith("; the picture is very dark")
    # saturated colour bars (a test pattern) clip a channel in most pixels,
    # but are no over-exposure (a break-test, session 50)
    bars = np.zeros((72, 128, 3), np.uint8)
    for k, c in enumerate([(255, 255, 255), (0, 255, 255), (255, 255, 0), (0, 255, 0), (255, 0, 255),
                           (0, 0, 255), (255, 0, 0), (0, 0, 0)]):
        bars[:, 16 * k:16 * (k + 1)] = c
    assert exposure_hint(bars) == ""


def test_is_colourless_tells_grey_and_jpeg_grey_from_colour():
    import cv2
    from vision.reconstruct import is_colourless
    rng = np.random.default_rng(0)
    grey = (rng.random((120, 160)) * 255).astype(np.uint8)
    assert is_colourless(grey) and is_colourless(grey[:, :, None])
    three = np.repeat(grey[:, :, None], 3, axis=2)
    ok, buf = cv2.imencode(".jpg", three, [cv2.IMWRITE_JPEG_QUALITY, 80])
    assert is_colourless(three) and is_colourless(cv2.imdecode(buf, cv2.IMREAD_COLOR))
    tinted = three.copy()
    tinted[40:80, 40:120, 2] = np.clip(tinted[40:80, 40:120, 2].astype(int) + 30, 0, 255)   # one red patch
    assert not is_colourless(tinted)


def test_a_hand_over_the_board_is_advised_on_and_the_empty_slots_under_it_are_unsure(turtle_photos):
    # a break-test's photo with a hand over the board read 16 standing tiles
    # under it gone, sure up to 0.96, with no advice.  Slots read hidden with
    # no taller tile in front of them show something lying over the board:
    # the empty readings near them are made unsure, and the advice says so
    import re

    from companion import codex
    from vision.reconstruct import UNSURE_BELOW, recognize
    from vision.synth import SceneSpec, render_scene
    layout = codex.builtin("sprint-flat")
    scene = render_scene(SceneSpec("love", layout, tilt_deg=(20, 20), hands=1.0), np.random.default_rng(3))
    assert scene.truth.hand_mask is not None and scene.truth.hand_mask.mean() > 0.1
    rec = recognize(scene.image, "love", layout)
    assert re.fullmatch(r"\d+ slots read hidden with no taller tile in front of them \(a hand over the board, glare "
                        r"or blur\?\), and the slots near them may read empty: take the photo again with hands away, "
                        r"sharp and evenly lit", rec.advice[0]), rec.advice
    standing = np.asarray(scene.truth.present)
    gone = [t for i, t in enumerate(rec.tiles) if standing[i] and not t.present]
    assert all(t.confidence < UNSURE_BELOW for t in gone)
    # without a hand, no such advice, and the readings are as they were
    for _, plain in turtle_photos.values():
        assert not any("read hidden with no taller tile" in a for a in plain.advice)
