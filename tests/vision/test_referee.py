"""The referee on small hand-made frame sequences with a scripted recogniser.

Frames are tiny (36 x 64) pictures: a grey table with a dark mark per tile
still on the board and a bright blob for a hand; the recogniser reads the
scene code stored in the frame's first pixel and returns a hand-made
:class:`Recognition`.  The layout (Love Mahjong faces):

    A(0,0) hearts-1   B(2,0) hearts-2   C(4,0) hearts-1      D(8,0) hearts-2
    E(0,4) roses-3                                           F(8,4) roses-3
    G(4,4,0) cupid-arrow under H(4,4,1) cupid-arrow

A and C are free, B is pinched by them, G is covered by H.
"""

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion import game as G
from companion.errors import BadInput, CameraMisfit, MatNotFound
from companion.layouts import Layout
from vision.reconstruct import Recognition, SlotState
from vision.referee import EvidenceWriter, Referee, RefereeSettings
from vision.tracking import SLOW_LOCAL_DELTA, MotionSettings
from synthetic_views import table_frame

A, B, C, D, E, F, G_, H = ((0, 0, 0), (2, 0, 0), (4, 0, 0), (8, 0, 0), (0, 4, 0), (8, 4, 0),
                           (4, 4, 0), (4, 4, 1))
LAYOUT = Layout("hand-made", (A, B, C, D, E, F, G_, H))
FACES = ["hearts-1", "hearts-2", "hearts-1", "hearts-2", "roses-3", "roses-3", "cupid-arrow", "cupid-arrow"]
W, HH = 64, 36
QUADS = np.array([[[4 + 6 * s[0] + 2 * s[2], 4 + 5 * s[1] - 2 * s[2]],
                   [10 + 6 * s[0] + 2 * s[2], 4 + 5 * s[1] - 2 * s[2]],
                   [10 + 6 * s[0] + 2 * s[2], 12 + 5 * s[1] - 2 * s[2]],
                   [4 + 6 * s[0] + 2 * s[2], 12 + 5 * s[1] - 2 * s[2]]] for s in LAYOUT.slots], np.float32) / 2


def recognition(absent=(), occluded=(), conf=0.95, faces=FACES, shift=0):
    """A reading of LAYOUT (its slots' faces ``shift`` px to the right, as
    in a picture moved so)."""
    absent = set(absent)
    tiles = []
    for i, s in enumerate(LAYOUT.slots):
        if s in occluded:
            tiles.append(SlotState(s, True, None, 0.5, None, "occluded"))
        elif s in absent:
            tiles.append(SlotState(s, False, None, 0.97, None, "empty"))
        elif s == G_ and H not in absent:
            tiles.append(SlotState(s, True, None, conf, False, "covered"))
        else:
            tiles.append(SlotState(s, True, faces[i], conf, None, "face"))
    return Recognition("love", LAYOUT, tuple(tiles), QUADS + np.float32([shift, 0]))


def frame(code, hand=None, shift=0):
    img = np.full((HH, W, 3), 120, np.uint8)
    img[6:30, 14:50] = 60                  # the mat: a nudge moves its edges
    if hand is not None:
        x = 8 + 6 * hand
        img[4:34, x:x + 24] = (90, 160, 230)
    if shift:
        img = np.roll(img, shift, axis=1)
    img[0, 0] = code
    return img


class Script:
    """Scenes by code: code -> Recognition; frames are built with :func:`frame`."""

    def __init__(self, scenes):
        self.scenes = scenes
        self.calls = 0

    def __call__(self, img):
        self.calls += 1
        rec = self.scenes[int(img[0, 0, 0])]
        if rec is None:
            raise MatNotFound("no mat")
        if rec == "misfit":
            raise CameraMisfit("the camera file cam.json does not fit this picture")
        return rec


def referee(scenes, players=("Ada", "Bo"), evidence=None, **kw):
    out = []
    kw.setdefault("confirm_s", 0.1)          # one frame later at 10 frames per second
    # (jitter_px 0: on these 64 x 36 frames one pixel is half a signature
    # pixel, and a shake-tolerant gate would not see their nudges)
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3, jitter_px=0.0), **kw)
    ref = Referee("love", LAYOUT, list(players), Script(scenes), emit=out.append, evidence=evidence,
                  fps=10.0, settings=settings)
    return ref, out


def play(ref, frames):
    for i, f in enumerate(frames):
        ref.feed(i, f)
    ref.finish()


def hand_frames(code, n=4):
    return [frame(code, hand=k % 3) for k in range(n)]


def test_hand_appears_pair_vanishes_hand_leaves():
    ref, out = referee({1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])})
    frames = [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5
    play(ref, frames)
    assert [o["type"] for o in out] == ["claim"]
    c = out[0]
    assert c["player"] == "Ada" and c["valid"] is True and c["reason"] is None
    assert {tuple(s) for s in c["slots"]} == {A, C} and c["faces"] == ["hearts-1", "hearts-1"]
    assert c["frame"] == 9                   # first frame of the new still picture
    types = [e.type for e in ref.events]
    assert types == ["game_started", "claim"]
    st = G.replay(ref.events)
    assert st.score(st.player("Ada")) == 10_000 + 200       # terminal pair (1s): 200 points
    assert st.whose_turn() == "Ada"                          # Love: a valid pair keeps the turn
    assert ref.status.tiles_on_board == 6


def test_a_matching_pair_waits_until_it_stays_away():
    # 10 fps, settle 3 frames, claim_hold_s 2: A + C leave at frame 9; nothing
    # is written while the still picture lasts under 2 s; at frame 9 + 20 the
    # claim comes, with its own frame; feeding stops there (no finish)
    ref, out = referee({1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])},
                       claim_hold_s=2.0)
    frames = [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 25
    for i, f in enumerate(frames):
        ref.feed(i, f)
        if i == 28:
            assert out == [] and ref.status.tiles_on_board == 6
    assert [(o["type"], o["frame"]) for o in out] == [("claim", 9)]
    assert ref.status.tiles_on_board == 6 and not ref.tracker.busy


def test_a_matching_pair_put_back_is_an_attempt():
    ref, out = referee({1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])})
    frames = [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(1)] * 5
    play(ref, frames)
    assert [(o["type"], o["reason"]) for o in out] == [("attempt", "returned")]
    assert "but the tiles were put back" in out[0]["explanation"] and out[0]["frame"] == 18
    st = G.replay(ref.events)
    assert st.board.n_present == 8 and st.whose_turn() == "Bo"     # Law 2: the turn passes


def test_blocked_tile_lifted_and_returned_is_a_penalty_even_when_put_back():
    ref, out = referee({1: recognition(), 2: recognition(absent=[B]), 9: recognition(occluded=[B])})
    frames = [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(1)] * 5
    play(ref, frames)
    assert [o["type"] for o in out] == ["penalty"]
    p = out[0]
    assert p["slot"] == list(B) and p["reason"] == "blocked" and p["player"] == "Ada"
    assert "pinched between 0,0,0 (left) and 4,0,0 (right)" in p["explanation"]
    st = G.replay(ref.events)
    assert st.score(st.player("Ada")) == 10_000 - 100
    assert st.board.n_present == 8


def test_returned_non_matching_pair_is_an_invalid_attempt_and_passes_the_turn():
    ref, out = referee({1: recognition(), 2: recognition(absent=[A, D]), 9: recognition(occluded=[A])})
    frames = [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(1)] * 5
    play(ref, frames)
    assert [o["type"] for o in out] == ["attempt"]
    assert out[0]["reason"] == "no-match"
    st = G.replay(ref.events)
    assert [e.type for e in ref.events] == ["game_started", "invalid"]
    assert st.whose_turn() == "Bo"


def test_a_hand_resting_still_over_the_board_is_not_judged():
    # the hand stays put: the picture is still, but slots seen before are hidden
    ref, out = referee({1: recognition(), 9: recognition(absent=[A, C], occluded=[A, B, C])})
    frames = [frame(1)] * 5 + [frame(9, hand=1)] * 12
    play(ref, frames)
    assert out == [] and [e.type for e in ref.events] == ["game_started"]
    assert ref.status.state == "hand in view"


def test_a_hand_resting_for_long_is_judged_around_it_only():
    # after patience_s the frame is judged, but the hidden slots and their
    # neighbours keep their state: no event from the misreads near the hand
    ref, out = referee({1: recognition(), 9: recognition(absent=[C, D], occluded=[B])}, patience_s=1.0,
                       guard_half_units=2)
    frames = [frame(1)] * 5 + [frame(9, hand=1)] * 20
    play(ref, frames)
    # C lies next to B (guarded); D is far: its absence is a real lift
    lifted = [ref.tracker.board.layout.slots[i] for i in ref.tracker.state.lifted]
    assert C not in lifted
    assert ref.status.judged >= 2


def test_a_camera_nudge_is_not_an_event():
    ref, out = referee({1: recognition(), 2: recognition(shift=3), 3: recognition(shift=5)})
    frames = [frame(1)] * 5 + [frame(2, shift=3)] * 5 + [frame(3, shift=5)] * 5
    play(ref, frames)
    assert out == [] and [e.type for e in ref.events] == ["game_started"]
    assert ref.status.judged == 3


def _moved_view(absent=(), unsure=()):
    """The camera bumped (every face 8 px away); ``unsure`` slots read empty at 0.6."""
    from dataclasses import replace as dc_replace
    r = recognition(absent=absent)
    tiles = tuple(SlotState(t.slot, False, None, 0.6, None, "empty") if t.slot in unsure else t for t in r.tiles)
    return dc_replace(r, tiles=tiles, quads=QUADS + 8.0)


def test_what_looks_changed_after_the_camera_moved_goes_to_the_referee():
    # in the new view B (blocked) and D read empty, unsurely, though nobody
    # touched them; then E + F are claimed
    ref, out = referee({1: recognition(), 2: _moved_view(unsure=[B, D]),
                        3: _moved_view(absent=[E, F], unsure=[B, D]), 9: recognition(occluded=[A])})
    frames = [frame(1)] * 5 + [frame(2, shift=4)] * 6 + hand_frames(9) + [frame(3, shift=4)] * 6
    play(ref, frames)
    assert [o["type"] for o in out] == ["needs_referee", "claim"]
    flag, claim = out
    assert {tuple(s) for s in flag["slots"]} == {B, D} and "the camera moved" in flag["reason"]
    assert flag["frame"] == 5
    assert {tuple(s) for s in claim["slots"]} == {E, F} and claim["valid"] is True
    assert [e.type for e in ref.events] == ["game_started", "needs_referee", "claim"]
    assert ref.tracker.board.n_present == 6                        # B and D still stand for the engine


def test_a_camera_shaken_and_back_in_place_judges_the_next_move_as_any():
    # a break-test, session 50: the demo camera shaken by 6 px for 0.3 s, a
    # still picture judged there; the next claim's picture, the camera back
    # in place, was judged as after a camera move, its emptied slots read at
    # 0.79 and 0.80 (under sure_absent): the claim went to the referee.  Back
    # where it stood, with nothing judged to change meanwhile, the camera's
    # looks from before the shake hold again: E + F, read empty at 0.6, are a
    # claim as they would be with no shake
    from dataclasses import replace as dc_replace
    r = recognition(absent=[E, F])
    unsure = dc_replace(r, tiles=tuple(SlotState(t.slot, False, None, 0.6, None, "empty") if t.slot in (E, F)
                                       else t for t in r.tiles))
    scenes = {1: recognition(), 2: _moved_view(), 3: unsure, 4: dc_replace(unsure, quads=QUADS + 16.0),
              9: recognition(occluded=[A])}
    ref, out = referee(scenes)
    play(ref, [frame(1)] * 5 + [frame(2, shift=4)] * 6 + hand_frames(9) + [frame(3)] * 6)
    assert [(o["type"], o["valid"]) for o in out] == [("claim", True)]
    assert {tuple(s) for s in out[0]["slots"]} == {E, F}
    # moved on further instead, not back: the move's rule holds (the
    # referee asked, nothing scored)
    ref, out = referee(scenes)
    play(ref, [frame(1)] * 5 + [frame(2, shift=4)] * 6 + hand_frames(9) + [frame(4, shift=8)] * 6)
    assert [o["type"] for o in out] == ["needs_referee"] and "the camera moved" in out[0]["reason"]


def test_a_matching_pair_put_back_before_a_camera_bump_is_an_attempt():
    # E + F (matching, free) leave; they are put back, and the camera is bumped
    # before the next still picture: read surely standing, they came back
    from dataclasses import replace as dc_replace
    bumped = dc_replace(recognition(), quads=QUADS + 8.0)
    ref, out = referee({1: recognition(), 2: recognition(absent=[E, F]), 3: bumped, 9: recognition(occluded=[A])})
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(3, shift=4)] * 6)
    assert [(o["type"], o["reason"]) for o in out] == [("attempt", "returned")]
    assert ref.tracker.board.n_present == 8 and not ref.tracker.busy


def test_a_sure_move_made_while_the_camera_was_bumped_is_kept():
    # E + F (read surely before) leave between two judged pictures, and the
    # camera moved meanwhile: they read surely empty, so the claim stands
    ref, out = referee({1: recognition(), 3: _moved_view(absent=[E, F]), 9: recognition(occluded=[A])})
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(3, shift=4)] * 6)
    assert [o["type"] for o in out] == ["claim"] and {tuple(s) for s in out[0]["slots"]} == {E, F}


def test_camera_shift_is_the_median_of_each_face_s_largest_corner_move():
    from vision.referee import camera_shift
    q = np.zeros((3, 4, 2))
    r = q.copy()
    r[0, 2] = (3, 4)             # one face: one corner 5 px away
    r[1] += (0, 2)               # one face moved 2 px
    assert camera_shift(q, r) == pytest.approx(2.0)
    assert camera_shift(q, q[:2]) == float("inf") and camera_shift(q[:0], q[:0]) == 0.0


def test_a_still_run_cut_short_by_the_end_is_not_judged():
    # settle 9 frames: the recording stops 4 frames after the hand left; one
    # reading of such a picture is not trusted (a break-test found penalties
    # made up that way), so the move is not scored
    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=9), confirm_s=0.1)
    scenes = {1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])}
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), emit=out.append, fps=10.0, settings=settings)
    play(ref, [frame(1)] * 12 + hand_frames(9) + [frame(2)] * 4)
    assert out == []


def test_mat_lost_then_found_again():
    ref, out = referee({1: recognition(), 5: None, 2: recognition(absent=[E, F])})
    frames = [frame(1)] * 5 + hand_frames(5) + [frame(5)] * 5 + hand_frames(5) + [frame(2)] * 5
    play(ref, frames)
    assert [o["type"] for o in out] == ["claim"]


def test_a_camera_misfit_stops_the_run_only_before_the_mat_was_seen():
    # after frames read well with the camera file, one frame it does not fit
    # (a bad marker detection) is a frame without the mat, not the end
    ref, out = referee({1: recognition(), 5: "misfit", 2: recognition(absent=[E, F])})
    frames = [frame(1)] * 5 + hand_frames(5) + [frame(5)] * 5 + hand_frames(5) + [frame(2)] * 5
    play(ref, frames)
    assert [o["type"] for o in out] == ["claim"] and ref.status.mat_missed >= 1
    # from the first frame on: the file is wrong for this recording
    ref, out = referee({5: "misfit"})
    with pytest.raises(CameraMisfit, match="does not fit"):
        play(ref, [frame(5)] * 6)


def test_unreturned_unsure_pair_needs_the_referee_and_scores_nothing():
    low = dict(conf=0.3)
    ref, out = referee({1: recognition(**low), 2: recognition(absent=[A, D], **low),
                        3: recognition(absent=[A, D, E, F], **low)})
    frames = [frame(1)] * 5 + hand_frames(3) + [frame(2)] * 5 + hand_frames(3) + [frame(3)] * 5
    play(ref, frames)
    kinds = [o["type"] for o in out]
    assert kinds == ["needs_referee", "claim"]          # then E + F is a fine claim
    assert "not sure enough" in out[0]["reason"]
    st = G.replay(ref.events)
    assert len(st.needs) == 1
    assert st.player("Ada").invalid == 0
    # Love Law 2: a valid match keeps the turn, an invalid one passes it:
    # the item cannot say, and E + F stays with Ada
    assert out[0]["pair_move"] is True and out[1]["player"] == "Ada"


