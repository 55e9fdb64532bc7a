"""``faces_seen``: faces the camera read on standing tiles the ledger knew
no face for (docs/RULES.md 1.7).  No move and no turn; free pairs, the
stalemate (Love Mahjong 2.8: "All remaining unblocked tiles have no
matching partners available on the board") and referee corrections count on them.

The table: a two-high stack at 0,0 (the lower tile's face unknown, as a
camera game records it) and four free tiles beside it::

    0,0,1 hearts-1 on 0,0,0 (face unknown)
    4,0,0 hearts-1   8,0,0 roses-2   12,0,0 hearts-7   16,0,0 roses-8

Ann claims the two hearts-1: the lower tile of the stack is uncovered.
"""

from __future__ import annotations

import pytest

from companion import game as G
from companion.errors import BadInput, IllegalMove
from companion.layouts import Layout, Slot
from companion.ledger import Ledger

SLOTS = [Slot(0, 0, 0), Slot(0, 0, 1), Slot(4, 0, 0), Slot(8, 0, 0), Slot(12, 0, 0), Slot(16, 0, 0)]
FACES = [None, "hearts-1", "hearts-1", "roses-2", "hearts-7", "roses-8"]


class Game:
    def __init__(self, tmp_path, mode="sprint"):
        self.ledger = Ledger(tmp_path / "g.db")
        data = G.start_data("love", mode, Layout("stack", tuple(SLOTS)), FACES, ["Ann", "Ben"], None,
                            {"source": "camera"})
        self.ledger.append("g", "game_started", data, None, 0.0)

    @property
    def events(self):
        return self.ledger.events("g")

    @property
    def state(self):
        return G.replay(self.events)

    def commit(self, outcome_or_pendings):
        pend = outcome_or_pendings.events if isinstance(outcome_or_pendings, G.Outcome) else outcome_or_pendings
        _, written = G.commit(self.state, pend, lambda t, d, r, tt: self.ledger.append("g", t, d, r, tt))
        return written

    def seen(self, faces, slots=((0, 0, 0),)):
        return self.commit([G.Pending("faces_seen", {"slots": [list(s) for s in slots], "faces": list(faces),
                                                     "source": "camera", "frame": 12})])

    def claim_hearts(self):
        return self.commit(G.resolve_claim(self.state, "Ann", [SLOTS[1], SLOTS[2]]))


@pytest.fixture
def game(tmp_path):
    g = Game(tmp_path)
    yield g
    g.ledger.close()


def test_a_face_seen_fills_the_unknown_face_and_counts_in_free_pairs(game):
    game.claim_hearts()
    before = G.state_json(game.events)
    # the uncovered tile's face is unknown: no free pair known, and one free tile unseen
    assert before["free_pairs_left"] == 0 and before["free_faces_unknown"] == 1
    assert not before["stuck"] and not before["ended"]
    (ev,) = game.seen(["roses-2"])
    after = G.state_json(game.events)
    st = game.state
    assert st.faces[0] == "roses-2"
    assert after["free_pairs_left"] == 1 and after["free_faces_unknown"] == 0
    assert st.free_pairs() == [(0, 3)]
    # no move: the turn and the scores stay as they were
    assert after["turn"] == before["turn"] == "Ann"      # a match plays again (Love 2.1 Law 2)
    assert [p["score"] for p in after["players"]] == [p["score"] for p in before["players"]]
    assert st.entries[ev.id].text == "faces seen: 0,0,0 2 Wild Rose"
    # the phones' list of last events shows moves only
    assert [e["type"] for e in after["last_events"]] == ["game_started", "claim"]
    # and the hint knows the pair now
    assert G.first_free_pair(st) == (0, 3)


def test_a_face_seen_that_leaves_no_free_pair_ends_the_game_and_voiding_it_reopens(game):
    game.claim_hearts()
    seen = game.seen(["hearts-9"])
    # 0,0,0 hearts-9, 8,0,0 roses-2, 12,0,0 hearts-7, 16,0,0 roses-8: no two match
    st = game.state
    assert st.ended and st.end_reason == "stalemate"
    ended = [e for e in seen if e.type == "game_ended"]
    assert len(ended) == 1 and ended[0].data["cause"] == seen[0].id
    # the referee finds the camera misread it: voiding the reading voids the end too
    game.commit(G.resolve_correction(game.state, seen[0].id, void=True, reason="misread"))
    st = game.state
    assert not st.ended and st.faces[0] is None
    assert st.status[ended[0].id] == "voided"


