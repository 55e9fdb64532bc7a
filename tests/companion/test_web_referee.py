"""The referee console: PIN login with its rate limit, the signed session,
CSRF on every change, and each action (start, move, correct, void, settle,
undo, hint, reshuffle, end, export) checked against the replayed ledger.
Numbers from the mini game (webgame.py) and Love Mahjong 2.5/2.7 (a pair of
1s +200; a blocked tile touched -100)."""

from __future__ import annotations

import json

import pytest

from companion import game as G
from webgame import A, B, B2, C, D, E, PIN, RefereeActions, start_mini

ACTIONS = ["/referee/start", "/referee/move", "/referee/correct", "/referee/void", "/referee/settle",
           "/referee/undo", "/referee/hint", "/referee/reshuffle", "/referee/end", "/referee/logout"]


def slots_text(*slots) -> str:
    return " ".join(",".join(map(str, s)) for s in slots)


def state(ledger, gid="g1"):
    return G.replay(ledger.events(gid))


# --------------------------------------------------------------------------- login


def test_login_page_has_a_csrf_token_and_no_console(client):
    html = client.get("/referee/").get_data(as_text=True)
    assert 'name="pin"' in html and 'name="csrf_token"' in html
    assert "Start a game" not in html


def test_login_with_the_pin_opens_a_strict_httponly_session(client, referee):
    rv = referee.login()
    assert rv.status_code == 303
    cookie = rv.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    with client.session_transaction() as s:
        assert len(s["referee"]) >= 24 and len(s["csrf"]) >= 32      # a session id the server keeps
    assert "Start a game" in client.get("/referee/").get_data(as_text=True)


def test_login_rotates_the_csrf_token(client, referee):
    before = referee.form_token()
    referee.login()
    assert referee.token() != before


def test_wrong_pin_is_refused(client, referee):
    rv = referee.login("000000")
    assert rv.status_code == 401 and "Wrong PIN" in rv.get_data(as_text=True)
    with client.session_transaction() as s:
        assert "referee" not in s


def test_login_without_csrf_token_is_refused(client):
    rv = client.post("/referee/login", data={"pin": PIN})
    assert rv.status_code == 403 and "CSRF" in rv.get_data(as_text=True)


def test_wrong_pins_beyond_the_limit_lock_the_client_out(client, referee):
    for k in range(4):
        rv = referee.login("111111")
        left = 4 - k                                              # each refusal says how many remain
        assert rv.status_code == 401
        assert f"{left} more wrong PIN{'s' if left != 1 else ''} and PIN entry locks for 5 minutes" \
            in rv.get_data(as_text=True)
    rv = referee.login("111111")                                  # the 5th failure locks
    assert rv.status_code == 429
    page = rv.get_data(as_text=True)
    assert "Too many wrong PINs from this device" in page and "PIN entry locked" in page
    assert 280 <= int(rv.headers["Retry-After"]) <= 300
    rv = referee.login(PIN)                                       # even the right PIN now
    assert rv.status_code == 429
    with client.session_transaction() as s:
        assert "referee" not in s
    rv = client.post("/referee/login", data={"pin": PIN, "csrf_token": referee.form_token()},
                     headers={"Accept": "application/json"})
    assert rv.status_code == 429 and "Try again in 5 minutes" in rv.json["error"]


def test_the_pin_form_says_when_pin_entry_is_locked_and_spaces_inside_a_pin_count_for_nothing(client, referee):
    # a break-test (session 58): during a lock-out the form looked unlocked
    # until the right PIN was refused, and "123 456" (six digits as read
    # aloud) was a wrong try
    assert referee.login(PIN[:3] + " " + PIN[3:]).status_code == 303
    client.post("/referee/logout", data={"csrf_token": referee.token()})
    assert "PIN entry is locked" not in client.get("/referee/").get_data(as_text=True)
    for _ in range(5):
        referee.login("111111")
    html = client.get("/referee/").get_data(as_text=True)
    assert "PIN entry is locked after too many wrong PINs from this device: try again in 5 minutes." in html
    assert 'maxlength="16" disabled>' in html and 'class="button primary" disabled>Unlock' in html


def test_other_clients_are_not_locked_by_one(app, referee):
    for _ in range(5):
        referee.login("111111")
    other = app.test_client()
    other.environ_base["REMOTE_ADDR"] = "10.0.0.9"
    assert RefereeActions(other).login().status_code == 303


def test_global_limit_locks_everybody(app):
    app.extensions["companion.pin_limiter"].global_limit = 8
    for k in range(8):                                              # 4 addresses x 2 failures
        c = app.test_client()
        c.environ_base["REMOTE_ADDR"] = f"10.0.0.{k // 2}"
        rv = RefereeActions(c).login("999999")
    assert rv.status_code == 429
    fresh = app.test_client()
    fresh.environ_base["REMOTE_ADDR"] = "10.0.9.9"
    rv = RefereeActions(fresh).login()
    assert rv.status_code == 429 and "on this server" in rv.get_data(as_text=True)


def test_logout(client, referee):
    referee.login()
    assert referee.logout().status_code == 303
    assert "Start a game" not in client.get("/referee/").get_data(as_text=True)


def test_logout_ends_every_copy_of_the_session_cookie(app, client, referee, mini_game):
    referee.login()
    cookie = client.get_cookie("companion_session") or client.get_cookie("session")
    token = referee.token()
    referee.logout()
    # a copy of the cookie taken before logout (it travels in clear on the
    # LAN) no longer opens the console or changes the game
    thief = app.test_client()
    thief.set_cookie(cookie.key, cookie.value)
    n = len(mini_game.events())
    rv = thief.post("/referee/end", data={"game": "g1", "reason": "abandoned"}, headers={"X-CSRF-Token": token})
    assert rv.status_code == 403 and len(mini_game.events()) == n
    assert thief.get("/referee/panel").status_code == 403
    # and a new login is a new session
    referee.login()
    assert "Start a game" in client.get("/referee/").get_data(as_text=True)


# --------------------------------------------------------------------------- guards


@pytest.mark.parametrize("url", ACTIONS)
def test_changes_without_the_session_are_refused(client, mini_game, url):
    n = len(mini_game.events())
    rv = client.post(url, data={"game": "g1", "player": "Ann", "kind": "pass", "event_id": "1"},
                     headers={"Accept": "application/json"})
    assert rv.status_code == 403 and "log in with the PIN" in rv.json["error"]
    assert len(mini_game.events()) == n


@pytest.mark.parametrize("url", ACTIONS)
def test_changes_without_the_csrf_token_are_refused(client, referee, mini_game, url):
    referee.login()
    n = len(mini_game.events())
    rv = client.post(url, data={"game": "g1", "player": "Ann", "kind": "pass", "event_id": "2"},
                     headers={"Accept": "application/json"})
    assert rv.status_code == 403 and "CSRF" in rv.json["error"]
    rv = client.post(url, data={"game": "g1", "player": "Ann", "csrf_token": "forged"},
                     headers={"X-CSRF-Token": "forged"})
    assert rv.status_code == 403
    assert len(mini_game.events()) == n


@pytest.mark.parametrize("url", ["/referee/panel", "/referee/export.csv", "/referee/export.json"])
def test_console_reads_need_the_session(client, mini_game, url):
    assert client.get(url).status_code == 403


# --------------------------------------------------------------------------- actions


