"""companion.session: the console's game service (replay, resolve, commit),
on the mini game of webgame.py; scores from Love Mahjong 2.5 / 2.7."""

from __future__ import annotations

import json

import pytest

from companion import game as G
from companion.codex import builtin
from companion.errors import BadInput, IllegalMove
from companion.ledger import Ledger
from companion.session import GameSession, deal_faces, start_game
from companion.tiles import tileset
from webgame import A, B, B2, C, D, E, start_mini


@pytest.fixture
def led(tmp_path):
    with Ledger(tmp_path / "s.db") as led:
        start_mini(led)
        yield led


def test_no_game(tmp_path):
    with Ledger(tmp_path / "e.db") as empty:
        with pytest.raises(BadInput, match="holds no game"):
            GameSession(empty)
        start_mini(empty)
        with pytest.raises(BadInput, match="no game 'zz'"):
            GameSession(empty, "zz")


def test_claim_writes_and_replays(led):
    s = GameSession(led, t=5.0)
    res = s.claim("Ann", [A, C])
    assert res.ok and [e.type for e in res.written] == ["claim"] and res.written[0].t == 5.0
    assert s.state.scores() == {"Ann": 10_200, "Ben": 10_000}
    assert G.replay(led.events("g1")).scores() == s.state.scores()


def test_blocked_touch_is_a_penalty_with_an_error(led):
    res = GameSession(led).touch("Ben", B)
    assert not res.ok and "covered by 2,0,1" in res.error
    assert [e.type for e in res.written] == ["penalty"] and res.written[0].data["points"] == -100


def test_capabilities(led):
    s = GameSession(led)
    assert s.capabilities() == {"undo": False, "hint": False, "reshuffle": False, "moves": True,
                                "melds": True, "end": True, "words": False}
    s.pass_turn("Ann")
    assert s.capabilities()["undo"] is True


def test_undo_is_not_offered_while_it_would_be_refused(led):
    # (break-test, session 36) after the referee ended the game the console
    # still offered "Undo #2 pass", and every tap was refused ("the game has
    # ended (abandoned): void event #3 ...")
    s = GameSession(led)
    s.pass_turn("Ann")
    s.end("abandoned")
    s = GameSession(led)
    assert s.capabilities()["undo"] is False and s.can_undo() is False
    with pytest.raises(IllegalMove, match="the game has ended"):
        s.undo()


def test_correct_only_known_fields(led):
    s = GameSession(led)
    claim = s.claim("Ann", [A, C]).written[0].id
    with pytest.raises(BadInput, match="cannot correct evidence"):
        s.correct(claim, {"evidence": {"before": "/etc/passwd"}})
    res = s.correct(claim, {"player": "Ben"}, "wrong seat")
    assert res.written[0].data == {"changes": {"player": "Ben"}, "reason": "wrong seat"}


def test_open_items_and_settle(led):
    item = led.append("g1", "needs-referee", {"reason": "hand in view", "slots": [D, E]}, None, 1.0)
    s = GameSession(led)
    items = s.open_items()
    assert [(i["id"], i["type"], i["slots"]) for i in items] == [(item.id, "needs-referee", [D, E])]
    with pytest.raises(BadInput, match="unknown decision"):
        s.settle(item.id, "maybe")
    with pytest.raises(BadInput, match="needs the player"):
        s.settle(item.id, "claim")
    with pytest.raises(IllegalMove):
        s.settle(item.id, "claim", "Ann", [D, B])            # B is blocked: refused, nothing written
    assert len(led.events("g1")) == 2
    res = s.settle(item.id, "claim", "Ann", [D, E], "clear on video")
    assert [e.type for e in res.written] == ["correction", "claim"]
    assert GameSession(led).open_items() == []
    # said as the table says it, not field by field ("decision claim;
    # resolved true", a break-test of the phones' page, session 50)
    fix = res.written[0].id
    assert GameSession(led).state.entries[fix].text == f"referee settled item #{item.id} as a claim (clear on video)"
    other = led.append("g1", "needs-referee", {"reason": "hand in view", "slots": [A]}, None, 2.0)
    fix = GameSession(led).settle(other.id).written[0].id
    assert GameSession(led).state.entries[fix].text == f"referee settled item #{other.id} with no move"


def test_a_settle_or_item_correction_reason_is_one_line_of_plain_text(led):
    # the Settle form's reason and `correct ITEM --set reason=...` reached the
    # ledger unchecked: a newline forged a ledger line (a break-test, session 55)
    item = led.append("g1", "needs-referee", {"reason": "hand in view", "slots": [D, E]}, None, 1.0)
    s = GameSession(led)
    with pytest.raises(BadInput, match="a control character \\(U\\+000A\\)"):
        s.settle(item.id, "none", reason="x\n#99 claim: Bo claimed everything")
    with pytest.raises(BadInput, match="at most 300"):
        s.settle(item.id, "none", reason="x" * 1000)
    with pytest.raises(BadInput, match="RIGHT-TO-LEFT OVERRIDE"):        # (the command line's `correct`)
        G.resolve_correction(s.state, item.id, {"reason": "\u202elive"}, False, "", s.state.raw)
    assert len(led.events("g1")) == 2
    res = s.settle(item.id, "none", reason="  seen on the video  ")
    assert res.written[0].data["reason"] == "seen on the video"


def test_rejected_items_must_be_voided(led):
    bad = led.append("g1", "claim", {"player": "Ann", "slots": [A, B], "faces": ["hearts-1", "hearts-1"]},
                     None, 1.0)
    s = GameSession(led)
    assert s.open_items()[0]["rejected"] is True
    with pytest.raises(BadInput, match="void it or correct it"):
        s.settle(bad.id)
    s.void(bad.id, "misread")
    assert GameSession(led).open_items() == []


