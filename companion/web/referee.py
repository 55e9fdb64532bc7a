"""``referee`` blueprint: the referee console, the only place that changes
anything.  Every route but the login page needs the referee session; every
POST needs the session's CSRF token (:mod:`companion.web.security`).

Views are short: check the form, call :class:`companion.session.GameSession`
(replay, resolve, commit: the same engine calls as ``companion game``), wake
the live streams, answer.  A plain form post is answered with a redirect to
the console and a flashed message; a fetch call (``X-CSRF-Token`` header or
``Accept: application/json``) gets JSON ``{ok, message, error, events}``.

* ``GET /referee/``: the PIN form, or the console once logged in.
* ``GET /referee/panel``: the console's live part (HTML fragment).
* ``POST /referee/login``, ``/logout``.
* ``POST /referee/start``: variant, mode, layout, players, seed (+ options).
* ``POST /referee/move``: a claim, touch, word (Word Mahjong) or pass entered by hand.
* ``POST /referee/correct``, ``/void``: a correction event pointing at an
  event (the original stays in the ledger).
* ``POST /referee/settle``: settle a "needs referee" item, with the claim or
  penalty decided, if any.
* ``POST /referee/undo``, ``/hint``, ``/reshuffle``, ``/end``.
* ``GET /referee/export.csv``, ``/export.json``: the game's ledger.
"""

from __future__ import annotations

import io
import os
import json
import re
import secrets
import threading
import time
import unicodedata
from typing import Callable

from markupsafe import Markup, escape
from flask import (Blueprint, Response, current_app, flash, jsonify, redirect, render_template, request,
                   url_for)
from werkzeug.exceptions import TooManyRequests

from companion import codex
from companion.cli import curbed
from companion import game as G
from companion.errors import BadInput, CompanionError
from companion.layouts import Slot
from companion.session import DECISIONS, END_REASONS, GameSession, Result, abandon_time, clock_refusal, start_game
from companion.tiles import VARIANTS, TileSet, tileset
from companion.variants import find_variant
from companion.web import scoreboard
from companion.web.db import game_arg, get_db, notify, shown_game_id
from companion.web.security import (client_address, csrf_ok, is_referee, limiter, log_in, log_out,
                                    pin_matches, require)

bp = Blueprint("referee", __name__, url_prefix="/referee")

OPEN_ENDPOINTS = ("referee.console",)       # the PIN form is shown to anyone
INT_OPTIONS = ("turn_limit", "countdown_seconds", "target_seconds", "level")


@bp.before_request
def guard():
    """Session first (403), then the CSRF token on every POST (403)."""
    if request.endpoint == "referee.login":
        require(csrf_ok(), 403, "the form has expired or lacks its CSRF token: reload the page")
        return None
    if request.endpoint in OPEN_ENDPOINTS and request.method in ("GET", "HEAD"):
        return None
    require(is_referee(), 403, "referee only: log in with the PIN shown on the host's terminal")
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        require(csrf_ok(), 403, "missing or wrong CSRF token: reload the console")
    return None


# --------------------------------------------------------------------------- helpers


def _json_wanted() -> bool:
    return request.headers.get("X-CSRF-Token") is not None or request.accept_mimetypes.best == "application/json"


def _words_loader() -> Callable:
    loader = current_app.config.get("WORDS_LOADER")
    if loader is not None:
        return loader

    def load():
        from companion import wordlist
        return wordlist.words(), wordlist.index()
    return load


def _session(game: str | None = None, abandoning: bool = False) -> GameSession:
    s = GameSession(get_db(), game or request.form.get("game") or None, t=time.time(),
                    words_loader=_words_loader())
    if abandoning:                  # (ended whatever the clock: session.abandon_time)
        s.t = abandon_time(s.state, s.t)
    # a Word game on its own clock (started with --t): the console's wall
    # clock would end a Word Sprint at once, or time years
    why = clock_refusal(s.state, s.t, None)
    if why:
        raise BadInput(why)
    return s


