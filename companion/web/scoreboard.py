"""What the scoreboard shows, as plain data: the state of a game for the player
page and ``GET /api/state``, the top-down board with free flags, the answer to
"check a tile", and the board drawn as SVG.

Pure functions over a game's events (no Flask, no database): the views read
the ledger and the clock and pass them in.  The free rule and its reasons come
from :mod:`companion.rules` (``Board.reason(i)``), the scores from
:func:`companion.game.state_json`.
"""

from __future__ import annotations

import copy

from html import escape
from typing import Sequence

from companion import game as G
from companion.errors import BadInput, CompanionError
from companion.layouts import Slot
from companion.rules import BlockReason

#: What each variant calls its tokens (``state_json``'s ``tokens``).
TOKEN_NAMES = {"love": "Crystal Harmony tokens", "candy": "Sugar Crystal tokens",
               "mindful": "Zen Focus tokens", "word": None}

#: Seat marks: a shape and a label per seat, so that players are never told
#: apart by colour alone.
SEAT_MARKS = (("circle", "\u25cf"), ("triangle", "\u25b2"), ("square", "\u25a0"), ("diamond", "\u25c6"))

#: Event types that may carry the camera referee's evidence.
EVIDENCE_TYPES = ("claim", "invalid", "penalty", "needs_referee", "needs-referee", "touch")

# Board drawing, in SVG user units: one half-tile unit is 15 wide and 20 tall
# (a 30 x 40 mm tile, CONTRACT.md "Physical standard"); each layer is lifted
# up and left by (DX, DY) so stacks read as stacks.
HALF_W, HALF_H = 15, 20
DX, DY = -3, -4
PAD = 8


def state_at(events: Sequence, at: int | None = None) -> G.GameState:
    """The replayed state after the events with ids up to ``at`` (all when
    None), as the ledger reads them now: a referee's correction, void or undo
    of one of them counts even when it was written later (and so does a void
    of such a correction), so an event's page shows the corrected event.

    Raises:
        BadInput: no ``game_started`` event among them (``at`` before the
            game began, said so).
    """
    if at is None:
        return G.replay(list(events))
    keep = {e.id for e in events if e.id <= at}
    if events and not keep:
        first = min(e.id for e in events)
        raise BadInput(f"event #{at} comes before this game began (its first event is #{first})")
    later = sorted((e for e in events if e.id > at and e.type in ("correction", "undo") and e.ref is not None),
                   key=lambda e: e.id)
    grew = True
    while grew:                   # a void of a correction of an event up to at, and so on
        grew = False
        for e in later:
            if e.id not in keep and e.ref in keep:
                keep.add(e.id)
                grew = True
    return G.replay([e for e in events if e.id in keep])


def corrected_event(events: Sequence, ev: G.Event) -> G.Event:
    """``ev`` with the referee's live corrections laid over it
    (:func:`companion.game.effective_events`); ``ev`` itself when none
    applies or it no longer counts (undone, voided)."""
    eff, _ = G.effective_events(events)
    return next((e for e in eff if e.id == ev.id), ev)


def corrections_of(state: G.GameState, event_id: int) -> list[dict]:
    """The referee's corrections, voids and undos pointing at event
    ``event_id``, oldest first: ``{"id", "text", "status"}`` (the status of
    the correction itself: ``"ok"``, or ``"voided"`` when it was voided in
    turn)."""
    out = []
    for e in state.raw:
        if e.ref == event_id and e.type in ("correction", "undo"):
            ent = state.entries.get(e.id)
            out.append({"id": e.id, "text": ent.text if ent is not None else G.brief(e, state.tiles),
                        "status": state.status.get(e.id, "ok")})
    return out


def face_info(state: G.GameState, face_id: str | None) -> dict | None:
    """``{"id", "name", "short", "suit"}`` of a face id, None for None or an unknown id."""
    if face_id is None:
        return None
    try:
        f = state.tiles.face(face_id)
    except BadInput:
        return None
    return {"id": f.id, "name": f.name, "short": f.short, "suit": f.suit}


def tile_label(state: G.GameState, face_id: str | None) -> tuple[str, str]:
    """Two short lines for a tile drawn on the board: the face's short label
    and, for numbered suits, the suit's first three letters."""
    info = face_info(state, face_id)
    if info is None:
        return "", ""
    f = state.tiles.face(face_id)
    return info["short"], (f.suit[:3] if f.rank is not None else "")