def test_end(led):
    s = GameSession(led)
    with pytest.raises(BadInput, match="unknown end reason"):
        s.end("bored")
    assert s.end().written[0].data == {"reason": "abandoned", "by": "referee"}
    with pytest.raises(IllegalMove, match="has ended"):
        s.end()


def test_start_game_deals_the_whole_set(tmp_path):
    with Ledger(tmp_path / "n.db") as led:
        ev = start_game(led, "candy", "sprint", builtin("turtle"), ["Ann"], 9, t=2.0)
        assert ev.game_id == "game-1" and ev.type == "game_started" and ev.t == 2.0
        assert sorted(ev.data["faces"]) == sorted(tileset("candy").tiles())
        with pytest.raises(BadInput, match="already exists"):
            start_game(led, "candy", "sprint", builtin("turtle"), ["Ann"], 9, game_id="game-1")
    assert deal_faces("love", builtin("turtle"), 3) == deal_faces("love", builtin("turtle"), 3)


def test_game_ids_are_told_apart_as_names_are(tmp_path):
    # "FRIDAY" started a second game beside "Friday", and "--game friday"
    # found neither; ids are now folded as players' names are (case, width)
    with Ledger(tmp_path / "n.db") as led:
        start_game(led, "love", "sprint", builtin("turtle"), ["Ann", "Ben"], 1, game_id="Friday")
        for other in ("FRIDAY", "friday", "\uff26riday"):          # (a full-width F)
            with pytest.raises(BadInput, match=r"game 'Friday' already exists in .* \(ids that differ only in "
                                               r"case or width are one game\): give another id"):
                start_game(led, "love", "sprint", builtin("turtle"), ["Ann", "Ben"], 2, game_id=other)
        assert GameSession(led, "friday").game_id == "Friday"
        assert led.find_game_id("FRIDAY") == "Friday" and led.find_game_id("Saturday") is None
        with pytest.raises(BadInput, match="no game 'Saturday'"):
            GameSession(led, "Saturday")
        assert start_game(led, "love", "sprint", builtin("turtle"), ["Ann", "Ben"], 2, game_id="Fri").game_id == "Fri"


def test_a_ledger_holding_ids_that_fold_alike_finds_each_by_its_own_id(tmp_path):
    # a ledger written before ids were folded may hold "Friday" and "FRIDAY":
    # each is found by its exact id, and a third spelling by neither
    with Ledger(tmp_path / "n.db") as led:
        a = start_game(led, "love", "sprint", builtin("turtle"), ["Ann", "Ben"], 1, game_id="Friday")
        led.conn.execute("INSERT INTO events (game_id, type, data, ref, t) VALUES (?, ?, ?, NULL, NULL)",
                         ("FRIDAY", "game_started", json.dumps(a.data)))
        assert GameSession(led, "FRIDAY").game_id == "FRIDAY" and GameSession(led, "Friday").game_id == "Friday"
        assert led.find_game_id("friday") is None
        with pytest.raises(BadInput, match="no game 'friday'"):
            GameSession(led, "friday")


def test_a_move_judged_on_a_board_another_writer_changed_is_not_written(tmp_path):
    # a break-test ran six `companion game claim` of one pair at once: two
    # passed the check, and the second was written, then rejected on replay
    # ("holds no tile"), putting a referee item on every phone
    from companion.ledger import StaleGame
    path = tmp_path / "r.db"
    with Ledger(path) as setup:
        start_mini(setup)
    with Ledger(path) as one, Ledger(path) as two:       # two processes' connections
        first, second = GameSession(one, "g1", t=5.0), GameSession(two, "g1", t=5.0)
        assert first.claim("Ann", [A, C]).ok
        with pytest.raises(StaleGame, match=r"game 'g1' changed while this was being decided \(event #2 is new\): "
                                            "nothing was written"):
            second.claim("Ann", [A, C])
        assert [e.type for e in one.events("g1")] == ["game_started", "claim"]
        again = GameSession(two, "g1", t=6.0)                # read again: judged on the board as it is
        with pytest.raises(IllegalMove, match="holds no tile"):
            again.claim("Ann", [A, C])
        assert again.claim("Ann", [D, E]).ok                # a move on the board as it is now


def test_two_starts_at_once_never_share_a_game(tmp_path):
    path = tmp_path / "n.db"
    with Ledger(path) as one, Ledger(path) as two:
        a = start_game(one, "love", "sprint", builtin("turtle"), ["Ann", "Ben"], 1)
        b = start_game(two, "love", "sprint", builtin("turtle"), ["Cy", "Di"], 2)
        assert (a.game_id, b.game_id) == ("game-1", "game-2")
        with pytest.raises(BadInput, match="game 'game-1' already exists"):
            two.append("game-1", "game_started", dict(a.data), None, 3.0)
        assert [e.data["players"] for e in one.events() if e.type == "game_started"] == [["Ann", "Ben"], ["Cy", "Di"]]


