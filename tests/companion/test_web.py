"""The scoreboard's player routes (GET only): pages, /api/state, /api/board,
/api/check, /api/games, the QR code, evidence files and their safety, and the
live event stream with Last-Event-ID replay.  Values are worked out by hand
from the mini layout in conftest.py and Love Mahjong 2.2 / 2.5 (10,000 start
tokens; a pair of 1s is a terminal pair, +200)."""

from __future__ import annotations

import json
import re
from pathlib import Path
import os
import threading
import time

import pytest

from companion.ledger import Ledger
from webgame import A, B, B2, C, D, E, start_mini


def read_sse(resp, want: int, limit: int = 200) -> tuple[list[dict], list[str]]:
    """Read a streamed response until ``want`` ledger messages arrived
    (bounded by ``limit`` chunks); returns the messages and the raw chunks."""
    msgs, chunks = [], []
    it = iter(resp.response)
    for _ in range(limit):
        chunk = next(it)
        text = chunk.decode() if isinstance(chunk, bytes) else chunk
        chunks.append(text)
        for block in text.split("\n\n"):
            lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(":"))
            if lines.get("event") == "ledger":
                msgs.append({"id": int(lines["id"]), "data": json.loads(lines["data"])})
        if len(msgs) >= want:
            break
    resp.close()
    return msgs, chunks


# --------------------------------------------------------------------------- pages


def test_index_without_game_waits(client):
    rv = client.get("/")
    assert rv.status_code == 200
    html = rv.get_data(as_text=True)
    assert "Waiting for the referee to start a game" in html
    assert 'id="state-data">null<' in html


def test_index_shows_game_state_and_board(client, mini_game):
    rv = client.get("/")
    assert rv.status_code == 200
    html = rv.get_data(as_text=True)
    start = html.index('id="state-data">') + len('id="state-data">')
    state = json.loads(html[start:html.index("</script>", start)])
    assert [p["name"] for p in state["players"]] == ["Ann", "Ben"]
    assert state["turn"] == "Ann"
    assert html.count('class="tile ') == 6            # every tile drawn
    assert 'data-slot="2,0,0"' in html
    assert "Love Mahjong" in html
    # board.js marks the clock "low" under 30 s; app.css reds ".timer.low"
    assert 'class="stat timer" id="timer"' in html
    assert ".timer.low .num" in Path(__file__).resolve().parents[2].joinpath(
        "companion/web/static/app.css").read_text()


def test_index_unknown_game_404(client, mini_game):
    assert client.get("/?game=nope").status_code == 404


def test_security_headers_on_pages(client):
    rv = client.get("/")
    assert "script-src 'self'" in rv.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in rv.headers["Content-Security-Policy"]
    assert rv.headers["X-Content-Type-Options"] == "nosniff"
    assert rv.headers["Referrer-Policy"] == "no-referrer"


def test_qr_code_of_join_url(client, app):
    app.config["JOIN_URL"] = "http://192.0.2.7:8000/"
    rv = client.get("/qr.svg")
    assert rv.status_code == 200 and rv.mimetype == "image/svg+xml"
    assert b"<svg" in rv.data and b"http://192.0.2.7:8000/" in rv.data   # the title names the URL


# --------------------------------------------------------------------------- /api/state


def test_api_state_before_the_first_game_is_the_empty_state(client, web_ledger):
    # (session 54) it was 404 {"error": "no game yet ..."}: a script polling
    # the scoreboard before the referee starts had to special-case an error
    rv = client.get("/api/state")
    assert rv.status_code == 200
    st = rv.json
    assert st["waiting"] is True and st["game_id"] is None and st["turn"] is None
    assert st["players"] == [] and st["last_events"] == [] and st["last_id"] == 0 and st["games"] == []
    assert client.get("/api/state?game=g1").status_code == 404       # a named game is still looked up
    start_mini(web_ledger)
    st = client.get("/api/state").json
    assert st["waiting"] is False and st["game_id"] == "g1" and len(st["players"]) == 2


def test_api_state_replays_a_game_once_while_its_events_stay_the_same(client, mini_game, monkeypatch):
    # every phone asks for the state on every event: with 40 phones each
    # request's replay took the server to 1.3 s a state (a break-test,
    # session 59); the replay is kept while the game's events stay the same
    import time
    from companion.web import scoreboard
    replays = []
    real = scoreboard.player_state_base
    monkeypatch.setattr(scoreboard, "player_state_base", lambda evs: replays.append(len(evs)) or real(evs))
    first = client.get("/api/state").json
    time.sleep(0.01)
    again = client.get("/api/state").json
    assert replays == [1] and again["server_time"] > first["server_time"]
    assert {k: v for k, v in again.items() if k != "server_time"} == \
        {k: v for k, v in first.items() if k != "server_time"}
    mini_game.append("g1", "pass", {"player": "Ann"}, None, 1001.0)        # the game moves on: replayed
    moved = client.get("/api/state").json
    assert replays == [1, 2] and moved["turn"] == "Ben" and moved["last_id"] == first["last_id"] + 1
    later = client.get("/api/state").json
    assert {**later, "server_time": None} == {**moved, "server_time": None} and replays == [1, 2]


def test_api_state_values(client, mini_game):
    st = client.get("/api/state").get_json()
    assert st["game_id"] == "g1" and st["variant"] == "love" and st["mode"] == "hand-builder"
    assert [(p["name"], p["score"], p["tokens"]) for p in st["players"]] == [("Ann", 10_000, 10_000),
                                                                            ("Ben", 10_000, 10_000)]
    assert st["token_name"] == "Crystal Harmony tokens"
    assert st["hand_mode"] is True
    assert st["turn"] == "Ann"
    assert st["tiles_left"] == 6 and st["tiles_total"] == 6
    assert st["free_pairs_left"] == 2                    # A+C (hearts-1) and D+E (roses-3)
    assert st["last_id"] == 1
    assert [p["mark"]["label"] for p in st["players"]] == ["P1", "P2"]
    assert st["players"][0]["mark"]["shape"] != st["players"][1]["mark"]["shape"]
    assert isinstance(st["server_time"], float)
    assert st["games"][0]["game_id"] == "g1"


def test_api_state_after_a_claim(client, mini_game):
    from companion.session import GameSession
    GameSession(mini_game, "g1").claim("Ann", [A, C])
    st = client.get("/api/state?game=g1").get_json()
    ann = st["players"][0]
    assert ann["score"] == 10_200                        # terminal pair: +200 (Love 2.5)
    assert ann["rack"] == ["hearts-1", "hearts-1"]
    assert ann["faces"]["hearts-1"]["name"] == "1 Single Heart"
    assert st["turn"] == "Ann"                           # a valid match grants an extra turn (Law 2)
    assert st["tiles_left"] == 4
    assert st["last_events"][-1]["type"] == "claim" and "Ann claimed" in st["last_events"][-1]["text"]


