"""``companion game ...``: a referee runs whole games from the terminal; bad
commands exit 2 with one line and lose nothing."""

from __future__ import annotations

import csv
import io
import json

import pytest

from companion.cli import main
from companion.ledger import Ledger


def write_deal(path, variant, faces, layout="row"):
    tiles = [{"slot": [4 * i, 0, 0], "face": f} for i, f in enumerate(faces)]
    path.write_text(json.dumps({"variant": variant, "layout": layout, "tiles": tiles}))
    return str(path)


def events(path):
    with Ledger(path) as led:
        return led.events()


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def love(tmp_path, capsys):
    faces = ["hearts-5"] * 2 + ["roses-9"] * 2 + ["season-summer"] * 2 + ["emotion-2", "passion-4"]
    deal = write_deal(tmp_path / "deal.json", "love", faces)
    led = str(tmp_path / "ledger.db")
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                         "--deal", deal, "--players", "Ann,Ben", "--t", 0)
    assert code == 0 and "game-1" in out and "Affinity Sprint" in out, err
    return led


def test_cli_typed_faces_beyond_the_sets_copies_need_over_record(tmp_path, capsys):
    """Love Mahjong 1.2: "4 Emotion & 4 Passion Glass Tiles: Unique
    single-copy bonus tiles".  Typed faces for tiles the ledger has not seen
    were taken whatever the set holds: emotion-1 typed for both tiles of a
    pair, the deal holding the one Emotion Glass 1 elsewhere, was paid +600
    (2.5 "+600 Instant Bonus Points").  Refused in one line, nothing
    written; two different glass tiles are the pair the book means."""
    deal = tmp_path / "deal.json"
    deal.write_text(json.dumps({"variant": "love", "layout": "row", "tiles": [
        {"slot": [0, 0, 0], "face": None}, {"slot": [4, 0, 0], "face": None},
        {"slot": [8, 0, 0], "face": "emotion-1"}, {"slot": [12, 0, 0], "face": "hearts-5"}]}))
    led = str(tmp_path / "ledger.db")
    L = ("--ledger", led)
    code, _, err = run(capsys, "game", "start", *L, "--variant", "love", "--mode", "sprint", "--deal", deal,
                       "--players", "Ann", "--t", 0)
    assert code == 0, err
    for typed, held, n in (("emotion-1,emotion-1", "1 recorded on other tiles", 3),
                           ("passion-2,passion-2", "none recorded on other tiles", 2)):
        code, out, err = run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0",
                             "--faces", typed, "--t", 1)
        face = typed.split(",")[0]
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err.startswith(f"companion game: the set holds 1 copy of {face} ({held}), not {n}: "
                              "typed faces are taken for tiles not yet seen")
    assert [e.type for e in events(led)] == ["game_started"]
    code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0",
                       "--faces", "emotion-2,passion-2", "--t", 1)
    assert code == 0 and "+600 instant bonus pair" in out


def _love_hand_builder(tmp_path, capsys, faces) -> tuple[str, tuple]:
    """A Love Hand Builder game of Ann and Ben on a row dealt ``faces``
    (one tile every 4 half-units): the ledger's path and its ``--ledger``
    arguments."""
    deal = write_deal(tmp_path / "deal.json", "love", faces)
    led = str(tmp_path / "ledger.db")
    L = ("--ledger", led)
    assert run(capsys, "game", "start", *L, "--variant", "love", "--mode", "hand-builder", "--deal", deal,
               "--players", "Ann,Ben", "--t", 0)[0] == 0
    return led, L


def test_cli_over_the_record_still_holds_no_more_copies_than_the_set(tmp_path, capsys):
    """Over the record (--over-record) the table's faces win over the deal's
    record, but no table shows two of Love's "Unique single-copy bonus
    tiles" (Love 1.2): a break-test (session 55) typed emotion-1 twice over
    the record, and corrected a claim to it, and was paid +600.  Refused in
    one line, nothing written; a face that differs from the record but
    exists on the table is still taken."""
    led, L = _love_hand_builder(tmp_path, capsys, ["hearts-2", "hearts-2", "roses-3", "roses-3"])
    code, out, err = run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0",
                         "--faces", "emotion-1,emotion-1", "--over-record", "--t", 1)
    assert code == 2 and out == ""
    assert err == ("companion game: the set holds 1 copy of emotion-1, not 2: no table shows that, over the "
                   "record or not\n")
    assert [e.type for e in events(led)] == ["game_started"]
    # over the record, faces the set holds: taken (4 copies of hearts-5)
    code, out, err = run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0",
                         "--faces", "hearts-5,hearts-5", "--over-record", "--t", 1)
    assert code == 0 and "+100 simple pair" in out, err
    assert events(led)[-1].data["faces"] == ["hearts-5", "hearts-5"]
    code, out, err = run(capsys, "game", "correct", "2", *L, "--set", 'faces=["emotion-1","emotion-1"]', "--t", 2)
    assert code == 2 and err == "companion game: the set holds 1 copy of emotion-1, not 2: no table shows that\n"
    assert [e.type for e in events(led)] == ["game_started", "claim"]


def test_cli_a_correction_of_tiles_or_null_faces_counts_the_faces_the_move_ends_with(tmp_path, capsys):
    # the copy check looked only at faces typed: a claim corrected to
    # emotion-2 + emotion-1, then its second tile to the deal's one Emotion
    # Glass 2 (its face taken from the record), or a face given as null (the
    # recorded one), made a pair of a single-copy face, +600 (a break-test,
    # session 55)
    led, L = _love_hand_builder(tmp_path, capsys, ["hearts-2", "hearts-2", "emotion-2", "hearts-3", "hearts-3",
                                                   "emotion-1"])
    assert run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)[0] == 0
    code, _, err = run(capsys, "game", "correct", "2", *L, "--set", 'faces=["emotion-2","emotion-1"]', "--t", 2)
    assert code == 0, err
    n = len(events(led))
    code, _, err = run(capsys, "game", "correct", "2", *L, "--set", "slots=[[0,0,0],[8,0,0]]", "--t", 3)
    assert code == 2 and err.endswith("the set holds 1 copy of emotion-2, not 2: no table shows that\n")
    code, _, err = run(capsys, "game", "correct", "2", *L, "--set", 'faces=[null,"emotion-2"]', "--t", 3)
    assert code == 2 and err.endswith("the set holds 1 copy of emotion-2, not 2: no table shows that\n")
    assert len(events(led)) == n
    # null is the face the ledger records for that tile by now (4,0,0:
    # emotion-1, since the first correction): emotion-1 given for the other
    # tile is a second copy, while hearts-2 is not
    code, _, err = run(capsys, "game", "correct", "2", *L, "--set", 'faces=["emotion-1",null]', "--t", 3)
    assert code == 2 and err.endswith("the set holds 1 copy of emotion-1, not 2: no table shows that\n")
    code, _, err = run(capsys, "game", "correct", "2", *L, "--set", 'faces=["hearts-2",null]', "--t", 3)
    assert code == 0, err
    assert events(led)[-1].data["changes"]["faces"] == ["hearts-2", None]


def test_cli_ledger_shows_an_older_reason_on_one_line(love, capsys):
    # a reason an older ledger kept with a newline forged a line of `ledger`
    assert run(capsys, "game", "claim", "--ledger", love, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)[0] == 0
    with Ledger(love) as led:
        led.append(led.latest_game_id(), "correction", {"void": True, "reason": "x\n#99 claim: forged\ud800"},
                   2, 3.0)
    code, out, err = run(capsys, "game", "ledger", "--ledger", love)
    assert code == 0, err
    last = out.splitlines()[-1]
    assert last.startswith("#3 correction") and last.endswith("(x\\n#99 claim: forged\\ud800)"), last
    assert not any(line.startswith("#99") for line in out.splitlines())


def test_cli_a_reason_is_one_line_of_plain_text(love, capsys, tmp_path):
    """A correction's or void's --reason is kept for good in the append-only
    ledger and printed by `ledger` and `export`: a newline forged a ledger
    line, and bytes that are not UTF-8 made every CSV export fail (a
    break-test, session 55).  Refused in one line, nothing written."""
    L = ("--ledger", love)
    assert run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)[0] == 0
    before = len(events(love))
    for reason, msg in [("x\n#99 claim: Bo claimed everything: +9,999", "a control character (U+000A)"),
                        ("\x1b[31mred", "a control character (U+001B)"),
                        ("\u202elive", "RIGHT-TO-LEFT OVERRIDE (U+202E)"),
                        ("\udcff", "bytes that are not UTF-8 text"),
                        ("x" * 301, "301 characters long: at most 300")]:
        for action in ("void", "correct"):
            extra = ("--set", "player=Ben") if action == "correct" else ()
            code, out, err = run(capsys, "game", action, "2", *L, *extra, "--reason", reason, "--t", 2)
            assert code == 2 and out == "" and err.count("\n") == 1 and msg in err, (action, reason, err)
    assert len(events(love)) == before
    code, out, _ = run(capsys, "game", "void", "2", *L, "--reason", "  Zoë saw it put back  ", "--t", 2)
    assert code == 0 and events(love)[-1].data["reason"] == "Zoë saw it put back"


def test_cli_export_of_a_reason_written_before_the_check_is_utf8(love, capsys, tmp_path):
    # a ledger written before session 55 may hold such a reason: the export
    # shows its bytes as \xNN, in text every strict reader takes
    assert run(capsys, "game", "claim", "--ledger", love, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)[0] == 0
    with Ledger(love) as led:
        gid = led.latest_game_id()
        led.append(gid, "correction", {"void": True, "reason": "bad\udcffbyte"}, 2, 3.0)
    out_csv = tmp_path / "x.csv"
    code, _, err = run(capsys, "game", "export", "--ledger", love, "--format", "csv", "--out", out_csv)
    assert code == 0, err
    assert "bad\\xffbyte" in out_csv.read_bytes().decode("utf-8")
    code, out, _ = run(capsys, "game", "export", "--ledger", love, "--format", "json")
    assert code == 0 and json.loads(out)["events"][-1]["data"]["reason"] == "bad\\xffbyte"


def test_cli_a_game_id_that_is_not_utf8_is_no_game(love, capsys):
    # the bytes of a command line that are not UTF-8 (Python's surrogates)
    # were a traceback on every command but start (a break-test, session 55)
    for action in ("show", "ledger", "pass"):
        extra = ("--player", "Ann") if action == "pass" else ()
        code, out, err = run(capsys, "game", action, "--ledger", love, "--game", "\udcff", *extra)
        assert code == 2 and out == "" and err == f"companion game: {love}: no game '\\xff' in the ledger\n"


@pytest.mark.parametrize("faces", [",", "", "hearts-5,", " , hearts-5"])
def test_cli_faces_with_an_empty_item_are_refused(love, capsys, faces):
    # `--faces ,` was taken as no faces given (a break-test, session 55)
    code, out, err = run(capsys, "game", "claim", "--ledger", love, "--player", "Ann", "0,0,0", "4,0,0",
                         "--faces", faces, "--t", 1)
    assert code == 2 and out == ""
    assert err == f"companion game: bad --faces {faces!r}: give face ids separated by commas, e.g. --faces " \
                  "hearts-1,hearts-1\n"
    assert [e.type for e in events(love)] == ["game_started"]


def test_cli_limits_are_word_mahjong_s_only(tmp_path, capsys):
    # Word 2.5's tools (hints, reshuffles, undos); a Mindful duel started
    # with limits={"hints": 0} kept them and gave hints all the same
    led = str(tmp_path / "m.db")
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "mindful", "--mode",
                         "harmony-duels", "--players", "Ada,Bo", "--layout", "turtle", "--seed", 1, "--t", 0,
                         "--option", 'limits={"hints":0}')
    assert code == 2 and err == ("companion game: option limits does not apply to Mindful Mahjong: Harmony "
                                 "Duels (Word Mahjong only)\n")
    assert not (tmp_path / "m.db").exists()