def test_undo_takes_back_both_penalties_of_one_claim_of_blocked_tiles(tmp_path):
    # a claim of two covered tiles is two penalties (Love 2.7: each blocked
    # tile); "Undo last move" once took back only the second
    from companion.layouts import Layout, Slot
    lay = Layout("stacks", (Slot(0, 0, 0), Slot(0, 0, 1), Slot(4, 0, 0), Slot(4, 0, 1)))
    with Ledger(tmp_path / "u.db") as led:
        data = G.start_data("love", "sprint", lay, ["hearts-1", "hearts-2", "hearts-1", "hearts-2"], ["Ann", "Ben"], 1)
        led.append("g1", "game_started", data, None, 0.0)
        s = GameSession(led, "g1", t=1.0)
        res = s.claim("Ann", [[0, 0, 0], [4, 0, 0]])
        assert not res.ok and [e.type for e in res.written] == ["penalty", "penalty"]
        assert all(e.data["claimed"] == [[0, 0, 0], [4, 0, 0]] for e in res.written)
        assert s.state.scores()["Ann"] == 9_800
        undo = s.undo()
        assert [(e.type, e.ref) for e in undo.written] == [("undo", 3), ("undo", 2)]
        assert undo.message.startswith("events #2 (") and " are undone" in undo.message
        assert s.state.scores()["Ann"] == 10_000
        # a lone penalty (a touch) is one move of its own
        assert [e.type for e in s.touch("Ann", [0, 0, 0]).written] == ["penalty"]
        assert len(s.undo().written) == 1


def test_a_void_says_what_else_it_changed(tmp_path):
    # Affinity Sprint: Ann takes both free pairs in a row (a chained extra
    # turn, Love 2.6.2: +200 on the second) and the game ends; voiding the
    # first pair costs the second its chain bonus and un-ends the game, and
    # the referee must be told, not find out from the scores
    with Ledger(tmp_path / "l.db") as led:
        start_mini(led, mode="sprint")
        g = GameSession(led, "g1", t=1001.0)
        assert g.claim("Ann", [A, C]).ok and g.claim("Ann", [D, E]).ok      # #2 +100, #3 +100 +200, #4 ended
        res = g.void(2)
        assert res.ok and res.warning == ("also changed: #3 claim now scores +100 (was +300); "
                                          "#4 game_ended no longer counts (free matching pairs remain)")
        # the voided pair still says what it was, faces and all
        texts = {e["id"]: e["text"] for e in G.state_json(led.events("g1"))["last_events"]}
        assert texts[2] == "Ann claimed 1 Single Heart + 1 Single Heart (0,0,0 4,0,0) (voided)"
        # voiding the void brings the pair back, and with it the rest
        res = g.void(res.written[0].id)
        assert res.warning == ("also changed: #2 claim counts again; #3 claim now scores +300 (was +100); "
                               "#4 game_ended counts again")
        # an undo of the last pair changes nothing else
        assert g.undo().warning is None


def test_a_correction_with_faces_the_deal_contradicts_is_warned(tmp_path):
    with Ledger(tmp_path / "l.db") as led:
        start_mini(led, mode="sprint")
        g = GameSession(led, "g1", t=1001.0)
        assert g.claim("Ann", [A, C]).ok                                      # two 1 Single Hearts
        res = g.correct(2, {"faces": ["hearts-1", "roses-3"]})
        assert res.ok
        assert res.warning == "4,0,0 held 1 Single Heart as far as the ledger knew, not 3 Stemmed Rose"
        assert g.correct(2, {"faces": ["hearts-1", "hearts-1"]}).warning is None
        # given to the player not on turn: rejected, and its line still says what was claimed
        assert g.correct(2, {"player": "Ben"}).warning.startswith("event #2 no longer fits the board")
        texts = {e["id"]: e["text"] for e in G.state_json(led.events("g1"))["last_events"]}
        assert texts[2] == ("rejected: Ben claimed 1 Single Heart + 1 Single Heart (0,0,0 4,0,0): "
                            "it is Ann's turn, not Ben's")


def test_typed_faces_unlike_the_record_are_refused_unless_given_over_the_record(tmp_path):
    # A (hearts-1) and D (roses-3) do not match.  Typed as a season pair
    # they would score +300 (Love 2.5; the engine takes given faces over
    # the record, docs/RULES.md 1.4): a typo, or a player's word, must not
    # do that unnoticed.  A break-test found the console and `game claim
    # --faces` scoring it though both say faces are typed "if unknown"
    with Ledger(tmp_path / "l.db") as led:
        start_mini(led, mode="sprint")
        g = GameSession(led, "g1", t=1001.0)
        with pytest.raises(BadInput) as err:
            g.claim("Ann", [A, D], ["season-spring", "season-spring"])
        assert str(err.value) == (
            "0,0,0 is recorded as hearts-1, not season-spring; 8,0,0 is recorded as roses-3, not season-spring: "
            "typed faces are taken for tiles not yet seen; if the table shows otherwise, give them again over "
            "the record (--over-record; the console's \"over the record\" box)")
        assert [e.type for e in led.events("g1")] == ["game_started"]        # nothing written
        # the recorded faces typed again, or no face for a tile: taken
        assert g.claim("Ann", [A, C], ["hearts-1", None]).ok
        # over the record: the referee's word stands (roses-3 typed as hearts-2 + hearts-2)
        res = g.claim("Ann", [D, E], ["hearts-2", "hearts-2"], over_record=True)
        assert res.ok and res.written[0].data["faces"] == ["hearts-2", "hearts-2"]
        with pytest.raises(BadInput, match="not a face|unknown face"):
            g.claim("Ann", [B2, D], ["hearts-99", "roses-3"])


# Tiles the camera saw leave the table with no move it could decide (a
# needs-referee item with off_table) leave the ledger's board at once, so the
# free rule reads the table as it is (docs/RULES.md "Tiles off the table").

