"""A game session: replay, resolve and commit on one game of a ledger.

The service behind the referee console (:mod:`companion.web.referee`): it
reads a game's events, replays them (:func:`companion.game.replay`), asks the
engine what a command means (``resolve_*``) and writes the events it returns
through :func:`companion.game.commit`, which checks each one against the state
before it is written and appends the engine's follow-ups (end-of-game record,
Zen Archives' reshuffle).  The command line's ``companion game`` runs on it
too (``companion.commands.game._Session``).

Pure in the engine's sense: no clock (the caller passes ``t``), no file, no
database module.  The ledger is any object with the methods of
:class:`companion.ledger.Ledger` used here (``events``, ``append``,
``latest_game_id``, ``new_game_id``).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from companion import game as G
from companion.errors import BadInput, CompanionError, IllegalMove
from companion.layouts import Layout, Slot
from companion.tiles import tileset

#: Data fields a referee may correct on an event (never ``evidence``: the files
#: a ledger points at are written by the camera referee only).
CORRECTABLE = ("player", "slots", "slot", "faces", "word")

#: End reasons a referee may record (``companion game end``).
END_REASONS = ("abandoned", "no-moves", "time-up")

#: Decisions when settling a "needs referee" item.
DECISIONS = G.DECISIONS

#: Event types the camera referee writes for a case it cannot decide.  The
#: engine's type is ``needs_referee``; ``vision.referee`` writes ``needs-referee``.
NEEDS_TYPES = ("needs_referee", "needs-referee")


@dataclass
class Result:
    """What a console action did.

    Attributes:
        written: the events appended, in order.
        message: one line for the referee.
        error: None when the action was accepted, else why it was refused (the
            events written, e.g. a penalty, still stand).
        warning: an accepted action whose result the referee should look at
            again (a correction after which its event no longer fits the
            board, so it does not count; a correction, void or undo that made
            other events stop counting, count again or score differently:
            :func:`companion.game.knock_on`), else None.
    """

    written: list = field(default_factory=list)
    message: str = ""
    error: str | None = None
    warning: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


WordsLoader = Callable[[], tuple[Any, Any]]


class NoGame(BadInput):
    """The ledger holds no such game (or none at all)."""


class GameSession:
    """One game of a ledger, replayed and ready for commands.

    Args:
        ledger: a :class:`companion.ledger.Ledger` (or any object with its
            ``events``/``append``/``latest_game_id`` methods).
        game_id: the game (default: the latest one).
        t: the time of the events this session writes (seconds, the caller's clock).
        words_loader: ``() -> (words, index)`` for Word Mahjong (the dictionary
            and its :class:`companion.words.WordIndex`), called only for Word games.

    Raises:
        NoGame: no such game, or the ledger holds no game.  BadInput: the
            word list is missing (a Word Mahjong game).
    """

    def __init__(self, ledger, game_id: str | None = None, t: float | None = None,
                 words_loader: WordsLoader | None = None) -> None:
        self.ledger = ledger
        gid = game_id or ledger.latest_game_id()
        if gid is None:
            raise NoGame("the ledger holds no game yet: start one first")
        evs = ledger.events(gid)
        if not evs and game_id is not None and hasattr(ledger, "find_game_id"):
            # "friday" for the game "Friday" (ids are folded as names are)
            found = ledger.find_game_id(gid)
            if found is not None:
                gid, evs = found, ledger.events(found)
        if not evs:
            from companion.jsontext import name_text
            raise NoGame(f"no game '{name_text(gid)}' in the ledger")
        self.game_id = gid
        self.t = t
        self.words = self.index = None
        start = next((e for e in evs if e.type == "game_started"), None)
        if start is not None and start.data.get("variant") == "word" and words_loader is not None:
            self.words, self.index = words_loader()
        self.state = G.replay(evs, words=self.words)
        self._written_last = 0

    # ------------------------------------------------------------------ plumbing

    @property
    def events(self) -> list:
        return list(self.state.raw)

    def _append(self, type_: str, data: dict, ref: int | None, t: float | None):
        # written only on the game as it was replayed: another process (a
        # second `companion game`, the camera's referee, the console) may
        # have written since, and a move judged on the old board could be
        # refused on replay (StaleGame, nothing written)
        # (within one commit the engine's follow-ups come after what it wrote)
        newest = max(max((e.id for e in self.state.raw), default=0), self._written_last)
        ev = self.ledger.append(self.game_id, type_, data, ref, t, after=newest)
        self._written_last = ev.id
        return ev

    def commit(self, pendings: Sequence[G.Pending]) -> list:
        """Check and write events (with the engine's follow-ups); returns those written.

        Raises:
            BadInput / IllegalMove: an event is refused (those before it stand).
        """
        self.state, written = G.commit(self.state, pendings, self._append, self.t, self.index)
        return written

    def run(self, make: Callable[[G.GameState], G.Outcome], tick: bool = True) -> Result:
        """Resolve a command against the state and write its events.

        A Word Sprint whose countdown ran out before ``t`` is ended first
        (``tick``), as the command line does.
        """
        written = []
        if tick:
            written += self.commit(G.tick(self.state, self.t))
        outcome = make(self.state)
        written += self.commit(outcome.events)
        message = outcome.message
        if not message and written:      # what the engine made of the last event (a touch's "must be ...")
            entry = self.state.entries.get(written[-1].id)
            message = entry.text if entry is not None else ""
        return Result(written, message, outcome.error)

    # ------------------------------------------------------------------ what is allowed

    def capabilities(self) -> dict:
        """Which console actions fit this game now: ``undo`` (something to take
        back), ``hint`` and ``reshuffle`` (the mode has them), ``moves`` (the
        game is open), ``melds`` (hand-builder modes), ``words`` (Word Mahjong)."""
        st = self.state
        variant = st.setup.variant
        return {"undo": self.can_undo(), "hint": variant in ("mindful", "word") and not st.ended,
                "reshuffle": variant in ("mindful", "word") and not st.ended, "moves": not st.ended,
                "melds": st.mode.kind == "hand" and not st.ended, "end": not st.ended,
                "words": variant == "word" and not st.ended}

    def can_undo(self) -> bool:
        """Whether the referee's Undo (no player) would be taken now: there
        is a move to take back and :func:`companion.game.resolve_undo`
        accepts it (after an end by the referee, say, it is refused until
        the end is voided; the console once offered "Undo #31 pass" there)."""
        if G.undo_target(self.state) is None:
            return False
        try:
            G.resolve_undo(self.state)
        except CompanionError:
            return False
        return True

    def open_items(self) -> list[dict]:
        """Referee items still open: the engine's ``needs_referee`` list plus
        ``needs-referee`` events (the camera's spelling) that no live
        correction points at.  Oldest first; each ``id``, ``reason``,
        ``player``, ``evidence``, ``rejected``, ``slots``, ``faces`` and
        ``may_pair_with``: the tiles still on the board that the camera
        says a lone tile of the item may have been claimed with unseen
        (behind a taller stack), as ``[x, y, z]`` lists; malformed entries,
        slots outside the layout and tiles no longer on the board are left
        out; ``likely_pair_with``: the one of them whose slot changed by
        itself as the lone tile left, or None."""
        st = self.state
        items = {k: dict(v) for k, v in st.needs.items()}
        settled = {e.ref for e in st.raw if e.type == "correction" and st.status.get(e.id) != "voided"}
        for e in st.raw:
            if e.type == "needs-referee" and e.id not in settled and not e.data.get("resolved") \
                    and st.status.get(e.id) != "voided" and e.id not in st.tiles_back_items:
                items.setdefault(e.id, {"id": e.id, "reason": e.data.get("reason"), "evidence": e.data.get("evidence"),
                               "player": e.data.get("player"), "rejected": False})
        raw = {e.id: e for e in st.raw}
        out = []
        for k in sorted(items):
            item = items[k]
            ev = raw.get(k)
            item["type"] = ev.type if ev is not None else None
            raw_slots = (ev.data.get("slots") or ([ev.data["slot"]] if ev.data.get("slot") else [])) \
                if ev is not None else []
            # (a list of [x, y, z] lists: an event written by hand may hold anything)
            item["slots"] = [list(sl) for sl in raw_slots if isinstance(sl, list)] \
                if isinstance(raw_slots, list) else []
            item["faces"] = ev.data.get("faces") if ev is not None else None
            item["may_pair_with"] = self._claimable(k, item["slots"], self._standing(
                ev.data.get("may_pair_with") if ev is not None else None))
            likely = self._standing([ev.data.get("likely_pair_with")] if ev is not None else None)
            item["likely_pair_with"] = likely[0] if likely and likely[0] in item["may_pair_with"] else None
            out.append(item)
        return out

    def _claimable(self, item_id: int, slots: list, partners: list[list[int]]) -> list[list[int]]:
        """Of ``partners``, those a claim settling item ``item_id`` with its
        one tile ``slots[0]`` could take: on the board the item's tiles left
        (:meth:`companion.game.GameState.judged_board`) both free, and their
        faces matching where the ledger knows both (a break-test saw the
        console fill in a covered tile of another face, a claim the engine
        then refused).  ``partners`` as they are without an off-table tile."""
        st = self.state
        held = st.off_table.get(item_id)
        if held is None or len(slots) != 1:
            return partners
        lone = st.layout.index.get(tuple(slots[0]))
        if lone is None or lone not in held[0]:
            return partners
        board = held[1]
        out = []
        for p in partners:
            j = st.layout.index[tuple(p)]
            if not (board.is_free(lone) and board.is_free(j)):
                continue
            fa, fb = st.faces[lone], st.faces[j]
            if fa is not None and fb is not None and not st.tiles.matches(fa, fb):
                continue
            out.append(p)
        return out

    def _standing(self, slots) -> list[list[int]]:
        """The ``[x, y, z]`` entries of ``slots`` (anything) that name a tile
        on the board now, each once; the rest are left out."""
        st = self.state
        out: list[list[int]] = []
        for s in slots if isinstance(slots, list) else []:
            if not (isinstance(s, list) and len(s) == 3 and all(type(v) is int for v in s)) or s in out:
                continue
            i = st.layout.index.get(tuple(s))
            if i is not None and st.board.present[i]:
                out.append(list(s))
        return out

    # ------------------------------------------------------------------ moves

    def claim(self, player: str, slots: Sequence, faces: Sequence[str] | None = None,
              extra: Mapping | None = None, over_record: bool = False) -> Result:
        """A pair taken by ``player`` (:func:`companion.game.resolve_claim`).

        ``faces``: typed for tiles the ledger has not seen; one that differs
        from a recorded face is refused unless ``over_record``
        (:func:`check_typed_faces`).
        """
        check_typed_faces(self.state, slots, faces, over_record)
        return self.run(lambda s: G.resolve_claim(s, player, list(slots), faces, extra))

    def word(self, player: str, slots: Sequence, word: str, faces: Sequence[str] | None = None,
             over_record: bool = False) -> Result:
        """A word spelt with free tiles, in spelling order (:func:`companion.game.resolve_word`).

        Raises:
            BadInput: not a Word Mahjong game (or no word list loaded); a
            typed face unlike a recorded one without ``over_record``.
        """
        if self.words is None:
            raise BadInput("words are played in Word Mahjong only")
        check_typed_faces(self.state, slots, faces, over_record)
        return self.run(lambda s: G.resolve_word(s, player, list(slots), word, self.words, faces))

    def touch(self, player: str, slot) -> Result:
        """A tile touched (:func:`companion.game.resolve_touch`): a blocked one is a penalty."""
        return self.run(lambda s: G.resolve_touch(s, player, slot))

    def pass_turn(self, player: str) -> Result:
        return self.run(lambda s: G.resolve_simple(s, "pass", player))

    def undo(self, player: str | None = None) -> Result:
        before = self.state
        target = G.undo_target(before)
        res = self.run(lambda s: G.resolve_undo(s, player), tick=False)
        return self._knock_on(res, before, target)

    def hint(self, player: str) -> Result:
        return self.run(lambda s: G.resolve_hint(s, player, self.index))

    def reshuffle(self, player: str, seed: int | None = None) -> Result:
        return self.run(lambda s: G.resolve_reshuffle(s, player, seed, index=self.index))

    # ------------------------------------------------------------------ referee

    def correct(self, event_id: int, changes: Mapping, reason: str = "") -> Result:
        """Lay new data over event ``event_id`` (only :data:`CORRECTABLE` fields).

        Raises:
            BadInput: an unknown field, nothing to change, no such event.
        """
        bad = sorted(set(changes) - set(CORRECTABLE))
        if bad:
            raise BadInput(f"cannot correct {', '.join(bad)} (fields: {', '.join(CORRECTABLE)})")
        before = self.state
        res = self.run(lambda s: G.resolve_correction(s, int(event_id), dict(changes), False, reason,
                                                     s.raw), tick=False)
        notes = []
        item = self.state.needs.get(int(event_id))
        if res.ok and item is not None and item.get("rejected"):
            # recorded, but the corrected event no longer fits (a claim given
            # to the player whose turn it was not): it does not count now
            why = str(item.get("reason") or "").split(": ", 1)[-1]
            notes.append(f"event #{int(event_id)} no longer fits the board ({why}): it does not count "
                         "until it is corrected again or voided")
        if res.ok and "faces" in changes:
            notes += G.face_conflicts(self.state, int(event_id))
        return self._knock_on(res, before, int(event_id), notes)

    def void(self, event_id: int, reason: str = "") -> Result:
        """Make event ``event_id`` not count (a ``correction`` with ``void``)."""
        before = self.state
        res = self.run(lambda s: G.resolve_correction(s, int(event_id), None, True, reason, s.raw), tick=False)
        return self._knock_on(res, before, int(event_id))

    def _knock_on(self, res: Result, before: G.GameState, target: int | None, notes=()) -> Result:
        """``res`` with a warning naming every other event the action made
        stop counting, count again or score differently
        (:func:`companion.game.knock_on`)."""
        notes = list(notes)
        if res.ok:
            # the action's own events and what they point at (an undo of a
            # blocked claim takes back both its penalties)
            skip = {e.id for e in res.written} | {e.ref for e in res.written if e.ref is not None}
            skip |= {target} if target is not None else set()
            also = G.knock_on(before, self.state, skip)
            if also:
                notes.append("also changed: " + "; ".join(also))
        res.warning = "; ".join(notes) or None
        return res

    def settle(self, item_id: int, decision: str = "none", player: str | None = None,
               slots: Sequence | None = None, reason: str = "", faces: Sequence[str] | None = None,
               word: str | None = None, over_record: bool = False) -> Result:
        """Settle a "needs referee" item: a ``correction`` pointing at it
        (``changes: {resolved: true, decision}``), then the claim or the
        penalty the referee decides, if any (``resolves`` = the item's id).

        Args:
            item_id: the open item (an event id).
            decision: ``"none"``, ``"claim"`` (``player`` took ``slots``, two
                of them), ``"penalty"`` (``player`` touched the blocked tile
                ``slots[0]``) or, in Word Mahjong, ``"word"`` (``player``
                spelled ``word`` with ``slots``, in spelling order).
            faces: the faces of a claim's or word's tiles as the referee
                sees them (needed where the ledger knows no face for a tile:
                the camera read it unsurely); None: the ledger's.  One that
                differs from a recorded face is refused unless
                ``over_record`` (:func:`check_typed_faces`).
            word: the word of a ``"word"`` decision.

        Raises:
            BadInput: not an open item, unknown decision, missing player,
            slots or word, a word outside Word Mahjong.
            IllegalMove: the decided claim or penalty does not fit the board
            (nothing is written then).
        """
        item_id = int(item_id)
        item = next((i for i in self.open_items() if i["id"] == item_id), None)
        if item is None:
            raise BadInput(f"event #{item_id} is not an open referee item")
        if item["rejected"]:
            raise BadInput(f"event #{item_id} does not fit the board: void it or correct it instead")
        if decision not in DECISIONS:
            raise BadInput(f"unknown decision {decision!r} (expected one of {', '.join(DECISIONS)})")
        extra = {"resolves": item_id}
        follow: list[G.Pending] = []
        if decision != "none":
            if not player:
                raise BadInput(f"a {decision} needs the player")
            slots = list(slots or [])
            mine = {tuple(sl) for sl in item["slots"]}
            if decision in ("claim", "word") and mine and not any(_slot_key(sl) in mine for sl in slots):
                # a break-test (session 48) settled an item with a claim of
                # two standing tiles it never named: a move of its own (a
                # penalty may name a tile the item's tiles blocked)
                names = ", ".join(",".join(map(str, sl)) for sl in item["slots"])
                raise BadInput(f"a {decision} settling item #{item_id} names one of its tiles ({names}); "
                               "record another move as a move of its own")
            if decision in ("claim", "word"):
                check_typed_faces(self.state, slots, faces, over_record)
            if decision == "claim":
                out = G.resolve_claim(self.state, player, slots, list(faces) if faces else None, extra)
                if out.error:
                    raise IllegalMove(_refused(out.error))
                follow = list(out.events)
            elif decision == "word":
                if not word:
                    raise BadInput("a word decision needs the word")
                if not isinstance(word, str) or len(word) > len(self.state.layout):
                    raise BadInput(f"a word is letters, at most {len(self.state.layout)} of them (one a tile)")
                if self.state.setup.variant != "word":
                    raise BadInput(f"words are played in Word Mahjong only, not {self.state.rules.title}")
                if self.words is None:       # a session made without its loader: the bundled list
                    from companion import wordlist
                    self.words = wordlist.words()
                out = G.resolve_word(self.state, player, slots, word, self.words,
                                     list(faces) if faces else None, extra)
                if out.error:           # a blocked letter: refused, as a claim is
                    raise IllegalMove(_refused(out.error))
                follow = list(out.events)
            else:
                if len(slots) != 1:
                    raise BadInput(f"a penalty names one tile, got {len(slots)}")
                i = self.state.layout.slot_index(_slot(slots[0]))
                r = self.state.judged_board(item_id, (i,), touch=True)[0].reason(i)
                if r.free:
                    raise IllegalMove(f"{r.slot} is free: touching it is no penalty")
                prior = self._penalty_charged(item_id, i)
                if prior is not None:
                    raise IllegalMove(f"{r.slot}'s lift is charged already: penalty #{prior}, recorded when "
                                      "it left; settle the item with no move (or correct #" f"{prior})")
                out = G.resolve_touch(self.state, player, slots[0], extra)
                follow = [p for p in out.events if p.type == "penalty"]
        reason = G.check_reason(reason)        # (kept for good, as a correction's)
        fix = G.Pending("correction", {"changes": {"resolved": True, "decision": decision},
                                       **({"reason": reason} if reason else {})}, ref=item_id)
        if item_id not in self.state.off_table:
            written = self.commit([fix])
            written += self.commit(follow)
            text = f"item #{item_id} settled: " + (decision if decision != "none" else "no move")
            return Result(written, text)
        # tiles that left the table: the move first, while the item still holds
        # the game open (a game that the tiles' absence would end stays
        # settleable), then the item closed, unless some of its tiles wait
        # for another decision (a second pair of the same item)
        written = self.commit(follow)
        left = self.state.off_table.get(item_id, ([], None))[0]
        still = self._refusal_still_counting(item_id, slots) if decision in ("claim", "word") else None
        if decision in ("claim", "word") and left:
            names = ", ".join(str(self.state.slot(i)) for i in left)
            return Result(written, f"item #{item_id}: {decision} recorded; {names} still to settle", warning=still)
        written += self.commit([fix])
        text = f"item #{item_id} settled: " + (decision if decision != "none" else "no move")
        return Result(written, text, warning=still)

    def _refusal_still_counting(self, item_id: int, slots) -> str | None:
        """A warning naming the invalid attempt the camera recorded for the
        tiles a claim or word now settles (a pair refused, then kept off
        the table: the item), when it still counts, else None.  It passed
        the turn and counts as the player's invalid attempt; the settle
        leaves it (voiding it judges the later moves again, the next
        player's among them), and says so (a break-test, session 48: the
        attempt went on counting unseen)."""
        st = self.state
        keys = {_slot_key(sl) for sl in slots}
        for e in reversed(st.raw):
            if e.id >= item_id or st.status.get(e.id) == "voided":
                continue
            if e.type == "invalid" and {_slot_key(sl) for sl in (e.data.get("slots") or [])} == keys:
                return (f"#{e.id}, the invalid attempt recorded for these tiles, still counts (it passed the turn "
                        "and counts as an invalid attempt): void it if the pair was valid when it was made "
                        "(the moves after it are then judged again)")
            if e.type in ("claim", "word", "pass", "reshuffle", "game_started"):
                return None
        return None

    def _penalty_charged(self, item_id: int, i: int) -> int | None:
        """The id of a penalty already counting for slot index ``i`` in the
        turn of referee item ``item_id`` (recorded before the item with no
        move between: the camera charges a blocked tile when it leaves,
        then writes the item when the pair stays off the table), or None.
        A break-test (session 48) settled such an item as a penalty and
        charged the one touch twice."""
        st = self.state
        slot = list(st.slot(i))
        for e in reversed(st.raw):
            if e.id >= item_id:
                continue
            if st.status.get(e.id) == "voided" or (e.id in st.entries and st.entries[e.id].status == "rejected"):
                continue
            if e.type == "penalty" and e.data.get("slot") == slot:
                return e.id
            if e.type in ("claim", "invalid", "word", "pass", "reshuffle", "tiles_back", "game_started"):
                return None
        return None

    def end(self, reason: str = "abandoned") -> Result:
        """End the game now (a ``game_ended`` event ``by: referee``).

        Raises:
            BadInput: unknown reason.  IllegalMove: the game is over already, or
            the board does not show that end.
        """
        if reason not in END_REASONS:
            raise BadInput(f"unknown end reason {reason!r} (expected one of {', '.join(END_REASONS)})")
        return self.run(lambda s: G.resolve_end(s, reason, self.index), tick=False)


def _refused(error: str) -> str:
    """A decided claim's or word's refusal as the settle form says it: the
    engine's reason without the penalty it would cost in play (nothing is
    written: a referee who saw the blocked tile touched settles with a
    penalty)."""
    why = re.sub(r"; (blocked tile penalty [^;]*|a blocked tile costs no points in this game)$", "", error)
    return f"{why}: not settled, nothing written"


def clock_refusal(state: G.GameState, t: float | None, typed: bool | None) -> str | None:
    """Why a command at time ``t`` may not be recorded in a Word Mahjong
    game whose clock scores (:func:`companion.game.clock_problem`), in the
    words of the shell that asks: ``typed`` True or False for the command
    line (``--t`` given or not), None for the console (the wall clock).
    None when it may.  (A game abandoned is ended whatever the clock:
    :func:`abandon_time`.)"""
    problem = G.clock_problem(state, t)
    gid = state.game_id
    if problem == "own":
        return (f"game {gid} keeps its own clock (it was started with --t {state.t0:g}): "
                + ("record its moves with companion game ... --t, not here" if typed is None
                   else "give this command --t (seconds on that clock) too"))
    if problem == "wall":
        return f"game {gid} keeps the wall clock (it started without --t): leave out --t"
    if problem == "backwards":
        when = (f"this computer's clock ({_clock_text(t)})" if not typed
                else f"--t {t:.0f} ({_clock_text(t)})" if t >= G.WALL_CLOCK_FROM else f"--t {t:g}")
        return (f"{when} comes before game {gid}'s last event ({_clock_text(state.t_last)}): a Word game's clock "
                "only runs forward; set the clock right, or end the game as abandoned (companion game end "
                "--reason abandoned, or the console's End)")
    return None


def _clock_text(t: float) -> str:
    """A time as a person reads it: local ISO 8601 for a wall-clock time
    (the clock set back an hour was told ``t=1.79651e+09``, a break-test,
    session 59), seconds otherwise."""
    if t is not None and t >= G.WALL_CLOCK_FROM:
        import datetime
        return datetime.datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")
    return f"t={t:g}"


def abandon_time(state: G.GameState, t: float | None) -> float | None:
    """The time a game is ended as abandoned at: ``t``, or the game's last
    event's time where ``t`` comes before it (a host's clock set back froze
    a Word game, which then could not even be ended; nothing is scored at
    an abandoned end, so its time changes nothing)."""
    if G.clock_problem(state, t) == "backwards":
        return state.t_last
    return t


def _slot(s) -> tuple[int, int, int]:
    return tuple(Slot.parse(s)) if isinstance(s, str) else tuple(int(v) for v in s)


def _slot_key(s) -> tuple[int, int, int] | None:
    """:func:`_slot`, or None for anything that is not a slot (refused later, with its own message)."""
    try:
        return _slot(s)
    except (TypeError, ValueError, CompanionError):
        return None


def deal_faces(variant: str, layout: Layout, seed: int) -> list[str]:
    """Faces for a new game: the project's solvable deal
    (``companion.deals.solvable_deal``) when that module is there, else the
    variant's tiles in a seeded shuffle (:class:`random.Random`).

    Raises:
        BadInput: the layout does not hold as many slots as the set has tiles.
    """
    try:
        from companion import deals  # type: ignore[attr-defined]
    except ImportError:
        deals = None
    if deals is not None and hasattr(deals, "solvable_deal"):
        return list(deals.solvable_deal(variant, layout, seed).faces)
    tiles = tileset(variant).tiles()
    if len(tiles) != len(layout):
        raise BadInput(f"layout {layout.name!r} holds {len(layout)} slots, the {variant} set {len(tiles)} tiles")
    random.Random(seed).shuffle(tiles)
    return tiles


def start_game(ledger, variant: str, mode: str, layout: Layout, players: Sequence[str],
               seed: int, options: Mapping | None = None, t: float | None = None,
               game_id: str | None = None):
    """Deal and record a new game (its ``game_started`` event); returns that event.

    Raises:
        BadInput: bad variant, mode, players or options (:func:`companion.game.start_data`),
        or a game id already used.
    """
    faces = deal_faces(variant, layout, seed)
    data = G.start_data(variant, mode, layout, faces, list(players), seed, dict(options or {}))
    # the id is picked (or a given one checked) in the writing transaction:
    # two starts at once never share a game
    return ledger.append(None if game_id is None else G.check_game_id(game_id), "game_started", data, None, t)


def check_typed_faces(state: G.GameState, slots: Sequence, faces: Sequence[str] | None,
                      over_record: bool) -> None:
    """Refuse faces a person typed that differ from the faces the ledger
    records for those tiles, unless ``over_record`` says the table shows
    otherwise (docs/RULES.md 1.4: given faces win over the record, so a typo
    would score; :func:`companion.game.typed_face_conflicts`); over the
    record too, a face typed more often than the set holds it
    (:func:`companion.game.faces_beyond_set`).

    Raises:
        BadInput: such a face (one line naming the recorded faces), or a
        malformed slot or face list.
    """
    if not faces:
        return
    if over_record:
        # over the record, still no more copies of a face than the set holds
        beyond = G.faces_beyond_set(state, list(faces))
        if beyond:
            raise BadInput("; ".join(beyond) + ": no table shows that, over the record or not")
        return
    conflicts = G.typed_face_conflicts(state, list(slots), list(faces))
    if conflicts:
        raise BadInput("; ".join(conflicts) + ": typed faces are taken for tiles not yet seen; if the table "
                       "shows otherwise, give them again over the record (--over-record; the console's "
                       "\"over the record\" box)")