def _layout_title(name: str) -> str:
    """A built-in layout's display name ("Sprint (2 layers)"), else the name."""
    from companion import codex
    try:
        return codex.title(name)
    except CompanionError:
        return name


def player_state(events: Sequence, now: float | None = None, games: Sequence[dict] = ()) -> dict:
    """The player page's data: :func:`companion.game.state_json` plus

    * ``token_name`` (what the variant's tokens are called, or None),
    * ``layout_title`` (a built-in layout's display name, else its name),
    * ``hand_mode`` (whether racks and melds are shown),
    * per player ``mark`` (seat shape and symbol) and ``faces`` (names of the
      faces in their rack, melds and bonus),
    * per event ``has_evidence``,
    * ``last_id`` (the game's newest event id, for the live stream),
    * ``server_time`` (``now``, so that a page can run a Word timer; a
      running timer's ``elapsed`` and ``remaining`` are as of ``now``),
    * ``turns`` (a Solo Quest's turns used of its limit, :func:`turns_json`),
    * ``games`` (the ledger's games, newest first),
    * ``waiting`` False (True only in :func:`waiting_state`, before any game).

    Raises:
        BadInput: no ``game_started`` event.
    """
    return state_now(player_state_base(events), now, games)


def player_state_base(events: Sequence) -> dict:
    """The part of :func:`player_state` that depends on the events alone
    (the replay, most of the time a request takes: 35 ms for a game of 60
    events, 170 ms for one of 2,000), to be finished for a moment by
    :func:`state_now`; the server keeps it while the game's events stay the
    same (``companion.web.api``).

    Raises:
        BadInput: no ``game_started`` event.
    """
    st = G.replay(events)
    out = G.state_json(events)
    out["token_name"] = TOKEN_NAMES.get(st.setup.variant)
    out["layout_title"] = _layout_title(st.layout.name)
    out["hand_mode"] = st.mode.kind == "hand"
    out["word_mode"] = st.setup.variant == "word"
    for p in out["players"]:
        shape, sym = SEAT_MARKS[p["seat"] % len(SEAT_MARKS)]
        p["mark"] = {"shape": shape, "symbol": sym, "label": f"P{p['seat'] + 1}"}
        ids = list(p["rack"]) + [f for m in p["melds"] for f in m["faces"]] + list(p["bonus"])
        p["faces"] = {f: face_info(st, f) for f in dict.fromkeys(ids)}
    for ev in out["last_events"]:
        ev["has_evidence"] = bool(ev.get("evidence")) and ev["type"] in EVIDENCE_TYPES
    out["last_id"] = max((e.id for e in st.raw), default=0)
    out["waiting"] = False
    out["turns"] = turns_json(st)
    return out


def state_now(base: dict, now: float | None = None, games: Sequence[dict] = ()) -> dict:
    """:func:`player_state` from its :func:`player_state_base` (left as it
    is: a copy is finished): ``server_time``, a running Word timer as of
    ``now`` and the ledger's ``games``."""
    out = copy.deepcopy(base)
    out["server_time"] = now
    _timer_now(out.get("timer"), now)
    out["games"] = [{"game_id": g["game_id"], "variant": g.get("variant"), "mode": g.get("mode"),
                     "players": g.get("players")} for g in reversed(list(games))]
    return out


def waiting_state(now: float | None = None) -> dict:
    """``GET /api/state`` before the ledger's first game: the keys of
    :func:`player_state` that say "no game" (``game_id``, ``variant``,
    ``mode``, ``layout``, ``turn``, ``winner`` and ``timer`` None; ``players``,
    ``last_events``, ``needs_referee`` and ``games`` empty; ``last_id`` 0,
    ``ended`` False), ``server_time`` ``now`` (seconds) and ``waiting``
    True (CONTRACT.md: "the current game as JSON"; there is none yet)."""
    return {"game_id": None, "waiting": True, "variant": None, "variant_title": None, "mode": None,
            "mode_title": None, "layout": None, "layout_title": None, "players": [], "turn": None,
            "tiles_left": 0, "tiles_total": 0, "last_events": [], "needs_referee": [], "ended": False,
            "winner": None, "timer": None, "turns": None, "token_name": None, "hand_mode": False,
            "word_mode": False, "last_id": 0, "server_time": now, "games": []}