def test_cli_plays_a_love_sprint_to_the_end(love, capsys):
    L = ("--ledger", love)
    code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)
    assert code == 0 and "+100 simple pair" in out and "turn: Ann" in out
    code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ann", "16,0,0", "20,0,0", "--t", 2)
    assert code == 0 and "Summer Sun + Summer Sun: +300 season pair, +200 chained extra turn" in out
    code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ann", "8,0,0", "16,0,0", "--t", 3)
    assert code == 2 and "holds no tile" in _
    code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ann", "8,0,0", "24,0,0", "--t", 3)
    assert code == 0 and "invalid attempt" in out and "turn: Ben" in out
    code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ben", "8,0,0", "12,0,0", "--t", 4)
    code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ben", "24,0,0", "28,0,0", "--t", 5)
    assert code == 0 and "+600 instant bonus pair, +200 chained extra turn" in out
    assert "game over (cleared), winner: Ben" in out
    code, out, _ = run(capsys, "game", "show", *L, "--json")
    st = json.loads(out)
    assert {p["name"]: p["score"] for p in st["players"]} == {"Ann": 10_600, "Ben": 11_000}
    assert st["ended"] and st["winner"] == "Ben"
    code, out, _ = run(capsys, "game", "ledger", *L)
    assert code == 0 and out.splitlines()[-1].startswith("#7 game_ended t=5")


def test_cli_typed_faces_unlike_the_deal_need_over_record(love, capsys):
    # 0,0,0 (hearts-5) and 8,0,0 (roses-9) do not match; typed as a season
    # pair they would score +300.  Refused in one line, nothing written;
    # --over-record lays them over the deal (docs/RULES.md 1.4)
    L = ("--ledger", love)
    code, out, err = run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "8,0,0",
                         "--faces", "season-spring,season-spring", "--t", 1)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("companion game: 0,0,0 is recorded as hearts-5, not season-spring; "
                          "8,0,0 is recorded as roses-9, not season-spring: typed faces are taken for tiles")
    assert [e.type for e in events(love)] == ["game_started"]
    code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "8,0,0",
                       "--faces", "season-spring,season-spring", "--over-record", "--t", 1)
    assert code == 0 and "+300 season pair" in out
    assert events(love)[-1].data["faces"] == ["season-spring", "season-spring"]


def test_cli_bad_commands(love, capsys, tmp_path):
    from companion.ledger import Ledger
    L = ("--ledger", love)
    before = len(events(love))
    empty_ledger = str(tmp_path / "empty.db")
    Ledger(empty_ledger).close()
    for argv, msg in [
        (("claim", *L, "--player", "Zed", "0,0,0", "4,0,0"), "unknown player 'Zed'"),
        (("claim", *L, "--player", "Ben", "0,0,0", "4,0,0"), "it is Ann's turn, not Ben's"),
        (("claim", *L, "--player", "Ann", "0,0", "4,0,0"), "bad slot '0,0'"),
        (("claim", *L, "--player", "Ann", "0,0,0", "5,0,0"), "not in layout"),
        (("claim", *L, "--player", "Ann", "0,0,0", "0,0,0"), "named twice"),
        (("steal", *L, "--player", "Ben"), "Hand Builder only, not Affinity Sprint"),
        (("declare", *L, "--player", "Ann"), "Hand Builder only"),
        (("hint", *L, "--player", "Ann"), "has no hints"),
        (("undo", *L), "nothing to undo"),
        (("correct", *L, "99", "--player", "Ann"), "no event #99"),
        (("void", *L, "1"), "cannot be voided"),
        (("word", *L, "--player", "Ann", "--word", "cat", "0,0,0", "4,0,0", "8,0,0"), "Word Mahjong only"),
        (("show", "--ledger", love, "--game", "nope"), "no game 'nope'"),
        (("show", "--ledger", empty_ledger), "holds no game"),
        (("show", "--ledger", str(tmp_path / "typo.db")), "no ledger at"),
        (("games", "--ledger", str(tmp_path / "typo.db")), "no ledger at"),
    ]:
        code, out, err = run(capsys, "game", *argv)
        assert code == 2, argv
        assert msg in err and len(err.strip().splitlines()) == 1, (argv, err)
        assert "Traceback" not in err
    assert len(events(love)) == before
    assert not (tmp_path / "typo.db").exists()          # a mistyped path leaves no new ledger behind
    with pytest.raises(SystemExit) as exc:
        main(["game", "claim", "--ledger", love])
    assert exc.value.code == 2


def test_cli_blocked_claim_records_penalty(tmp_path, capsys):
    deal = tmp_path / "stack.json"
    deal.write_text(json.dumps({"variant": "love", "layout": "stack", "tiles": [
        {"slot": [0, 0, 0], "face": "hearts-1"}, {"slot": [0, 0, 1], "face": "hearts-2"},
        {"slot": [4, 0, 0], "face": "hearts-1"}, {"slot": [8, 0, 0], "face": "hearts-2"}]}))
    led = str(tmp_path / "l.db")
    assert run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "solo-quest",
               "--deal", deal, "--players", "Ann", "--t", 0)[0] == 0
    code, out, err = run(capsys, "game", "claim", "--ledger", led, "--player", "Ann", "0,0,0", "4,0,0")
    assert code == 2 and "0,0,0 is blocked: covered by 0,0,1" in err and "recorded as event #2" in err
    code, out, err = run(capsys, "game", "touch", "--ledger", led, "--player", "Ann", "0,0,0")
    assert code == 2 and "#3" in err
    code, out, _ = run(capsys, "game", "show", "--ledger", led, "--json")
    st = json.loads(out)
    assert st["players"][0]["score"] == 9_800 and st["players"][0]["penalties"] == 2
    assert st["options"]["turn_limit"] == 3
    # the referee voids one penalty: the score comes back, the event stays
    code, out, _ = run(capsys, "game", "void", "--ledger", led, "3", "--reason", "put back at once")
    assert code == 0
    code, out, _ = run(capsys, "game", "show", "--ledger", led, "--json")
    assert json.loads(out)["players"][0]["score"] == 9_900
    assert [e.type for e in events(led)] == ["game_started", "penalty", "penalty", "correction"]


def test_cli_corrections_undo_and_exports(love, capsys, tmp_path):
    L = ("--ledger", love)
    run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "8,0,0", "--t", 1)     # invalid
    run(capsys, "game", "claim", *L, "--player", "Ben", "0,0,0", "4,0,0", "--t", 2)     # +100
    code, out, err = run(capsys, "game", "correct", *L, "2", "--type", "claim", "--slots", "8,0,0", "12,0,0",
                         "--faces", "roses-9,roses-9", "--reason", "the camera misread the slots")
    assert code == 0 and ("referee corrected event #2: faces 9 Regal Rose and 9 Regal Rose; tiles 8,0,0 and 12,0,0; "
                          "type claim (the camera misread the slots)") in out
    # Ben's claim, judged on the old board, stops counting: said, not left to be found
    assert err == ("companion game: warning: #3 claim no longer counts (it is Ann's turn, not Ben's)\n")
    code, out, _ = run(capsys, "game", "show", *L, "--json")
    st = json.loads(out)
    # the first attempt is now a valid roses-9 claim by Ann (+200), Ann keeps the turn,
    # so Ben's claim no longer fits: kept, rejected and listed for the referee
    assert {p["name"]: p["score"] for p in st["players"]} == {"Ann": 10_200, "Ben": 10_000}
    assert [n["id"] for n in st["needs_referee"]] == [3]
    code, out, err = run(capsys, "game", "void", *L, "3", "--reason", "did not happen")
    assert code == 0 and err == ""                       # nothing else changes
    code, out, _ = run(capsys, "game", "undo", *L, "--t", 5)
    assert code == 0 and "event #2" in out
    out_csv = tmp_path / "g.csv"
    assert run(capsys, "game", "export", *L, "--format", "csv", "--out", out_csv)[0] == 0
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert [(r["id"], r["type"], r["status"]) for r in rows] == [
        ("1", "game_started", "ok"), ("2", "invalid", "voided"), ("3", "claim", "voided"),
        ("4", "correction", "ok"), ("5", "correction", "ok"), ("6", "undo", "ok")]
    assert json.loads(rows[1]["data"])["slots"] == [[0, 0, 0], [8, 0, 0]]     # original kept
    code, out, _ = run(capsys, "game", "export", *L, "--format", "json")
    doc = json.loads(out)
    assert doc["game_id"] == "game-1" and len(doc["events"]) == 6
    assert {p["name"]: p["score"] for p in doc["state"]["players"]} == {"Ann": 10_000, "Ben": 10_000}
    # the export's form is --format: a --json beside it was taken and ignored
    # (a newcomer asked for JSON and got the CSV)
    with pytest.raises(SystemExit) as exc:
        main(["game", "export", *L, "--format", "csv", "--json"])
    assert exc.value.code == 2 and "unrecognized arguments: --json" in capsys.readouterr().err
    code, out, _ = run(capsys, "game", "games", *L)
    assert "game-1: love sprint on row" in out


def test_a_corrected_undo_is_one_the_player_named_may_ask_for(love, capsys, tmp_path):
    # the referee's undo of Ann's claim corrected to Ben's made "Ben undid
    # event #2" count, where `game undo --player Ben` is refused: a player
    # takes back only their own move, never a penalty (docs/RULES.md 1.4)
    L = ("--ledger", love)
    assert run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)[0] == 0
    assert run(capsys, "game", "undo", *L, "--t", 2)[0] == 0                             # event #3
    code, out, err = run(capsys, "game", "correct", *L, "3", "--player", "ben")
    assert (code, out) == (2, "")
    assert err == ("companion game: Ben cannot have taken back Ann's move (#2 claim): a player takes back only "
                   "their own; the referee's undo has no player\n")
    code, out, err = run(capsys, "game", "correct", *L, "3", "--player", "Ann", "--reason", "Ann asked")
    assert code == 0 and "referee corrected event #3" in out
    assert [e.type for e in events(love)][-1] == "correction"
    # an invalid attempt: it ended the turn, so not its player's to take back
    assert run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "8,0,0", "--t", 3)[0] == 0       # #5
    assert [e.type for e in events(love)][-1] == "invalid"
    assert run(capsys, "game", "undo", *L, "--t", 4)[0] == 0                                             # #6
    code, out, err = run(capsys, "game", "correct", *L, "6", "--player", "Ann")
    assert (code, err) == (2, "companion game: Ann cannot have taken back their own invalid attempt (#5): only the "
                              "referee can; the referee's undo has no player\n")
    # a penalty: not even its own player's to take back
    deal = tmp_path / "stack.json"
    deal.write_text(json.dumps({"variant": "love", "layout": "stack", "tiles": [
        {"slot": [0, 0, 0], "face": "hearts-5"}, {"slot": [0, 0, 1], "face": "hearts-5"},
        {"slot": [4, 0, 0], "face": "roses-9"}, {"slot": [8, 0, 0], "face": "roses-9"}]}))
    S = ("--ledger", str(tmp_path / "stack.db"))
    assert run(capsys, "game", "start", *S, "--variant", "love", "--mode", "sprint", "--deal", deal,
               "--players", "Ann,Ben", "--t", 0)[0] == 0
    assert run(capsys, "game", "touch", *S, "--player", "Ann", "0,0,0")[0] == 2           # #2 penalty
    assert run(capsys, "game", "undo", *S)[0] == 0                                        # #3
    code, out, err = run(capsys, "game", "correct", *S, "3", "--player", "Ann")
    assert (code, out) == (2, "")
    assert err == ("companion game: Ann cannot have taken back their own penalty (#2): only the referee can; the "
                   "referee's undo has no player\n")


def test_cli_export_never_overwrites_the_ledger(love, capsys, tmp_path):
    # --out naming the ledger itself (or a link to it) is refused before
    # anything is written: the append-only ledger stays a working ledger
    from pathlib import Path
    before = Path(love).read_bytes()
    link = tmp_path / "same.sqlite"
    link.symlink_to(love)
    # nor SQLite's files beside it, which need not exist yet (SQLite would
    # delete or map them: a lost export, or a crash), nor an empty name
    for out in (love, link, love + "-wal", love + "-shm", love + "-journal"):
        code, _, err = run(capsys, "game", "export", "--ledger", love, "--format", "csv", "--out", out)
        assert code == 2 and "would overwrite" in err and "the ledger's own file" in err
        assert len(err.strip().splitlines()) == 1
    code, out, err = run(capsys, "game", "export", "--ledger", love, "--format", "csv", "--out", "")
    assert code == 2 and out == "" and "--out needs a file name" in err
    code, _, err = run(capsys, "game", "export", "--ledger", love, "--format", "csv", "--out", tmp_path)
    assert code == 2 and "it is a folder" in err
    assert Path(love).read_bytes() == before
    code, out, _ = run(capsys, "game", "show", "--ledger", love, "--json")
    assert code == 0 and json.loads(out)["players"]