def test_the_referee_corrects_a_misread_face(game):
    game.claim_hearts()
    (ev,) = game.seen(["roses-2"])
    game.commit(G.resolve_correction(game.state, ev.id, {"faces": ["hearts-7"]}))
    st = game.state
    assert st.faces[0] == "hearts-7" and st.free_pairs() == [(0, 4)]
    # the phones' list leaves out the correction too (it points at a reading the list leaves out)
    assert [e["type"] for e in G.state_json(game.events)["last_events"]] == ["game_started", "claim"]
    assert G.face_conflicts(st, ev.id) == []       # the ledger knew no face for 0,0,0
    with pytest.raises(BadInput, match="one per tile"):
        G.resolve_correction(game.state, ev.id, {"faces": ["hearts-7", "roses-2"]})
    with pytest.raises(BadInput, match="cannot change .player. on a faces_seen event: it can change faces"):
        G.resolve_correction(game.state, ev.id, {"player": "Ben"})


def test_faces_seen_refused(game):
    game.claim_hearts()
    with pytest.raises(IllegalMove, match="0,0,1 holds no tile"):
        game.seen(["hearts-1"], [(0, 0, 1)])
    with pytest.raises(BadInput, match="hearts-10"):
        game.seen(["hearts-10"])
    with pytest.raises(BadInput, match="expected 2 slot"):
        game.seen(["roses-2", "roses-2"])
    with pytest.raises(BadInput, match="slot 40,0,0 is not in layout"):
        game.seen(["roses-2"], [(40, 0, 0)])
    assert [e.type for e in game.events] == ["game_started", "claim"]


def test_a_face_seen_replaces_a_known_face_and_says_so(game):
    (ev,) = game.seen(["roses-8"], [(12, 0, 0)])
    st = game.state
    assert st.faces[4] == "roses-8"
    assert st.entries[ev.id].text == "faces seen: 12,0,0 8 Rose Wreath (was 7 Floating Hearts)"


def test_in_the_hand_builder_the_claim_that_uncovered_the_faces_keeps_its_last_call(tmp_path):
    g = Game(tmp_path, mode="hand-builder")
    try:
        (claim,) = [e for e in g.claim_hearts() if e.type == "claim"]
        g.seen(["hearts-9"])
        st = g.state
        assert st.ended and st.end_reason == "stalemate"
        # the stalemate follows from the claim: its claimant may still declare
        # and an opponent may still steal it (Love Mahjong 2.4 Phase 3)
        assert st.last_call is not None and st.last_call[0] == claim.id
    finally:
        g.ledger.close()


def test_correcting_the_reading_that_ended_the_game_reopens_it_with_nothing_to_settle(game):
    game.claim_hearts()
    seen = game.seen(["hearts-9"])
    end = [e for e in seen if e.type == "game_ended"][0]
    assert game.state.ended
    game.commit(G.resolve_correction(game.state, seen[0].id, {"faces": ["roses-2"]}))
    st = game.state
    # the end record no longer holds: it stops counting, and no referee item is left
    assert not st.ended and st.needs == {} and st.status[end.id] == "voided"
    assert "no longer holds: free matching pairs remain" in st.entries[end.id].text


def test_the_claim_before_a_reading_that_ended_the_game_can_be_undone(game):
    (claim,) = [e for e in game.claim_hearts() if e.type == "claim"]
    game.seen(["hearts-9"])
    assert game.state.ended
    # the stalemate came from the faces the claim uncovered: undoing the
    # claim puts its tiles back, and the game goes on
    game.commit(G.resolve_undo(game.state, "Ann"))
    st = game.state
    assert not st.ended and st.status[claim.id] == "voided" and st.needs == {}
    assert st.board.n_present == 6


def test_an_undo_after_an_end_says_how_to_reopen_the_game(game):
    game.claim_hearts()
    (end,) = game.commit(G.resolve_end(game.state, "abandoned"))
    with pytest.raises(IllegalMove, match=rf"the game has ended \(abandoned\): void event #{end.id} \(game_ended\) "
                                          "to reopen it"):
        G.resolve_undo(game.state)


def test_no_moves_while_a_free_tiles_face_is_unknown_says_so(game):
    game.claim_hearts()                  # 0,0,0 uncovered, its face unknown
    with pytest.raises(IllegalMove, match="the faces of 1 free tile are not known, so the board cannot show that no "
                                          "move remains: end the game as abandoned"):
        G.resolve_end(game.state, "no-moves")
