"""``api`` blueprint: the scoreboard as JSON for pages and scripts, and the
live event stream.  GET only.

* ``GET /api/state[?game=ID]``: the game (the latest by default) as
  :func:`companion.web.scoreboard.player_state` (CONTRACT.md: players,
  scores, whose turn, last events, and more).  Before the ledger's first
  game the latest game is :func:`companion.web.scoreboard.waiting_state`
  (200, ``game_id`` null, no players); a ``game`` the ledger does not hold
  is 404.
* ``GET /api/events[?game=ID][&last_id=N]``: Server-Sent Events, one
  ``ledger`` message per new ledger event; a reconnecting browser's
  ``Last-Event-ID`` header (or ``last_id``) replays what it missed; past
  :class:`~companion.web.hub.EventHub`'s limit in all a stream is refused
  with 503 and ``Retry-After``, and past its limit per address the oldest
  stream of that address ends.
* ``GET /api/board[?game=ID][&at=N]``: the top-down board with free flags;
  ``/api/board.svg`` draws it; ``at`` is the board after event ``N``.
* ``GET /api/check?slot=x,y,z[&game=ID][&at=N]``: "check a tile": free or
  blocked and why (:mod:`companion.rules`).
* ``GET /api/games``: the ledger's games.
"""

from __future__ import annotations

import time

from flask import Blueprint, Response, abort, current_app, jsonify, request

from companion.web.db import game_arg, get_db, get_game, get_hub, shown_game_id
from companion.web.hub import SlotResponse
from companion.web.security import client_address
from companion.web import scoreboard

bp = Blueprint("api", __name__, url_prefix="/api")

#: seconds a refused stream is told to wait (``Retry-After``)
STREAM_RETRY_S = 30


def _int_arg(name: str, value: str | None) -> int | None:
    if value in (None, ""):
        return None
    if value.startswith("-") and value[1:].isascii() and value[1:].isdigit():
        abort(400, description=f"{name} must be >= 0, got {value[:40]}")
    if not (value.isascii() and value.isdigit()):       # int() would take "1_0" and a full-width "１"
        abort(400, description=f"{name} must be a whole number, got {value[:40]!r}")
    if len(value) > 4000:
        # (int() refuses over 4,300 digits: a 500 before, a break-test,
        # session 55; shorter ones are read, and past the newest event said so)
        abort(400, description=f"{name} is a number of {len(value)} digits: no event id is that large")
    return int(value)


def _header(name: str) -> str | None:
    """A request header as the client wrote it: WSGI hands headers over
    decoded as Latin-1 (PEP 3333), so a header sent in UTF-8 (full-width
    digits, say) is decoded again for the message that quotes it."""
    value = request.headers.get(name)
    if value is None:
        return None
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def _state_at():
    evs = get_game(game_arg())
    at = _int_arg("at", request.args.get("at"))
    if at is not None:
        newest = get_db().last_id()
        if at > newest:
            abort(400, description=f"at={at} is past the ledger's newest event, #{newest}")
    return scoreboard.state_at(evs, at)


@bp.get("/state")
def state():
    game = game_arg()
    if not game and get_db().latest_game_id() is None:
        # (a script or a phone asking before the referee starts a game gets
        # the same object, empty, rather than an error it must special-case)
        return jsonify(scoreboard.waiting_state(now=time.time()))
    evs = get_game(game)
    return jsonify(scoreboard.state_now(_state_base(evs), now=time.time(), games=get_db().games()))


#: games whose replayed state the server keeps (:func:`_state_base`)
STATE_CACHE_GAMES = 8


def _state_base(evs) -> dict:
    """:func:`companion.web.scoreboard.player_state_base` of a game's events,
    kept while they stay the same (the ledger only grows: a correction is a
    new event): every phone asks for the state on every event, and with 40
    phones each request's replay took the server to 1.3 s a state (a
    break-test, session 59)."""
    import collections
    import threading
    ext = current_app.extensions
    cache = ext.setdefault("companion.state_cache", collections.OrderedDict())
    lock = ext.setdefault("companion.state_cache_lock", threading.Lock())
    key = (evs[0].game_id if evs else None, tuple(e.id for e in evs))
    with lock:
        base = cache.get(key)
        if base is not None:
            cache.move_to_end(key)
            return base
    base = scoreboard.player_state_base(evs)
    with lock:
        cache[key] = base
        while len(cache) > STATE_CACHE_GAMES:
            cache.popitem(last=False)
    return base


@bp.get("/games")
def games():
    return jsonify(games=get_db().games())


@bp.get("/board")
def board():
    return jsonify(scoreboard.board_json(_state_at()))


@bp.get("/board.svg")
def board_svg():
    st = _state_at()
    svg = scoreboard.board_svg(st, title=f"Board of {st.game_id}")
    return Response(svg, mimetype="image/svg+xml", headers={"Cache-Control": "no-store"})


@bp.get("/check")
def check():
    text = request.args.get("slot")
    if not text:
        abort(400, description="give the tile as ?slot=x,y,z")
    slot = scoreboard.parse_slot(text)
    return jsonify(scoreboard.check_tile(_state_at(), slot))


@bp.get("/events")
def events():
    get_db()                  # 503 when the ledger cannot be read, or went back to an older copy
    last = _header("Last-Event-ID") or request.args.get("last_id")
    after = _int_arg("Last-Event-ID", last.strip() if last else None)
    game = game_arg()
    if game is not None and not any(g["game_id"] == game for g in get_db().games()):
        # as /api/state: a stream of a game the ledger does not hold would
        # stay silent for ever (a mistyped link); the latest game's stream
        # (no ?game) waits for the first game instead
        abort(404, description=f"no game {shown_game_id(game)} in the ledger")
    hub = get_hub()
    slot = hub.reserve(client_address())
    if slot is None:
        # every stream holds one of the server's threads: past the limit a
        # stream is refused, so that pages and moves are still answered
        # (the pages try again after a while)
        return (jsonify(error="too many live pages are open on this scoreboard: close some, or try again "
                              "in a minute"),
                503, {"Retry-After": str(STREAM_RETRY_S)})
    stream = SlotResponse(hub.stream(after, game, slot=slot), slot)
    return Response(stream, mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache, no-store", "X-Accel-Buffering": "no"})