def test_api_state_unknown_game(client, mini_game):
    rv = client.get("/api/state?game=nope")
    assert rv.status_code == 404 and "nope" in rv.json["error"]


def test_api_games(client, mini_game):
    start_mini(mini_game, gid="g2", players=("Cy", "Di"))
    games = client.get("/api/games").json["games"]
    assert [(g["game_id"], g["players"]) for g in games] == [("g1", ["Ann", "Ben"]), ("g2", ["Cy", "Di"])]


# --------------------------------------------------------------------------- board and check a tile


def test_api_board_flags_and_hidden_faces(client, mini_game):
    b = client.get("/api/board").get_json()
    by = {tuple(s["slot"]): s for s in b["slots"]}
    assert by[tuple(B)]["free"] is False and by[tuple(B)]["covered"] is True
    assert by[tuple(B)]["face"] is None                  # covered: its face stays hidden
    assert by[tuple(B2)]["free"] is True and by[tuple(B2)]["face"]["id"] == "hearts-2"
    assert [by[tuple(s)]["free"] for s in (A, C, D, E)] == [True, True, True, True]
    assert b["bounds"] == [0, 0, 14, 2] and b["depth"] == 2 and b["free"] == 5


def test_board_svg_draws_free_and_blocked_differently(client, mini_game):
    rv = client.get("/api/board.svg")
    assert rv.mimetype == "image/svg+xml"
    svg = rv.get_data(as_text=True)
    assert svg.count('class="tile free') == 5 and svg.count('class="tile blocked') == 1
    assert svg.count('class="hatch"') == 1               # the pattern, not colour alone
    assert 'aria-label="tile 2,0,0, blocked"' in svg
    assert 'aria-label="tile 0,0,0, free, 1 Single Heart"' in svg


def test_tiles_off_the_table_are_drawn_waiting_and_listed_with_their_item(client, mini_game):
    # B2 and A left the table unsettled (docs/RULES.md 1.5): not plain empty
    # slots, but a "?" outline on their own layer, named in the item's line
    item = mini_game.append("g1", "needs-referee", {"reason": "faces not sure", "off_table": [B2, A]},
                            None, 1001.0)
    svg = client.get("/api/board.svg").get_data(as_text=True)
    assert svg.count('class="offtable"') == 2
    assert f'aria-label="tile 2,0,1: off the table, waiting for the referee (item #{item.id})"' in svg
    assert svg.count('class="tile free') == 4                 # B is free now: nothing on it, A gone
    needs = client.get("/api/state").get_json()["needs_referee"]
    assert [(n["id"], n["off_table"]) for n in needs] == [(item.id, [B2, A])]
    mini_game.append("g1", "correction", {"changes": {"resolved": True, "decision": "none"}}, item.id, 1002.0)
    svg = client.get("/api/board.svg").get_data(as_text=True)
    assert 'class="offtable"' not in svg and client.get("/api/state").get_json()["needs_referee"] == []


def test_check_blocked_tile_names_cover_and_pinch(client, mini_game):
    r = client.get("/api/check?slot=2,0,0").get_json()
    assert r["verdict"] == "blocked" and r["free"] is False
    assert r["covered_by"] == [B2] and r["left"] == [A] and r["right"] == [C]
    assert r["covered"] is True and r["pinched"] is True
    assert r["text"] == "2,0,0 is blocked: covered by 2,0,1; pinched between 0,0,0 (left) and 4,0,0 (right)"
    assert r["face"] is None


def test_check_free_tile(client, mini_game):
    r = client.get("/api/check?slot=8,0,0").get_json()
    assert r["verdict"] == "free" and r["free"] is True
    assert r["text"] == "8,0,0 is free: nothing on top and its left side is open"
    assert r["face"]["id"] == "roses-3"


def test_check_at_an_earlier_event(client, mini_game):
    from companion.session import GameSession
    GameSession(mini_game, "g1").claim("Ann", [A, C])
    now = client.get("/api/check?slot=2,0,0").get_json()
    assert now["pinched"] is False and now["covered_by"] == [B2]       # A and C are gone
    then = client.get("/api/check?slot=2,0,0&at=1").get_json()
    assert then["pinched"] is True
    gone = client.get("/api/check?slot=0,0,0").get_json()
    assert gone["verdict"] == "empty" and gone["free"] is None


def test_check_a_tile_off_the_table_names_its_item(client, mini_game):
    # a break-test (session 48): the phone said such a tile "is not on the
    # board", as if it were gone for good
    item = mini_game.append("g1", "needs-referee", {"reason": "faces not sure", "off_table": [B2, A]},
                            None, 1001.0)
    r = client.get("/api/check?slot=2,0,1").get_json()
    assert r["verdict"] == "empty" and r["off_table_item"] == item.id
    assert r["text"] == f"2,0,1 is off the board: its tile left the table and waits for the referee (item #{item.id})"
    assert client.get("/api/check?slot=8,0,0").get_json()["off_table_item"] is None
    mini_game.append("g1", "correction", {"changes": {"resolved": True, "decision": "none"}}, item.id, 1002.0)
    r = client.get("/api/check?slot=2,0,1").get_json()
    assert r["off_table_item"] is None and r["text"] == "2,0,1 is not on the board"


@pytest.mark.parametrize("query, code", [("", 400), ("?slot=1,2", 400), ("?slot=9,9,9", 400),
                                         ("?slot=2,0,0&at=x", 400), ("?slot=2,0,0&at=-1", 400),
                                         ("?slot=2,0,0&at=1_0", 400)])
def test_check_bad_requests(client, mini_game, query, code):
    rv = client.get("/api/check" + query)
    assert rv.status_code == code
    assert rv.json["error"]


# --------------------------------------------------------------------------- evidence