def test_start_a_game(client, referee, web_ledger):
    referee.login()
    rv = referee.post("/referee/start", {"variant": "mindful", "mode": "zen-solitaire", "layout": "turtle",
                                         "players": "Mei", "seed": "42", "difficulty": "hard"})
    assert rv.status_code == 200 and rv.json["ok"] and rv.json["game_id"] == "game-1"
    st = client.get("/api/state").json
    assert st["variant"] == "mindful" and st["players"][0]["name"] == "Mei" and st["tiles_left"] == 144
    assert st["options"]["reshuffles"] == 1                          # hard: 1 Zen Reshuffle (Mindful 2.6)
    start = web_ledger.events("game-1")[0]
    assert start.data["seed"] == 42 and sorted(start.data["faces"]) == sorted(G.tileset("mindful").tiles())


@pytest.mark.parametrize("form, error", [
    ({"variant": "love", "mode": "zen-solitaire", "layout": "turtle", "players": "A,B"}, "unknown mode"),
    ({"variant": "love", "mode": "sprint", "layout": "nowhere", "players": "A,B"}, "unknown layout"),
    ({"variant": "love", "mode": "hand-builder", "layout": "turtle", "players": "A"}, "2 to 4 player"),
    ({"variant": "love", "mode": "sprint", "layout": "turtle", "players": "A", "seed": "x"}, "seed"),
    # as on the command line: seed -1 would deal the tiles of seed 1
    ({"variant": "love", "mode": "sprint", "layout": "turtle", "players": "A", "seed": "-1"}, "0 or more"),
])
def test_start_refuses_bad_forms(client, referee, web_ledger, form, error):
    referee.login()
    rv = referee.post("/referee/start", form)
    assert rv.status_code == 400 and error in rv.json["error"]
    assert web_ledger.events() == []


def test_start_by_plain_form_redirects_with_a_message(client, referee):
    referee.login()
    rv = referee.post("/referee/start", {"variant": "love", "mode": "sprint", "layout": "turtle",
                                         "players": "Ann, Ben", "seed": "3"}, json_api=False)
    assert rv.status_code == 303 and rv.headers["Location"].endswith("/referee/")
    html = client.get("/referee/").get_data(as_text=True)
    assert "game-1 started" in html and "Ledger of game-1" in html


def test_move_claim_touch_pass(client, referee, mini_game):
    referee.login()
    rv = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann", "slots": slots_text(A, C)})
    assert rv.json["ok"] and [e["type"] for e in rv.json["events"]] == ["claim"]
    st = state(mini_game)
    assert st.scores() == {"Ann": 10_200, "Ben": 10_000}


def test_faces_typed_over_recorded_ones_need_the_over_the_record_box(client, referee, mini_game):
    # A (hearts-1) + D (roses-3) typed as a season pair: refused, nothing
    # written; with the box ticked the referee's faces are recorded
    referee.login()
    assert 'name="over_record"' in client.get("/referee/").get_data(as_text=True)
    form = {"game": "g1", "kind": "claim", "player": "Ann", "slots": slots_text(A, D),
            "faces": "season-spring,season-spring"}
    rv = referee.post("/referee/move", form)
    assert rv.status_code == 400 and rv.json["error"].startswith(
        "0,0,0 is recorded as hearts-1, not season-spring; 8,0,0 is recorded as roses-3, not season-spring")
    assert len(mini_game.events("g1")) == 1
    rv = referee.post("/referee/move", {**form, "over_record": "1"})
    assert rv.json["ok"] and rv.json["events"][0]["type"] == "claim"
    claim = mini_game.event(rv.json["events"][0]["id"])
    assert claim.data["faces"] == ["season-spring", "season-spring"]
    assert state(mini_game).scores()["Ann"] == 10_300                 # Love 2.5: a season pair, +300


def test_a_touch_answers_with_what_it_binds_and_a_pass_after_it_is_refused(client, referee, mini_game):
    referee.login()
    rv = referee.post("/referee/move", {"game": "g1", "kind": "touch", "player": "Ann", "slots": slots_text(A)})
    assert rv.json["ok"] and "must be part of the next pair (touch is claimed)" in rv.json["message"]
    n = len(mini_game.events("g1"))
    rv = referee.post("/referee/move", {"game": "g1", "kind": "pass", "player": "Ann"})
    assert rv.status_code == 400 and "touch is claimed" in rv.json["error"]
    assert len(mini_game.events("g1")) == n                          # nothing recorded


def test_the_panel_carries_the_turn_and_undo_for_the_forms_below_it(client, referee, mini_game):
    # referee.js copies these onto the move form's player and the undo button
    referee.login()
    html = client.get("/referee/panel?game=g1").get_data(as_text=True)
    assert 'id="panel-state" hidden data-turn="Ann" data-can-undo="0"' in html
    referee.post("/referee/move", {"game": "g1", "kind": "pass", "player": "Ann"})
    html = client.get("/referee/panel?game=g1").get_data(as_text=True)
    assert 'data-turn="Ben" data-can-undo="1"' in html


def test_a_form_that_saw_an_older_ledger_is_refused(client, referee, mini_game):
    # every console form carries the last event id the page showed
    # (referee.js keeps it current); a double tap, or a move recorded by
    # the camera meanwhile, makes the second post stale: refused, nothing written
    import re
    referee.login()
    html = client.get("/referee/panel?game=g1").get_data(as_text=True)
    last = re.search(r'data-last="(\d+)"', html).group(1)
    assert last == str(mini_game.events("g1")[-1].id)
    assert f'name="after" value="{last}"' in client.get("/referee/?game=g1").get_data(as_text=True)
    form = {"game": "g1", "kind": "touch", "player": "Ann", "slots": slots_text(B), "after": last}
    rv = referee.post("/referee/move", form)
    assert [e["type"] for e in rv.json["events"]] == ["penalty"]            # Ann -100
    n = len(mini_game.events("g1"))
    rv = referee.post("/referee/move", form)                                 # the same form again
    assert rv.status_code == 400 and "has changed since this form was shown" in rv.json["error"]
    assert len(mini_game.events("g1")) == n and state(mini_game).scores()["Ann"] == 9_900
    rv = referee.post("/referee/undo", {"game": "g1", "after": last})        # an undo drawn before it, too
    assert rv.status_code == 400 and len(mini_game.events("g1")) == n
    rv = referee.post("/referee/undo", {"game": "g1", "after": str(mini_game.events("g1")[-1].id)})
    assert rv.json["ok"] and state(mini_game).scores()["Ann"] == 10_000


def test_the_start_form_sent_twice_starts_one_game(client, referee, mini_game):
    # the form carries the ledger's newest event id; the second post of the
    # same form (a double tap) finds a new game there and is refused
    referee.login()
    last = str(mini_game.last_id())
    assert f'name="ledger_after" value="{last}"' in client.get("/referee/").get_data(as_text=True)
    assert f'data-ledger-last="{last}"' in client.get("/referee/panel").get_data(as_text=True)
    form = {"mode": "love:sprint", "layout": "turtle", "players": "Cy, Di", "seed": "3", "ledger_after": last}
    rv = referee.post("/referee/start", form)
    assert rv.json["ok"]
    rv = referee.post("/referee/start", form)
    assert rv.status_code == 400 and rv.json["error"] == (
        f"the ledger has changed since this form was shown (event #{mini_game.last_id()} is new; the newest game "
        f"is {mini_game.latest_game_id()}): look at the games, then start again")
    assert len(mini_game.games()) == 2