def test_off_table_tiles_leave_the_board_so_a_tile_they_blocked_is_free(led):
    item = led.append("g1", "needs-referee", {"reason": "faces not sure", "slots": [A, B2],
                                              "off_table": [B2, A]}, None, 1.0)
    s = GameSession(led)
    assert not s.state.board.present[0] and not s.state.board.present[3]
    assert s.state.board.reason(1).free            # B: no longer under B2, nor between A and C
    res = s.touch("Ann", B)
    assert res.ok and [e.type for e in res.written] == ["touch"]
    assert [i["id"] for i in GameSession(led).open_items()] == [item.id]


def test_a_claim_settling_off_table_tiles_is_judged_on_the_board_they_left(led):
    item = led.append("g1", "needs-referee", {"reason": "faces not sure", "slots": [A, C],
                                              "off_table": [A, C]}, None, 1.0)
    s = GameSession(led)
    with pytest.raises(IllegalMove, match="holds no tile"):
        s.claim("Ann", [A, C])                      # not as a plain claim: they are off the board
    res = s.settle(item.id, "claim", "Ann", [A, C])
    assert [e.type for e in res.written] == ["claim", "correction"]
    s = GameSession(led)
    assert s.state.scores() == {"Ann": 10_200, "Ben": 10_000}       # Love 2.5: a pair of hearts, +200
    assert s.open_items() == [] and s.state.off_table == {}
    assert s.state.board.n_present == 4                             # A and C taken off once
    assert G.replay(led.events("g1")).scores() == s.state.scores()


def test_settling_a_refused_pair_as_a_claim_says_its_invalid_attempt_still_counts(led):
    # a break-test (session 48): the camera refused Ann's pair (its faces
    # misread), the players kept it, and the referee settled the item as
    # Ann's claim; the invalid attempt went on counting, unsaid
    bad = led.append("g1", "invalid", {"player": "Ann", "slots": [A, C], "faces": ["roses-3", "hearts-1"],
                                       "code": "no-match", "reason": "3 Roses does not match 1 Heart"}, None, 1.0)
    item = led.append("g1", "needs-referee", {"reason": "the rules refused the move", "slots": [A, C],
                                              "off_table": [A, C], "player": "Ann"}, None, 2.0)
    s = GameSession(led)
    res = s.settle(item.id, "claim", "Ann", [C, A], faces=["hearts-1", "hearts-1"], over_record=True)
    assert res.ok and [e.type for e in res.written] == ["claim", "correction"]
    assert res.warning.startswith(f"#{bad.id}, the invalid attempt recorded for these tiles, still counts")
    st = GameSession(led).state
    assert st.player("Ann").invalid == 1 and st.scores()["Ann"] == 10_200
    # a claim of other tiles, or none before: no such warning
    item2 = led.append("g1", "needs-referee", {"reason": "faces not sure", "slots": [D, E], "off_table": [D, E]},
                       None, 3.0)
    assert GameSession(led).settle(item2.id, "claim", "Ben", [D, E]).warning is None


def test_a_lone_off_table_tile_is_settled_as_a_claim_with_a_tile_still_on_the_board(led):
    # the camera saw A leave alone and never saw its partner go (a claim's
    # second tile behind a taller stack, bench games 9004 and 13100): the
    # item names A, and the referee, finding C gone from the table too,
    # settles it as A + C.  C still stands on the ledger's board; the claim
    # is judged on the board from before A left and takes C off
    item = led.append("g1", "needs-referee", {"reason": "a tile left alone", "slots": [A],
                                              "off_table": [A]}, None, 1.0)
    res = GameSession(led).settle(item.id, "claim", "Ann", [A, C])
    assert [e.type for e in res.written] == ["claim", "correction"]
    s = GameSession(led)
    assert s.state.scores() == {"Ann": 10_200, "Ben": 10_000}       # Love 2.5: a pair of hearts, +200
    assert s.open_items() == [] and s.state.off_table == {}
    assert not s.state.board.present[0] and not s.state.board.present[2] and s.state.board.n_present == 4
    assert G.replay(led.events("g1")).scores() == s.state.scores()


def test_a_lone_off_table_tile_is_not_settled_with_a_tile_blocked_when_it_left(led):
    # B2 left alone; B (hearts-2, its match) lay under it then: no claim
    item = led.append("g1", "needs-referee", {"reason": "a tile left alone", "slots": [B2],
                                              "off_table": [B2]}, None, 1.0)
    with pytest.raises(IllegalMove, match="covered") as err:
        GameSession(led).settle(item.id, "claim", "Ann", [B2, B])
    # no penalty is written (a break-test saw "blocked tile penalty -100
    # each" in the refusal): the referee decides on one separately
    assert str(err.value).endswith(": not settled, nothing written") and "penalty" not in str(err.value)
    assert len(led.events("g1")) == 2                         # nothing written
    assert GameSession(led).state.board.present[1]


def test_a_lone_tile_s_settled_claim_meets_the_touch_binding_its_partner(led):
    # (break-test, session 46) Ann touched C; the lone tile A's item is
    # settled as A + C, which takes C off the board: the touch is met, and
    # Ann's next pair need not include C
    GameSession(led).touch("Ann", C)
    item = led.append("g1", "needs-referee", {"reason": "a tile left alone", "slots": [A], "off_table": [A],
                                              "may_pair_with": [C]}, None, 1.0)
    GameSession(led).settle(item.id, "claim", "Ann", [A, C])
    s = GameSession(led)
    assert s.state.touched == []
    res = s.claim("Ann", [D, E])
    assert [e.type for e in res.written] == ["claim", "game_ended"]     # B under B2: stuck
    assert G.replay(led.events("g1")).scores() == GameSession(led).state.scores()
    assert GameSession(led).state.player("Ann").matches == 2