@pytest.fixture
def evidence(app, mini_game, tmp_path):
    """A penalty event with evidence files beside the ledger (relative and absolute paths)."""
    folder = tmp_path / "ledger-evidence" / "0001-penalty"
    folder.mkdir(parents=True)
    (folder / "before.jpg").write_bytes(b"\xff\xd8before")
    (folder / "after.jpg").write_bytes(b"\xff\xd8after")
    (folder / "overlay.png").write_bytes(b"\x89PNGoverlay")
    quads = [[[10 * i, 0], [10 * i + 8, 0], [10 * i + 8, 12], [10 * i, 12]] for i in range(6)]
    (folder / "slots.json").write_text(json.dumps({"slots": [list(s) for s in (A, B, C, B2, D, E)],
                                                   "quads": quads}))
    evd = {"before": "ledger-evidence/0001-penalty/before.jpg",           # relative to the ledger's folder
           "after": str(folder / "after.jpg"), "overlay": str(folder / "overlay.png"),
           "slots": str(folder / "slots.json"), "reason": "2,0,0 is blocked: covered by 2,0,1"}
    from companion.session import GameSession
    res = GameSession(mini_game, "g1").touch("Ann", B)
    assert res.error and res.written[0].type == "penalty"
    pen = res.written[0]
    # the camera referee writes its events with evidence: append one like it
    ev = mini_game.append("g1", "invalid", {"player": "Ann", "slots": [A, D], "faces": ["hearts-1", "roses-3"],
                                            "code": "no-match", "reason": "1 Single Heart does not match 3",
                                            "evidence": evd}, None, 1001.0)
    return {"penalty": pen, "event": ev, "folder": folder, "tmp": tmp_path}


def test_evidence_files_served(client, evidence):
    eid = evidence["event"].id
    with client.get(f"/evidence/{eid}/before") as rv:
        assert rv.status_code == 200 and rv.data == b"\xff\xd8before" and rv.mimetype == "image/jpeg"
    with client.get(f"/evidence/{eid}/overlay") as rv:
        assert rv.mimetype == "image/png"
    with client.get(f"/evidence/{eid}/slots") as rv:
        assert rv.mimetype == "application/json" and len(rv.json["quads"]) == 6


def test_evidence_json_and_event_page(client, evidence):
    eid = evidence["event"].id
    d = client.get(f"/api/evidence/{eid}").get_json()
    assert d["event"]["type"] == "invalid" and d["reason"] == "1 Single Heart does not match 3"
    assert d["files"]["before"] == f"/evidence/{eid}/before"
    assert "invalid attempt" in d["text"]
    by = {tuple(s["slot"]): s for s in d["slots"]}
    assert by[tuple(B)]["free"] is False and by[tuple(B)]["covered"] is True
    assert by[tuple(A)]["free"] is True and by[tuple(A)]["quad"] == [[0, 0], [8, 0], [8, 12], [0, 12]]
    html = client.get(f"/event/{eid}").get_data(as_text=True)
    assert "1 Single Heart does not match 3" in html and f"/evidence/{eid}/overlay" in html
    pen = evidence["penalty"].id
    html = client.get(f"/event/{pen}").get_data(as_text=True)
    assert "covered by 2,0,1" in html and "No camera evidence" in html
    assert client.get("/event/999").status_code == 404


def test_evidence_refuses_what_is_not_referenced_or_outside(client, app, evidence, mini_game, tmp_path_factory):
    eid = evidence["event"].id
    assert client.get(f"/evidence/{eid}/event").status_code == 404          # not a kind
    assert client.get(f"/evidence/{eid}/../../ledger.db").status_code == 404
    assert client.get(f"/evidence/{evidence['penalty'].id}/before").status_code == 404   # no evidence
    outside = tmp_path_factory.mktemp("outside") / "secret.png"
    outside.write_bytes(b"secret")
    link = evidence["folder"] / "link.png"
    os.symlink(outside, link)
    bad = {"before": str(outside),                                        # outside the allowed folders
           "after": "../" + outside.parent.name + "/secret.png",          # traversal
           "overlay": str(link),                                          # a link leading outside
           "slots": app.config["LEDGER"]}                                 # not an image or JSON file
    ev = mini_game.append("g1", "needs_referee", {"reason": "x", "evidence": bad}, None, 1002.0)
    for kind in ("before", "after", "overlay", "slots"):
        assert client.get(f"/evidence/{ev.id}/{kind}").status_code == 404, kind
    app.config["EVIDENCE_DIRS"] = [str(outside.parent)]                   # allowed once configured
    with client.get(f"/evidence/{ev.id}/before") as rv:
        assert rv.data == b"secret"


def test_corrections_cannot_redirect_evidence(client, evidence, mini_game):
    eid = evidence["event"].id
    mini_game.append("g1", "correction", {"changes": {"evidence": {"before": "/etc/passwd"}}}, eid, 1003.0)
    with client.get(f"/evidence/{eid}/before") as rv:
        assert rv.data == b"\xff\xd8before"                           # the ledger's own record


# --------------------------------------------------------------------------- live stream


def test_events_stream_replays_after_last_event_id(client, mini_game):
    mini_game.append("g1", "pass", {"player": "Ann"}, None, 1001.0)
    mini_game.append("g1", "pass", {"player": "Ben"}, None, 1002.0)
    rv = client.get("/api/events", headers={"Last-Event-ID": "1"}, buffered=False)
    assert rv.status_code == 200 and rv.mimetype == "text/event-stream"
    assert rv.headers["Cache-Control"].startswith("no-cache")
    msgs, chunks = read_sse(rv, 2)
    assert [m["id"] for m in msgs] == [2, 3]
    assert msgs[0]["data"]["type"] == "pass" and msgs[0]["data"]["player"] == "Ann"
    assert msgs[1]["data"]["game_id"] == "g1" and msgs[1]["data"]["text"] == "pass by Ben"
    assert chunks[0].startswith("retry: ")
    assert "id: 2\nevent: ledger\ndata: {" in "".join(chunks)


def test_the_live_stream_names_a_claims_faces_as_the_state_does(client, mini_game):
    # a scoreboard break-test: the stream's text read "Ann claimed 0,0,0 4,0,0"
    # where /api/state said which tiles; a game started after the stream's
    # hub opened is named too
    from companion.tiles import tileset
    first, _ = read_sse(client.get("/api/events", headers={"Last-Event-ID": "0"}, buffered=False), 1)
    assert first[0]["id"] == 1                                           # the hub opened with g1 in the ledger
    mini_game.append("g1", "claim", {"player": "Ann", "slots": [[0, 0, 0], [4, 0, 0]],
                                     "faces": ["hearts-1", "hearts-1"]}, None, 1001.0)       # id 2
    start_mini(mini_game, "mindful", "zen-solitaire", ("Mei",), gid="g2",
               faces=("circles-1", "circles-2", "circles-1", "circles-3", "circles-2", "circles-3"))   # id 3
    mini_game.append("g2", "claim", {"player": "Mei", "slots": [[0, 0, 0], [4, 0, 0]],
                                     "faces": ["circles-1", "circles-1"]}, None, 1003.0)     # id 4
    msgs, _ = read_sse(client.get("/api/events", headers={"Last-Event-ID": "1"}, buffered=False), 3)
    heart, circle = tileset("love").face("hearts-1").name, tileset("mindful").face("circles-1").name
    assert msgs[0]["data"]["text"] == f"Ann claimed {heart} + {heart} (0,0,0 4,0,0)"
    assert msgs[2]["data"]["text"] == f"Mei claimed {circle} + {circle} (0,0,0 4,0,0)"