def test_an_undo_naming_a_move_that_is_no_longer_the_last_is_refused(client, referee, mini_game):
    # the button says which move it takes back (target=N); the page's
    # freshness field alone is kept current by referee.js, so the server
    # checks the target too
    referee.login()
    referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann", "slots": slots_text(A, C)})
    assert 'name="target" value="2"' in client.get("/referee/?game=g1").get_data(as_text=True)
    referee.post("/referee/move", {"game": "g1", "kind": "pass", "player": "Ann"})
    n = len(mini_game.events("g1"))
    rv = referee.post("/referee/undo", {"game": "g1", "target": "2"})
    assert rv.status_code == 400
    assert rv.json["error"] == ("Undo would now take back #3 (Ann passes; Ben to play), not #2: look at the ledger, "
                                "then send it again")
    assert len(mini_game.events("g1")) == n
    rv = referee.post("/referee/undo", {"game": "g1", "target": "3"})
    assert rv.json["ok"] and mini_game.events("g1")[-1].ref == 3


def test_the_console_lists_the_games_and_refreshes_panel_and_ledger(client, referee, mini_game):
    referee.login()
    rv = referee.post("/referee/start", {"variant": "love", "mode": "sprint", "layout": "turtle",
                                          "players": "Cy, Di", "seed": "3"})
    new = rv.json["game_id"]
    html = client.get("/referee/?game=g1").get_data(as_text=True)
    assert "Games in this ledger (2)" in html and f'href="/referee/?game={new}"' in html
    assert "(shown)" in html and html.index("Record a move by hand") < html.index("Ledger of g1")
    nope = client.get("/referee/?game=nope").get_data(as_text=True)
    assert "No game &#39;nope&#39; in this ledger" in nope and f'href="/referee/?game={new}"' in nope
    live = client.get("/referee/panel?game=g1").get_data(as_text=True)
    assert '<div data-part="panel">' in live and '<div data-part="ledger">' in live
    assert live.index("g1: ") < live.index("Ledger of g1")


def test_touching_a_blocked_tile_is_a_penalty(client, referee, mini_game):
    referee.login()
    rv = referee.post("/referee/move", {"game": "g1", "kind": "touch", "player": "Ben", "slots": slots_text(B)})
    assert rv.status_code == 409 and not rv.json["ok"]
    assert [e["type"] for e in rv.json["events"]] == ["penalty"]
    assert "covered by 2,0,1" in rv.json["error"]
    assert state(mini_game).scores()["Ben"] == 9_900                 # -100 (Love 2.7)


def test_move_pass_and_bad_moves(client, referee, mini_game):
    referee.login()
    assert referee.post("/referee/move", {"game": "g1", "kind": "pass", "player": "Ann"}).json["ok"]
    assert state(mini_game).whose_turn() == "Ben"
    rv = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann", "slots": slots_text(D, E)})
    assert rv.status_code == 400 and "Ben's turn" in rv.json["error"]
    rv = referee.post("/referee/move", {"game": "g1", "kind": "dance", "player": "Ben"})
    assert rv.status_code == 400 and "unknown move" in rv.json["error"]
    rv = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ben", "slots": "1,2"})
    assert rv.status_code == 400


def test_void_keeps_the_audit_trail(client, referee, mini_game):
    referee.login()
    claim = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann",
                                           "slots": slots_text(A, C)}).json["events"][0]["id"]
    rv = referee.post("/referee/void", {"game": "g1", "event_id": str(claim), "reason": "wrong table"})
    assert rv.json["ok"]
    evs = mini_game.events("g1")
    assert [e.type for e in evs] == ["game_started", "claim", "correction"]   # nothing deleted
    assert evs[2].ref == claim and evs[2].data == {"void": True, "reason": "wrong table"}
    st = state(mini_game)
    assert st.scores()["Ann"] == 10_000 and st.status[claim] == "voided" and st.board.n_present == 6
    assert client.get("/api/state").json["last_events"][1]["status"] == "voided"


def test_correct_an_event(client, referee, mini_game):
    referee.login()
    claim = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann",
                                           "slots": slots_text(A, C)}).json["events"][0]["id"]
    rv = referee.post("/referee/correct", {"game": "g1", "event_id": str(claim), "slots": slots_text(D, E),
                                           "faces": "roses-3,roses-3", "reason": "camera misread"})
    assert rv.json["ok"]
    cor = mini_game.events("g1")[-1]
    assert cor.type == "correction" and cor.ref == claim
    assert cor.data["changes"] == {"slots": [D, E], "faces": ["roses-3", "roses-3"]}
    st = state(mini_game)
    assert st.status[claim] == "corrected" and st.players[0].rack == ["roses-3", "roses-3"]
    assert st.scores()["Ann"] == 10_100                              # a pair of 3s: simple, +100
    rv = referee.post("/referee/correct", {"game": "g1", "event_id": str(claim)})
    assert rv.status_code == 400 and "a correction needs something to change" in rv.json["error"]
    rv = referee.post("/referee/void", {"game": "g1", "event_id": "1"})
    assert rv.status_code == 400 and "cannot be voided" in rv.json["error"]
    rv = referee.post("/referee/void", {"game": "g1", "event_id": "abc"})
    assert rv.status_code == 400


@pytest.mark.parametrize("etype", ["needs_referee", "needs-referee"])
def test_settle_with_a_claim(client, referee, mini_game, etype):
    item = mini_game.append("g1", etype, {"player": "Ann", "reason": "hand over the board", "slots": [A, C],
                                          "faces": ["hearts-1", "hearts-1"]}, None, 1001.0)
    referee.login()
    assert "hand over the board" in client.get("/referee/panel").get_data(as_text=True)
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": str(item.id), "decision": "claim",
                                          "player": "Ann", "slots": slots_text(A, C), "reason": "seen on video"})
    assert rv.json["ok"], rv.json
    evs = mini_game.events("g1")
    fix, claim = evs[-2], evs[-1]
    assert fix.type == "correction" and fix.ref == item.id
    assert fix.data == {"changes": {"resolved": True, "decision": "claim"}, "reason": "seen on video"}
    assert claim.type == "claim" and claim.data["resolves"] == item.id
    assert state(mini_game).scores()["Ann"] == 10_200
    from companion.session import GameSession
    assert GameSession(mini_game, "g1").open_items() == []
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": str(item.id)})
    # (settled: the answer names the event that settled it, not "not an open referee item")
    assert rv.status_code == 400 and rv.json["error"].startswith(f"item #{item.id} was settled already, as a "
                                                                 f"claim, by event #{fix.id}")


def test_settle_an_off_table_claim_with_the_faces_seen(client, referee, mini_game):
    # the faces the referee sees on the tiles (the mini deal's D and E are
    # roses-3) travel with the decided claim; the tiles already left the board
    item = mini_game.append("g1", "needs-referee", {"player": "Ann", "reason": "faces not sure", "slots": [D, E],
                                                    "off_table": [D, E]}, None, 1001.0)
    referee.login()
    assert 'name="faces"' in client.get("/referee/panel").get_data(as_text=True)
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": str(item.id), "decision": "claim",
                                          "player": "Ann", "slots": slots_text(D, E), "faces": "roses-3, roses-3"})
    assert rv.json["ok"], rv.json
    claim, fix = mini_game.events("g1")[-2:]        # the move, then the item closed
    assert claim.type == "claim" and claim.data["faces"] == ["roses-3", "roses-3"] and fix.type == "correction"
    assert state(mini_game).scores()["Ann"] == 10_100                  # Love 2.5: a simple pair, +100