def _answer(result: Result | None = None, message: str = "", error: str | None = None, status: int = 200):
    written = result.written if result is not None else []
    message = message or (result.message if result is not None else "")
    error = error if error is not None else (result.error if result is not None else None)
    if written:
        notify()
    if error and status == 200:
        status = 409
    if _json_wanted():
        return jsonify(ok=error is None, message=message, error=error,
                       warning=result.warning if result is not None else None,
                       events=[{"id": e.id, "type": e.type} for e in written]), status
    if written:
        ids = ", ".join(f"#{e.id} {e.type}" for e in written)
        message = (message + " " if message else "") + f"(recorded: {ids})"
    if error:
        flash(error, "error")
    if message:
        flash(message, "ok" if not error else "info")
    if result is not None and result.warning:
        flash(result.warning, "warn")
    return redirect(url_for(".console", game=request.form.get("game") or None), code=303)


def _seen_event(field: str) -> int | None:
    """The event number a form says its page last showed (``after`` or
    ``ledger_after``), None when the form has no such field.

    Raises:
        BadInput: a value that is not an event number.
    """
    after = (request.form.get(field) or "").strip()
    if not after:
        return None
    if not (after.isascii() and after.isdigit() and len(after) <= 19):
        raise BadInput(f"the form's field {field}={after[:40]!r} is not an event number: "
                       "reload the console and send the form from there")
    return int(after)


def _check_fresh() -> None:
    """A form drawn when the game's last event was #N sends ``after=N``; if the
    ledger has moved on since (a double tap, the camera's referee, another
    referee), the action is refused rather than applied to a game the
    referee has not seen.  Forms without the field are not checked."""
    after = _seen_event("after")
    if after is None:
        return
    led = get_db()
    gid = request.form.get("game") or led.latest_game_id()
    evs = led.events(gid) if gid else []
    if request.form.get("game") and not evs:
        raise BadInput(f"no game {shown_game_id(gid)} in this ledger")
    last = evs[-1].id if evs else 0
    if after != last:
        raise BadInput(f"the game has changed since this form was shown (event #{last} is new): "
                       f"look at the ledger, then send it again")


def _check_ledger_fresh() -> None:
    """The Start form, drawn when the ledger's newest event was #N, sends
    ``ledger_after=N``; a ledger that has moved on since (the same form sent
    twice, which started a second game, or a game started elsewhere) is
    refused.  Forms without the field are not checked."""
    after = _seen_event("ledger_after")
    if after is not None and after != get_db().last_id():
        led = get_db()
        raise BadInput(f"the ledger has changed since this form was shown (event #{led.last_id()} is new; the "
                       f"newest game is {led.latest_game_id()}): look at the games, then start again")


#: one console action at a time in this process (waitress serves requests on
#: several threads): the freshness check and the write it guards must not
#: interleave with another request's, or two posts of one form both pass
_ACTION_LOCK = threading.Lock()


def _check_text() -> None:
    """No field of the posted form holds U+FFFD, the replacement character:
    a byte that is not UTF-8 in a multipart post reaches the form as one
    (Werkzeug decodes multipart fields with ``errors="replace"``), and was
    recorded as typed (a player's name, a reason).  One pasted as such is
    refused too: it marks text already lost in an earlier decoding, never a
    name or a reason as meant.  (A urlencoded post keeps such a byte as the
    three characters ``%FF``, which cannot be told from typed text.)

    Raises:
        BadInput: naming the first such field.
    """
    for name, value in request.form.items(multi=True):
        if "\ufffd" in value or "\ufffd" in name:
            raise BadInput(f"the form's field {curbed(repr(name.replace(chr(0xFFFD), '?')))} holds U+FFFD, the mark "
                           "of bytes that were not UTF-8 text: type it again")


def _act(fn: Callable[[], Result]):
    try:
        with _ACTION_LOCK:
            _check_text()
            _check_fresh()
            result = fn()
        return _answer(result)
    except CompanionError as exc:
        return _answer(error=curbed(str(exc)), status=400)


def _field(name: str, required: bool = True) -> str:
    v = (request.form.get(name) or "").strip()
    if required and not v:
        raise BadInput(f"{name.replace('_', ' ')} is required")
    return v