def turns_json(st: G.GameState) -> dict | None:
    """A Solo Quest's turns: ``{"used", "limit", "left"}`` (docs/RULES.md
    2.5: each pair attempt, valid or invalid, is a turn; the game ends when
    the limit is reached), None in other modes.  ``companion game show``
    says ``turns 2 of 30``; the pages say it too (before, only the command
    line and ``options.turn_limit`` told it)."""
    limit = st.setup.options.get("turn_limit") if st.mode.kind == "solo" else None
    if not isinstance(limit, int) or isinstance(limit, bool):
        return None
    return {"used": st.turns_used, "limit": limit, "left": max(0, limit - st.turns_used)}


def clock_text(seconds: float | None) -> str:
    """Seconds as the pages' clocks show them, ``m:ss`` (whole seconds, down;
    a dash for None)."""
    if seconds is None:
        return "\u2013"
    whole = max(0, int(seconds))
    return f"{whole // 60}:{whole % 60:02d}"


def timer_view(timer: dict | None, ended: bool) -> dict | None:
    """A Word timer as the pages show it (``static/common.js``'s
    ``timerView`` does the same each second): ``value`` (``"4:59"``),
    ``label`` (``"time left"``, ``"time's up"``, ``"time left at the end"``,
    ``"time"`` or ``"time (target 1:30)"``) and ``time_up`` (a countdown at
    0 that no move has ended yet: Word 2.6.2, the next command records the
    time-up).  ``timer`` as :func:`player_state` gives it (as of its
    ``now``); None without a timer."""
    if not timer:
        return None
    if timer.get("kind") == "countdown":
        left = timer.get("remaining")
        out = left is not None and left <= 0
        label = "time's up" if out else "time left at the end" if ended else "time left"
        return {"value": clock_text(left), "label": label, "time_up": out and not ended}
    target = timer.get("target_seconds")
    return {"value": clock_text(timer.get("elapsed")), "label": f"time (target {clock_text(target)})" if target
            else "time", "time_up": False}


def _timer_now(timer: dict | None, now: float | None) -> None:
    """A running Word timer's ``elapsed`` and ``remaining`` as of ``now``
    (seconds, wall clock) instead of the game's last event, for a game kept
    on the wall clock; a countdown stops at its end (Word 2.6.2: the time-up
    is recorded by the next command).  Others are left as they are."""
    if not timer or not timer.get("running") or now is None:
        return
    t0 = timer.get("start_t")
    if t0 is None or t0 < G.WALL_CLOCK_FROM or now < t0:
        return
    elapsed = now - t0
    deadline = timer.get("deadline_t")
    if deadline is not None:
        elapsed = min(elapsed, deadline - t0)
        timer["remaining"] = max(0.0, deadline - now)
    timer["elapsed"] = max(timer.get("elapsed") or 0.0, elapsed)


def board_json(state: G.GameState) -> dict:
    """The board for drawing and for scripts: per slot ``slot``, ``present``,
    ``free`` (None when empty), ``covered`` and ``face`` (face info for a
    present tile with nothing on top, else None: covered faces stay hidden),
    and ``bounds`` in half-tile units ``[x0, y0, x1, y1]`` plus ``depth``."""
    board = state.board
    slots = state.layout.slots
    items = []
    for i, s in enumerate(slots):
        present = board.present[i]
        covered = present and board.n_cover[i] > 0
        items.append({"slot": list(s), "present": present, "free": board.is_free(i) if present else None,
                      "covered": covered,
                      "face": face_info(state, state.faces[i]) if present and not covered else None})
    xs = [s.x for s in slots] or [0]
    ys = [s.y for s in slots] or [0]
    return {"game_id": state.game_id, "layout": state.layout.name, "slots": items,
            "bounds": [min(xs), min(ys), max(xs) + 2, max(ys) + 2],
            "depth": max((s.z for s in slots), default=0) + 1,
            "tiles_left": board.n_present, "free": len(board.free_indices())}


def parse_slot(text: str) -> Slot:
    """``"x,y,z"`` -> :class:`Slot`.

    Raises:
        BadInput: not three integers.
    """
    return Slot.parse(str(text))