def test_a_lone_tile_item_offers_the_tile_the_camera_could_not_see_leave(client, referee, mini_game):
    from companion.session import GameSession
    # the camera saw A leave alone; C, a tile that could match it, stood
    # unread behind a taller stack (bench game 13100): the console names C
    # and fills in A and C, so finding C gone the referee settles the claim
    # as it stands; a suggestion that names no standing tile is left out
    item = mini_game.append("g1", "needs-referee", {"player": "Ann", "reason": "a tile left alone", "slots": [A],
                                                    "off_table": [A], "may_pair_with": [C, [99, 0, 0], "x"]},
                            None, 1001.0)
    referee.login()
    panel = client.get("/referee/panel").get_data(as_text=True)
    assert "It may have been claimed with <strong>4,0,0</strong>, which the camera could not see leave" in panel
    assert 'name="slots" value="0,0,0 4,0,0"' in panel
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": str(item.id), "decision": "claim",
                                          "player": "Ann", "slots": "0,0,0 4,0,0"})
    assert rv.json["ok"], rv.json
    assert state(mini_game).scores()["Ann"] == 10_200                  # Love 2.5: a pair of hearts, +200
    assert not state(mini_game).board.present[2]                       # C off the board with its claim
    # once the suggested tile has left the board, it is no longer offered
    other = mini_game.append("g1", "needs-referee", {"player": "Ben", "reason": "a tile left alone", "slots": [D],
                                                     "off_table": [D], "may_pair_with": [C]}, None, 1002.0)
    panel = client.get("/referee/panel").get_data(as_text=True)
    assert "could not see" not in panel and 'name="slots" value="8,0,0"' in panel
    assert [i["may_pair_with"] for i in GameSession(mini_game, "g1").open_items()] == [[]]
    assert [i["id"] for i in GameSession(mini_game, "g1").open_items()] == [other.id]


def test_of_several_tiles_a_lone_tile_may_have_left_with_the_console_fills_in_the_likeliest(client, referee,
                                                                                          web_ledger):
    # bench game 13100: three candidates, one whose slot changed by itself
    # as the lone tile left (``likely_pair_with``): it is marked and filled
    # in; with none likeliest (or one the item does not offer), the referee
    # types the tile.  (A, C and D are all 1 Single Hearts here)
    from companion.session import GameSession
    mini_game = web_ledger
    start_mini(mini_game, faces=["hearts-1", "hearts-2", "hearts-1", "hearts-2", "hearts-1", "roses-3"])
    referee.login()
    for likely, filled in ((C, "0,0,0 4,0,0"), (None, "0,0,0"), ([99, 0, 0], "0,0,0"), (B, "0,0,0")):
        data = {"player": "Ann", "reason": "a tile left alone", "slots": [A], "off_table": [A],
                "may_pair_with": [D, C]}
        if likely is not None:
            data["likely_pair_with"] = likely
        item = mini_game.append("g1", "needs-referee", data, None, 1001.0)
        panel = client.get("/referee/panel").get_data(as_text=True)
        assert f'name="slots" value="{filled}"' in panel, likely
        marked = "<strong>4,0,0</strong> (likeliest: its slot changed as the tile left)" in panel
        assert marked == (likely == C)
        assert ("the likeliest is filled in below" in panel) == (likely == C)
        assert GameSession(mini_game, "g1").open_items()[0]["likely_pair_with"] == (C if likely == C else None)
        assert referee.post("/referee/settle", {"game": "g1", "item_id": str(item.id), "decision": "none"}).json["ok"]


def test_the_console_offers_only_tiles_a_lone_tile_could_have_been_claimed_with(client, referee, mini_game):
    # (break-test, session 46) B lay under B2 and does not match A (hearts-2
    # against hearts-1): offered and filled in, the claim was refused on
    # settling.  C (free, hearts-1) is offered; B and D (roses-3) are not
    from companion.session import GameSession
    mini_game.append("g1", "needs-referee", {"player": "Ann", "reason": "a tile left alone", "slots": [A],
                                             "off_table": [A], "may_pair_with": [B, D, C]}, None, 1001.0)
    assert GameSession(mini_game, "g1").open_items()[0]["may_pair_with"] == [C]
    referee.login()
    assert 'name="slots" value="0,0,0 4,0,0"' in client.get("/referee/panel").get_data(as_text=True)


def test_an_item_whose_slots_are_not_slots_still_shows_on_the_console(client, referee, mini_game):
    # (break-test, session 46) a hand-written item with "slots": "0,0,0"
    # made the whole console answer 500
    ids = [mini_game.append("g1", "needs-referee", {"reason": "odd", "slots": junk, "off_table": [A],
                                                    "may_pair_with": [C]}, None, 1001.0).id
           for junk in ("0,0,0", {"a": 1}, 5, True, [A, "x", 3])]
    referee.login()
    assert client.get("/referee/").status_code == 200
    panel = client.get("/referee/panel")
    assert panel.status_code == 200
    assert all(f"<strong>#{i}</strong> odd" in panel.get_data(as_text=True) for i in ids)


def test_settle_off_table_letters_as_the_word_they_spelled(client, referee, web_ledger):
    # a Word Mahjong table: C, A, T (A, C, D of the mini layout) left the
    # table together; the console offers "word" and a Word field there only
    start_mini(web_ledger, variant="word", mode="zen-archives", faces=["C", "X", "A", "Q", "T", "Z"])
    item = web_ledger.append("g1", "needs-referee", {"reason": "3 tiles at once", "slots": [A, C, D],
                                                     "off_table": [A, C, D]}, None, 1001.0)
    referee.login()
    panel = client.get("/referee/panel").get_data(as_text=True)
    assert 'name="word"' in panel and '<option value="word">' in panel
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": str(item.id), "decision": "word",
                                          "player": "Ben", "slots": slots_text(A, C, D), "word": "cat"})
    assert rv.json["ok"], rv.json
    # X, Q and Z are left: no pair, no word, no reshuffle that could clear them
    assert [e["type"] for e in rv.json["events"]] == ["word", "game_ended", "correction"]
    assert state(web_ledger).player("Ben").words == ["CAT"]


def test_the_word_decision_is_offered_only_at_word_tables(client, referee, mini_game):
    mini_game.append("g1", "needs-referee", {"reason": "x"}, None, 1001.0)
    referee.login()
    panel = client.get("/referee/panel").get_data(as_text=True)
    assert 'name="word"' not in panel and '<option value="word">' not in panel
    # the refreshed panel offers every other decision (it once offered none,
    # and its forms settled every item "none")
    assert all(f'<option value="{d}">' in panel for d in ("none", "claim", "penalty"))


def test_settle_with_a_penalty_or_nothing(client, referee, mini_game):
    one = mini_game.append("g1", "needs_referee", {"reason": "tile moved?"}, None, 1001.0)
    two = mini_game.append("g1", "needs_referee", {"reason": "unclear"}, None, 1002.0)
    referee.login()
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": str(one.id), "decision": "penalty",
                                          "player": "Ben", "slots": slots_text(A)})
    assert rv.status_code == 400 and "is free" in rv.json["error"]            # A is free: no penalty
    assert len(mini_game.events("g1")) == 3                                    # nothing written
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": str(one.id), "decision": "penalty",
                                          "player": "Ben", "slots": slots_text(B)})
    assert rv.json["ok"] and [e["type"] for e in rv.json["events"]] == ["correction", "penalty"]
    assert state(mini_game).scores()["Ben"] == 9_900
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": str(two.id), "decision": "none"})
    assert rv.json["ok"] and client.get("/api/state").json["needs_referee"] == []