def test_an_unsure_pair_kept_passes_the_turn_in_harmony_duels():
    # bench game 10402 (Mindful, 640 x 480): a pair read unsurely as two
    # faces that do not match went to the referee and the turn stayed, so
    # every later move went to the wrong player.  Mindful 2.6.3: "Players
    # take turns making single valid matches", and an invalid attempt
    # passes the turn too: whatever the referee decides, Bo plays next
    faces = ["bamboo-1", "bamboo-2", "bamboo-1", "bamboo-2", "bamboo-3", "bamboo-3", "bamboo-4", "bamboo-4"]

    def reading(**kw):
        rec = recognition(faces=faces, conf=0.3, **kw)
        return Recognition("mindful", LAYOUT, rec.tiles, rec.quads)

    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3, jitter_px=0.0),
                               confirm_s=0.1)
    ref = Referee("mindful", LAYOUT, ["Ada", "Bo"],
                  Script({1: reading(), 2: reading(absent=[A, D]), 3: reading(absent=[A, D, E, F])}),
                  emit=out.append, fps=10.0, settings=settings)
    play(ref, [frame(1)] * 5 + hand_frames(3) + [frame(2)] * 5 + hand_frames(3) + [frame(3)] * 5)
    assert [(o["type"], o["player"]) for o in out] == [("needs_referee", "Ada"), ("claim", "Bo")]
    assert out[0]["pair_move"] is True and out[1]["valid"] is True
    st = G.replay(ref.events)
    assert st.player("Bo").matches == 1 and st.whose_turn() == "Ada"


def test_tiles_gone_with_no_move_decided_leave_the_ledger_s_board_too():
    # A + D leave read unsurely: the referee is asked, and the ledger takes
    # them off its board (off_table).  B, pinched by A and C before, is then
    # free: B + C, a matching pair read surely, is a valid claim, not a
    # blocked touch (a break-test saw every later claim near an unsettled
    # pair refused and penalised)
    faces = ["hearts-1", "hearts-1", "hearts-1", "hearts-2", "roses-3", "roses-3", "cupid-arrow", "cupid-arrow"]
    ref, out = referee({1: recognition(conf=0.3, faces=faces), 2: recognition(absent=[A, D], conf=0.3, faces=faces),
                        3: recognition(absent=[A, D], faces=faces), 4: recognition(absent=[A, D, B, C], faces=faces),
                        9: recognition(occluded=[A, B])})
    frames = ([frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + [frame(3)] * 5 + hand_frames(9)
              + [frame(4)] * 5)
    play(ref, frames)
    assert [o["type"] for o in out] == ["needs_referee", "claim"]
    assert {tuple(s) for s in out[0]["off_table"]} == {A, D}
    claim = out[1]
    assert claim["valid"] is True and {tuple(s) for s in claim["slots"]} == {B, C}
    st = G.replay(ref.events)
    assert {e.type for e in ref.events} >= {"needs_referee", "claim"} and "penalty" not in {e.type for e in ref.events}
    assert st.scores() == {"Ada": 10_200, "Bo": 10_000}       # Love 2.5: a pair of hearts, +200
    assert [st.slot(i) for i in range(8) if st.board.present[i]] == [E, F, G_, H]
    assert list(st.off_table) == [next(e.id for e in ref.events if e.type == "needs_referee")]


def test_a_refused_claim_whose_tiles_stay_off_the_table_goes_to_the_referee_at_the_next_move():
    # Love 2.9 "touch is claimed": A touched and put back, then E + F (a
    # matching pair) taken and kept: the rules refuse it (the pair leaves A
    # out) and send the tiles back.  Kept off the table until the next move
    # (A + C), they go to the referee and leave the ledger's board
    # (off_table), so that the free rule reads the table as it is (bench
    # game 12202: every later claim near such a pair was refused as blocked)
    scenes = {1: recognition(), 2: recognition(absent=[A]), 3: recognition(absent=[E, F]),
              4: recognition(absent=[E, F, A, C]), 5: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])}
    start = [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(1)] * 5
    ref, out = referee(scenes, claim_hold_s=1.0)
    play(ref, start + hand_frames(9) + [frame(3)] * 25 + hand_frames(9) + [frame(4)] * 25)
    assert [o["type"] for o in out] == ["touch", "claim", "needs_referee", "claim"]
    refused, item, claim = out[1:]
    assert refused["valid"] is False and refused["reason"] == "touch-is-claimed"
    assert {tuple(s) for s in item["off_table"]} == {E, F} and item["player"] == "Ada"
    assert item["frame"] == claim["frame"] and "stayed off the table" in item["reason"]
    assert f"frame {refused['frame']}" in item["reason"] and "may have been an attempt" in item["reason"]
    assert claim["valid"] is True and claim["player"] == "Bo" and {tuple(s) for s in claim["slots"]} == {A, C}
    st = G.replay(ref.events)
    assert [st.slot(i) for i in range(8) if st.board.present[i]] == [B, D, G_, H]
    assert st.scores() == {"Ada": 10_000, "Bo": 10_200}
    # put back as the rules say before the next move: no item, the tiles
    # stand again for the tracker and the ledger alike
    ref, out = referee(scenes, claim_hold_s=1.0)
    play(ref, start + hand_frames(9) + [frame(3)] * 25 + hand_frames(9) + [frame(1)] * 5 + hand_frames(9)
         + [frame(5)] * 25)
    assert [o["type"] for o in out] == ["touch", "claim", "claim"]
    assert out[2]["valid"] is True and out[2]["player"] == "Bo"
    st = G.replay(ref.events)
    assert [st.slot(i) for i in range(8) if st.board.present[i]] == [B, D, E, F, G_, H]
    assert ref.tracker.board.n_present == 6 and not ref.tracker.state.expected
    # put back, then claimed by the next player: that claim, no item (a
    # break-test saw the item, and the claim refused: "0,4,0 holds no tile")
    ref, out = referee(scenes, claim_hold_s=1.0)
    play(ref, start + hand_frames(9) + [frame(3)] * 25 + hand_frames(9) + [frame(1)] * 25 + hand_frames(9)
         + [frame(3)] * 25)
    assert [o["type"] for o in out] == ["touch", "claim", "claim"]
    assert out[2]["valid"] is True and out[2]["player"] == "Bo" and {tuple(s) for s in out[2]["slots"]} == {E, F}


def test_a_refused_pair_put_back_after_its_item_stands_again_on_the_ledger():
    # as above, E + F kept off the table past the next move (A + C, Bo's):
    # the item takes them off the ledger's board.  Then the players put
    # them back: the camera takes them in silently (no lift, no penalty:
    # a break-test, session 48, saw the tile under one put back on a stack
    # charged to the next player) and the ledger gets them back
    # (tiles_back), the item answered; taken again, they are a claim
    scenes = {1: recognition(), 2: recognition(absent=[A]), 3: recognition(absent=[E, F]),
              4: recognition(absent=[E, F, A, C]), 5: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])}
    start = [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(1)] * 5
    ref, out = referee(scenes, claim_hold_s=1.0)
    kept = start + hand_frames(9) + [frame(3)] * 25 + hand_frames(9) + [frame(4)] * 25
    play(ref, kept + hand_frames(9) + [frame(5)] * 25)
    assert [o["type"] for o in out] == ["touch", "claim", "needs_referee", "claim"]
    back = [e for e in ref.events if e.type == "tiles_back"]
    item = next(e for e in ref.events if e.type == "needs_referee")
    assert len(back) == 1 and back[0].data["item"] == item.id
    assert {tuple(s) for s in back[0].data["slots"]} == {E, F}
    st = G.replay(ref.events)
    assert [st.slot(i) for i in range(8) if st.board.present[i]] == [B, D, E, F, G_, H]
    assert not st.off_table_pending() and item.id not in st.needs
    assert st.scores() == {"Ada": 10_000, "Bo": 10_200}
    ref, out = referee(scenes, claim_hold_s=1.0)
    play(ref, kept + hand_frames(9) + [frame(5)] * 25 + hand_frames(9) + [frame(4)] * 25)
    assert [o["type"] for o in out] == ["touch", "claim", "needs_referee", "claim", "claim"]
    assert out[4]["valid"] is True and out[4]["player"] == "Bo" and {tuple(s) for s in out[4]["slots"]} == {E, F}
    st = G.replay(ref.events)
    assert [st.slot(i) for i in range(8) if st.board.present[i]] == [B, D, G_, H]


def _brighter(code, gain=1.3):
    img = np.clip(frame(code).astype(np.float32) * gain, 0, 255).astype(np.uint8)
    img[0, 0] = code
    return img


def test_a_step_in_the_light_is_no_hand_resting_over_the_board():
    # the room's light comes on (+30 %): D now reads washed out (hidden) in
    # every picture; before, each still picture was refused as "hand in
    # view" and E + F, taken later, were never seen (a break-test lost the
    # rest of a game so)
    ref, out = referee({1: recognition(), 5: recognition(occluded=[D]), 6: recognition(absent=[E, F], occluded=[D]),
                        9: recognition(occluded=[A, B])})
    frames = [frame(1)] * 5 + hand_frames(9) + [_brighter(5)] * 8 + hand_frames(9) + [_brighter(6)] * 8
    play(ref, frames)
    assert [(o["type"], o.get("valid")) for o in out] == [("claim", True)]
    assert {tuple(s) for s in out[0]["slots"]} == {E, F}
    assert ref.tracker.board.present[LAYOUT.slot_index(D)]          # left as it was


def test_a_slot_hidden_for_long_over_several_still_moments_is_judged_around():
    # same light, D read hidden: with light_step 0 only the long wait (stuck_s)
    # lets the pictures be judged, leaving D and its neighbours as they were
    ref, out = referee({1: recognition(), 5: recognition(occluded=[D]), 6: recognition(absent=[E, F], occluded=[D]),
                        9: recognition(occluded=[A, B])}, light_step=0.0, stuck_s=2.0, guard_half_units=1)
    frames = [frame(1)] * 5 + hand_frames(9) + ([_brighter(5)] * 8 + hand_frames(9)) * 2 + [_brighter(6)] * 8
    play(ref, frames)
    assert [(o["type"], o.get("valid")) for o in out] == [("claim", True)]
    ref, out = referee({1: recognition(), 5: recognition(occluded=[D]), 6: recognition(absent=[E, F], occluded=[D]),
                        9: recognition(occluded=[A, B])}, light_step=0.0, guard_half_units=1)
    play(ref, frames)
    assert out == []                        # 10 s by default: never reached here
    assert ref.status.notes == ["from frame 11 to the end every still picture looked as if a hand lay over the "
                                "board (slots hidden or changed), so nothing after frame 2 was judged: keep hands "
                                "off the board at the end, and check the light on the mat"]
    # a live camera stopped by the user (Ctrl+C) with a hand over the board
    # then: no such note (a break-test, session 52: the demo stopped so told
    # its players to keep hands off the board at the end)
    ref, out = referee({1: recognition(), 5: recognition(occluded=[D]), 6: recognition(absent=[E, F], occluded=[D]),
                        9: recognition(occluded=[A, B])}, light_step=0.0, guard_half_units=1)
    for i, f in enumerate(frames):
        ref.feed(i, f)
    ref.finish(stopped=True)
    assert ref.status.notes == []


def test_a_hand_beside_the_board_is_a_change_outside_the_slots_box():
    from vision.referee import beside_board_change
    before = np.full((90, 160), 128.0, np.float32)
    quads = np.array([[[400, 200], [430, 200], [430, 240], [400, 240]],
                      [[800, 400], [830, 400], [830, 440], [800, 440]]], np.float64)   # 1280 x 720 px
    inside = before.copy()
    inside[38:43, 74:80] = 250.0                  # on the board: between the two slots (sig px 50-104, 25-55)
    assert beside_board_change(before, inside, quads, 1280, 720) == 0.0
    # within the slots' upright box but well off their outline (a turned
    # view: the box takes in much of the mat beside the board): beside
    off = before.copy()
    off[45:55, 55:65] = 250.0
    assert beside_board_change(before, off, quads, 1280, 720) > 0.005
    hand = before.copy()
    hand[70:90, 0:30] = 40.0                      # a hand at the bottom-left corner
    share = beside_board_change(before, hand, quads, 1280, 720)
    assert 0.04 < share < 0.05                    # 600 px of the ~13,100 beside the slots' outline
    assert beside_board_change(before, hand, np.zeros((0, 4, 2)), 1280, 720) == 0.0


#: a board of two rows of three in a 320 x 180 px picture, for the hand tests
ROW = Layout("row", ((0, 0, 0), (2, 0, 0), (4, 0, 0), (0, 4, 0), (2, 4, 0), (4, 4, 0)))
ROW_FACES = ["hearts-1", "hearts-2", "hearts-1", "hearts-2", "roses-3", "roses-3"]
ROW_QUADS = np.array([[[120 + 15 * x, 50 + 10 * y], [148 + 15 * x, 50 + 10 * y], [148 + 15 * x, 86 + 10 * y],
                       [120 + 15 * x, 86 + 10 * y]] for x, y, z in ROW.slots], np.float32)


def row_reading(absent=()):
    """A reading of :data:`ROW`, the ``absent`` slots empty."""
    tiles = tuple(SlotState(s, s not in absent, None if s in absent else f, 0.95, None,
                            "empty" if s in absent else "face") for s, f in zip(ROW.slots, ROW_FACES))
    return Recognition("love", ROW, tiles, ROW_QUADS)


def test_a_second_reading_due_as_the_hand_comes_back_is_taken_on_the_last_still_frame():
    # bench game 9203: a blocked tile kept off the board for 1.0 s with no
    # hand in view was read gone once; its second reading (confirm_s 0.7 s
    # later) fell due on the very frame the hand came back to put it back,
    # and the lift and its penalty were lost.  At 10 frames a second: the
    # first reading at frame 11 (the still run from 9, settled after 3
    # frames), due at 18; blip_s 0.1 s is 2 frames here
    scenes = {1: recognition(), 2: recognition(absent=[B]), 9: recognition(occluded=[A, B])}
    for still, penalties in ((8, [(B, 9)]), (7, [])):
        # still frames 9-16, the hand back at 17 (1 frame before the due
        # one): read on frame 16; 9-15, back at 16: too early, the change
        # waits for the next still picture, which shows B back
        ref, out = referee(scenes, confirm_s=0.7)
        play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * still + hand_frames(9) + [frame(1)] * 12)
        assert [(tuple(o["slot"]), o["frame"]) for o in out if o["type"] == "penalty"] == penalties, still
        assert [o["type"] for o in out] == ["penalty"] * len(penalties), still


def test_at_video_rates_a_second_reading_cut_short_is_taken_half_a_second_after_the_first():
    # bench game 15903 (30 frames a second, session 50): a blocked tile kept
    # off for 1.0 s was read gone 0.1 s after the hand left, and the shadow
    # of the hand coming back moved the picture 0.13 s before the second
    # reading was due (0.7 s after the first): the penalty was lost.  The
    # last still frame now counts from 0.5 s after the first reading: the
    # first reading at frame 11 (still from 9, settled after 3 frames), due
    # at 32; still frames 9-26, the hand back at 27: read on frame 26, 0.5 s
    # after the first; 9-25: too early
    scenes = {1: recognition(), 2: recognition(absent=[B]), 9: recognition(occluded=[A, B])}
    for still, penalties in ((18, [(B, 9)]), (17, [])):
        out = []
        settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3, jitter_px=0.0),
                                   confirm_s=0.7)
        ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), emit=out.append, fps=30.0, settings=settings)
        play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * still + hand_frames(9) + [frame(1)] * 40)
        assert [(tuple(o["slot"]), o["frame"]) for o in out if o["type"] == "penalty"] == penalties, still