def _slots(text: str) -> list[list[int]]:
    """``"x,y,z x,y,z"`` (spaces or semicolons between tiles) -> slot lists."""
    parts = [p for p in re.split(r"[\s;]+", text.strip()) if p]
    return [list(Slot.parse(p)) for p in parts]


def _whole(name: str, text: str) -> int:
    """A form's whole number, read as the command line reads one
    (:func:`companion.cli.seed_value`): ASCII digits only, so not ``1_0``,
    a full-width or Arabic-Indic digit, which ``int()`` takes (a seed typed
    ``1_0`` dealt seed 10's tiles).

    Raises:
        BadInput: not a whole number.
    """
    if not (re.fullmatch(r"-?[0-9]+", text) and len(text) <= 4000):
        raise BadInput(f"{name} must be a whole number, got {curbed(repr(text))}")
    return int(text)


def _over_record() -> bool:
    """The form's "over the record" box: typed faces replace recorded ones
    (:func:`companion.session.check_typed_faces`)."""
    return _field("over_record", required=False) in ("1", "on", "true", "yes")


def _faces(text: str, tiles: TileSet | None = None) -> list[str] | None:
    """A form's faces, separated by commas, as face ids.  With the game's
    ``tiles``, a face typed in another case (``Roses-3``) or by the name the
    console itself shows (``3 Stemmed Rose``, ``Cupid's Wings``) is taken
    for its id (a break-test: both were refused as "unknown face", the
    first with "did you mean 'roses-3'?"); anything else goes on as typed,
    for the engine to refuse naming it (:meth:`companion.tiles.TileSet.face`).
    A blank field is no faces (None).

    Raises:
        BadInput: an empty item between commas (``roses-3,,roses-3``), as
            ``game --faces`` refuses it: it was dropped, and a claim typed
            with a slip named fewer faces than the player meant.
    """
    if not text.strip():
        return None
    items = [f.strip() for f in text.split(",")]
    if not all(items):
        raise BadInput(f"faces: give face ids separated by commas, e.g. hearts-1,hearts-1 (got {curbed(repr(text))})")
    if tiles is not None:
        items = [tiles.typed_id(f) for f in items]
    return items or None


def _event_id(name: str = "event_id") -> int:
    v = _field(name)
    if not (v.isascii() and v.isdigit() and len(v) <= 19):      # not "1_2" or a full-width "１"
        raise BadInput(f"{name.replace('_', ' ')} must be a number, got {v[:40]!r}")
    return int(v)


# --------------------------------------------------------------------------- pages


#: ledger rows the console shows unless asked for all (each row carries its
#: void and correction forms: a long game's whole ledger, re-sent on every
#: event, made the page slow on a phone)
LEDGER_ROWS = 60


def _console_data(game: str | None, all_rows: bool = False) -> dict:
    led = get_db()
    gid = game or led.latest_game_id()
    data = {"game": gid, "state": None, "items": [], "caps": {}, "undo": None, "rows": [], "games": led.games(),
            "last_id": 0, "ledger_last": led.last_id(), "older": 0, "all_rows": all_rows, "ledger_rows": LEDGER_ROWS,
            "unknown_game": None, "board_svg": "", "clock": None}
    # a console kept on an older game says when a newer one runs, as the
    # phone page does (a break-test, session 59: the console stayed on
    # game-1, "Nothing to settle", while game-2 waited for the referee)
    latest = led.latest_game_id()
    data["newer"] = latest if latest and gid and latest != gid else None
    known = bool(gid) and bool(led.events(gid))
    if game and not known:
        data["unknown_game"] = shown_game_id(game)
    elif known:
        s = GameSession(led, gid)
        evs = s.events
        data["state"] = scoreboard.player_state(evs, now=time.time())
        # a Word timer as the phones show it (referee.js runs it on)
        data["clock"] = scoreboard.timer_view(data["state"]["timer"], data["state"]["ended"])
        data["items"] = s.open_items()
        data["caps"] = s.capabilities()
        # what Undo takes back, named on its button and in its question
        target = G.undo_target(s.state) if data["caps"]["undo"] else None
        ent = s.state.entries.get(target) if target is not None else None
        data["undo"] = {"id": target, "type": ent.type, "text": ent.text} if ent is not None else None
        rows = list(reversed(led.export_json(gid)["events"]))
        data["rows"] = rows if all_rows else rows[:LEDGER_ROWS]
        data["older"] = len(rows) - len(data["rows"])
        data["last_id"] = evs[-1].id
        # the board to tap tiles on for the move form (hidden faces stay hidden)
        data["board_svg"] = scoreboard.board_svg(s.state, title="Tap the tiles of the move")
    return data