def test_cli_word_game_with_the_real_dictionary(tmp_path, capsys):
    pytest.importorskip("english_words")
    faces = list("TREE") + list("QUIZ") + ["wild", "wild"]
    deal = write_deal(tmp_path / "w.json", "word", faces, "words")
    led = str(tmp_path / "w.db")
    L = ("--ledger", led)
    code, out, err = run(capsys, "game", "start", *L, "--variant", "word", "--mode", "scholars-path", "--deal", deal,
                         "--players", "Sam", "--t", 100, "--level", 4)
    # 2.8 "unlocking the next layout on the map": played, with a note
    assert code == 0 and err == ("companion game: note: level 4 is not unlocked yet in this ledger: Sam's next "
                                 "level is 1 (played all the same)\n")
    code, out, err = run(capsys, "game", "word", *L, "--player", "Sam", "--word", "ETRE",
                         "8,0,0", "0,0,0", "4,0,0", "12,0,0", "--t", 110)
    assert code == 2 and "ETRE is not in the dictionary" in err
    code, out, err = run(capsys, "game", "word", *L, "--player", "Sam", "--word", "tree",
                         "0,0,0", "4,0,0", "8,0,0", "12,0,0", "--t", 110)
    assert code == 0 and "Sam spelled TREE: +200 word TREE" in out, err
    code, out, err = run(capsys, "game", "word", *L, "--player", "Sam", "--word", "quiz",
                         "16,0,0", "20,0,0", "24,0,0", "28,0,0", "--t", 120)
    assert code == 0
    code, out, err = run(capsys, "game", "claim", *L, "--player", "Sam", "32,0,0", "36,0,0", "--t", 130)
    assert code == 0 and "game over (cleared), winner: Sam, 2 quills" in out
    code, out, _ = run(capsys, "game", "show", *L, "--json")
    st = json.loads(out)
    # base ceil(10/8) = 2 -> 2,000; 2 words -> 400; 30 s -> -300; no Pure
    # Scholar Bonus on a 10-tile layout (RULES.md 4.3)
    assert st["players"][0]["score"] == 2000 + 400 - 300
    code, out, _ = run(capsys, "game", "campaign", *L, "--player", "Sam", "--json")
    assert json.loads(out)["next_level"] == 5
    for level, note in ((5, ""), (7, "companion game: note: level 7 is not unlocked yet in this ledger: sam's next "
                                     "level is 5 (played all the same)\n")):
        code, out, err = run(capsys, "game", "start", *L, "--variant", "word", "--mode", "scholars-path",
                             "--deal", deal, "--players", "sam", "--t", 200, "--level", level)
        assert code == 0 and err == note


def test_cli_start_from_a_builtin_layout(tmp_path, capsys):
    pytest.importorskip("companion.deals", reason="deals module not in this tree yet")
    pytest.importorskip("companion.layout_files", reason="layout_files module not in this tree yet")
    led = str(tmp_path / "b.db")
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "mindful", "--mode",
                         "harmony-duels", "--layout", "turtle", "--seed", 5, "--players", "Ann,Ben",
                         "--difficulty", "easy", "--t", 0, "--json")
    assert code == 0, err
    st = json.loads(out)
    assert st["tiles_left"] == 144 and st["options"]["reshuffles"] == 3 and st["free_pairs_left"] > 0
    code, out, err = run(capsys, "game", "hint", "--ledger", led, "--player", "Ann", "--t", 1)
    assert code == 0 and "match" in out
    # (without --seed one is picked and said: test_a_game_started_without_a_seed_is_dealt_with_one_picked_and_said)
    # a Sprint on the 5-layer turtle is played, with a note (docs/RULES.md 2.6)
    code, out, err = run(capsys, "game", "start", "--ledger", str(tmp_path / "s.db"), "--variant", "love",
                         "--mode", "sprint", "--layout", "turtle", "--seed", 1, "--players", "Ann")
    assert code == 0 and "flat or 2-layer layout (2.6.2); 'turtle' has 5 layers (played all the same)" in err
    code, out, err = run(capsys, "game", "start", "--ledger", str(tmp_path / "f.db"), "--variant", "love",
                         "--mode", "sprint", "--layout", "sprint-2layer", "--seed", 1, "--players", "Ann")
    assert code == 0 and err == ""
    # a Solo Quest on a flat layout, the same (2.6.3 "complex 3D romantic layouts")
    code, out, err = run(capsys, "game", "start", "--ledger", str(tmp_path / "q.db"), "--variant", "love",
                         "--mode", "solo-quest", "--layout", "sprint-flat", "--seed", 1, "--players", "Ann")
    assert code == 0 and err == ("companion game: note: Sanctuary Solo Quest in the Love Mahjong book clears "
                                 "\"complex 3D\" layouts (2.6.3); 'sprint-flat' is flat (played all the same)\n")


def test_cli_hand_builder_meld_and_declare(tmp_path, capsys):
    faces = (["hearts-1"] * 2 + ["hearts-2"] * 2 + ["hearts-3"] * 2 + ["roses-4"] * 2 + ["roses-5"] * 2
             + ["roses-6"] * 2 + ["letters-9"] * 2 + ["cupid-bow"] * 2)
    deal = write_deal(tmp_path / "h.json", "love", faces)
    led = str(tmp_path / "h.db")
    L = ("--ledger", led)
    assert run(capsys, "game", "start", *L, "--variant", "love", "--mode", "hand-builder", "--deal", deal,
               "--players", "Ann,Ben", "--t", 0)[0] == 0
    for k in range(7):
        code, out, err = run(capsys, "game", "claim", *L, "--player", "Ann", f"{8 * k},0,0", f"{8 * k + 4},0,0",
                             "--t", k + 1)
        assert code == 0, err
    code, out, err = run(capsys, "game", "meld", *L, "--player", "Ann", "--kind", "chow",
                         "--faces", "roses-4,roses-5,roses-6")
    assert code == 0 and "+300 completed chow" in out, err
    code, out, err = run(capsys, "game", "declare", *L, "--player", "Ben")
    assert code == 2 and "Ann's turn" in err
    code, out, err = run(capsys, "game", "declare", *L, "--player", "Ann", "--t", 9)
    assert code == 0 and '"Love Mahjong!"' in out and "winner: Ann" in out, err
    code, out, _ = run(capsys, "game", "show", *L, "--json")
    st = json.loads(out)
    pairs = 200 + 300 + 300 + 300 + 300 + 300 + 400
    assert {p["name"]: p["score"] for p in st["players"]} == {
        "Ann": 10_000 + pairs + 4 * 300 + 5_000 + 1_400, "Ben": 10_000 - 1_400}
    assert st["result"]["hand"]["payment"] == 1_400


def test_cli_unreadable_deal_files_are_named_in_plain_words(tmp_path, capsys):
    led = str(tmp_path / "l.db")
    start = ["game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint", "--players", "Ann"]
    code, _, err = run(capsys, *start, "--deal", tmp_path / "missing.json")
    assert code == 2 and err.strip() == f"companion game: deal file {tmp_path / 'missing.json'} not found"
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"variant": "love", "layout": "caf\xe9", "tiles": []}')
    code, _, err = run(capsys, *start, "--deal", latin)
    assert code == 2 and "not UTF-8 text" in err and "UnicodeDecodeError" not in err
    assert len(err.strip().splitlines()) == 1


def test_cli_ledger_prints_times_readably(tmp_path, capsys):
    from datetime import datetime

    from companion.commands.game import event_time
    faces = ["hearts-5"] * 2 + ["roses-9"] * 2 + ["season-summer"] * 2 + ["emotion-2", "passion-4"]
    deal = write_deal(tmp_path / "deal.json", "love", faces)
    led = str(tmp_path / "l.db")
    wall = 1_796_092_800.25                       # a wall-clock time, as the shell reads by default
    code, _, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                       "--deal", deal, "--players", "Ann,Ben", "--t", wall)
    assert code == 0, err
    code, _, _ = run(capsys, "game", "claim", "--ledger", led, "--player", "Ann", "0,0,0", "4,0,0", "--t", 4.2)
    code, out, _ = run(capsys, "game", "ledger", "--ledger", led)
    first, second = out.splitlines()[:2]
    iso = datetime.fromtimestamp(wall).astimezone().isoformat(timespec="seconds")
    assert first.startswith(f"#1 game_started t={iso}: ") and "e+09" not in out
    assert second.startswith("#2 claim t=4.20s: ")
    assert event_time(0) == "0.00s" and event_time(12.345) == "12.35s"


def test_event_times_and_ledger_paths_are_checked(love, tmp_path, capsys):
    led = love
    for bad in ("-5", "1e300", "nan", "inf", "soon"):
        with pytest.raises(SystemExit) as e:
            main(["game", "pass", "--ledger", led, "--player", "Ann", f"--t={bad}"])
        assert e.value.code == 2 and "--t" in capsys.readouterr().err
    assert run(capsys, "game", "pass", "--ledger", led, "--player", "Ann", "--t", 12.5)[0] == 0
    (tmp_path / "adir").mkdir()
    code, _, err = run(capsys, "game", "show", "--ledger", tmp_path / "adir")
    assert code == 2 and "is a folder, not a ledger file" in err and len(err.strip().splitlines()) == 1
    deal = write_deal(tmp_path / "d.json", "love", ["hearts-5"] * 2)
    # a new ledger's missing folder is made, as for every output file
    code, _, err = run(capsys, "game", "start", "--ledger", tmp_path / "new" / "x.db", "--variant", "love",
                       "--mode", "sprint", "--deal", deal, "--players", "Ann")
    assert code == 0 and (tmp_path / "new" / "x.db").is_file(), err
    (tmp_path / "afile").write_text("")
    code, _, err = run(capsys, "game", "start", "--ledger", tmp_path / "afile" / "x.db", "--variant", "love",
                       "--mode", "sprint", "--deal", deal, "--players", "Ann")
    assert code == 2 and "is a file, not a folder" in err


def test_a_failed_action_leaves_a_file_that_is_no_ledger_as_it_was(tmp_path, capsys):
    # an empty file, a text file or another program's SQLite database named
    # by --ledger is refused with one line and not touched: SQLite would
    # otherwise write a new database over the empty file (or switch the
    # other database to WAL mode) before the command found no game there
    import sqlite3
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    text = tmp_path / "notes.txt"
    text.write_text("hello, I am not a database\n")
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE scores (name, points)")
    conn.commit()
    conn.close()
    files = {p: p.read_bytes() for p in (empty, text, other)}
    for path, why in ((empty, "it is an empty file, not a ledger"), (text, "not an SQLite database"),
                      (other, "holds tables scores, but no events")):
        for argv in (("claim", "--player", "Ada", "5,0,0", "27,0,0"), ("pass", "--player", "Ada"), ("show",),
                     ("games",), ("ledger",), ("campaign", "--player", "Ada"),
                     ("export", "--format", "csv", "--out", str(tmp_path / "out.csv"))):
            code, out, err = run(capsys, "game", argv[0], "--ledger", path, *argv[1:])
            assert code == 2 and out == "", (path, argv)
            assert err.startswith("companion game: ") and err.count("\n") == 1 and why in err, (path, argv, err)
    assert {p: p.read_bytes() for p in files} == files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.json", "notes.txt", "other.db"]
    # start, which makes a ledger, still makes one in an empty file (and
    # refuses the others, untouched)
    deal = write_deal(tmp_path / "deal.json", "love", ["hearts-5"] * 2)
    start = ("game", "start", "--variant", "love", "--mode", "sprint", "--deal", deal, "--players", "Ann", "--t", 0)
    for path in (text, other):
        code, _, err = run(capsys, *start, "--ledger", path)
        assert code == 2 and err.count("\n") == 1 and path.read_bytes() == files[path]
    code, out, _ = run(capsys, *start, "--ledger", empty)
    assert code == 0 and "game-1" in out
    assert [e.type for e in events(empty)] == ["game_started"]


def test_cli_export_to_a_pipe_is_refused(love, capsys, tmp_path):
    # a named pipe without a reader blocked the export for ever; the export
    # is now written as every other output file is (companion.files.write_whole:
    # a pipe or a device refused, a temporary file renamed into place)
    import os
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "game", "export", "--ledger", love, "--format", "json", "--out", fifo)
    assert code == 2 and f"cannot write --out {fifo}: it is not a plain file (a pipe or a device)" in err
    old = tmp_path / "x.json"
    old.write_text("OLD\n")
    inode = old.stat().st_ino
    assert run(capsys, "game", "export", "--ledger", love, "--format", "json", "--out", old)[0] == 0
    assert json.loads(old.read_text())["game_id"] == "game-1" and old.stat().st_ino != inode    # (renamed in)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]      # no temporary file left