def test_undo_end_and_modes_without_hints(client, referee, mini_game):
    referee.login()
    rv = referee.post("/referee/undo", {"game": "g1"})
    assert rv.status_code == 400 and "nothing to undo" in rv.json["error"]
    claim = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann",
                                           "slots": slots_text(A, C)}).json["events"][0]["id"]
    rv = referee.post("/referee/undo", {"game": "g1"})
    assert rv.json["ok"] and mini_game.events("g1")[-1].ref == claim
    assert state(mini_game).board.n_present == 6
    rv = referee.post("/referee/hint", {"game": "g1", "player": "Ann"})
    assert rv.status_code == 400 and "has no hints" in rv.json["error"]
    rv = referee.post("/referee/reshuffle", {"game": "g1", "player": "Ann"})
    assert rv.status_code == 400 and "has no reshuffle" in rv.json["error"]
    rv = referee.post("/referee/end", {"game": "g1", "reason": "abandoned"})
    assert rv.json["ok"] and state(mini_game).ended and state(mini_game).end_reason == "abandoned"
    rv = referee.post("/referee/end", {"game": "g1", "reason": "no-moves"})
    assert rv.status_code == 400 and "has ended" in rv.json["error"]
    rv = referee.post("/referee/end", {"game": "g1", "reason": "boredom"})
    assert rv.status_code == 400


def test_hint_and_reshuffle_in_mindful(client, referee, web_ledger):
    # Mindful zen solitaire on the mini layout: free pairs remain, so a reshuffle is refused (Law 4).
    faces = ("circles-1", "circles-2", "circles-1", "circles-3", "circles-2", "circles-3")
    start_mini(web_ledger, "mindful", "zen-solitaire", ("Mei",), faces=faces)
    referee.login()
    rv = referee.post("/referee/hint", {"game": "g1", "player": "Mei"})
    assert rv.json["ok"] and rv.json["message"].startswith("match ")
    st = state(web_ledger)
    assert st.players[0].hints == 1 and st.players[0].focus_tokens == 1        # 2 tokens (Mindful 2.2), 1 spent
    rv = referee.post("/referee/reshuffle", {"game": "g1", "player": "Mei"})
    assert rv.status_code == 400 and "only when no free match is left" in rv.json["error"]


def test_word_game_uses_the_dictionary(client, referee, web_ledger):
    faces = ("C", "A", "T", "D", "O", "G")
    start_mini(web_ledger, "word", "zen-archives", ("Wil",), faces=faces)
    referee.login()
    rv = referee.post("/referee/hint", {"game": "g1", "player": "Wil"})
    assert rv.json["ok"] and rv.json["message"] == "spell DOG with 2,0,1 8,0,0 12,0,0"   # D, O, G are free
    html = client.get("/referee/?game=g1").get_data(as_text=True)
    assert '<option value="word">spell a word</option>' in html and 'name="word"' in html
    rv = referee.post("/referee/move", {"game": "g1", "kind": "word", "player": "Wil", "slots": "2,0,1 8,0,0"})
    assert rv.status_code == 400 and rv.json["error"] == "word is required"
    # DOG leaves C and T free and A pinched between them: no pair, no word;
    # Zen Archives would reshuffle, but C, A, T can be laid out no way that
    # clears them, so the game ends (docs/RULES.md 4.6) and the word stands
    rv = referee.post("/referee/move", {"game": "g1", "kind": "word", "player": "Wil",
                                         "slots": "2,0,1 8,0,0 12,0,0", "word": "DOG"})
    assert rv.json["ok"] and [e["type"] for e in rv.json["events"]] == ["word", "game_ended"], rv.json
    st = state(web_ledger)
    assert st.ended and st.end_reason == "no-moves" and st.board.n_present == 3


def test_exports(client, referee, mini_game):
    referee.login()
    referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann", "slots": slots_text(A, C)})
    rv = client.get("/referee/export.csv?game=g1")
    assert rv.mimetype == "text/csv" and 'filename="g1.csv"' in rv.headers["Content-Disposition"]
    lines = rv.get_data(as_text=True).splitlines()
    assert lines[0] == "id,game_id,type,player,ref,t,status,text,data" and len(lines) == 3
    rv = client.get("/referee/export.json")
    data = json.loads(rv.data)
    assert data["game_id"] == "g1" and [e["type"] for e in data["events"]] == ["game_started", "claim"]
    assert data["state"]["players"][0]["score"] == 10_200


def test_console_panel_and_forms(client, referee, mini_game):
    referee.login()
    referee.post("/referee/move", {"game": "g1", "kind": "pass", "player": "Ann"})
    html = client.get("/referee/").get_data(as_text=True)
    for form in ("/referee/undo", "/referee/end", "/referee/move", "/referee/start", "/referee/void",
                 "/referee/export.csv"):
        assert form in html, form
    assert html.count('name="csrf_token"') >= 6
    panel = client.get("/referee/panel?game=g1").get_data(as_text=True)
    assert "Ledger of g1" in panel and "<bdi>Ben</bdi> to play" in panel
    # ending a game asks why: no reason is chosen for the referee (the list
    # began with "abandoned", which ends with no end scoring and no winner)
    assert ('<select name="reason" aria-label="End reason" required><option value="" disabled selected>'
            'why it ends…</option><option>abandoned</option><option>no-moves</option><option>time-up</option>'
            '</select>') in html


def test_the_panel_isolates_right_to_left_names(client, referee, web_ledger):
    # a right-to-left name set in plain text took the colon and the score
    # after it into its own run: the chip read "10,600 :محمد" on the console
    # (the players' page already isolates names in <bdi>)
    start_mini(web_ledger, players=("محمد عبد الرحمن", "Ben"))
    referee.login()
    panel = client.get("/referee/panel?game=g1").get_data(as_text=True)
    assert "<bdi>محمد عبد الرحمن</bdi>: <strong>10,000</strong>" in panel
    assert "<bdi>Ben</bdi>: <strong>10,000</strong>" in panel
    assert "<bdi>محمد عبد الرحمن</bdi> to play" in panel


def test_plain_form_error_is_flashed(client, referee, mini_game):
    referee.login()
    rv = referee.post("/referee/move", {"game": "g1", "kind": "pass", "player": "Ben"}, json_api=False)
    assert rv.status_code == 303
    assert "Ann&#39;s turn" in client.get("/referee/").get_data(as_text=True)


@pytest.mark.parametrize("after", ["abc", "-1", "99999999999999999999", "1.0"])
def test_a_form_whose_after_field_is_not_an_event_number_says_so(client, referee, mini_game, after):
    # these were answered "the game has changed since this form was shown"
    referee.login()
    n = len(mini_game.events("g1"))
    for path, form in (("/referee/move", {"game": "g1", "kind": "pass", "player": "Ann", "after": after}),
                       ("/referee/undo", {"game": "g1", "after": after})):
        rv = referee.post(path, form)
        assert rv.status_code == 400, path
        assert rv.json["error"] == (f"the form's field after={after!r} is not an event number: "
                                    "reload the console and send the form from there")
    assert len(mini_game.events("g1")) == n


def test_one_tile_in_the_slots_box_corrects_a_claim_as_a_claim(client, referee, mini_game):
    # the form has one "slots" box; one tile went to a penalty's "slot" field
    # even for a claim: "a correction cannot change 'slot' on a claim event"
    referee.login()
    claim = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann",
                                           "slots": slots_text(A, C)}).json["events"][0]["id"]
    rv = referee.post("/referee/correct", {"game": "g1", "event_id": str(claim), "slots": slots_text(D)})
    assert rv.status_code == 400
    assert rv.json["error"] == "a claim names the two tiles of its pair: give 2 slots, not 1"
    pen = referee.post("/referee/move", {"game": "g1", "kind": "touch", "player": "Ann",
                                         "slots": slots_text(B)}).json["events"][0]
    assert pen["type"] == "penalty"
    rv = referee.post("/referee/correct", {"game": "g1", "event_id": str(pen["id"]), "slots": slots_text(D)})
    assert rv.json["ok"] and mini_game.events("g1")[-1].data["changes"] == {"slot": D}