def check_tile(state: G.GameState, slot: Slot) -> dict:
    """"Check a tile": free or blocked and why, from :meth:`companion.rules.Board.reason`.

    Returns the contract's ``free`` entry (:meth:`BlockReason.to_json`) with
    ``text`` (:meth:`BlockReason.describe`), ``verdict`` (``"free"``,
    ``"blocked"`` or ``"empty"``), ``covered``/``pinched`` flags, ``face``
    (face info when nothing covers it) and ``off_table_item``: the open
    referee item whose tile left the table from this slot, unsettled
    (``"empty"`` then), else None.

    Raises:
        BadInput: the slot is not in the game's layout.
    """
    i = state.layout.slot_index(slot)
    r: BlockReason = state.board.reason(i)
    out = r.to_json()
    out["text"] = r.describe()
    # a tile that left the table with a move the referee has still to settle
    # (docs/RULES.md 1.5 "Tiles off the table"): off the board, but not gone
    # for good; a break-test (session 48) read "is not on the board" for it
    item = next((k for k, (idx, _) in state.off_table.items()
                 if k not in state.off_table_closed and i in idx), None)
    out["off_table_item"] = item
    if item is not None:
        out["text"] = f"{r.slot} is off the board: its tile left the table and waits for the referee (item #{item})"
    out["verdict"] = "empty" if not r.present else ("free" if r.free else "blocked")
    out["covered"] = r.covered
    out["pinched"] = r.pinched
    out["face"] = face_info(state, state.faces[i]) if r.present and not r.covered else None
    out["game_id"] = state.game_id
    return out


def _tile_xy(s: Slot, x0: int, y0: int, depth: int) -> tuple[float, float]:
    """Top-left corner of a tile's face in SVG units: its grid place, lifted
    up-left by its layer (the whole drawing is shifted so layer ``depth - 1``
    still starts at ``PAD``)."""
    return (PAD + (depth - 1) * -DX + (s.x - x0) * HALF_W + s.z * DX,
            PAD + (depth - 1) * -DY + (s.y - y0) * HALF_H + s.z * DY)