def test_cli_a_correction_to_a_type_that_is_not_a_name_is_refused(love, capsys):
    # --set type=["claim"] (a JSON list) raised TypeError: unhashable type
    L = ("--ledger", love)
    run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "8,0,0", "--t", 1)
    code, _, err = run(capsys, "game", "correct", *L, "2", "--set", 'type=["claim"]')
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert 'type ["claim"] is not one an invalid can become: claim, invalid, pass, penalty, touch' in err


@pytest.mark.parametrize("change, says", [
    ("foo=1", "a correction cannot change 'foo' on an invalid event: it can change player, slots, faces, "
              "reason (and type)"),
    ("cause=1", "a correction cannot change 'cause'"),
    ("evidence=\"x.png\"", "a correction cannot change 'evidence'"),
    ("slot=[0,0,0]", "a correction cannot change 'slot' on an invalid event"),      # (a penalty's field)
    ("player=null", "'player' cannot be set to nothing (null)"),
    ("type=\"bogus\"", "type 'bogus' is not one an invalid can become"),
    ("type=\"penalty\"", "a penalty needs slot: give it in the same correction (--set slot=...)"),
    ("type=\"invalid\"", "nothing to change: event #2 already has type invalid"),
    ("points=-50", "points follow the rules"),
    ("slots=7", "slots must be a list of [x, y, z] slots, not '7'"),
    ("slots=[[1,2]]", "a slot is [x, y, z] (three whole numbers), not '[1, 2]'"),
    ("slots=[[0,0,0],[0,0,0]]", "slots must name each slot once"),
    ("slots=[[0,0,0],[2,0,0]]", "slot 2,0,0 is not in layout"),
])
def test_cli_a_correction_of_a_field_replay_does_not_read_or_of_slots_off_the_layout_is_refused(
        love, capsys, change, says):
    # session 22's break-test: --set foo=1 and --set slots=7 were recorded as
    # corrections that changed nothing (or made the event unreadable later)
    L = ("--ledger", love)
    run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "8,0,0", "--t", 1)
    before = events(love)
    code, out, err = run(capsys, "game", "correct", *L, "2", "--set", change)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert says in err, err
    assert events(love) == before


def test_cli_a_correction_of_slots_on_the_layout_is_kept(love, capsys):
    L = ("--ledger", love)
    run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "8,0,0", "--t", 1)
    code, out, err = run(capsys, "game", "correct", *L, "2", "--set", "slots=[[0,0,0],[4,0,0]]", "--t", 2)
    assert code == 0, err
    last = events(love)[-1]
    assert last.type == "correction" and last.ref == 2 and last.data["changes"] == {"slots": [[0, 0, 0], [4, 0, 0]]}


def test_cli_a_claims_tile_corrected_takes_the_ledgers_face_not_the_old_tiles(love, capsys):
    # a break-test (session 49): a claim of the pair of Summer tiles, its
    # second tile corrected to a Hearts 5, kept scoring the pair (the face
    # recorded for the old tile went with the new one), with no warning
    L = ("--ledger", love)
    show = lambda: json.loads(run(capsys, "game", "show", *L, "--json")[1])     # noqa: E731
    assert run(capsys, "game", "claim", *L, "--player", "Ann", "16,0,0", "20,0,0", "--t", 1)[0] == 0
    paid = show()["players"][0]["score"]
    assert paid > 10_000
    code, out, err = run(capsys, "game", "correct", *L, "2", "--slots", "16,0,0", "0,0,0", "--t", 2)
    assert code == 0, err
    st = show()
    assert st["players"][0]["score"] == 10_000 and st["tiles_left"] == 8     # an invalid attempt now
    assert st["turn"] == "Ben"
    # the pair named again, in the other order: each tile its own face
    code, out, err = run(capsys, "game", "correct", *L, "2", "--slots", "20,0,0", "16,0,0", "--t", 3)
    assert code == 0, err
    assert show()["players"][0]["score"] == paid


def _two_pairs(tmp_path, capsys, players: str):
    """A Love Sprint game on a row of 4 free tiles (two pairs: hearts-5 at
    0 and 4, roses-9 at 8 and 12): ``(ledger path, ("--ledger", path))``."""
    deal = write_deal(tmp_path / "deal.json", "love", ["hearts-5", "hearts-5", "roses-9", "roses-9"])
    led = str(tmp_path / "two.db")
    assert run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint", "--deal", deal,
               "--players", players, "--t", 0)[0] == 0
    return led, ("--ledger", led)


def test_cli_faces_that_follow_a_corrected_tile_are_worked_out_again_when_a_correction_is_voided(tmp_path, capsys):
    # a re-test (session 49): faces typed by a correction (#3), then a tile
    # changed (#4) took #3's face along; voiding #3 left #4's copy, and a
    # pair that no longer matched kept scoring
    led, L = _two_pairs(tmp_path, capsys, "Ann,Ben")
    show = lambda: json.loads(run(capsys, "game", "show", *L, "--json")[1])     # noqa: E731
    assert run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)[0] == 0   # hearts-5 pair
    assert run(capsys, "game", "correct", *L, "2", "--faces", "roses-9,roses-9", "--t", 2)[0] == 0
    assert run(capsys, "game", "correct", *L, "2", "--slots", "0,0,0", "8,0,0", "--t", 3)[0] == 0
    assert show()["players"][0]["matches"] == 1           # roses-9 (typed) + roses-9 (the deal's): a pair
    code, out, err = run(capsys, "game", "void", *L, "3", "--t", 4)
    assert code == 0, err
    st = show()
    assert st["players"][0]["matches"] == 0 and st["players"][0]["invalid"] == 1   # hearts-5 + roses-9



@pytest.mark.parametrize("changes, n", [
    (["--set", "slots=[[0,0,0]]"], 1),
    (["--set", "slots=[[0,0,0],[4,0,0],[8,0,0]]"], 3),
])
def test_cli_a_claim_corrected_to_other_than_two_tiles_is_refused(love, capsys, changes, n):
    # a break-test's correction of a claim to one tile was recorded, and the
    # replay then made the claim a referee item ("expected 2 slot(s), got 1")
    L = ("--ledger", love)
    assert run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)[0] == 0
    before = events(love)
    assert before[-1].type == "claim"
    code, out, err = run(capsys, "game", "correct", *L, "2", *changes)
    assert (code, out) == (2, "")
    assert err == f"companion game: a claim names the two tiles of its pair: give 2 slots, not {n}\n"
    assert events(love) == before


def test_cli_an_invalid_attempt_becomes_a_claim_only_with_two_tiles(love, capsys):
    L = ("--ledger", love)
    run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "8,0,0", "--t", 1)     # hearts-5 + roses-9
    before = events(love)
    assert before[-1].type == "invalid"
    code, _, err = run(capsys, "game", "correct", *L, "2", "--set", 'type="claim"', "--set", "slots=[[0,0,0]]")
    assert code == 2 and "give 2 slots, not 1" in err and events(love) == before
    code, out, err = run(capsys, "game", "correct", *L, "2", "--set", 'type="claim"',
                         "--set", "slots=[[0,0,0],[4,0,0]]", "--t", 2)
    assert code == 0 and "referee corrected event #2" in out, err


def test_cli_a_deal_is_read_as_strictly_as_solve_reads_it(tmp_path, capsys):
    # a break-test started a game on a deal with a slot at x = 2e20 (and
    # every claim was then refused); floats and overlapping tiles too
    led = tmp_path / "l.db"
    good = [{"slot": [4 * i, 0, 0], "face": f} for i, f in enumerate(["hearts-5", "hearts-5"])]
    cases = [
        ([{"slot": [2 * 10 ** 20, 0, 0], "face": "hearts-5"}, good[1]],
         "tiles[0].slot [200000000000000000000, 0, 0]: coordinates must lie within +-2147483647, with z >= 0"),
        ([{"slot": [0.0, 0, 0], "face": "hearts-5"}, good[1]], "tiles[0].slot must be [x, y, z] integers, got [0.0, 0, 0]"),
        ([good[0], {"slot": [1, 0, 0], "face": "hearts-5"}],
         "layout 'row' is not playable: tiles 0,0,0 and 1,0,0 overlap on layer 0"),
        ([good[0], {"slot": [4, 0, True], "face": "hearts-5"}], "tiles[1].slot must be [x, y, z] integers, got [4, 0, true]"),
    ]
    for k, (tiles, says) in enumerate(cases):
        deal = tmp_path / f"d{k}.json"
        deal.write_text(json.dumps({"variant": "love", "layout": "row", "tiles": tiles}))
        code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                             "--deal", deal, "--players", "Ann,Ben")
        assert (code, out) == (2, "") and err == f"companion game: {deal}: {says}\n", err
        assert not led.exists()


def test_cli_a_layout_whose_tiles_overlap_starts_no_game(tmp_path, capsys):
    lay = tmp_path / "o.json"
    lay.write_text('{"name": "x", "slots": [[0, 0, 0], [1, 0, 0]]}')
    led = tmp_path / "l.db"
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                         "--layout", lay, "--seed", 1, "--players", "Ann,Ben")
    assert (code, out) == (2, "")
    assert err == "companion game: layout 'x' cannot stand: tiles 0,0,0 and 1,0,0 overlap on layer 0\n"
    assert not led.exists()


def test_cli_a_row_whose_data_is_not_an_object_is_shown_not_a_traceback(love, capsys):
    # rows written by another program: a claim whose data is a list, and a
    # second game whose start is a number (the schema checks only json_valid)
    import sqlite3
    with sqlite3.connect(love) as conn:
        conn.execute("INSERT INTO events (game_id, type, data, ref, t) VALUES ('game-1', 'claim', '[1, 2]', NULL, 1)")
        conn.execute("INSERT INTO events (game_id, type, data, ref, t) VALUES ('game-2', 'game_started', '7', NULL, 1)")
    code, out, err = run(capsys, "game", "show", "--ledger", love, "--game", "game-1")
    assert code == 0 and "needs the referee: #2 claim #2 does not fit the board: its data is not a JSON object: " \
                         "[1, 2]" in out, err
    code, out, err = run(capsys, "game", "show", "--ledger", love, "--game", "game-2")
    assert (code, out) == (2, "")
    assert err == "companion game: game_started: its data is not a JSON object: 7\n"
    code, out, err = run(capsys, "game", "games", "--ledger", love)
    assert code == 0 and out.splitlines()[1] == "game-2: its game_started event cannot be read, 1 event", out


def test_cli_export_to_dev_stdout_on_a_pipe_is_refused_as_a_pipe(love):
    # /dev/stdout -> /proc/self/fd/1 -> "pipe:[...]", which realpath cannot
    # follow: the refusal said "No such file or directory"
    import os
    import subprocess
    import sys
    if not os.path.exists("/dev/stdout"):
        pytest.skip("no /dev/stdout on this system")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-m", "companion", "game", "export", "--ledger", love, "--format", "json",
                           "--out", "/dev/stdout"], capture_output=True, text=True, cwd=repo, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("companion game: cannot write --out /dev/stdout: it is not a plain file (a pipe or a "
                           "device); give a file name\n")


@pytest.mark.parametrize("option, value, top", [
    ("--countdown-seconds", "9999999999999999999999999", "86,400"),
    ("--countdown-seconds", "86401", "86,400"),
])
def test_cli_a_clock_no_table_could_run_is_refused(tmp_path, capsys, option, value, top):
    # a countdown of 10^25 s drew "1.6666666666666667e+28:16" on the phones
    led = tmp_path / "l.db"
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "word", "--mode", "word-sprint",
                         "--layout", "turtle", "--seed", 1, "--players", "Zed", option, value)
    assert (code, out) == (2, "") and f"option countdown_seconds must be at most {top}, got" in err
    # the number as a number, long ones cut (it was quoted as a string)
    assert err.rstrip().endswith(f"got {value if len(value) <= 40 else value[:36] + '...'}") and "'" not in err
    assert not led.exists()
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "word", "--mode", "word-sprint",
                         "--layout", "turtle", "--seed", 1, "--players", "Zed", option, "86400")
    assert code == 0, err


@pytest.mark.parametrize("gid", ["a\nb", "", " x", "x" * 65, "tab\there"])
def test_cli_a_new_game_id_must_be_printable_text(tmp_path, capsys, gid):
    # an id holding a newline split `game games` over two lines, and "" was
    # silently replaced by game-N
    led = tmp_path / "l.db"
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                         "--players", "Ann,Ben", "--layout", "turtle", "--seed", 1, "--game", gid)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("companion game: bad game id " if gid else "companion game: --game needs a game id, not an empty one")
    assert not led.exists()                              # refused before the ledger was made
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                         "--players", "Ann,Ben", "--layout", "turtle", "--seed", 1, "--game", "Club night 3")
    assert code == 0 and "Club night 3" in out