def test_a_lone_tile_s_claim_with_a_tile_gone_since_names_that_tile(led):
    item = led.append("g1", "needs-referee", {"reason": "a tile left alone", "slots": [A], "off_table": [A]},
                      None, 1.0)
    assert GameSession(led).claim("Ann", [D, E]).ok
    with pytest.raises(IllegalMove, match="^slot 8,0,0 holds no tile$"):
        GameSession(led).settle(item.id, "claim", "Ann", [A, D])
    assert len(led.events("g1")) == 3                         # nothing written


def test_a_word_settling_an_item_with_a_blocked_letter_is_refused_with_nothing_written(tmp_path):
    # (break-test, session 46) the word decision wrote the blocked letter's
    # penalty and said "word recorded"; a claim so decided was refused
    with Ledger(tmp_path / "l.db") as led:
        start_mini(led, variant="word", mode="zen-archives", faces=["C", "X", "A", "Q", "T", "Z"])
        item = led.append("g1", "needs-referee", {"reason": "a tile left alone", "slots": [A], "off_table": [A]},
                          None, 1.0)
        with pytest.raises(IllegalMove, match="blocked.*: not settled, nothing written$"):
            GameSession(led).settle(item.id, "word", "Ann", [A, B, C], word="cxa")
        assert len(led.events("g1")) == 2


def test_a_penalty_settling_an_off_table_tile_is_judged_on_the_board_it_left(led):
    # B (under B2, between A and C) left the table with B2: touching it then
    # was a blocked touch (Love 2.7), though it is no longer on the board
    item = led.append("g1", "needs-referee", {"reason": "hand in view", "slots": [B2, B],
                                              "off_table": [B2, B]}, None, 1.0)
    res = GameSession(led).settle(item.id, "penalty", "Ben", [B])
    assert [e.type for e in res.written] == ["penalty", "correction"]
    assert GameSession(led).state.scores() == {"Ann": 10_000, "Ben": 9_900}


def test_settling_an_off_table_item_keeps_the_moves_made_since(led):
    item = led.append("g1", "needs-referee", {"reason": "faces not sure", "slots": [A, B2],
                                              "off_table": [A, B2]}, None, 1.0)
    touch = GameSession(led).touch("Ann", B).written[0]
    GameSession(led).settle(item.id, "none")
    s = GameSession(led)
    assert s.open_items() == [] and s.state.needs == {}
    assert s.state.touched == [1] and s.state.status[touch.id] == "ok"     # B's touch still binds
    assert not s.state.board.present[0] and not s.state.board.present[3]  # "none": they stay off


def test_off_table_must_be_slots_of_the_layout(led):
    led.append("g1", "needs-referee", {"reason": "x", "off_table": [[99, 0, 0]]}, None, 1.0)
    s = GameSession(led)
    assert s.open_items()[0]["rejected"] is True and s.state.board.n_present == 6


def test_an_off_table_pair_is_settled_later_with_the_faces_the_referee_gives(tmp_path):
    # the camera read A + C unsurely (the ledger knows no face for them) and
    # play went on: Ann's extra turn, then her invalid attempt, Ben to play.
    # The referee settles the pair for Ann with the faces seen: judged where
    # the tiles stood, scored at the pair's own value (Love 2.5: hearts 1,
    # +200), the turn left with Ben
    faces = [None, "hearts-2", None, "hearts-2", "roses-3", "roses-3"]
    with Ledger(tmp_path / "s.db") as led:
        start_mini(led, faces=faces)
        item = led.append("g1", "needs-referee", {"reason": "faces not sure", "slots": [A, C],
                                                  "off_table": [A, C]}, None, 1.0)
        GameSession(led).claim("Ann", [B2, D], ["hearts-2", "roses-3"])        # no match: Ben's turn
        s = GameSession(led)
        assert s.state.players[s.state.turn].name == "Ben"
        with pytest.raises(BadInput, match="face at 0,0,0 is not known"):
            s.settle(item.id, "claim", "Ann", [A, C])
        res = s.settle(item.id, "claim", "Ann", [A, C], faces=["hearts-1", "hearts-1"])
        assert [e.type for e in res.written] == ["claim", "correction"]
        s = GameSession(led)
        assert s.state.scores() == {"Ann": 10_200, "Ben": 10_000}
        assert s.state.players[s.state.turn].name == "Ben" and s.open_items() == []
        assert s.state.player("Ann").invalid == 1 and s.state.player("Ann").matches == 1
        assert G.replay(led.events("g1")).scores() == s.state.scores()


def test_the_game_waits_for_tiles_off_the_table_before_it_ends(led):
    # D + E (a free pair of roses) left the table unsettled; Ann then takes
    # A + C.  Only B (under B2) and B2 stand: no free pair, a stalemate
    # (Love 2.8) were D + E gone for good, but the referee may yet award them
    item = led.append("g1", "needs-referee", {"reason": "faces not sure", "slots": [D, E],
                                              "off_table": [D, E]}, None, 1.0)
    GameSession(led).claim("Ann", [A, C])
    s = GameSession(led)
    assert not s.state.ended and s.state.stuck()
    res = s.settle(item.id, "claim", "Ann", [D, E])
    assert [e.type for e in res.written] == ["claim", "game_ended", "correction"]
    st = G.replay(led.events("g1"))
    assert st.ended and st.end_reason == "stalemate"
    assert st.scores() == {"Ann": 10_300, "Ben": 10_000}      # Love 2.5: hearts 1 +200, roses 3 +100