def test_events_stream_last_id_query_and_game_filter(client, mini_game):
    start_mini(mini_game, gid="g2", players=("Cy", "Di"))           # id 2
    mini_game.append("g1", "pass", {"player": "Ann"}, None, 1001.0)  # id 3
    msgs, _ = read_sse(client.get("/api/events?last_id=0&game=g1", buffered=False), 2)
    assert [m["id"] for m in msgs] == [1, 3]


def test_events_stream_sends_new_events_and_keepalive(client, app, mini_game):
    rv = client.get("/api/events", buffered=False)        # no Last-Event-ID: from now on
    it = iter(rv.response)
    first = next(it).decode()
    assert first.startswith("retry:")
    other = Ledger(app.config["LEDGER"])                  # "another process" writes
    timer = threading.Timer(0.05, lambda: other.append("g1", "pass", {"player": "Ann"}, None, 1001.0))
    timer.start()
    got = ""
    for _ in range(100):
        got += next(it).decode()
        if "event: ledger" in got and ": keep-alive" in got:
            break
    rv.close()
    timer.join()
    other.close()
    assert "id: 2\nevent: ledger" in got
    assert ": keep-alive\nevent: alive\ndata: {}\n\n" in got


@pytest.mark.parametrize("value", ["abc", "-3", "1_0", "\uff11", "0x10"])
def test_events_stream_bad_last_event_id(client, value):
    rv = client.get("/api/events", headers={"Last-Event-ID": value})
    assert rv.status_code == 400 and "Last-Event-ID" in rv.json["error"]


def test_a_last_event_id_in_full_width_digits_is_quoted_as_sent(client):
    # WSGI decodes headers as Latin-1: the UTF-8 bytes of "３０" came back as
    # mojibake in the message
    rv = client.get("/api/events", headers={"Last-Event-ID": "\uff13\uff10".encode().decode("latin-1")})
    assert rv.status_code == 400
    assert rv.json["error"] == "Last-Event-ID must be a whole number, got '\uff13\uff10'"


def _after_a_new_event(it, mini_game) -> str:
    """What a stream (an iterator of its chunks) sends up to the first ledger
    message once a new event is written to the mini game."""
    mini_game.append("g1", "pass", {"player": "Ann"}, None, 1001.0)
    got = ""
    for _ in range(100):
        got += next(it).decode()
        if "event: ledger" in got:
            break
    return got


def test_last_event_id_beyond_the_newest_is_clamped(client, mini_game):
    rv = client.get("/api/events", headers={"Last-Event-ID": "999"}, buffered=False)
    it = iter(rv.response)
    assert next(it).decode().startswith("retry: ")
    # the client is told its id is from another ledger (the newest here is 1)
    assert next(it).decode() == 'id: 1\nevent: reset\ndata: {"asked": 999, "newest": 1}\n\n'
    got = _after_a_new_event(it, mini_game)
    rv.close()
    assert "id: 2\n" in got
    assert "event: reset" not in got


def test_a_last_event_id_at_the_newest_gets_no_reset(client, mini_game):
    rv = client.get("/api/events", headers={"Last-Event-ID": "1"}, buffered=False)
    it = iter(rv.response)
    next(it)
    got = _after_a_new_event(it, mini_game)
    rv.close()
    assert got.startswith("id: 2\nevent: ledger") and "event: reset" not in got


# --------------------------------------------------------------------------- GET only


def test_numbers_too_long_for_an_event_id_are_404_or_400_not_500(client, mini_game):
    # Python refuses to read a number of over 4,300 digits: these were 500s
    # (a break-test, session 55)
    big = "9" * 5000
    for url in (f"/event/{big}", f"/api/evidence/{big}", f"/evidence/{big}/before", "/event/" + "1" * 20):
        assert client.get(url).status_code == 404, url
    for url in (f"/api/board?at={big}", f"/api/board.svg?at={big}", f"/api/check?slot=0,0,0&at={big}",
                f"/api/events?last_id={big}"):
        rv = client.get(url)
        assert rv.status_code == 400 and "a number of 5000 digits: no event id is that large" in rv.json["error"], url
    rv = client.get("/api/events", headers={"Last-Event-ID": big})
    assert rv.status_code == 400 and rv.json["error"] == ("Last-Event-ID is a number of 5000 digits: no event id "
                                                          "is that large")
    assert client.get("/event/1").status_code == 200


def test_only_the_referee_blueprint_changes_anything(app):
    for rule in app.url_map.iter_rules():
        changing = rule.methods - {"GET", "HEAD", "OPTIONS"}
        if changing:
            assert rule.endpoint.startswith("referee."), rule
        if rule.endpoint.startswith(("board.", "api.", "evidence.")):
            assert not changing, rule


def test_player_routes_refuse_post(client, mini_game):
    for url in ("/", "/api/state", "/api/events", "/api/check?slot=0,0,0", "/qr.svg"):
        assert client.post(url).status_code == 405, url


def test_init_ledger_command(runner, app):
    result = runner.invoke(args=["init-ledger"])
    assert "Ledger ready" in result.output
    with Ledger(app.config["LEDGER"]) as led:
        assert led.events() == []


def test_an_event_id_beyond_64_bits_is_404_not_a_500(client, mini_game):
    # /event/99999999999999999999 reached SQLite and raised OverflowError
    for url in ("/event/99999999999999999999", "/api/evidence/99999999999999999999", "/event/-1"):
        assert client.get(url).status_code == 404, url


def test_api_events_of_an_unknown_game_is_404_as_its_state(client, mini_game):
    # a mistyped ?game= once gave a stream that stayed silent for ever
    rv = client.get("/api/events?game=nope")
    assert rv.status_code == 404 and rv.json["error"] == "no game 'nope' in the ledger"
    # a long id is quoted cut, a NUL escaped (a 200 KB id came back whole)
    rv = client.get("/api/state?game=" + "x" * 200_000 + "%00")
    assert rv.status_code == 404
    assert rv.json["error"] == "no game '" + "x" * 80 + "' (200001 characters) in the ledger"
    rv = client.get("/api/state?game=a%00b")
    assert rv.json["error"] == "no game 'a\\x00b' in the ledger"
    msgs, _ = read_sse(client.get("/api/events?last_id=0&game=g1", buffered=False), 1)
    assert msgs[0]["data"]["type"] == "game_started"


