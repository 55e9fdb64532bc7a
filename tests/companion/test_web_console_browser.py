"""The console and the player pages in a real browser, for what their
JavaScript does (a tester's defects, session 49): a half-filled Settle or
Correct form kept over a live refresh, the console's Word Sprint clock, the
event page following the ledger, the Word card's pairs and words.

Headless Chromium (Debian's ``/usr/bin/chromium``) through Playwright, set
up (or skipped with the reason) by the fixtures of ``test_browser.py``;
never a downloaded browser.  Screenshots go where that file's go.
"""

from __future__ import annotations

import time

import pytest

from companion.layouts import Layout, Slot
from companion.ledger import Ledger
from companion.session import GameSession
from test_browser import _console, _shot, artifacts, browser_ready, phone, served  # noqa: F401  (fixtures)
from webgame import A, C, D, E, small_words

SETTLE = "form[action$='/settle']"


def _ann_claims(path) -> int:
    """Ann claims A + C in game g1 of the ledger at ``path``; the claim's id."""
    with Ledger(path) as led:
        return GameSession(led, "g1", t=time.time()).claim("Ann", [A, C]).written[0].id


def _wait_ledger_last(page, n: int) -> None:
    """Until the console's live panel has drawn event #n."""
    page.wait_for_selector(f"#panel-state[data-ledger-last='{n}']", state="attached", timeout=10_000)


def test_console_keeps_what_the_referee_typed_when_the_ledger_moves_on(served, phone, artifacts):
    # (tester) Decision=claim, Faces, Note typed in a Settle form; a pass
    # written meanwhile by another process; the focus left the panel and
    # 0.3 s later the form was back to its defaults, silently
    srv, path = served
    claim = _ann_claims(path)
    with Ledger(path) as led:
        item = led.append("g1", "needs_referee", {"player": "Ann", "reason": "hands over the table",
                                                  "slots": [D, E]}, None, time.time()).id
    page, errors = _console(phone, srv)
    page.select_option(f"{SETTLE} select[name=decision]", "claim")
    page.fill(f"{SETTLE} input[name=faces]", "roses-3,roses-3")
    page.click(f"#ledger tr[data-event='{claim}'] summary")                # a Correct form open, typed in
    row = f"#ledger tr[data-event='{claim}']"
    page.fill(f"{row} input[name=reason]", "Ann's hand, not Ben's")
    page.fill(f"{SETTLE} input[name=reason]", "players agree")              # the focus stays in the Note
    with Ledger(path) as led:
        passed = GameSession(led, "g1", t=time.time()).pass_turn("Ann").written[0].id
    page.wait_for_timeout(600)                                             # (the stream brought it: deferred)
    page.click("h1")                                                       # a tap on blank space
    _wait_ledger_last(page, passed)
    page.wait_for_timeout(300)
    assert page.input_value(f"{SETTLE} select[name=decision]") == "claim"
    assert page.input_value(f"{SETTLE} input[name=faces]") == "roses-3,roses-3"
    assert page.input_value(f"{SETTLE} input[name=reason]") == "players agree"
    assert page.input_value(f"{SETTLE} input[name=slots]") == "8,0,0 12,0,0"     # (as drawn: untouched)
    assert page.eval_on_selector(f"{row} details", "d => d.open")
    assert page.input_value(f"{row} input[name=reason]") == "Ann's hand, not Ben's"
    assert page.locator("#toast .flash").count() == 0                      # nothing lost: nothing said
    _shot(page, artifacts, "console-kept-over-refresh.png")

    # settled from another console, voided elsewhere: the forms are gone, and the toast says so
    with Ledger(path) as led:
        s = GameSession(led, "g1", t=time.time())
        assert s.settle(item, "none").ok
        voided = GameSession(led, "g1", t=time.time()).void(claim).written[-1].id
    _wait_ledger_last(page, voided)
    page.wait_for_selector("#toast .flash-warn", timeout=5_000)
    toast = page.inner_text("#toast")
    assert (f"Item #{item} was settled meanwhile (in another console?): what you typed for it (Decision: claim; "
            "Faces: roses-3,roses-3; Note: players agree) was not sent.") in toast, toast
    assert f"Event #{claim} was voided meanwhile (in another console?): the correction you typed for it " \
        "(Reason: Ann's hand, not Ben's) was not sent." in toast, toast
    assert page.locator(SETTLE).count() == 0
    _shot(page, artifacts, "console-typed-form-gone.png")
    page.click("#toast .flash-close")

    # a form sent and recorded is not put back by the refresh after it
    with Ledger(path) as led:
        item2 = led.append("g1", "needs_referee", {"player": "Ben", "reason": "unclear"}, None, time.time()).id
    _wait_ledger_last(page, item2)
    page.fill(f"{SETTLE} input[name=reason]", "nothing happened")
    page.click(f"{SETTLE} button")
    page.wait_for_selector("#toast .flash-ok", timeout=5_000)
    page.wait_for_timeout(800)
    assert page.locator(SETTLE).count() == 0 and page.locator("#toast .flash-warn").count() == 0
    assert f"item #{item2} settled: no move" in page.inner_text("#toast")
    assert errors == []