def test_a_hand_held_still_over_a_blocked_tile_read_empty_is_no_penalty():
    # bench game 8103: fingers held still over the top row read as "no face";
    # three blocked tiles were penalised that no one touched
    row, quads, reading = ROW, ROW_QUADS, row_reading

    def picture(code, arm=False):
        img = np.full((180, 320, 3), 120, np.uint8)
        img[30:150, 90:250] = 235                             # the mat
        for q in quads:
            x0, y0 = q.min(axis=0).astype(int)
            img[y0 + 2:y0 + 34, x0 + 2:x0 + 26] = 200          # the faces
            img[y0 + 10:y0 + 20, x0 + 8:x0 + 18] = 40
        if arm:
            img[0:80, 148:178] = (40, 70, 110)                 # an arm from the top edge over (2, 0, 0)
        img[0, 0] = code
        return img

    blocked = (2, 0, 0)                                       # pinched between (0, 0, 0) and (4, 0, 0)
    for share, penalties in ((0.25, []), (0.0, [blocked])):
        out = []
        settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3), confirm_s=0.1,
                                   hand_reach_share=share)
        ref = Referee("love", row, ["Ada", "Bo"], Script({1: reading(), 2: reading(absent=[blocked])}),
                      emit=out.append, fps=10.0, settings=settings)
        play(ref, [picture(1)] * 5 + [picture(2, arm=True)] * 12 + [picture(1)] * 8)
        assert [tuple(o["slot"]) for o in out if o["type"] == "penalty"] == penalties, share
    assert ref.status.judged >= 2


def test_a_change_of_light_judges_a_picture_with_a_hand_over_the_board_leaving_its_slots_alone():
    # a break-test, session 50: the demo recording's exposure flickering by
    # 5 % let a still picture of a hand resting over four tiles pass as a
    # change of light; under the fingers their faces' probabilities fell, the
    # tracker took them off and charged the blocked one.  An arm from the
    # top edge rests over (2, 0, 0), read hidden, in a picture 30 % brighter
    # than the last judged one: the picture is judged (a blocked tile lifted
    # as the light stepped is charged: refusing such pictures lost one), and
    # the slot under the arm is held, not judged at all by the tracker
    # (test_tracking: a held slot is not taken off by its face's fall); the
    # picture after the arm left shows the claim
    row, quads = ROW, ROW_QUADS

    def reading(absent=(), hidden=()):
        tiles = tuple(SlotState(s, s not in absent, None if s in absent or s in hidden else f,
                                0.5 if s in hidden else 0.95, None,
                                "empty" if s in absent else "occluded" if s in hidden else "face")
                      for s, f in zip(row.slots, ROW_FACES))
        return Recognition("love", row, tiles, quads)

    def picture(code, gain=1.0, arm=False, gone=()):
        img = np.full((180, 320, 3), 120, np.uint8)
        img[30:150, 90:250] = 235                             # the mat
        for s, q in zip(row.slots, quads):
            if s in gone:
                continue
            x0, y0 = q.min(axis=0).astype(int)
            img[y0 + 2:y0 + 34, x0 + 2:x0 + 26] = 200          # the faces
            img[y0 + 10:y0 + 20, x0 + 8:x0 + 18] = 40
        img = np.clip(img.astype(np.float32) * gain, 0, 255).astype(np.uint8)
        if arm:
            img[0:80, 148:178] = (40, 70, 110)                 # an arm from the top edge over (2, 0, 0)
        img[0, 0] = code
        return img

    pair = ((0, 0, 0), (4, 0, 0))                             # hearts-1, both free
    script = Script({1: reading(), 2: reading(hidden=[(2, 0, 0)]), 3: reading(absent=pair)})
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3), confirm_s=0.1)
    out = []
    ref = Referee("love", row, ["Ada", "Bo"], script, emit=out.append, fps=10.0, settings=settings)
    seen = []
    observe = ref.tracker.observe if ref.tracker is not None else None
    for i, f in enumerate([picture(1)] * 5 + [picture(2, 1.3, arm=True)] * 12):
        ref.feed(i, f)
        if ref.tracker is not None and observe is None:
            observe = ref.tracker.observe
            ref.tracker.observe = lambda frame, obs, **kw: (seen.append(obs.held), observe(frame, obs, **kw))[1]
    assert ref.status.judged == 2
    assert [None if h is None else [row.slots[j] for j in np.flatnonzero(h)] for h in seen] == [[(2, 0, 0)]]
    for i, f in enumerate([picture(3, 1.3, gone=pair)] * 8, start=17):
        ref.feed(i, f)
    ref.finish()
    assert ref.status.judged >= 2
    assert [(o["type"], o["valid"], {tuple(s) for s in o["slots"]}) for o in out] == [("claim", True, set(pair))]


def test_a_hand_resting_by_the_board_holds_back_no_picture_and_no_penalty():
    # a hand resting on the table by the board, its fingertips on the edge of
    # an outer tile whose face is still read, while another hand lifts the
    # blocked tile beside it and puts it back: every picture was refused as a
    # hand in view (the penalty lost, a claim held back ``stuck_s``), as
    # the change since the last picture with nothing beside the board (the
    # resting hand, and the emptied slot next to it) reaches in from beside it
    row, quads, reading = ROW, ROW_QUADS, row_reading
    blocked = (2, 0, 0)                                       # pinched between (0, 0, 0) and (4, 0, 0)

    def picture(code, rest=False):
        img = np.full((180, 320, 3), 120, np.uint8)
        img[30:150, 90:250] = 235                             # the mat
        for s, q in zip(row.slots, quads):
            if code == 2 and s == blocked:
                continue                                      # lifted: the mat shows
            x0, y0 = q.min(axis=0).astype(int)
            img[y0 + 2:y0 + 34, x0 + 2:x0 + 26] = 200          # the faces
            img[y0 + 10:y0 + 20, x0 + 8:x0 + 18] = 40
        if rest:
            img[0:62, 96:151] = (40, 70, 110)                  # fingertips on the top of (0, 0, 0)'s face
        img[0, 0] = code
        return img

    script = Script({1: reading(), 2: reading(absent=[blocked])})
    frames = ([picture(1)] * 5 + [picture(1, rest=True)] * 12 + [picture(2, rest=True)] * 12
              + [picture(1, rest=True)] * 12 + [picture(1)] * 8)
    for share in (0.25, 0.0):
        out = []
        # (the lift is drawn with no hand moving: a tile of 2 x 3 signature
        # px vanishing, which the shake-tolerant gate does not see)
        settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3, jitter_px=0.0),
                                   confirm_s=0.1, hand_reach_share=share)
        ref = Referee("love", row, ["Ada", "Bo"], script, emit=out.append, fps=10.0, settings=settings)
        play(ref, frames)
        assert [tuple(o["slot"]) for o in out if o["type"] == "penalty"] == [blocked], share
        assert ref.status.judged >= 4, share


def test_a_hand_held_still_from_the_pictures_edge_is_not_learnt_as_the_table():
    # bench game 15901 (30 fps; the mat's lower edge within a tile of the
    # picture's): a hand held still over the bottom row for 0.27 s, its arm
    # crossing the picture's edge, no tile hidden, was judged, and kept as
    # the picture with nothing reaching in; every later picture read its
    # going as an arm over the slot a claim had emptied, and two claims
    # waited until the camera moved.  The row lies 44 px from the bottom
    # edge (its outline grown by a tile takes in the rest of the picture
    # below it): an arm from the bottom edge hovers over (4, 0, 0) and
    # (4, 4, 0), both still read; then the hearts-1 pair is claimed
    quads = ROW_QUADS + np.float32([0, 10])
    pair = ((0, 0, 0), (4, 0, 0))

    def reading(absent=()):
        tiles = tuple(SlotState(s, s not in absent, None if s in absent else f, 0.95, None,
                                "empty" if s in absent else "face") for s, f in zip(ROW.slots, ROW_FACES))
        return Recognition("love", ROW, tiles, quads)

    def picture(code, arm=False):
        img = np.full((180, 320, 3), 120, np.uint8)
        img[20:180, 90:250] = 235                             # the mat, to the picture's edge
        for s, q in zip(ROW.slots, quads):
            if code == 2 and s in pair:
                continue
            x0, y0 = q.min(axis=0).astype(int)
            img[y0 + 2:y0 + 34, x0 + 2:x0 + 26] = 200          # the faces
            img[y0 + 10:y0 + 20, x0 + 8:x0 + 18] = 40
        if arm:
            img[60:180, 180:208] = (40, 70, 110)               # from the bottom edge over (4, 0, 0), (4, 4, 0)
        img[0, 0] = code
        return img

    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3), confirm_s=0.1)
    ref = Referee("love", ROW, ["Ada", "Bo"], Script({1: reading(), 2: reading(absent=pair)}),
                  emit=out.append, fps=10.0, settings=settings)
    play(ref, [picture(1)] * 5 + [picture(1, arm=True)] * 6 + [picture(2)] * 12)
    assert ref.status.judged >= 3
    assert [(o["type"], o["frame"], {tuple(s) for s in o["slots"]}) for o in out] == [("claim", 11, set(pair))]


def _face_row(y: float) -> np.ndarray:
    """(6, 4, 2) float px: a row of 6 faces 30 x 40 px at height ``y`` of a
    1280 x 720 picture, 10 px apart from x 400 (signature x 50-79 at 160 x 90)."""
    return np.array([[[400 + 40 * k, y], [430 + 40 * k, y], [430 + 40 * k, y + 40], [400 + 40 * k, y + 40]]
                     for k in range(6)], np.float64)


def _painted(sig: np.ndarray, where, value: float) -> np.ndarray:
    """A copy of signature ``sig`` with ``sig[where]`` set to ``value``."""
    out = sig.copy()
    out[where] = value
    return out


def test_hand_reach_marks_the_slots_under_an_arm_from_beside_the_board_not_a_lifted_tile():
    # bench game 8103: a hand held still over the top row read three blocked
    # tiles "no face", and three penalties were raised for tiles never touched
    from vision.referee import hand_reach
    quads = _face_row(200)                    # a row of 6 faces, 1280 x 720 px (sig x 50-79)
    before = np.full((90, 160), 128.0, np.float32)
    # an arm from the picture's top edge down over the faces 3 and 4
    arm = _painted(before, np.s_[0:30, 65:76], 60.0)
    assert hand_reach(before, arm, quads, 1280, 720).tolist() == [False, False, False, True, True, False]
    # a tile lifted away: its face changed, nothing beside the board did
    lifted = _painted(before, np.s_[25:30, 55:59], 200.0)
    assert not hand_reach(before, lifted, quads, 1280, 720).any()
    # the same with a hand resting on the table away from the board
    rest = _painted(lifted, np.s_[70:90, 0:30], 40.0)
    assert not hand_reach(before, rest, quads, 1280, 720).any()
    # the whole picture changed (the light, a camera moved): left to their rules
    assert not hand_reach(before, before + 40.0, quads, 1280, 720).any()
    # a share of the face: an arm over a quarter of face 5 counts, a sliver not
    edge = _painted(before, np.s_[0:30, 73:75], 60.0)   # sig x 73-74: face 4 spans x 70-74, face 5 x 75-79
    assert hand_reach(before, edge, quads, 1280, 720).tolist() == [False] * 4 + [True, False]
    assert hand_reach(before, edge, quads, 1280, 720, share=0.5).tolist() == [False] * 6


def _table_with_arm(arm_bgr=(100, 150, 210)) -> tuple[np.ndarray, np.ndarray]:
    """Two 1280 x 720 BGR pictures of a pink table (BGR 150, 150, 190: grey
    0.114 x 150 + 0.587 x 150 + 0.299 x 190 = 162.0) with a row of ivory
    faces (:func:`_face_row` at y 200), the second with an arm from the
    picture's top edge down over faces 3 and 4 (x 520-599: signature x
    65-74), BGR ``arm_bgr`` (100, 150, 210: grey 162.2, the table's)."""
    table = np.zeros((720, 1280, 3), np.uint8)
    table[:] = (150, 150, 190)
    for q in _face_row(200):
        cv2.fillConvexPoly(table, np.round(q).astype(np.int32), (215, 235, 240))
    arm = table.copy()
    arm[0:240, 520:600] = arm_bgr
    return table, arm


def test_hand_signature_sees_an_arm_of_the_table_s_grey_by_its_colour():
    # bench game 19703 (the independent renderer): an arm over a pink table
    # changed the grey signature by a median 5.7 levels, its colour by 24
    from vision.referee import hand_signature, signature_change
    table, arm = _table_with_arm()
    before, after = hand_signature(table), hand_signature(arm)
    assert before.shape == (90, 160, 3) and before.dtype == np.float32
    assert hand_signature(table, colour=False).shape == (90, 160)
    assert np.array_equal(hand_signature(table, colour=False), before[..., 0])
    grey = np.abs(after[..., 0] - before[..., 0])
    colour = np.linalg.norm(after[..., 1:] - before[..., 1:], axis=2)
    # beside the board (signature rows 0-19; the faces lie at rows 25-29)
    assert grey[0:20, 66:74].max() < 1.0                  # the same grey: 162.2 against 162.0
    assert colour[0:20, 66:74].min() > 25.0               # a* 14.9 -> 16.8, b* 5.7 -> 35.3
    assert not signature_change(before, after, chroma_delta=0.0)[0:20].any()
    changed = signature_change(before, after)
    assert changed[0:20, 66:74].all() and not changed[40:, :].any() and not changed[:, :60].any()
    # grey signatures alone compare grey levels (the motion gate's kind)
    assert not signature_change(before[..., 0], after[..., 0])[0:20].any()


def test_hand_reach_and_the_hand_beside_test_read_colour_as_well_as_grey():
    from vision.referee import beside_board_change, hand_reach, hand_signature
    quads = _face_row(200)
    table, arm = _table_with_arm()
    before, after = hand_signature(table), hand_signature(arm)
    assert hand_reach(before, after, quads, 1280, 720).tolist() == [False, False, False, True, True, False]
    # grey alone (chroma_delta 0, as before session 55): the arm unseen
    assert not hand_reach(before, after, quads, 1280, 720, chroma_delta=0.0).any()
    assert beside_board_change(before, after, quads, 1280, 720) > 0.005
    assert beside_board_change(before, after, quads, 1280, 720, chroma_delta=0.0) == 0.0
    # a shadow of the table's own colour, 13 grey levels darker (BGR 138,
    # 138, 175: a* 14.0, b* 5.4, under 1 unit from the table's) is no hand
    _, shadow = _table_with_arm((138, 138, 175))
    assert not hand_reach(before, hand_signature(shadow), quads, 1280, 720).any()
    assert beside_board_change(before, hand_signature(shadow), quads, 1280, 720) == 0.0


def test_hand_reach_counts_an_arm_from_beyond_the_picture_where_the_board_nears_its_edge():
    # bench game 13803 (960 x 540): the bottom row lay within a tile of the
    # picture's edge, so the arm's part beside the board was outside the
    # picture; fingertips held still over three tiles were read as three
    # tiles lifted (a penalty, an invented claim, every later move to the
    # wrong player)
    from vision.referee import hand_reach
    quads = _face_row(630)                    # sig rows 79-84 of 90, x 50-79: a tile 6 sig px
    before = np.full((90, 160), 128.0, np.float32)
    arm = _painted(before, np.s_[81:90, 65:74], 60.0)        # from the bottom edge over faces 3 and 4
    assert hand_reach(before, arm, quads, 1280, 720).tolist() == [False, False, False, True, True, False]
    # a tile lifted away there changes its own face, side and shadow
    assert not hand_reach(before, _painted(before, np.s_[79:88, 55:59], 200.0), quads, 1280, 720).any()
    # a change crossing the edge over fewer than half a tile's px
    assert not hand_reach(before, _painted(before, np.s_[81:90, 65:67], 60.0), quads, 1280, 720).any()