@bp.get("/")
def console():
    if not is_referee():
        # a lock-out in force is said on the form, before a PIN is typed
        # (the page looked unlocked until the right PIN was refused; a
        # break-test, session 58)
        verdict = limiter().check(client_address())
        locked = None
        if not verdict.allowed:
            minutes = max(1, round(verdict.retry_after / 60))
            who = "from this device" if verdict.scope == "client" else "on this server"
            locked = (f"PIN entry is locked after too many wrong PINs {who}: try again in {minutes} "
                      f"minute{'s' if minutes != 1 else ''}.")
        return render_template("referee/login.html", locked=locked)
    data = _console_data(game_arg(), _all_rows())
    return render_template("referee/console.html", variants=_variants(), layouts=codex.entries(),
                           decisions=DECISIONS, end_reasons=END_REASONS, seed=secrets.randbelow(10**6),
                           faces=_face_list(data["state"]), **data)


def _face_list(state: dict | None) -> list:
    """The faces of the game's tile set, offered to the forms' Faces fields
    (a ``<datalist>``: the id, with the name the console shows)."""
    return list(tileset(state["variant"]).faces) if state else []


@bp.context_processor
def _write_controls() -> dict:
    """``read_only`` (why the ledger cannot be written, or None) and
    ``disabled_if_read_only`` (the attributes every button that writes takes
    then) for the console's pages: a read-only ledger's console shows the
    game with its write buttons greyed out, not offered and then refused."""
    why = _read_only() if is_referee() else None
    attrs = Markup(f' disabled title="{escape("The ledger is read-only: " + why)}"') if why else Markup("")
    return {"read_only": why, "disabled_if_read_only": attrs}


def _read_only() -> str | None:
    """Whether the served ledger exists and this process cannot write it
    (:func:`companion.ledger.read_only_why`, the reason; asked on each page, as a mount may
    change under a running server): the console says so before a move is
    typed."""
    from companion.ledger import read_only_why
    path = current_app.config["LEDGER"]
    return read_only_why(path) if os.path.exists(path) else None


def _all_rows() -> bool:
    return request.args.get("all") == "1"


@bp.get("/panel")
def panel():
    # the settle forms' decisions too: without them a refreshed panel offered
    # none, and a form sent without one settled the item "none"
    return render_template("referee/_live.html", decisions=DECISIONS,
                           **_console_data(game_arg(), _all_rows()))


def _variants() -> list[dict]:
    out = []
    for v in VARIANTS:
        r = find_variant(v)
        out.append({"id": v, "title": r.title,
                    "modes": [{"id": m.id, "title": m.title, "players": (m.min_players, m.max_players), "kind": m.kind}
                              for m in r.modes]})
    return out


# --------------------------------------------------------------------------- login


@bp.post("/login")
def login():
    lim = limiter()
    addr = client_address()
    verdict = lim.check(addr)
    if verdict.allowed and pin_matches(request.form.get("pin"), current_app.config["REFEREE_PIN"]):
        lim.succeed(addr)
        log_in()
        flash("Referee console unlocked.", "ok")
        return redirect(url_for(".console"), code=303)
    if verdict.allowed:
        verdict = lim.fail(addr)
        if verdict.allowed:
            left = lim.tries_left(addr)
            mins = max(1, round(lim.lockout / 60))
            warn = f"{left} more wrong PIN{'s' if left != 1 else ''} and PIN entry locks for {mins} minute" \
                   f"{'s' if mins != 1 else ''}"
            if _json_wanted():
                return jsonify(ok=False, error=f"wrong PIN ({warn})"), 401
            return render_template("referee/login.html",
                                   error=f"Wrong PIN: look at the host's terminal. {warn}."), 401
    minutes = max(1, round(verdict.retry_after / 60))
    who = "from this device" if verdict.scope == "client" else "on this server"
    exc = TooManyRequests(f"Too many wrong PINs {who}: PIN entry is locked. "
                          f"Try again in {minutes} minute{'s' if minutes != 1 else ''}.")
    exc.retry_after = verdict.retry_after
    exc.title = "PIN entry locked"
    raise exc