def test_console_runs_the_word_sprint_clock_and_says_when_time_is_up(tmp_path, phone, artifacts):
    # (tester) the phone said "0:00 time's up"; the console showed the player
    # to play and no clock
    from companion import game as G
    from companion.web.serve import start_server
    path = tmp_path / "w.db"
    slots = tuple(Slot(4 * i, 0, 0) for i in range(4))
    with Ledger(path) as led:
        data = G.start_data("word", "word-sprint", Layout("row4", slots), list("AABB"), ["Zed"], 3,
                            {"countdown_seconds": 4})
        led.append("g1", "game_started", data, None, time.time())
    srv = start_server({"LEDGER": str(path), "REFEREE_PIN": "123456"}, "127.0.0.1", 0)
    try:
        page, errors = _console(phone, srv)
        assert page.inner_text("#console-clock .clock-label") == "time left"
        assert page.inner_text("#console-clock .clock-value") in ("0:03", "0:02", "0:01")
        assert "Zed to play" in page.inner_text("#panel")
        page.wait_for_selector("#console-clock.up", timeout=10_000)       # the panel fetched again at 0
        assert page.inner_text("#console-clock .clock-value") == "0:00"
        assert page.inner_text("#console-clock .clock-label") == "time's up"
        assert "Time's up: the game ends with the next move" in page.inner_text("#panel")
        assert "to play" not in page.inner_text("#panel .big")
        _shot(page, artifacts, "console-word-sprint-times-up.png")
        assert errors == []
    finally:
        srv.stop()


def test_the_event_page_shows_a_void_recorded_after_it_opened(served, phone, artifacts):
    # (tester) /event/N open, #N voided from the console: 3 s later the page
    # still showed its scoring, no VOIDED badge, no word that it was not live
    srv, path = served
    claim = _ann_claims(path)
    page = phone.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{srv.url}event/{claim}")
    page.wait_for_selector("#live.on", timeout=10_000)
    assert page.inner_text("#asof").startswith("Following the ledger live")
    with Ledger(path) as led:
        assert GameSession(led, "g1", t=time.time()).void(claim).ok
        voided_at = time.monotonic()
    # (the page follows the ledger's stream: well under a second when idle;
    # 8 s allows a loaded CI machine, where the old page never changed)
    page.wait_for_selector("#ev-head .badge.st-voided", timeout=8_000)
    assert time.monotonic() - voided_at < 8.0
    assert f"referee voided event #{claim}" in page.inner_text("#ev-head")
    _shot(page, artifacts, "event-page-voided-live.png")
    srv.stop()                                                              # the server gone: says so
    page.wait_for_selector("#live.off", timeout=10_000)
    assert "not live" in page.inner_text("#asof")
    assert errors == []