def test_hand_reach_measures_the_board_s_distance_from_the_picture_s_edge_exactly():
    # bench game 17003 (Word on the Alphabet Tower, 960 x 540): the top row
    # lay 7 signature px under the picture's edge, a tile 9 (0.75 of it:
    # 6.75); the 3 x 3 mask's distance, 6.68, left the edge out, and fingers
    # held still over the top row were read as two tiles lifted (an invented
    # attempt, and the turn's claim went to the other player)
    from vision.referee import hand_reach
    quads = np.array([[[400 + 50 * k, 56], [445 + 50 * k, 56], [445 + 50 * k, 112], [400 + 50 * k, 112]]
                      for k in range(6)], np.float64)    # faces 45 x 56 px: diagonal 71.8, 9 sig px; top at sig row 7
    before = np.full((90, 160), 128.0, np.float32)
    arm = _painted(before, np.s_[0:12, 69:74], 60.0)       # from the top edge over face 3 (sig x 68.75-74.4)
    assert hand_reach(before, arm, quads, 1280, 720).tolist() == [False, False, False, True, False, False]


def test_follow_shake_moves_an_earlier_signature_as_the_slots_moved():
    from vision.referee import follow_shake, hand_reach
    quads = np.array([[[400 + 40 * k, 200], [430 + 40 * k, 200], [430 + 40 * k, 240], [400 + 40 * k, 240]]
                      for k in range(6)], np.float64)
    before = np.full((90, 160), 128.0, np.float32)
    before[10:20, 20:30] = 250.0                  # a marker beside the board
    before[25:30, 50:54] = 30.0                   # a face
    after = np.roll(before, 2, axis=1)            # the camera shaken: 16 px to the right in 1280 x 720
    moved = follow_shake(before, quads, quads + [16.0, 0.0], 1280, 720)
    assert np.abs(moved - after)[:, 2:].max() < 1e-3
    # moved, nothing reads as a change reaching in from beside the board
    assert hand_reach(moved, after, quads + [16.0, 0.0], 1280, 720).sum() == 0
    # slots that did not move: the signature as it was
    assert follow_shake(before, quads, quads + 0.1, 1280, 720) is before


def test_slot_brightness_and_a_light_change_seen_on_most_slots():
    from vision.referee import light_changed, slot_brightness
    img = np.full((40, 60), 50, np.uint8)
    img[10:20, 10:20] = 200
    quads = np.array([[[10, 10], [19, 10], [19, 19], [10, 19]], [[30, 10], [39, 10], [39, 19], [30, 19]],
                      [[100, 100], [110, 100], [110, 110], [100, 110]]], np.float64)
    got = slot_brightness(img, quads, step=1)
    assert got[0] == 200.0 and got[1] == 50.0 and np.isnan(got[2])
    before = np.array([100.0] * 8)
    assert light_changed(before, before * 1.2, 0.08)                        # a lamp: every slot brighter
    assert not light_changed(before, before * 1.05, 0.08)                   # under the step
    hand = before.copy()
    hand[:5] = 30.0                   # a hand shading 5 of 8 slots: the median moves, most slots do not agree
    hand[5:] = 101.0
    assert not light_changed(before, hand, 0.08)
    assert not light_changed(np.array([np.nan]), np.array([100.0]), 0.08)


def test_players_checked_before_the_first_frame():
    from companion.errors import BadInput
    with pytest.raises(BadInput, match="for 2 to 4 player"):
        Referee("mindful", LAYOUT, ["Solo", "A", "B", "C", "D"], Script({}), mode="harmony-duels")


def test_word_table_with_two_scholars():
    letters = ["A", "B", "A", "B", "C", "C", "D", "D"]
    rec = {1: recognition(faces=letters), 2: recognition(absent=[E, F], faces=letters),
           9: recognition(occluded=[E], faces=letters)}
    for r in rec.values():
        object.__setattr__(r, "variant", "word")
    out = []
    ref = Referee("word", LAYOUT, ["Ada", "Bo"], Script(rec), emit=out.append, fps=10.0,
                  settings=RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3)))
    assert ref.mode == "zen-archives"
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5)
    assert [o["type"] for o in out] == ["claim"] and out[0]["valid"]


def _word_referee(scenes, letters, players=("Ada", "Bo"), mode=None):
    rec = {k: (recognition(faces=letters, **v) if isinstance(v, dict) else v) for k, v in scenes.items()}
    for r in rec.values():
        object.__setattr__(r, "variant", "word")
    out = []
    ref = Referee("word", LAYOUT, list(players), Script(rec), emit=out.append, fps=10.0, mode=mode,
                  settings=RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3), confirm_s=0.1))
    return ref, out


# Word Mahjong 2.1 Rule 2: three or more free letter tiles spelling a word
# leave the board together.  A, C, D, E spell TREE (B, pinched, is X); H (S)
# stands free on G.
TREE = ["T", "X", "R", "E", "E", "Q", "Z", "S"]


def test_free_letter_tiles_that_spell_a_word_are_one_word_not_pairs():
    ref, out = _word_referee({1: {}, 2: {"absent": [A, C, D, E]}, 9: {"occluded": [A, C]}}, TREE)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5)
    assert [(o["type"], o.get("word")) for o in out] == [("word", "TREE")]
    assert [tuple(s) for s in out[0]["slots"]] == [A, C, D, E] and out[0]["faces"] == list("TREE")
    st = G.replay(ref.events)
    assert [e.type for e in ref.events] == ["game_started", "word"]
    assert st.player("Ada").words == ["TREE"] and st.board.n_present == 4


def test_letters_that_make_no_move_yet_grow_into_a_word():
    # T and R (no pair) leave first; E and E follow in the next still
    # picture: the player was spelling TREE
    ref, out = _word_referee({1: {}, 2: {"absent": [A, C]}, 3: {"absent": [A, C, D, E]},
                              9: {"occluded": [A, C]}}, TREE)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(3)] * 5)
    assert [(o["type"], o.get("word")) for o in out] == [("word", "TREE")]


def test_a_pair_held_off_the_board_is_a_whole_move():
    # E + E leave first (a pair); T and R follow: the pair is claimed, and T
    # and R, no move, wait; never put back, they go to the referee at the end
    ref, out = _word_referee({1: {}, 2: {"absent": [D, E]}, 3: {"absent": [A, C, D, E]},
                              9: {"occluded": [A, C]}}, TREE)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(3)] * 5)
    assert [(o["type"], o.get("word")) for o in out][0] == ("claim", None)
    assert "word" not in [o["type"] for o in out]


def test_the_table_beside_the_board_is_learnt_again_after_a_knock_or_when_it_stays_the_same():
    # a hand resting beside the board (frame(..., hand=6) lies right of the
    # slots' box) means a word may be half spelled.  A camera knocked once
    # used to make every later picture "a hand beside the board" (the table
    # was never learnt again), so held words grew by the next moves' tiles
    ref, _ = _word_referee({1: {}}, TREE)
    rec = recognition(faces=TREE)
    beside = ref._hand_beside_board
    assert not beside(frame(1), rec)                       # the table is learnt
    assert beside(frame(1, hand=6), rec)
    assert not beside(frame(1), rec)
    assert not beside(frame(1, shift=3), rec, relearn=True)   # knocked: the new view is the table
    assert not beside(frame(1, shift=3), rec)
    # the same thing beside the board in every judged picture for 20 s is
    # part of the table (a cup put down), not a move going on; a hand
    # resting in one place between letters for a few seconds is not
    seen = []
    for k in range(5):
        ref.status.frame = 1000 + 100 * k                  # 10 s apart at 10 fps
        seen.append(beside(frame(1, hand=6, shift=3), rec))
    assert seen == [True, True, False, False, False]
    # knocked while a hand rests beside the board in the middle of a move:
    # the move stays open (the new view holds the hand: not the table),
    # and the table is learnt once the move is over
    from types import SimpleNamespace
    ref2, _ = _word_referee({1: {}}, TREE)
    ref2.tracker = SimpleNamespace(busy=True)
    assert not ref2._hand_beside_board(frame(1), rec)
    assert ref2._hand_beside_board(frame(1, hand=6), rec)
    assert ref2._hand_beside_board(frame(1, hand=6, shift=3), rec, relearn=True)
    assert ref2._hand_beside_board(frame(1, shift=3), rec)          # still mid-move: nothing learnt yet
    ref2.tracker = SimpleNamespace(busy=False)
    assert not ref2._hand_beside_board(frame(1, shift=3), rec)      # the move over: the new table learnt
    assert not ref2._hand_beside_board(frame(1, shift=3), rec)
    assert ref2._hand_beside_board(frame(1, hand=6, shift=3), rec)


def test_a_word_with_a_blocked_letter_is_a_penalty_and_one_item_for_the_referee():
    # T, A (B: pinched between A and C), R, E leave for good: TEAR, but A
    # was blocked.  One penalty at the lift, one invalid word line and one
    # item for the referee with the four tiles off the table (before: a
    # penalty and two items, "do not split into valid pairs" and "did not
    # come back")
    letters = ["T", "A", "R", "E", "E", "Q", "Z", "S"]
    ref, out = _word_referee({1: {}, 2: {"absent": [A, B, C, D]}, 9: {"occluded": [A, C]}}, letters)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5)
    ref.finish()
    assert [(o["type"], o.get("word"), o.get("valid"), o["reason"]) for o in out][:2] == [
        ("penalty", None, None, "blocked"), ("word", "TEAR", False, "blocked")]
    assert [o["type"] for o in out] == ["penalty", "word", "needs_referee"]
    assert out[1]["explanation"] == "TEAR: 2,0,0 is blocked: pinched between 0,0,0 (left) and 4,0,0 (right)"
    assert sorted(map(tuple, out[2]["off_table"])) == sorted([A, B, C, D])
    st = G.replay(ref.events)
    assert [e.type for e in ref.events] == ["game_started", "penalty", "needs_referee"]
    assert st.player("Ada").words == [] and st.player("Ada").penalties == 1 and st.player("Bo").penalties == 0


def test_a_word_of_five_scores_its_vowel_tiles():
    # a scored mode (Scholar's Path, one player)
    ref, out = _word_referee({1: {}, 2: {"absent": [A, C, D, E, H]}, 9: {"occluded": [A, C]}}, TREE,
                             players=("Ada",), mode="scholars-path")
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5)
    assert [(o["type"], o.get("word")) for o in out] == [("word", "TREES")]
    st = G.replay(ref.events)
    # Word 2.7: +200 for the word, +200 for each of its two vowel tiles (5 letters or more)
    assert [line[1:] for line in st.player("Ada").lines] == [("word TREES", 200), ("vowel boosters x2", 400)]


def test_evidence_files_and_paths(tmp_path):
    ev = EvidenceWriter(tmp_path / "evidence", base=tmp_path)
    ref, out = referee({1: recognition(), 2: recognition(absent=[B]), 9: recognition(occluded=[B])},
                       evidence=ev)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(1)] * 5)
    (p,) = out
    evd = p["evidence"]
    assert set(evd) >= {"before", "after", "overlay", "slots", "reason"}
    for k in ("before", "after", "overlay", "slots"):
        assert not evd[k].startswith("/") and (tmp_path / evd[k]).is_file()
    slots = json.loads((tmp_path / evd["slots"]).read_text())
    assert len(slots["slots"]) == len(LAYOUT) and len(slots["quads"][0]) == 4
    assert evd["reason"].startswith("2,0,0 is blocked")
    led = [e for e in ref.events if e.type == "penalty"][0]
    assert led.data["evidence"] == evd and led.data["frame"] == p["frame"]
    (tmp_path / "f0.jpg").write_bytes(b"x")
    with pytest.raises(BadInput, match="is a file, not a folder"):
        EvidenceWriter(tmp_path / "f0.jpg")
    # a device is named as one (a break-test, session 56: /dev/null was "a file")
    if os.path.exists("/dev/null"):
        with pytest.raises(BadInput, match="^evidence folder /dev/null is a device, not a folder$"):
            EvidenceWriter(Path("/dev/null"))


def test_two_runs_writing_evidence_in_one_folder_at_once_number_apart(tmp_path):
    # a break-test, session 50: two referees of one recording given the same
    # events file at once both numbered from 1, and the second run's pictures
    # replaced the first's (11 folders for 22 events)
    from pathlib import Path
    from vision.referee import _Seen
    from vision.tracking import TrackEvent
    first, second = EvidenceWriter(tmp_path / "ev"), EvidenceWriter(tmp_path / "ev")
    seen = _Seen(3, frame(1), recognition())
    ev = TrackEvent("penalty", 33, (B,), ("hearts-2",), reason="2,0,0 is blocked")
    made = [w.save(ev, seen, seen)["event"] for w in (first, second, first, second)]
    assert [Path(m).parent.name for m in made] == ["0001-penalty-f33", "0002-penalty-f33",
                                                   "0003-penalty-f33", "0004-penalty-f33"]
    assert len(list((tmp_path / "ev").iterdir())) == 4


def test_evidence_folder_deleted_or_unwritable_mid_game_is_a_note_not_a_crash(tmp_path, monkeypatch):
    # a break-test, session 54: the evidence folder deleted while a game ran
    # (or a disk that refused a file) raised UnboundLocalError from save(),
    # a traceback that ended the game at its next claim
    from pathlib import Path
    from vision.referee import _Seen
    from vision.tracking import TrackEvent
    import shutil
    trouble: list[str] = []
    w = EvidenceWriter(tmp_path / "ev", on_error=trouble.append)
    seen = _Seen(3, frame(1), recognition())
    ev = TrackEvent("penalty", 33, (B,), ("hearts-2",), reason="2,0,0 is blocked")
    shutil.rmtree(tmp_path / "ev")
    got = w.save(ev, seen, seen)              # made again
    assert Path(got["event"]).is_file() and trouble == []

    def refuse(path, image):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("vision.referee._write_image", refuse)
    got = w.save(ev, seen, seen)
    assert got == {"reason": "2,0,0 is blocked"}
    assert len(trouble) == 1 and "No space left on device" in trouble[0] and "-penalty-f33" in trouble[0]
    w.save(ev, seen, seen)
    assert len(trouble) == 1                  # said once
    with pytest.raises(BadInput, match="cannot write evidence in .*No space left"):
        EvidenceWriter(tmp_path / "ev2").save(ev, seen, seen)


def test_an_evidence_folder_nothing_can_be_written_in_is_refused_before_the_game(tmp_path, monkeypatch):
    import tempfile

    class Refused:
        def __init__(self, *a, **k):
            raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tempfile, "TemporaryDirectory", Refused)
    with pytest.raises(BadInput, match="cannot write in evidence folder .*Permission denied"):
        EvidenceWriter(tmp_path / "ev")


def test_start_with_tiles_already_gone_uses_the_board_as_found():
    ref, out = referee({1: recognition(absent=[A, C]), 2: recognition(absent=[A, C, E, F]),
                        9: recognition(absent=[A, C], occluded=[E])}, start_as_found=True)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5)
    assert [o["type"] for o in out] == ["claim"]
    start = ref.events[0].data
    assert len(start["slots"]) == 6 and list(A) not in start["slots"]


