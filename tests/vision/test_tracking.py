"""The tracker's logic on small hand-made sequences.

Board used by the tracker tests (one layer, half-tile units):

    A(0,0) B(2,0) C(4,0)      D(8,0)
    E(0,4)                    F(8,4)        G(4,4,z=0) with H(4,4,z=1) on top

A and C end the first row (free); B is pinched by A and C.  G is covered by H.
"""

import numpy as np

from companion.layouts import Layout
from companion.rules import Board
from companion.tiles import tileset
from vision.tracking import BoardTracker, MotionGate, MotionSettings, Observation

A, B, C, D, E, F, G, H = ((0, 0, 0), (2, 0, 0), (4, 0, 0), (8, 0, 0), (0, 4, 0), (8, 4, 0),
                          (4, 4, 0), (4, 4, 1))
LAYOUT = Layout("hand-made", (A, B, C, D, E, F, G, H))
FACES = ["bamboo-1", "bamboo-2", "bamboo-1", "bamboo-2", "bamboo-3", "bamboo-3", "dragon-red", "dragon-red"]


def obs(absent=(), hidden=()):
    n = len(LAYOUT)
    present = np.ones(n, bool)
    known = np.ones(n, bool)
    for s in absent:
        present[LAYOUT.slot_index(s)] = False
    for s in hidden:
        known[LAYOUT.slot_index(s)] = False
    faces = [f if present[i] and known[i] and LAYOUT.slots[i] != G else None for i, f in enumerate(FACES)]
    return Observation(present, known, faces, np.full(n, 0.99))


def tracker():
    t = BoardTracker(Board(LAYOUT), tileset("mindful"))
    assert t.observe(0, obs()) == []
    return t


def types(events):
    return [e.type for e in events]


# ----------------------------------------------------------------- motion gate

def run_gate(sigs, settle=3):
    gate = MotionGate(MotionSettings(settle_frames=settle))
    return [gate.update(s) for s in sigs]


def test_gate_hand_appears_then_leaves_with_pair_gone():
    still = np.zeros((54, 96), np.float32)
    hand = still.copy(); hand[10:40, 20:60] = 200.0
    hand2 = still.copy(); hand2[12:44, 30:70] = 200.0
    after = still.copy(); after[20:26, 40:50] = 90.0      # two tiles gone: a small lasting change
    seq = [still] * 4 + [hand, hand2, hand] + [after] * 5
    out = run_gate(seq)
    # first settled run is judged once; the hand frames are moving; the new
    # still picture is judged once after 3 still frames
    assert out[:4] == ["settling", "settling", "settled", "same"]
    assert out[4:8] == ["moving", "moving", "moving", "moving"]
    assert out[8:] == ["settling", "settled", "same", "same"]


def test_gate_does_not_rejudge_an_unchanged_picture_after_a_hand():
    still = np.zeros((54, 96), np.float32)
    hand = still.copy(); hand[10:40, 20:60] = 200.0
    out = run_gate([still] * 4 + [hand] * 2 + [still] * 4)
    assert out.count("settled") == 1 and out[-1] == "same"


def test_gate_camera_nudge_is_judged_again():
    base = np.tile(np.linspace(0, 255, 96, dtype=np.float32), (54, 1))
    nudged = np.roll(base, 3, axis=1)
    out = run_gate([base] * 4 + [nudged] * 4)
    assert out.count("settled") == 2


# ----------------------------------------------------------------- board tracker

def test_pair_vanishes_is_a_valid_claim():
    t = tracker()
    ev = t.observe(10, obs(absent=[A]))
    assert types(ev) == ["lift"]
    ev = t.observe(20, obs(absent=[A, C]))
    assert types(ev) == ["lift", "claim"]
    claim = ev[-1]
    assert claim.valid and claim.frame == 20 and claim.slots == (A, C)
    assert claim.faces == ("bamboo-1", "bamboo-1")
    assert not t.board.present[LAYOUT.slot_index(A)]
    # B is no longer pinched once A and C are gone
    assert t.board.is_free(LAYOUT.slot_index(B))


def test_both_tiles_in_one_settled_change():
    t = tracker()
    ev = t.observe(5, obs(absent=[E, F]))
    assert types(ev) == ["lift", "lift", "claim"] and ev[-1].valid


def test_blocked_tile_lifted_and_returned_costs_a_penalty():
    t = tracker()
    ev = t.observe(7, obs(absent=[B]))
    assert types(ev) == ["lift", "penalty"]
    pen = ev[1]
    assert pen.slots == (B,) and pen.reason == "blocked" and pen.frame == 7
    assert pen.blocks[0]["left"] == [list(A)] and pen.blocks[0]["right"] == [list(C)]
    ev = t.observe(12, obs())
    assert types(ev) == ["return"]
    assert t.board.present[LAYOUT.slot_index(B)]


def test_covered_tile_penalty_names_the_cover():
    t = tracker()
    ev = t.observe(3, obs(absent=[G]))
    assert ev[1].type == "penalty" and ev[1].blocks[0]["covered_by"] == [list(H)]


def test_returned_non_matching_pair_is_an_invalid_attempt():
    t = tracker()
    t.observe(10, obs(absent=[A]))
    ev = t.observe(20, obs(absent=[A, D]))
    assert types(ev) == ["lift"]             # no claim: 1 of bamboo and 2 of bamboo
    ev = t.observe(30, obs())
    assert types(ev) == ["return", "return", "attempt"]
    att = ev[-1]
    assert att.valid is False and att.code == "no-match" and att.slots == (A, D)
    assert all(t.board.present)


def test_first_pick_does_not_free_the_second():
    # A is lifted first; B was pinched by A and C at the start of the turn.
    t = tracker()
    t.observe(10, obs(absent=[A]))
    ev = t.observe(20, obs(absent=[A, B]))
    assert types(ev) == ["lift", "penalty"]


def test_unreturned_invalid_pair_becomes_invalid_claim_needing_referee():
    t = tracker()
    t.observe(10, obs(absent=[A, D]))
    ev = t.observe(20, obs(absent=[A, D, E]))
    assert types(ev)[:2] == ["claim", "needs-referee"]
    assert ev[0].valid is False and ev[0].reason == "no-match"
    assert ev[0].frame == 10          # when the pair was first seen off the board


def test_hidden_slots_keep_their_state():
    t = tracker()
    ev = t.observe(10, obs(absent=[], hidden=[A, B, C]))
    assert ev == []
    assert all(t.board.present)


def test_revealed_face_under_a_removed_tile():
    t = tracker()
    t.observe(10, obs(absent=[H, D]))  # not a match: dragon-red and bamboo-2 -> attempt pending
    t.observe(11, obs())
    t2 = tracker()
    t2.observe(10, obs(absent=[H]))
    o = obs(absent=[H])
    faces = list(o.faces); faces[LAYOUT.slot_index(G)] = "dragon-red"
    ev = t2.observe(20, Observation(o.present, o.known, faces, o.confidence))
    assert types(ev) == ["reveal"] and ev[0].slots == (G,)