@bp.post("/logout")
def logout():
    log_out()
    return redirect(url_for(".console"), code=303)


# --------------------------------------------------------------------------- actions


@bp.post("/start")
def start():
    def go() -> Result:
        # the form's one list names both ("love:hand-builder": mode ids
        # repeat across the games); a separate "variant" field is read too
        mode = _field("mode")
        variant, mode = ((part.strip() for part in mode.split(":", 1)) if ":" in mode
                         else (_field("variant"), mode))
        layout = codex.builtin(_field("layout"))
        players = [p.strip() for p in _field("players").split(",") if p.strip()]
        seed_text = _field("seed", required=False)
        seed = _whole("seed", seed_text) if seed_text else secrets.randbelow(10**6)
        if seed < 0:      # as the command line (companion.cli.seed_value): -N would deal N's tiles
            raise BadInput(f"seed must be a whole number 0 or more, got {seed} (it would deal the same tiles "
                           f"as {-seed})")
        opts: dict = {}
        if _field("difficulty", required=False):
            opts["difficulty"] = _field("difficulty")
        for key in INT_OPTIONS:
            v = _field(key, required=False)
            if v:
                opts[key] = _whole(key.replace("_", " "), v)
        ev = start_game(get_db(), variant, mode, layout, players, seed, opts, t=time.time())
        return Result([ev], f"{ev.game_id} started: {variant} {mode} on {layout.name}, seed {seed}")
    try:
        with _ACTION_LOCK:          # (two Start taps at once must not both take the next game id)
            _check_text()
            _check_ledger_fresh()
            res = go()
    except CompanionError as exc:
        return _answer(error=curbed(str(exc)), status=400)
    notify()
    if _json_wanted():
        return jsonify(ok=True, message=res.message, error=None, game_id=res.written[0].game_id,
                       events=[{"id": e.id, "type": e.type} for e in res.written])
    flash(res.message, "ok")
    return redirect(url_for(".console"), code=303)


@bp.post("/move")
def move():
    def go() -> Result:
        kind = _field("kind")
        player = _field("player")
        s = _session()
        if kind == "claim":
            return s.claim(player, _slots(_field("slots")), _faces(_field("faces", required=False), s.state.tiles),
                           over_record=_over_record())
        if kind == "touch":
            slots = _slots(_field("slots"))
            if len(slots) != 1:
                raise BadInput(f"a touch names one tile, got {len(slots)}")
            return s.touch(player, slots[0])
        if kind == "pass":
            return s.pass_turn(player)
        if kind == "word":
            return s.word(player, _slots(_field("slots")), _field("word"),
                          _faces(_field("faces", required=False), s.state.tiles), over_record=_over_record())
        raise BadInput(f"unknown move {kind!r} (claim, touch, word or pass)")
    return _act(go)


@bp.post("/correct")
def correct():
    def go() -> Result:
        s = _session()
        changes: dict = {}
        if _field("player", required=False):
            changes["player"] = _field("player")
        if _field("slots", required=False):
            sl = _slots(_field("slots"))
            # the form has one "slots" box: one tile goes to the field of an
            # event that names one (a penalty, a touch), else a list
            target = get_db().event(_event_id())
            one = target is not None and "slot" in G.CORRECTABLE.get(target.type.replace("-", "_"), ())
            if one and len(sl) == 1:
                changes["slot"] = sl[0]
            else:
                changes["slots"] = sl
        if _field("faces", required=False):
            changes["faces"] = _faces(_field("faces"), s.state.tiles)     # (",,," refused: it cleared them)
        if _field("word", required=False):
            changes["word"] = _field("word")
        return s.correct(_event_id(), changes, _field("reason", required=False))
    return _act(go)


