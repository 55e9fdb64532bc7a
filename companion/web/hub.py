"""The event hub: one per app, it watches the ledger and wakes the live
streams (Server-Sent Events) of every connected page.

A background thread asks the ledger for events after the last one it has seen
every ``poll_interval`` seconds (one indexed ``SELECT ... WHERE id > ?``: the
camera referee or ``companion game`` write from other processes, so the
database is the only place to learn of new events).  New events go into a
bounded buffer and a :class:`threading.Condition` wakes the waiting streams.
An in-process write calls :meth:`EventHub.notify` to poll at once.

A stream starts after a given event id (the ``Last-Event-ID`` header an
``EventSource`` sends when it reconnects, or ``?last_id=``), replays what it
missed from the buffer or, when that is too old, from the ledger, then waits
for more; it sends a comment every ``keepalive`` seconds so that proxies and
the server keep the connection open.  Wire format (WHATWG HTML, "Server-sent
events")::

    id: 17
    event: ledger
    data: {"id": 17, "game_id": "game-1", "type": "claim", ...}

"""

from __future__ import annotations

import bisect
import json
import threading
import time
from typing import Iterator

from companion.game import brief
from companion.ledger import file_key


#: data the phones must not get: the faces of every tile (the deal, a
#: reshuffle's new faces: covered tiles' faces are hidden information, as
#: ``/api/board`` keeps them), the seeds they were drawn from (``companion
#: deal`` would rebuild them; a reshuffle's follows from the game's), and the
#: face of a blocked tile touched or claimed (it may lie under another)
SECRET_FIELDS = {"game_started": ("faces", "seed"), "reshuffle": ("faces", "seed"),
                 "penalty": ("face",), "touch": ("face",)}


def sse_message(event, tiles=None) -> str:
    """One SSE message for a ledger event: ``id``, ``event: ledger`` and the
    event's JSON (:meth:`companion.game.Event.to_json` plus ``text``, a plain
    line from its data, naming a claim's faces when the game's ``tiles``
    (:class:`companion.tiles.TileSet`) are given, and ``player``) on one
    ``data`` line, without the hidden information of :data:`SECRET_FIELDS`
    (the stream is open to every phone)."""
    obj = event.to_json()
    hidden = SECRET_FIELDS.get(event.type, ())
    if hidden and isinstance(obj.get("data"), dict):
        obj["data"] = {k: v for k, v in obj["data"].items() if k not in hidden}
    obj["player"] = event.data.get("player") if isinstance(event.data.get("player"), str) else None
    try:
        obj["text"] = brief(event, tiles)
    except (KeyError, TypeError, ValueError):
        obj["text"] = event.type
    return f"id: {event.id}\nevent: ledger\ndata: {json.dumps(obj, separators=(',', ':'))}\n\n"


#: the message an idle stream sends every ``keepalive`` seconds: a comment
#: (what proxies need to keep the connection) and an ``alive`` event, which
#: pages can hear (the EventSource API drops comments): a page that hears
#: nothing for two of them knows its stream is dead (a host asleep or
#: frozen left a phone saying "live" over old scores; a break-test, session 58)
KEEPALIVE = ": keep-alive\nevent: alive\ndata: {}\n\n"
#: the last message of a stream ended for a newer one from the same address
#: (:meth:`EventHub.reserve`): the page offers to reconnect instead of
#: reconnecting by itself
EVICTED = "event: evicted\ndata: {}\n\n"


def reset_message(asked: int, newest: int) -> str:
    """The SSE message that opens a stream asked to start after an id beyond
    the ledger's newest ``newest`` (a break-test, session 54: a client kept
    across a server restart on another ledger was clamped without a word)."""
    # (with the newest id: the browser's EventSource keeps it as its last
    # event id, and a reconnection resumes from there, not from the stale one)
    return f"id: {newest}\nevent: reset\ndata: {json.dumps({'asked': asked, 'newest': newest})}\n\n"


