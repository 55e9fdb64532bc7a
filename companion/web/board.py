"""``board`` blueprint: the players' pages.  GET only: nothing here changes
anything.

* ``GET /``: the phone scoreboard of a game (the latest, or ``?game=ID``):
  scores or tokens, whose turn, the last events in words, racks and melds in
  hand-builder modes, the timer in Word modes, tiles and free pairs left, the
  board with "check a tile", the join QR code.  It stays live by itself
  (``static/board.js``: an ``EventSource`` on ``/api/events`` and a fetch of
  ``/api/state`` on each event; no reload).
* ``GET /event/<id>``: one event's evidence: the engine's reason, the frames
  before and after, and the overlay whose tiles can be tapped.  It follows
  the ledger too (``static/event.js``: a void or correction of the event
  made later shows without a reload), and says as of when it was drawn.
* ``GET /qr.svg``: the QR code of the join address.
"""

from __future__ import annotations

import time

from flask import Blueprint, Response, abort, current_app, render_template, request

from companion.errors import CompanionError
from companion.web import scoreboard
from companion.web.db import game_arg, get_db, shown_game_id
from companion.web.serve import qr_svg

bp = Blueprint("board", __name__)


def join_address() -> str:
    return current_app.config.get("JOIN_URL") or request.host_url


@bp.get("/")
def index():
    led = get_db()
    asked = game_arg()
    gid = asked or led.latest_game_id()
    evs = led.events(gid) if gid else []
    if asked and not evs:
        abort(404, description=f"no game {shown_game_id(gid)} in the ledger")
    state = scoreboard.player_state(evs, now=time.time(), games=led.games()) if evs else None
    svg = scoreboard.board_svg(scoreboard.state_at(evs), title="Board now") if evs else ""
    last = led.events()[-1:] if not evs else []
    last_id = state["last_id"] if state else (last[0].id if last else 0)
    # a page kept on an older game's link says so when a newer game runs (a
    # break-test, session 58: a phone stayed on the ended game unawares)
    latest = led.latest_game_id()
    newer = latest if asked and latest and latest != gid else None
    return render_template("board/index.html", state=state, board_svg=svg, last_id=last_id,
                           follow=not asked, game=gid or "", join_url=join_address(),
                           newer=newer)


@bp.get("/event/<int:event_id>")
def event(event_id: int):
    ev = get_db().event(event_id)
    if ev is None:
        abort(404, description=f"no event #{event_id}")
    evs = get_db().events(ev.game_id)
    try:
        st = scoreboard.state_at(evs, ev.id)
        full = scoreboard.G.replay(evs)
    except CompanionError:
        st = full = None
    ent = st.entries.get(ev.id) if st is not None else None
    status = ("rejected" if ent is not None and ent.status == "rejected"
              else full.status.get(ev.id, "ok") if full is not None else "unknown")
    # the event as the ledger reads it now: the referee's corrections laid
    # over it (the camera's evidence stays what it recorded)
    shown = scoreboard.corrected_event(evs, ev)
    text = ent.text if ent is not None else scoreboard.G.brief(shown, full.tiles if full is not None else None)
    changes = scoreboard.corrections_of(full, ev.id) if full is not None else []
    evd = ev.data.get("evidence") if isinstance(ev.data.get("evidence"), dict) else {}
    mine = shown.data.get("slots") if isinstance(shown.data.get("slots"), list) else (
        [shown.data["slot"]] if isinstance(shown.data.get("slot"), list) else [])
    # a lone tile's item also outlines the standing tiles it may have left
    # with unseen (``may_pair_with``: behind a taller stack), for the
    # referee to look at on the table
    raw = shown.data.get("may_pair_with")
    partners = [p for p in raw if isinstance(p, list) and len(p) == 3 and all(type(c) is int for c in p)] \
        if isinstance(raw, list) else []
    svg = scoreboard.board_svg(st, title=f"Board after event {ev.id}", highlight=mine + partners) \
        if st is not None else ""
    from companion.web.evidence import KINDS, _file
    found = {k for k in KINDS if evd.get(k) and _file(ev, k) is not None}
    now = time.time()
    return render_template("board/event.html", ev=ev, shown=shown, changes=changes, text=text, status=status,
                           reason=ev.data.get("reason") or evd.get("reason"), board_svg=svg,
                           has=lambda k: k in found, recorded=bool(evd) and not found, marked=bool(mine),
                           last_id=get_db().last_id(), shown_at=now,
                           shown_at_text=time.strftime("%H:%M:%S", time.localtime(now)))


@bp.get("/qr.svg")
def qr():
    return Response(qr_svg(join_address()), mimetype="image/svg+xml",
                    headers={"Cache-Control": "no-cache"})