def test_an_odd_number_found_empty_at_the_start_takes_the_snapshot_reading():
    # a break-test's game 4 tiles in was read 3 empty (one empty slot under
    # the absent confidence): every tile was kept, and a valid claim beside a
    # gone tile became a penalty.  recognize's reading of the same picture
    # (the presence model; tiles leave in pairs) finds both gone: it is taken
    first = recognition(absent=[A])                  # C misread as standing
    snapshot = recognition(absent=[A, C])
    ref, out = referee({1: first, 2: recognition(absent=[A, C, E, F]),
                        9: recognition(absent=[A], occluded=[E])}, start_as_found=True)
    ref.advise = lambda frame: snapshot
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5)
    start = ref.events[0].data
    assert len(start["slots"]) == 6 and list(A) not in start["slots"] and list(C) not in start["slots"]
    assert [o["type"] for o in out] == ["claim"]
    # a snapshot that finds an odd number too changes nothing: the referee is asked
    ref, out = referee({1: first, 2: recognition(absent=[A, E, F]), 9: recognition(absent=[A], occluded=[E])},
                       start_as_found=True)
    ref.advise = lambda frame: first
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5)
    assert len(ref.events[0].data["slots"]) == 8
    assert ref.events[1].type == "needs_referee" and "1 slot looked empty at the start (an odd number)" in \
        ref.events[1].data["reason"]


def test_by_default_the_game_starts_from_the_whole_deal():
    # a slot misread as empty in the first frame stays on the board; it is
    # only doubted, and reading it empty again later is no lift
    ref, out = referee({1: recognition(absent=[D]), 2: recognition(absent=[D, E, F]),
                        9: recognition(absent=[D], occluded=[E])})
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5)
    assert [o["type"] for o in out] == ["claim"]
    assert len(ref.events[0].data["slots"]) == 8
    assert ref.tracker.board.present[LAYOUT.slot_index(D)]


def test_the_under_way_note_needs_recognize_to_find_the_slots_empty_too():
    # bench game 8100: the classifier alone read 3 slots of a whole deal empty
    # (0.68-0.85), and the referee suggested --start-as-found for a game that
    # had not begun; recognize's reading of the frame found every tile
    settings = dict(start_note_empty=3)
    ref, out = referee({1: recognition(absent=[A, C, D])}, **settings)
    ref.advise = lambda frame: recognition()
    play(ref, [frame(1)] * 5)
    assert not any("read empty" in n for n in ref.status.notes)
    # a game truly under way: both readings find them gone
    ref, out = referee({1: recognition(absent=[A, C, D])}, **settings)
    ref.advise = lambda frame: recognition(absent=[A, C, D, E])
    play(ref, [frame(1)] * 5)
    assert [n for n in ref.status.notes if "read empty" in n] == [
        "3 slots read empty in the first still picture (frame 0), but the game is refereed from its whole deal: "
        "if it was already under way, run again with --start-as-found"]
    # without recognize's reading, the classifier's alone counts (as before)
    ref, out = referee({1: recognition(absent=[A, C, D])}, **settings)
    play(ref, [frame(1)] * 5)
    assert any(n.startswith("3 slots read empty") for n in ref.status.notes)


class Flicker(Script):
    """Scene 2 reads the pair gone only in its first reading (a misreading)."""

    def __call__(self, img):
        code = int(img[0, 0, 0])
        self.calls += 1
        if code == 2:
            self.seen2 = getattr(self, "seen2", 0) + 1
            return self.scenes[2] if self.seen2 == 1 else self.scenes[1]
        return self.scenes[code]


def test_a_change_must_be_read_twice_in_the_same_still_picture():
    scenes = {1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A])}
    out = []
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Flicker(scenes), emit=out.append, fps=10.0,
                  settings=RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3), confirm_s=0.3))
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 8)
    assert out == [] and ref.tracker.board.n_present == 8


def test_a_change_seen_just_before_the_end_is_still_confirmed():
    ref, out = referee({1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A])},
                       confirm_s=1.0)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 4)
    assert [o["type"] for o in out] == ["claim"]


def test_a_pair_seen_gone_then_cut_off_by_motion_that_lasts_to_the_end_is_claimed():
    # bench Word game 7733: the camera was knocked 0.6 s after a pair left,
    # the recording ended 0.4 s later, and the pair stayed on the ledger's
    # board: the first reading, never read again, decides alone
    scenes = {1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(absent=[A, C], occluded=[E])}
    ref, out = referee(scenes, confirm_s=0.5)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 4 + hand_frames(2))
    assert [(o["type"], {tuple(x) for x in o["slots"]}) for o in out] == [("claim", {A, C})]
    # more than one move's tiles read once are not scored so
    scenes[2] = recognition(absent=[A, B, C, D])
    ref, out = referee(scenes, confirm_s=0.5)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 4 + hand_frames(2))
    assert [o["type"] for o in out if o["type"] in ("claim", "penalty")] == []
    # a still picture read after the motion (here refused: a hand over the
    # board) leaves the first reading undecided, as before
    scenes[2] = recognition(absent=[A, C])
    ref, out = referee(scenes, confirm_s=0.5)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 4 + hand_frames(9, 4) + [frame(9)] * 5)
    assert [o["type"] for o in out if o["type"] == "claim"] == []


def test_many_tiles_gone_just_before_the_end_are_not_scored_on_one_reading():
    # six tiles read gone in the last still frames, too soon for a second
    # reading: more than one move takes, so nothing is scored
    ref, out = referee({1: recognition(), 2: recognition(absent=[A, B, C, D, E, F]), 9: recognition(occluded=[A])},
                       confirm_s=1.0)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 4)
    assert out == [] and ref.tracker.board.n_present == 8


def test_a_change_cut_short_by_the_next_move_is_confirmed_by_the_next_picture():
    # A + C leave; the next move starts before the second reading; the next
    # still picture shows them still gone (and E + F gone too): A + C are
    # claimed from their first sighting, E + F after their own second reading
    ref, out = referee({1: recognition(), 2: recognition(absent=[A, C]), 3: recognition(absent=[A, C, E, F]),
                        9: recognition(occluded=[B])}, confirm_s=0.5)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(3)] * 12)
    claims = [o for o in out if o["type"] == "claim"]
    assert [{tuple(s) for s in c["slots"]} for c in claims] == [{A, C}, {E, F}]
    assert claims[0]["frame"] == 9 and claims[1]["frame"] == 18


@pytest.mark.parametrize("between, seen", [([frame(2, shift=4)], 9), (hand_frames(9, n=3), 16)])
def test_a_change_cut_off_by_a_shaken_frame_keeps_the_frame_it_was_first_seen(between, seen):
    # B (pinched) leaves; its still picture is read at frame 11 (the run from
    # frame 9), but the second reading is due at 16.  A camera shaken on
    # frame 13 (two frames of motion: into it and back) does not move the
    # penalty to the next still run: a bench recording dated a penalty 0.77 s
    # late so.  A hand over the board for three frames does: the move was
    # not over when it was first seen (the still run from frame 16, the
    # hand's last frame being 15)
    ref, out = referee({1: recognition(), 2: recognition(absent=[B]), 9: recognition(occluded=[A])},
                       confirm_s=0.5)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 4 + between + [frame(2)] * 10)
    assert [(o["slot"], o["frame"]) for o in out if o["type"] == "penalty"] == [(list(B), seen)]


@pytest.mark.parametrize("skipped", [(), (1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25), (10, 11, 19, 20)])
def test_an_event_is_dated_at_its_still_runs_first_frame_fed_when_a_live_camera_skips_frames(skipped):
    # a live camera's indices count the camera's frames, some skipped when the
    # referee falls behind (FrameSource.dropped): the still run's first frame
    # is the first one fed after the hand, not its length counted back from
    # the index (a re-test's events came 4-9 frames late, on frames never fed)
    camera = [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 17
    fed = [i for i in range(len(camera)) if i not in skipped]
    ref, out = referee({1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])})
    for i in fed:
        ref.feed(i, camera[i])
    ref.finish()
    assert [o["type"] for o in out] == ["claim"]
    assert out[0]["frame"] == min(i for i in fed if i >= 9) and out[0]["frame"] in fed


def test_evidence_overlay_outlines_what_blocks_a_tile_and_nothing_round_a_free_one():
    # a valid claim's free tile has a neighbour on one side: outlined in the
    # blockers' orange with "left", it read as blocked (end-to-end review)
    import numpy as np
    from companion.layouts import Layout, Slot
    from companion.rules import Board
    from vision.reconstruct import Recognition, SlotState
    from vision.referee import BLOCKER_COLOUR, evidence_overlay
    from vision.tracking import TrackEvent
    layout = Layout("row", (Slot(0, 0, 0), Slot(2, 0, 0), Slot(4, 0, 0)), "test")
    quads = np.array([[[40 + 60 * i, 40], [90 + 60 * i, 40], [90 + 60 * i, 110], [40 + 60 * i, 110]]
                      for i in range(3)], np.float32)
    rec = Recognition("love", layout, tuple(SlotState(s, True, "hearts-1", 0.99, None, "face") for s in layout.slots),
                      quads)
    board = Board(layout)
    image = np.full((160, 240, 3), 255, np.uint8)

    from vision.overlay import to_overlay

    def orange_round(out, i):                 # blocker-orange pixels on slot i's outline
        # (a 160 x 240 frame is drawn 5 times larger: the overlay's pixels)
        assert out.shape[1] == 1200
        q = to_overlay(quads[i], image.shape).astype(int)
        band = out[q[0][1] - 8:q[2][1] + 9, q[0][0] - 8:q[2][0] + 9]
        return int((np.abs(band.astype(int) - BLOCKER_COLOUR).sum(axis=2) < 60).sum())

    claim = TrackEvent("claim", 5, (Slot(4, 0, 0),), ("hearts-1",), True,
                       blocks=(board.reason(2).to_json(),))             # free: only 2,0,0 on its left
    assert orange_round(evidence_overlay(image, rec, claim), 1) == 0
    pen = TrackEvent("penalty", 6, (Slot(2, 0, 0),), ("hearts-1",), False, reason="pinched",
                     blocks=(board.reason(1).to_json(),))               # pinched between 0,0,0 and 4,0,0
    out = evidence_overlay(image, rec, pen)
    assert orange_round(out, 0) > 50 and orange_round(out, 2) > 50


def test_a_face_uncovered_by_a_claim_is_written_to_the_ledger_as_faces_seen():
    # H is a roses-3 here: claimed with E, it uncovers G (cupid-arrow), whose
    # face the game's start could not know
    faces = FACES[:7] + ["roses-3"]
    ref, out = referee({1: recognition(faces=faces), 2: recognition(absent=[H, E], faces=faces),
                        9: recognition(occluded=[A, B], faces=faces)})
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5)
    assert [o["type"] for o in out] == ["claim"]           # no line in the events file
    start = ref.events[0]
    assert start.data["faces"][LAYOUT.slots.index(G_)] is None
    types = [e.type for e in ref.events]
    assert types == ["game_started", "claim", "faces_seen"]
    seen = ref.events[2]
    # only the uncovered tile: the others' faces were known from the start
    assert seen.data["slots"] == [list(G_)] and seen.data["faces"] == ["cupid-arrow"]
    st = G.replay(ref.events)
    assert st.faces[LAYOUT.slots.index(G_)] == "cupid-arrow"
    assert G.state_json(ref.events)["free_faces_unknown"] == 0


def test_a_face_read_on_a_covered_tile_is_not_written_to_the_ledger():
    # a frame that misjudges the stack reads a face on G while H still covers
    # it: no camera sees a covered face, so neither the tracker nor the
    # ledger takes it
    misread = recognition()
    tiles = list(misread.tiles)
    tiles[LAYOUT.slots.index(G_)] = SlotState(G_, True, "cupid-arrow", 0.97, None, "face")
    misread = Recognition("love", LAYOUT, tuple(tiles), QUADS)
    ref, out = referee({1: recognition(), 3: misread, 9: recognition(occluded=[A, B])})
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(3)] * 5)
    assert ref.tracker.state.faces[LAYOUT.slots.index(G_)] is None
    assert [e.type for e in ref.events] == ["game_started"]


def still_table(code, gone=(), shift=0, gain=1.0, noise=None):
    """A 1280 x 720 frame of a light mat with a row of 5 ivory tiles, the
    columns in ``gone`` (0-4) taken away.  One tile changes too few signature
    pixels to count as motion.  Scene ``code`` in the first pixel, as
    :func:`frame` (the scripted recogniser reads it; which columns are gone
    only has to change the picture where a tile leaves)."""
    img = table_frame({(0, c) for c in gone}, 1, shift, gain, noise)
    img = np.repeat(img[:, :, None], 3, axis=2)
    img[0, 0] = code
    return img


def time_lapse(scenes, **motion):
    out = []
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), emit=out.append, fps=1.0,
                  settings=RefereeSettings(motion=MotionSettings(**{"settle_frames": 3,
                                                                    "local_delta": SLOW_LOCAL_DELTA, **motion})))
    return ref, out


def test_time_lapse_blocked_tile_gone_for_one_still_picture_is_a_penalty():
    # frames a second apart, no hand in any: B (pinched by A and C) is gone
    # in frames 4-7 and back from frame 8
    rng = np.random.default_rng(5)
    ref, out = time_lapse({1: recognition(), 2: recognition(absent=[B])})
    frames = [still_table(1, noise=rng) for _ in range(4)] + [still_table(2, gone=(2,), noise=rng)
                                                              for _ in range(4)] \
        + [still_table(1, noise=rng) for _ in range(4)]
    play(ref, frames)
    assert [o["type"] for o in out] == ["penalty"]
    p = out[0]
    assert p["slot"] == list(B) and p["player"] == "Ada" and p["frame"] == 4
    assert "pinched between 0,0,0 (left) and 4,0,0 (right)" in p["explanation"]
    st = G.replay(ref.events)
    assert st.score(st.player("Ada")) == 10_000 - 100 and st.board.n_present == 8
    off, out_off = time_lapse({1: recognition(), 2: recognition(absent=[B])}, local_delta=None)
    play(off, frames)
    assert out_off == []            # without the local test the lift is never judged


def test_time_lapse_still_table_with_noise_shift_and_flicker_is_judged_once():
    rng = np.random.default_rng(6)
    ref, out = time_lapse({1: recognition(), 2: recognition(absent=[B])})
    frames = [still_table(1, noise=rng) for _ in range(4)] + [still_table(1, shift=1, noise=rng) for _ in range(4)] \
        + [still_table(1, shift=1, gain=g, noise=rng) for g in (0.97, 1.03, 0.98, 1.0)]
    play(ref, frames)
    assert out == [] and [e.type for e in ref.events] == ["game_started"]
    assert ref.status.judged == 1 and ref.recognize_fn.calls == 1


def test_video_a_picture_changed_by_the_patch_while_a_change_waits_keeps_that_change():
    # 30 frames a second: B (pinched between A and C) is gone with nothing
    # seen moving; while its second reading is due, a small patch at the
    # picture's edge changes for 5 frames (fingertips, a hand holding the
    # lifted tile beside the board) with nothing seen moving.  That is no
    # new picture at video rates: the second reading is taken when due and
    # the penalty stands (bench game 7703: the lift was dropped there and
    # its penalty lost); B then comes back
    rng = np.random.default_rng(9)

    def tip():
        img = still_table(2, gone=(1,), noise=rng)
        img[:24, 600:624] = 150
        return img
    frames = [still_table(1, noise=rng) for _ in range(12)] + [still_table(2, gone=(1,), noise=rng)
                                                               for _ in range(12)] \
        + [tip() for _ in range(5)] + [still_table(2, gone=(1,), noise=rng) for _ in range(30)] \
        + [still_table(1, noise=rng) for _ in range(15)]      # B back
    out = []
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script({1: recognition(), 2: recognition(absent=[B])}),
                  emit=out.append, fps=30.0)
    play(ref, frames)
    assert [(o["type"], o.get("slot"), o["player"], o["frame"]) for o in out] == [("penalty", list(B), "Ada", 12)]
    assert ref.gate.unsettled == 1 and ref.status.notes == []     # the patch: no note at video rates