@pytest.mark.parametrize("data", ["[]", "5", "null", '"x"'])
def test_a_ledger_row_whose_data_is_not_an_object_is_a_referee_item(client, mini_game, data):
    # the schema's CHECK admits any valid JSON: a row another program wrote
    # with a list as its data gave HTTP 500 on every page of the game
    import sqlite3
    path = mini_game.path
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO events (game_id, type, data, ref, t) VALUES ('g1', 'claim', ?, NULL, 5)", (data,))
    st = client.get("/api/state?game=g1")
    assert st.status_code == 200
    needs = st.json["needs_referee"]
    assert [n["reason"] for n in needs] == [f"claim #2 does not fit the board: its data is not a JSON object: {data}"]
    assert client.get("/?game=g1").status_code == 200
    msgs, _ = read_sse(client.get("/api/events?last_id=0&game=g1", buffered=False), 2)
    assert msgs[1]["data"]["data"] == {"unreadable_data": data}


@pytest.mark.parametrize("etype,data,ref", [
    ("claim", {"player": 5, "slots": [[1, 2]], "faces": "x"}, None),       # a slot of two numbers
    ("touch", {"player": "Ann", "slot": [7, 0]}, None),
    ("word", {"player": "Ann", "slots": 5, "word": 5}, None),
    ("needs_referee", {"player": "Ann", "slots": 5, "off_table": 5}, None),
    ("correction", {"changes": "void"}, 1),                                # changes that are not an object
    ("correction", {"changes": ["player", "Ann"]}, 1),
])
def test_a_ledger_row_whose_fields_have_the_wrong_shape_is_a_referee_item(client, mini_game, referee, capsys,
                                                                          etype, data, ref):
    # (break-test, session 36) an object whose fields had the wrong shape
    # (a slot [1, 2], "changes": "void") raised TypeError / ValueError in the
    # replay: HTTP 500 with a traceback on every page of the game, and a
    # traceback from `companion game show`
    import sqlite3
    with sqlite3.connect(mini_game.path) as conn:
        conn.execute("INSERT INTO events (game_id, type, data, ref, t) VALUES ('g1', ?, ?, ?, 5)",
                     (etype, json.dumps(data), ref))
    st = client.get("/api/state?game=g1")
    assert st.status_code == 200
    assert client.get("/?game=g1").status_code == 200
    assert client.get("/api/board.svg?game=g1").status_code == 200
    assert client.get("/event/2").status_code == 200
    if etype != "correction":
        assert [n["id"] for n in st.json["needs_referee"]] == [2]
    referee.login()
    assert client.get("/referee/?game=g1").status_code == 200
    assert client.get("/referee/panel?game=g1").status_code == 200
    assert "Traceback" not in capsys.readouterr().err


def test_a_ledger_the_server_cannot_read_is_503_in_words(client, app, mini_game, capsys):
    # once "Bad request: cannot open ledger /path/l.db: ..." on the phones:
    # a fault of the server, whose details belong on its terminal
    path = Path(app.config["LEDGER"])
    junk = path.with_name("junk")
    junk.write_bytes(b"not a database at all" * 10)
    os.replace(junk, path)                    # the file swapped under the running server
    rv = client.get("/")
    assert rv.status_code == 503
    page = rv.get_data(as_text=True)
    assert "The scoreboard cannot read the game just now" in page and str(path) not in page
    rv = client.get("/api/state")
    assert rv.status_code == 503 and rv.json["error"].startswith("The scoreboard cannot read the game just now")
    err = capsys.readouterr().err
    assert f"companion serve: cannot read the ledger: cannot open ledger {path}: not an SQLite database" in err


def test_the_live_stream_keeps_the_deal_hidden(client, mini_game):
    # every phone reads the stream: the first event carried all the faces
    # (covered tiles' too) and the deal's seed, from which `companion deal`
    # rebuilds them; /api/board shows only faces nothing covers
    start_event = mini_game.events("g1")[0]
    assert "faces" in start_event.data                     # (the ledger keeps the deal)
    msgs, _ = read_sse(client.get("/api/events?last_id=0&game=g1", buffered=False), 1)
    data = msgs[0]["data"]["data"]
    assert msgs[0]["data"]["type"] == "game_started"
    assert "faces" not in data and "seed" not in data
    assert data["players"] == ["Ann", "Ben"] and data["slots"] == start_event.data["slots"]
    board = client.get("/api/board?game=g1").json
    covered = [s for s in board["slots"] if s["covered"]]
    assert covered and all(s["face"] is None for s in covered)


def test_the_event_page_outlines_its_tiles_and_says_when_its_pictures_are_gone(client, evidence):
    import shutil
    pen = evidence["penalty"]                             # Ann touched the covered tile B
    html = client.get(f"/event/{pen.id}").get_data(as_text=True)
    start = html.index('data-slot="%s"' % ",".join(map(str, B)))
    tile = html[html.rindex("<g ", 0, start):start]
    assert 'class="tile blocked hl' in tile             # the penalised tile, outlined
    assert html.count(" hl ") == 1 and "outlined with a thick dashed line" in html
    eid = evidence["event"].id                            # an invalid attempt of A and D: both outlined
    html = client.get(f"/event/{eid}").get_data(as_text=True)
    assert html.count(" hl ") == 2 and f"/evidence/{eid}/overlay" in html
    # the evidence folder moved away: no broken pictures, and a sentence why
    shutil.rmtree(evidence["folder"])
    html = client.get(f"/event/{eid}").get_data(as_text=True)
    assert f"/evidence/{eid}/overlay" not in html and f"/evidence/{eid}/before" not in html
    assert "The camera's pictures of this event are not on this scoreboard" in html
    assert "No camera evidence" not in html


