"""Tests of the synthetic scene generator (vision/synth)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from companion.codex import builtin
from companion.errors import BadInput
from companion.layouts import Layout, Slot
from companion.rules import Board
from vision.art import render_face
from vision.mat import MatSpec, slot_face_corners_mm
from vision.pose import project_points
from vision.synth import (LABEL_HAND, Augment, Claim, Nudge, Placement, PutBack, SceneSpec, TrueCamera,
                          render_recording, render_scene, write_recording)

SMALL = (640, 360)

# A small pyramid placed in the middle of the mat's 36 x 16 half-unit grid:
# layer 0: a 4 x 2 block (x 14..20, y 6..8) plus one tile at (22, 7) on its right,
# layer 1: (16, 6), (18, 6), (16, 8), (18, 8), layer 2: (17, 7) on top.
# Free at the start (rules: not covered, not pinched): (14,6,0), (14,8,0), (22,7,0), (17,7,2).
PYRAMID = Layout("pyramid", tuple(
    [(14 + 2 * i, 6 + 2 * j, 0) for j in range(2) for i in range(4)] + [(22, 7, 0)]
    + [(16, 6, 1), (18, 6, 1), (16, 8, 1), (18, 8, 1), (17, 7, 2)]))
FREE_AT_START = {Slot(14, 6, 0), Slot(14, 8, 0), Slot(22, 7, 0), Slot(17, 7, 2)}


def overhead_camera(height_mm: float = 600.0, size=(1280, 960), f: float = 1000.0) -> TrueCamera:
    """Straight down over the mat's centre: R = I (image x = mat X, image y = mat Y)."""
    mw, mh = MatSpec.default().size_mm
    K = np.array([[f, 0, (size[0] - 1) / 2], [0, f, (size[1] - 1) / 2], [0, 0, 1]])
    return TrueCamera(K, np.zeros(3), np.array([-mw / 2, -mh / 2, height_mm]), size)


def test_pyramid_free_set_is_as_worked_out():
    board = Board(PYRAMID)
    assert {PYRAMID.slots[i] for i in board.free_indices()} == FREE_AT_START


def test_same_seed_same_scene_other_seed_other_scene():
    spec = SceneSpec("love", PYRAMID, image_size=SMALL, hands=0.5, n_removed=4)
    a = render_scene(spec, np.random.default_rng(11))
    b = render_scene(spec, np.random.default_rng(11))
    c = render_scene(spec, np.random.default_rng(12))
    assert np.array_equal(a.image, b.image)
    assert a.truth.faces == b.truth.faces and a.truth.removed == b.truth.removed
    assert np.array_equal(a.truth.face_corners_px, b.truth.face_corners_px)
    assert np.array_equal(a.truth.visible, b.truth.visible)
    assert not np.array_equal(a.image, c.image)