def test_video_a_new_still_picture_seen_by_the_patch_while_a_change_waits_is_read_on_its_own():
    # 30 frames a second, nothing seen moving: B (blocked) gone, and 12
    # frames later, before B's second reading is due, D gone too, standing
    # still.  The new picture is not taken as B's second reading (where D
    # disagreed it would be left unread, and D's lift never seen): B's
    # change keeps its own picture and frame, and D's is read from the new
    # one, so B and D are a pair kept against the rules (B blocked)
    rng = np.random.default_rng(9)
    frames = [still_table(1, noise=rng) for _ in range(12)] + [still_table(2, gone=(1,), noise=rng)
                                                               for _ in range(12)] \
        + [still_table(3, gone=(1, 4), noise=rng) for _ in range(40)]
    out = []
    scenes = {1: recognition(), 2: recognition(absent=[B]), 3: recognition(absent=[B, D])}
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), emit=out.append, fps=30.0)
    play(ref, frames)
    got = [(o["type"], o["frame"], o.get("slot"), {tuple(x) for x in o.get("slots", [])}) for o in out]
    assert got[:2] == [("penalty", 12, list(B), set()), ("claim", 24, None, {B, D})]
    assert out[1]["valid"] is False and out[1]["reason"] == "blocked"


def slow_referee(scenes):
    """A referee of a time-lapse: 1 frame a second, motion settings from the
    rate (:meth:`MotionSettings.for_fps`: settled on 2 alike frames)."""
    out = []
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), emit=out.append, fps=1.0)
    return ref, out


def test_time_lapse_each_state_on_two_frames_is_judged_state_by_state():
    # 1 frame a second, no hand in any frame; B (blocked) lifted on frames
    # 3-4 and back on 5-6, then A + C claimed on 7-8.  The second reading of
    # B's lift falls on frame 5, which shows B back: it is taken on frame 3
    # instead (the same still picture), never on the changed one
    rng = np.random.default_rng(8)
    scenes = {1: recognition(), 2: recognition(absent=[B]), 3: recognition(absent=[A, C])}
    ref, out = slow_referee(scenes)
    frames = [still_table(1, noise=rng) for _ in range(3)] + [still_table(2, gone=(1,), noise=rng) for _ in range(2)] \
        + [still_table(1, noise=rng) for _ in range(2)] + [still_table(3, gone=(0, 2), noise=rng) for _ in range(2)]
    play(ref, frames)
    assert [(o["type"], o["frame"], o["player"]) for o in out] == [("penalty", 3, "Ada"), ("claim", 7, "Ada")]
    assert out[0]["slot"] == list(B) and {tuple(s) for s in out[1]["slots"]} == {A, C}
    st = G.replay(ref.events)
    assert st.score(st.player("Ada")) == 10_000 - 100 + 200 and st.board.n_present == 6
    assert ref.status.notes == []


def test_time_lapse_a_state_on_one_frame_only_is_not_judged_and_the_run_says_so():
    # each state stands on one frame: no picture of B gone or of A + C gone
    # is ever still, so nothing is scored, and the end notes why
    rng = np.random.default_rng(9)
    scenes = {1: recognition(), 2: recognition(absent=[B]), 3: recognition(absent=[A, C])}
    ref, out = slow_referee(scenes)
    frames = [still_table(1, noise=rng) for _ in range(3)] + [still_table(2, gone=(1,), noise=rng),
                                                              still_table(1, noise=rng),
                                                              still_table(3, gone=(0, 2), noise=rng),
                                                              still_table(1, noise=rng)]
    play(ref, frames)
    assert out == [] and [e.type for e in ref.events] == ["game_started"]
    assert ref.gate.unsettled == 2            # B's lift and the pair, each gone again on the next frame
    assert len(ref.status.notes) == 1
    assert ref.status.notes[0].startswith("2 changes of the picture, with nothing seen moving, stood on fewer than "
                                          "2 frames in a row and were not judged")
    # at video rates such brief changes are a hand's fingertips, whose
    # motion the referee sees by the patch too: no note (the frames are not
    # too far apart)
    fast = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), fps=30.0)
    play(fast, frames[:3] * 4 + [frames[3], frames[4], frames[5], frames[6]] * 3)
    assert fast.gate.unsettled >= 2 and fast.status.notes == []


# ---------------------------------------------------------------- tiles re-laid (a reshuffle)

_RNG = np.random.default_rng(5)
_LOOKS = _RNG.normal(size=(3, len(LAYOUT), 64)).astype(np.float32)   # three unrelated looks per slot


def _reading(variant, faces, looks, absent=(), conf=0.97):
    """A :class:`Reading` of LAYOUT with face probabilities and signatures:
    ``faces`` per slot (G is read covered while H stands), ``looks`` per slot
    an index into ``_LOOKS`` (a slot whose look index changes looks changed)."""
    from vision.referee import Reading
    from companion.tiles import tileset
    ids = [f.id for f in tileset(variant).faces]
    rec = recognition(absent=absent, faces=faces, conf=conf)
    rec = Recognition(variant, LAYOUT, rec.tiles, rec.quads)
    fp = np.full((len(LAYOUT), len(ids)), 0.001)
    pn = np.full(len(LAYOUT), 0.05)
    for i, t in enumerate(rec.tiles):
        if t.seen == "face":
            fp[i, ids.index(t.face)] = conf
        elif t.seen == "empty":
            fp[i] = 0.0
            pn[i] = 0.95
    sig = np.stack([_LOOKS[k, i] for i, k in enumerate(looks)])
    return Reading(rec, fp, pn, sig / np.linalg.norm(sig, axis=1, keepdims=True))


# Mindful: no free match at the deal (the pairs are B with A, and G, covered,
# with C), so a Zen Reshuffle is allowed at once; re-laid, C and D match
BEFORE = ["bamboo-1", "bamboo-1", "bamboo-2", "bamboo-3", "bamboo-4", "bamboo-5", "bamboo-2", "bamboo-6"]
AFTER = ["bamboo-4", "bamboo-3", "bamboo-1", "bamboo-1", "bamboo-2", "bamboo-6", "bamboo-2", "bamboo-5"]


def _relaid_referee(variant, before, after, players=("Ada", "Bo")):
    same, moved, gone = [0] * 8, [1] * 8, [1] * 8
    gone[LAYOUT.slot_index(C)] = gone[LAYOUT.slot_index(D)] = 2
    scenes = {1: _reading(variant, before, same), 9: recognition(occluded=[A, B, C]),
              2: _reading(variant, after, moved), 3: _reading(variant, after, gone, absent=[C, D])}
    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3), confirm_s=0.1)
    ref = Referee(variant, LAYOUT, list(players), Script(scenes), emit=out.append, fps=10.0, settings=settings)
    frames = [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 12 + hand_frames(9) + [frame(3)] * 6
    play(ref, frames)
    return ref, out


def test_tiles_re_laid_in_another_order_are_a_reshuffle_and_later_moves_are_judged_on_the_new_faces():
    # Mindful Law 4: "gathered, gently shuffled, and re-laid onto the current
    # layout footprint without changing layer heights".  Seven standing faces
    # change, none leaves: no hand over the board, no claim, no penalty
    ref, out = _relaid_referee("mindful", BEFORE, AFTER)
    assert [o["type"] for o in out] == ["reshuffle", "claim"]
    r, c = out
    assert r["player"] == "Ada" and r["frame"] == 9          # the re-laid picture's first still frame
    got = dict(zip(map(tuple, r["slots"]), r["faces"]))
    # every standing tile was taken up: the uncovered ones read anew, the
    # covered G (re-laid, unseen) no longer known
    assert got == {s: (None if s == G_ else f) for s, f in zip(LAYOUT.slots, AFTER)}
    assert [e.type for e in ref.events] == ["game_started", "reshuffle", "claim"]
    assert ref.events[1].data["source"] == "camera"
    st = G.replay(ref.events)
    assert st.reshuffles == 1 and st.player("Ada").focus_tokens == 1 and st.player("Bo").focus_tokens == 2
    # the ledger's faces are the camera's: C and D left with the claim, the rest as re-laid
    shown = [None if s == G_ else f for s, f in zip(LAYOUT.slots, AFTER)]
    assert [f for i, f in enumerate(st.faces) if i not in (2, 3)] == [f for i, f in enumerate(shown) if i not in (2, 3)]
    # the claim of C and D, a pair only on the new faces, is valid
    assert c["player"] == "Ada" and c["valid"] is True and {tuple(s) for s in c["slots"]} == {C, D}
    assert c["faces"] == ["bamboo-1", "bamboo-1"]
    assert st.score(st.player("Ada")) == 100 and st.entries[ref.events[2].id].status != "rejected"


def test_tiles_re_laid_where_the_rules_have_no_reshuffle_are_one_item_for_the_referee():
    # Love Mahjong has no reshuffle: one needs_referee names the slots; the
    # camera judges later moves on the faces it read all the same
    before = ["hearts-1", "hearts-2", "hearts-1", "hearts-3", "hearts-4", "hearts-5", "hearts-1", "hearts-3"]
    after = ["hearts-4", "hearts-3", "hearts-2", "hearts-2", "hearts-1", "hearts-3", "hearts-1", "hearts-5"]
    ref, out = _relaid_referee("love", before, after)
    assert [o["type"] for o in out] == ["needs_referee", "claim"]
    n, c = out
    assert {tuple(s) for s in n["slots"]} == set(LAYOUT.slots) and "Love Mahjong has no reshuffle" in n["reason"]
    assert c["valid"] is True and c["faces"] == ["hearts-2", "hearts-2"] and {tuple(s) for s in c["slots"]} == {C, D}
    # the ledger's board shows the faces read (faces_seen: no move), so the
    # game is not ended on faces no longer on the table
    assert [e.type for e in ref.events] == ["game_started", "needs_referee", "faces_seen", "claim"]
    st = G.replay(ref.events)
    assert not st.ended and st.faces[LAYOUT.slot_index(A)] == "hearts-4"
    assert st.entries[ref.events[2].id].status != "rejected" and st.score(st.player("Ada")) > 10_000


def test_a_hand_over_the_board_reading_no_sure_face_is_no_reshuffle():
    # the same changed looks, but the faces read unsurely (a hand, fingers):
    # the picture waits as before, nothing is recorded
    unsure = {1: _reading("mindful", BEFORE, [0] * 8), 9: recognition(occluded=[A, B, C]),
              2: _reading("mindful", AFTER, [1] * 8, conf=0.6)}
    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3), confirm_s=0.1)
    ref = Referee("mindful", LAYOUT, ["Ada", "Bo"], Script(unsure), emit=out.append, fps=10.0, settings=settings)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 12)
    assert out == [] and ref.status.state == "hand in view"
    assert [e.type for e in ref.events] == ["game_started"]


def test_the_referee_follows_what_the_console_writes_on_its_game(tmp_path):
    # A + D leave read unsurely (D misread as a hearts-2): an item for the
    # referee, the tiles off the ledger's board; B + C, a sure pair, follow.
    # While the camera runs on, the console settles the item as Ada's pair
    # of hearts-1.  The referee reads that back from the ledger
    # before judging the next move: when the last pair leaves, the board is
    # cleared with no item open, so the game ends (before, the camera's own
    # copy of the game kept the item open and never ended it)
    from companion.ledger import Ledger
    from companion.session import GameSession
    faces = ["hearts-1", "hearts-2", "hearts-2", "hearts-1", "roses-3", "cupid-arrow", "roses-3", "cupid-arrow"]
    misread = faces[:3] + ["hearts-2"] + faces[4:]
    ledger = Ledger(tmp_path / "game.db")
    gid = []

    def append(type_, data, ref, t, after=None):
        ev = ledger.append(gid[0] if gid else None, type_, data, ref, t, after=after)
        gid[:1] = [ev.game_id]
        return ev

    scenes = {1: recognition(conf=0.3, faces=misread), 2: recognition(absent=[A, D], conf=0.3, faces=misread),
              3: recognition(absent=[A, D], faces=faces), 4: recognition(absent=[A, D, B, C], faces=faces),
              5: recognition(absent=[A, D, B, C, H, F], faces=faces),
              6: recognition(absent=[A, D, B, C, H, F, E, G_], faces=faces), 9: recognition(occluded=[A, B])}
    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3, jitter_px=0.0), confirm_s=0.1)
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), append=append, emit=out.append, fps=10.0,
                  settings=settings, history=lambda after=0: ledger.events(gid[0], after) if gid else [])
    frames = [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + [frame(3)] * 5 + hand_frames(9) + [frame(4)] * 5
    for i, f in enumerate(frames):
        ref.feed(i, f)
    item = next(e for e in ledger.events(gid[0]) if e.type == "needs_referee")
    assert {tuple(s) for s in item.data["off_table"]} == {A, D}
    res = GameSession(ledger, gid[0]).settle(item.id, "claim", player="Ada", slots=[list(A), list(D)],
                                             faces=["hearts-1", "hearts-1"])
    assert res.ok
    later = hand_frames(9) + [frame(5)] * 5 + hand_frames(9) + [frame(6)] * 5
    for i, f in enumerate(later, start=len(frames)):
        ref.feed(i, f)
    ref.finish()
    assert [o["type"] for o in out] == ["needs_referee", "claim", "claim", "claim"]
    st = G.replay(ledger.events(gid[0]))
    assert not st.needs and st.ended
    # the referee's own copy is the ledger's: Love 2.5, hearts +200 a pair,
    # roses +300, the cupid's arrow +500 ("Cupid's Arrow" special)
    assert ref.state.scores() == st.scores()
    assert ref.state.ended


def _ledger_referee(tmp_path, scenes, before_write=None):
    """A referee writing to a real ledger and reading its game back from it
    (as `companion referee --ledger` runs it); ``before_write(ledger, game
    id, type)`` is called before each of the camera's writes after the
    start (a console writing at that moment)."""
    from companion.ledger import Ledger
    ledger = Ledger(tmp_path / "game.db")
    gid: list[str] = []

    def append(type_, data, ref, t, after=None):
        if gid and before_write is not None:
            before_write(ledger, gid[0], type_)
        ev = ledger.append(gid[0] if gid else None, type_, data, ref, t, after=after)
        gid[:1] = [ev.game_id]
        return ev

    out: list[dict] = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3, jitter_px=0.0), confirm_s=0.1)
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), append=append, emit=out.append, fps=10.0,
                  settings=settings, history=lambda after=0: ledger.events(gid[0], after) if gid else [])
    fed = [0]

    def feed(frames):
        for f in frames:
            ref.feed(fed[0], f)
            fed[0] += 1
    return ref, out, ledger, gid, feed


@pytest.mark.parametrize("undo_first", [True, False])
def test_a_move_the_console_takes_back_is_expected_back_on_the_table_and_claimed_again(tmp_path, undo_first):
    # A + C (hearts-1) claimed; the referee takes the claim back on the
    # console (Undo) and the players put the two tiles back: the camera
    # takes them in again silently, and when they leave again they are
    # claimed again (before, the tiles put back were not seen at all, their
    # second leaving made no claim, and the ledger kept them on its board).
    # undo_first False: the tiles are put back and seen standing before the
    # Undo, and the next picture judged already shows them taken again (a
    # break-test: the picture that showed them back came before the undo)
    from companion.session import GameSession
    scenes = {1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])}
    ref, out, ledger, gid, feed = _ledger_referee(tmp_path, scenes)
    feed([frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(2)] * 5)
    assert [o["type"] for o in out] == ["claim"]
    if undo_first:
        assert GameSession(ledger, gid[0]).undo().ok
    feed(hand_frames(9) + [frame(1)] * 5)
    if undo_first:
        assert ref.tracker.board.present[0] and ref.tracker.board.present[2]
    else:
        assert GameSession(ledger, gid[0]).undo().ok
    assert [o["type"] for o in out] == ["claim"]          # put back: no move
    feed(hand_frames(9) + [frame(2)] * 5)
    ref.finish()
    assert [(o["type"], o["player"]) for o in out] == [("claim", "Ada"), ("claim", "Ada")]
    st = G.replay(ledger.events(gid[0]))
    assert not st.board.present[0] and not st.board.present[2]
    assert st.scores() == {"Ada": 10_200, "Bo": 10_000}   # Love 2.5: hearts +200, once
    assert ref.state.scores() == st.scores()