def test_cli_a_player_typed_in_another_case_is_the_player_as_the_game_spells_it(love, capsys):
    L = ("--ledger", love)
    code, out, err = run(capsys, "game", "claim", *L, "--player", "ann", "0,0,0", "4,0,0", "--t", 1)
    assert code == 0 and "Ann claimed 5 Crystal Hearts + 5 Crystal Hearts" in out, err
    code, out, err = run(capsys, "game", "correct", *L, "2", "--player", "BEN")
    assert code == 0 and "referee corrected event #2: player Ben" in out, err
    evs = events(love)
    assert evs[1].data["player"] == "Ann" and evs[2].data["changes"] == {"player": "Ben"}
    # the same name again, in any case, is nothing to change
    code, _, err = run(capsys, "game", "correct", *L, "2", "--player", "ben")
    assert code == 2 and "nothing to change" in err


def test_cli_a_word_game_keeps_the_clock_it_started_with(tmp_path, capsys):
    deal = write_deal(tmp_path / "w.json", "word", list("TREEQUIZ"), "words")
    led = str(tmp_path / "w.db")
    L = ("--ledger", led)
    assert run(capsys, "game", "start", *L, "--variant", "word", "--mode", "word-sprint", "--deal", deal,
               "--players", "Sam", "--t", 0)[0] == 0
    # without --t the wall clock (1.7e9 s) would read as the countdown long run out
    code, out, err = run(capsys, "game", "claim", *L, "--player", "Sam", "8,0,0", "12,0,0")
    assert code == 2 and err == ("companion game: game game-1 keeps its own clock (it was started with --t 0): "
                                 "give this command --t (seconds on that clock) too\n")
    assert [e.type for e in events(led)] == ["game_started"]           # no time-up written
    code, out, err = run(capsys, "game", "claim", *L, "--player", "Sam", "8,0,0", "12,0,0", "--t", 5)
    assert code == 0, err
    # and it only runs forward (an earlier --t would shorten the focus time the quills reward)
    code, out, err = run(capsys, "game", "pass", *L, "--player", "Sam", "--t", 1)
    assert code == 2 and "--t 1 comes before game game-1's last event (t=5): a Word game's clock only runs forward" \
        in err
    led2 = str(tmp_path / "w2.db")
    assert run(capsys, "game", "start", "--ledger", led2, "--variant", "word", "--mode", "word-sprint",
               "--deal", deal, "--players", "Sam")[0] == 0
    code, out, err = run(capsys, "game", "claim", "--ledger", led2, "--player", "Sam", "8,0,0", "12,0,0", "--t", 5)
    assert code == 2 and "keeps the wall clock (it started without --t): leave out --t" in err
    # the host's clock set back an hour (a break-test, session 59): every
    # command was refused, the game's time shown as t=1.79651e+09, and even
    # an abandoned end was refused; the times now read as times, and the
    # game can be ended as abandoned, at its last event's time
    import time as _time
    now = _time.time()
    assert run(capsys, "game", "claim", "--ledger", led2, "--player", "Sam", "8,0,0", "12,0,0")[0] == 0
    last = events(led2)[-1].t
    code, out, err = run(capsys, "game", "pass", "--ledger", led2, "--player", "Sam", "--t", now - 3600)
    assert code == 2 and " comes before game game-1's last event (" in err and "e+09" not in err
    assert err.endswith("a Word game's clock only runs forward; set the clock right, or end the game as abandoned "
                        "(companion game end --reason abandoned, or the console's End)\n")
    code, out, err = run(capsys, "game", "end", "--ledger", led2, "--reason", "abandoned", "--t", now - 3600)
    assert code == 0 and "game over (abandoned)" in out, err
    assert events(led2)[-1].type == "game_ended" and events(led2)[-1].t == last


def test_cli_a_move_without_game_names_the_game_it_went_to_once_the_ledger_holds_two(love, capsys, tmp_path):
    L = ("--ledger", love)
    code, out, _ = run(capsys, "game", "pass", *L, "--player", "Ann", "--t", 1)
    assert code == 0 and out.splitlines()[-1].startswith("scores: Ann 10,000 | Ben 10,000; turn: Ben")
    deal = write_deal(tmp_path / "deal2.json", "love", ["hearts-5"] * 2 + ["roses-9"] * 2 + ["emotion-2", "passion-4"]
                      + ["season-summer"] * 2)
    code, out, _ = run(capsys, "game", "start", *L, "--variant", "LOVE", "--mode", "Sprint", "--deal", deal,
                       "--players", "Cy,Di", "--t", 2)
    assert code == 0 and "game-2" in out
    code, out, _ = run(capsys, "game", "pass", *L, "--player", "Cy", "--t", 3)
    # (8 tiles 4 grid units apart, all free: hearts, roses, seasons and
    # the emotion-passion bonus pair make 4 free pairs)
    assert code == 0 and out.splitlines() == ["#4 pass: Cy passes; Di to play",
                                              "game-2: scores: Cy 10,000 | Di 10,000; turn: Di; tiles left 8; "
                                              "free pairs 4"]
    code, out, _ = run(capsys, "game", "pass", *L, "--player", "Ben", "--game", "game-1", "--t", 4)
    assert code == 0 and out.splitlines()[-1].startswith("scores: Ann 10,000 | Ben 10,000; turn: Ann")


def test_a_game_started_without_a_seed_is_dealt_with_one_picked_and_said(tmp_path, capsys):
    # a club wants a new deal, not a number to think of (a newcomer's test,
    # session 59, was refused "--seed is required with --layout")
    import re
    led = str(tmp_path / "club.db")
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                         "--layout", "sprint-2layer", "--players", "Ada,Bo", "--t", 0)
    assert code == 0 and "#1 game_started" in out
    m = re.fullmatch(r"companion game: note: no --seed given: dealt with seed (\d+) \(`companion deal --variant "
                     r"love --layout sprint-2layer --seed \1 --solvable` shows which face is where\)\n", err)
    assert m, err
    code, deal_out, _ = run(capsys, "deal", "--variant", "love", "--layout", "sprint-2layer", "--seed", m.group(1),
                            "--solvable", "--json")
    started = events(led)[0].data
    assert [t["face"] for t in json.loads(deal_out)["tiles"]] == list(started["faces"])
    assert started["seed"] == int(m.group(1))


def test_cli_choices_are_not_case_sensitive(love, capsys):
    L = ("--ledger", love)
    code, lower, _ = run(capsys, "game", "export", *L, "--format", "csv")
    code2, upper, _ = run(capsys, "game", "export", *L, "--format", "CSV")
    assert code == code2 == 0 and upper == lower and lower.startswith("id,game_id,type,player,")
    # `end` asks for its reason, as the console's End does: without one the
    # game ended as abandoned (no end scoring, no winner), nothing said
    with pytest.raises(SystemExit) as e:
        main(["game", "end", *L])
    assert e.value.code == 2 and "the following arguments are required: --reason" in capsys.readouterr().err
    assert [ev.type for ev in events(love)] == ["game_started"]
    code, out, _ = run(capsys, "game", "end", *L, "--reason", "Abandoned", "--t", 1)
    assert code == 0 and "game over (abandoned)" in out
    with pytest.raises(SystemExit) as e:
        main(["game", "export", "--ledger", love, "--format", "XML"])
    assert e.value.code == 2 and "invalid choice: 'xml'" in capsys.readouterr().err


def test_cli_correct_player_must_be_a_name(love, capsys):
    L = ("--ledger", love)
    assert run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)[0] == 0
    for value, says in (("5", "unknown player '5' (players: Ann, Ben)"),
                        ('["Ben"]', "player must be a player's name, not '[\"Ben\"]' (players: Ann, Ben)"),
                        ('{"a": 1}', "player must be a player's name, not '{\"a\": 1}' (players: Ann, Ben)")):
        code, out, err = run(capsys, "game", "correct", *L, "2", "--set", f"player={value}", "--t", 2)
        assert code == 2 and out == "" and err == f"companion game: {says}\n", err
    assert [e.type for e in events(love)] == ["game_started", "claim"]


def test_cli_start_reads_a_deal_as_strictly_as_solve(tmp_path, capsys):
    led = str(tmp_path / "l.db")
    five = write_deal(tmp_path / "five.json", "love", ["hearts-5"] * 5 + ["roses-9"])
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                         "--deal", five, "--players", "Ann,Ben", "--t", 0)
    assert code == 2 and err == f"companion game: {five}: face 'hearts-5' appears 5 times; a love set holds 4\n"
    ok = write_deal(tmp_path / "ok.json", "love", ["hearts-5"] * 2 + ["roses-9"] * 2)
    code, _, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                       "--deal", ok, "--random", "--players", "Ann,Ben", "--t", 0)
    assert code == 2 and "--random picks a new deal, so it cannot go with --deal" in err
    layout = tmp_path / "tiny.json"
    layout.write_text(json.dumps({"name": "tiny", "slots": [[0, 0, 0], [4, 0, 0]]}))
    code, _, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                       "--deal", str(layout), "--players", "Ann,Ben", "--t", 0)
    assert code == 2 and err.startswith(f"companion game: {layout} is a layout, not a deal: give it with --layout")
    code, _, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                       "--layout", ok, "--seed", 1, "--players", "Ann,Ben", "--t", 0)
    assert code == 2 and err.startswith(f"companion game: {ok}:1: this is a deal (\"variant\" and \"tiles\"), "
                                        "not a layout")
    assert not (tmp_path / "l.db").exists()


def test_cli_start_refuses_an_option_given_twice_with_two_values(tmp_path, capsys):
    led = str(tmp_path / "l.db")
    args = ["game", "start", "--ledger", led, "--variant", "mindful", "--mode", "zen-solitaire", "--players", "Mo",
            "--layout", "turtle", "--seed", 5, "--t", 0]
    code, _, err = run(capsys, *args, "--option", "difficulty=hard", "--difficulty", "easy")
    assert code == 2 and err == ('companion game: --difficulty easy and --option difficulty="hard" disagree: '
                                 "give one of them\n")
    code, out, _ = run(capsys, *args, "--option", "difficulty=easy", "--difficulty", "easy", "--json")
    assert code == 0 and json.loads(out)["options"]["difficulty"] == "easy"
    # in any case, as --mode and --variant (a break-test, session 49: EASY was unknown)
    code, out, err = run(capsys, *args, "--difficulty", "EXPERT", "--json")
    assert code == 0, err
    assert json.loads(out)["options"] == {"difficulty": "expert", "reshuffles": 0}


def test_cli_a_voided_event_keeps_its_description(love, capsys):
    L = ("--ledger", love)
    run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)
    run(capsys, "game", "correct", *L, "2", "--set", "player=Ben", "--t", 2)
    run(capsys, "game", "void", *L, "3", "--t", 3)
    run(capsys, "game", "void", *L, "2", "--t", 4)
    code, out, _ = run(capsys, "game", "ledger", *L)
    assert code == 0
    lines = out.splitlines()
    assert lines[1] == "#2 claim t=1.00s [voided]: Ann claimed 5 Crystal Hearts + 5 Crystal Hearts (0,0,0 4,0,0)"
    assert lines[2] == "#3 correction ->#2 t=2.00s [voided]: referee corrected event #2: player Ben"
    assert lines[3:] == ["#4 correction ->#3 t=3.00s: referee voided event #3",
                         "#5 correction ->#2 t=4.00s: referee voided event #2"]