def test_the_start_form_names_the_game_and_its_mode_in_one_list(client, referee, web_ledger):
    # a separate Variant list could contradict the mode ("unknown mode
    # 'hand-builder' for word"); the one list's values carry both, as mode
    # ids repeat across games (Love and Candy both have hand-builder)
    referee.login()
    html = client.get("/referee/").get_data(as_text=True)
    assert 'name="variant"' not in html
    assert 'value="love:hand-builder"' in html and 'value="candy:hand-builder"' in html
    rv = referee.post("/referee/start", {"mode": "candy:hand-builder", "layout": "turtle", "players": "Ann, Ben",
                                         "seed": "5"})
    assert rv.json["ok"], rv.json
    st = client.get("/api/state").json
    assert (st["variant"], st["mode"], st["layout"], st["layout_title"]) == ("candy", "hand-builder", "turtle",
                                                                             "Turtle")


def test_a_correction_after_which_its_event_no_longer_counts_is_a_warning(client, referee, mini_game):
    referee.login()
    claim = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann",
                                           "slots": slots_text(A, C)}).json["events"][0]["id"]
    rv = referee.post("/referee/correct", {"game": "g1", "event_id": str(claim), "slots": slots_text(D, E)})
    assert rv.json["ok"] and rv.json["warning"] is None              # still a claim that counts
    rv = referee.post("/referee/correct", {"game": "g1", "event_id": str(claim), "player": "Ben"})
    assert rv.status_code == 200 and rv.json["ok"]
    assert rv.json["warning"] == (f"event #{claim} no longer fits the board (it is Ann's turn, not Ben's): "
                                  "it does not count until it is corrected again or voided")


def test_void_asks_before_it_voids(client, referee, mini_game):
    referee.login()
    referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann", "slots": slots_text(A, C)})
    html = client.get("/referee/?game=g1").get_data(as_text=True)
    assert 'data-confirm="Void event #2 (claim)? It will no longer count' in html


def test_console_refusals_in_plain_words(client, referee, mini_game):
    referee.login()
    claim = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann",
                                           "slots": slots_text(A, C)}).json["events"][0]["id"]
    n = len(mini_game.events("g1"))
    # a Faces field of only commas once recorded faces=None (clearing them)
    rv = referee.post("/referee/correct", {"game": "g1", "event_id": str(claim), "faces": ",,,"})
    assert rv.status_code == 400 and rv.json["error"] == ("faces: give face ids separated by commas, "
                                                          "e.g. hearts-1,hearts-1 (got ',,,')")
    # an empty item between two faces was dropped: a claim typed with a slip
    # named one face (``game --faces`` refuses it)
    rv = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann",
                                        "slots": slots_text(A, C), "faces": "hearts-1,,hearts-1"})
    assert rv.status_code == 400 and rv.json["error"].startswith("faces: give face ids separated by commas")
    # a byte that is not UTF-8 (a hand-made multipart post) reached the form
    # as U+FFFD and was recorded as typed
    body = b"".join(b'--XX\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n' % kv
                    for kv in ((b"mode", b"love:sprint"), (b"layout", b"turtle"), (b"players", b"A\xff, B"))) + b"--XX--\r\n"
    rv = client.post("/referee/start", data=body, content_type="multipart/form-data; boundary=XX",
                     headers={"X-CSRF-Token": referee.token()})
    assert rv.status_code == 400 and rv.json["error"] == ("the form's field 'players' holds U+FFFD, the mark of "
                                                          "bytes that were not UTF-8 text: type it again")
    # a form of a game the ledger does not hold: not "the game has changed"
    rv = referee.post("/referee/move", {"game": "nosuch", "kind": "pass", "player": "Ann", "after": "3"})
    assert rv.status_code == 400 and rv.json["error"] == "no game 'nosuch' in this ledger"
    # a 3000-letter mode is cut in the answer, as on the command line
    rv = referee.post("/referee/start", {"mode": "love:" + "x" * 3000, "layout": "turtle", "players": "A, B"})
    assert rv.status_code == 400 and len(rv.json["error"]) < 400 and "(3000 characters)" in rv.json["error"]
    assert len(mini_game.events("g1")) == n
    # spaces round the colon are no part of the names
    rv = referee.post("/referee/start", {"mode": " love : sprint ", "layout": "turtle", "players": "A, B"})
    assert rv.json["ok"], rv.json


def test_undo_names_what_it_takes_back_and_the_hint_list_starts_at_the_player_to_play(client, referee,
                                                                                       web_ledger):
    # "Undo last move" took back an unrelated penalty when the referee meant
    # to take back a void; and Hint offered the first seat when the second
    # was to play (Mindful Harmony Duels: a hint is for the player on turn)
    from companion.session import GameSession
    faces = ("circles-1", "circles-2", "circles-1", "circles-2", "bamboo-3", "bamboo-3")
    start_mini(web_ledger, variant="mindful", mode="harmony-duels", faces=faces)
    assert GameSession(web_ledger, "g1", t=1001.0).claim("Ann", [A, C]).ok          # #2; Ben to play
    assert GameSession(web_ledger, "g1", t=1002.0).void(2).ok                      # #3, a void
    referee.login()
    html = client.get("/referee/").get_data(as_text=True)
    assert "Undo #2" not in html                          # #2 is voided: nothing to undo now
    assert GameSession(web_ledger, "g1", t=1003.0).claim("Ann", [A, C]).ok          # #4
    html = client.get("/referee/").get_data(as_text=True)
    assert '&#8630; <span class="undo-label">Undo #4 claim</span></button>' in html
    assert 'data-confirm="Take back #4 (Ann claimed 1 of Circles + 1 of Circles: +100 circles pair)?' in html
    hint = html[html.index('action="/referee/hint"'):]
    hint = hint[:hint.index("</select>")]
    assert "<option >Ann</option><option selected>Ben</option>" in hint
    # voiding a void says what comes back
    void = html[html.index('value="3">') - 400:html.index('value="3">')]
    assert "Void event #3 (correction of #2)? Event #2 then counts as it did before it" in void


def test_the_console_shows_the_newest_events_of_a_long_game_and_the_rest_on_asking(client, referee, mini_game):
    from companion.web.referee import LEDGER_ROWS
    for k in range(LEDGER_ROWS + 9):           # 69 passes after the start: 70 events
        mini_game.append("g1", "needs_referee", {"reason": f"look {k}"}, None, 1000.0 + k)
    referee.login()
    html = client.get("/referee/?game=g1").get_data(as_text=True)
    ledger = html[html.index('<div id="ledger">'):]
    assert ledger.count("<tr class=") == LEDGER_ROWS
    import re
    shown = {int(n) for n in re.findall(r"look (\d+)", ledger)}
    assert shown == set(range(9, 69))           # the newest 60: events #11-#70
    assert "The 10 older events of this game are not shown" in ledger
    panel = client.get("/referee/panel?game=g1").get_data(as_text=True)
    assert panel.count("<tr class=") == LEDGER_ROWS
    whole = client.get("/referee/panel?game=g1&all=1").get_data(as_text=True)
    assert whole.count("<tr class=") == LEDGER_ROWS + 10 and "Show only the newest 60 events" in whole
    assert 'data-all="1"' in client.get("/referee/?game=g1&all=1").get_data(as_text=True)