def test_a_word_players_card_counts_pairs_and_words_apart(tmp_path, phone):
    # (tester) "3 matches · words: SKI, HOP" meant 1 pair and 2 words
    from companion import game as G
    from companion.web.serve import start_server
    path = tmp_path / "w.db"
    slots = tuple(Slot(4 * i, 0, 0) for i in range(8))
    with Ledger(path) as led:
        data = G.start_data("word", "zen-archives", Layout("row8", slots), list("CATDOGEE"), ["Zed"], 3, {})
        led.append("g1", "game_started", data, None, time.time())
        s = lambda: GameSession(led, "g1", t=time.time(), words_loader=small_words)   # noqa: E731
        assert s().word("Zed", [list(slots[i]) for i in (0, 1, 2)], "CAT").ok
        assert s().word("Zed", [list(slots[i]) for i in (3, 4, 5)], "DOG").ok
        assert s().claim("Zed", [list(slots[6]), list(slots[7])]).ok
    srv = start_server({"LEDGER": str(path), "REFEREE_PIN": "123456"}, "127.0.0.1", 0)
    try:
        page = phone.new_page()
        page.goto(srv.url)
        page.wait_for_selector(".player .lines", timeout=10_000)
        assert page.inner_text(".player .lines") == "1 pair \u00b7 2 words: CAT, DOG"
    finally:
        srv.stop()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_solo_quests_turns_show_on_the_phone_and_the_console(tmp_path, phone, artifacts, scheme):
    # (tester) "turns 2 of 30" was shown nowhere on the web
    from companion import game as G
    from companion.web.serve import start_server
    from webgame import MINI_FACES, mini_layout
    path = tmp_path / "s.db"
    with Ledger(path) as led:
        led.append("g1", "game_started", G.start_data("love", "solo-quest", mini_layout(), list(MINI_FACES), ["Zed"],
                                                      7, {"turn_limit": 30}), None, time.time())
        for pair in ((A, C), (D, E)):
            assert GameSession(led, "g1", t=time.time()).claim("Zed", list(pair)).ok
    srv = start_server({"LEDGER": str(path), "REFEREE_PIN": "123456"}, "127.0.0.1", 0)
    try:
        page = phone.new_page()
        page.emulate_media(color_scheme=scheme)
        page.set_viewport_size({"width": 360, "height": 740})
        page.goto(srv.url)
        page.wait_for_selector("#live.on", timeout=10_000)
        assert page.inner_text("#turns-left") == "28"
        assert page.inner_text("#turns-lbl") == "turns left (turns 2 of 30)"
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        _shot(page, artifacts, f"solo-quest-turns-phone-{scheme}.png")
        console = phone.new_page()                 # (the game is over, 2 hearts-2 one on the other: no move form)
        console.emulate_media(color_scheme=scheme)
        console.set_viewport_size({"width": 360, "height": 740})
        console.goto(srv.url + "referee/")
        console.fill("input[name=pin]", "123456")
        console.click("form[action$='/login'] button")
        console.wait_for_selector("#panel .turns", timeout=10_000)
        assert console.inner_text("#panel .turns") == "turns 2 of 30 (28 left)"
        _shot(console, artifacts, f"solo-quest-turns-console-{scheme}.png")
    finally:
        srv.stop()


def test_the_keyboard_skips_the_console_s_board_and_each_row_s_buttons_name_their_event(served, phone, artifacts):
    # (tester) ~165 Tabs through every tile to reach the first ledger row's
    # Void; every row's buttons were named just "Void", "Correct"
    srv, path = served
    claim = _ann_claims(path)
    page, errors = _console(phone, srv)
    page.set_viewport_size({"width": 360, "height": 740})
    page.focus("body")

    def tab_to(text: str, most: int = 8) -> None:
        for _ in range(most):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.textContent.trim()") == text:
                return
        raise AssertionError(f"{text!r} not reached in {most} Tabs")
    tab_to("Skip to the ledger")
    _shot(page, artifacts, "console-skip-to-the-ledger.png")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")                                      # the newest row: its evidence, its Void
    assert page.evaluate("document.activeElement.textContent.trim()") == f"evidence & reason of event #{claim} (opens in a new tab)"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == f"Void event #{claim}"
    page.focus("#move-zoom")
    tab_to("Skip the board's tiles", 2)
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "kind"          # the move form's first field
    assert page.get_by_role("button", name=f"Void event #{claim}").count() == 1
    assert page.locator("summary", has_text=f"Correct event #{claim}").count() == 1
    assert page.get_by_role("link", name=f"evidence & reason of event #{claim} (opens in a new tab)").count() == 1
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, width
    assert errors == []