def test_a_lone_tile_item_s_page_outlines_the_tile_it_may_have_left_with(client, mini_game):
    # the camera saw A leave alone while C, that could match it, stood
    # unread (bench game 13100): the item's page outlines C, standing, as
    # the tile to look for, beside A's emptied slot
    item = mini_game.append("g1", "needs-referee", {"player": "Ann", "reason": "a tile left the board alone",
                                                    "slots": [A], "off_table": [A], "may_pair_with": [C]},
                            None, 1001.0)
    html = client.get(f"/event/{item.id}").get_data(as_text=True)
    start = html.index('data-slot="%s"' % ",".join(map(str, C)))
    assert " hl" in html[html.rindex("<g ", 0, start):start]
    assert html.count(" hl ") == 1                        # C; A is off the table (no tile to outline)
    bad = mini_game.append("g1", "needs-referee", {"reason": "x", "slots": [D], "may_pair_with": "nonsense"},
                           None, 1002.0)
    assert client.get(f"/event/{bad.id}").status_code == 200
    # entries that are not [x, y, z] whole numbers outline nothing (the
    # console leaves them out too)
    odd = mini_game.append("g1", "needs-referee",
                           {"reason": "x", "slots": [D], "may_pair_with": [["400"], [4.9, 0, 0]]}, None, 1003.0)
    html = client.get(f"/event/{odd.id}").get_data(as_text=True)
    start = html.index('data-slot="%s"' % ",".join(map(str, C)))
    assert " hl" not in html[html.rindex("<g ", 0, start):start]


def test_board_labels_of_three_letters_are_fitted_to_their_tile(client, web_ledger):
    # "Bow", "Wng", "Sum" ran into the next tile ("WngWng"); one or two
    # letters ("8", "E3") keep their natural width
    faces = ("cupid-bow", "hearts-2", "cupid-bow", "hearts-2", "season-summer", "season-summer")
    start_mini(web_ledger, faces=faces)
    svg = client.get("/api/board.svg").get_data(as_text=True)
    labs = re.findall(r'<text class="lab"[^>]*>([^<]*)</text>', svg)
    fitted = re.findall(r'<text class="lab"[^>]*textLength="[\d.]+" lengthAdjust="spacingAndGlyphs"[^>]*>([^<]*)<', svg)
    assert sorted(fitted) == sorted(t for t in labs if len(t) > 2) and fitted and len(fitted) < len(labs)


def test_the_live_stream_keeps_a_reshuffles_seed_and_a_blocked_tiles_face_hidden(client, mini_game):
    # a reshuffle's seed follows from the game's (the deal rebuilt from it),
    # and a touched blocked tile may lie under another
    from companion.session import GameSession
    res = GameSession(mini_game, "g1").touch("Ann", B)                 # B lies under B2
    assert res.written[0].type == "penalty" and res.written[0].data["face"] == "hearts-2"
    mini_game.append("g1", "reshuffle", {"player": "Ann", "seed": 7064, "faces": ["x"] * 6}, None, 1002.0)
    msgs, _ = read_sse(client.get("/api/events?last_id=1&game=g1", buffered=False), 2)
    pen, shuf = (m["data"] for m in msgs)
    assert pen["type"] == "penalty" and "face" not in pen["data"] and pen["data"]["slot"] == B
    assert shuf["type"] == "reshuffle" and shuf["data"] == {"player": "Ann"}


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_ledger_deleted_or_replaced_under_the_server_is_503_not_a_new_empty_one(client, app, mini_game,
                                                                                  capsys, how):
    # once: a new empty ledger made in its place, every phone told "no game
    # yet", and the live stream silent for ever
    path = Path(app.config["LEDGER"])
    assert client.get("/api/state").status_code == 200
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    if how == "replaced":
        with Ledger(path) as other:
            start_mini(other, gid="other")
    rv = client.get("/api/state")
    assert rv.status_code == 503 and rv.json["error"].startswith("The scoreboard cannot read the game just now")
    assert path.exists() == (how == "replaced")             # no new empty file made
    err = capsys.readouterr().err
    assert f"companion serve: cannot read the ledger: {path} was deleted or replaced while the scoreboard ran" in err


def test_the_terminal_gets_the_same_unreadable_ledger_line_once_a_minute(client, app, mini_game, capsys,
                                                                        monkeypatch):
    # a break-test's terminal got the line once per refused request: 4 alike
    # lines in 6 s with one phone page open
    import companion.web.db as db
    path = Path(app.config["LEDGER"])
    assert client.get("/api/state").status_code == 200
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    clock = [1000.0]
    monkeypatch.setattr(db, "_clock", lambda: clock[0])
    for _ in range(4):
        assert client.get("/api/state").status_code == 503
        clock[0] += 2.0
    line = f"companion serve: cannot read the ledger: {path} was deleted or replaced while the scoreboard ran"
    assert capsys.readouterr().err.count(line) == 1
    clock[0] += db.UNAVAILABLE_REPEAT_S
    assert client.get("/api/state").status_code == 503
    assert capsys.readouterr().err.count(line) == 1            # a minute on: said again


def test_a_ledger_deleted_before_the_first_request_is_503_too(tmp_path, capsys):
    # the file's identity was taken at the first request: a ledger deleted
    # between "companion serve" starting and the first phone got a new,
    # empty ledger made in its place, and every phone was told "no game yet"
    from companion.web import create_app
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        start_mini(led)
    app = create_app({"LEDGER": str(path), "TESTING": True})
    path.unlink()
    rv = app.test_client().get("/api/state")
    assert rv.status_code == 503
    assert not path.exists()
    assert (f"companion serve: cannot read the ledger: {path} was deleted or replaced while the scoreboard ran"
            in capsys.readouterr().err)


def test_a_board_asked_at_an_event_before_the_game_began_says_so(client, mini_game):
    start_mini(mini_game, gid="g2", players=("Cy", "Di"))          # event #2
    rv = client.get("/api/board?at=1&game=g2")
    assert rv.status_code == 400 and rv.json["error"] == "event #1 comes before this game began (its first event is #2)"
    assert client.get("/api/board?at=2&game=g2").status_code == 200
    # an event not written yet: said so, not the board of now
    rv = client.get("/api/board?at=99999999999999999999999&game=g2")
    assert rv.status_code == 400 and rv.json["error"] == "at=99999999999999999999999 is past the ledger's newest event, #2"
    assert client.get("/api/check?slot=2,0,0&at=3&game=g2").status_code == 400


def test_the_event_page_shows_the_event_as_the_referee_corrected_it(client, evidence, mini_game):
    # a penalty given to the wrong player and corrected later (#4, written
    # after the camera's #3): the page said "Ann touched ... Player: Ann"
    # under a CORRECTED badge, while the scoreboard said Ben
    from companion.session import GameSession
    pen = evidence["penalty"]
    res = GameSession(mini_game, "g1").correct(pen.id, {"player": "Ben"}, "it was Ben's hand")
    assert res.ok
    fix = res.written[0].id
    html = client.get(f"/event/{pen.id}").get_data(as_text=True)
    assert "Ben touched blocked tile 2,0,0 (under another tile and between tiles on its left and right)" in html
    assert "Player: <strong>Ben</strong> (recorded as Ann)" in html
    assert f"#{fix}: referee corrected event #{pen.id}: player Ben (it was Ben&#39;s hand)" in html
    assert "CORRECTED" in html
    d = client.get(f"/api/evidence/{pen.id}").get_json()
    assert d["event"]["player"] == "Ben" and d["text"].startswith("Ben touched")
    # the correction voided in turn: the page reads as recorded, the change marked voided
    assert GameSession(mini_game, "g1").void(fix).ok
    html = client.get(f"/event/{pen.id}").get_data(as_text=True)
    assert "Ann touched blocked tile 2,0,0" in html and "(recorded as" not in html
    assert 'VOIDED</span>' in html