def test_cli_show_says_what_decides_the_end_and_the_rating(tmp_path, capsys):
    # Love 2.6.3 "clear ... within a set turn limit ... 3-star devotion
    # ratings"; Mindful 2.2 "2 Zen Focus Tokens (Hints/Reshuffles)" and Law 4
    # "a limited number of Zen Reshuffles based on selected difficulty"; Word
    # 2.6.2 "a running countdown clock", 2.5's three tools and 2.7's quills:
    # `show` said none of them without --json (a break-test)
    solo = write_deal(tmp_path / "solo.json", "love", ["hearts-2"] * 2 + ["hearts-3"] * 2, "s")
    L = ("--ledger", str(tmp_path / "solo.db"))
    run(capsys, "game", "start", *L, "--variant", "love", "--mode", "solo-quest", "--players", "Ann",
        "--deal", solo, "--turn-limit", 3, "--t", 0)
    run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)
    code, out, _ = run(capsys, "game", "show", *L)
    assert code == 0 and out.splitlines()[-1] == "tiles left 2/4, free pairs 1, turn: Ann, turns 1 of 3 (2 left)"
    run(capsys, "game", "claim", *L, "--player", "Ann", "8,0,0", "12,0,0", "--t", 2)
    code, out, _ = run(capsys, "game", "show", *L)
    assert out.splitlines()[-1] == ("tiles left 0/4, free pairs 0, game over (cleared), winner: Ann, "
                                    "turns 2 of 3, 3 stars")

    duel = write_deal(tmp_path / "duel.json", "mindful", ["bamboo-1"] * 2 + ["dragon-red"] * 2, "d")
    L = ("--ledger", str(tmp_path / "duel.db"))
    run(capsys, "game", "start", *L, "--variant", "mindful", "--mode", "harmony-duels", "--players", "Ann,Ben",
        "--deal", duel, "--difficulty", "hard", "--t", 0)
    run(capsys, "game", "hint", *L, "--player", "Ann", "--t", 1)
    code, out, _ = run(capsys, "game", "show", *L)
    lines = out.splitlines()
    assert lines[1] == "  Ann: 0, Zen Focus tokens 1" and lines[2] == "  Ben: 0, Zen Focus tokens 2"
    assert lines[3] == ("tiles left 4/4, free pairs 2, turn: Ann, Zen Reshuffles left 1 "
                        "(hard: 1 of the session's 1, 3 Zen Focus tokens held)")

    sprint = write_deal(tmp_path / "sprint.json", "word", ["E", "E", "X", "X"], "w")
    L = ("--ledger", str(tmp_path / "sprint.db"))
    run(capsys, "game", "start", *L, "--variant", "word", "--mode", "word-sprint", "--players", "Ann",
        "--deal", sprint, "--countdown-seconds", 30, "--t", 0)
    run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 10)
    code, out, _ = run(capsys, "game", "show", *L)
    lines = out.splitlines()
    assert lines[1] == "  Ann: 0, rack E E, hints 0 of 3, Lexicon Fans 0 of 2, Ink Erasers 0 of 3"
    assert lines[2] == "tiles left 2/4, free pairs 1, turn: Ann, countdown 20 s left at the last event (it ends at t=30)"
    run(capsys, "game", "claim", *L, "--player", "Ann", "8,0,0", "12,0,0", "--t", 12)
    code, out, _ = run(capsys, "game", "show", *L)
    assert out.splitlines()[-1] == ("tiles left 0/4, free pairs 0, game over (cleared), winner: Ann, "
                                    "time 12 s of a 20 s target, 2 quills")

    # on the wall clock: the seconds left now and the time it ends (a
    # break-test, session 50: "countdown 603.368 s left (at t=1.79644e+09)",
    # counted to the last event, after the phones said 0)
    import re
    import time
    for ago, want in ((0, r"countdown (59[0-9]|600) s left \(it ends at \d\d:\d\d:\d\d\)"),
                      (700, r"countdown over at \d\d:\d\d:\d\d: time is up \(end the game, reason time-up\)")):
        L = ("--ledger", str(tmp_path / f"wall{ago}.db"))
        run(capsys, "game", "start", *L, "--variant", "word", "--mode", "word-sprint", "--players", "Ann",
            "--deal", sprint, "--countdown-seconds", 600, "--t", time.time() - ago)
        code, out, _ = run(capsys, "game", "show", *L)
        assert re.search(want, out.splitlines()[2]), out


def test_cli_campaign_notes_a_player_without_a_scholars_path_game(love, tmp_path, capsys):
    # Word 2.6.1: Scholar's Path is Word Mahjong's campaign; asked of a Love
    # ledger, or of a name typed wrong, it said "next level 1" as for a new
    # scholar, with nothing to tell the two apart
    code, out, err = run(capsys, "game", "campaign", "--ledger", love, "--player", "Ann")
    assert code == 0 and out == "Ann: next level 1, 0 quills\n"
    assert err == (f"companion game: note: Ann has played no Scholar's Path game in {love}; it holds no "
                   "Scholar's Path game (Word Mahjong's campaign) at all\n")
    deal = write_deal(tmp_path / "w.json", "word", ["E", "E"], "w")
    L = ("--ledger", love)
    run(capsys, "game", "start", *L, "--variant", "word", "--mode", "scholars-path", "--players", "Sam",
        "--deal", deal, "--t", 0)
    run(capsys, "game", "claim", *L, "--player", "Sam", "0,0,0", "4,0,0", "--t", 3)
    code, out, err = run(capsys, "game", "campaign", *L, "--player", "Samm")
    assert code == 0 and err.endswith("Samm has played no Scholar's Path game in " + love + "; its scholars: Sam\n")
    code, out, err = run(capsys, "game", "campaign", *L, "--player", "sam")
    assert code == 0 and out.startswith("Sam: next level 2, ") and err == ""


def test_cli_zen_archives_shows_no_score_counters(tmp_path, capsys):
    # Word 2.6.3 Zen Archives: "A completely peaceful, stress-free puzzle
    # experience with zero timers or score counters!": every move printed
    # "scores: Ann 0 | Ben 0" and `show` a 0 beside each name
    deal = write_deal(tmp_path / "z.json", "word", ["E", "E", "X", "X"], "z")
    L = ("--ledger", str(tmp_path / "z.db"))
    code, out, _ = run(capsys, "game", "start", *L, "--variant", "word", "--mode", "zen-archives",
                       "--players", "Ann,Ben", "--deal", deal)
    assert code == 0 and out.splitlines()[-1] == "no scores in Zen Archives; turn: Ann; tiles left 4; free pairs 2"
    code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0")
    assert code == 0 and out.splitlines()[-1] == "no scores in Zen Archives; turn: Ann; tiles left 2; free pairs 1"
    code, out, _ = run(capsys, "game", "show", *L)
    assert out.splitlines()[1:3] == ["  Ann: rack E E", "  Ben"]
    code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ann", "8,0,0", "12,0,0")
    assert out.splitlines()[-1] == "no scores in Zen Archives; game over (cleared), winner: Ann, Ben"


def test_cli_zen_archives_scholars_are_no_winners_of_a_defeat(tmp_path, capsys):
    """Word 2.8: "Layout Mastered (Victory Condition): Every single tile is
    successfully matched or spelled into words" and "No Playable Moves
    (Defeat Condition): Zero free matching pairs or valid words remain on
    the board".  Two scholars sharing a Zen Archives board (docs/RULES.md
    4.6) whose game ended with no playable moves were both named winners
    (tied at no score), where one scholar alone is named none."""
    # E E free, then Q J X V, letters once each that spell no word: after
    # the E pair no pair or word is left, and no arrangement frees one (4.6)
    tiles = [{"slot": [0, 0, 0], "face": "E"}, {"slot": [4, 0, 0], "face": "E"},
             {"slot": [20, 0, 0], "face": "Q"}, {"slot": [22, 0, 0], "face": "J"},
             {"slot": [24, 0, 0], "face": "X"}, {"slot": [40, 0, 0], "face": "V"}]
    deal = tmp_path / "z.json"
    deal.write_text(json.dumps({"variant": "word", "layout": "z", "tiles": tiles}))
    for players, name in (("Ann,Ben", "two"), ("Ann", "one")):
        L = ("--ledger", str(tmp_path / f"{name}.db"))
        code, _, err = run(capsys, "game", "start", *L, "--variant", "word", "--mode", "zen-archives",
                           "--players", players, "--deal", deal)
        assert code == 0, err
        code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0")
        assert code == 0 and out.splitlines()[-1] == "no scores in Zen Archives; game over (no-moves)"
        code, out, _ = run(capsys, "game", "show", *L, "--json")
        st = json.loads(out)
        assert st["end_reason"] == "no-moves" and st["winners"] == [] and st["winner"] is None


def test_cli_a_move_past_the_countdown_shows_the_end_it_recorded(tmp_path, capsys):
    # Word 2.6.2: a Word Sprint ends when its countdown runs out.  A move sent
    # after that wrote the time-up end and said only "the game has ended
    # (time-up)": the end and the final scores went unseen (break-test)
    sprint = write_deal(tmp_path / "sprint.json", "word", ["E", "E", "X", "X"], "w")
    L = ("--ledger", str(tmp_path / "sprint.db"))
    run(capsys, "game", "start", *L, "--variant", "word", "--mode", "word-sprint", "--players", "Ann",
        "--deal", sprint, "--countdown-seconds", 30, "--t", 0)
    code, out, err = run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 40)
    assert code == 2 and out.splitlines() == ["#2 game_ended: game over: time-up",
                                              "scores: Ann 0; game over (time-up), 0 quills"]
    assert err == "companion game: the game has ended (time-up) (recorded as event #2)\n"
    code, out, err = run(capsys, "game", "pass", *L, "--player", "Ann", "--t", 41)      # already over: nothing new
    assert code == 2 and out == "" and err == "companion game: the game has ended (time-up)\n"
    assert [e["type"] if isinstance(e, dict) else e.type for e in events(L[1])] == ["game_started", "game_ended"]


@pytest.mark.parametrize("fails", ["schema", "event"])
def test_a_start_on_a_full_disk_says_so_and_leaves_no_file_nor_folder(tmp_path, capsys, monkeypatch, fails):
    # a break-test's `game start` on a full 64 KB disk: one line, exit 2, but
    # an empty (or half-made, without its triggers) ledger left behind, its
    # -wal and -shm beside it, though the move "wrote nothing"
    import sqlite3
    import companion.ledger
    from companion.errors import BadInput

    def full(*a, **k):
        exc = sqlite3.OperationalError("database or disk is full")
        exc.sqlite_errorcode = sqlite3.SQLITE_FULL
        raise exc

    if fails == "schema":
        real = companion.ledger.init_db

        class DiskFull:
            executescript = execute = staticmethod(full)
        monkeypatch.setattr(companion.ledger, "init_db", lambda conn: real(DiskFull()))
    else:
        def append(self, *a, **k):
            raise BadInput("cannot write the ledger: the disk is full (database or disk is full)")
        monkeypatch.setattr(companion.ledger.Ledger, "append", append)
    deal = write_deal(tmp_path / "deal.json", "love", ["hearts-5"] * 2)
    led = tmp_path / "club" / "night" / "ledger.db"
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                         "--deal", deal, "--players", "Ann,Ben", "--t", 0)
    assert (code, out) == (2, "")
    assert err.splitlines() == ["companion game: cannot write the ledger: the disk is full (database or disk is full)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deal.json"]


def test_a_failed_start_on_an_existing_ledger_keeps_it(love, capsys, monkeypatch):
    # (only a ledger the start itself made is removed)
    import companion.ledger
    from companion.errors import BadInput

    def append(self, *a, **k):
        raise BadInput("cannot write the ledger: the disk is full (database or disk is full)")
    monkeypatch.setattr(companion.ledger.Ledger, "append", append)
    code, _, _ = run(capsys, "game", "start", "--ledger", love, "--variant", "love", "--mode", "sprint",
                     "--layout", "turtle", "--seed", 1, "--players", "Cy,Di", "--t", 1)
    monkeypatch.undo()
    assert code == 2 and [e.type for e in events(love)] == ["game_started"]


def test_cli_a_voided_event_is_not_corrected_until_its_void_is_voided(love, capsys):
    # a break-test (session 49): a voided invalid attempt was corrected to
    # the other player and into a claim, unchecked; voiding the void then
    # brought it back rejected, a referee item
    L = ("--ledger", love)
    assert run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "8,0,0", "--t", 1)[0] == 0
    assert events(love)[-1].type == "invalid"
    assert run(capsys, "game", "void", *L, "2", "--t", 2)[0] == 0
    before = events(love)
    for change in (["--set", "player=Ben"], ["--type", "claim"]):
        code, out, err = run(capsys, "game", "correct", *L, "2", *change, "--t", 3)
        assert (code, out) == (2, "")
        assert err == "companion game: event #2 is voided (voided by #3: void #3 to bring it back), then correct it\n"
    assert events(love) == before
    assert run(capsys, "game", "void", *L, "3", "--t", 4)[0] == 0              # back: now it can be
    code, out, err = run(capsys, "game", "correct", *L, "2", "--set", "player=Ben", "--t", 5)
    assert code == 0 and "#5 correction: referee corrected event #2: player Ben" in out
    assert "event #2 no longer fits the board (it is Ann's turn, not Ben's)" in err    # checked, and said