def test_off_table_tiles_are_settled_only_as_a_matching_pair(led):
    item = led.append("g1", "needs-referee", {"reason": "faces not sure", "slots": [A, D],
                                              "off_table": [A, D]}, None, 1.0)
    with pytest.raises(IllegalMove, match="settled as a matching pair"):
        GameSession(led).settle(item.id, "claim", "Ann", [A, D])
    assert len(led.events("g1")) == 2                         # nothing written


def test_an_item_of_four_tiles_is_settled_pair_by_pair(led):
    item = led.append("g1", "needs-referee", {"reason": "4 tiles at once", "slots": [A, C, D, E],
                                              "off_table": [A, C, D, E]}, None, 1.0)
    res = GameSession(led).settle(item.id, "claim", "Ann", [A, C])
    assert [e.type for e in res.written] == ["claim"] and "8,0,0, 12,0,0 still to settle" in res.message
    assert [i["id"] for i in GameSession(led).open_items()] == [item.id]
    res = GameSession(led).settle(item.id, "claim", "Ann", [D, E])
    assert [e.type for e in res.written] == ["claim", "game_ended", "correction"]   # B under B2: stuck
    s = GameSession(led)
    assert s.open_items() == [] and s.state.scores() == {"Ann": 10_300, "Ben": 10_000}


def test_a_settled_penalty_counts_once_and_may_name_a_tile_the_leavers_blocked(led):
    # B2 and A left the table: B was blocked then (under B2, between A and C),
    # though it is free now; its penalty is judged on the board they left
    item = led.append("g1", "needs-referee", {"reason": "hand in view", "slots": [B2, A],
                                              "off_table": [B2, A]}, None, 1.0)
    assert GameSession(led).state.board.reason(1).free
    res = GameSession(led).settle(item.id, "penalty", "Ben", [B])
    assert [e.type for e in res.written] == ["penalty", "correction"]
    again = led.append("g1", "penalty", {"player": "Ben", "slot": B, "resolves": item.id}, None, 2.0)
    s = GameSession(led)
    assert s.state.scores() == {"Ann": 10_000, "Ben": 9_900}
    assert [i["id"] for i in s.open_items()] == [again.id]    # the closed item judges nothing more


def test_a_player_cannot_take_back_what_the_referee_settled(led):
    item = led.append("g1", "needs-referee", {"reason": "faces not sure", "slots": [A, C],
                                              "off_table": [A, C]}, None, 1.0)
    claim = GameSession(led).settle(item.id, "claim", "Ann", [A, C]).written[0]
    with pytest.raises(IllegalMove, match=f"cannot take back #{claim.id}: the referee decided it"):
        GameSession(led).undo("Ann")


def test_the_referee_undoing_a_settling_claim_opens_the_item_again(led):
    # the settle wrote the claim, then the correction closing the item; the
    # referee takes the claim back: the correction lapses, the tiles wait off
    # the table again and the item can be settled anew (RULES.md 1.5)
    item = led.append("g1", "needs-referee", {"reason": "faces not sure", "slots": [A, C],
                                              "off_table": [A, C]}, None, 1.0)
    GameSession(led).settle(item.id, "claim", "Ann", [A, C])
    res = GameSession(led).undo()
    assert res.message.endswith(f"is undone; referee item #{item.id} is open again, its tiles off the table")
    s = GameSession(led)
    assert s.state.scores() == {"Ann": 10_000, "Ben": 10_000}
    assert [i["id"] for i in s.open_items()] == [item.id]
    assert s.state.off_table_pending() and s.state.board.n_present == 4     # A and C still off the board
    res = s.settle(item.id, "claim", "Ben", [A, C])
    assert [e.type for e in res.written] == ["claim", "correction"]
    s = GameSession(led)
    assert s.state.scores() == {"Ann": 10_000, "Ben": 10_200} and s.open_items() == []
    assert G.replay(led.events("g1")).scores() == s.state.scores()


def test_undoing_the_second_pair_of_a_four_tile_item_leaves_that_pair_to_settle(led):
    item = led.append("g1", "needs-referee", {"reason": "4 tiles at once", "slots": [A, C, D, E],
                                              "off_table": [A, C, D, E]}, None, 1.0)
    GameSession(led).settle(item.id, "claim", "Ann", [A, C])
    GameSession(led).settle(item.id, "claim", "Ann", [D, E])      # ends the game (stalemate), then closes
    undo = GameSession(led).undo().written[0]
    s = GameSession(led)
    assert not s.state.ended and s.state.scores() == {"Ann": 10_200, "Ben": 10_000}
    assert [i["id"] for i in s.open_items()] == [item.id]
    assert s.state.off_table == {item.id: ([4, 5], s.state.off_table[item.id][1])}     # D and E only
    GameSession(led).void(undo.id)                                 # the referee changes their mind
    s = GameSession(led)
    assert s.state.ended and s.open_items() == [] and s.state.scores() == {"Ann": 10_300, "Ben": 10_000}


def test_the_referee_undoing_a_settling_penalty_opens_the_item_again(led):
    item = led.append("g1", "needs-referee", {"reason": "hand in view", "slots": [B2, A],
                                              "off_table": [B2, A]}, None, 1.0)
    GameSession(led).settle(item.id, "penalty", "Ben", [B])
    GameSession(led).undo()
    s = GameSession(led)
    assert s.state.scores() == {"Ann": 10_000, "Ben": 10_000}
    assert [i["id"] for i in s.open_items()] == [item.id]
    assert [e.type for e in s.settle(item.id, "none").written] == ["correction"]
    assert GameSession(led).open_items() == []