def test_a_move_recorded_by_hand_on_the_console_is_not_claimed_again_when_its_tiles_leave(tmp_path):
    # the referee records Ada's A + C on the console before the camera sees
    # them go: when they leave the table, no second claim is made
    from companion.session import GameSession
    scenes = {1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])}
    ref, out, ledger, gid, feed = _ledger_referee(tmp_path, scenes)
    feed([frame(1)] * 5)
    assert GameSession(ledger, gid[0]).claim("Ada", [list(A), list(C)]).ok
    feed(hand_frames(9) + [frame(2)] * 5)
    ref.finish()
    assert out == []
    kinds = [e.type for e in ledger.events(gid[0])]
    assert kinds.count("claim") == 1 and "needs_referee" not in kinds
    assert G.replay(ledger.events(gid[0])).scores() == {"Ada": 10_200, "Bo": 10_000}


def test_a_face_the_referee_corrects_is_the_one_later_moves_are_judged_on(tmp_path):
    # H (roses-3) + E claimed uncover G, which the camera misreads as a
    # cupid-arrow (faces_seen).  The referee corrects it to roses-3 on the
    # console; the camera's readings still say cupid-arrow.  G + F then
    # leave: a pair of roses-3, claimed (before, the camera judged it on
    # its own reading, a pair that does not match, and asked the referee)
    from companion.session import GameSession
    faces = ["hearts-1", "hearts-2", "hearts-1", "hearts-2", "roses-3", "roses-3", "cupid-arrow", "roses-3"]
    scenes = {1: recognition(faces=faces), 2: recognition(absent=[H, E], faces=faces),
              3: recognition(absent=[H, E, G_, F], faces=faces), 9: recognition(occluded=[A, B])}
    ref, out, ledger, gid, feed = _ledger_referee(tmp_path, scenes)
    feed([frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(2)] * 5)
    seen = next(e for e in ledger.events(gid[0]) if e.type == "faces_seen")
    assert seen.data["faces"] == ["cupid-arrow"]
    assert GameSession(ledger, gid[0]).correct(seen.id, {"faces": ["roses-3"]}, "G is a rose").ok
    feed([frame(2)] * 5 + hand_frames(9) + [frame(3)] * 5)
    ref.finish()
    assert [(o["type"], o["valid"]) for o in out] == [("claim", True), ("claim", True)]
    assert {tuple(s) for s in out[1]["slots"]} == {G_, F} and out[1]["faces"] == ["roses-3", "roses-3"]
    assert [o["player"] for o in out] == ["Ada", "Ada"]       # a valid match: another turn (Love 2.1 Law 2)
    # roses-3: 100 a pair (Love 2.5, simple suits), +200 for the streak (2.7)
    assert G.replay(ledger.events(gid[0])).scores() == {"Ada": 10_400, "Bo": 10_000}


def test_a_console_write_just_before_the_camera_s_is_read_and_the_move_judged_again(tmp_path):
    # the console writes on the game between the referee's reading and its
    # writing (here: the referee records Ada's D + F by hand): the camera's
    # write is refused as stale, the game read again and the move judged
    # again on it
    from companion.session import GameSession
    faces = ["hearts-1", "hearts-2", "hearts-1", "hearts-2", "roses-3", "roses-3", "cupid-arrow", "cupid-arrow"]
    done = []

    def console(ledger, game_id, type_):
        if type_ == "claim" and not done:
            done.append(GameSession(ledger, game_id).claim("Ada", [list(D), list(F)]).ok)

    faces[5] = "hearts-2"         # F: a hearts-2 too, so D + F is a pair
    scenes = {1: recognition(faces=faces), 2: recognition(absent=[A, C], faces=faces),
              9: recognition(occluded=[A, B])}
    ref, out, ledger, gid, feed = _ledger_referee(tmp_path, scenes, before_write=console)
    feed([frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(2)] * 5)
    ref.finish()
    assert done == [True]
    claims = [e for e in ledger.events(gid[0]) if e.type == "claim"]
    assert [(c.data["player"], {tuple(s) for s in c.data["slots"]}) for c in claims] == [("Ada", {D, F}), ("Ada", {A, C})]
    assert [(o["type"], o["player"]) for o in out] == [("claim", "Ada")]
    # hearts-2 100, hearts-1 200 (a terminal) and +200 for the streak (Love 2.5, 2.7)
    assert ref.state.scores() == G.replay(ledger.events(gid[0])).scores() == {"Ada": 10_500, "Bo": 10_000}


def test_a_reshuffle_told_on_the_console_and_laid_out_so_is_no_second_reshuffle(tmp_path):
    # Mindful: the referee records a Zen Reshuffle for Ada on the console
    # (no free match at the deal: BEFORE); the players re-lay the tiles as
    # the ledger's new faces say.  The camera reads the re-laid faces, finds
    # them the ledger's, and records nothing (before, it recorded a second
    # reshuffle, spending another Zen Focus token)
    from companion.session import GameSession
    from companion.ledger import Ledger
    ledger = Ledger(tmp_path / "game.db")
    gid: list[str] = []

    def append(type_, data, ref, t, after=None):
        ev = ledger.append(gid[0] if gid else None, type_, data, ref, t, after=after)
        gid[:1] = [ev.game_id]
        return ev

    scenes = {1: _reading("mindful", BEFORE, [0] * 8), 9: recognition(occluded=[A, B, C])}
    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3), confirm_s=0.1)
    ref = Referee("mindful", LAYOUT, ["Ada", "Bo"], Script(scenes), append=append, emit=out.append, fps=10.0,
                  settings=settings, history=lambda after=0: ledger.events(gid[0], after) if gid else [])
    frames = [frame(1)] * 5
    for i, f in enumerate(frames):
        ref.feed(i, f)
    assert GameSession(ledger, gid[0]).reshuffle("Ada", seed=3).ok
    told = G.replay(ledger.events(gid[0])).faces
    assert told != BEFORE
    shown = [f if f is not None else "bamboo-9" for f in told]     # (G, covered, is read covered)
    scenes[2] = _reading("mindful", shown, [1] * 8)
    later = hand_frames(9) + [frame(2)] * 12
    for i, f in enumerate(later, start=len(frames)):
        ref.feed(i, f)
    ref.finish()
    assert out == []
    assert [e.type for e in ledger.events(gid[0])].count("reshuffle") == 1
    st = G.replay(ledger.events(gid[0]))
    assert st.reshuffles == 1 and st.player("Ada").focus_tokens == 1 and st.player("Bo").focus_tokens == 2
    assert any("re-laid as the reshuffle on the ledger" in n for n in ref.status.notes)


def test_a_console_write_that_passes_the_turn_just_before_the_camera_s_makes_the_move_the_next_player_s(tmp_path):
    # between the referee's reading and its writing the console records
    # Ada's D + E, a pair that does not match (Love 2.1 Law 2: the turn
    # passes): the camera's A + C, judged as Ada's, is refused as stale
    # and judged again on the game read anew: Bo's claim
    from companion.session import GameSession
    done = []

    def console(ledger, game_id, type_):
        if type_ == "claim" and not done:
            res = GameSession(ledger, game_id).claim("Ada", [list(D), list(E)])
            done.append([e.type for e in res.written])

    scenes = {1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])}
    ref, out, ledger, gid, feed = _ledger_referee(tmp_path, scenes, before_write=console)
    feed([frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(2)] * 5)
    ref.finish()
    assert done == [["invalid"]]
    assert [(o["type"], o["player"], o["valid"]) for o in out] == [("claim", "Bo", True)]
    kinds = [(e.type, e.data.get("player")) for e in ledger.events(gid[0])]
    assert kinds[1:] == [("invalid", "Ada"), ("claim", "Bo")]
    assert ref.state.scores() == G.replay(ledger.events(gid[0])).scores() == {"Ada": 10_000, "Bo": 10_200}


def test_a_ledger_that_cannot_be_read_back_leaves_the_referee_on_its_own_copy():
    # history() failing (a ledger the referee cannot read back) is no reason
    # to stop judging: the camera's own copy of the game goes on
    calls = []

    def history(after=0):
        calls.append(after)
        raise BadInput("cannot read the ledger game.db: disk I/O error")

    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3, jitter_px=0.0), confirm_s=0.1)
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script({1: recognition(), 2: recognition(absent=[A, C]),
                                                          9: recognition(occluded=[A, B])}),
                  emit=out.append, fps=10.0, settings=settings, history=history)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5)
    assert calls and [o["type"] for o in out] == ["claim"]
    assert ref.state.scores() == {"Ada": 10_200, "Bo": 10_000}


def test_a_face_the_referee_voids_is_not_written_again_from_the_same_readings(tmp_path):
    # H + E claimed uncover G, read as a cupid-arrow (faces_seen).  The
    # referee voids that reading on the console: the camera, still reading
    # a cupid-arrow there, does not write it again at its next pictures
    from companion.session import GameSession
    faces = ["hearts-1", "hearts-2", "hearts-1", "hearts-2", "roses-3", "roses-3", "cupid-arrow", "roses-3"]
    scenes = {1: recognition(faces=faces), 2: recognition(absent=[H, E], faces=faces), 9: recognition(occluded=[A, B])}
    ref, out, ledger, gid, feed = _ledger_referee(tmp_path, scenes)
    feed([frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(2)] * 5)
    seen = [e for e in ledger.events(gid[0]) if e.type == "faces_seen"]
    assert [e.data["faces"] for e in seen] == [["cupid-arrow"]]
    assert GameSession(ledger, gid[0]).void(seen[0].id, "not sure that is a cupid").ok
    feed(hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(2)] * 5)
    ref.finish()
    assert [e.type for e in ledger.events(gid[0])].count("faces_seen") == 1
    assert G.replay(ledger.events(gid[0])).faces[LAYOUT.slot_index(G_)] is None


def test_a_tile_mostly_hidden_behind_a_taller_stack_is_not_judged_by_its_window():
    # P on the mat's first layer, and beside it (2 half-units to the right)
    # Q with R on top: seen from a camera far to the right and low (600 mm
    # right of the board, 300 mm up: 27 degrees over the table), the
    # two-tile stack (40 mm) hides all of P's face (20 mm up): a shadow 40
    # mm long, wider than the 30 mm tile.  P's empty reading is not known;
    # from straight above it is
    from types import SimpleNamespace
    from companion.rules import Board
    from companion.tiles import tileset
    from vision.mat import MatSpec
    from vision.tracking import BoardTracker, Observation
    P, Q, R, S = (0, 0, 0), (2, 0, 0), (2, 0, 1), (8, 0, 0)
    layout = Layout("stack-beside", (P, Q, R, S))
    ref = Referee("love", layout, ["Ada"], Script({}), fps=10.0)
    ref.tracker = BoardTracker(Board(layout), tileset("love"))
    spec = MatSpec.default()
    gx, gy = spec.grid_origin_mm
    o = Observation(np.array([False, True, True, True]), np.ones(4, bool), [None, None, "hearts-1", "hearts-2"],
                    np.full(4, 0.9))

    # the presence model's log-odds of a tile at P (stubbed: the model
    # itself is tested in test_presence.py)
    presence = {"P": -12.3}
    ref._presence_logits = lambda frame, rec, idx: np.array([presence["P"]] * len(idx))
    picture = np.zeros((720, 1280, 3), np.uint8)

    def read_from(camera_mm):
        rec = SimpleNamespace(recognition=SimpleNamespace(pose=SimpleNamespace(camera_centre_mm=np.array(camera_mm))),
                              spec=spec)
        return ref._unseen_behind_stacks(o, rec, picture)
    side = read_from([gx + 60 + 600, gy + 20, -300.0])
    assert list(side.known) == [False, True, True, True] and list(side.behind) == [True, False, False, False]
    assert not side.read[0]
    # the tile that shows in P's window: R (Q does not rise above P's face,
    # S is two tiles off); none is asked of the others
    assert side.front == ((2,), None, None, None)
    above = read_from([gx + 30, gy + 20, -900.0])
    assert list(above.known) == [True, True, True, True] and above.behind is None
    # R read gone (lifted, as the tracker reads it): it hides nothing, and
    # P, behind Q alone, read empty surely where the presence model finds no
    # tile, is read as any other tile (bench game 12402, Twin Hearts: a tile
    # behind a layer-2 one was claimed with it, and stayed masked while that
    # one was off: the claim's other half went unseen)
    o = Observation(np.array([False, True, False, True]), np.ones(4, bool), [None, None, None, "hearts-2"],
                    np.full(4, 0.9))
    side = read_from([gx + 60 + 600, gy + 20, -300.0])
    assert list(side.known) == [True, True, True, True] and side.behind is None
    # but not when it reads empty unsurely, nor when the presence model
    # finds a tile there (its look cannot tell, the tile in front having
    # just left: bench games 11302, "no face" at 0.61, and 7763, 0.77 with
    # log-odds +4.1; penalties for tiles no one touched), nor without the
    # picture
    masked = ([False, True, True, True], [True, False, False, False])
    o = Observation(o.present, o.known, o.faces, np.array([0.61, 0.9, 0.9, 0.9]))
    side = read_from([gx + 60 + 600, gy + 20, -300.0])
    assert (list(side.known), list(side.behind)) == masked
    o = Observation(o.present, o.known, o.faces, np.full(4, 0.9))
    presence["P"] = 4.1
    side = read_from([gx + 60 + 600, gy + 20, -300.0])
    assert (list(side.known), list(side.behind)) == masked
    presence["P"] = -12.3
    rec = SimpleNamespace(recognition=SimpleNamespace(pose=SimpleNamespace(
        camera_centre_mm=np.array([gx + 60 + 600, gy + 20, -300.0]))), spec=spec)
    side = ref._unseen_behind_stacks(o, rec)
    assert (list(side.known), list(side.behind)) == masked
    # a face read there stands whatever the model says
    o = Observation(np.array([True, True, False, True]), np.ones(4, bool), ["hearts-1", None, None, "hearts-2"],
                    np.full(4, 0.9))
    presence["P"] = 4.1
    side = read_from([gx + 60 + 600, gy + 20, -300.0])
    assert list(side.known) == [True, True, True, True] and side.behind is None


def test_a_tile_uncovered_by_a_lift_not_yet_settled_is_masked_behind_a_taller_stack():
    # bench game 13204 (the turtle, 10 degrees from overhead): P's cover
    # P1 was lifted for a claim still open (the tracker's board keeps a
    # lifted tile until its move settles), so P was taken as covered and
    # not asked about; two thirds of its face lay behind the stack beside
    # it, its window read "no face" at 0.51, and when that stack's top tile
    # left too P was penalised as lifted.  A tile whose covers are all
    # lifted shows its face: it is masked like any other
    from types import SimpleNamespace
    from companion.rules import Board
    from companion.tiles import tileset
    from vision.mat import MatSpec
    from vision.tracking import BoardTracker, Observation
    P, P1, Q, R, T, S = (0, 0, 0), (0, 0, 1), (2, 0, 0), (2, 0, 1), (2, 0, 2), (8, 0, 0)
    layout = Layout("uncovered-beside-stack", (P, P1, Q, R, T, S))
    ref = Referee("love", layout, ["Ada"], Script({}), fps=10.0)
    ref.tracker = BoardTracker(Board(layout), tileset("love"))
    spec = MatSpec.default()
    gx, gy = spec.grid_origin_mm
    rec = SimpleNamespace(recognition=SimpleNamespace(pose=SimpleNamespace(
        camera_centre_mm=np.array([gx + 60 + 600, gy + 20, -300.0]))), spec=spec)
    ref._presence_logits = lambda frame, rec, idx: np.full(len(idx), 4.1)
    # P reads "no face" unsurely, P1 is off the table
    o = Observation(np.array([False, False, True, True, True, True]), np.ones(6, bool),
                    [None, None, None, None, "hearts-1", "hearts-2"], np.array([0.51, 0.9, 0.9, 0.9, 0.9, 0.9]))
    side = ref._unseen_behind_stacks(o, rec, np.zeros((720, 1280, 3), np.uint8))
    assert not side.behind[0] and side.known[0]     # P1 stands on P as far as the tracker knows
    ref.tracker.state.lifted.append(layout.slots.index(P1))
    side = ref._unseen_behind_stacks(o, rec, np.zeros((720, 1280, 3), np.uint8))
    assert side.behind[0] and not side.known[0] and not side.read[0]
    assert side.front[0] is not None and layout.slots.index(T) in side.front[0]
    assert list(side.known[2:]) == [True, True, True, True]