def test_the_console_refuses_a_word_game_that_keeps_its_own_clock(client, referee, web_ledger):
    # started with --t 1000 (its own clock): the console's wall clock ended
    # a Word Sprint by time-up at the first move
    start_mini(web_ledger, "word", "word-sprint", ("Wil",), faces=("C", "A", "T", "D", "O", "G"))
    referee.login()
    rv = referee.post("/referee/move", {"game": "g1", "kind": "pass", "player": "Wil"})
    assert rv.status_code == 400
    assert rv.json["error"] == ("game g1 keeps its own clock (it was started with --t 1000): record its moves with "
                                "companion game ... --t, not here")
    assert [e.type for e in web_ledger.events("g1")] == ["game_started"]


def test_a_cameras_faces_seen_is_corrected_in_the_console_by_its_faces_only(client, referee, mini_game):
    mini_game.append("g1", "faces_seen", {"slots": [A], "faces": ["hearts-1"], "source": "camera"}, None, 1001.0)
    referee.login()
    html = client.get("/referee/?game=g1").get_data(as_text=True)
    row = next(r for r in html.split("<tr ") if "faces seen: " in r)
    assert 'name="faces"' in row and 'name="slots"' not in row and 'name="player"' not in row
    rv = referee.post("/referee/correct", {"game": "g1", "event_id": "2", "faces": "hearts-2"})
    assert rv.json["ok"], rv.json
    assert state(mini_game).faces[0] == "hearts-2"


def test_a_move_on_a_read_only_ledger_is_400_in_words_and_the_pages_still_read(app, client, referee, mini_game,
                                                                                monkeypatch):
    import os
    from pathlib import Path

    import companion.ledger as L
    from companion.session import GameSession
    assert GameSession(mini_game, "g1").pass_turn("Ann").ok       # (a row to void or correct)
    referee.login()
    before = client.get("/referee/?game=g1").get_data(as_text=True)
    assert "This ledger is read-only" not in before and "read-only:" not in before
    folder = Path(app.config["LEDGER"]).parent
    mini_game.close()                            # (the ledger is folded whole, as on an archive)
    app.extensions["companion.hub"].stop()
    real = os.access
    monkeypatch.setattr(L.os, "access", lambda p, mode, *a, **kw: False if mode & os.W_OK and Path(p).resolve()
                        in (folder.resolve(), Path(app.config["LEDGER"]).resolve()) else real(p, mode, *a, **kw))
    rv = referee.post("/referee/move", {"game": "g1", "kind": "pass", "player": "Ben"})
    assert rv.status_code == 400
    assert rv.json["error"].endswith("it can only be read here (its file or its folder cannot be written); "
                                     "nothing was written")
    # the console says so before anything is typed (a break-test typed a move first)
    html = client.get("/referee/?game=g1").get_data(as_text=True)
    assert 'class="flash flash-warn read-only"' in html and "This ledger is read-only" in html
    assert client.get("/api/state").json["players"][0]["name"] == "Ann"
    # and its write buttons are greyed out, saying why (a break-test found
    # Undo offered there, and refused when tapped); Log out still works
    def buttons(page, action):
        return [f[:f.index("</form>")] for f in page.split(f'action="/referee/{action}"')[1:]]
    for action in ("undo", "move", "start", "void", "correct", "end"):
        forms = buttons(html, action)
        assert forms and all('disabled title="The ledger is read-only: its file or its folder cannot be written"'
                             in f for f in forms), action
    assert "disabled" not in buttons(html, "logout")[0]


def test_undo_is_disabled_once_the_referee_ended_the_game(client, referee, mini_game):
    # (break-test, session 36) after End game the console offered an enabled
    # "Undo #2 pass" that every tap was refused ("the game has ended ...")
    from companion.session import GameSession
    assert GameSession(mini_game, "g1").pass_turn("Ann").ok
    assert GameSession(mini_game, "g1").end("abandoned").ok
    referee.login()
    html = client.get("/referee/").get_data(as_text=True)
    assert "Undo #2" not in html and '<span class="undo-label">Undo last move</span>' in html
    form = html[html.index('action="/referee/undo"'):]
    assert "disabled" in form[:form.index("</form>")]
    panel = client.get("/referee/panel").get_data(as_text=True)
    assert 'data-can-undo="0"' in panel and 'data-undo-id=""' in panel


@pytest.mark.parametrize("field,value", [("seed", "1_0"), ("seed", "\u0663"), ("seed", "\uff15"), ("seed", "1e3"),
                                         ("countdown_seconds", "6_0"), ("countdown_seconds", "\u0666\u0660")])
def test_start_reads_whole_numbers_as_the_command_line_does(client, referee, mini_game, field, value):
    # (break-test, session 36) int() took "1_0" (seed 10), an Arabic-Indic
    # "3" and a full-width "5": the ledger recorded another seed than typed,
    # which `companion game start --seed` refuses
    referee.login()
    form = {"mode": "word:word-sprint" if field == "countdown_seconds" else "love:sprint",
            "layout": "sprint-flat", "players": "Ann", "seed": "3", field: value}
    n = len(mini_game.events())
    rv = referee.post("/referee/start", form)
    assert rv.status_code == 400 and "must be a whole number" in rv.json["error"], rv.json
    assert len(mini_game.events()) == n
    rv = referee.post("/referee/reshuffle", {"player": "Ann", "seed": value})
    assert rv.status_code == 400 and "must be a whole number" in rv.json["error"], rv.json


# --------------------------------------------------------------------------- tester's defects (session 49)


def test_the_live_parts_name_each_form_s_item_or_event_for_the_console_to_keep_what_was_typed(client, referee,
                                                                                           mini_game):
    # referee.js carries what the referee typed over a live refresh, by each
    # form's action and its item_id / event_id, and says why when the form is
    # gone (the item settled, the event voided): the rows and items say which
    # event they are and how it stands
    item = mini_game.append("g1", "needs_referee", {"player": "Ann", "reason": "unclear", "slots": [D, E]},
                            None, 1001.0)
    referee.login()
    panel = client.get("/referee/panel?game=g1").get_data(as_text=True)
    assert f'<article class="item" data-item="{item.id}">' in panel
    settle = panel[panel.index('action="/referee/settle"'):]
    assert f'name="item_id" value="{item.id}"' in settle[:settle.index("</form>")]
    assert f'data-event="{item.id}" data-status="ok"' in panel
    passed = referee.post("/referee/move", {"game": "g1", "kind": "pass", "player": "Ann"}).json["events"][0]["id"]
    assert referee.post("/referee/void", {"game": "g1", "event_id": str(passed)}).json["ok"]
    panel = client.get("/referee/panel?game=g1").get_data(as_text=True)
    row = panel[panel.index(f'data-event="{passed}"'):]
    row = row[:row.index("</tr>")]
    # a voided event is offered no Correct form (the engine refuses it until its void is voided)
    assert 'data-status="voided"' in row and "/referee/correct" not in row and "<details>" not in row


def test_faces_may_be_typed_in_any_case_or_by_the_names_the_console_shows(client, referee, mini_game):
    # "Roses-3" and "3 Stemmed Rose" (the console's own words for the face)
    # were refused as "unknown face ... (did you mean 'roses-3'?)"
    referee.login()
    rv = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann", "slots": slots_text(D, E),
                                        "faces": "Roses-3, 3  stemmed ROSE"})
    assert rv.json["ok"], rv.json
    assert mini_game.events("g1")[-1].data["faces"] == ["roses-3", "roses-3"]
    item = mini_game.append("g1", "needs_referee", {"player": "Ann", "reason": "unclear", "slots": [A, C]},
                            None, 1002.0)
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": str(item.id), "decision": "claim",
                                          "player": "Ann", "slots": slots_text(A, C),
                                          "faces": "HEARTS-1,1 single heart"})
    assert rv.json["ok"], rv.json
    claim = next(e for e in mini_game.events("g1") if e.data.get("resolves") == item.id)
    assert claim.data["faces"] == ["hearts-1", "hearts-1"]
    fs = mini_game.append("g1", "faces_seen", {"slots": [B2], "faces": ["hearts-2"], "source": "camera"}, None,
                          1003.0)
    rv = referee.post("/referee/correct", {"game": "g1", "event_id": str(fs.id), "faces": "cupid\u2019s wings"})
    assert rv.json["ok"], rv.json
    assert state(mini_game).faces[3] == "cupid-wings"
    # a face neither an id nor a name is still refused by name
    rv = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann", "slots": slots_text(B2, C),
                                        "faces": "3 Stemmed Roses,hearts-2"})
    assert rv.status_code == 400 and "unknown face '3 Stemmed Roses'" in rv.json["error"]
    # the console offers the game's faces: ids with their names
    html = client.get("/referee/?game=g1").get_data(as_text=True)
    assert '<datalist id="face-ids">' in html and '<option value="roses-3" label="3 Stemmed Rose">' in html
    assert html.count('list="face-ids"') >= 2