def test_free_pairs_are_a_lower_bound_while_free_faces_are_unseen(client, web_ledger):
    # a camera game records the faces it saw at the start: a free tile whose
    # face was covered then counts in no pair, and "8 free pairs left" was
    # shown where 11 stood
    faces = ("hearts-1", "hearts-2", "hearts-1", "hearts-2", None, "roses-3")     # D's face not seen yet
    start_mini(web_ledger, faces=faces)
    st = client.get("/api/state").get_json()
    assert st["free_pairs_left"] == 1 and st["free_faces_unknown"] == 1           # A+C known; D unknown
    html = client.get("/").get_data(as_text=True)
    assert '<span class="num" id="pairs-left">1+</span>' in html
    assert "free pairs known (1 free tile not yet seen)" in html


def test_live_streams_are_limited_per_device_and_in_all_and_freed_when_closed(client, app, mini_game):
    from companion.web.db import get_hub
    with app.app_context():
        hub = get_hub()
    hub.max_streams_per_client, hub.max_streams = 2, 3
    a = [client.get("/api/events", buffered=False) for _ in range(2)]
    assert [r.status_code for r in a] == [200, 200] and hub.streams == 2
    first = iter(a[0].response)
    assert next(first).startswith(b"retry:")
    # a third from the same device (a page reloaded) ends the oldest: it
    # would otherwise hold its place until the server next wrote to it
    c = client.get("/api/events", buffered=False)
    assert c.status_code == 200
    # the oldest stream ended, saying why: its page offers to reconnect
    # rather than end the next oldest in turn (pages behind one proxy address)
    assert list(first) == [b"event: evicted\ndata: {}\n\n"]
    a[0].close()
    assert hub.streams == 2
    # another device gets one, up to the limit in all; past it, 503 with when to try again
    other = app.test_client()
    other.environ_base["REMOTE_ADDR"] = "10.0.0.7"
    b = other.get("/api/events", buffered=False)
    assert b.status_code == 200 and hub.streams == 3
    third = app.test_client()
    third.environ_base["REMOTE_ADDR"] = "10.0.0.8"
    rv = third.get("/api/events")
    assert rv.status_code == 503 and rv.headers["Retry-After"] == "30"
    assert rv.json["error"].startswith("too many live pages are open")
    # pages are answered all along
    assert third.get("/api/state").status_code == 200
    # a stream closed, read or never read, frees its place
    for r in (a[1], c, b):
        r.close()
    assert hub.streams == 0
    ok = third.get("/api/events", buffered=False)
    assert ok.status_code == 200
    ok.close()
    assert hub.streams == 0


def test_one_address_keeps_its_streams_up_to_the_limit_and_the_next_ends_the_oldest(app):
    # with the default limit (8) the fifth stream from one address ended the
    # oldest: a negative slice (live[:-3]) is not empty (newcomer's report)
    from companion.web.db import get_hub
    with app.app_context():
        hub = get_hub()
    assert hub.max_streams_per_client == 8
    slots = [hub.reserve("10.0.0.5") for _ in range(8)]
    assert not any(s.evicted for s in slots) and hub.streams == 8
    ninth = hub.reserve("10.0.0.5")
    assert [s.evicted for s in slots] == [True] + [False] * 7 and not ninth.evicted
    other = hub.reserve("10.0.0.6")              # another address is not touched
    assert not other.evicted and sum(s.evicted for s in slots) == 1
    for s in (*slots, ninth, other):
        s.release()
    assert hub.streams == 0


def test_a_ledger_put_back_to_an_older_copy_under_the_server_is_503(client, app, mini_game, capsys, tmp_path):
    import sqlite3
    path = Path(app.config["LEDGER"])
    old = tmp_path / "backup.sqlite"
    with sqlite3.connect(path) as src, sqlite3.connect(old) as dst:
        src.backup(dst)                                     # 1 event
    for who in ("Ann", "Ben", "Ann"):
        mini_game.append("g1", "pass", {"player": who}, None, 1001.0)
    from companion.web.db import get_hub
    with app.app_context():
        hub = get_hub()
    hub.poll()
    assert hub.last_id == 4 and client.get("/api/state").status_code == 200
    with sqlite3.connect(old) as src, sqlite3.connect(path) as dst:
        src.backup(dst)                                     # the same file, back to 1 event
    hub._checked = 0.0
    hub.poll()
    assert hub.lost.startswith("went back to an earlier copy")
    rv = client.get("/api/state")
    assert rv.status_code == 503 and rv.json["error"].startswith("The scoreboard cannot read the game just now")
    assert client.get("/api/events").status_code == 503
    assert "went back to an earlier copy while the scoreboard ran" in capsys.readouterr().err


def test_open_streams_end_when_the_ledger_is_deleted_under_the_server(client, app, mini_game):
    rv = client.get("/api/events", buffered=False)
    it = iter(rv.response)
    assert next(it).decode().startswith("retry:")
    path = Path(app.config["LEDGER"])
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    from companion.web.db import get_hub
    with app.app_context():
        hub = get_hub()
    hub._checked = 0.0
    hub.poll()
    assert hub.lost == "was deleted or replaced while the scoreboard ran"
    # the stream ends (a page that reconnects is told why by the 503)
    assert list(it) == []
    rv.close()
    assert client.get("/api/events").status_code == 503


def test_api_state_gives_a_running_word_timer_as_of_the_request():
    from companion import game as G
    from companion.layouts import Layout, Slot
    from companion.web import scoreboard
    t0 = 1_700_000_000.0
    slots = tuple(Slot(4 * i, 0, 0) for i in range(4))
    data = G.start_data("word", "word-sprint", Layout("row", slots), list("CATS"), ["Sam"], 1,
                        {"countdown_seconds": 5})
    evs = [G.Event(1, "w", "game_started", data, None, t0)]
    # once: remaining 5.0 and elapsed 0.0 for ever, as of the last event
    t = scoreboard.player_state(evs, now=t0 + 2)["timer"]
    assert t["elapsed"] == 2 and t["remaining"] == 3 and t["running"]
    t = scoreboard.player_state(evs, now=t0 + 6)["timer"]
    assert t["elapsed"] == 5 and t["remaining"] == 0          # the countdown stops at its end
    # a game on its own clock (a typed --t) is left as of its last event
    evs2 = [G.Event(1, "w", "game_started", data, None, 0.0)]
    t = scoreboard.player_state(evs2, now=t0)["timer"]
    assert t["elapsed"] == 0 and t["remaining"] == 5