def test_word_tiles_off_the_table_are_settled_as_the_word_they_spelled(tmp_path):
    # Word Mahjong: the camera saw A, C and D (C, A, T) leave together and
    # could not decide the move; the referee settles it as the word CAT (2.1
    # Rule 2), in spelling order, judged where the tiles stood
    faces = ["C", "X", "A", "Q", "T", "Z"]
    with Ledger(tmp_path / "w.db") as led:
        start_mini(led, variant="word", mode="zen-archives", faces=faces)
        item = led.append("g1", "needs-referee", {"reason": "3 tiles at once", "slots": [A, C, D],
                                                  "off_table": [A, C, D]}, None, 1.0)
        s = GameSession(led)
        with pytest.raises(BadInput, match="a word decision needs the word"):
            s.settle(item.id, "word", "Ann", [A, C, D])
        with pytest.raises(IllegalMove, match="CTA is not in the dictionary"):
            s.settle(item.id, "word", "Ann", [A, D, C], word="CTA")
        res = s.settle(item.id, "word", "Ben", [A, C, D], word="cat")
        assert [e.type for e in res.written] == ["word", "correction"]
        s = GameSession(led)
        assert s.state.player("Ben").words == ["CAT"] and s.open_items() == [] and s.state.off_table == {}
        assert s.state.board.n_present == 3
        GameSession(led).undo()                                  # the referee takes it back: open again
        s = GameSession(led)
        assert s.state.player("Ben").words == [] and [i["id"] for i in s.open_items()] == [item.id]


def test_a_word_decision_belongs_to_word_mahjong(led):
    item = led.append("g1", "needs-referee", {"reason": "x", "slots": [A, C, D], "off_table": [A, C, D]},
                      None, 1.0)
    with pytest.raises(BadInput, match="words are played in Word Mahjong only"):
        GameSession(led).settle(item.id, "word", "Ann", [A, C, D], word="CAT")


def test_voiding_the_first_of_two_words_settling_an_item_opens_it_again(tmp_path):
    # six letters left the table as one item, settled as CAT then DOG; the
    # referee voids CAT: its three tiles wait off the table again (DOG stands)
    layout_faces = ["C", "A", "T", "D", "O", "G"]
    slots6 = [[0, 0, 0], [4, 0, 0], [8, 0, 0], [12, 0, 0], [16, 0, 0], [20, 0, 0]]
    from companion.layouts import Layout, Slot
    with Ledger(tmp_path / "w.db") as led:
        data = G.start_data("word", "zen-archives", Layout("row", tuple(Slot(*s) for s in slots6), "test"),
                            layout_faces, ["Ann", "Ben"], 7, {})
        led.append("g1", "game_started", data, None, 1.0)
        item = led.append("g1", "needs-referee", {"reason": "6 tiles at once", "off_table": slots6}, None, 2.0)
        cat = GameSession(led).settle(item.id, "word", "Ann", slots6[:3], word="CAT").written[0]
        res = GameSession(led).settle(item.id, "word", "Ann", slots6[3:], word="DOG")
        assert res.written[-1].type == "correction" and GameSession(led).open_items() == []
        GameSession(led).void(cat.id)
        s = GameSession(led)
        assert [i["id"] for i in s.open_items()] == [item.id]
        assert s.state.off_table[item.id][0] == [0, 1, 2] and s.state.player("Ann").words == ["DOG"]
        with pytest.raises(BadInput, match="a word is letters"):
            s.settle(item.id, "word", "Ann", slots6[:3], word=123)


# An unsure pair kept off the board is one player's move, a claim or an
# invalid attempt (docs/RULES.md 1.5, session 43): where both pass the turn
# (Mindful Mahjong 2.6.3, Harmony Duels, "Players take turns making single
# valid matches"; an invalid attempt passes it in every book) the item
# marked pair_move passes it; where a valid match keeps the turn (Love and
# Candy Law 2, "an extra action turn") it cannot say.

MINDFUL_MINI = ("circles-1", "circles-2", "circles-1", "circles-2", "characters-3", "characters-3")


def test_an_unsure_pair_item_passes_the_turn_in_harmony_duels(tmp_path):
    with Ledger(tmp_path / "m.db") as led:
        start_mini(led, variant="mindful", mode="harmony-duels", faces=MINDFUL_MINI)
        item = led.append("g1", "needs-referee", {"reason": "faces not sure", "player": "Ann", "slots": [A, C],
                                                  "off_table": [A, C], "pair_move": True}, None, 1.0)
        s = GameSession(led)
        assert s.state.players[s.state.turn].name == "Ben"
        assert s.state.entries[item.id].text.endswith("left the table: off the board (settle the item to "
                                                      "score it); a pair move either way: turn passes to Ben")
        # the referee settles the pair for Ann: scored at its own value
        # (Mindful 2.5: a suit pair, 100), made in its own turn: no turn passes again
        res = s.settle(item.id, "claim", "Ann", [A, C])
        assert [e.type for e in res.written] == ["claim", "correction"]
        s = GameSession(led)
        assert s.state.players[s.state.turn].name == "Ben" and s.open_items() == []
        assert s.claim("Ben", [D, E]).ok                         # Ben's own turn
        s = GameSession(led)
        # as the same moves played by hand: a suit pair each (100, Mindful
        # 2.5), then the stalemate's end lines (2.7: two unspent Zen Focus
        # tokens +1000, two tiles left -100)
        assert [(p.name, [x for _, _, x in p.lines]) for p in s.state.players] == \
            [("Ann", [100, 1000, -100]), ("Ben", [100, 1000, -100])]
        assert set(s.state.status.values()) == {"ok", "corrected"}       # nothing rejected