@pytest.mark.parametrize("word, says", [
    ("", "bad word '': letters A-Z only"),
    ("a b", "bad word 'a b': letters A-Z only"),
    ("café", "bad word 'café': letters A-Z only"),
    ("at", "AT is too short: a word needs 3 or more letters"),
    ("tear", "TEAR has 4 letters but 3 tiles were given"),
])
def test_cli_a_word_no_tiles_could_make_is_refused_before_a_blocked_tile_is_charged(tmp_path, capsys, word, says):
    # a break-test (session 49): --word "" with a blocked tile among the
    # tiles wrote the blocked tile's penalty, then exited 2
    deal = tmp_path / "w.json"
    deal.write_text(json.dumps({"variant": "word", "layout": "strip", "tiles": [
        {"slot": [2 * i, 0, 0], "face": f} for i, f in enumerate("TEAT")]}))
    led = str(tmp_path / "w.db")
    L = ("--ledger", led)
    assert run(capsys, "game", "start", *L, "--variant", "word", "--mode", "zen-archives", "--deal", str(deal),
               "--players", "Ann", "--t", 0)[0] == 0
    before = events(led)
    code, out, err = run(capsys, "game", "word", *L, "--player", "Ann", "--word", word,
                         "0,0,0", "2,0,0", "6,0,0", "--t", 1)             # 2,0,0: pinched
    assert (code, out, err) == (2, "", f"companion game: {says}\n")
    assert events(led) == before
    # a word that fits the tiles is a move: the pinched tile is charged
    code, out, err = run(capsys, "game", "word", *L, "--player", "Ann", "--word", "tet",
                         "0,0,0", "2,0,0", "6,0,0", "--t", 1)
    assert code == 2 and [e.type for e in events(led)][len(before):] == ["penalty"]


def test_cli_player_names_are_told_apart_as_unicode_reads_them(tmp_path, capsys):
    # a break-test (session 49): "Zoë" typed composed (U+00EB) and as "e" +
    # U+0308 (a Mac's keyboard) started one game as two players, and a game
    # of the one answered "unknown player 'Zoë' (players: Zoë, ...)" to the other
    composed, decomposed = "Zo\u00eb", "Zoe\u0308"
    led = str(tmp_path / "u.db")
    args = ["game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint", "--layout", "turtle",
            "--seed", 1, "--t", 0]
    code, out, err = run(capsys, *args, "--players", f"{composed},{decomposed}")
    assert code == 2 and err.startswith("companion game: player names must differ")
    code, out, err = run(capsys, *args, "--players", "Ada,\uff21\uff44\uff41")        # full-width Ａｄａ
    assert code == 2 and "or the letters' width" in err
    code, out, err = run(capsys, *args, "--players", f"{decomposed},Bo")
    assert code == 0, err
    assert events(led)[0].data["players"] == [composed, "Bo"]                     # kept composed
    code, out, err = run(capsys, "game", "claim", "--ledger", led, "--player", decomposed, "21,2,1", "21,10,1",
                         "--t", 1)
    assert code == 0 and out.startswith(f"#2 claim: {composed} claimed"), err
    code, out, err = run(capsys, "game", "claim", "--ledger", led, "--player", "\uff22\uff4f", "9,2,0", "11,6,1",
                         "--t", 2)                                                  # full-width Ｂｏ
    assert code == 2 and "it is Zoë's turn, not Bo's" in err


def test_cli_a_game_end_voided_with_its_claim_names_the_undo_that_brings_it_back(tmp_path, capsys):
    # a re-test (session 49): the end of a game whose last claim was undone
    # answered "event #4 is voided: it does not count, then correct it"
    led, L = _two_pairs(tmp_path, capsys, "Ann")
    assert run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)[0] == 0
    assert run(capsys, "game", "claim", *L, "--player", "Ann", "8,0,0", "12,0,0", "--t", 2)[0] == 0
    assert [e.type for e in events(led)] == ["game_started", "claim", "claim", "game_ended"]
    assert run(capsys, "game", "undo", *L, "--t", 3)[0] == 0                                  # #5 undo of #3
    code, out, err = run(capsys, "game", "correct", *L, "4", "--set", "reason=abandoned", "--t", 4)
    assert (code, err) == (2, "companion game: event #4 is voided (it followed #3, taken back by undo #5: "
                              "void #5 to bring it back), then correct it\n")
    code, out, err = run(capsys, "game", "void", *L, "3", "--t", 4)
    assert (code, err) == (2, "companion game: event #3 is already voided (taken back by undo #5: void #5 to "
                              "bring it back)\n")


def test_cli_a_word_corrected_to_one_no_tiles_could_make_is_refused(tmp_path, capsys):
    # a re-test (session 49): `correct --word CA` (too short) or 4 tiles for
    # CAT were written, and the word then did not count, with a warning
    pytest.importorskip("english_words")
    deal = write_deal(tmp_path / "w.json", "word", list("TEAS") + ["wild", "wild"], "words")
    led = str(tmp_path / "w.db")
    L = ("--ledger", led)
    assert run(capsys, "game", "start", *L, "--variant", "word", "--mode", "zen-archives", "--deal", deal,
               "--players", "Ann", "--t", 0)[0] == 0
    code, out, err = run(capsys, "game", "word", *L, "--player", "Ann", "--word", "tea", "0,0,0", "4,0,0", "8,0,0",
                         "--t", 1)
    assert code == 0, err
    before = events(led)
    for change, says in ((["--word", "te"], "TE is too short: a word needs 3 or more letters"),
                         (["--slots", "0,0,0", "4,0,0", "8,0,0", "12,0,0"], "TEA has 3 letters but 4 tiles were given"),
                         (["--word", ""], "word must be letters A-Z, at most 6 of them, got ''"),
                         (["--word", "teas"], "TEAS has 4 letters but 3 tiles were given")):
        code, out, err = run(capsys, "game", "correct", *L, "2", *change, "--t", 2)
        assert (code, out, err) == (2, "", f"companion game: {says}\n")
    assert events(led) == before
    code, out, err = run(capsys, "game", "correct", *L, "2", "--word", "teas", "--slots", "0,0,0", "4,0,0", "8,0,0",
                         "12,0,0", "--t", 2)
    assert code == 0 and err == "", err                 # a word and its tiles corrected together


def test_cli_campaign_names_the_player_as_the_games_spell_the_name(tmp_path, capsys):
    # a re-test (session 49): full-width, upper-case ＺＯＥ̈ found Zoë's
    # campaign and echoed the typed spelling
    led = str(tmp_path / "sp.db")
    assert run(capsys, "game", "start", "--ledger", led, "--variant", "word", "--mode", "scholars-path",
               "--players", "Zo\u00eb", "--layout", "sprint-flat", "--seed", 1, "--t", 0)[0] == 0
    code, out, err = run(capsys, "game", "campaign", "--ledger", led, "--player", "\uff3a\uff2f\uff25\u0308", "--json")
    assert code == 0 and json.loads(out)["player"] == "Zo\u00eb"


def test_cli_a_deal_naming_a_built_in_layout_on_other_slots_is_noted(tmp_path, capsys):
    # a break-test (session 49): a two-tile deal called "turtle" started
    # "on turtle (2 tiles)" with no word that the Turtle was not played
    deal = write_deal(tmp_path / "d.json", "love", ["hearts-5", "hearts-5"], layout="turtle")
    led = str(tmp_path / "d.db")
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                         "--deal", deal, "--players", "Ann", "--t", 0)
    assert code == 0 and "on turtle (2 tiles)" in out
    assert err == (f"companion game: note: deal {deal} names layout 'turtle', but its 2 tiles stand on other slots "
                   "than the built-in 'turtle' (144 slots): the deal's own slots are played\n")
    code, out, err = run(capsys, "deal", "--variant", "love", "--layout", "turtle", "--seed", 3, "--json")
    (tmp_path / "t.json").write_text(out)
    code, out, err = run(capsys, "game", "start", "--ledger", str(tmp_path / "t.db"), "--variant", "love", "--mode",
                         "sprint", "--deal", str(tmp_path / "t.json"), "--players", "Ann", "--t", 0)
    assert code == 0 and "note: deal" not in err


def test_cli_a_deal_with_no_playable_move_ends_as_it_starts(tmp_path, capsys):
    """Word 2.8 "No Playable Moves (Defeat Condition): Zero free matching
    pairs or valid words remain on the board, and no reshuffle items are
    available" (docs/RULES.md 4.5: a Lexicon Fan that no arrangement of the
    tiles could help does not hold the game open).  Q and X alone: no pair,
    no word, and no reshuffle of two different letters leaves either.  A
    Word game dealt so stayed open (only the referee's `end` closed it),
    while Love and Mindful games dealt stuck ended at once (docs/RULES.md
    1.3), without the `game_ended` record the ledger keeps of every end."""
    led = str(tmp_path / "w.db")
    deal = write_deal(tmp_path / "w.json", "word", ["Q", "X"])
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "word", "--mode", "scholars-path",
                         "--deal", deal, "--players", "Ann", "--t", 0)
    assert code == 0, err
    assert "#2 game_ended: game over: no-moves" in out and "game over (no-moves)" in out
    assert [e.type for e in events(led)] == ["game_started", "game_ended"]
    assert events(led)[-1].data["reason"] == "no-moves"
    # Love 2.8 "No Valid Moves Stalemate": the end is written as a record too
    led2 = str(tmp_path / "l.db")
    deal2 = write_deal(tmp_path / "l.json", "love", ["hearts-1", "hearts-2"])
    code, out, err = run(capsys, "game", "start", "--ledger", led2, "--variant", "love", "--mode", "sprint",
                         "--deal", deal2, "--players", "Ann,Ben", "--t", 0)
    assert code == 0, err
    assert "#2 game_ended: game over: stalemate" in out
    assert [e.type for e in events(led2)] == ["game_started", "game_ended"]
    # a deal with a move starts as before, one event
    led3 = str(tmp_path / "w3.db")
    deal3 = write_deal(tmp_path / "w3.json", "word", ["Q", "Q"])
    code, out, err = run(capsys, "game", "start", "--ledger", led3, "--variant", "word", "--mode", "scholars-path",
                         "--deal", deal3, "--players", "Ann", "--t", 0)
    assert code == 0 and "game over" not in out, err
    assert [e.type for e in events(led3)] == ["game_started"]


def test_cli_show_says_why_a_mindful_game_ended_with_zen_reshuffles_left(tmp_path, capsys):
    """Mindful 2.8 "Grid Stagnation (Exhaustion): No legal free matches
    remain on the board and all Zen Reshuffle tokens have been used";
    docs/RULES.md 3.2: a reshuffle no arrangement of the tiles left could
    help (a Spring and a Plum: 2.1 Law 2, seasons match seasons only) is
    not waited for.  `show` said "game over (stalemate) ... Zen Reshuffles
    left 2" and nothing of why the two were not offered (a rules audit,
    session 52)."""
    deal = write_deal(tmp_path / "m.json", "mindful", ["bamboo-1"] * 2 + ["season-spring", "flower-plum"])
    L = ("--ledger", str(tmp_path / "m.db"))
    run(capsys, "game", "start", *L, "--variant", "mindful", "--mode", "zen-solitaire", "--players", "Ann",
        "--deal", deal, "--t", 0)
    code, out, _ = run(capsys, "game", "claim", *L, "--player", "Ann", "0,0,0", "4,0,0", "--t", 1)
    # 100 + 2 x 500 unused tokens - 2 x 50 tiles left = 1,000
    assert code == 0 and "game over (stalemate)" in out and "scores: Ann 1,000" in out
    code, out, _ = run(capsys, "game", "show", *L)
    assert out.splitlines()[-1] == (
        "tiles left 2/4, free pairs 0, game over (stalemate), winner: none, Zen Reshuffles left 2 "
        "(normal: 2 of the session's 2, 2 Zen Focus tokens held; none could help: no arrangement "
        "of the tiles left leaves a match free)")


# ------------------------------------------------------------- a break-test of the ledger (session 57)


def test_a_damaged_ledger_is_one_line_not_a_traceback(love, capsys):
    # one page of random bytes (a bad sector, a cut copy): every game action
    # gave sqlite3.DatabaseError's traceback, where serve refuses the file
    with open(love, "r+b") as fh:
        fh.seek(3 * 4096)
        fh.write(b"\xa5" * 4096)
    for argv in (["show"], ["games"], ["claim", "--player", "Ann", "0,0,0", "4,0,0"], ["export", "--format", "csv"]):
        code, out, err = run(capsys, "game", *argv, "--ledger", love)
        assert code == 2 and out == "" and err == (
            f"companion game: cannot use ledger {love}: SQLite finds it damaged (database disk image is malformed); "
            "use a copy made before the damage (sqlite3's .recover command saves what is left)\n"), argv