@bp.post("/void")
def void():
    return _act(lambda: _session().void(_event_id(), _field("reason", required=False)))


@bp.post("/settle")
def settle():
    def go() -> Result:
        s = _session()
        item_id = _event_id("item_id")
        _settled_already(s, item_id)
        slots = _field("slots", required=False)
        faces = _field("faces", required=False)
        return s.settle(item_id, _field("decision", required=False) or "none",
                        _field("player", required=False) or None, _slots(slots) if slots else None,
                        _field("reason", required=False), _faces(faces, s.state.tiles) if faces else None,
                        _field("word", required=False) or None, over_record=_over_record())
    return _act(go)


def _settled_already(s: GameSession, item_id: int) -> None:
    """Refuse in words a Settle of an item that is no longer open because it
    was settled or voided (by another console, or by the camera's referee):
    the answer names the event that did it (before: "event #18 is not an
    open referee item").  Other items are left to
    :meth:`GameSession.settle` to refuse.

    Raises:
        BadInput: the item was settled or voided.
    """
    st = s.state
    if any(i["id"] == item_id for i in s.open_items()):
        return
    for e in reversed(st.raw):
        if e.type != "correction" or e.ref != item_id or st.status.get(e.id) == "voided":
            continue
        changes = e.data.get("changes") if isinstance(e.data.get("changes"), dict) else {}
        if e.data.get("void"):
            raise BadInput(f"item #{item_id} was voided meanwhile, by event #{e.id}: nothing was settled")
        if changes.get("resolved") is True:
            decision = changes.get("decision")
            how = "with no move" if decision in (None, "none") else f"as a {decision}"
            raise BadInput(f"item #{item_id} was settled already, {how}, by event #{e.id} (in another console?): "
                           "nothing more was recorded; look at the ledger")


@bp.post("/undo")
def undo():
    def go() -> Result:
        s = _session()
        target = _field("target", required=False)
        if target:
            # the button named the move it takes back: refuse if that is no
            # longer the last move (the page fell behind the game)
            now = G.undo_target(s.state)
            if not (target.isascii() and target.isdigit()) or now != int(target[:19]):
                ent = s.state.entries.get(now) if now is not None else None
                what = f"#{now} ({ent.text})" if ent is not None else "nothing"
                raise BadInput(f"Undo would now take back {what}, not #{target[:19]}: look at the ledger, "
                               "then send it again")
        return s.undo(_field("player", required=False) or None)
    return _act(go)


@bp.post("/hint")
def hint():
    return _act(lambda: _session().hint(_field("player")))


@bp.post("/reshuffle")
def reshuffle():
    def go() -> Result:
        seed = _field("seed", required=False)
        n = _whole("seed", seed) if seed else None
        if n is not None and n < 0:
            raise BadInput(f"seed must be a whole number 0 or more, got {n}")
        return _session().reshuffle(_field("player"), n)
    return _act(go)


@bp.post("/end")
def end():
    def go() -> Result:
        # no default: "abandoned" (no end scoring, no winner) ended the
        # game of a form sent without its reason chosen
        reason = _field("reason", required=False)
        if not reason:
            raise BadInput(f"choose why the game ends ({', '.join(END_REASONS)}): nothing was recorded")
        return _session(abandoning=reason == "abandoned").end(reason)
    return _act(go)


# --------------------------------------------------------------------------- export


def _export_game() -> str:
    led = get_db()
    gid = game_arg() or led.latest_game_id()
    if not gid:
        raise BadInput("the ledger holds no game yet")
    return gid


@bp.get("/export.csv")
def export_csv():
    gid = _export_game()
    buf = io.StringIO()
    get_db().export_csv(gid, buf)
    return Response(buf.getvalue(), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{_safe(gid)}.csv"'})


@bp.get("/export.json")
def export_json():
    gid = _export_game()
    text = json.dumps(get_db().export_json(gid), indent=1)
    return Response(text + "\n", mimetype="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{_safe(gid)}.json"'})


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:80] or "game"