class EventHub:
    """Watches one ledger file and feeds live streams.

    Args:
        path: the ledger file.
        poll_interval: seconds between two looks at the ledger.
        keepalive: seconds between two keep-alive comments on an idle stream.
        buffer: how many recent events to keep in memory for replays.
        retry_ms: the reconnection delay suggested to browsers.
        max_streams: streams open at once, in all (each holds one of the
            server's threads: the rest must stay free for pages and moves).
        max_streams_per_client: streams kept open from one address: a newer
            one ends the oldest (a phone that reloads its page leaves its old
            stream behind until the server next writes to it; one machine
            cannot take every place).
    """

    def __init__(self, path: str, poll_interval: float = 0.05, keepalive: float = 15.0,
                 buffer: int = 2000, retry_ms: int = 2000, max_streams: int = 100,
                 max_streams_per_client: int = 8) -> None:
        self.path = str(path)
        self.poll_interval = float(poll_interval)
        self.keepalive = float(keepalive)
        self.buffer_size = max(10, int(buffer))
        self.retry_ms = int(retry_ms)
        self._cond = threading.Condition()
        self._poll_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ledger = None
        self._ids: list[int] = []
        self._events: list = []
        self._floor = 0            # every event with id > _floor is in the buffer
        self._last = 0
        self.streams = 0           # streams open now
        self.errors = 0            # failed polls (e.g. a locked database), for the curious
        self.max_streams = int(max_streams)
        self.max_streams_per_client = int(max_streams_per_client)
        self._per_client: dict[str, list[StreamSlot]] = {}     # open slots, oldest first
        # why the ledger being served is no longer the one this hub read
        # (deleted, replaced, or put back to an older copy): what the phones
        # hold no longer follows from it, so the streams end (their pages
        # then learn why from the 503 of /api/state); None while all is well
        self.lost: str | None = None
        self._file = None
        self._checked = 0.0
        self._variants: dict[str, str] = {}     # game id -> its tile set, from its game_started

    # ------------------------------------------------------------------ life cycle

    def start(self) -> "EventHub":
        """Open the ledger and start the polling thread (once; later calls do nothing)."""
        with self._cond:
            if self._thread is not None:
                return self
            from companion.ledger import Ledger
            self._ledger = Ledger(self.path)
            self._file = file_key(self.path)
            last = self._ledger.events()[-1:]
            self._last = self._floor = last[0].id if last else 0
            for g in self._ledger.games():
                if isinstance(g.get("variant"), str):
                    self._variants[g["game_id"]] = g["variant"]
            self._thread = threading.Thread(target=self._run, name="companion-event-hub", daemon=True)
            self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._stop.is_set()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop polling and end every open stream."""
        self._stop.set()
        self._wake.set()
        with self._cond:
            self._cond.notify_all()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
        with self._poll_lock, self._cond:
            if self._ledger is not None:
                self._ledger.close()
                self._ledger = None

    def notify(self) -> None:
        """Look at the ledger now (after a write by this process)."""
        self._wake.set()

    # ------------------------------------------------------------------ polling

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._wake.wait(self.poll_interval)
            self._wake.clear()

    def poll(self) -> int:
        """Read new events into the buffer and wake the streams; returns how many.

        Polls are serialised (the background thread and a caller share one
        connection, and one SQLite connection runs one query at a time).  At
        most once a second, when there is nothing new or the query failed,
        the file is looked at (:meth:`_check_source`): a ledger deleted,
        replaced or put back to an older copy ends the streams."""
        with self._poll_lock:
            led = self._ledger
            if led is None:
                return 0
            try:
                new = led.events(after_id=self._last)
            except Exception:  # a locked, closed or vanished database: try again next time
                self.errors += 1
                new = None
            if not new and time.monotonic() - self._checked >= 1.0:
                self._checked = time.monotonic()
                self._check_source(led)
            return self._take(new) if new else 0

    def _check_source(self, led) -> None:
        """Set :attr:`lost` (and wake the streams) when the file at
        :attr:`path` is no longer the ledger this hub opened, or holds fewer
        events than it has read."""
        lost = None
        if file_key(self.path) != self._file:
            lost = "was deleted or replaced while the scoreboard ran"
        else:
            try:
                if led.last_id() < self._last:
                    lost = "went back to an earlier copy while the scoreboard ran (a backup copied over it?)"
            except Exception:
                self.errors += 1
        if lost is not None:
            with self._cond:
                self.lost = lost
                self._cond.notify_all()

    def _take(self, new) -> int:
        with self._cond:
            for e in new:
                if e.type == "game_started" and isinstance(e.data, dict) and isinstance(e.data.get("variant"), str):
                    self._variants.setdefault(e.game_id, e.data["variant"])
                if e.id > self._last:
                    self._ids.append(e.id)
                    self._events.append(e)
                    self._last = e.id
            if len(self._ids) > 2 * self.buffer_size:
                cut = len(self._ids) - self.buffer_size
                self._floor = self._ids[cut - 1]
                del self._ids[:cut]
                del self._events[:cut]
            self._cond.notify_all()
        return len(new)

    def tiles_of(self, game_id: str):
        """The tile set (:class:`companion.tiles.TileSet`) game ``game_id``
        is played with, from its ``game_started`` event, or None (not seen,
        or a variant this companion does not know)."""
        from companion.errors import BadInput
        from companion.tiles import tileset
        variant = self._variants.get(game_id)
        try:
            return tileset(variant) if variant is not None else None
        except (BadInput, KeyError, ValueError):
            return None

    @property
    def last_id(self) -> int:
        """The newest event id seen."""
        return self._last

    # ------------------------------------------------------------------ reading

    def events_after(self, after_id: int) -> list:
        """Every event with an id above ``after_id`` seen so far, in order
        (from the buffer, or from the ledger when the buffer no longer holds them)."""
        with self._cond:
            last = self._last
            if after_id >= self._floor:
                k = bisect.bisect_right(self._ids, after_id)
                return self._events[k:]
            led = self._ledger
        if led is None:
            return []
        return [e for e in led.events(after_id=after_id) if e.id <= last]

    def wait(self, after_id: int, timeout: float, slot: "StreamSlot | None" = None) -> list | None:
        """Wait up to ``timeout`` seconds for events after ``after_id``;
        returns them ([] on time-out), or None once the hub stops, has lost
        its ledger (:attr:`lost`) or ``slot``'s stream is told to end."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._last <= after_id and not self._stop.is_set() and self.lost is None \
                    and not (slot is not None and slot.evicted):
                left = deadline - time.monotonic()
                if left <= 0:
                    return []
                self._cond.wait(left)
            if self._stop.is_set() or self.lost is not None or (slot is not None and slot.evicted):
                return None
        return self.events_after(after_id)

    def reserve(self, client: str) -> "StreamSlot | None":
        """A place for one more stream from ``client`` (an address), or None
        when :attr:`max_streams` are open.  When that address already holds
        :attr:`max_streams_per_client`, its oldest stream is told to end.
        Give the place to :meth:`stream`, which frees it when the stream ends
        (or free it with :meth:`StreamSlot.release`)."""
        with self._cond:
            live = [s for s in self._per_client.get(client, ()) if not s.evicted]
            evict = live[:max(0, len(live) - self.max_streams_per_client + 1)]      # (empty below the limit)
            if self.streams >= self.max_streams and not evict:
                return None                 # (a stream ending for this one keeps the count)
            for old in evict:
                old.evicted = True
            slot = StreamSlot(self, client)
            self._per_client.setdefault(client, []).append(slot)
            self.streams += 1
            self._cond.notify_all()
        return slot

    def _release(self, slot: "StreamSlot") -> None:
        with self._cond:
            self.streams -= 1
            mine = self._per_client.get(slot.client) if slot.client is not None else None
            if mine is not None:
                if slot in mine:
                    mine.remove(slot)
                if not mine:
                    self._per_client.pop(slot.client, None)

    def stream(self, after_id: int | None = None, game_id: str | None = None,
               limit_s: float | None = None, slot: "StreamSlot | None" = None) -> Iterator[str]:
        """An SSE stream: every event after ``after_id`` (of ``game_id`` only,
        when given), then new ones as they come, with keep-alive comments.

        ``after_id`` None starts at the newest event (no replay); an id beyond
        the newest is taken as the newest, and the stream says so first with
        an ``event: reset`` message (``id: N``, data ``{"asked": after_id,
        "newest": N}``): the client's id came from another ledger or a copy the server
        no longer serves, so what it holds must be fetched again
        (``/api/state``); the bundled pages do so on every (re)connection.  ``limit_s`` ends the stream after
        that many seconds (the browser reconnects with Last-Event-ID).
        ``slot`` (from :meth:`reserve`) is freed when the stream ends;
        without one the stream counts itself in :attr:`streams`.
        """
        self.start()
        last = self._last if after_id is None else min(max(0, int(after_id)), self._last)
        ahead = after_id is not None and int(after_id) > last
        end = None if limit_s is None else time.monotonic() + limit_s
        if slot is None:
            with self._cond:
                self.streams += 1
            slot = StreamSlot(self, None)
        try:
            yield f"retry: {self.retry_ms}\n: connected\n\n"
            if ahead:
                yield reset_message(int(after_id), last)
            sent = time.monotonic()          # when this stream last sent anything
            while True:
                # a keep-alive is due keepalive seconds after the stream's
                # last message, whatever other games' events came meanwhile
                # (a stream of one game that saw only another's sent none,
                # and its page took it for dead; a break-test, session 58)
                wait = self.keepalive - (time.monotonic() - sent)
                if wait <= 0:
                    yield KEEPALIVE
                    sent = time.monotonic()
                    continue
                if end is not None:
                    wait = min(wait, end - time.monotonic())
                    if wait <= 0:
                        return
                got = self.wait(last, wait, slot)
                if got is None:
                    if slot.evicted:
                        # a newer stream from this address took its place: the
                        # page is told so, and does not reconnect on its own
                        # (several pages behind one address, a proxy or a NAT,
                        # would otherwise end each other's streams for ever)
                        yield EVICTED
                    return
                if not got:
                    continue            # (the keep-alive, due now, goes at the loop's top)
                chunk = []
                for e in got:
                    last = e.id
                    if game_id is None or e.game_id == game_id:
                        chunk.append(sse_message(e, self.tiles_of(e.game_id)))
                if chunk:
                    yield "".join(chunk)
                    sent = time.monotonic()
        finally:
            slot.release()


class StreamSlot:
    """One stream's place in an :class:`EventHub`; :meth:`release` frees it
    (once, however often it is called)."""

    def __init__(self, hub: EventHub, client: str | None) -> None:
        self._hub = hub
        self.client = client
        self.evicted = False        # told to end: a newer stream from the same address took its place
        self._lock = threading.Lock()
        self._held = True

    def release(self) -> None:
        with self._lock:
            if not self._held:
                return
            self._held = False
        self._hub._release(self)


class SlotResponse:
    """A WSGI body that frees its stream's slot when the server closes it,
    also when the stream never started (the client left first)."""

    def __init__(self, body: Iterator[str], slot: StreamSlot) -> None:
        self._body = body
        self._slot = slot

    def __iter__(self):
        return iter(self._body)

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            self._slot.release()