def test_a_ledger_named_file_colon_is_that_file_not_an_sqlite_address(tmp_path, capsys, monkeypatch):
    # SQLite read "file:club.db" as a URI: start wrote club.db, and every
    # later command found no ledger at file:club.db
    monkeypatch.chdir(tmp_path)
    faces = ["hearts-5"] * 2 + ["roses-9"] * 2
    deal = write_deal(tmp_path / "deal.json", "love", faces)
    code, out, err = run(capsys, "game", "start", "--ledger", "file:club.db", "--variant", "love", "--mode",
                         "sprint", "--deal", deal, "--players", "Ann,Ben", "--t", 0)
    assert code == 0, err
    assert (tmp_path / "file:club.db").is_file() and not (tmp_path / "club.db").exists()
    code, out, err = run(capsys, "game", "show", "--ledger", "file:club.db")
    assert code == 0 and "tiles left 4/4" in out


def test_a_ledger_in_a_folder_whose_name_is_not_utf8_opens(tmp_path, capsys):
    # a Latin-1 folder name (an old USB stick): start recorded the game and
    # then failed with UnicodeEncodeError's traceback, as did every later read
    import os
    folder = os.path.join(os.fsencode(tmp_path), b"club\xe9")
    os.mkdir(folder)
    led = os.fsdecode(os.path.join(folder, b"league.db"))
    deal = write_deal(tmp_path / "deal.json", "love", ["hearts-5"] * 2)
    assert run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint", "--deal", deal,
               "--players", "Ann,Ben", "--t", 0)[0] == 0
    code, out, err = run(capsys, "game", "show", "--ledger", led)
    assert code == 0 and "tiles left 2/2" in out, err


def test_rows_another_program_wrote_with_a_text_time_or_deep_data_are_read(love, capsys):
    # a row whose t is an ISO date broke every read and the scoreboard
    # (TypeError); one nested 600 deep broke export --format json
    # (RecursionError); the first is read with no time, the second as a row
    # whose data cannot be read (a referee item, as for any such row)
    import sqlite3
    with sqlite3.connect(love) as conn:
        conn.execute("INSERT INTO events (game_id, type, data, t) VALUES ('game-1', 'pass', '{\"player\": \"Ann\"}', "
                     "'2026-12-01 20:15')")
        conn.execute("INSERT INTO events (game_id, type, data, t) VALUES ('game-1', 'pass', ?, 1.0)",
                     ('{"player": "Ben", "note": ' + "[" * 600 + "]" * 600 + "}",))
    code, out, err = run(capsys, "game", "show", "--ledger", love)
    assert code == 0 and "needs the referee: #3 pass #3 does not fit the board: its data is not a JSON object" in out
    code, out, err = run(capsys, "game", "export", "--ledger", love, "--format", "json")
    exported = json.loads(out)["events"]
    assert code == 0 and [e["t"] for e in exported[1:]] == [None, 1.0]
    assert code == 0 and run(capsys, "game", "pass", "--ledger", love, "--player", "Ben")[0] == 0


def test_an_export_never_writes_over_an_sqlite_database(love, tmp_path, capsys):
    # --out monday.db (a slip of the tab key) replaced a whole recorded
    # ledger with the export's text
    other = tmp_path / "monday.db"
    with Ledger(other) as led:
        led.append(None, "game_started", {"note": "another ledger"}, None, 0.0)
    before = other.read_bytes()
    code, out, err = run(capsys, "game", "export", "--ledger", love, "--format", "json", "--out", other)
    assert code == 2 and out == "" and err == (f"companion game: --out {other} is an SQLite database (another "
                                               "ledger?): an export never writes over one; give another file name\n")
    assert other.read_bytes() == before


def test_faces_are_typed_in_any_case_or_by_name_as_in_the_console(love, capsys):
    # README: the console takes faces "in any case ... as game --faces";
    # game --faces refused SEASON-AUTUMN as an unknown face
    code, out, err = run(capsys, "game", "claim", "--ledger", love, "--player", "Ann", "0,0,0", "4,0,0",
                         "--faces", "HEARTS-5, 5 Crystal Hearts")
    assert code == 0, err
    assert events(love)[-1].data["faces"] == ["hearts-5", "hearts-5"]


def test_names_that_differ_only_by_a_variation_selector_are_one_name(tmp_path, capsys):
    # a phone types the heart with U+FE0F after it, a laptop without: two
    # players who look the same, and a name that could not be typed the
    # other way
    deal = write_deal(tmp_path / "deal.json", "love", ["hearts-5"] * 2)
    led = str(tmp_path / "h.db")
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                         "--deal", deal, "--players", "\u2764,\u2764\ufe0f", "--t", 0)
    assert code == 2 and "player names must differ" in err
    assert run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint", "--deal", deal,
               "--players", "\u2764\ufe0f,Bo", "--t", 0)[0] == 0
    code, out, err = run(capsys, "game", "claim", "--ledger", led, "--player", "\u2764", "0,0,0", "4,0,0")
    assert code == 0, err
    # the supplementary selectors too, and a name of selectors alone shows nothing
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                         "--deal", deal, "--players", "Ada\U000e0100,Ada", "--t", 0)
    assert code == 2 and "player names must differ" in err
    code, out, err = run(capsys, "game", "start", "--ledger", led, "--variant", "love", "--mode", "sprint",
                         "--deal", deal, "--players", "\ufe0f,Bo", "--t", 0)
    assert code == 2 and "bad player name" in err


def test_a_ctrl_c_just_after_a_move_is_written_says_it_stands(love, capsys, monkeypatch):
    # a Ctrl+C landing right after the write said only "interrupted", and a
    # re-run of undo took back a second move; the Ctrl+C now waits for the
    # write's end, and the line names the event recorded
    import os
    import signal
    from companion import ledger as L
    orig = L.Ledger.append

    def append(self, *a, **k):
        ev = orig(self, *a, **k)
        os.kill(os.getpid(), signal.SIGINT)
        return ev
    monkeypatch.setattr(L.Ledger, "append", append)
    code, out, err = run(capsys, "game", "pass", "--ledger", love, "--player", "Ann")
    assert code == 130 and out.startswith("#2 pass: ")          # (printed, then the held Ctrl+C)
    assert err == ("companion game: interrupted after event #2 was recorded: it stands (companion game show "
                   "--ledger ... shows the game)\n")
    assert [e.type for e in events(love)] == ["game_started", "pass"]


def test_a_command_that_reads_leaves_another_programs_database_untouched(tmp_path, capsys):
    # `game show` on another program's SQLite file (a view, no table) said
    # "the ledger holds no game yet", having switched the file to WAL mode
    # and written the ledger's table and triggers into it
    import sqlite3
    other = tmp_path / "prefs.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE VIEW settings AS SELECT 1 AS dark_mode")
    conn.close()
    before = other.read_bytes()
    code, out, err = run(capsys, "game", "show", "--ledger", other)
    assert code == 2 and out == "" and err == (f"companion game: not a companion ledger: {other} is an SQLite "
                                               "database holding settings, but no events ('companion game start' "
                                               "makes a ledger)\n")
    assert other.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["prefs.db"]


def test_an_export_to_dash_goes_to_standard_output(love, tmp_path, capsys, monkeypatch):
    # "-" is the usual name for standard output; a file named "-" was written
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "game", "export", "--ledger", love, "--format", "json", "--out", "-")
    assert code == 0 and json.loads(out)["game_id"] == "game-1" and not (tmp_path / "-").exists()


def _crash_with_an_event_in_the_wal(path):
    """Another process writes one event to ``path`` and dies before the WAL
    is folded into the file (a crash or power cut while a referee or the
    scoreboard had it open)."""
    import subprocess
    import sys
    code = ("import os, sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('PRAGMA wal_autocheckpoint=0'); "
            "c.execute(\"INSERT INTO events (game_id, type, data, t) VALUES ('game-1', 'pass', "
            "'{\\\"player\\\": \\\"Ann\\\"}', 9.0)\"); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)


def test_another_ledgers_wal_beside_a_ledger_is_refused_before_it_replaces_its_events(love, tmp_path, capsys):
    # a break-test, session 57: a -wal left by another ledger's crash,
    # copied beside this one (files archived or restored), was replayed
    # into it by SQLite: `game games` showed the other's events, exit 0,
    # and folded them into the file for good.  A ledger only grows, so its
    # own WAL shows every event its file holds
    import shutil
    other = tmp_path / "other.db"
    deal = write_deal(tmp_path / "deal2.json", "love", ["roses-9"] * 2)
    assert run(capsys, "game", "start", "--ledger", other, "--variant", "love", "--mode", "sprint", "--deal", deal,
               "--players", "Cy,Di", "--t", 0)[0] == 0
    assert run(capsys, "game", "pass", "--ledger", love, "--player", "Ann", "--t", 1)[0] == 0
    _crash_with_an_event_in_the_wal(other)
    mine = tmp_path / "ledger.db"
    shutil.copy(str(other) + "-wal", str(mine) + "-wal")
    before = mine.read_bytes()
    code, out, err = run(capsys, "game", "games", "--ledger", mine)
    assert code == 2 and out == "" and err == (
        f"companion game: cannot open ledger {mine}: the ledger.db-wal beside it does not hold its events (another "
        "database's, left by a crash and copied or restored beside it?), and SQLite would write it into the ledger: "
        "move ledger.db-wal away (keep it for the database it came from)\n")
    assert mine.read_bytes() == before
    # its own WAL, left by a crash (its -shm lost in a copy), is read: the event it holds counts
    for side in ("-wal", "-shm"):
        (tmp_path / f"ledger.db{side}").unlink()
    _crash_with_an_event_in_the_wal(mine)
    (tmp_path / "ledger.db-shm").unlink()
    assert [e.type for e in events(mine)] == ["game_started", "pass", "pass"]


def test_ledger_says_a_rejected_event_s_status_once(tmp_path, capsys):
    # "#12 claim t=... [rejected]: rejected: Ada claimed ..." (a newcomer's test, session 58)
    import sqlite3
    db = tmp_path / "l.db"
    code, _, _ = run(capsys, "game", "start", "--ledger", str(db), "--variant", "love", "--mode", "sprint",
                     "--players", "Ada,Bo", "--layout", "turtle", "--seed", "1")
    assert code == 0
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO events (game_id, type, data, ref, t) VALUES ('game-1', 'claim', ?, NULL, 5)",
                     (json.dumps({"player": "Ada", "slots": [[0, 0, 0], [2, 0, 0]]}),))
    code, out, _ = run(capsys, "game", "ledger", "--ledger", str(db))
    assert code == 0
    assert out.splitlines()[-1] == ("#2 claim t=5.00s [rejected]: Ada claimed 0,0,0 2,0,0: slot 0,0,0 is not in "
                                    "layout 'turtle'")


def test_the_readme_s_game_by_hand_runs_as_it_says(tmp_path):
    """The README's "Referee a game by hand" commands, run as written (all
    but `serve`): each exits 0 but the blocked touch (exit 2, its penalty
    recorded), and the scores come out as its comments say."""
    import re
    import shlex
    import subprocess
    import sys
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("**Referee a game by hand**", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [re.sub(r"\s+#.*$", "", ln).strip() for ln in block.splitlines() if ln.startswith("companion ")]
    assert len(lines) == 8 and lines[-1].startswith("companion serve")
    outs = []
    for line in lines[:-1]:
        argv, target = shlex.split(line), None
        if ">" in argv:
            argv, target = argv[:argv.index(">")], argv[argv.index(">") + 1]
        done = subprocess.run([sys.executable, "-m", "companion", *argv[1:]], cwd=tmp_path, capture_output=True,
                              text=True)
        assert done.returncode == (2 if argv[2:3] == ["touch"] else 0), (line, done.stderr)
        if target:
            (tmp_path / target).write_text(done.stdout, encoding="utf-8")
        outs.append(done.stdout + done.stderr)
    assert "+300 season pair" in outs[3] and "turn: Ada" in outs[3]
    assert "-100 blocked tile touched" in outs[4] and "(recorded as event #3)" in outs[4]
    assert "the referee undid event #3" in outs[5]
    assert "Ada: 10,300" in outs[6]