def test_a_poll_returns_only_after_a_look_at_the_file_in_progress(tmp_path, monkeypatch):
    # the hub's own thread may be half-way through its once-a-second look at
    # the file when a caller polls: the caller's poll must wait for that look
    # rather than skip its own (a test once saw the ledger's deletion missed)
    from companion.web import hub as hub_module
    path = tmp_path / "ledger.db"
    writer = Ledger(str(path))
    start_mini(writer)
    hub = hub_module.EventHub(str(path), poll_interval=0.0).start()
    import time

    def slow_stat(p):               # as if deleted, on a slow disk
        time.sleep(0.002)
        return None
    monkeypatch.setattr(hub_module, "file_key", slow_stat)
    try:
        missed = 0
        for _ in range(100):
            hub.lost = None
            hub._checked = 0.0
            hub.poll()
            missed += hub.lost is None
        assert missed == 0
    finally:
        hub.stop()
        writer.close()


def test_the_event_page_follows_the_ledger_and_says_as_of_when_it_was_drawn(client, mini_game):
    # (tester, session 49) an event page left open went on showing a voided
    # claim's scoring, with no VOIDED badge and no word that it was old: it
    # now follows the game's stream (event.js) and says as of when it stands
    from companion.session import GameSession
    claim = GameSession(mini_game, "g1").claim("Ann", [A, C]).written[0]
    html = client.get(f"/event/{claim.id}").get_data(as_text=True)
    assert 'data-events-url="/api/events"' in html and f'data-last-id="{claim.id}"' in html
    assert '<p id="live" class="live" role="status">' in html and 'id="ev-head"' in html
    assert re.search(r"As the ledger stood at \d\d:\d\d:\d\d \(event #%d\): reload the page for anything newer"
                     % claim.id, html)
    assert "VOIDED" not in html
    void = GameSession(mini_game, "g1").void(claim.id).written[0]
    html = client.get(f"/event/{claim.id}").get_data(as_text=True)
    head = html[html.index('id="ev-head"'):html.index("</header>")]     # what event.js draws again
    assert 'class="badge st-voided">VOIDED</p>' in head and f"#{void.id}: referee voided event #{claim.id}" in head
    assert f'data-last-id="{void.id}"' in html


def test_a_solo_quests_turns_are_in_the_state(client, web_ledger):
    # (tester, session 49) "turns 2 of 30" was in `companion game show` only
    from companion import game as G
    from companion.session import GameSession
    from webgame import mini_layout
    data = G.start_data("candy", "solo-quest", mini_layout(), ["hardcandy-1", "hardcandy-2", "hardcandy-1",
                                                                "hardcandy-2", "gummy-3", "gummy-3"], ["Zed"], 7, {})
    web_ledger.append("g1", "game_started", data, None, 1000.0)
    st = client.get("/api/state").get_json()
    assert st["turns"] == {"used": 0, "limit": 4, "left": 4}          # ceil(6 x 5/8): docs/RULES.md 2.5
    res = GameSession(web_ledger, "g1").claim("Zed", [A, B2])         # two free tiles that do not match
    assert [e.type for e in res.written] == ["invalid"]                   # an invalid attempt is a turn too
    assert client.get("/api/state").get_json()["turns"] == {"used": 1, "limit": 4, "left": 3}


def test_an_older_games_page_says_a_newer_game_has_started(client, mini_game):
    # a phone kept on an ended game's link stayed there with no word of the
    # game being played (a break-test, session 58)
    html = client.get("/?game=g1").get_data(as_text=True)
    assert '<p id="newer" class="newer card" role="status" hidden>' in html
    data = dict(mini_game.events("g1")[0].data)
    mini_game.append("g2", "game_started", data, None, 10.0)
    html = client.get("/?game=g1").get_data(as_text=True)
    assert ('<p id="newer" class="newer card" role="status">A newer game, <bdi id="newer-id">g2</bdi>, has started '
            'since this one: <a href="/">follow the latest game</a>.</p>') in html
    assert 'id="newer" class="newer card" role="status" hidden' in client.get("/").get_data(as_text=True)


def test_a_stream_of_one_game_keeps_alive_while_another_game_plays(client, app, mini_game):
    # a break-test (session 58): a stream of one game that saw only another
    # game's events sent no keep-alive, and its page took it for dead every
    # 36 s, reconnecting until its own scoreboard page was paused
    start_mini(mini_game, gid="g2", players=("Cy", "Di"))
    rv = client.get("/api/events?game=g1", buffered=False)       # keep-alive every 0.2 s (conftest)
    it = iter(rv.response)
    assert next(it).decode().startswith("retry:")
    other = Ledger(app.config["LEDGER"])
    stop = threading.Event()

    def play():                                                  # g2 writes every 0.05 s
        while not stop.wait(0.05):
            other.append("g2", "pass", {"player": "Cy"}, None, 1001.0)
    writer = threading.Thread(target=play)
    writer.start()
    got, times = [], []

    def read():                                                  # (in a thread: a silent stream never yields)
        t0 = time.monotonic()
        while not any("event: alive" in g for g in got):
            got.append(next(it).decode())
        times.append(time.monotonic() - t0)
    reader = threading.Thread(target=read, daemon=True)
    try:
        reader.start()
        reader.join(3.0)
    finally:
        stop.set()
        writer.join()
        other.close()
    assert times and times[0] < 1.0, "no keep-alive within 3 s"
    rv.close()
    assert "event: ledger" not in "".join(got)                  # (g2's events are not this stream's)


def test_a_game_is_found_by_its_id_in_any_case_as_on_the_command_line(client, mini_game):
    # `companion game --game friday` finds "Friday"; the pages answered 404
    # (a break-test, session 58)
    start_mini(mini_game, gid="Friday", players=("Cy", "Di"))
    assert client.get("/api/state?game=friday").json["game_id"] == "Friday"
    assert client.get("/?game=FRIDAY").status_code == 200
    assert client.get("/api/board.svg?game=friday").status_code == 200
    assert client.get("/api/state?game=saturday").status_code == 404