def test_an_unsure_pair_item_leaves_the_turn_where_a_match_keeps_it(tmp_path):
    with Ledger(tmp_path / "l.db") as led:
        start_mini(led, variant="love", mode="sprint")
        led.append("g1", "needs-referee", {"reason": "faces not sure", "player": "Ann", "slots": [A, C],
                                           "off_table": [A, C], "pair_move": True}, None, 1.0)
        assert GameSession(led).state.players[GameSession(led).state.turn].name == "Ann"
    with Ledger(tmp_path / "m.db") as led:           # no pair_move: the turn stays, as before
        start_mini(led, variant="mindful", mode="harmony-duels", faces=MINDFUL_MINI)
        led.append("g1", "needs-referee", {"reason": "3 tiles", "slots": [A, C, D],
                                           "off_table": [A, C, D]}, None, 1.0)
        s = GameSession(led)
        assert s.state.players[s.state.turn].name == "Ann"
        led.append("g1", "needs-referee", {"reason": "x", "slots": [E], "pair_move": "yes"}, None, 2.0)
        s = GameSession(led)
        bad = [i for i in s.open_items() if i["rejected"]]
        assert len(bad) == 1 and "pair_move must be true or false, not 'yes'" in bad[0]["reason"]
        assert s.state.players[s.state.turn].name == "Ann"


def _present(state) -> list[list[int]]:
    return [list(state.slot(i)) for i in range(len(state.layout)) if state.board.present[i]]


def test_tiles_put_back_after_their_item_stand_again_from_then_on(led):
    # B2 and A left the table (a refused pair kept, docs/RULES.md 1.5): B is
    # free meanwhile, and Ann's touch of it is no penalty.  The camera then
    # sees them put back (tiles_back): from there on they stand, B is
    # blocked again, the touch before keeps the board it was judged on (a
    # void of the item would put them back from its start and make it a
    # penalty) and the item needs nothing more
    item = led.append("g1", "needs-referee", {"reason": "kept", "slots": [B2, A], "off_table": [B2, A]}, None, 1.0)
    assert [e.type for e in GameSession(led).touch("Ann", B).written] == ["touch"]
    half = led.append("g1", "tiles_back", {"slots": [A], "item": item.id}, None, 2.0)
    s = GameSession(led)
    assert _present(s.state) == [A, B, C, D, E] and s.state.off_table_pending()
    assert [i["id"] for i in s.open_items()] == [item.id]
    assert s.state.entries[half.id].text == f"0,0,0 put back on the table: on the board again (item #{item.id})"
    led.append("g1", "tiles_back", {"slots": [B2], "item": item.id}, None, 3.0)
    s = GameSession(led)
    assert _present(s.state) == [A, B, C, B2, D, E] and not s.state.off_table_pending()
    assert s.open_items() == [] and not s.state.board.reason(1).free
    assert s.state.scores() == {"Ann": 10_000, "Ben": 10_000}
    assert [e.type for e in led.events("g1")].count("penalty") == 0
    # a tile the item never held, or one back already, is refused: listed for the referee
    bad = led.append("g1", "tiles_back", {"slots": [B2], "item": item.id}, None, 4.0)
    items = GameSession(led).open_items()
    assert [(i["id"], i["rejected"]) for i in items] == [(bad.id, True)]
    assert "holds no tiles off the table" in items[0]["reason"]


def test_a_tile_not_off_with_the_item_is_not_put_back(led):
    item = led.append("g1", "needs-referee", {"reason": "kept", "slots": [B2, A], "off_table": [B2, A]}, None, 1.0)
    bad = led.append("g1", "tiles_back", {"slots": [A, D], "item": item.id}, None, 2.0)
    s = GameSession(led)
    assert _present(s.state) == [B, C, D, E]
    rejected = [i for i in s.open_items() if i["rejected"]]
    assert [i["id"] for i in rejected] == [bad.id]
    assert "8,0,0 is not a tile of item" in rejected[0]["reason"]


def test_settling_an_item_as_the_penalty_its_lift_already_cost_is_refused(led):
    # the camera charged B when it left (B2 over it), then wrote the item
    # when B and D stayed off the table: a settle as a penalty for B would
    # charge the one touch twice (a break-test, session 48)
    led.append("g1", "penalty", {"player": "Ann", "slot": B}, None, 1.0)
    item = led.append("g1", "needs-referee", {"reason": "kept", "slots": [B, D], "off_table": [B, D]}, None, 2.0)
    s = GameSession(led)
    assert s.state.scores() == {"Ann": 9_900, "Ben": 10_000}
    with pytest.raises(IllegalMove, match=r"2,0,0's lift is charged already: penalty #2"):
        s.settle(item.id, "penalty", "Ann", [B])
    assert GameSession(led).settle(item.id, "none").ok
    assert GameSession(led).state.scores() == {"Ann": 9_900, "Ben": 10_000}


def test_a_claim_settling_an_item_names_one_of_its_tiles(led):
    item = led.append("g1", "needs-referee", {"reason": "kept", "slots": [B2], "off_table": [B2]}, None, 1.0)
    with pytest.raises(BadInput, match=r"a claim settling item #2 names one of its tiles \(2,0,1\)"):
        GameSession(led).settle(item.id, "claim", "Ann", [D, E])
    assert len(led.events("g1")) == 2