def test_a_console_that_writes_again_while_the_move_is_judged_again_still_gets_the_camera_s_move_right(tmp_path):
    # the console passes the turn just before the camera's write (Ada's
    # A + C: stale, judged again as Bo's), and passes it back just before
    # that second write too (a referee tapping Pass twice, or the hammering
    # of a break-test, session 40: 35 console writes a second turned 4 of 9
    # camera moves into items "it is Bo's turn, not Ada's"): the move is
    # judged again as often as it takes, and is Ada's claim
    from companion.session import GameSession
    done = []

    def console(ledger, game_id, type_):
        if type_ == "claim" and len(done) < 2:
            done.append(GameSession(ledger, game_id).pass_turn(["Ada", "Bo"][len(done)]).ok)

    scenes = {1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])}
    ref, out, ledger, gid, feed = _ledger_referee(tmp_path, scenes, before_write=console)
    feed([frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(2)] * 5)
    ref.finish()
    assert done == [True, True]
    kinds = [(e.type, e.data.get("player")) for e in ledger.events(gid[0])]
    assert kinds[1:] == [("pass", "Ada"), ("pass", "Bo"), ("claim", "Ada")]
    assert [(o["type"], o["player"], o["valid"]) for o in out] == [("claim", "Ada", True)]
    assert ref.state.scores() == G.replay(ledger.events(gid[0])).scores() == {"Ada": 10_200, "Bo": 10_000}


def test_tiles_the_console_takes_off_again_while_expected_back_are_expected_no_more(tmp_path):
    # A + C claimed; the referee takes the claim back on the console (the
    # camera then expects the tiles back), then records it again by hand
    # before the tiles were put back.  The players put them down and take
    # them off again: no second claim and no item (a break-test, session
    # 40: the slots stayed expected, the tiles put down were taken in
    # silently and their leaving made a claim the ledger refused)
    from companion.session import GameSession
    scenes = {1: recognition(), 2: recognition(absent=[A, C]), 9: recognition(occluded=[A, B])}
    ref, out, ledger, gid, feed = _ledger_referee(tmp_path, scenes)
    feed([frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5 + hand_frames(9) + [frame(2)] * 5)
    assert GameSession(ledger, gid[0]).undo().ok
    feed(hand_frames(9) + [frame(2)] * 5)
    assert ref.tracker.state.expected == {0, 2}
    assert GameSession(ledger, gid[0]).claim("Ada", [list(A), list(C)]).ok
    feed(hand_frames(9) + [frame(2)] * 5)
    assert not ref.tracker.state.expected
    feed(hand_frames(9) + [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 5)
    ref.finish()
    assert [(o["type"], o["player"]) for o in out] == [("claim", "Ada")]
    kinds = [e.type for e in ledger.events(gid[0])]
    assert kinds == ["game_started", "claim", "undo", "claim"]
    assert ref.state.scores() == G.replay(ledger.events(gid[0])).scores() == {"Ada": 10_200, "Bo": 10_000}


# ------------------------------------------- faces the classifier calls hidden

def _flickering(looks, absent=(), hidden=(), unsure=(), faces=FACES):
    """A Love reading of LAYOUT with signatures (:func:`_reading`), with
    ``hidden`` slots read hidden (the classifier's "occluded") and
    ``unsure`` slots read empty at only 0.5 (no judgement either way)."""
    from dataclasses import replace
    r = _reading("love", faces, looks, absent=absent)
    tiles = list(r.recognition.tiles)
    fp, pn = r.face_probs.copy(), r.p_none.copy()
    mask = np.zeros(len(LAYOUT), bool)
    for s in hidden:
        i = LAYOUT.slot_index(s)
        tiles[i] = SlotState(s, True, None, 0.5, None, "occluded")
        mask[i] = True
    for s in unsure:
        i = LAYOUT.slot_index(s)
        tiles[i] = SlotState(s, False, None, 0.5, None, "empty")
        fp[i], pn[i] = 0.001, 0.5
    rec = Recognition("love", LAYOUT, tuple(tiles), r.recognition.quads)
    return replace(r, recognition=rec, face_probs=fp, p_none=pn, hidden=mask)


def test_an_empty_slot_over_a_tile_gone_now_read_hidden_refuses_no_picture(monkeypatch):
    # bench game 17100 (Cupid's Citadel, MP4): a pair held off the board for
    # 1 s, one tile from under a slot claimed before; that empty slot's
    # window, at its own height, changed with the stack below it and read
    # hidden, and every picture of the pair away was refused as a hand
    # over the board: the attempt was never seen and the turn never passed.
    # Here H (on G) is claimed with D, then G and E (no match) are lifted
    # and put back while H's empty slot reads hidden
    faces = ["hearts-1", "hearts-5", "hearts-1", "hearts-2", "roses-3", "roses-3", "roses-5", "hearts-2"]
    looks1 = [0] * 8
    looks2 = list(looks1)
    for s in (H, D, G_):
        looks2[LAYOUT.slot_index(s)] = 1
    looks3 = list(looks2)
    for s in (H, G_, E):
        looks3[LAYOUT.slot_index(s)] = 2
    scenes = {1: _flickering(looks1, faces=faces), 9: recognition(occluded=[A, B, C, D, G_, H]),
              2: _flickering(looks2, absent=[H, D], faces=faces),
              3: _flickering(looks3, absent=[D, G_, E], hidden=[H], faces=faces),
              4: _flickering(looks2, absent=[H, D], faces=faces)}
    monkeypatch.setattr(Referee, "_mat_bare", lambda self, frame, rec, ask: np.zeros(len(LAYOUT), bool))
    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3, jitter_px=0.0),
                               confirm_s=0.1)
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), emit=out.append, fps=10.0, settings=settings)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 6 + hand_frames(9) + [frame(3)] * 6
         + hand_frames(9) + [frame(4)] * 6)
    assert [(o["type"], o["player"], {tuple(s) for s in o["slots"]}) for o in out] == [
        ("claim", "Ada", {H, D}), ("attempt", "Ada", {G_, E})]


def test_a_slot_read_hidden_now_and_then_that_looks_as_before_refuses_no_picture():
    # bench game 10402 (640 x 480): faces on the board's edge that the
    # classifier reads now hidden, now "no face" unsurely, with no look kept
    # (never read as a face), counted as newly hidden (a hand?) in every
    # picture that read them hidden: a penalty and an attempt were never
    # judged.  E here: read unsurely, then hidden while A + C leave, its
    # look the same: the claim is judged at once
    same = [0] * 8
    gone = [0] * 8
    gone[LAYOUT.slot_index(A)] = gone[LAYOUT.slot_index(C)] = 1
    scenes = {1: _flickering(same, hidden=[E]), 9: recognition(occluded=[A, B, C]),
              2: _flickering(same, unsure=[E]), 3: _flickering(gone, absent=[A, C], hidden=[E])}
    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3, jitter_px=0.0),
                               confirm_s=0.1)
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), emit=out.append, fps=10.0, settings=settings)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 6 + hand_frames(9) + [frame(3)] * 6)
    assert [(o["type"], o["frame"]) for o in out] == [("claim", 19)]
    # its look kept from a picture judged with no hand over the board
    assert ref.tracker.state.has_ref[LAYOUT.slot_index(E)]
    # E's look changed as well: under a hand, perhaps; the picture is refused
    moved = list(gone)
    moved[LAYOUT.slot_index(E)] = 2
    scenes[3] = _flickering(moved, absent=[A, C], hidden=[E])
    out.clear()
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), emit=out.append, fps=10.0, settings=settings)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 6 + hand_frames(9) + [frame(3)] * 6)
    assert out == []


@pytest.mark.parametrize("bare", [True, False])
def test_an_emptied_slot_read_hidden_on_the_bare_mat_refuses_no_picture(monkeypatch, bare):
    # bench game 11906 (Mindful, flat): two edge slots emptied by earlier
    # claims read hidden once their neighbour was claimed too; the look of
    # a blank patch is mostly noise, so it "changed", and every picture of
    # the next two claims was refused as a hand over the board.  An empty
    # slot that shows the bare mat (vision.enroll.bare_mat_scores) is no
    # hand; one that does not still refuses the picture
    looks2 = [0] * 8
    for s in (A, C):
        looks2[LAYOUT.slot_index(s)] = 1
    looks3 = list(looks2)
    looks3[LAYOUT.slot_index(A)] = 2                   # the blank patch's noise
    for s in (E, F):
        looks3[LAYOUT.slot_index(s)] = 1
    scenes = {1: _flickering([0] * 8), 9: recognition(occluded=[A, B, C]),
              2: _flickering(looks2, absent=[A, C]), 3: _flickering(looks3, absent=[C, E, F], hidden=[A])}
    a = LAYOUT.slot_index(A)

    def mat_bare(self, frame, rec, ask):
        out = np.zeros(len(LAYOUT), bool)
        out[a] = bare and bool(ask[a])
        return out

    monkeypatch.setattr(Referee, "_mat_bare", mat_bare)
    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3, jitter_px=0.0),
                               confirm_s=0.1)
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script(scenes), emit=out.append, fps=10.0, settings=settings)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(2)] * 6 + hand_frames(9) + [frame(3)] * 6)
    claims = [(o["type"], {tuple(s) for s in o["slots"]}) for o in out]
    if bare:
        assert claims == [("claim", {A, C}), ("claim", {E, F})]
    else:
        assert claims == [("claim", {A, C})]


@pytest.mark.parametrize("hidden_move_max, expected", [(2, []), (5, ["penalty"])])
def test_an_arm_resting_across_word_tiles_is_no_word_lifted(monkeypatch, hidden_move_max, expected):
    # bench games 19503 and 19703 (the independent renderer, Word): an arm
    # reaching across the row nearest its player rested still over four and
    # five tiles; they read hidden, their looks changed, and (a Word move
    # may take five tiles) the move "explained" them as lifted: penalties
    # for tiles never touched.  A, B (pinched), C and D read hidden under
    # the arm here; with the old limit of five (the negative control) B's
    # penalty comes back
    from dataclasses import replace

    def reading(looks, hidden=()):
        r = _reading("word", TREE, looks)
        tiles = list(r.recognition.tiles)
        fp = r.face_probs.copy()
        mask = np.zeros(len(LAYOUT), bool)
        for s in hidden:
            i = LAYOUT.slot_index(s)
            tiles[i] = SlotState(s, True, None, 0.5, None, "occluded")
            fp[i] = 0.01              # (an arm: no face, and not the bare mat)
            mask[i] = True
        return replace(r, recognition=Recognition("word", LAYOUT, tuple(tiles), r.recognition.quads), hidden=mask,
                       face_probs=fp)

    arm = [0] * 8
    for s in (A, B, C, D):
        arm[LAYOUT.slot_index(s)] = 1
    scenes = {1: reading([0] * 8), 9: recognition(occluded=[A, B, C, D]), 3: reading(arm, hidden=[A, B, C, D])}
    for r in scenes.values():
        if not hasattr(r, "face_probs"):
            object.__setattr__(r, "variant", "word")
    # (the arm's change as the grey pictures of hand_reach missed it, and no
    # bare mat under the hidden slots)
    monkeypatch.setattr(Referee, "_hand_over", lambda self, frame, rec: np.zeros(len(LAYOUT), bool))
    monkeypatch.setattr(Referee, "_mat_bare", lambda self, frame, rec, ask: np.zeros(len(LAYOUT), bool))
    out = []
    settings = RefereeSettings(motion=MotionSettings(size=(32, 18), settle_frames=3, jitter_px=0.0),
                               confirm_s=0.1, hidden_move_max=hidden_move_max)
    ref = Referee("word", LAYOUT, ["Ada", "Bo"], Script(scenes), emit=out.append, fps=10.0, settings=settings)
    play(ref, [frame(1)] * 5 + hand_frames(9) + [frame(3)] * 6 + hand_frames(9) + [frame(1)] * 6)
    assert [o["type"] for o in out if o["type"] == "penalty"] == expected
    if not expected:
        assert out == []


def test_the_first_picture_names_the_taller_tiles_in_each_lower_slots_window():
    # bench game 20302 (the Turtle of Longevity 30-45 degrees from overhead):
    # a face read one layer low in the first picture was taken for the
    # upper tile's, where it was a taller tile's in front; the tracker is
    # told which taller tiles show in each lower slot's window
    # (vision.tracking.BoardTracker._shown_by_taller), here from a camera low
    # in front of the board, and from one overhead
    from types import SimpleNamespace
    from vision.mat import MatSpec
    from vision.tracking import Observation
    G, H, S, T = (4, 4, 0), (4, 4, 1), (4, 8, 0), (4, 8, 1)
    layout = Layout("a stack behind a stack", (G, H, S, T))
    ref = Referee("mindful", layout, ["Ada"], Script({}), fps=10.0)
    spec = MatSpec.default()
    gx, gy = spec.grid_origin_mm
    o = Observation(np.array([True, False, True, True]), np.ones(4, bool), ["circles-8", None, None, "circles-8"],
                    np.full(4, 0.9))

    def fronts(camera):
        rec = SimpleNamespace(recognition=SimpleNamespace(pose=SimpleNamespace(
            camera_centre_mm=np.array(camera, np.float64))), spec=spec)
        return ref._first_fronts(o, rec).front

    low = fronts([gx + 75, gy + 1000, -350.0])          # 1 m in front, 35 cm up
    assert low == ((3,), None, (), None)             # T shows in G's window (H, right above, left out)
    assert fronts([gx + 75, gy + 100, -900.0]) == ((), None, (), None)     # from overhead, nothing
    # read empty, T hides nothing
    gone = Observation(np.array([True, False, True, False]), np.ones(4, bool), ["circles-8", None, None, None],
                       np.full(4, 0.9))
    rec = SimpleNamespace(recognition=SimpleNamespace(pose=SimpleNamespace(
        camera_centre_mm=np.array([gx + 75, gy + 1000, -350.0]))), spec=spec)
    assert ref._first_fronts(gone, rec).front == ((), None, (), None)


def test_an_output_line_names_the_frames_number_in_the_file_and_its_time(tmp_path):
    # a video timed by its timestamps is fed at its average rate (vision.
    # sources._FrameClock); its lines name the frame's own number in the
    # file (the contract's "0-based index of the frame") and its time, and
    # the evidence folder, its event.json and slots.json do the same
    import json as _json
    from vision.referee import EvidenceWriter
    from vision.tracking import TrackEvent
    got = []
    ref = Referee("love", LAYOUT, ["Ada", "Bo"], Script({}), emit=got.append, fps=14.78,
                  frame_number=lambda i: {50: 17}.get(i, i))
    out = ref._output({"type": "penalty", "frame": 50, "player": "Ada", "slot": [0, 0, 0]}, 50)
    assert got == [out] and out["frame"] == 17 and out["t"] == round(50 / 14.78, 3)
    ev = EvidenceWriter(tmp_path / "ev", frame_number=lambda i: {50: 17}.get(i, i))
    saved = ev.save(TrackEvent("penalty", 50, ((0, 0, 0),), ("hearts-1",)), None, None)
    (folder,) = list((tmp_path / "ev").iterdir())
    assert folder.name == "0001-penalty-f17"
    assert _json.loads((folder / "event.json").read_text())["frame"] == 17 and saved["event"].endswith("event.json")