def board_svg(state: G.GameState, title: str = "Board", highlight=()) -> str:
    """The board seen from above as an SVG document: every present tile drawn
    in layer order (higher tiles lifted up-left), free tiles plain with a
    check mark, blocked tiles cross-hatched with a bar (pattern, not colour
    alone), faces shown where nothing covers them; empty slots of the bottom
    layer as dashed outlines.

    Each tile is a ``<g class="tile free|blocked" data-slot="x,y,z"
    tabindex="0" role="button">`` with an ``aria-label`` a screen reader can
    read, for the page's "check a tile".  The slots of ``highlight`` (an
    event's tiles, as ``[x, y, z]``) are outlined thick and dashed, standing
    (class ``hl``) or gone (an outline with a ring in its corner, on any
    layer), as the evidence overlay outlines them.  Tiles that left the table
    and wait for the referee to settle their item (``GameState.off_table``,
    docs/RULES.md 1.5) are drawn, on any layer, as a dotted outline with a
    question mark (``<g class="offtable">``), not as empty slots.
    """
    slots = state.layout.slots
    board = state.board
    waiting = {i: item for item, (idx, _) in getattr(state, "off_table", {}).items()
               if item not in getattr(state, "off_table_closed", ()) for i in idx}
    marked = set()
    for v in highlight or ():
        try:
            marked.add(tuple(int(c) for c in v))
        except (TypeError, ValueError):
            continue
    if not slots:
        return '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"></svg>'
    x0 = min(s.x for s in slots)
    y0 = min(s.y for s in slots)
    x1 = max(s.x for s in slots) + 2
    y1 = max(s.y for s in slots) + 2
    depth = max(s.z for s in slots) + 1
    w = PAD * 2 + (x1 - x0) * HALF_W + (depth - 1) * -DX
    h = PAD * 2 + (y1 - y0) * HALF_H + (depth - 1) * -DY
    tw, th = 2 * HALF_W - 2, 2 * HALF_H - 2
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="board-svg" viewBox="0 0 {w} {h}" '
             f'role="group" aria-label="{escape(title)}: {board.n_present} tiles, '
             f'{len(board.free_indices())} free">',
             '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
             'patternTransform="rotate(45)"><rect width="6" height="6" class="hatch-bg"/>'
             '<line x1="0" y1="0" x2="0" y2="6" class="hatch-line"/></pattern></defs>']
    order = sorted(range(len(slots)), key=lambda i: (slots[i].z, slots[i].y, slots[i].x))
    for i in order:
        s = slots[i]
        x, y = _tile_xy(s, x0, y0, depth)
        if not board.present[i]:
            if tuple(s) in marked:
                parts.append(f'<g class="hl-gone" role="img" aria-label="{escape(f"tile {s.x},{s.y},{s.z}: this event took it")}">'
                             f'<rect x="{x + 1}" y="{y + 1}" width="{tw}" height="{th}" rx="3"/>'
                             f'<circle cx="{x + tw - 5}" cy="{y + 7}" r="3.5"/></g>')
            elif i in waiting:
                what = f"tile {s.x},{s.y},{s.z}: off the table, waiting for the referee (item #{waiting[i]})"
                # the "?" in the middle on the bottom layer; above it, in a
                # badge at the corner, clear of the label of the tile below
                mark = (f'<text x="{x + 1 + tw / 2}" y="{y + 4 + th / 2}">?</text>' if s.z == 0 else
                        f'<circle cx="{x + 7}" cy="{y + 7}" r="7"/><text class="badge" x="{x + 7}" y="{y + 11}">?</text>')
                # tappable (its outline and "?"): "check a tile" says which item holds it
                parts.append(f'<g class="offtable" data-slot="{s.x},{s.y},{s.z}" tabindex="0" role="button" '
                             f'aria-label="{escape(what)}">'
                             f'<rect x="{x + 1}" y="{y + 1}" width="{tw}" height="{th}" rx="3"/>{mark}</g>')
            elif s.z == 0:
                parts.append(f'<rect class="gone" x="{x + 1}" y="{y + 1}" width="{tw}" height="{th}" rx="3"/>')
            continue
        free = board.is_free(i)
        covered = board.n_cover[i] > 0
        cls = "free" if free else "blocked"
        big, small = ("", "") if covered else tile_label(state, state.faces[i])
        info = None if covered else face_info(state, state.faces[i])
        name = f", {info['name']}" if info else ""
        hl = tuple(s) in marked
        label = f"tile {s.x},{s.y},{s.z}, {'free' if free else 'blocked'}{name}" + (", this event's tile" if hl else "")
        if hl:
            cls += " hl"
        parts.append(f'<g class="tile {cls} z{min(s.z, 4)}" data-slot="{s.x},{s.y},{s.z}" tabindex="0" '
                     f'role="button" aria-label="{escape(label)}">')
        parts.append(f'<rect class="side" x="{x + 3}" y="{y + 4}" width="{tw}" height="{th}" rx="3"/>')
        parts.append(f'<rect class="face" x="{x + 1}" y="{y + 1}" width="{tw}" height="{th}" rx="3"/>')
        if not free:
            parts.append(f'<rect class="hatch" x="{x + 1}" y="{y + 1}" width="{tw}" height="{th}" rx="3"/>')
        if big:
            # a label of 3 letters or more ("Bow", "Wng") is squeezed to the
            # tile's width: it ran into the next tile
            fit = f' textLength="{tw - 6}" lengthAdjust="spacingAndGlyphs"' if len(big) > 2 else ""
            parts.append(f'<text class="lab" x="{x + 1 + tw / 2}" y="{y + 19}"{fit}>{escape(big)}</text>')
        if small:
            fit = f' textLength="{tw - 6}" lengthAdjust="spacingAndGlyphs"' if len(small) > 4 else ""
            parts.append(f'<text class="sub" x="{x + 1 + tw / 2}" y="{y + 29}"{fit}>{escape(small)}</text>')
        if free:   # a check mark in the bottom-right corner
            parts.append(f'<path class="mark" d="M{x + tw - 9} {y + th - 6} l3 3 l6 -7"/>')
        else:      # a bar: "no entry"
            parts.append(f'<path class="mark" d="M{x + tw - 10} {y + th - 4} h8"/>')
        parts.append('</g>')
    parts.append('</svg>')
    return "".join(parts)
