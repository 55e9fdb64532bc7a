"""The camera referee on short rendered recordings (:mod:`vision.synth`):
real pictures of the mat and tiles, read by the bundled models.

The board is three rows of six tiles on layer 0 (Love Mahjong faces dealt
with the test's seed), seen at 640 x 480 and 10 frames a second.  The tile
lifted is (4, 4, 0), in the middle of the row nearest the first player:
pinched between (2, 4, 0) and (6, 4, 0), so lifting it is a blocked-tile
penalty (Love Mahjong rule book, "Blocked tiles"; docs/RULES.md).
"""

import json

import cv2
import numpy as np
import pytest

from companion.layouts import Layout
from vision.referee import Referee, RefereeSettings, read_board
from vision.synth import Pause, PutBack, SceneSpec, deal_faces, write_recording
from vision.synth.recording import Lean

ROWS = Layout("three-rows", tuple((x, y, 0) for y in (0, 2, 4) for x in (0, 2, 4, 6, 8, 10)))
BLOCKED = (4, 4, 0)


def _record(folder, moves, seed):
    """Render ``moves`` on :data:`ROWS`; returns (frames, truth).  The two
    ends of the first row are made a pair, so the deal is no stalemate (a
    penalty is refused once the game has ended)."""
    rng = np.random.default_rng(seed)
    faces = list(deal_faces("love", len(ROWS), rng))
    assert faces.count(faces[0]) < 4            # a fifth copy would be no real set
    faces[5] = faces[0]
    spec = SceneSpec("love", ROWS, faces=tuple(faces), removed=(), image_size=(640, 480), tilt_deg=(10.0, 25.0))
    truth = write_recording(folder, "love", ROWS, moves, rng, 10.0, spec=spec)
    frames = [cv2.imread(str(p)) for p in sorted(folder.iterdir()) if p.suffix == ".jpg"]
    return frames, truth


def _referee(frames, **settings):
    """Run a referee over ``frames`` (players A and B); returns (events, status)."""
    out = []
    ref = Referee("love", ROWS, ["A", "B"], lambda f: read_board(f, "love", ROWS), emit=out.append, fps=10.0,
                  settings=RefereeSettings(**settings))
    for i, f in enumerate(frames):
        ref.feed(i, f)
    ref.finish()
    return out, ref.status


def test_a_blocked_tile_held_beside_the_board_is_penalised(tmp_path):
    # fresh bench game 9200: a blocked tile lifted and held still beside the
    # board; the hand holding it and the emptied slot make one change reaching
    # in from beside the board, and every still picture of the hold was
    # refused as a hand over the tiles: the penalty was lost
    moves = [Pause(0.5), PutBack((BLOCKED,), "A", hold_s=1.5, hold="beside"), Pause(0.5)]
    frames, truth = _record(tmp_path / "rec", moves, seed=1)
    lift = truth["moves"][1]
    out, status = _referee(frames)
    assert [(e["type"], tuple(e["slot"]), e["player"]) for e in out] == [("penalty", BLOCKED, "A")]
    assert lift["start_frame"] <= out[0]["frame"] <= lift["end_frame"]
    assert "pinched between 2,4,0 (left) and 6,4,0 (right)" in out[0]["explanation"]
    # the emptied slot shows the bare mat: without that test the hold is
    # never judged
    off, _ = _referee(frames, bare_mat=False)
    assert off == []


def test_fingertips_resting_on_a_blocked_tile_are_no_penalty(tmp_path):
    # a hand resting on the table by the board, its fingertips on the blocked
    # tile's face for 1.6 s: the face under them read weakly, its own face's
    # probability fallen, which the tracker takes for a tile gone; the slot
    # under the hand's change counts as hidden as the tracker reads it, and
    # the pictures wait for the hand to leave
    moves = [Pause(0.5), Lean("B", slot=BLOCKED, gap_mm=-5.0, side=0), Pause(1.5), Lean("B", on=False), Pause(0.5)]
    frames, _ = _record(tmp_path / "rec", moves, seed=1)
    out, status = _referee(frames)
    assert out == []
    assert status.judged >= 2
    # without the hand test the fingertips are taken for the tile lifted
    blind, _ = _referee(frames, hand_reach_share=0.0)
    assert [(e["type"], tuple(e["slot"])) for e in blind] == [("penalty", BLOCKED)]