def test_end_without_a_reason_is_refused_in_words(client, referee, mini_game):
    # an empty reason= ended the game as "abandoned" (no end scoring, no winner)
    referee.login()
    for form in ({"game": "g1"}, {"game": "g1", "reason": ""}, {"game": "g1", "reason": "  "}):
        rv = referee.post("/referee/end", form)
        assert rv.status_code == 400, rv.json
        assert rv.json["error"] == "choose why the game ends (abandoned, no-moves, time-up): nothing was recorded"
    assert [e.type for e in mini_game.events("g1")] == ["game_started"] and not state(mini_game).ended
    rv = referee.post("/referee/end", {"game": "g1"}, json_api=False)          # a plain form: flashed
    assert rv.status_code == 303 and not state(mini_game).ended


def test_a_second_settle_of_an_item_names_the_event_that_settled_or_voided_it(client, referee, mini_game):
    item = mini_game.append("g1", "needs_referee", {"player": "Ann", "reason": "unclear"}, None, 1001.0)
    referee.login()
    first = referee.post("/referee/settle", {"game": "g1", "item_id": str(item.id)})
    assert first.json["ok"]
    fix = first.json["events"][0]["id"]
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": str(item.id), "decision": "none"})
    assert rv.status_code == 400
    assert rv.json["error"] == (f"item #{item.id} was settled already, with no move, by event #{fix} (in another "
                                "console?): nothing more was recorded; look at the ledger")
    other = mini_game.append("g1", "needs_referee", {"player": "Ann", "reason": "unclear"}, None, 1002.0)
    void = referee.post("/referee/void", {"game": "g1", "event_id": str(other.id)}).json["events"][0]["id"]
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": str(other.id)})
    assert rv.status_code == 400
    assert rv.json["error"] == f"item #{other.id} was voided meanwhile, by event #{void}: nothing was settled"
    rv = referee.post("/referee/settle", {"game": "g1", "item_id": "1"})      # never an item: as before
    assert rv.status_code == 400 and "is not an open referee item" in rv.json["error"]


def _solo_quest(ledger, turn_limit: int = 30):
    from webgame import MINI_FACES, mini_layout
    data = G.start_data("love", "solo-quest", mini_layout(), list(MINI_FACES), ["Zed"], 7,
                        {"turn_limit": turn_limit})
    return ledger.append("g1", "game_started", data, None, 1000.0)


def test_a_solo_quests_turns_show_on_the_console_and_the_phone(client, referee, web_ledger):
    # `companion game show` says "turns 2 of 30"; neither page said it
    _solo_quest(web_ledger)
    referee.login()
    for pair in ((A, C), (D, E)):
        assert referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Zed",
                                              "slots": slots_text(*pair)}).json["ok"]
    assert client.get("/api/state").json["turns"] == {"used": 2, "limit": 30, "left": 28}
    panel = client.get("/referee/panel?game=g1").get_data(as_text=True)
    assert '<span class="turns">turns 2 of 30 (28 left)</span>' in panel
    phone = client.get("/").get_data(as_text=True)
    assert '<span class="num" id="turns-left">28</span>' in phone and "turns left (turns 2 of 30)" in phone
    # other modes have no turn limit, and show none
    from webgame import start_mini
    start_mini(web_ledger, gid="g2")
    assert client.get("/api/state?game=g2").json["turns"] is None
    assert 'class="turns"' not in client.get("/referee/panel?game=g2").get_data(as_text=True)
    assert 'id="turns" hidden' in client.get("/?game=g2").get_data(as_text=True)


def _word_sprint(ledger, countdown: int, ago: float):
    import time
    from webgame import mini_layout
    data = G.start_data("word", "word-sprint", mini_layout(), list("CATDOG"), ["Zed"], 3,
                        {"countdown_seconds": countdown})
    return ledger.append("g1", "game_started", data, None, time.time() - ago)


def test_the_console_shows_the_word_sprint_clock_and_when_time_is_up(client, referee, web_ledger):
    # the phone said "0:00 time's up" while the console showed the player to
    # play and no clock at all
    _word_sprint(web_ledger, 60, ago=120.0)
    referee.login()
    panel = client.get("/referee/panel?game=g1").get_data(as_text=True)
    assert 'id="console-clock"' in panel and 'data-up="1"' in panel
    assert '<strong class="clock-value">0:00</strong> <span class="clock-label">time&#39;s up</span>' in panel
    assert "Time's up: the game ends with the next move" in panel and "to play" not in panel
    timer = json.loads(panel.split("data-timer='")[1].split("'")[0])           # for referee.js to run it on
    assert timer["kind"] == "countdown" and timer["remaining"] == 0


def test_the_console_s_word_sprint_clock_runs_while_time_is_left(client, referee, web_ledger):
    _word_sprint(web_ledger, 600, ago=1.0)
    referee.login()
    html = client.get("/referee/?game=g1").get_data(as_text=True)
    value = html.split('<strong class="clock-value">')[1].split("<")[0]
    assert value in ("9:58", "9:59") and '<span class="clock-label">time left</span>' in html
    assert "Zed</bdi> to play" in html and 'data-up="0"' in html


def test_the_console_lets_the_keyboard_skip_the_board_and_names_each_row_s_buttons(client, referee, mini_game):
    # ~165 Tabs through every tile to reach the ledger; every row's buttons
    # were called just "Void", "Correct", "evidence & reason"
    referee.login()
    # (a claim: its row has an evidence link and a Correct form)
    eid = referee.post("/referee/move", {"game": "g1", "kind": "claim", "player": "Ann",
                                         "slots": slots_text(A, C)}).json["events"][0]["id"]
    item = mini_game.append("g1", "needs_referee", {"player": "Ben", "reason": "unclear", "slots": [D, E]},
                            None, 1001.0)
    html = client.get("/referee/?game=g1").get_data(as_text=True)
    skip = html.index('<a class="skip" href="#move-form">Skip the board\'s tiles</a>')
    assert skip < html.index('id="move-board"') < html.index('id="move-form"')
    assert '<a class="skip" href="#ledger">Skip to the ledger</a>' in html
    assert f'Void<span class="vh"> event #{eid}</span></button>' in html
    assert f'<summary>Correct<span class="vh"> event #{eid}</span></summary>' in html
    assert f'evidence &amp; reason<span class="vh"> of event #{eid} (opens in a new tab)</span></a>' in html
    assert f'Record correction<span class="vh"> of event #{eid}</span>' in html
    assert f'evidence<span class="vh"> for item #{item.id} (opens in a new tab)</span></a>' in html
    assert f'Settle<span class="vh"> item #{item.id}</span></button>' in html
