"""``evidence`` blueprint: the camera referee's evidence for an event, served
safely.  GET only.

The camera referee (:class:`vision.referee.EvidenceWriter`) stores, in an
event's ``data["evidence"]``, the paths of the settled frame before and after
it, the overlay drawn over the after frame and ``slots.json`` (per slot of the
layout, the quad of its top face in overlay pixels).  Only those files can be
fetched, by event id and kind (never by a path from the request):

* ``GET /evidence/<id>/<kind>`` with kind ``before``, ``after``, ``overlay``
  or ``slots``: the file, when the ledger's own record of event ``id`` names
  one (corrections cannot change it), its real path (symbolic links
  resolved) lies inside an allowed folder (the ledger's folder and the
  configured ``EVIDENCE_DIRS``) and its suffix is an image or JSON one;
  404 otherwise.
* ``GET /api/evidence/<id>``: the event in words, the engine's reason, the
  file URLs and the overlay's tappable slots with their free flags at that
  moment.
"""

from __future__ import annotations

import os

from flask import Blueprint, abort, current_app, jsonify, send_file, url_for

from companion import jsontext
from companion.errors import CompanionError
from companion.web import scoreboard
from companion.web.db import get_db

bp = Blueprint("evidence", __name__)

KINDS = ("before", "after", "overlay", "slots")
MIMETYPES = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".json": "application/json"}
MAX_SLOTS_BYTES = 2 * 1024 * 1024


def allowed_roots() -> list[str]:
    """Real paths of the folders evidence may be served from."""
    roots = [os.path.dirname(current_app.config["LEDGER"])] + list(current_app.config.get("EVIDENCE_DIRS") or [])
    return [os.path.realpath(r) for r in roots]


def resolve_path(text: object, roots: list[str], bases: list[str]) -> str | None:
    """The real path of an evidence file named by ``text``, or None when it is
    not a plain string, not a file, has a suffix not in :data:`MIMETYPES`, or
    lies outside every folder of ``roots``.  A relative path is tried against
    each folder of ``bases`` in turn."""
    if not isinstance(text, str) or not text or "\x00" in text:
        return None
    cands = [text] if os.path.isabs(text) else [os.path.join(b, text) for b in bases]
    for cand in cands:
        real = os.path.realpath(cand)
        if os.path.splitext(real)[1].lower() not in MIMETYPES or not os.path.isfile(real):
            continue
        for root in roots:
            try:
                if os.path.commonpath([real, root]) == root:
                    return real
            except ValueError:   # different drives
                continue
    return None


def _event(event_id: int):
    ev = get_db().event(event_id)
    if ev is None:
        abort(404, description=f"no event #{event_id}")
    return ev


def _evidence_of(ev) -> dict:
    evd = ev.data.get("evidence")
    return evd if isinstance(evd, dict) else {}


def _file(ev, kind: str) -> str | None:
    roots = allowed_roots()
    bases = [os.path.dirname(current_app.config["LEDGER"]), os.getcwd()]
    return resolve_path(_evidence_of(ev).get(kind), roots, bases)


@bp.get("/evidence/<int:event_id>/<kind>")
def evidence_file(event_id: int, kind: str):
    if kind not in KINDS:
        abort(404, description=f"no evidence of kind {kind!r} (kinds: {', '.join(KINDS)})")
    path = _file(_event(event_id), kind)
    if path is None:
        abort(404, description=f"event #{event_id} has no {kind} evidence here")
    return send_file(path, mimetype=MIMETYPES[os.path.splitext(path)[1].lower()], max_age=3600,
                     conditional=True)


def read_slots(path: str) -> list[dict]:
    """Slots and quads from a ``slots.json`` (``{"slots": [[x, y, z], ...],
    "quads": [[[x, y] x 4], ...]}``); entries of the wrong shape are dropped."""
    try:
        if os.path.getsize(path) > MAX_SLOTS_BYTES:
            return []
        with open(path, encoding="utf-8") as f:
            obj = jsontext.loads(f.read())
    except (OSError, ValueError):
        return []
    out = []
    slots, quads = obj.get("slots") if isinstance(obj, dict) else None, obj.get("quads") if isinstance(obj, dict) else None
    if not isinstance(slots, list) or not isinstance(quads, list):
        return []
    for s, q in zip(slots, quads):
        try:
            slot = [int(v) for v in s]
            quad = [[round(float(p[0]), 1), round(float(p[1]), 1)] for p in q]
        except (TypeError, ValueError, IndexError):
            continue
        if len(slot) == 3 and len(quad) == 4:
            out.append({"slot": slot, "quad": quad})
    return out


@bp.get("/api/evidence/<int:event_id>")
def evidence_json(event_id: int):
    raw = _event(event_id)
    evs = get_db().events(raw.game_id)
    ev = scoreboard.corrected_event(evs, raw)        # the referee's corrections laid over it
    files = {k: (url_for("evidence.evidence_file", event_id=ev.id, kind=k) if _file(ev, k) else None)
             for k in KINDS}
    out = {"event": {"id": ev.id, "game_id": ev.game_id, "type": ev.type, "ref": ev.ref, "t": ev.t,
                     "player": ev.data.get("player"), "slots": ev.data.get("slots")
                     or ([ev.data["slot"]] if ev.data.get("slot") else [])},
           "reason": ev.data.get("reason") or _evidence_of(ev).get("reason"),
           "explanation": ev.data.get("explanation"), "files": files, "text": None, "status": None,
           "slots": []}
    try:
        st = scoreboard.state_at(evs, ev.id)
    except CompanionError:
        st = None
    if st is not None:
        ent = st.entries.get(ev.id)
        full = scoreboard.G.replay(evs)
        out["text"] = ent.text if ent is not None else scoreboard.G.brief(ev, full.tiles)
        out["status"] = "rejected" if ent is not None and ent.status == "rejected" else full.status.get(ev.id, "ok")
    if files["slots"]:
        index = st.layout.index if st is not None else {}
        for item in read_slots(_file(ev, "slots")):
            i = index.get(tuple(item["slot"])) if st is not None else None
            if i is not None:
                present = st.board.present[i]
                item["present"] = present
                item["covered"] = present and st.board.n_cover[i] > 0
                item["free"] = st.board.is_free(i) if present else None
            out["slots"].append(item)
    return jsonify(out)