def test_overhead_corner_worked_by_hand():
    # camera 600 mm above the mat centre (297, 210), f = 1000 px, principal point (639.5, 479.5);
    # slot (14, 6, 0): top face TL at (gx + 15*14, gy + 20*6, -20) = (27 + 210, 50 + 120, -20) mm
    # -> camera (237 - 297, 170 - 210, 600 - 20) = (-60, -40, 580)
    # -> u = 639.5 - 60000/580 = 536.0517, v = 479.5 - 40000/580 = 410.5345
    spec = SceneSpec("mindful", PYRAMID, removed=(), augment=Augment.none(), camera=overhead_camera())
    t = render_scene(spec, np.random.default_rng(0)).truth
    i = PYRAMID.slot_index((14, 6, 0))
    assert t.face_corners_px[i, 0] == pytest.approx((536.0517, 410.5345), abs=1e-3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_truth_corners_are_the_projected_slot_faces(seed):
    layout = builtin("turtle")
    spec = SceneSpec("candy", layout, image_size=SMALL, augment=Augment.none(), n_removed=20)
    t = render_scene(spec, np.random.default_rng(seed)).truth
    expected = project_points(slot_face_corners_mm(layout.slots, t.mat).reshape(-1, 3), t.pose()).reshape(-1, 4, 2)
    assert np.abs(t.slot_corners_px - expected).max() < 1e-6
    assert np.abs(t.face_corners_px - expected).max() < 1e-6   # no jitter: the tiles sit squarely


def test_jitter_within_bounds_and_corners_follow_it():
    spec = SceneSpec("word", PYRAMID, image_size=SMALL, n_removed=0)
    t = render_scene(spec, np.random.default_rng(5)).truth
    assert np.all(np.hypot(t.jitter[:, 0], t.jitter[:, 1]) <= 3.0 + 1e-9)
    assert np.all(np.abs(t.jitter[:, 2]) <= 4.0 + 1e-9)
    assert 0 < t.rotated.sum() < len(PYRAMID)   # flips at random, probability 1/2
    # the drawn corners are the slot's corners turned about the face centre and shifted
    obj = slot_face_corners_mm(PYRAMID.slots, t.mat)
    c = obj[:, :, :2].mean(axis=1, keepdims=True)
    th = np.deg2rad(t.jitter[:, 2])[:, None]
    d = obj[:, :, :2] - c
    moved = obj.copy()
    moved[:, :, 0] = c[..., 0] + np.cos(th) * d[..., 0] - np.sin(th) * d[..., 1] + t.jitter[:, None, 0]
    moved[:, :, 1] = c[..., 1] + np.sin(th) * d[..., 0] + np.cos(th) * d[..., 1] + t.jitter[:, None, 1]
    expected = project_points(moved.reshape(-1, 3), t.pose()).reshape(-1, 4, 2)
    assert np.abs(t.face_corners_px - expected).max() < 1e-6


def _rectified(image, quad, w=60, h=80):
    src = np.float32(quad)
    dst = np.float32([[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]])
    return cv2.warpPerspective(image, cv2.getPerspectiveTransform(src, dst), (w, h), flags=cv2.INTER_AREA)


def _ncc(a, b):
    a = a.astype(np.float64).ravel() - a.mean()
    b = b.astype(np.float64).ravel() - b.mean()
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def test_face_art_is_drawn_on_top_of_its_box_the_right_way_round():
    n = len(PYRAMID)
    rotated = np.zeros(n, bool)
    top = PYRAMID.slot_index((17, 7, 2))
    left = PYRAMID.slot_index((14, 6, 0))
    rotated[left] = True
    faces = tuple(["bamboo-1"] * n)
    faces = faces[:top] + ("dragon-red",) + faces[top + 1:]
    faces = faces[:left] + ("wind-east",) + faces[left + 1:]
    spec = SceneSpec("mindful", PYRAMID, removed=(), augment=Augment.none(), camera=overhead_camera(),
                     faces=faces, placement=Placement(np.zeros((n, 3)), rotated))
    sc = render_scene(spec, np.random.default_rng(1))
    for i, face, turned in ((top, "dragon-red", False), (left, "wind-east", True)):
        patch = _rectified(sc.image, sc.truth.face_corners_px[i])
        ref = cv2.resize(render_face("mindful", face, 10.0), (60, 80), interpolation=cv2.INTER_AREA)
        if turned:
            ref = ref[::-1, ::-1]
        assert _ncc(patch, ref) > 0.85
        assert _ncc(patch, ref[::-1, ::-1]) < _ncc(patch, ref)
    # the face seen at the wrong height (the top tile's face rectified at layer 0) does not match
    low = slot_face_corners_mm([PYRAMID.slots[top]], sc.truth.mat)
    low[..., 2] = -20.0
    q = sc.truth.camera.project(low)[0]
    ref = cv2.resize(render_face("mindful", "dragon-red", 10.0), (60, 80), interpolation=cv2.INTER_AREA)
    assert _ncc(_rectified(sc.image, q), ref) < 0.7


def test_visible_fractions_overhead():
    spec = SceneSpec("mindful", PYRAMID, removed=(), augment=Augment.none(), camera=overhead_camera())
    t = render_scene(spec, np.random.default_rng(2)).truth
    vis = dict(zip(PYRAMID.slots, t.visible))
    assert vis[Slot(17, 7, 2)] > 0.98 and vis[Slot(22, 7, 0)] > 0.98
    # (14, 6, 0) spans X 237..267 mm at height 20; the camera is at X 297, 600 mm up.  Its
    # neighbour (16, 6, 1) starts at X 267 but 40 mm up, so it appears farther out from the
    # nadir: -30 * 600/560 = -32.14 mm against -30 * 600/580 = -31.03 mm, and hides
    # 1.11 / (30 * 600/580) = 3.6 % of the lower face.
    assert vis[Slot(14, 6, 0)] == pytest.approx(1 - 1.108 / 31.03, abs=0.01)
    # layer-1 tiles lose the quarter under the half-offset top tile
    assert vis[Slot(16, 6, 1)] == pytest.approx(0.75, abs=0.03)
    # layer-0 tiles wholly under layer 1 are hidden
    assert vis[Slot(16, 6, 0)] < 0.02 and vis[Slot(18, 8, 0)] < 0.02


@pytest.mark.parametrize("seed", range(4))
def test_removed_tiles_were_free_pairs(seed):
    layout = builtin("turtle")
    spec = SceneSpec("mindful", layout, image_size=SMALL, n_removed=40, augment=Augment.none())
    t = render_scene(spec, np.random.default_rng(seed)).truth
    assert len(t.removed) == 40
    board = Board(layout)
    for a, b in zip(t.removed[::2], t.removed[1::2]):
        ia, ib = layout.slot_index(a), layout.slot_index(b)
        assert board.is_free(ia) and board.is_free(ib)
        board.remove(ia)
        board.remove(ib)
    assert list(t.present) == board.present
    assert list(t.free) == board.free_flags()
    assert all(f is None for f, p in zip(t.faces, t.present) if not p)
    assert np.all(t.visible[~t.present] == 0)


def test_hands_are_flagged():
    spec = SceneSpec("love", PYRAMID, image_size=SMALL, hands=True, removed=())
    sc = render_scene(spec, np.random.default_rng(4))
    t = sc.truth
    assert t.hands >= 1 and t.hand_mask is not None and t.hand_mask.any()
    assert np.array_equal(t.hand_mask, sc.labels == LABEL_HAND)
    none = render_scene(SceneSpec("love", PYRAMID, image_size=SMALL, hands=False), np.random.default_rng(4)).truth
    assert none.hands == 0 and none.hand_mask is None


def test_fixed_camera_is_kept():
    cam = overhead_camera(700.0, size=(800, 600), f=700.0)
    t = render_scene(SceneSpec("word", PYRAMID, camera=cam), np.random.default_rng(3)).truth
    assert t.camera.image_size == (800, 600)
    assert np.allclose(t.camera.tvec, cam.tvec) and np.allclose(t.camera.rvec, cam.rvec)
    assert t.recognize_json()["tiles"][0]["slot"] == [14, 6, 0]


def test_bad_specs_are_one_line_errors():
    with pytest.raises(BadInput):
        render_scene(SceneSpec("chess", PYRAMID), np.random.default_rng(0))
    with pytest.raises(BadInput):
        render_scene(SceneSpec("love", PYRAMID, faces=("hearts-1",)), np.random.default_rng(0))
    with pytest.raises(BadInput):
        render_scene(SceneSpec("love", PYRAMID, removed=((0, 0, 0),)), np.random.default_rng(0))



def test_looks_include_white_and_one_colour_tiles():
    # body colours: ivory, bone and white; one back colour in six is "none"
    # (a one-colour tile: the back is the body's colour, 3 % darker)
    from vision.synth.scene import IVORY_BGR, sample_look
    assert any(min(c) >= 230 for c in IVORY_BGR)
    looks = [sample_look(np.random.default_rng(s), Augment()) for s in range(120)]
    one_colour = [lk for lk in looks if np.allclose(lk.back, np.array(lk.ivory) * 0.97)]
    assert 5 <= len(one_colour) <= 40
    assert any(min(lk.ivory) >= 220 for lk in looks)
    # the other looks keep a coloured back, unlike their body
    assert all(np.abs(np.array(lk.back) - np.array(lk.ivory)).max() > 20 for lk in looks if lk not in one_colour)


def test_presence_training_scenes_honour_the_tilt_range():
    from vision.training.presence_data import main, presence_scene_spec
    spec = presence_scene_spec(3, np.random.default_rng(0), (0.0, 15.0))
    assert spec.tilt_deg == (0.0, 15.0) and spec.hands == 0.2
    for bad in (["--tilt", "20", "10", "--scenes", "1"], ["--scenes", "0"], ["--workers", "0"],
                ["--start", "-5"], ["--out", __file__], ["--shadow-free", "1.5"]):
        with pytest.raises(SystemExit) as e:
            main(bad)
        assert e.value.code == 2

def test_presence_training_scenes_on_given_layouts(tmp_path):
    """``presence_data --layouts``: scenes on those layouts only, shifted to
    the mat's origin; one the mat cannot hold left out; a bad one refused."""
    from companion.layouts import shifted_to_origin
    from companion.layout_files import read_layout_file
    from vision.training.presence_data import layouts_from_files, main, presence_scene_spec
    near = tmp_path / "near.json"
    near.write_text('{"name": "near", "slots": [[10, 4, 0], [12, 4, 0], [14, 4, 0], [11, 4, 1]]}')
    wide = tmp_path / "wide.json"           # 40 half-units wide: over the mat's 36
    wide.write_text('{"name": "wide", "slots": [[0, 0, 0], [38, 0, 0]]}')
    got = layouts_from_files([str(near), str(wide), "sprint-flat"])
    assert [l.name for l in got] == ["near", "sprint-flat"]
    assert got[0].slots == shifted_to_origin(read_layout_file(near)).slots
    names = {presence_scene_spec(k, np.random.default_rng(k), layouts=tuple(got)).layout.name for k in range(12)}
    assert names == {"near", "sprint-flat"}
    for bad in (["--layouts", str(wide), "--scenes", "1"], ["--layouts", "no-such-layout", "--scenes", "1"]):
        with pytest.raises(SystemExit) as e:
            main(bad)
        assert e.value.code == 2


def test_shadow_free_presence_scenes_cast_no_shadow():
    # --shadow-free scenes keep every other effect, and their looks cast no shadow
    from vision.synth.scene import sample_look
    from vision.training.presence_data import presence_scene_spec
    spec = presence_scene_spec(3, np.random.default_rng(0), (0.0, 15.0), shadows=False)
    assert spec.augment.shadows == 0.0 and spec.augment.jitter_mm == Augment().jitter_mm
    assert presence_scene_spec(3, np.random.default_rng(0), (0.0, 15.0)).augment.shadows == 1.0
    assert all(sample_look(np.random.default_rng(s), spec.augment).shadow == 0.0 for s in range(20))
    assert all(sample_look(np.random.default_rng(s), Augment()).shadow >= 0.15 for s in range(20))


def _game():
    n = len(PYRAMID)
    faces = ["bamboo-%d" % (1 + i % 9) for i in range(n)]
    faces[PYRAMID.slot_index((17, 7, 2))] = "circles-5"
    faces[PYRAMID.slot_index((22, 7, 0))] = "circles-5"
    moves = [Claim((Slot(17, 7, 2), Slot(22, 7, 0)), "A"),       # free and matching: valid
             PutBack((Slot(16, 6, 0),), "B"),                     # under (16, 6, 1): blocked -> penalty
             Nudge((5.0, -3.0, 0.0), (0.3, 0.2, 0.5))]
    return tuple(faces), moves


def test_recording_frames_and_truth_agree():
    faces, moves = _game()
    spec = SceneSpec("mindful", PYRAMID, faces=faces, image_size=(320, 180))
    rec = render_recording("mindful", PYRAMID, moves, np.random.default_rng(7), fps=5.0, spec=spec, settle_s=0.6)
    frames = list(rec)
    truth = rec.truth_json()
    assert len(frames) == len(rec) == truth["frames"]
    assert [k for k, _, _ in frames] == list(range(len(frames)))
    assert all(im.shape == (180, 320, 3) and im.dtype == np.uint8 for _, im, _ in frames)
    claim, put_back, nudge = truth["moves"]
    top, right, under = (PYRAMID.slot_index(s) for s in ((17, 7, 2), (22, 7, 0), (16, 6, 0)))
    # the claim: both tiles on the board before it, off from the first settled frame on
    assert claim["valid"] is True and claim["reason"] is None and claim["free"] == [True, True]
    before = frames[claim["start_frame"] - 1][2]
    assert before.scene.present[top] and before.scene.present[right] and before.settled
    s = frames[claim["settled_frame"]][2]
    assert not s.scene.present[top] and not s.scene.present[right] and not s.hand and s.settled
    assert any(f[2].hand for f in frames[claim["start_frame"]:claim["end_frame"] + 1])
    # the blocked tile lifted and put back: gone during the move, back when settled
    assert put_back["free"] == [False] and put_back["blocked"] == [[16, 6, 0]]
    during = [f[2].scene.present[under] for f in frames[put_back["start_frame"]:put_back["end_frame"] + 1]]
    assert not all(during) and during[0]
    assert frames[put_back["settled_frame"]][2].scene.present[under]
    # the lifted tile is off the board, with no hand in view, for a while (on the rack)
    held = frames[put_back["lifted_settled_frame"]][2]
    assert not held.scene.present[under] and not held.hand and held.phase == "held"
    # events in the contract's form: the penalty when the lift is first seen settled
    assert truth["events"] == [
        {"type": "claim", "frame": claim["settled_frame"], "player": "A", "slots": [[17, 7, 2], [22, 7, 0]],
         "faces": ["circles-5", "circles-5"], "valid": True, "reason": None},
        {"type": "penalty", "frame": put_back["lifted_settled_frame"], "player": "B", "slot": [16, 6, 0],
         "reason": "blocked"}]
    # the nudge moves the camera for good
    a = frames[nudge["settled_frame"] - 1][2].scene.camera
    b = frames[nudge["settled_frame"]][2].scene.camera
    c = frames[-1][2].scene.camera
    assert np.linalg.norm(b.centre_mm - a.centre_mm) > 4.0
    assert np.linalg.norm(c.centre_mm - b.centre_mm) < 1.0
    assert truth["frame_truth"][-1]["present"] == "".join("1" if p else "0" for p in frames[-1][2].scene.present)


def test_recording_rejects_moves_on_empty_slots():
    moves = [Claim((Slot(17, 7, 2), Slot(22, 7, 0))), PutBack((Slot(17, 7, 2),))]
    with pytest.raises(BadInput):
        render_recording("mindful", PYRAMID, moves, np.random.default_rng(0), spec=SceneSpec("mindful", PYRAMID))


def test_write_recording_folder(tmp_path):
    faces, moves = _game()
    spec = SceneSpec("mindful", PYRAMID, faces=faces, image_size=(320, 180))
    truth = write_recording(tmp_path / "rec", "mindful", PYRAMID, moves[:1], np.random.default_rng(1), fps=4.0,
                            spec=spec, settle_s=0.5)
    files = sorted(p.name for p in (tmp_path / "rec").iterdir())
    assert files[-1] == "truth.json"
    assert files[:-1] == [f"frame_{k:05d}.jpg" for k in range(truth["frames"])]
    assert json.loads((tmp_path / "rec" / "truth.json").read_text()) == json.loads(json.dumps(truth))
    assert cv2.imread(str(tmp_path / "rec" / "frame_00000.jpg")).shape == (180, 320, 3)


def test_a_spelled_word_round_trips_and_refuses_short_or_wordless_moves():
    from vision.synth import SpellWord, move_from_json
    w = SpellWord((Slot(0, 0, 0), Slot(4, 0, 0), Slot(8, 0, 0)), "CAT", "B")
    assert move_from_json(w.to_json()) == w
    assert move_from_json({"type": "word", "slots": [[0, 0, 0], [4, 0, 0], [8, 0, 0]], "word": "cat"}).word == "CAT"
    assert "rest_s" not in w.to_json()
    one_by_one = SpellWord(w.slots, "CAT", "B", rest_s=1.5)
    assert one_by_one.to_json()["rest_s"] == 1.5 and move_from_json(one_by_one.to_json()) == one_by_one
    for bad in ({"type": "word", "slots": [[0, 0, 0], [4, 0, 0]], "word": "AT"},
                {"type": "word", "slots": [[0, 0, 0], [4, 0, 0], [8, 0, 0]]},
                {"type": "word", "slots": [[0, 0, 0], [4, 0, 0], [8, 0, 0]], "word": "CAT", "rest_s": -1},
                {"type": "word", "slots": [[0, 0, 0], [4, 0, 0], [8, 0, 0]], "word": "CAT", "rest_s": "x"}):
        with pytest.raises(BadInput, match="bad move"):
            move_from_json(bad)


def test_a_reshuffle_relays_the_standing_faces_on_their_slots_with_hands_over_the_board():
    from vision.synth import Reshuffle, move_from_json
    faces, moves = _game()
    claim = moves[0]
    spec = SceneSpec("mindful", PYRAMID, faces=faces, image_size=(320, 180))
    rec = render_recording("mindful", PYRAMID, [claim, Reshuffle("B", seed=3, seconds=1.0)],
                           np.random.default_rng(7), fps=5.0, spec=spec, settle_s=0.6)
    frames = list(rec)
    truth = rec.truth_json()
    move = truth["moves"][1]
    before = frames[move["start_frame"] - 1][2].scene
    after = frames[move["settled_frame"]][2].scene
    standing = [i for i in range(len(PYRAMID)) if before.present[i]]
    # no tile leaves; the same faces stand, in another order
    assert list(after.present) == list(before.present) and len(standing) == len(PYRAMID) - 2
    assert sorted(before.faces[i] for i in standing) == sorted(after.faces[i] for i in standing)
    assert sum(before.faces[i] != after.faces[i] for i in standing) == move["changed"] >= 4
    assert truth["deal"] == [{"slot": list(s), "face": f} for s, f in zip(PYRAMID.slots, faces)]
    deal = [f["deal"] if "deal" in f else 0 for f in truth["frame_truth"]]
    switch = deal.index(1)          # the first frame showing the new faces: a hand is over the board
    assert move["start_frame"] < switch <= move["end_frame"] and frames[switch][2].hand
    assert frames[switch - 1][2].hand and set(deal[move["settled_frame"]:]) == {1}
    assert frames[move["settled_frame"]][2].settled
    assert truth["events"][-1] == {"type": "reshuffle", "frame": move["settled_frame"], "player": "B",
                                   "slots": move["slots"], "faces": [after.faces[i] for i in standing]}
    # the pictures follow: the standing faces were drawn anew
    assert np.abs(frames[move["settled_frame"]][1].astype(int) - frames[move["start_frame"] - 1][1]).max() > 60
    # given faces (the engine's arrangement) are laid as given; they must be the standing tiles
    top, right = (PYRAMID.slot_index(s) for s in ((16, 6, 1), (18, 8, 1)))
    swap = Reshuffle("A", (PYRAMID.slots[top], PYRAMID.slots[right]), (faces[right], faces[top]))
    assert move_from_json(swap.to_json()) == swap
    rec = render_recording("mindful", PYRAMID, [swap], np.random.default_rng(7), fps=5.0, spec=spec, settle_s=0.6)
    assert rec.deals[1][top] == faces[right] and rec.deals[1][right] == faces[top]
    bad = Reshuffle("A", (PYRAMID.slots[top],), ("dragon-red" if faces[top] != "dragon-red" else "dragon-green",))
    with pytest.raises(BadInput, match="not the tiles standing"):
        render_recording("mindful", PYRAMID, [bad], np.random.default_rng(7), fps=5.0, spec=spec)
    with pytest.raises(BadInput, match="bad move"):
        move_from_json({"type": "reshuffle", "slots": [[16, 6, 1]], "faces": []})
