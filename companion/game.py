"""The game model of all four variants: seats and turns, claims, invalid
attempts, penalties, racks and melds, steals, declarations, hints, reshuffles,
undo, referee corrections, end conditions, and a score derived by replaying
the ledger's events.

Pure: no clock, no file, no database.  Time comes in as each event's ``t``
(seconds on any clock the caller likes; only differences from the
``game_started`` event's ``t`` are used).  The ledger (:mod:`companion.ledger`)
stores the events; this module turns a list of them into a :class:`GameState`.

Rule sources: the four rule books in ../shared/seeds/ (Love and Candy Mahjong
2.1-2.9, Mindful Mahjong 2.1-2.9, Word Mahjong 2.1-2.8); every reading of an
unclear rule is written down in docs/RULES.md.  The numbers live in
:mod:`companion.variants`.

Event log model
---------------

The log is append-only.  Each event is ``Event(id, game_id, type, data, ref,
t)``.  Types (``data`` keys in brackets):

* ``game_started`` [variant, mode, layout, slots, faces, players, seed, options]
  everything replay needs;
* ``claim`` [player, slots, faces] a pair taken off the board;
* ``invalid`` [player, slots, faces, code, reason] a non-matching pair (Law 2:
  the tiles go back, the turn passes) or a pair that breaks "touch is claimed";
* ``penalty`` [player, slot, block, reason] a blocked tile touched (-100 in
  Love/Candy even when put back);
* ``touch`` [player, slot] a free tile touched ("touch is claimed");
* ``word`` [player, slots, faces, word] Word Mahjong word construction;
* ``pass`` [player] the player ends the turn;
* ``meld`` [player, kind, faces] a pong or chow laid from the rack;
* ``steal`` [player, from, face] "Passion Pong!" / "Sugar Pong!";
* ``declare`` [player] "Love Mahjong!" / "Candy Mahjong!";
* ``hint`` [player, pair | word] a Zen Focus token / Wisdom Lantern;
* ``reshuffle`` [player, faces, seed, source] the new faces of every slot;
* ``undo`` (ref = the event undone) the event stops counting;
* ``correction`` (ref = the event corrected) [changes | void, reason];
* ``needs_referee`` [reason, evidence, off_table, pair_move] the camera
  referee could not decide; ``off_table`` lists tiles it saw leave the
  table for good with no move decided: they leave the board (a claim or
  penalty that settles the item, ``resolves``, is judged on the board from
  before); ``pair_move`` (true) says the item is one player's pair move,
  valid or not: where every pair move passes the turn, it passes it;
  ``may_pair_with`` (a lone tile's item) lists standing tiles it may have
  been claimed with unseen, ``likely_pair_with`` the likeliest of them, for
  the console to offer (no effect on the game: a claim settling the item
  with one of them takes it off the board);
* ``faces_seen`` [slots, faces, source, frame] faces the camera read on
  standing tiles the ledger knew no face for (a tile uncovered by a claim):
  no move, no turn; it makes free pairs, stalemates and hints count on what
  the table shows;
* ``tiles_back`` [slots, item] tiles of a referee item's ``off_table`` that
  the camera saw put back on their slots (the players sent a refused move's
  tiles back after the item was written): they stand on the board again
  from here on; the item needs nothing more once all its tiles are back;
* ``game_ended`` [reason, cause] a record of the end (or a forced end).

Undo and corrections never change the events they point at: replay first works
out the *effective* events (an undone or voided event, and an event whose
``data.cause`` is such an event, drop out; a correction's ``changes`` are laid
over its target's data), then applies them in order.  An effective event that
no longer fits the board is kept, marked ``rejected`` and listed for the
referee.  Event data may carry ``evidence`` and ``reason`` from the camera
referee; the engine keeps them opaque.
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations_with_replacement
from typing import Any, Callable, Iterable, Mapping, Sequence

from companion.claims import (BLOCKED, MISSING, NO_MATCH, NOT_IN_LAYOUT, SAME_TILE, UNKNOWN_FACE,
                              check_claim)
from companion.errors import BadInput, CompanionError, IllegalMove
from companion.layouts import Layout, Slot, refuse_overlap
from companion.rules import Board
from companion.tiles import Face, TileSet, tileset
from companion.variants import (LoveRules, MindfulRules, Mode, Variant, WordRules, find_variant,
                                solo_stars)
from companion import words as wordrules
from companion.wording import count

# --------------------------------------------------------------------------- vocabulary

EVENT_TYPES: tuple[str, ...] = (
    "game_started", "claim", "invalid", "penalty", "touch", "word", "pass", "meld", "steal",
    "declare", "hint", "reshuffle", "undo", "correction", "needs_referee", "faces_seen", "tiles_back",
    "game_ended")
#: The camera referee may spell the referee item ``needs-referee``; both are read alike.
NEEDS_REFEREE = ("needs_referee", "needs-referee")

#: The key under which :mod:`companion.ledger` keeps a row's data that is
#: valid JSON but not an object (a list, a number, null, written by another
#: program): replay makes such an event a referee item instead of failing.
UNREADABLE_DATA = "unreadable_data"

#: Events that change the board, a rack or the turn; refused once the game is over.
PLAY_TYPES = frozenset({"claim", "invalid", "penalty", "touch", "word", "pass", "meld", "steal",
                        "declare", "hint", "reshuffle"})
#: Events the generic undo may take back (the Ink Eraser in Word: claims and words only).
UNDOABLE = frozenset({"claim", "invalid", "penalty", "touch", "word", "pass", "meld", "steal",
                      "declare", "hint", "reshuffle"})
#: Types a referee correction may change into one another (``changes: {"type": ...}``).
RETYPABLE = frozenset({"claim", "invalid", "penalty", "touch", "pass"})
#: Events that only inform the ledger (no move, no turn): the scoreboard's
#: list of last events leaves them out, the ledger and the console keep them.
QUIET_TYPES = frozenset({"faces_seen"})
#: Events that close the window for a steal.
_CLOSES_STEAL = frozenset({"claim", "invalid", "penalty", "touch", "word", "pass", "declare",
                           "reshuffle"})

TEAM = "team"
MAX_PLAYERS = 4
#: event times from this on (seconds) are wall-clock times (2001 onwards);
#: smaller ones count from a recording's or a typed ``--t``'s own start
WALL_CLOCK_FROM = 1e9
LAST_EVENTS = 20


@dataclass(frozen=True)
class Event:
    """One ledger event (see the module docstring for types).

    Attributes:
        id: ledger row id, increasing.
        game_id: the game it belongs to.
        type: one of :data:`EVENT_TYPES` (other types are kept and ignored).
        data: JSON-able dict.
        ref: id of the event this one points at (undo, correction), else None.
        t: time in seconds on the caller's clock, or None.
    """

    id: int
    game_id: str
    type: str
    data: dict
    ref: int | None = None
    t: float | None = None

    def to_json(self) -> dict:
        return {"id": self.id, "game_id": self.game_id, "type": self.type, "data": self.data,
                "ref": self.ref, "t": self.t}

    @classmethod
    def from_json(cls, obj: Mapping) -> "Event":
        """Rebuild from :meth:`to_json` (or any mapping with those keys).

        Raises:
            BadInput: a key is missing or of the wrong type.
        """
        try:
            return cls(int(obj["id"]), str(obj.get("game_id", "")), str(obj["type"]), dict(obj.get("data") or {}),
                       None if obj.get("ref") is None else int(obj["ref"]),
                       None if obj.get("t") is None else float(obj["t"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise BadInput(f"bad event {obj!r}: {exc}") from None


@dataclass(frozen=True)
class Pending:
    """An event the engine asks the caller to append (not yet in the ledger)."""

    type: str
    data: dict
    ref: int | None = None


@dataclass(frozen=True)
class Outcome:
    """What a command resolved to.

    Attributes:
        events: events to append, in order (may be empty).
        error: None when the command was accepted; else one line saying why it
            was refused (the events, e.g. a penalty, are still to be appended).
        message: one line for the referee.
    """

    events: tuple[Pending, ...]
    error: str | None = None
    message: str = ""


# --------------------------------------------------------------------------- set-up


@dataclass(frozen=True)
class Setup:
    """Everything a game starts from (the ``game_started`` event's data)."""

    variant: str
    mode: str
    layout: Layout
    faces: tuple[str | None, ...]
    players: tuple[str, ...]
    seed: int | None
    options: dict

    def to_data(self) -> dict:
        return {"variant": self.variant, "mode": self.mode, "layout": self.layout.name,
                "slots": [list(s) for s in self.layout.slots], "faces": list(self.faces),
                "players": list(self.players), "seed": self.seed, "options": self.options}

    @classmethod
    def from_data(cls, data: Mapping, deal_lookup: Callable | None = None) -> "Setup":
        """Read a ``game_started`` event's data.

        ``deal_lookup(data)`` is asked for a deal (an object with ``layout``
        and ``faces``) or a :class:`Layout` when the data lacks ``slots`` or
        ``faces``.

        Raises:
            BadInput: missing or inconsistent data.
        """
        data = dict(data)
        if UNREADABLE_DATA in data:
            raise BadInput(f"game_started: its data is not a JSON object: {data[UNREADABLE_DATA][:60]}")
        if ("slots" not in data or "faces" not in data) and deal_lookup is not None:
            found = deal_lookup(data)
            if isinstance(found, Layout):
                data.setdefault("slots", [list(s) for s in found.slots])
                data.setdefault("faces", [None] * len(found))
            elif found is not None:
                data.setdefault("slots", [list(s) for s in found.layout.slots])
                data.setdefault("faces", list(found.faces))
        for key in ("variant", "mode", "slots", "players"):
            if key not in data:
                raise BadInput(f"game_started lacks {key!r}")
        try:
            slots = tuple(Slot(*map(int, s)) for s in data["slots"])
        except (TypeError, ValueError):
            raise BadInput("game_started: slots must be [x, y, z] integer triples") from None
        layout = Layout(str(data.get("layout") or "layout"), slots, "ledger")
        faces = data.get("faces") or [None] * len(slots)
        # (a ledger written before unknown options were refused still replays)
        return new_setup(str(data["variant"]), str(data["mode"]), layout, faces,
                         list(data["players"]), data.get("seed"), data.get("options") or {},
                         new_game=False)


#: the options a game may start with (:func:`new_setup`): the modes' own,
#: and where the camera referee found the game (``source``, ``frame``,
#: :mod:`vision.referee`); any other key is a typing mistake the ledger
#: would otherwise carry silently
#: the largest value a new game takes for an option: far beyond any table
#: (a day's clock, ten thousand turns), so a typo cannot make a clock of
#: 10^25 seconds that no page can draw
OPTION_MAX = {"turn_limit": 10_000, "reshuffles": 1_000, "level": 1_000, "target_seconds": 86_400,
              "countdown_seconds": 86_400, "base_points": 1_000_000}

MODE_OPTIONS = ("base_points", "countdown_seconds", "difficulty", "frame", "level", "limits", "reshuffles",
                "source", "target_seconds", "turn_limit")


#: the tools a Word Mahjong game may limit (Word 2.5; docs/RULES.md 4.4)
LIMIT_KEYS = ("hints", "reshuffles", "undos")


def _check_limits(limits) -> None:
    """``limits``: a mapping of some of :data:`LIMIT_KEYS` to a whole number
    >= 0 (that many uses) or null (no limit).

    Raises:
        BadInput: anything else, in one line.
    """
    if not isinstance(limits, Mapping):
        raise BadInput(f"option limits must be an object such as {{\"hints\": 3, \"undos\": null}}, got {limits!r}")
    for k, v in limits.items():
        if k not in LIMIT_KEYS:
            raise BadInput(f"option limits: unknown tool {k!r} (known: {', '.join(LIMIT_KEYS)})")
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise BadInput(f"option limits: {k} must be a whole number >= 0 or null, got {v!r}")


def _option_applies(key: str, rules: Variant, mode: Mode) -> str:
    """"" when option ``key`` means something in ``mode`` of ``rules``, else
    where it does: an option a mode never reads would be kept in the ledger
    and silently ignored."""
    if key in ("difficulty", "reshuffles") and not isinstance(rules, MindfulRules):
        return "Mindful Mahjong only"
    if key == "turn_limit" and mode.kind != "solo":
        return "the Solo Quest modes of Love and Candy Mahjong only"
    if key == "countdown_seconds" and not (isinstance(rules, WordRules) and mode.kind == "timed"):
        return "Word Mahjong's timed mode only"
    if key in ("target_seconds", "base_points", "level", "limits") and not isinstance(rules, WordRules):
        # (limits: Word 2.5's hints, reshuffles and undos; a break-test,
        # session 55, limited a Mindful duel's hints and was given them)
        return "Word Mahjong only"
    if key == "level" and mode.kind != "campaign":
        return "Word Mahjong's Scholar's Path only: the campaign's levels"
    return ""


#: the longest game id a new game may be given (ids are shown in lists and URLs)
GAME_ID_MAX = 64


def check_game_id(game_id: str) -> str:
    """A game id given for a new game, checked: 1-:data:`GAME_ID_MAX`
    characters, no spaces round it, printable (:func:`name_is_printable`:
    an id holding a newline split ``companion game games`` over two lines).

    Raises:
        BadInput: an empty, over-long or unprintable id.
    """
    if not isinstance(game_id, str) or not game_id or game_id != game_id.strip():
        raise BadInput(f"bad game id {_shown(str(game_id))}: give 1-{GAME_ID_MAX} characters, no spaces "
                       "at either end (or leave it out for game-N)")
    if len(game_id) > GAME_ID_MAX or not name_is_printable(game_id):
        raise BadInput(f"bad game id {_shown(game_id)}: 1-{GAME_ID_MAX} letters, digits, spaces and "
                       "punctuation (no control, zero-width or text-direction characters)")
    return game_id


def name_is_printable(name: str) -> bool:
    """Whether a player's name shows as itself on every screen: no Unicode
    control or format characters (category Cc / Cf: tabs, newlines,
    zero-width spaces, right-to-left overrides that make "evil" show as
    "live"), no line or paragraph separators, and at least one visible
    character."""
    joiners = "\u200c\u200d"        # ZWNJ and ZWJ join letters (Persian, Indic) and emoji inside a name
    blanks = "\u034f\u115f\u1160\u3164\uffa0\u2800"   # letters and marks that draw nothing (fillers)
    if any(c in blanks for c in name):
        return False
    for i, c in enumerate(name):
        cat = unicodedata.category(c)
        if c in joiners and 0 < i < len(name) - 1:
            continue
        if cat in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"):
            return False
    return any(not unicodedata.category(c).startswith(("Z", "C")) and not _VARIATION_SELECTORS.match(c)
               for c in name)


#: characters a new player's name may not hold: typed between names, they
#: meant two players (a semicolon; a full-width, ideographic or Arabic comma)
NAME_SEPARATORS = ";\uff0c\u3001\uff1b\u060c"

#: the longest reason a referee's correction or void keeps (characters)
REASON_MAX = 300


def check_reason(reason) -> str:
    """A referee's reason for a correction or a void, checked: text of at
    most :data:`REASON_MAX` characters on one line that shows as itself
    (no control, format, line-separator or private-use character, nor the
    bytes of a command line that are not UTF-8); spaces round it dropped.
    "" for none.  The reason is kept for good in the append-only ledger and
    shown by ``game ledger``, the console and exports (a break-test, session
    55: a newline in it forged a ledger line, and a byte that is not UTF-8
    made every later CSV export fail).

    Raises:
        BadInput: not text, too long, or holding such a character.
    """
    if reason is None:
        return ""
    if not isinstance(reason, str):
        raise BadInput(f"a reason must be text, not {type(reason).__name__}")
    reason = reason.strip()
    if len(reason) > REASON_MAX:
        raise BadInput(f"the reason is {len(reason)} characters long: at most {REASON_MAX}")
    for c in reason:
        cat = unicodedata.category(c)
        if cat == "Cs":
            raise BadInput("the reason holds bytes that are not UTF-8 text")
        if cat in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn") and c not in "\u200c\u200d":
            what = unicodedata.name(c, "") or "a control character"
            raise BadInput(f"the reason holds {what} (U+{ord(c):04X}): give one line of plain text")
    return reason


def name_key(name: str) -> str:
    """A player's name as names are told apart: Unicode's compatibility
    form (NFKC: "Zoë" typed composed or as "e" and a combining diaeresis,
    full-width "Ａｄａ" and "Ada" alike) with case folded (Unicode Standard
    Annex #15; Python's ``str.casefold``).  A break-test (session 49): two
    names that both showed as "Zoë" started one game as two players, and
    "unknown player 'Zoë' (players: Zoë, ...)" refused the other spelling.
    Variation selectors (U+FE00-U+FE0F, U+E0100-U+E01EF) are left out: a phone types the
    heart ❤ with U+FE0F after it, a laptop without, and they showed alike
    as two players (a break-test, session 57)."""
    return _VARIATION_SELECTORS.sub("", unicodedata.normalize("NFKC", name)).casefold()


#: Unicode's variation selectors (a character's text or emoji look):
#: default-ignorable, so two names differing only by them look the same
_VARIATION_SELECTORS = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")


def _shown(name: str, limit: int = 48) -> str:
    """A name as quoted in an error: repr, cut to ``limit`` characters."""
    r = repr(name)
    return r if len(r) <= limit else r[:limit - 4] + "...'"


def new_setup(variant: str, mode: str, layout: Layout, faces: Sequence[str | None],
              players: Sequence[str], seed: int | None = None, options: Mapping | None = None,
              new_game: bool = True) -> Setup:
    """Check a game's set-up and fill in the mode's default options.

    Args:
        variant, mode: ids (:mod:`companion.variants`).
        layout: the layout played.
        faces: face id per slot of ``layout`` (None where not known yet).
        players: names in seat order; the first one starts.
        seed: the deal's seed, kept for the record.
        options: mode options (``turn_limit``, ``difficulty``, ``reshuffles``,
            ``level``, ``target_seconds``, ``countdown_seconds``, ``limits`` ...).
        new_game: the set-up of a game starting now: an option not in
            :data:`MODE_OPTIONS` is refused.  False when replaying a ledger,
            which must always replay as it was written.

    Raises:
        BadInput: unknown variant/mode/face/option, wrong number of players
        or faces, bad names (empty, over 40 characters, a comma, or in a new
        game a semicolon or another comma (:data:`NAME_SEPARATORS`), a
        leading '-' or an unprintable character), an
        empty or odd layout.
    """
    rules = find_variant(variant)
    m = rules.mode(mode)
    names = [str(p).strip() for p in players]
    if new_game:        # one spelling of "Zoë", whichever a keyboard typed (composed, NFC)
        names = [unicodedata.normalize("NFC", n) for n in names]
    if not (m.min_players <= len(names) <= m.max_players):
        span = str(m.min_players) if m.min_players == m.max_players else f"{m.min_players} to {m.max_players}"
        raise BadInput(f"{m.title} is for {span} player{'' if span == '1' else 's'}, got {len(names)}")
    for n in names:
        if not n or "," in n or len(n) > 40:
            raise BadInput(f"bad player name {_shown(n)}: 1-40 characters, no comma")
        if new_game and any(c in n for c in NAME_SEPARATORS):
            # `--players "Ada;Bo"` meant two players (a break-test, session 54),
            # so did "Ada，Bo" typed with a full-width comma (session 55)
            raise BadInput(f"bad player name {_shown(n)}: no semicolon or other comma (names are separated "
                           f"by commas, e.g. --players Ada,Bo)")
        if new_game and not name_is_printable(n):
            raise BadInput(f"bad player name {_shown(n)}: letters, digits, spaces and punctuation only "
                           f"(no control, zero-width or text-direction characters)")
    if len(set(names)) != len(names):
        raise BadInput(f"player names must differ: {', '.join(names)}")
    if new_game and any(n.startswith("-") for n in names):
        bad = next(n for n in names if n.startswith("-"))
        raise BadInput(f"bad player name {_shown(bad)}: a name may not start with '-' (the command line would "
                       "read it as an option)")
    if new_game and len({name_key(n) for n in names}) != len(names):
        # (a ledger written before this rule still replays)
        raise BadInput(f"player names must differ in more than upper and lower case or the letters' width: "
                       f"{', '.join(names)} (called out at the table, or typed in a hurry, they are the same name)")
    if len(layout) == 0 or len(layout) % 2:
        raise BadInput(f"layout {layout.name!r} must hold an even, non-zero number of tiles")
    if new_game:
        # a slot twice, or two tiles on one spot of a layer, is no board
        # (a ledger written before this rule still replays)
        if len(set(layout.slots)) != len(layout):
            raise BadInput(f"layout {layout.name!r} names a slot twice")
        refuse_overlap(layout)
    if len(faces) != len(layout):
        raise BadInput(f"{len(faces)} faces for {len(layout)} slots")
    ts = tileset(variant)
    for f in faces:
        if f is not None:
            ts.face(f)
    opts = rules.default_options(m, len(layout))
    given = dict(options or {})
    unknown = sorted(str(k) for k in given if k not in MODE_OPTIONS)
    if unknown and new_game:
        shown = [k for k in MODE_OPTIONS if k not in ("frame", "source")]     # those two the camera writes
        raise BadInput(f"unknown option{'s' if len(unknown) > 1 else ''} "
                       f"{', '.join(_shown(k, 40) if not k.isidentifier() else k for k in unknown)} "
                       f"(known: {', '.join(shown)})")
    if new_game:
        for key in given:
            where = _option_applies(key, rules, m)
            if where:
                raise BadInput(f"option {key} does not apply to {rules.title}: {m.title} ({where})")
    if rules.name == "mindful" and "difficulty" in given:
        diff = given["difficulty"]
        folded = unicodedata.normalize("NFKC", diff).strip().casefold() if isinstance(diff, str) else diff
        if folded in MindfulRules.reshuffles_by_difficulty:
            diff = given["difficulty"] = folded     # as --mode and --variant: any case, end spaces, full width
        if diff not in MindfulRules.reshuffles_by_difficulty:
            raise BadInput(f"unknown difficulty {diff!r} (expected one of "
                           f"{', '.join(MindfulRules.reshuffles_by_difficulty)})")
        given.setdefault("reshuffles", MindfulRules.reshuffles_by_difficulty[diff])
    if new_game and isinstance(given.get("limits"), Mapping) and isinstance(opts.get("limits"), Mapping):
        # the tools not named keep the mode's limits (null: no limit)
        given["limits"] = {**opts["limits"], **given["limits"]}
    opts.update(given)
    for key in ("turn_limit", "reshuffles", "level", "target_seconds", "countdown_seconds", "base_points"):
        whole = key in opts and isinstance(opts[key], int) and not isinstance(opts[key], bool)
        if key in opts and (not whole or opts[key] < 0):
            if whole and new_game and key in given and key in ("turn_limit", "level", "countdown_seconds"):
                continue        # below 0: said below, in the words for 0
            raise BadInput(f"option {key} must be a whole number >= 0, got {opts[key]!r}")
    for key, top in OPTION_MAX.items():
        if new_game and key in given and isinstance(opts.get(key), int) and opts[key] > top:
            digits = str(opts[key])
            raise BadInput(f"option {key} must be at most {top:,}, got {digits if len(digits) <= 40 else digits[:36] + '...'}")
    if new_game and "limits" in given:
        _check_limits(given["limits"])
    if new_game and "turn_limit" in given and opts["turn_limit"] < 1:
        # 0 turns would end a Solo Quest after recording its first move
        raise BadInput(f"option turn_limit must be 1 or more (a Solo Quest of no turns cannot be played), "
                       f"got {opts['turn_limit']}")
    if new_game and "countdown_seconds" in given and opts["countdown_seconds"] < 1:
        # (an audit's Word Sprint of 0 s was over before its first word)
        raise BadInput(f"option countdown_seconds must be 1 or more (a Word Sprint with no time on its clock "
                       f"is over as it starts), got {opts['countdown_seconds']}")
    if new_game and "level" in given and opts["level"] < 1:
        raise BadInput(f"option level must be 1 or more (Scholar's Path starts at level 1), got {opts['level']}")
    return Setup(variant, mode, layout, tuple(faces), tuple(names),
                 None if seed is None else int(seed), opts)


# --------------------------------------------------------------------------- players


@dataclass
class PlayerState:
    """One seat.

    Attributes:
        name, seat: name and 0-based seat (turn order).
        lines: scored items ``(event id, label, points)``.
        rack: loose claimed tiles (face ids) in claim order.
        melds: laid melds ``(kind, faces, scored)``.
        bonus: bonus (glass) tiles set aside.
        focus_tokens: Mindful Zen Focus tokens left.
        hints, reshuffles, undos: boosters used.
        words: words submitted (Word Mahjong).
        matches, invalid, penalties: counts.
    """

    name: str
    seat: int
    lines: list[tuple[int | None, str, int]] = field(default_factory=list)
    rack: list[str] = field(default_factory=list)
    melds: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    bonus: list[str] = field(default_factory=list)
    focus_tokens: int = 0
    hints: int = 0
    reshuffles: int = 0
    undos: int = 0
    words: list[str] = field(default_factory=list)
    matches: int = 0
    invalid: int = 0
    penalties: int = 0

    @property
    def points(self) -> int:
        return sum(p for _, _, p in self.lines)


@dataclass
class _Entry:
    id: int
    type: str
    player: str | None
    ref: int | None
    text: str
    data: dict
    status: str = "ok"


# --------------------------------------------------------------------------- state


class GameState:
    """A game in progress, built from its ``game_started`` data and changed by
    events.

    ``apply(event)`` returns a new state and leaves this one alone;
    ``apply_event(event)`` changes this one.  Both raise
    :class:`~companion.errors.IllegalMove` (or BadInput) for an event that
    breaks the rules, before changing anything.
    """

    def __init__(self, setup: Setup, game_id: str = "", t0: float | None = None,
                 words: frozenset[str] | None = None) -> None:
        self.setup = setup
        self.game_id = game_id
        self.rules: Variant = find_variant(setup.variant)
        self.mode: Mode = self.rules.mode(setup.mode)
        self.tiles: TileSet = tileset(setup.variant)
        self.board = Board(setup.layout)
        self.faces: list[str | None] = list(setup.faces)
        self.players = [PlayerState(n, i) for i, n in enumerate(setup.players)]
        if isinstance(self.rules, MindfulRules):
            for p in self.players:
                p.focus_tokens = self.rules.focus_tokens
        self.team_lines: list[tuple[int | None, str, int]] = []
        self.words = words
        self.turn: int = 0
        self.chain = 0                      # valid matches in the current turn
        self.touched: list[int] = []        # free tiles touched this turn (touch is claimed)
        self.steal_window: tuple[int, int, str] | None = None   # (claim id, claimer seat, face)
        self.streaks: dict[Any, tuple[str | None, int]] = {}
        self.reshuffles = 0
        self.turns_used = 0
        self.t0 = t0
        self.t_last = t0
        self.ended = False
        self.end_reason: str | None = None
        self.end_cause: int | None = None
        self.end_t: float | None = None
        self.end_recorded = False
        self.declarer: int | None = None
        # (cause id, steal window at the end): a claim or steal that cleared the
        # board or left it stuck in the Hand Builder still admits its
        # claimant's declaration and an opponent's steal (RULES.md 2.4)
        self.last_call: tuple[int, tuple[int, int, str] | None] | None = None
        self.result: dict = {}
        self.end_text: tuple[str, ...] = ()     # the end's scoring, in words (game_ended's line)
        self.entries: dict[int, _Entry] = {}
        self.actions: list[int] = []        # effective undoable events, in order
        self.needs: dict[int, dict] = {}    # open referee items by event id
        # tiles the camera saw leave the table with no move it could decide, by
        # the referee item that reports them: (slot indices still unsettled,
        # the board as it stood just before they left); off the board at once
        self.off_table: dict[int, tuple[list[int], Board]] = {}
        self.off_table_closed: set[int] = set()     # items a correction settled ("resolved") since
        self.tiles_back_items: set[int] = set()      # items whose tiles all came back (tiles_back)
        self.last_id = 0
        self.raw: list[Event] = []          # every event of the game (set by replay)
        self.status: dict[int, str] = {}    # effective status per event id (set by replay)

    # ------------------------------------------------------------------ basics

    def copy(self) -> "GameState":
        new = copy.copy(self)
        new.board = self.board.copy()
        new.faces = list(self.faces)
        new.players = copy.deepcopy(self.players)
        new.team_lines = list(self.team_lines)
        new.touched = list(self.touched)
        new.streaks = dict(self.streaks)
        new.result = copy.deepcopy(self.result)
        new.entries = dict(self.entries)
        new.actions = list(self.actions)
        new.needs = dict(self.needs)
        new.off_table = {k: (list(v[0]), v[1]) for k, v in self.off_table.items()}
        new.off_table_closed = set(self.off_table_closed)
        new.tiles_back_items = set(self.tiles_back_items)
        return new

    @property
    def layout(self) -> Layout:
        return self.setup.layout

    @property
    def touch_binds(self) -> bool:
        """Whether touching a free tile commits the player (docs/RULES.md 1.2):
        Love/Candy 2.9 "Touch Is Claimed" (every mode), and Mindful 2.9
        "Two-Touch Commitment", which holds "in competitive turn-based play"
        only (Harmony Duels).  Elsewhere (Zen Solitaire, Garden Restoration,
        Word Mahjong, whose book has no such rule) a touch is recorded and
        binds nothing."""
        if isinstance(self.rules, MindfulRules):
            return self.mode.kind == "duel"
        return not isinstance(self.rules, WordRules)

    @property
    def touch_rule(self) -> str:
        """The name of the rule a binding touch follows, as the player's own
        book calls it: Love/Candy 2.9 "Touch Is Claimed", Mindful 2.9
        "Two-Touch Commitment" (a Mindful duel's refusals had named the
        Love/Candy rule, which the Mindful book never mentions)."""
        return "two-touch commitment" if isinstance(self.rules, MindfulRules) else "touch is claimed"

    @property
    def coop(self) -> bool:
        return self.mode.kind == "coop"

    def player(self, name: str | None) -> PlayerState:
        """The seat of ``name``: the player of that name, or else the one
        player whose name it is in another case (``ada`` for Ada, typed at a
        table; the events then carry the name as the game spells it).

        Raises:
            BadInput: no such player in this game.
        """
        for p in self.players:
            if p.name == name:
                return p
        if isinstance(name, str):
            name = name.strip()          # as the start strips the names it is given
            folded = [p for p in self.players if name_key(p.name) == name_key(name)]
            if len(folded) == 1:
                return folded[0]
        raise BadInput(f"unknown player {name!r} (players: {', '.join(p.name for p in self.players)})")

    def whose_turn(self) -> str | None:
        return None if self.ended else self.players[self.turn].name

    def score(self, p: PlayerState) -> int:
        """The player's score: tokens held in Love/Candy (10,000 + points), the
        team's score in Cooperative Garden Restoration, else their points."""
        if self.coop:
            return sum(q.points for q in self.players) + sum(x for _, _, x in self.team_lines)
        return self.rules.start_tokens + p.points

    def scores(self) -> dict[str, int]:
        return {p.name: self.score(p) for p in self.players}

    def face(self, i: int) -> Face | None:
        f = self.faces[i]
        return None if f is None else self.tiles.face(f)

    def slot(self, i: int) -> Slot:
        return self.layout.slots[i]

    def rel_t(self, t: float | None) -> float | None:
        if t is None or self.t0 is None:
            return None
        return t - self.t0

    # ------------------------------------------------------------------ board questions

    def free_pairs(self) -> list[tuple[int, int]]:
        """Every free matching pair now (slot indices, layout order); tiles of
        unknown face are left out."""
        groups: dict[str, list[int]] = {}
        for i in self.board.free_indices():
            f = self.face(i)
            if f is not None:
                groups.setdefault(f.match, []).append(i)
        out = []
        for idx in groups.values():
            for a in range(len(idx)):
                for b in range(a + 1, len(idx)):
                    out.append((idx[a], idx[b]))
        out.sort()
        return out

    def free_matches(self) -> int:
        """How many pairs the free tiles give at once: per matching group of
        free tiles of known face, half its size (4 free tiles of one face
        are 2 pairs, though :meth:`free_pairs` lists 6 ways to pick one)."""
        groups: Counter = Counter()
        for i in self.board.free_indices():
            f = self.face(i)
            if f is not None:
                groups[f.match] += 1
        return sum(n // 2 for n in groups.values())

    def free_faces_known(self) -> bool:
        return all(self.faces[i] is not None for i in self.board.free_indices())

    def stuck(self) -> bool:
        """No free matching pair while tiles remain (faces of free tiles known)."""
        return self.board.n_present > 0 and self.free_faces_known() and not self.free_pairs()

    def reshuffle_can_help(self, index=None) -> bool:
        """Whether some arrangement of the standing tiles on their slots
        leaves a match free, so that a reshuffle may help: two tiles that
        match and two slots standing free (free depends on which slots are
        full, not on the faces), or, with Word Mahjong's dictionary
        ``index``, a word of the standing letters no longer than the free
        slots are many.  True when a standing face is unknown (a camera
        game: nothing can be said).  Session 35: a Lexicon Fan or Zen
        Reshuffle that could do nothing was spent, and the game could not
        end before every one was (docs/RULES.md 3.3, 4.5)."""
        present = [i for i in range(len(self.faces)) if self.board.present[i]]
        if not present:
            return False
        if any(self.faces[i] is None for i in present):
            return True
        free = len(self.board.free_indices())
        keys = Counter(self.tiles.face(self.faces[i]).match for i in present)
        if free >= 2 and any(c >= 2 for c in keys.values()):
            return True
        if index is not None and isinstance(self.rules, WordRules) and free >= 3:
            return bool(index.find([self.faces[i] for i in present], limit=1, max_len=free))
        return False

    def reshuffle_allowed(self, p: PlayerState | None = None) -> bool:
        """Whether a reshuffle may be done now (by ``p``, or by anyone)."""
        if isinstance(self.rules, MindfulRules):
            if self.reshuffles >= int(self.setup.options.get("reshuffles", 0)):
                return False
            holders = [p] if p is not None else self.players
            return any(q.focus_tokens > 0 for q in holders)
        if isinstance(self.rules, WordRules):
            return self._booster_left(self.players[0] if p is None else p, "reshuffles")
        return False

    def _reshuffles_left(self) -> str:
        """Mindful: how many Zen Reshuffles the session allows still, in words."""
        n = int(self.setup.options.get("reshuffles", 0)) - self.reshuffles
        holders = sum(q.focus_tokens > 0 for q in self.players)
        return f"{n} of the session's left, {holders} player{'s' if holders != 1 else ''} holding a token"

    def _booster_left(self, p: PlayerState, kind: str) -> bool:
        limit = (self.setup.options.get("limits") or {}).get(kind)
        return limit is None or getattr(p, kind) < limit

    def deadline(self) -> float | None:
        """Word Sprint: the countdown's end, relative to the start (seconds)."""
        if self.mode.kind != "timed":
            return None
        words = sum(len(p.words) for p in self.players)
        return float(self.setup.options.get("countdown_seconds", 0)) + self.rules.sprint_word_seconds * words

    # ------------------------------------------------------------------ applying events

    def apply(self, event: Event) -> "GameState":
        """A new state with ``event`` applied; this one is left as it is.

        Raises:
            IllegalMove / BadInput: the event breaks the rules here.
        """
        new = self.copy()
        new.apply_event(event)
        return new

    def apply_event(self, event: Event) -> None:
        """Apply ``event`` to this state.  Validation happens before any change,
        except that an action arriving after a Word Sprint countdown ran out
        first ends the game (time is up) and is then refused.

        Raises:
            IllegalMove / BadInput: the event breaks the rules here.
        """
        e = as_event(event)
        if UNREADABLE_DATA in e.data:
            raise BadInput(f"its data is not a JSON object: {e.data[UNREADABLE_DATA][:60]}")
        handler = getattr(self, "_on_" + e.type.replace("-", "_"), None)   # "needs-referee" too
        last_call = None
        if e.type in PLAY_TYPES:
            if self.ended:
                if self.last_call is None or e.type not in ("declare", "steal", "meld"):
                    raise IllegalMove(f"the game has ended ({self.end_reason})")
                last_call = self._reopen(e.type)
            dl = self.deadline()
            rt = self.rel_t(e.t)
            if dl is not None and rt is not None and rt > dl:
                self._end("time-up", None, self.t0 + dl if self.t0 is not None else e.t)
                raise IllegalMove(f"time is up: the countdown ran out at {dl:g} s")
        if e.type == "game_started":
            raise IllegalMove("a game has only one game_started event")
        window = self.steal_window
        try:
            try:
                text = handler(e) if handler is not None else f"{e.type} (not a game event; kept)"
            except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
                # a row another program wrote with fields of the wrong shape
                # (a slot of two numbers, faces that are a number): the
                # handlers read an event's fields before changing anything,
                # so it is refused as unreadable, and replay lists it for the
                # referee rather than failing on every page of the game
                if isinstance(exc, CompanionError):
                    raise
                raise BadInput(f"its data cannot be read ({exc.__class__.__name__}: {exc})") from None
        except Exception:
            if last_call is not None:
                self.__dict__.update(last_call)      # refused: the game stays ended as it was
            raise
        if e.type in _CLOSES_STEAL and self.steal_window is window:
            self.steal_window = None
        if e.t is not None:
            self.t_last = e.t
        if e.type in UNDOABLE:
            self.actions.append(e.id)
        self._log(e, text)
        self._check_end(e)

    def _reopen(self, etype: str) -> dict:
        """Reopen a Hand Builder game that a claim or steal just ended by
        clearing the board or a stalemate, for that claimant's declaration or
        a steal of that claim (Love/Candy 2.4 Phase 3: "Match Valid: ... Check
        if the claim completes a 14-tile hand. If so, call 'Love Mahjong!'";
        Law 3).  Returns the fields to restore if the event is refused."""
        keep = ("ended", "end_reason", "end_cause", "end_t", "end_recorded", "result", "last_call",
                "steal_window")
        saved = {k: getattr(self, k) for k in keep}
        saved["result"] = copy.deepcopy(self.result)
        window = self.last_call[1] if self.last_call else None
        self.ended, self.end_reason, self.end_cause, self.end_recorded = False, None, None, False
        if etype != "meld":
            self.last_call = None         # (a meld only sorts a rack: the call stays open after it)
        self.steal_window = window if etype in ("steal", "meld") else None
        return saved

    def _log(self, e: Event, text: str, status: str = "ok") -> None:
        player = e.data.get("player") if isinstance(e.data.get("player"), str) else None
        self.entries[e.id] = _Entry(e.id, e.type, player, e.ref, text, e.data, status)
        self.last_id = max(self.last_id, e.id)

    # ---- helpers used by handlers

    def _turn_player(self, e: Event) -> PlayerState:
        p = self.player(e.data.get("player"))
        if p.seat != self.turn:
            raise IllegalMove(f"it is {self.players[self.turn].name}'s turn, not {p.name}'s")
        return p

    def _slots(self, raw, n: int | None = None) -> list[int]:
        try:
            slots = [Slot(*map(int, s)) for s in raw]
        except (TypeError, ValueError):
            raise BadInput(f"bad slots {raw!r}: expected [[x, y, z], ...]") from None
        if n is not None and len(slots) != n:
            raise BadInput(f"expected {n} slot(s), got {len(slots)}")
        idx = [self.layout.slot_index(s) for s in slots]
        if len(set(idx)) != len(idx):
            raise IllegalMove("the same tile is named twice")
        return idx

    def _faces_view(self, idx: Sequence[int], given) -> list[str | None]:
        """Faces with the event's observed faces laid over the known ones."""
        view = list(self.faces)
        if given:
            if len(given) != len(idx):
                raise BadInput(f"{len(given)} faces for {len(idx)} slots")
            for i, f in zip(idx, given):
                if f is not None:
                    self.tiles.face(f)
                    view[i] = f
        return view

    def _add(self, p: PlayerState | None, eid: int, lines: Iterable[tuple[str, int]]) -> list[str]:
        out = []
        for label, pts in lines:
            if p is None:
                self.team_lines.append((eid, label, pts))
            else:
                p.lines.append((eid, label, pts))
            out.append(f"{pts:+,} {label}")
        return out

    def _pass_turn(self) -> None:
        self.turn = (self.turn + 1) % len(self.players)
        self.chain = 0
        self.touched = []

    def _streak_key(self, p: PlayerState):
        return TEAM if self.coop else p.seat

    # ---- handlers: each validates first, then changes the state, then returns its text

    def _on_claim(self, e: Event) -> str:
        d = e.data
        ia, ib = self._slots(d.get("slots"), 2)
        board, item = self.judged_board(d.get("resolves"), (ia, ib))
        # a claim settling tiles that left the table earlier was made in its
        # own turn: the turn now is not checked, nor passed (docs/RULES.md 1.5)
        p = self._turn_player(e) if item is None else self.player(d.get("player"))
        view = self._faces_view((ia, ib), d.get("faces"))
        v = check_claim(board, view, self.tiles, self.slot(ia), self.slot(ib))
        if not v.valid:
            if v.code == NO_MATCH and item is None:   # a referee's claim the rules call an invalid attempt
                return self._invalid(p, v.reason)
            raise IllegalMove(v.reason)           # (settling tiles off the table: a pair that matched)
        if item is None and self.touched and not set(self.touched) <= {ia, ib}:
            need = ", ".join(str(self.slot(i)) for i in self.touched)
            return self._invalid(p, f"{self.touch_rule}: the pair must include {need}")
        # change
        self.faces[ia], self.faces[ib] = view[ia], view[ib]
        if item is None:
            self.board.remove(ia)
            self.board.remove(ib)
        else:                           # off the board already (they left the table)
            self._take_settled(item, (ia, ib))
        fa, fb = self.face(ia), self.face(ib)
        p.matches += 1
        if self.mode.kind == "solo":
            self.turns_used += 1
        if item is not None:            # the pair's own points: its turn's chain is not rebuilt
            lines = (self.rules.pair_lines(fa, fb, mode=self.mode, chain=1, streak=1, seat=p.seat)
                     if self.rules.scored(self.mode) else [])
            done = self._add(p, e.id, lines)
            if isinstance(self.rules, LoveRules) and fa.cls == self.rules.bonus_class:
                p.bonus += [fa.id, fb.id]
            else:
                p.rack += [fa.id, fb.id]
            return (f"{p.name} claimed {fa.name} + {fb.name} (settling #{item})"
                    + (": " + ", ".join(done) if done else ""))
        self.touched = []
        self.chain += 1
        streak = 0
        if isinstance(self.rules, MindfulRules):
            key = self._streak_key(p)
            fam, n = self.streaks.get(key, (None, 0))
            fam_now = MindfulRules.family(fa)
            streak = n + 1 if fam == fam_now else 1
            self.streaks[key] = (fam_now, streak)
        lines = []
        if self.rules.scored(self.mode):
            lines = self.rules.pair_lines(fa, fb, mode=self.mode, chain=self.chain, streak=streak, seat=p.seat)
        done = self._add(p, e.id, lines)
        if isinstance(self.rules, LoveRules):
            if fa.cls == self.rules.bonus_class:
                p.bonus += [fa.id, fb.id]
            else:
                p.rack += [fa.id, fb.id]
                if self.mode.kind == "hand" and fa.id == fb.id:
                    self.steal_window = (e.id, p.seat, fa.id)
        else:
            p.rack += [fa.id, fb.id]
        if not self.rules.extra_turn and len(self.players) > 1:
            self._pass_turn()
        return (f"{p.name} claimed {fa.name} + {fb.name}"
                + (": " + ", ".join(done) if done else ""))

    def _invalid(self, p: PlayerState, reason: str) -> str:
        p.invalid += 1
        if self.mode.kind == "solo":
            self.turns_used += 1
        self.streaks.pop(self._streak_key(p), None)
        if len(self.players) > 1:
            self._pass_turn()
        else:
            self.chain = 0
            self.touched = []
        nxt = f"; turn passes to {self.players[self.turn].name}" if len(self.players) > 1 else ""
        return f"{p.name}: invalid attempt ({reason}); the tiles are to go back{nxt}"

    def _on_invalid(self, e: Event) -> str:
        d = e.data
        p = self._turn_player(e)
        if d.get("slots"):
            self._slots(d["slots"])
        return self._invalid(p, str(d.get("reason") or "no match"))

    def _on_penalty(self, e: Event) -> str:
        d = e.data
        p = self.player(d.get("player"))
        (i,) = self._slots([d.get("slot")], 1)
        board, item = self.judged_board(d.get("resolves"), (i,), touch=True)
        r = board.reason(i)
        if not r.present:
            raise IllegalMove(f"penalty for {r.slot}: it holds no tile")
        if r.free:
            raise IllegalMove(f"penalty for {r.slot}: that tile is free")
        if item is not None and i in self.off_table[item][0]:
            self._settle_off_table(item, (i,))     # its one penalty: not a second
        p.penalties += 1
        pts = self.rules.blocked_penalty
        done = self._add(p, e.id, [("blocked tile touched", pts)]) if pts else []
        # the line the phones show: why in plain words; the engine's sentence
        # with every neighbour's coordinates stays in the event's "reason"
        return (f"{p.name} touched blocked tile {r.slot} ({r.plain()})"
                + (": " + ", ".join(done) if done else ": recorded, no points in this game"))

    def _on_touch(self, e: Event) -> str:
        p = self._turn_player(e)
        (i,) = self._slots([e.data.get("slot")], 1)
        r = self.board.reason(i)
        if not r.present:
            raise IllegalMove(f"{r.slot} holds no tile")
        if not r.free:
            raise IllegalMove(f"{r.describe()} (a blocked touch is a penalty)")
        if not self.touch_binds:
            return f"{p.name} touched {r.slot} (recorded; in {self.mode.title} a touch binds nothing)"
        if i not in self.touched:
            if len(self.touched) >= 2:
                raise IllegalMove("two tiles are already touched this turn")
            self.touched.append(i)
        if isinstance(self.rules, MindfulRules):
            if len(self.touched) < 2:
                return (f"{p.name} touched {r.slot}: the next tile touched makes the match attempt with it "
                        "(two-touch commitment)")
            a, b = (self.slot(j) for j in self.touched)
            fa, fb = (self.faces[j] for j in self.touched)
            # Mindful 2.9: "touching two free tiles counts as declaring a
            # match attempt; if valid, those tiles must be removed" (a rules
            # audit, session 50: a pair that did not match read "must be
            # removed" too)
            if fa is not None and fb is not None and not self.tiles.matches(fa, fb):
                return (f"{p.name} touched {r.slot}: {a} + {b} is the match attempt, and they do not match "
                        "(two-touch commitment)")
            if fa is None or fb is None:
                return (f"{p.name} touched {r.slot}: {a} + {b} is the match attempt; if they match they must be "
                        "removed (two-touch commitment)")
            return f"{p.name} touched {r.slot}: {a} + {b} must be removed (two-touch commitment)"
        return f"{p.name} touched {r.slot}: it must be part of the next pair (touch is claimed)"

    def _on_pass(self, e: Event) -> str:
        p = self._turn_player(e)
        if self.touched:
            need = ", ".join(str(self.slot(i)) for i in self.touched)
            raise IllegalMove(f"{self.touch_rule}: {p.name} touched {need}, so the turn's next pair must include "
                              f"{'it' if len(self.touched) == 1 else 'them'}; claim before passing "
                              f"(a pair that does not match is an invalid attempt and ends the turn)")
        if len(self.players) > 1:
            self._pass_turn()
        else:
            self.chain = 0
            self.touched = []
        return f"{p.name} passes" + (f"; {self.players[self.turn].name} to play" if len(self.players) > 1 else "")

    def _on_word(self, e: Event) -> str:
        if not isinstance(self.rules, WordRules):
            raise IllegalMove(f"words are played in Word Mahjong only, not {self.rules.title}")
        d = e.data
        idx = self._slots(d.get("slots"))
        # a word settling tiles that left the table is judged where they
        # stood, in its own turn (docs/RULES.md 1.5), as a settled claim is
        board, item = self.judged_board(d.get("resolves"), idx)
        p = self._turn_player(e) if item is None else self.player(d.get("player"))
        view = self._faces_view(idx, d.get("faces"))
        for i in idx:
            r = board.reason(i)
            if not r.present:
                raise IllegalMove(f"{r.slot} holds no tile")
            if not r.free:
                raise IllegalMove(r.describe())
        faces = [view[i] for i in idx]
        if any(f is None for f in faces):
            raise BadInput("the face of a tile in the word is not known")
        word = wordrules.normalize(str(d.get("word", "")))
        if self.words is not None:
            wordrules.check_word(word, faces, self.words)
        else:
            wordrules.spell(word, faces)
        for i in idx:
            self.faces[i] = view[i]
        if item is None:
            for i in sorted(idx, key=lambda k: -self.slot(k).z):     # upper layers first
                self.board.remove(i)
            self.touched = []
        else:                           # off the board already (they left the table)
            self._take_settled(item, idx)
        p.words.append(word)
        p.matches += 1
        lines = []
        if self.rules.scored(self.mode):
            lines = self.rules.word_lines(word, [self.tiles.face(f) for f in faces])
        done = self._add(p, e.id, lines)
        return f"{p.name} spelled {word}" + (": " + ", ".join(done) if done else "")

    def _hand_mode(self, what: str) -> None:
        if self.mode.kind != "hand":
            hand = [m.title for m in self.rules.modes if m.kind == "hand"]
            if hand:
                raise IllegalMove(f"{what} belongs to {hand[0]} only, not {self.mode.title}")
            # (Mindful and Word Mahjong have no hand building: RULES.md 2.2)
            raise IllegalMove(f"{what} belongs to the Hand Builder of Love and Candy Mahjong only, "
                              f"not {self.rules.title}")

    def stealers(self) -> list["PlayerState"]:
        """Opponents of the claimant who could call "Passion Pong!" /
        "Sugar Pong!" on the claim that opened the steal window now (two
        loose tiles of its face on their rack; Love/Candy Law 3), also when
        that claim ended the game (its last call, docs/RULES.md 2.3); empty
        when no window is open."""
        window = self.open_steal_window()
        if window is None:
            return []
        _, seat, face = window
        return [q for q in self.players if q.seat != seat and Counter(q.rack)[face] >= 2]

    def open_steal_window(self) -> tuple[int, int, str] | None:
        """``(claim id, claimer seat, face)`` of the claim a steal may follow
        now: the open window, or the last call's when that claim ended the
        game; None otherwise."""
        if self.steal_window is not None:
            return self.steal_window
        if self.ended and self.last_call is not None:
            return self.last_call[1]
        return None

    def _on_meld(self, e: Event) -> str:
        self._hand_mode("laying melds")
        d = e.data
        p = self.player(d.get("player"))
        kind = d.get("kind")
        faces = [str(f) for f in d.get("faces") or []]
        check_meld(self.tiles, kind, faces)
        have = Counter(p.rack)
        if any(have[f] < n for f, n in Counter(faces).items()):
            raise IllegalMove(f"{p.name}'s rack does not hold {', '.join(faces)} loose")
        if self.steal_window is not None and self.steal_window[1] == p.seat and self.steal_window[2] in faces \
                and have[self.steal_window[2]] - faces.count(self.steal_window[2]) < 1:
            # the claimed tile stays loose while an opponent may still steal
            # it (Law 3): a meld laid first took away the steal the book gives
            who = self.stealers()
            if who:
                raise IllegalMove(f"{p.name} cannot lay {self.tiles.face(self.steal_window[2]).name} into a meld yet: "
                                  f"{' or '.join(q.name for q in who)} may still call \"{self.rules.steal_call}\" "
                                  "on it (lay the meld once that chance has passed)")
        for f in faces:
            p.rack.remove(f)
        p.melds.append((kind, tuple(faces)))
        pts = self.rules.meld_points(kind, [self.tiles.face(f) for f in faces], p.seat)
        done = self._add(p, e.id, [(f"completed {kind}", pts)])
        return f"{p.name} laid a {kind} of {', '.join(self.tiles.face(f).name for f in faces)}: {', '.join(done)}"

    def _on_steal(self, e: Event) -> str:
        self._hand_mode("stealing")
        d = e.data
        p = self.player(d.get("player"))
        call = self.rules.steal_call
        if self.steal_window is None:
            raise IllegalMove(f"no claim to steal from: {call} must follow an opponent's pair claim at once")
        _, seat, face = self.steal_window
        victim = self.players[seat]
        if d.get("from") not in (None, victim.name):
            raise IllegalMove(f"the last pair was claimed by {victim.name}, not {d.get('from')}")
        if p.seat == seat:
            raise IllegalMove(f"{p.name} cannot steal from their own claim")
        if Counter(p.rack)[face] < 2:
            raise IllegalMove(f"{p.name}'s rack holds no exposed pair of {self.tiles.face(face).name}")
        if face not in victim.rack:
            raise IllegalMove(f"{victim.name}'s rack no longer holds {self.tiles.face(face).name} loose")
        victim.rack.remove(face)
        p.rack.remove(face)
        p.rack.remove(face)
        p.melds.append(("pong", (face, face, face)))
        pts = self.rules.pong_points(self.tiles.face(face), p.seat)
        done = self._add(p, e.id, [("completed pong (steal)", pts)])
        self.steal_window = None
        self.turn = p.seat
        self.chain = 0
        self.touched = []
        return (f"{p.name}: \"{call}\" steals {self.tiles.face(face).name} from {victim.name}: "
                f"{', '.join(done)}; {p.name} takes the next turn")

    def _on_declare(self, e: Event) -> str:
        self._hand_mode("declaring a hand")
        p = self._turn_player(e)
        # Phase 3: "Match Valid: ... Check if the claim completes a 14-tile
        # hand. If so, call ..." - the call follows the declarer's claim (or
        # the steal that gave them the turn); melds laid since only sort the
        # rack, and a blocked-tile penalty ends no turn (docs/RULES.md 1.2, 2.4)
        last = next((self.entries[a] for a in reversed(self.actions)
                     if self.entries[a].type not in ("meld", "penalty") and self.entries[a].status == "ok"), None)
        if last is None or last.type not in ("claim", "steal") or last.player != p.name:
            what = f"#{last.id} {last.type}" + (f" by {last.player}" if last.player and last.player != p.name else "") \
                if last is not None else "no claim yet"
            raise IllegalMove(f"\"{self.rules.mahjong_call}\" is called right after the claim or steal that "
                              f"completes the hand (Phase 3); the last move is {what}")
        hand = find_hand(self, p)
        if hand is None:
            raise IllegalMove(f"{p.name}'s rack does not hold 4 melds and a pair (14 tiles)")
        new_melds, used_declared, pair = hand
        rules: LoveRules = self.rules  # type: ignore[assignment]
        lines: list[tuple[str, int]] = []
        for kind, faces in new_melds:
            lines.append((f"completed {kind}", rules.meld_points(kind, [self.tiles.face(f) for f in faces], p.seat)))
        lines.append(("hand completion", rules.win_bonus))
        all4 = [(k, [self.tiles.face(f) for f in fs]) for k, fs in list(used_declared) + list(new_melds)]
        pay = rules.hand_payment(all4, self.tiles.face(pair), p.seat)
        for kind, faces in new_melds:
            for f in faces:
                p.rack.remove(f)
            p.melds.append((kind, tuple(faces)))
        opponents = [q for q in self.players if q is not p]
        lines.append((f"hand difficulty payment {pay:,} x {len(opponents)}", pay * len(opponents)))
        done = self._add(p, e.id, lines)
        for q in opponents:
            self._add(q, e.id, [(f"pays {p.name} for the hand", -pay)])
        self.declarer = p.seat
        self._end("declared", e.id, e.t)
        self.result["hand"] = {"player": p.name, "melds": [{"kind": k, "faces": list(fs)} for k, fs in
                                                           list(used_declared) + list(new_melds)],
                               "pair": [pair, pair], "payment": pay}
        paid = "; ".join(f"{q.name} pays {pay:,}" for q in opponents)
        return f"{p.name}: \"{rules.mahjong_call}\" {', '.join(done)}" + (f"; {paid}" if paid else "")

    def _on_hint(self, e: Event) -> str:
        p = self.player(e.data.get("player"))
        if self.mode.kind == "duel":
            p = self._turn_player(e)      # a hint shows the asker's next pair: on their own turn (RULES.md 3.2)
        if isinstance(self.rules, MindfulRules):
            if p.focus_tokens <= 0:
                raise IllegalMove(f"{p.name} has no Zen Focus token left")
            p.focus_tokens -= 1
        elif isinstance(self.rules, WordRules):
            if not self._booster_left(p, "hints"):
                raise IllegalMove("no Wisdom Lantern left in this game")
        else:
            raise IllegalMove(f"{self.rules.title} has no hints")
        p.hints += 1
        return f"{p.name} asked for a hint: {describe_hint(self, e.data)}"

    def _on_reshuffle(self, e: Event) -> str:
        d = e.data
        p = self.player(d.get("player"))
        auto = d.get("source") == "auto"
        if isinstance(self.rules, MindfulRules):
            if not self.stuck():
                raise IllegalMove("a Zen Reshuffle is allowed only when no free match is left (Law 4)")
            allowed = int(self.setup.options.get("reshuffles", 0))
            if self.reshuffles >= allowed:
                raise IllegalMove(f"no Zen Reshuffle left ({allowed} at this difficulty)")
            if p.focus_tokens <= 0:
                raise IllegalMove(f"{p.name} has no Zen Focus token left")
        elif isinstance(self.rules, WordRules):
            if not auto and not self._booster_left(p, "reshuffles"):
                raise IllegalMove("no Lexicon Fan left in this game")
            if auto and self.mode.kind != "endless":
                raise IllegalMove("automatic reshuffles belong to Zen Archives only")
        else:
            raise IllegalMove(f"{self.rules.title} has no reshuffle")
        new = d.get("faces")
        if not isinstance(new, list) or len(new) != len(self.faces):
            raise BadInput(f"reshuffle: faces must list one face per slot ({len(self.faces)})")
        present = self.board.present
        before = Counter(self.faces[i] for i in range(len(present)) if present[i])
        after = Counter(new[i] for i in range(len(present)) if present[i])
        # faces not known (None: a camera game's covered or unsure tiles) may
        # be any tiles: the known faces need only be the same tiles as far as
        # the unknown ones allow (a camera sees the top faces of a re-laid
        # board, not the faces it laid under them)
        unknown_before = before.pop(None, 0)
        after.pop(None, 0)
        if sum((after - before).values()) > unknown_before:
            raise IllegalMove("reshuffle: the new faces are not the tiles on the board")
        for i in range(len(present)):
            if present[i]:
                self.faces[i] = new[i]
        self.touched = []
        if isinstance(self.rules, MindfulRules):
            p.focus_tokens -= 1
        if not auto:
            p.reshuffles += 1
        self.reshuffles += 1
        what = "automatic reshuffle" if auto else "reshuffle"
        return f"{p.name}: {what} of the {self.board.n_present} tiles left"

    def _on_undo(self, e: Event) -> str:
        # The target dropped out of the effective events already; here the use is counted.
        name = e.data.get("player")
        if isinstance(self.rules, WordRules):
            p = self.player(name) if name else self.players[0]
            p.undos += 1
            return f"{p.name} used the Ink Eraser: event #{e.ref} is undone"
        return f"{name or 'the referee'} undid event #{e.ref}"

    def _on_correction(self, e: Event) -> str:
        d = e.data
        why = f" ({d['reason']})" if d.get("reason") else ""
        if d.get("void"):
            return f"referee voided event #{e.ref}{why}"
        changes = d.get("changes") or {}
        if e.ref in self.off_table and changes.get("resolved") is True:
            self.off_table_closed.add(e.ref)      # settled: its tiles no longer hold the game open
        if changes.get("resolved") is True and "decision" in changes:
            # a referee item settled (session.settle): said as the table says
            # it, not field by field ("decision claim; resolved true", a
            # break-test of the phones' page, session 50)
            dec = changes.get("decision")
            how = " with no move" if dec in (None, "none") else f" as a {dec}"
            rest = "; ".join(self._change_words(k, v) for k, v in changes.items() if k not in ("resolved", "decision"))
            return f"referee settled item #{e.ref}{how}" + (f": {rest}" if rest else "") + why
        keys = "; ".join(self._change_words(k, v) for k, v in changes.items())
        return f"referee corrected event #{e.ref}: {keys}{why}"

    def _change_words(self, key: str, value) -> str:
        return change_words(key, value, self.tiles)

    def _on_needs_referee(self, e: Event) -> str:
        """A question for the referee.  ``off_table`` (optional) lists tiles
        the camera saw leave the table for good with no move it could
        decide: they leave the board at once, so that the free rule reads the
        table as it is, whether or not the item is settled (docs/RULES.md
        "Tiles off the table"); a claim or penalty that settles the item is
        judged on the board as it stood just before they left
        (:meth:`judged_board`).  Slots no longer on the board are passed over.

        ``pair_move`` true: the item is one player's pair move whose outcome
        the camera could not judge (two tiles of one turn kept off the
        board, faces read too unsurely to tell a match).  Where a valid
        claim passes the turn (no extra turn, two or more players) and an
        invalid attempt does too (Mindful Mahjong, "Harmony Duels": each
        pair move ends the turn; every rule book: an invalid attempt passes
        it), the item passes the turn, settled or not; a claim that settles
        it (``resolves``) passes no turn again (docs/RULES.md 1.5).  Where a
        valid match keeps the turn (Love and Candy Law 2, Word Mahjong), the
        turn stays: the referee's decision says which.

        Raises:
            BadInput: ``off_table`` not a list of slots of the layout;
            ``pair_move`` not a boolean.
            IllegalMove: a slot named twice.
        """
        d = e.data
        off = d.get("off_table")
        pair_move = d.get("pair_move", False)
        if not isinstance(pair_move, bool):
            raise BadInput(f"pair_move must be true or false, not {pair_move!r}")
        text = ""
        if off is not None:
            if not isinstance(off, list):
                raise BadInput("off_table must be a list of slots [[x, y, z], ...]")
            idx = [i for i in self._slots(off) if self.board.present[i]]
            if idx:
                self.off_table[e.id] = (idx, self.board.copy())
                for i in idx:
                    self.board.remove(i)
                names = ", ".join(str(self.slot(i)) for i in idx)
                text = f"; {names} left the table: off the board (settle the item to score it)"
        if pair_move and not self.rules.extra_turn and len(self.players) > 1:
            self._pass_turn()
            text += f"; a pair move either way: turn passes to {self.players[self.turn].name}"
        if not d.get("resolved"):
            self.needs[e.id] = {"id": e.id, "reason": d.get("reason"), "evidence": d.get("evidence"),
                                "player": d.get("player"), "rejected": False}
        return f"needs the referee: {d.get('reason') or 'unclear'}{text}"

    def judged_board(self, resolves, idx: Sequence[int], touch: bool = False) -> tuple[Board, int | None]:
        """The board on which a claim or penalty naming slot indices ``idx``
        is judged, and the referee item whose off-table tiles it settles.

        A move that settles (``resolves``) a referee item with ``off_table``
        tiles, naming only tiles of it still unsettled, is judged on the
        board as it stood just before they left the table; so is a claim or
        word naming some of them and tiles that still stand on the board
        (the camera never saw those leave: a claim's second tile behind a
        taller stack, docs/RULES.md 1.5); every other move,
        and every move once a correction has closed the item, on the board
        as it is (the item None).  A penalty (``touch``) that
        settles such an item is judged on that earlier board whichever tile it
        names (the tiles that left may have been what blocked it).

        Raises:
            IllegalMove: a move settling such an item names a tile of it and
            a tile that is neither off the table with it nor on the board.
        """
        item = self.off_table.get(resolves) if isinstance(resolves, int) and not isinstance(resolves, bool) \
            and resolves not in self.off_table_closed else None
        if item is not None and idx:
            off = set(item[0])
            if touch or set(idx) <= off:
                return item[1], resolves
            if off & set(idx):
                gone = [i for i in idx if i not in off and not self.board.present[i]]
                if gone:
                    raise IllegalMove(f"slot {self.slot(gone[0])} holds no tile")
                return item[1], resolves
        return self.board, None

    def _take_settled(self, item: int, idx: Sequence[int]) -> None:
        """A claim's or word's tiles ``idx`` that settle referee item
        ``item`` leave: those off the table already are settled
        (:meth:`_settle_off_table`), those still standing leave the board
        (upper layers first)."""
        off = set(self.off_table[item][0])
        self._settle_off_table(item, [i for i in idx if i in off])
        for i in sorted((i for i in idx if i not in off), key=lambda k: -self.slot(k).z):
            self.board.remove(i)
        # a touch binding a tile the move took is met: the tile is gone
        self.touched = [t for t in self.touched if t not in set(idx)]

    def _settle_off_table(self, item: int, idx: Sequence[int]) -> None:
        """Mark off-table tiles of ``item`` as settled by a move (they stay off the board)."""
        left = [i for i in self.off_table[item][0] if i not in set(idx)]
        if left:
            self.off_table[item] = (left, self.off_table[item][1])
        else:
            del self.off_table[item]

    def _on_tiles_back(self, e: Event) -> str:
        """Tiles of referee item ``item``'s ``off_table`` put back on their
        slots, seen by the camera after the item was written (a refused
        move's tiles sent back late, docs/RULES.md 1.5 "A move the rules
        refuse whose tiles stay off the table"): they stand on the board
        again from this event on, the moves between keeping the board they
        were judged on (where voiding the item would put the tiles back
        from its start, and could refuse a move their absence made
        possible).  No move, no turn.  Once every tile of the item is back,
        the item needs nothing more.

        Raises:
            IllegalMove: the item holds no tiles off the table (none, settled
            or closed), or a slot is not one of its tiles still off.
            BadInput: slots malformed.
        """
        d = e.data
        item = d.get("item")
        if not isinstance(item, int) or isinstance(item, bool) or item not in self.off_table \
                or item in self.off_table_closed:
            raise IllegalMove(f"item #{item} holds no tiles off the table")
        idx = self._slots(d.get("slots"))
        if not idx:
            raise BadInput("tiles_back needs the slots put back")
        off = self.off_table[item][0]
        stray = [i for i in idx if i not in off or self.board.present[i]]
        if stray:
            raise IllegalMove(f"{self.slot(stray[0])} is not a tile of item #{item} still off the table")
        for i in sorted(idx, key=lambda k: self.slot(k).z):
            self.board.restore(i)
        left = [i for i in off if i not in set(idx)]
        names = ", ".join(str(self.slot(i)) for i in idx)
        if left:
            self.off_table[item] = (left, self.off_table[item][1])
            return f"{names} put back on the table: on the board again (item #{item})"
        del self.off_table[item]
        self.needs.pop(item, None)
        self.tiles_back_items.add(item)
        return f"{names} put back on the table: on the board again; item #{item} needs nothing more"

    def _on_faces_seen(self, e: Event) -> str:
        """Faces read on standing tiles (the camera referee writes them for
        tiles the ledger knew no face for; a face it knew is replaced, as a
        claim's read faces replace the known ones, and the text says so).

        Raises:
            BadInput: slots or faces missing, of different lengths, a face not
                of the set; IllegalMove: a slot twice or holding no tile.
        """
        d = e.data
        faces = d.get("faces")
        if not isinstance(faces, list) or not faces or not all(isinstance(f, str) for f in faces):
            raise BadInput("faces_seen needs a list of face ids (faces)")
        idx = self._slots(d.get("slots") if isinstance(d.get("slots"), list) else [], len(faces))
        names = []
        for i, f in zip(idx, faces):
            face = self.tiles.face(f)
            if not self.board.present[i]:
                raise IllegalMove(f"{self.slot(i)} holds no tile")
            old = self.faces[i]
            was = f" (was {self.tiles.face(old).name})" if old is not None and old != f else ""
            names.append(f"{self.slot(i)} {face.name}{was}")
        for i, f in zip(idx, faces):
            self.faces[i] = f
        shown = names if len(names) <= 6 else names[:5] + [f"{len(names) - 5} more"]
        return "faces seen: " + ", ".join(shown)

    def _on_game_ended(self, e: Event) -> str:
        d = e.data
        reason = str(d.get("reason") or "abandoned")
        if self.ended:
            self.end_recorded = True
            return f"game over: {self.end_reason}" + "".join(f"; {t}" for t in self.end_text)
        if reason == "time-up":
            dl = self.deadline()
            rt = self.rel_t(e.t)
            if dl is None:
                raise IllegalMove("only Word Sprint has a countdown")
            if rt is not None and rt < dl:
                raise IllegalMove(f"the countdown has {math.ceil(dl - rt)} s left")
        elif reason in ("no-moves", "stalemate"):
            unseen = sum(self.faces[i] is None for i in self.board.free_indices())
            if unseen:
                raise IllegalMove(f"the faces of {unseen} free tile{'s' if unseen > 1 else ''} are not known, so "
                                  "the board cannot show that no move remains: end the game as abandoned")
            if not self.stuck() and not isinstance(self.rules, WordRules):
                raise IllegalMove("free matching pairs remain")
            if isinstance(self.rules, WordRules) and self.free_pairs():
                raise IllegalMove("free matching pairs remain")
            if isinstance(self.rules, MindfulRules) and self.reshuffle_allowed() and self.reshuffle_can_help():
                # 2.8 Grid Stagnation: "No legal free matches remain on the
                # board and all Zen Reshuffle tokens have been used"
                raise IllegalMove(f"a Zen Reshuffle is still allowed ({self._reshuffles_left()}): reshuffle, "
                                  "or end the game as abandoned")
        elif reason != "abandoned":
            raise IllegalMove(f"the board does not show a game ended by {reason}")
        end_t = e.t
        if reason == "time-up" and self.t0 is not None and e.t is not None:
            end_t = min(e.t, self.t0 + self.deadline())      # the countdown's end, not the command's time
        self._end(reason, e.id, end_t)
        self.end_recorded = True
        return f"game over: {reason}" + "".join(f"; {t}" for t in self.end_text)

    # ------------------------------------------------------------------ end of game

    def off_table_pending(self) -> bool:
        """Whether tiles that left the table wait for the referee: an item
        with ``off_table`` tiles no move has settled and no correction has
        closed.  The game does not end meanwhile (cleared, stalemate, turn
        limit): the pair the referee may yet award counts."""
        return any(k not in self.off_table_closed for k in self.off_table)

    def _check_end(self, e: Event) -> None:
        if self.ended or self.off_table_pending():
            return
        window = self.steal_window
        if self.board.n_present == 0:
            self._end("cleared", e.id, e.t)
        elif self.mode.kind == "solo" and self.turns_used >= int(self.setup.options.get("turn_limit", 0) or 0):
            self._end("turn-limit", e.id, e.t)
        elif isinstance(self.rules, LoveRules) and self.stuck():
            self._end("stalemate", e.id, e.t)
        if self.ended and self.mode.kind == "hand" and e.type in ("claim", "steal"):
            self.last_call = (e.id, window)
        elif self.ended and self.mode.kind == "hand" and e.type in QUIET_TYPES and self.actions \
                and self.entries[self.actions[-1]].type in ("claim", "steal"):
            # the faces a claim uncovered showed the board stuck: the claim
            # ended the game, and its claimant may still declare (2.4 Phase 3)
            self.last_call = (self.actions[-1], window)
        elif isinstance(self.rules, MindfulRules) and self.stuck() and (
                not self.reshuffle_allowed() or not self.reshuffle_can_help()):
            self._end("stalemate", e.id, e.t)

    def _end(self, reason: str, cause: int | None, t: float | None) -> None:
        self.ended = True
        self.end_reason = reason
        self.end_cause = cause
        self.end_t = t if t is not None else self.t_last
        self.chain = 0
        self.touched = []
        self.steal_window = None
        left = self.board.n_present
        total = len(self.layout)
        cleared = left == 0
        res: dict = {"reason": reason, "tiles_left": left}
        rules = self.rules
        said: list[str] = []

        def add(tgt: PlayerState | None, key, lines) -> None:
            # the end's points, also said on the game_ended line: the
            # ledger's and the export's lines then add up to the scores (a
            # rules audit found a duel's rows 3,000 short of the score)
            done = self._add(tgt, key, lines)
            said.append(f"{tgt.name if tgt is not None else 'the team'} {', '.join(done)}")

        if reason == "abandoned":
            # no book ends a game by abandoning it: none of their end scoring
            # (token bonus, flawless clear, stagnation penalty, quills, stars)
            # applies, and nobody wins (docs/RULES.md 1.3)
            self.result = res
            self.end_text = ()
            return
        if isinstance(rules, MindfulRules):
            key = cause
            targets: list[PlayerState | None] = [None] if self.coop else list(self.players)
            for p in self.players:
                if p.focus_tokens:
                    add(None if self.coop else p, key,
                        [(f"unused Zen Focus tokens x{p.focus_tokens}" + (f" ({p.name}'s)" if self.coop else ""),
                          rules.token_bonus * p.focus_tokens)])
            for tgt in targets:
                if cleared and self.reshuffles == 0:
                    add(tgt, key, [("flawless board clear", rules.flawless_bonus)])
                if not cleared and reason in ("stalemate", "no-moves"):
                    add(tgt, key, [(f"unmatched tiles x{left}", rules.tile_penalty * left)])
        elif isinstance(rules, WordRules) and rules.scored(self.mode):
            p = self.players[0]
            rt = self.rel_t(self.end_t)
            secs = int(math.floor(rt)) if rt is not None and rt > 0 else 0
            boosters = p.hints + p.reshuffles + p.undos
            if cleared:
                add(p, cause, rules.settlement_lines(
                    base_points=int(self.setup.options.get("base_points", 0)), focus_seconds=secs,
                    hints=p.hints, reshuffles=p.reshuffles, tiles=total))
            res.update(focus_seconds=secs, boosters=boosters, quills=rules.quills(
                cleared=cleared, focus_seconds=secs, target=int(self.setup.options.get("target_seconds", 0)),
                boosters=boosters, longest_word=max((len(w) for w in p.words), default=0)))
        if self.mode.kind == "solo":
            res["stars"] = solo_stars((total - left) / total, cleared)
            res["turns_used"] = self.turns_used
        self.result = res
        self.end_text = tuple(said)

    def winners(self) -> list[str]:
        """The winner(s) once the game has ended (several on a tie; ``["team"]``
        for a cooperative game cleared without a Zen Reshuffle); empty while it
        goes on, after an abandoned game, or when nobody wins (a solo game not cleared, a cooperative
        game not cleared or cleared only after a reshuffle)."""
        if not self.ended or self.end_reason == "abandoned":
            return []
        if self.declarer is not None:
            return [self.players[self.declarer].name]
        if self.coop:           # Mindful 2.6.2: "clear the entire board without requiring a single Zen Reshuffle"
            return [TEAM] if self.board.n_present == 0 and self.reshuffles == 0 else []
        if len(self.players) == 1 or isinstance(self.rules, WordRules):
            # Word 2.8: "Layout Mastered (Victory Condition)" is the one
            # victory, "No Playable Moves (Defeat Condition)" a defeat, for
            # the scholars sharing a Zen Archives board too (all named
            # winners of a defeat before: tied at no score)
            return [p.name for p in self.players] if self.board.n_present == 0 else []
        sc = self.scores()
        best = max(sc.values())
        return [n for n, s in sc.items() if s == best]


# --------------------------------------------------------------------------- melds and hands


def check_meld(ts: TileSet, kind: str | None, faces: Sequence[str]) -> None:
    """Check three face ids form a pong (3 identical) or a chow (3 consecutive
    numbers of one suit).  Love/Candy 2.1 Law 3.

    Raises:
        BadInput: not three faces, unknown kind or face.  IllegalMove: not a meld.
    """
    if kind not in ("pong", "chow"):
        raise BadInput(f"unknown meld kind {kind!r} (expected pong or chow)")
    if len(faces) != 3:
        raise BadInput(f"a meld is 3 tiles, got {len(faces)}")
    fs = [ts.face(f) for f in faces]
    if kind == "pong":
        if len({f.id for f in fs}) != 1 or fs[0].copies < 3:
            raise IllegalMove(f"not a pong: {', '.join(faces)} are not 3 identical tiles")
        return
    if any(f.rank is None for f in fs) or len({f.suit for f in fs}) != 1:
        raise IllegalMove(f"not a chow: {', '.join(faces)} are not numbered tiles of one suit")
    ranks = sorted(f.rank for f in fs)
    if ranks != list(range(ranks[0], ranks[0] + 3)):
        raise IllegalMove(f"not a chow: {', '.join(faces)} are not 3 consecutive numbers")


def find_hand(state: GameState, p: PlayerState):
    """The best 14-tile hand (4 melds + 1 pair) in ``p``'s rack, or None.

    Laid melds count first (the four worth most); the rest come from loose
    tiles.  Among several ways, the one paying most wins.

    Returns:
        ``(new_melds, used_laid_melds, pair_face)``: melds formed from loose
        tiles as ``(kind, faces)``, the laid melds used, and the pair's face.
    """
    rules: LoveRules = state.rules  # type: ignore[assignment]
    ts = state.tiles

    def value(kind: str, faces: Sequence[str]) -> int:
        return rules.meld_points(kind, [ts.face(f) for f in faces], p.seat)

    laid = sorted(p.melds, key=lambda m: -value(*m))[:4]
    need = 4 - len(laid)
    counts = Counter(p.rack)
    cands: list[tuple[str, tuple[str, ...]]] = []
    for f, n in sorted(counts.items()):
        if n >= 3 and ts.face(f).copies >= 3:
            cands.append(("pong", (f, f, f)))
    by_suit: dict[str, dict[int, str]] = {}
    for f in counts:
        face = ts.face(f)
        if face.rank is not None:
            by_suit.setdefault(face.suit, {})[face.rank] = f
    for suit, ranks in sorted(by_suit.items()):
        for r in range(1, 8):
            if all(r + k in ranks for k in range(3)):
                cands.append(("chow", tuple(ranks[r + k] for k in range(3))))
    best = None
    for combo in combinations_with_replacement(range(len(cands)), need):
        c = Counter(counts)
        ok = True
        for k in combo:
            for f in cands[k][1]:
                c[f] -= 1
                if c[f] < 0:
                    ok = False
        if not ok:
            continue
        for f in sorted(c):
            if c[f] >= 2 and ts.face(f).copies >= 2:
                melds = [cands[k] for k in combo]
                pay = sum(value(*m) for m in melds + laid) + rules.pair_values[ts.face(f).cls]
                if best is None or pay > best[0]:
                    best = (pay, melds, f)
    if best is None:
        return None
    return best[1], laid, best[2]


# --------------------------------------------------------------------------- replay


def as_event(e) -> Event:
    """An :class:`Event` from an Event-like object or a mapping."""
    if isinstance(e, Event):
        return e
    if isinstance(e, Mapping):
        return Event.from_json(e)
    return Event(int(e.id), str(e.game_id), str(e.type), dict(e.data or {}), e.ref, e.t)


def effective_events(events: Iterable) -> tuple[list[Event], dict[int, str]]:
    """The events that count, in id order, with corrections laid over their
    targets, and a status per event id: ``"ok"``, ``"voided"`` (undone, voided,
    or caused by such an event) or ``"corrected"``.

    An undo or a ``void`` correction drops its target; a later void of the undo
    itself brings the target back (meta events are read newest first).

    The correction that closed a referee item with ``off_table`` tiles after
    the claims, words or penalty settling it (``resolves``) lapses, as
    voided, while any such move before it does not count (undone or voided):
    the item is open again and the tiles of that move wait off the table
    (docs/RULES.md 1.5 "Tiles off the table").
    """
    evs = sorted((as_event(e) for e in events), key=lambda e: e.id)
    out, status = _effective(evs, set())
    lapsed = _lapsed_settlements(evs, status)
    return _effective(evs, lapsed) if lapsed else (out, status)


def _lapsed_settlements(evs: Sequence[Event], status: Mapping[int, str]) -> set[int]:
    """Ids of live corrections that closed an off-table referee item with a
    ``claim``, ``penalty`` or ``word`` decision one of whose settling moves no longer counts
    (see :func:`effective_events`).  ``evs`` in id order."""
    off_items = {e.id for e in evs if e.type in NEEDS_REFEREE and e.data.get("off_table")}
    out: set[int] = set()
    if not off_items:
        return out
    moves: dict[int, list[int]] = {}    # item -> ids of the moves settling it since its last correction
    for e in evs:
        r = e.data.get("resolves")
        if e.type != "correction" and isinstance(r, int) and not isinstance(r, bool) and r in off_items:
            moves.setdefault(r, []).append(e.id)
        elif e.type == "correction" and e.ref in off_items and status.get(e.id) != "voided":
            ch = _changes_of(e)
            # any of them taken back (an item of six tiles settled as two
            # words, the first voided): its tiles wait again
            if ch.get("resolved") is True and ch.get("decision") in ("claim", "penalty", "word") \
                    and any(status.get(m) == "voided" for m in moves.get(e.ref, ())):
                out.add(e.id)
            moves.pop(e.ref, None)      # the next correction closes the moves made after this one
    return out


def _changes_of(correction: Event) -> dict:
    """A correction's ``changes`` as a new dict; {} when the row holds none
    or something that is not a JSON object (a row another program wrote:
    it changes nothing, rather than stopping every replay of the game)."""
    ch = correction.data.get("changes")
    return dict(ch) if isinstance(ch, Mapping) else {}


def _effective(evs: Sequence[Event], lapsed: set[int]) -> tuple[list[Event], dict[int, str]]:
    """:func:`effective_events` over ``evs`` (in id order), the corrections
    ``lapsed`` counted as voided."""
    voided: set[int] = set(lapsed)
    changes: dict[int, list[Event]] = {}
    for e in reversed(evs):
        if e.id in voided or e.ref is None:
            continue
        if e.type == "undo" or (e.type == "correction" and e.data.get("void")):
            voided.add(e.ref)
        elif e.type == "correction":
            changes.setdefault(e.ref, []).append(e)
    status: dict[int, str] = {}
    out: list[Event] = []
    for e in evs:
        cause = e.data.get("cause")
        if e.id in voided or (isinstance(cause, int) and cause in voided):
            voided.add(e.id)
            status[e.id] = "voided"
            continue
        fixes = sorted(changes.get(e.id, ()), key=lambda c: c.id)
        if fixes:
            data = dict(e.data)
            etype = e.type
            for c in fixes:
                new = _changes_of(c)
                if new.get("type") in RETYPABLE and etype in RETYPABLE:
                    etype = new.pop("type")
                new.pop("type", None)
                if "slots" in new and "faces" not in new:
                    new = _faces_follow_slots(data, new)    # a move's faces go with its tiles
                data.update(new)
            e = Event(e.id, e.game_id, etype, data, e.ref, e.t)
            status[e.id] = "corrected"
        else:
            status[e.id] = "ok"
        out.append(e)
    return out, status


def replay(events: Iterable, deal_lookup: Callable | None = None,
           words: frozenset[str] | None = None) -> GameState:
    """Derive a game's state from its events (one game's, any order).

    Args:
        events: the game's events (:class:`Event` or mappings).
        deal_lookup: see :meth:`Setup.from_data`.
        words: the Word Mahjong dictionary; when None, word events are checked
            for spelling only (they were checked against the dictionary when
            they were recorded).

    Events that do not fit are kept, marked ``rejected`` and listed in
    ``needs_referee``; replay itself never fails on them.

    Raises:
        BadInput: no ``game_started`` event, or its data is unusable.
    """
    raw = sorted((as_event(e) for e in events), key=lambda e: e.id)
    eff, status = effective_events(raw)
    starts = [e for e in eff if e.type == "game_started"]
    if not starts:
        raise BadInput("no game_started event for this game")
    start = starts[0]
    state = GameState(Setup.from_data(start.data, deal_lookup), start.game_id, start.t, words)
    state._log(start, _start_text(state))
    if state.stuck() and (isinstance(state.rules, LoveRules)
                          or (isinstance(state.rules, MindfulRules)
                              and (not state.reshuffle_allowed() or not state.reshuffle_can_help()))):
        # (as after any move, _check_end: a Zen Reshuffle that no arrangement
        # of the tiles can help would spend a token, +500 at the end, for nothing)
        state._end("stalemate", start.id, start.t)      # dealt with no move (and no reshuffle) at all
    for e in eff:
        if e.id == start.id:
            continue
        try:
            state.apply_event(e)
        except CompanionError as exc:
            if e.type == "game_ended" and isinstance(e.data.get("cause"), int) and not state.ended:
                # the engine's record of an end the board no longer shows (the
                # referee corrected or voided what led to it): it stops
                # counting, as the end itself did; nothing for the referee
                state._log(e, f"{brief(e, state.tiles)} (no longer holds: {exc})", "voided")
                status[e.id] = "voided"
                continue
            # what it was and why it does not count: "rejected: Ada claimed
            # Red Dragon + Red Dragon (16,7,4 21,10,1): it is Bo's turn, not Ada's"
            state._log(e, f"rejected: {brief(e, state.tiles)}: {exc}", "rejected")
            state.needs[e.id] = {"id": e.id, "reason": f"{e.type} #{e.id} does not fit the board: {exc}",
                                 "evidence": e.data.get("evidence"), "player": e.data.get("player"),
                                 "rejected": True}
    for e in raw:   # a correction pointing at a referee item resolves it
        if e.type == "correction" and status.get(e.id) != "voided" and e.ref in state.needs \
                and not state.needs[e.ref]["rejected"]:
            state.needs.pop(e.ref)
    state.raw = raw
    state.status = status
    return state


def _start_text(state: GameState) -> str:
    s = state.setup
    return (f"{state.rules.title}, {state.mode.title}, on {s.layout.name} ({len(s.layout)} tiles) "
            f"for {', '.join(s.players)}")


# --------------------------------------------------------------------------- commands -> events


def start_data(variant: str, mode: str, layout: Layout, faces: Sequence[str | None],
               players: Sequence[str], seed: int | None = None, options: Mapping | None = None) -> dict:
    """The checked ``game_started`` data for a new game (see :func:`new_setup`).

    Raises:
        BadInput: as :func:`new_setup`.
    """
    return new_setup(variant, mode, layout, faces, players, seed, options).to_data()


def _open(state: GameState) -> None:
    if state.ended:
        raise IllegalMove(f"the game has ended ({state.end_reason})")


def _need_turn(state: GameState, p: PlayerState) -> None:
    if p.seat != state.turn:
        raise IllegalMove(f"it is {state.players[state.turn].name}'s turn, not {p.name}'s")


def typed_face_conflicts(state: GameState, slots: Sequence, faces: Sequence[str | None] | None) -> list[str]:
    """Faces a person typed for a move that differ from the faces the
    ledger records for those tiles: ``["7,0,0 is recorded as roses-3, not
    season-spring", ...]`` (empty when none differ, or no faces were typed).

    The engine lays given faces over the record (docs/RULES.md 1.4, "Faces
    given by the referee win over the deal's record"); the console and the
    command line take typed faces for tiles not yet seen, and ask for an
    explicit "over the record" before a typed face replaces a recorded one
    (a typo would otherwise turn a mismatched pair into a scoring one).

    Raises:
        BadInput: a slot outside the layout, or named twice; an unknown face;
        a count of faces unlike the count of slots.
    """
    if not faces:
        return []
    idx = _parse_slots(state, slots)
    if len(faces) != len(idx):
        raise BadInput(f"{len(faces)} faces for {len(idx)} slots")
    out = []
    for i, f in zip(idx, faces):
        if f is None:
            continue
        state.tiles.face(f)
        known = state.faces[i]
        if known is not None and known != f:
            out.append(f"{','.join(map(str, state.slot(i)))} is recorded as {known}, not {f}")
    # the set holds so many copies of each face (the books' 1.2 Component
    # Inventory: Love's glass tiles are "Unique single-copy bonus tiles"):
    # typed faces that, with the copies the ledger records on other tiles,
    # come to more than that are a typo too (an audit typed emotion-1 for
    # both tiles of a pair, the deal holding the one Emotion Glass 1
    # elsewhere, and was paid +600)
    typed = Counter(f for f in faces if f is not None)
    for f, n in typed.items():
        held = sum(1 for j, g in enumerate(state.faces) if g == f and j not in idx)
        copies = state.tiles.face(f).copies
        if held + n > copies:
            where = f"{held} recorded on other tiles" if held else "none recorded on other tiles"
            out.append(f"the set holds {count(copies, 'copy', 'copies')} of {f} ({where}), not {held + n}")
    return out


def faces_beyond_set(state: GameState, faces: Sequence[str | None] | None) -> list[str]:
    """Faces given for one move (or one correction) more often than the
    variant's set holds them at all, whatever the ledger records elsewhere:
    ``["the set holds 1 copy of emotion-1, not 2"]`` (empty when none).
    Over the record or not, no table shows them: a pair of Love's
    "Unique single-copy bonus tiles" (Love 1.2 Component Inventory) was
    typed over the record, and corrected, and paid +600 (a break-test,
    session 55).

    Raises:
        BadInput: an unknown face.
    """
    out = []
    for f, n in Counter(f for f in (faces or ()) if f is not None).items():
        copies = state.tiles.face(f).copies
        if n > copies:
            out.append(f"the set holds {count(copies, 'copy', 'copies')} of {f}, not {n}")
    return out


def _parse_slots(state: GameState, slots: Sequence) -> list[int]:
    out = []
    for s in slots:
        s = Slot.parse(s) if isinstance(s, str) else Slot(*s)
        if s not in state.layout.index:
            raise BadInput(f"slot {s} is not in layout {state.layout.name!r}")
        out.append(state.layout.index[s])
    if len(set(out)) != len(out):
        raise BadInput("the same tile is named twice")
    return out


def _penalty(state: GameState, p: PlayerState, i: int, extra: Mapping | None = None,
             board: Board | None = None) -> Pending:
    r = (board or state.board).reason(i)
    data = {"player": p.name, "slot": list(r.slot), "face": state.faces[i], "block": r.to_json(),
            "reason": r.describe(), "points": state.rules.blocked_penalty}
    data.update(extra or {})
    return Pending("penalty", data)


def resolve_claim(state: GameState, player: str, slots: Sequence, faces: Sequence[str] | None = None,
                  extra: Mapping | None = None) -> Outcome:
    """Turn "``player`` takes these two tiles" into events.

    * a free matching pair -> ``claim``;
    * a non-matching pair, or a pair that leaves out a touched tile ->
      ``invalid`` (Law 2: the tiles go back, the turn passes);
    * a blocked tile -> one ``penalty`` per blocked tile, and the claim is
      refused (``Outcome.error``).

    Raises:
        BadInput: unknown player, slots not in the layout, the same slot twice,
        unknown faces.  IllegalMove: game over, out of turn, an empty slot.
    """
    p = state.player(player)
    _open(state)
    if len(slots) != 2:
        raise BadInput(f"a claim is two tiles, got {len(slots)}")
    ia, ib = _parse_slots(state, slots)
    board, item = state.judged_board((extra or {}).get("resolves"), (ia, ib))
    view = state._faces_view((ia, ib), faces)
    v = check_claim(board, view, state.tiles, state.slot(ia), state.slot(ib))
    if item is None and v.code != BLOCKED:
        # (tiles that left the table earlier were taken in their own turn).
        # A blocked tile selected costs its penalty in turn or not, as a
        # blocked tile touched does (Love 2.7 "attempts to touch or select";
        # docs/RULES.md 1.2 "in turn or not"): judged before the turn
        _need_turn(state, p)
    base = {"player": p.name, "slots": [list(state.slot(ia)), list(state.slot(ib))],
            "faces": [view[ia], view[ib]]}
    base.update(extra or {})
    if v.code in (NOT_IN_LAYOUT, SAME_TILE):
        raise BadInput(v.reason)
    if v.code == MISSING:
        raise IllegalMove(v.reason)
    if v.code == BLOCKED:
        # each blocked tile its own penalty (Love 2.7), all naming the pair
        # tried, so that an undo takes back the whole attempt
        tried = dict(extra or {}, claimed=[list(state.slot(ia)), list(state.slot(ib))])
        pens = [_penalty(state, p, state.layout.index[s], tried, board) for s in v.blocked_slots]
        pts = state.rules.blocked_penalty
        cost = f"blocked tile penalty {pts:+,} each" if pts else "a blocked tile costs no points in this game"
        return Outcome(tuple(pens), error=f"{v.reason}; {cost}")
    if v.code == UNKNOWN_FACE:
        raise BadInput(f"{v.reason}: give the faces seen")
    if item is None and state.touched and not set(state.touched) <= {ia, ib}:
        need = ", ".join(str(state.slot(i)) for i in state.touched)
        data = dict(base, code="touch-is-claimed", reason=f"{state.touch_rule}: the pair must include {need}")
        return Outcome((Pending("invalid", data),), message=data["reason"])
    if v.code == NO_MATCH and item is not None:
        # the players kept these tiles: a pair that left the table for good
        # matched, or the referee settles it otherwise ("none", "penalty")
        raise IllegalMove(f"{v.reason}: tiles that left the table are settled as a matching pair, "
                          "or with no move or a penalty")
    if v.code == NO_MATCH:
        data = dict(base, code=NO_MATCH, reason=v.reason)
        return Outcome((Pending("invalid", data),), message=f"invalid attempt: {v.reason}")
    return Outcome((Pending("claim", base),), message=v.reason)


def resolve_touch(state: GameState, player: str, slot, extra: Mapping | None = None) -> Outcome:
    """A tile touched: free -> ``touch`` ("touch is claimed"); blocked ->
    ``penalty`` (Love/Candy 2.7: "attempts to touch or select a tile that is
    blocked", also when it is put back).  In Harmony Duels a second touched
    tile that does not match the first is an invalid attempt (Mindful 2.9
    "Two-Touch Commitment", "in competitive turn-based play";
    :attr:`GameState.touch_binds`).

    Raises:
        BadInput: unknown player or slot.  IllegalMove: game over, empty slot,
        out of turn (for a free tile).
    """
    p = state.player(player)
    _open(state)
    (i,) = _parse_slots(state, [slot])
    board, _ = state.judged_board((extra or {}).get("resolves"), (i,), touch=True)
    r = board.reason(i)
    if not r.present:
        raise IllegalMove(f"{r.slot} holds no tile")
    if not r.free:
        pts = state.rules.blocked_penalty
        return Outcome((_penalty(state, p, i, extra, board),),
                       error=f"{r.describe()}; penalty {pts:+,}" if pts else f"{r.describe()}; no points in this game")
    _need_turn(state, p)
    data = {"player": p.name, "slot": list(r.slot), "face": state.faces[i]}
    data.update(extra or {})
    out = [Pending("touch", data)]
    if isinstance(state.rules, MindfulRules) and state.touch_binds and state.touched and i not in state.touched:
        j = state.touched[0]
        fa, fb = state.face(j), state.face(i)
        if fa is not None and fb is not None and not fa.matches(fb):
            reason = f"{fa.name} does not match {fb.name} (two-touch commitment)"
            out.append(Pending("invalid", {"player": p.name, "slots": [list(state.slot(j)), list(r.slot)],
                                           "faces": [fa.id, fb.id], "code": NO_MATCH, "reason": reason}))
    return Outcome(tuple(out))


def resolve_word(state: GameState, player: str, slots: Sequence, word: str,
                 words: frozenset[str] | set[str], faces: Sequence[str] | None = None,
                 extra: Mapping | None = None) -> Outcome:
    """A word built from free tiles (Word Mahjong 2.1 Rule 2), tiles in spelling order.

    Raises:
        BadInput: not Word Mahjong, unknown player or slot, bad word.
        IllegalMove: game over, out of turn, a tile missing or blocked, fewer
        than 3 letters, tiles that do not spell it, a word not in the dictionary.
    """
    p = state.player(player)
    if not isinstance(state.rules, WordRules):
        raise BadInput(f"words are played in Word Mahjong only, not {state.rules.title}")
    _open(state)
    idx = _parse_slots(state, slots)
    # a word that no tiles could make (not letters, too short, one letter
    # short of the tiles named) is a bad command, refused before a blocked
    # tile among them is charged (a break-test, session 49: --word "" wrote
    # a penalty, then exited 2)
    w = wordrules.normalize(word if isinstance(word, str) else "")
    wordrules.spell(w, [wordrules.WILD] * len(idx))
    board, item = state.judged_board((extra or {}).get("resolves"), idx)
    missing = [i for i in idx if not board.reason(i).present]
    if missing:
        raise IllegalMove(f"{state.slot(missing[0])} holds no tile")
    blocked = [i for i in idx if not board.reason(i).free]
    if blocked:
        # each blocked tile selected its own penalty, in turn or not, as for
        # a pair (Word 2.1 Rule 1: blocked tiles "are shaded and cannot be
        # selected until surrounding tiles are cleared"; docs/RULES.md
        # 1.2): the camera records one for a word's blocked letter, and a
        # typed word was refused with nothing recorded.  All name the word
        # tried, so one undo takes back the attempt
        tried = dict(extra or {}, claimed=[list(state.slot(i)) for i in idx])
        pens = [_penalty(state, p, i, tried, board) for i in blocked]
        pts = state.rules.blocked_penalty
        cost = f"blocked tile penalty {pts:+,} each" if pts else "a blocked tile costs no points in this game"
        return Outcome(tuple(pens), error=f"{board.reason(blocked[0]).describe()}; {cost}")
    if item is None:
        _need_turn(state, p)        # (a word settling tiles off the table: made in its own turn)
    view = state._faces_view(idx, faces)
    data = {"player": p.name, "slots": [list(state.slot(i)) for i in idx], "faces": [view[i] for i in idx],
            "word": w}
    data.update(extra or {})
    pend = Pending("word", data)
    check_pending(state, pend)          # tiles present, free, known, spelling the word
    wordrules.check_word(w, data["faces"], words)
    return Outcome((pend,), message=f"{w} is a word")


def resolve_simple(state: GameState, etype: str, player: str, **data) -> Outcome:
    """``pass``, ``meld``, ``steal``, ``declare``: checked by applying them to a
    copy of the state.

    Raises:
        BadInput / IllegalMove: as the event's rule says.
    """
    p = state.player(player)
    if etype not in ("declare", "steal", "meld"):   # these may follow the claim that ended the game
        _open(state)
    if isinstance(data.get("from"), str):       # a steal's victim, as the game spells the name
        data["from"] = state.player(data["from"]).name
    pend = Pending(etype, {"player": p.name, **data})
    check_pending(state, pend)
    return Outcome((pend,))


def check_pending(state: GameState, pend: Pending, t: float | None = None) -> GameState:
    """Apply ``pend`` to a copy of ``state`` with a provisional id; returns the copy.

    Raises:
        BadInput / IllegalMove: the event would be refused.
    """
    ev = Event(state.last_id + 1, state.game_id, pend.type, pend.data, pend.ref, t)
    return state.apply(ev)


def first_free_pair(state: GameState) -> tuple[int, int] | None:
    pairs = state.free_pairs()
    return pairs[0] if pairs else None


def _deal_like(state: GameState):
    class _D:  # duck-typed deal for the solver: variant, layout, faces
        pass
    d = _D()
    d.variant, d.layout, d.faces = state.setup.variant, state.layout, list(state.faces)
    return d


def solver_hint(state: GameState) -> tuple[int, int] | None:
    """A free pair that keeps the position winnable (the solver's ``hint``),
    else any free pair, else None.  Faces of present tiles must be known for
    the solver; otherwise the first free pair is given."""
    present = state.board.present
    if all(state.faces[i] is not None for i in range(len(present)) if present[i]):
        try:
            from companion import solver
            pair = solver.hint(_deal_like(state), list(present))
            if pair is not None:
                return tuple(sorted(pair))  # type: ignore[return-value]
        except ImportError:  # pragma: no cover - the solver ships with the package
            pass
    return first_free_pair(state)


#: a Word hint checks that the tiles left after its word can still all be
#: cleared when the board holds at most this many tiles (an end game; on a
#: fuller board a stranded letter is unlikely and the search long)
WORD_HINT_CHECK_TILES = 24


def _word_hint(state: GameState, index) -> tuple[str, list[int]] | None:
    """The Wisdom Lantern's word (Word 1.2: it "suggests an available word
    sequence"): the longest (then A-Z) word the free tiles spell after which
    the tiles left can still all be cleared by pairs and words
    (:func:`companion.words.clearable`: CAT and DOG, not CAGOT, which strands
    the D), checked on boards of at most :data:`WORD_HINT_CHECK_TILES` tiles
    whose faces are all known; else the longest word; None when the free
    tiles spell none.  Returns the word and its slot indices in spelling order."""
    free = [(i, state.faces[i]) for i in state.board.free_indices() if state.faces[i] is not None]
    present = [i for i in range(len(state.layout)) if state.board.present[i]]
    known = all(state.faces[i] is not None for i in present)
    check = known and len(present) <= WORD_HINT_CHECK_TILES
    found = index.find([f for _, f in free], limit=25 if check else 1)
    if not found:
        return None
    if check:
        everything = [state.faces[i] for i in present]
        vocab = index.find(everything, limit=5000)
        if len(vocab) < 5000:
            for w in found:
                idx = wordrules.assign(w, free)
                left = Counter(everything) - Counter(state.faces[i] for i in idx)
                if wordrules.clearable(left.elements(), vocab) is not False:
                    return w, idx
    return found[0], wordrules.assign(found[0], free)


def resolve_hint(state: GameState, player: str, index=None) -> Outcome:
    """A hint (Mindful: a Zen Focus token; Word: a Wisdom Lantern): a free pair
    that keeps the game winnable when the solver finds one, else any free
    pair, else (Word) a word the free tiles spell.

    Args:
        index: a :class:`companion.words.WordIndex` for Word Mahjong hints.

    Raises:
        BadInput: unknown player.  IllegalMove: no hints in this game, none
        left, or no move to show (then nothing is spent: a hint that shows
        nothing costs no Zen Focus token or Wisdom Lantern; docs/RULES.md 3.2,
        4.4).
    """
    p = state.player(player)
    _open(state)
    data: dict = {"player": p.name, "pair": None, "word": None}
    check_pending(state, Pending("hint", data))     # the rules first, then the solver
    if state.touched:
        # a touch binds (docs/RULES.md 1.2): only a pair with the touched
        # tile(s) may be played, so only such a pair is worth a token
        pair = next((pr for pr in state.free_pairs() if set(state.touched) <= set(pr)), None)
        if pair is None:
            need = ", ".join(str(state.slot(i)) for i in state.touched)
            raise IllegalMove(f"no move to hint: the turn's next pair must include {need} ({state.touch_rule}), and "
                              f"no free tile matches it; no hint is given and nothing is spent")
    else:
        pair = solver_hint(state)
    if pair is not None:
        data["pair"] = [list(state.slot(pair[0])), list(state.slot(pair[1]))]
    elif isinstance(state.rules, WordRules) and index is not None:
        word = _word_hint(state, index)
        if word is not None:
            data["word"] = {"word": word[0], "slots": [list(state.slot(i)) for i in word[1]]}
    if data["pair"] is None and data["word"] is None:
        tool = ("a Zen Reshuffle" if isinstance(state.rules, MindfulRules)
                else "the Lexicon Fan (reshuffle)" if isinstance(state.rules, WordRules) else "a reshuffle")
        help_ = (f"{tool} may help" if state.reshuffle_allowed(p) and state.reshuffle_can_help(index) else
                 f"{tool} cannot help: no arrangement of the tiles left leaves a match free; the game can end "
                 "(no-moves)" if state.reshuffle_allowed(p) else
                 f"no reshuffle is left{' to ' + p.name if isinstance(state.rules, MindfulRules) else ''} either: "
                 "the game can end (no-moves)")
        raise IllegalMove(f"no move to hint: no free pair{' or word' if isinstance(state.rules, WordRules) else ''} "
                          f"is left, so no hint is given and nothing is spent; {help_}")
    pend = Pending("hint", data)
    check_pending(state, pend)
    return Outcome((pend,), message=describe_hint(state, data))


def describe_hint(state: GameState, data: Mapping) -> str:
    if data.get("pair"):
        a, b = (Slot(*s) for s in data["pair"])
        return f"match {a} with {b}"
    if data.get("word"):
        w = data["word"]
        return f"spell {w['word']} with " + " ".join(str(Slot(*s)) for s in w["slots"])
    return "no move found"


def reshuffle_faces(state: GameState, seed: int, index=None) -> list[str | None]:
    """New faces for the present tiles: :func:`companion.deals.solvable_reshuffle`
    (a winnable arrangement, proved by the exact solver) when every present
    face is known; where the solver cannot give one (the tiles cannot all be
    paired: Word Mahjong after a word, whose letters are rarely all in even
    numbers; or the slots cannot be emptied two at a time), a seeded shuffle
    that leaves a valid match free where the tiles hold one
    (:func:`companion.deals.shuffle_with_free_match`: a pair, or with the
    dictionary ``index`` a word; Word 2.5 "to guarantee at least one valid
    match"); a plain seeded shuffle (``random.Random(seed)``) when some face
    is unknown (a camera game; Mindful 2.1 Law 4: "gathered, gently
    shuffled, and re-laid").  Removed slots keep their old face."""
    from companion import deals
    present = list(state.board.present)
    known = all(state.faces[i] is not None for i in range(len(present)) if present[i])
    if known:
        try:
            new = list(deals.solvable_reshuffle(state.setup.variant, state.layout, present,
                                                list(state.faces), seed))
        except (IllegalMove, deals.UnpairableTiles):
            # no winnable arrangement the pair solver can prove: one with a
            # match to make (a break-test's Lexicon Fan was refused after
            # nearly every word, and the game could then never end)
            spells = None
            if index is not None and isinstance(state.rules, WordRules):
                spells = lambda free: bool(index.find(free, limit=1))      # noqa: E731
            new = list(deals.shuffle_with_free_match(state.setup.variant, state.layout, present,
                                                     list(state.faces), seed, spells)[0])
        return [new[i] if present[i] else state.faces[i] for i in range(len(present))]
    pool = [state.faces[i] for i in range(len(present)) if present[i]]
    random.Random(seed).shuffle(pool)
    it = iter(pool)
    return [next(it) if present[i] else state.faces[i] for i in range(len(present))]


def resolve_reshuffle(state: GameState, player: str, seed: int | None = None,
                      shuffler: Callable[[GameState, int], list] | None = None,
                      auto: bool = False, index=None) -> Outcome:
    """A reshuffle (Mindful Zen Reshuffle with a Zen Focus token; Word Lexicon
    Fan; Zen Archives' automatic one when ``auto``).  The new faces go into the
    event so that replay needs no solver.  ``index``: Word Mahjong's
    dictionary (:class:`companion.words.WordIndex`), for a reshuffle that
    must leave a word free (:func:`reshuffle_faces`).

    Raises:
        BadInput: unknown player.  IllegalMove: not allowed now.
    """
    p = state.player(player)
    _open(state)
    if seed is None:
        seed = (state.setup.seed or 0) * 1009 + state.reshuffles + 1
    data = {"player": p.name, "seed": int(seed), "source": "auto" if auto else "player"}
    # check the rules before running the solver
    probe = Pending("reshuffle", dict(data, faces=list(state.faces)))
    check_pending(state, probe)
    data["faces"] = shuffler(state, int(seed)) if shuffler is not None else reshuffle_faces(state, int(seed), index)
    pend = Pending("reshuffle", data)
    check_pending(state, pend)
    return Outcome((pend,), message=f"{state.board.n_present} tiles reshuffled")


def counts(state: GameState, event_id: int) -> bool:
    """Whether event ``event_id`` counts in ``state``: neither undone, voided
    (nor caused by such an event) nor rejected on replay."""
    ent = state.entries.get(event_id)
    return state.status.get(event_id) != "voided" and ent is not None and ent.status != "rejected"


def knock_on(before: GameState, after: GameState, skip: Iterable[int] = ()) -> list[str]:
    """What a referee's correction, void or undo changed besides its target:
    every other event that stopped counting (with the engine's reason),
    counts again, or scores other points.  Events are replayed in order
    (:func:`replay`), so a change to one move can make a later one misfit the
    board (a claim now out of turn, a tile already taken), fit again, or
    lose a chain bonus; nothing tells the referee that unless it is said
    (the console and ``companion game`` print these sentences).

    Args:
        before, after: the game replayed before and after the action.
        skip: event ids not to report (the action's own target and events).

    Returns:
        Sentences, oldest event first; empty when nothing else changed.
    """
    def points(st: GameState) -> dict[int, int]:
        out: dict[int, int] = {}
        for lines in [q.lines for q in st.players] + [st.team_lines]:
            for eid, _label, pts in lines:
                out[eid] = out.get(eid, 0) + pts
        return out

    skip = set(skip)
    p0, p1 = points(before), points(after)
    out = []
    for e in before.raw:
        if e.id in skip or e.data.get("cause") in skip or e.type in ("correction", "undo", "game_started"):
            continue              # the action's own, and the engine's follow-ups of its target
        was, now = counts(before, e.id), counts(after, e.id)
        if was and not now:
            why = str((after.needs.get(e.id) or {}).get("reason") or "").split(": ", 1)[-1]
            ent = after.entries.get(e.id)
            if not why and ent is not None and "(no longer holds: " in ent.text:     # an end record
                why = ent.text.rsplit("(no longer holds: ", 1)[1].rstrip(")")
            out.append(f"#{e.id} {e.type} no longer counts" + (f" ({why})" if why else ""))
        elif now and not was:
            out.append(f"#{e.id} {e.type} counts again")
        elif now and p0.get(e.id, 0) != p1.get(e.id, 0):
            out.append(f"#{e.id} {e.type} now scores {p1.get(e.id, 0):+,} (was {p0.get(e.id, 0):+,})")
    return out


def face_conflicts(state: GameState, event_id: int) -> list[str]:
    """Faces that event ``event_id`` (as corrected) gives its tiles against
    what the ledger knew of them just before it: the deal, or the faces seen
    and reshuffled since.  An event's faces are laid over the known ones
    (the camera's latest look wins), so a correction typed with a wrong face
    turns a valid pair into an invalid attempt without a word; these
    sentences are the word (``companion game correct`` and the console
    print them as warnings).

    Returns:
        ``["7,4,0 held 3 Triple Hearts as far as the ledger knew, not 1
        Single Heart"]``-style sentences; empty when every face agrees, is
        unknown, or the event names no faces.
    """
    eff, _ = effective_events(state.raw)
    ev = next((e for e in eff if e.id == event_id), None)
    if ev is None:
        return []
    slots, faces = ev.data.get("slots"), ev.data.get("faces")
    if not isinstance(slots, list) or not isinstance(faces, list) or len(slots) != len(faces):
        return []
    # the game as it stood when the event came: the events before it, and
    # the corrections and undos of those (whenever they were written)
    earlier = [e for e in state.raw
               if e.id < event_id or (e.type in ("correction", "undo") and e.ref is not None and e.ref < event_id)]
    try:
        prior = replay(earlier)
    except CompanionError:
        return []
    where = {s: i for i, s in enumerate(prior.layout.slots)}

    def name(f: str) -> str:
        try:
            return prior.tiles.face(f).name
        except BadInput:
            return str(f)

    out = []
    for raw_slot, f in zip(slots, faces):
        try:
            slot = Slot(*map(int, raw_slot))
        except (TypeError, ValueError):
            continue
        i = where.get(slot)
        known = prior.faces[i] if i is not None else None
        if isinstance(f, str) and known is not None and known != f:
            out.append(f"{slot} held {name(known)} as far as the ledger knew, not {name(f)}")
    return out


def undo_target(state: GameState) -> int | None:
    """The event an undo takes back now: the last effective play event (in Word
    Mahjong the last claim or word: the Ink Eraser, 2.5)."""
    types = {"claim", "word"} if isinstance(state.rules, WordRules) else UNDOABLE
    for eid in reversed(state.actions):
        ent = state.entries.get(eid)
        if ent is not None and ent.type in types and ent.status == "ok":
            return eid
    return None


def resolve_undo(state: GameState, player: str | None = None) -> Outcome:
    """Take back the last play event (an ``undo`` event pointing at it).

    In Word Mahjong it is the Ink Eraser: it counts as a booster and is limited
    outside Zen Archives.  Elsewhere it is the referee taking a move back.
    A ``player`` asking may take back only their own move, and not a
    penalty or a hint, nor (outside Word Mahjong) a touch or an invalid
    attempt, nor a claim an opponent may still steal from, nor their own
    steal.

    Raises:
        BadInput: unknown player.  IllegalMove: nothing to undo, none left, the
        game ended by something else, another player's move, a player's own
        penalty, hint, touch or invalid attempt, a claim open to a steal.
    """
    p = state.player(player) if player else None
    target = undo_target(state)
    if target is None:
        raise IllegalMove("nothing to undo")
    cause = state.entries.get(state.end_cause) if state.end_cause is not None else None
    quiet_end = cause is not None and cause.type in QUIET_TYPES and cause.id > target
    if state.ended and state.end_cause not in (target,) and not _caused_by(state, target) and not quiet_end:
        back = (f": void event #{state.end_cause} ({cause.type}) to reopen it" if cause is not None
                and cause.type != "game_started" else "")
        raise IllegalMove(f"the game has ended ({state.end_reason}){back}")
    ent = state.entries[target]
    if p is not None:
        # a player asking takes back only their own move, and never one whose
        # cost the books impose: a penalty (Love/Candy 2.7, also "when put
        # back") or a hint, whose pair has been seen (Mindful 2.2: tokens are
        # "Hints/Reshuffles"); the referee (no player) may (docs/RULES.md 1.4)
        if ent.player is not None and ent.player != p.name:
            raise IllegalMove(f"{p.name} cannot take back {ent.player}'s move (#{target} {ent.type}): "
                              "the referee takes moves back (undo without a player)")
        if ent.type in ("penalty", "hint"):
            what = "penalty" if ent.type == "penalty" else "hint: its pair has been shown"
            raise IllegalMove(f"{p.name} cannot take back their own {what} (#{target}); "
                              "the referee can (undo without a player)")
        binding_touch = ent.type == "touch" and state.touch_binds
        if binding_touch or (ent.type == "invalid" and not isinstance(state.rules, WordRules)):
            # the books' costs of these: a touched tile "*must* be chosen"
            # (Love/Candy 2.9; Mindful's duels, 2.9), a failed pair ends the
            # turn (Law 2), in a Solo Quest uses one (2.6.3) and breaks a
            # streak (Mindful 2.5).  (Word's Ink Eraser takes back claims
            # and words only, 4.4.)
            if ent.type == "touch":
                what = "touch: the touched tile must be chosen"
            elif len(state.players) > 1 and not state.coop:
                what = "invalid attempt: it ended the turn"
            elif state.mode.kind == "solo":
                what = "invalid attempt: it used a turn"
            else:
                what = "invalid attempt: it broke the streak"
            raise IllegalMove(f"{p.name} cannot take back their own {what} (#{target}); "
                              "the referee can (undo without a player)")
        if ent.type == "reshuffle" and isinstance(state.rules, MindfulRules):
            # as a hint's pair, the new layout has been seen: taken back, the
            # token would buy another roll of the tiles (a rules audit)
            raise IllegalMove(f"{p.name} cannot take back their own Zen Reshuffle (#{target}): its new layout has "
                              "been seen; the referee can (undo without a player)")
        if ent.type == "declare":
            # "Declares immediate round victory" (2.5), and the opponents paid
            raise IllegalMove(f"{p.name} cannot take back their own declaration (#{target}): it ended the game; "
                              "the referee can (undo without a player)")
        if ent.type == "steal":
            # a call made out of turn ("you may declare 'Passion Pong!'",
            # Law 3): it took the claimant's tile and turn; taken back, the
            # claimant's turn would be given back and the call made again
            # at will (a break-test, session 36)
            raise IllegalMove(f"{p.name} cannot take back their own \"{state.rules.steal_call}\" (#{target}): "
                              "it took the tile and the turn; the referee can (undo without a player)")
        window = state.open_steal_window()
        if ent.type == "claim" and window is not None and window[0] == target and state.stealers():
            raise IllegalMove(f"{p.name} cannot take back #{target} now: "
                              f"{' or '.join(q.name for q in state.stealers())} may still call "
                              f"\"{state.rules.steal_call}\" on it; the referee can (undo without a player)")
        raw = next((e for e in state.raw if e.id == target), None)
        if raw is not None and raw.data.get("resolves") is not None:
            raise IllegalMove(f"{p.name} cannot take back #{target}: the referee decided it (settling "
                              f"item #{raw.data['resolves']}); the referee can (undo without a player)")
    if isinstance(state.rules, WordRules):
        q = p or state.players[0]
        if not state._booster_left(q, "undos"):
            raise IllegalMove("no Ink Eraser left in this game")
    data = {"player": p.name if p else None}
    targets = _one_attempt(state, target)
    shown = ", ".join(f"#{t} ({state.entries[t].text})" for t in reversed(targets))
    raw = next((e for e in state.raw if e.id == target), None)
    item = raw.data.get("resolves") if raw is not None else None
    reopened = (f"; referee item #{item} is open again, its tiles off the table"
                if item is not None and any(e.type in NEEDS_REFEREE and e.id == item and e.data.get("off_table")
                                            for e in state.raw) else "")
    return Outcome(tuple(Pending("undo", dict(data), ref=t) for t in targets),
                   message=f"event{'s' if len(targets) > 1 else ''} {shown} "
                           f"{'are' if len(targets) > 1 else 'is'} undone{reopened}")


def _one_attempt(state: GameState, target: int) -> list[int]:
    """``target`` and, when it is one of the penalties of a claim of blocked
    tiles (``claimed`` in its data), the attempt's other penalties just
    before it: one move, taken back at once.  Newest first."""
    ent = state.entries.get(target)
    tried = ent.data.get("claimed") if ent is not None and ent.type == "penalty" else None
    if not tried:
        return [target]
    out = [target]
    acts = list(state.actions)
    k = acts.index(target) if target in acts else -1
    while k > 0:
        k -= 1
        prev = state.entries.get(acts[k])
        if not (prev is not None and prev.type == "penalty" and prev.status == "ok"
                and prev.data.get("claimed") == tried and prev.data.get("player") == ent.data.get("player")):
            break
        out.append(acts[k])
    return out


def _caused_by(state: GameState, target: int) -> bool:
    ent = state.entries.get(state.end_cause) if state.end_cause is not None else None
    return ent is not None and ent.data.get("cause") == target


def _plain(v):
    """Tuples as lists, all the way down (event data as JSON holds it)."""
    return [_plain(x) for x in v] if isinstance(v, (list, tuple)) else v


#: the data fields replaying each type of event reads
#: (:meth:`GameState.apply_event` and its ``_on_*`` handlers): the fields a
#: correction may set on an event of that type (after its ``type`` change,
#: if it makes one).  Points are never among them: the variant's rules give
#: them from what happened, so a referee corrects the event and the points
#: follow.  ``resolved`` and ``decision`` settle a "needs referee" item.
CORRECTABLE = {
    "claim": ("player", "slots", "faces"),
    "invalid": ("player", "slots", "faces", "reason"),
    "penalty": ("player", "slot"),
    "touch": ("player", "slot"),
    "pass": ("player",),
    "word": ("player", "slots", "faces", "word"),
    "meld": ("player", "kind", "faces"),
    "steal": ("player", "from"),
    "declare": ("player",),
    "hint": ("player",),
    "reshuffle": ("player", "source", "faces"),
    "undo": ("player",),
    "faces_seen": ("faces",),
    "needs_referee": ("resolved", "decision", "reason", "player"),
    "game_ended": ("reason",),
}
#: what each type of event cannot do without (a type change must leave them)
_NEEDED = {"claim": ("slots",), "penalty": ("slot",), "touch": ("slot",), "word": ("slots", "word"),
           "meld": ("kind",), "faces_seen": ("faces",)}
#: how a referee item is settled (``decision``)
DECISIONS = ("none", "claim", "penalty", "word")


def _a(noun: str) -> str:
    """``noun`` with its indefinite article (``"an invalid"``, ``"a claim"``)."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _check_correction_fields(state: GameState, target: int, etype: str, data_now: Mapping,
                             changes: Mapping) -> None:
    """Refuse a correction that replay could not use: a field the event's
    type (after the change) does not read, a value of nothing, a type
    change that leaves the new type without what it needs, or a value that
    does not fit the game.

    Args:
        etype: the event's type now (earlier corrections laid over).
        data_now: its data now.

    Raises:
        BadInput: ``points`` (they follow the rules); a field not in
            :data:`CORRECTABLE` for the type; ``null`` for anything but
            ``faces``; ``type`` not one of :data:`RETYPABLE`, or on an event
            of another type; a claim left without ``slots``, a penalty or
            touch without ``slot`` (:data:`_NEEDED`); ``slots`` not a
            non-empty list of distinct slots of the layout; ``slot`` not one
            slot of it; ``from`` not a player; ``decision`` not one of
            :data:`DECISIONS`; ``resolved`` not true or false.
    """
    if "points" in changes:
        raise BadInput("points follow the rules: correct what happened (type, slots, faces, word or "
                       "player) and the points follow")
    for key, v in changes.items():
        if v is None and key != "faces":
            raise BadInput(f"{_shown(str(key), 40)} cannot be set to nothing (null): give a value")
    new_type = etype
    if "type" in changes:
        t = changes["type"]
        if etype not in RETYPABLE:
            raise BadInput(f"{_a(etype)} event's type cannot be changed (only {', '.join(sorted(RETYPABLE))} "
                           "change into each other)")
        if not isinstance(t, str) or t not in RETYPABLE:
            given = _shown(t, 40) if isinstance(t, str) else json.dumps(t)[:40]
            raise BadInput(f"type {given} is not one {_a(etype)} can become: "
                           f"{', '.join(sorted(RETYPABLE))}")
        new_type = t
    allowed = CORRECTABLE.get(new_type.replace("-", "_"), ())      # ("needs-referee" too)
    for key in changes:
        if key != "type" and key not in allowed:
            can = f"it can change {', '.join(allowed)}" if allowed else "it has no field to change"
            raise BadInput(f"a correction cannot change {_shown(str(key), 40)} on {_a(new_type)} event: {can}"
                           + (" (and type)" if new_type in RETYPABLE else ""))
    merged = {**data_now, **changes}
    for key in _NEEDED.get(new_type, ()):
        if merged.get(key) in (None, [], "") and not (key == "word" and changes.get(key) == ""):
            raise BadInput(f"{_a(new_type)} needs {key}: give it in the same correction (--set {key}=...)")

    def slot_of(v) -> Slot:
        if not (isinstance(v, (list, tuple)) and len(v) == 3
                and all(isinstance(c, int) and not isinstance(c, bool) for c in v)):
            raise BadInput(f"a slot is [x, y, z] (three whole numbers), not {_shown(json.dumps(v), 40)}")
        s = Slot(*v)
        state.setup.layout.slot_index(s)     # BadInput: not in the layout
        return s

    if "slots" in changes:
        v = changes["slots"]
        if not isinstance(v, (list, tuple)) or not v:
            raise BadInput(f"slots must be a list of [x, y, z] slots, not {_shown(json.dumps(v), 40)}")
        slots = [slot_of(x) for x in v]
        if len(set(slots)) != len(slots):
            raise BadInput("slots must name each slot once")
    if new_type == "claim" and ("slots" in changes or new_type != etype):
        # a claim is a pair (every rule book's matching rule); replay would
        # only make a claim of 1 or 3 tiles a referee item again
        got = merged.get("slots")
        n = len(got) if isinstance(got, (list, tuple)) else 0
        if n != 2:
            raise BadInput(f"a claim names the two tiles of its pair: give 2 slots, not {n}")
    if ("faces" in changes or "slots" in changes or new_type != etype) \
            and isinstance(merged.get("faces"), (list, tuple)):
        # replay lays a move's faces over its tiles one by one and refuses
        # any other count (``_faces_view``, ``check_meld``, a reshuffle's
        # one face per slot): a correction giving another count was written
        # and took the move out of the game, with no line naming it (an
        # audit's --faces with one face for a claim's two tiles)
        got = merged["faces"]
        slots_now = merged.get("slots")
        if new_type in ("claim", "word"):
            n = len(slots_now) if isinstance(slots_now, (list, tuple)) else 0
            what = count(n, "tile")
        elif new_type == "meld":
            n, what = 3, "3 tiles"
        elif new_type == "reshuffle":
            n = len(state.setup.layout)
            what = f"{count(n, 'slot')} of the layout"
        else:
            n, what = len(got), ""
        if len(got) != n:
            fix = ("give its faces in the same correction, or faces=null for the faces the ledger knows"
                   if "faces" not in changes else "one face id per tile, in the event's order")
            raise BadInput(f"{_a(new_type)} of {what} takes {count(n, 'face id')}, not {len(got)}: {fix}")
    if new_type == "faces_seen" and "faces" in changes:
        got, slots = changes["faces"], merged.get("slots")
        if not isinstance(got, (list, tuple)) or not all(isinstance(f, str) for f in got) \
                or not isinstance(slots, list) or len(got) != len(slots):
            n = len(slots) if isinstance(slots, list) else 0
            raise BadInput(f"faces seen on {n} tile(s) are corrected with {n} face id(s), one per tile, "
                           "in the event's order")
    if "slot" in changes:
        slot_of(changes["slot"])
    if "from" in changes:
        state.player(changes["from"])
    if new_type == "word" and ("word" in changes or "slots" in changes or new_type != etype) \
            and isinstance(merged.get("word"), str) and isinstance(merged.get("slots"), (list, tuple)) \
            and merged["word"].isascii() and merged["word"].isalpha() \
            and len(merged["word"]) <= len(state.setup.layout):        # (else refused as no word, below)
        # as `game word` refuses them (a re-test, session 49: a word
        # corrected to CA, or to 4 tiles for CAT, was written and then did
        # not count)
        try:
            wordrules.spell(wordrules.normalize(merged["word"]), [wordrules.WILD] * len(merged["slots"]))
        except IllegalMove as exc:
            raise BadInput(str(exc)) from None
    if new_type == "undo" and isinstance(changes.get("player"), str):
        # an undo said to be a player's must be one a player may ask for
        # (:func:`resolve_undo`): their own move, and not a penalty or a
        # hint.  A correction made the referee's undo of Ada's claim Bo's,
        # and it counted, where `game undo --player Bo` is refused (a docs
        # audit, session 59)
        # (the undone event is voided, so only among the raw events)
        undo = next((e for e in state.raw if e.id == target), None)
        undone = next((e for e in state.raw if undo is not None and e.id == undo.ref), None)
        who = state.player(changes["player"]).name
        owner = undone.data.get("player") if undone is not None else None
        if isinstance(owner, str) and name_key(owner) != name_key(who):
            raise BadInput(f"{who} cannot have taken back {owner}'s move (#{undone.id} {undone.type}): "
                           "a player takes back only their own; the referee's undo has no player")
        if undone is not None:
            # the moves a player may not take back (:func:`resolve_undo`,
            # docs/RULES.md 1.4): a penalty, a hint, a binding touch, an
            # invalid attempt (outside Word), a declaration, a steal, a
            # Mindful Zen Reshuffle
            word = isinstance(state.rules, WordRules)
            barred = {"penalty": "penalty", "hint": "hint", "declare": "declaration",
                      "steal": f"\"{state.rules.steal_call}\"" if getattr(state.rules, "steal_call", None) else "steal"}
            if undone.type == "touch" and state.touch_binds:
                barred["touch"] = "touch (the touched tile must be chosen)"
            if undone.type == "invalid" and not word:
                barred["invalid"] = "invalid attempt"
            if undone.type == "reshuffle" and isinstance(state.rules, MindfulRules):
                barred["reshuffle"] = "Zen Reshuffle"
            if undone.type in barred:
                raise BadInput(f"{who} cannot have taken back their own {barred[undone.type]} (#{undone.id}): only "
                               "the referee can; the referee's undo has no player")
    if "decision" in changes and changes["decision"] not in DECISIONS:
        raise BadInput(f"decision must be one of {', '.join(DECISIONS)}, not {_shown(str(changes['decision']), 40)}")
    if "resolved" in changes and not isinstance(changes["resolved"], bool):
        raise BadInput("resolved must be true or false")


def resolve_correction(state: GameState, target: int, changes: Mapping | None = None,
                       void: bool = False, reason: str = "", events: Sequence[Event] = ()) -> Outcome:
    """A referee correction of event ``target``: new data fields laid over it
    (``changes``), or ``void`` to make it not count.  The original stays in the
    ledger.

    Raises:
        BadInput: no such event in this game, nothing to change (no changes,
        or only values the event already has), the start event voided or
        corrected, a correction corrected (voiding one is allowed: it brings
        back what it changed), a change of ``player`` to an unknown name, of
        ``faces`` to ids not in the variant's tile set, or of ``word`` to
        anything but letters (at most one per slot of the layout), a field
        replay does not read (``points`` among them) or slots not of the
        layout (:func:`_check_correction_fields`), a ``reason`` that is not
        one line of plain text (:func:`check_reason`).
    """
    known = {e.id: e for e in events} if events else {}
    if void and getattr(state, "status", {}).get(target) == "voided":
        raise BadInput(f"event #{target} is already voided ({_voided_by(state, target)})")
    if target not in known and target not in state.entries:
        raise BadInput(f"no event #{target} in game {state.game_id!r}")
    if not void and getattr(state, "status", {}).get(target) == "voided":
        # a break-test (session 49): a voided attempt was given to the other
        # player and made a claim, unchecked, and came back rejected when
        # its void was voided
        raise BadInput(f"event #{target} is voided ({_voided_by(state, target)}), then correct it")
    ev = known.get(target)
    etype = ev.type if ev is not None else state.entries[target].type
    if etype == "game_started":
        raise BadInput(f"the game_started event cannot be {'voided' if void else 'corrected'}; "
                       f"start a new game instead")
    if etype == "correction" and not void:
        ref = ev.ref if ev is not None else state.entries[target].ref
        raise BadInput(f"event #{target} is itself a correction: correct the event it points at (#{ref}), "
                       f"or void this correction")
    if not void and not changes:
        raise BadInput("a correction needs something to change (the player, tiles, faces or word), "
                       "or void the event instead")
    entry = state.entries.get(target)
    data_now = (entry.data if entry is not None else ev.data) if changes else {}
    # checked as replay will read it: a move's faces follow its tiles (the
    # correction keeps only what the referee gave: replay works the faces
    # out again, so that voiding an earlier correction of the faces counts)
    seen_as = _faces_follow_slots(data_now, changes) if changes and "slots" in changes \
        and "faces" not in changes else changes
    if changes:
        # its type and data now: earlier corrections laid over
        _check_correction_fields(state, target, entry.type if entry is not None else etype, data_now, seen_as)
    if changes and ("player" in changes or "from" in changes):
        # names as the game spells them (a player may be typed in another case)
        changes = dict(changes)
        for key in ("player", "from"):
            if key not in changes:
                continue
            v = changes[key]
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                v = json.dumps(v)            # --set player=5 read as JSON: a player named "5"
            if not isinstance(v, str):
                raise BadInput(f"{key} must be a player's name, not {_shown(json.dumps(v), 40)} "
                               f"(players: {', '.join(p.name for p in state.players)})")
            changes[key] = state.player(v).name
    if changes and changes.get("faces") is not None:
        faces = changes["faces"]
        if isinstance(faces, str) or not isinstance(faces, (list, tuple)):
            raise BadInput(f"faces must be a list of face ids, got {faces!r}")
        for f in faces:
            if f is not None:
                state.tiles.face(str(f))
        beyond = faces_beyond_set(state, [None if f is None else str(f) for f in faces])
        if beyond:
            raise BadInput("; ".join(beyond) + ": no table shows that")
    if changes and ("slots" in changes or "faces" in changes):
        # the faces the move ends up with (a face left null, or a tile newly
        # named without one, takes the face the ledger records for it): no
        # more copies than the set holds (a break-test, session 55: a claim
        # corrected to emotion-2 + emotion-1, then its second tile to the
        # one Emotion Glass 2 of the deal, was paid +600)
        final = _faces_follow_slots(data_now, changes) if "slots" in changes and "faces" not in changes \
            else changes
        slots_final = changes.get("slots", data_now.get("slots"))
        faces_final = final.get("faces") if "faces" in final else data_now.get("faces")
        try:
            idx = _parse_slots(state, slots_final) if isinstance(slots_final, (list, tuple)) else []
        except (BadInput, TypeError, ValueError):
            idx = []
        if idx:
            given = list(faces_final) if isinstance(faces_final, (list, tuple)) and \
                len(faces_final) == len(idx) else [None] * len(idx)
            resolved = [str(f) if f is not None else state.faces[i] for f, i in zip(given, idx)]
            beyond = faces_beyond_set(state, resolved)
            if beyond:
                raise BadInput("; ".join(beyond) + ": no table shows that")
    if changes and "reason" in changes and changes["reason"] is not None:
        changes = {**changes, "reason": check_reason(changes["reason"])}
    if changes and changes.get("word") is not None:
        w = changes["word"]
        if not isinstance(w, str) or not w.isalpha() or not w.isascii() or len(w) > len(state.setup.layout):
            raise BadInput(f"word must be letters A-Z, at most {len(state.setup.layout)} of them, got "
                           f"{str(w)[:30]!r}{'...' if len(str(w)) > 30 else ''}")
    if changes:
        now = {**data_now, "type": entry.type if entry is not None else etype}
        if "slots" in changes and "faces" not in changes:      # (names as the game spells them by now)
            seen_as = _faces_follow_slots(data_now, changes)
        else:
            seen_as = changes
        if all(_plain(now.get(k)) == _plain(v) for k, v in seen_as.items()):
            raise BadInput(f"nothing to change: event #{target} already has "
                           f"{'; '.join(state._change_words(k, v) for k, v in changes.items())}")
    reason = check_reason(reason)
    data: dict = {"void": True} if void else {"changes": dict(changes or {})}
    if reason:
        data["reason"] = reason
    return Outcome((Pending("correction", data, ref=target),))


def _voided_by(state: GameState, target: int) -> str:
    """What makes event ``target`` (voided) not count and how to bring it
    back, as a refusal says it: ``"voided by #5: void #5 to bring it
    back"``, ``"taken back by undo #5: void #5 ..."``, or for an event the
    engine wrote after another (a game end after its claim) ``"it followed
    #3, taken back by undo #5: void #5 ..."``."""
    raw = {e.id: e for e in getattr(state, "raw", ())}
    status = getattr(state, "status", {})
    seen: set[int] = set()
    at, lead = target, ""
    while at not in seen:
        seen.add(at)
        by = next((e for e in reversed(list(raw.values())) if e.ref == at
                   and (e.type == "undo" or (e.type == "correction" and e.data.get("void")))
                   and status.get(e.id) != "voided"), None)
        if by is not None:
            how = f"taken back by undo #{by.id}" if by.type == "undo" else f"voided by #{by.id}"
            return f"{lead}{how}: void #{by.id} to bring it back"
        cause = raw[at].data.get("cause") if at in raw else None
        if not isinstance(cause, int) or isinstance(cause, bool):
            break
        lead, at = f"it followed #{cause}, ", cause
    return "it does not count"


def _faces_follow_slots(data_now: Mapping, changes: Mapping) -> Mapping:
    """``changes`` of a move's ``slots`` given without ``faces``, with the
    faces the move recorded moved along with their tiles: a tile still named
    keeps the face recorded for it, a tile newly named takes the face the
    ledger knows for it (None), and no face recorded at all is ``faces``
    null.  A break-test (session 49) corrected a claim's second tile and the
    new tile took the old tile's recorded face: a pair that does not match
    scored as a match, with no warning.  Worked out on replay
    (:func:`_effective`, over the data as earlier corrections left it),
    so voiding one of those counts too.  Slots that are not a list of
    slots are left for :func:`_check_correction_fields` to refuse."""
    old_slots, old_faces, new_slots = data_now.get("slots"), data_now.get("faces"), changes.get("slots")
    if not (isinstance(old_slots, (list, tuple)) and isinstance(old_faces, (list, tuple))
            and len(old_slots) == len(old_faces) and isinstance(new_slots, (list, tuple))):
        return changes
    try:
        recorded = {tuple(s): f for s, f in zip(old_slots, old_faces)}
        faces = [recorded.get(tuple(s)) for s in new_slots]
    except TypeError:               # not slots (a number, a nested object): refused later
        return changes
    return {**changes, "faces": faces if any(f is not None for f in faces) else None}


def followups(state: GameState, cause: Event, index=None, shuffler=None) -> list[Pending]:
    """Events the engine adds after ``cause`` was applied: the record of a game
    end, Zen Archives' automatic reshuffle, and Word Mahjong's "no playable
    moves" end (these two need the dictionary ``index``).  Each carries
    ``cause`` so that undoing the cause drops it too."""
    out: list[Pending] = []
    if cause.type in ("game_ended",) + NEEDS_REFEREE:
        return out
    dl, rt = state.deadline(), state.rel_t(cause.t)
    if not state.ended and dl is not None and rt is not None and rt > dl:
        # Word 2.6.2 "Every successful word submitted adds +5 seconds back to
        # your clock": the Ink Eraser taking a word back (2.5 "Reverses the
        # last completed match or word clear") takes its 5 s back, and the
        # countdown may then have run out before the undo's own time; the
        # time is up now, at the countdown's end (docs/RULES.md 4.6), not at
        # the next command (a break-test's undo said "turn: Ada" and the
        # next move was refused as "ended").  So does a referee's correction
        # voiding a word, or turning it into another type, past the
        # countdown's end (re-test: the void said "turn: Ada", show
        # "countdown 0 s left", and the next move was refused as ended)
        return [Pending("game_ended", {"reason": "time-up", "cause": cause.id})]
    if cause.type == "correction":
        return out
    if not state.ended and isinstance(state.rules, WordRules) and index is not None \
            and state.board.n_present and state.free_faces_known() and not state.free_pairs():
        free = [state.faces[i] for i in state.board.free_indices()]
        if not index.find(free, limit=1):
            if state.mode.kind == "endless":
                try:
                    # (named for the player whose move left the board stuck,
                    # else the player in turn: a rules audit, session 50,
                    # saw Bob's word's reshuffle named for Ann, seat 1)
                    names = [p.name for p in state.players]
                    who = cause.data.get("player") if cause.data.get("player") in names else None
                    who = who or state.whose_turn() or names[0]
                    res = resolve_reshuffle(state, who, auto=True, shuffler=shuffler, index=index)
                    pend = res.events[0]
                    after = check_pending(state, pend)
                    if not after.free_pairs() and not index.find(
                            [after.faces[i] for i in after.board.free_indices()], limit=1):
                        raise IllegalMove("no arrangement leaves a match free")
                except (BadInput, IllegalMove):
                    # no arrangement of what is left leaves a pair or a word
                    # free (letters once each that spell nothing, or tiles
                    # stacked on one another only): the game ends instead of
                    # the word being refused (docs/RULES.md 4.6)
                    out.append(Pending("game_ended", {"reason": "no-moves", "cause": cause.id}))
                else:
                    out.append(Pending(pend.type, dict(pend.data, cause=cause.id)))
            elif not state.reshuffle_allowed() or not state.reshuffle_can_help(index):
                # no Fan left, or none could leave a match (it would be spent
                # for nothing: docs/RULES.md 4.5)
                out.append(Pending("game_ended", {"reason": "no-moves", "cause": cause.id}))
    if state.ended and not state.end_recorded and not out:
        out.append(Pending("game_ended", {"reason": state.end_reason, "cause": cause.id,
                                          "scores": state.scores(), "winners": state.winners(),
                                          "result": state.result}))
    return out


def commit(state: GameState, pendings: Iterable[Pending], append: Callable[..., Event],
           t: float | None = None, index=None, shuffler=None) -> tuple[GameState, list[Event]]:
    """Write events through ``append`` and return the new state and the events written.

    Each event is checked against the state before it is written; after each
    one the engine's :func:`followups` are written too (with ``cause``).  The
    state is rebuilt by :func:`replay` after every event, so undo and
    corrections take effect at once.

    Args:
        state: the current state (from :func:`replay`).
        pendings: events to write, in order.
        append: ``append(type, data, ref, t) -> Event`` (e.g. a bound
            :meth:`companion.ledger.Ledger.append` for one game).
        t: the time of the events.
        index, shuffler: passed to :func:`followups`.

    Raises:
        BadInput / IllegalMove: an event would be refused; those before it are
        already written.
    """
    written: list[Event] = []
    events = list(state.raw)
    queue = [(p, 0) for p in pendings]
    while queue:
        pend, depth = queue.pop(0)
        check_pending(state, pend, t)
        ev = append(pend.type, pend.data, pend.ref, t)
        written.append(ev)
        events.append(ev)
        state = replay(events, words=state.words)
        if depth < 3:
            queue[0:0] = [(f, depth + 1) for f in followups(state, ev, index, shuffler)]
    return state, written


def clock_problem(state: GameState, t: float | None) -> str | None:
    """Whether a command at time ``t`` (seconds) fits a Word Mahjong game's
    clock, which scores (the timer, Word Sprint's countdown, the quills'
    focus time; docs/RULES.md 1.4): ``"own"`` when the game keeps its own
    clock (started at a small ``t``) and ``t`` is a wall-clock time,
    ``"wall"`` the other way round, ``"backwards"`` when ``t`` comes before
    the game's last event; None when it fits, and for the other games (Zen
    Archives among them: "zero timers or score counters", 2.6.3)."""
    if not isinstance(state.rules, WordRules) or not state.rules.scored(state.mode) or state.t0 is None \
            or t is None:
        return None
    own = state.t0 < WALL_CLOCK_FROM
    if own and t >= WALL_CLOCK_FROM:
        return "own"
    if not own and t < WALL_CLOCK_FROM:
        return "wall"
    if state.t_last is not None and t < state.t_last:
        return "backwards"
    return None


def resolve_end(state: GameState, reason: str, index=None) -> Outcome:
    """The referee ends the game now: a ``game_ended`` event ``by: referee``.

    ``abandoned`` is always allowed (no end scoring, no winner: docs/RULES.md
    1.3); ``no-moves`` only when the board shows it.  Beyond what replay
    checks (:meth:`GameState._on_game_ended`: no free matching pair, and in
    Mindful no Zen Reshuffle left, 2.8 "all Zen Reshuffle tokens have been
    used"), Word Mahjong's "No Playable Moves" needs no word the free tiles
    can spell (with the dictionary ``index``, when every free face is known)
    and no Lexicon Fan left (Word 2.8: "Zero free matching pairs or valid
    words remain on the board, and no reshuffle items are available").

    Raises:
        IllegalMove: the game is over, or the board does not show that end.
    """
    if state.ended:
        raise IllegalMove(f"the game has ended ({state.end_reason})")
    if reason in ("no-moves", "stalemate") and isinstance(state.rules, WordRules):
        if state.free_pairs():
            raise IllegalMove("free matching pairs remain")
        if index is not None and state.free_faces_known():
            found = index.find([state.faces[i] for i in state.board.free_indices()], limit=1)
            if found:
                raise IllegalMove(f"the free tiles still spell {found[0]}")
        if state.reshuffle_allowed() and state.reshuffle_can_help(index):
            raise IllegalMove("a Lexicon Fan (reshuffle) is left (Word 2.8: the defeat comes when "
                              "\"no reshuffle items are available\"): reshuffle, or end the game as abandoned")
    pend = Pending("game_ended", {"reason": reason, "by": "referee"})
    check_pending(state, pend)
    return Outcome((pend,))


def tick(state: GameState, t: float | None) -> list[Pending]:
    """A ``game_ended`` (time-up) event when the Word Sprint countdown has run
    out by time ``t``, else nothing."""
    dl = state.deadline()
    rt = state.rel_t(t)
    if state.ended or dl is None or rt is None or rt <= dl:
        return []
    return [Pending("game_ended", {"reason": "time-up"})]


# --------------------------------------------------------------------------- views


def state_json(events: Sequence, deal_lookup: Callable | None = None,
               words: frozenset[str] | None = None, last: int = LAST_EVENTS) -> dict:
    """The scoreboard's view of one game, from its events.

    Returns a dict with ``game_id``, ``variant``, ``mode``, ``layout``,
    ``players`` (``name``, ``seat``, ``score``, ``points``, ``tokens`` (Love/Candy:
    Crystal Harmony / Sugar Crystal tokens held; Mindful: Zen Focus tokens
    left; Word: None), ``rack``, ``melds``, ``bonus``, ``words``, ``hints``,
    ``reshuffles``, ``undos``), ``turn``, ``tiles_left``, ``tiles_total``,
    ``free_pairs_left`` (every free matching pair counted: 4 free tiles of
    one face are 6), ``free_matches_left`` (the pairs the free tiles give at
    once: those 4 are 2; what the pages show), ``timer`` (Word:
    elapsed or countdown, else None), ``last_events`` (oldest first, without
    :data:`QUIET_TYPES`: ``id``,
    ``type``, ``text``, ``player``, ``ref``, ``status``, ``t``, ``evidence``,
    ``reason``), ``needs_referee``, ``ended``, ``end_reason``, ``winner`` (a
    name, ``"team"``, or None on a tie or a loss), ``winners``, ``result``
    (stars, quills ...), ``team`` (cooperative score) and ``options``.

    Raises:
        BadInput: no ``game_started`` event.
    """
    st = replay(events, deal_lookup, words)
    players = []
    for p in st.players:
        if isinstance(st.rules, LoveRules):
            tokens: int | None = st.score(p)
        elif isinstance(st.rules, MindfulRules):
            tokens = p.focus_tokens
        else:
            tokens = None
        players.append({
            "name": p.name, "seat": p.seat, "score": st.score(p), "points": p.points, "tokens": tokens,
            "rack": list(p.rack), "melds": [{"kind": k, "faces": list(fs)} for k, fs in p.melds],
            "bonus": list(p.bonus), "words": list(p.words), "matches": p.matches,
            "hints": p.hints, "reshuffles": p.reshuffles, "undos": p.undos,
            "invalid": p.invalid, "penalties": p.penalties,
            "lines": [{"event": eid, "label": lab, "points": pts} for eid, lab, pts in p.lines]})
    raw = st.raw
    status = st.status
    last_events = []
    quiet = {e.id for e in raw if e.type in QUIET_TYPES}
    # (and the referee's corrections of them: they would point at an event the list leaves out)
    moves = [e for e in raw if e.type not in QUIET_TYPES and not (e.type == "correction" and e.ref in quiet)]
    for e in moves[-last:] if last else moves:
        ent = st.entries.get(e.id)
        stt = "rejected" if ent is not None and ent.status == "rejected" else status.get(e.id, "ok")
        text = ent.text if ent is not None else brief(e, st.tiles) + f" ({stt})"
        item = {"id": e.id, "type": e.type, "text": text, "player": e.data.get("player"),
                "ref": e.ref, "status": stt, "t": e.t}
        if "evidence" in e.data:
            item["evidence"] = e.data["evidence"]
        if "reason" in e.data:
            item["reason"] = e.data["reason"]
        last_events.append(item)
    winners = st.winners()
    timer = None
    if isinstance(st.rules, WordRules) and st.rules.scored(st.mode):
        now = st.end_t if st.ended else st.t_last
        el = st.rel_t(now)
        timer = {"kind": "countdown" if st.mode.kind == "timed" else "elapsed",
                 "start_t": st.t0, "elapsed": el,
                 "target_seconds": st.setup.options.get("target_seconds"), "running": not st.ended}
        dl = st.deadline()
        if dl is not None:
            timer["deadline_t"] = None if st.t0 is None else st.t0 + dl
            timer["remaining"] = None if el is None else max(0.0, dl - el)
    return {
        "game_id": st.game_id, "variant": st.setup.variant, "variant_title": st.rules.title,
        "mode": st.setup.mode, "mode_title": st.mode.title, "layout": st.layout.name,
        "players": players, "turn": st.whose_turn(), "tiles_left": st.board.n_present,
        "tiles_total": len(st.layout), "free_pairs_left": len(st.free_pairs()),
        "free_matches_left": st.free_matches(),
        # free tiles whose face the ledger does not know (the camera's game
        # records the faces it saw at the start): free_pairs_left is then a
        # lower bound
        "free_faces_unknown": sum(st.faces[i] is None for i in st.board.free_indices()), "timer": timer,
        "last_events": last_events,
        # each item with the tiles of it still off the table, unsettled
        # (docs/RULES.md 1.5 "Tiles off the table"; empty for most items)
        "needs_referee": [{**n, "off_table": [list(st.slot(i)) for i in st.off_table[n["id"]][0]]
                           if n["id"] in st.off_table and n["id"] not in st.off_table_closed else []}
                          for n in sorted(st.needs.values(), key=lambda x: x["id"])],
        "stuck": st.stuck(), "ended": st.ended, "end_reason": st.end_reason,
        "winner": winners[0] if len(winners) == 1 else None, "winners": winners,
        "result": st.result, "reshuffles": st.reshuffles,
        "team": {"score": st.score(st.players[0])} if st.coop else None,
        "options": st.setup.options, "turns_used": st.turns_used,
    }


def change_words(key: str, value, tiles: TileSet | None = None) -> str:
    """One corrected field as a table reads it: ``player Bo``, ``tiles
    7,4,0 and 11,2,1``, ``faces 3 Triple Hearts and 3 Triple Hearts`` (face
    ids as given without ``tiles``)."""
    def tile(x) -> str:
        try:
            return str(Slot(*map(int, x)))
        except (TypeError, ValueError):
            return str(x)

    def face(x) -> str:
        if x is None:
            return "the ledger's face"
        try:
            return tiles.face(str(x)).name if tiles is not None else str(x)
        except (KeyError, BadInput):
            return str(x)

    if key in ("slots", "faces") and isinstance(value, (list, tuple)):
        names = [tile(x) if key == "slots" else face(x) for x in value]
        word = "tiles" if key == "slots" else "faces"
        return f"{word} " + (" and ".join(names) if len(names) <= 2 else ", ".join(names))
    if key == "slot":
        return f"tile {tile(value)}"
    if key == "faces" and value is None:
        return "faces as the ledger knows them"
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return f"{key} {value}"
    return f"{key} {json.dumps(value, ensure_ascii=False)}"


def brief(e: Event, tiles: TileSet | None = None) -> str:
    """A plain-words line for an event from its data alone (used for events
    that do not count, e.g. undone ones); with the game's ``tiles`` a claim's
    faces are named as well (``Bo claimed Red Dragon + Red Dragon (16,7,4
    21,10,1)``).  A row whose fields have the wrong shape (another program
    wrote it) is named by its type and its data, never a traceback."""
    try:
        return _brief(e, tiles)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return f"{e.type}: {json.dumps(e.data, ensure_ascii=False, default=str)[:120]}"


def _brief(e: Event, tiles: TileSet | None = None) -> str:
    d = e.data
    who = d.get("player") or "the referee"
    slots = " ".join(str(Slot(*s)) for s in d.get("slots") or [] if isinstance(s, (list, tuple)))
    if e.type == "claim":
        names = []
        for f in d.get("faces") or []:
            try:
                names.append(tiles.face(f).name if tiles is not None and isinstance(f, str) else None)
            except BadInput:
                names.append(None)
        if names and all(names):
            return f"{who} claimed {' + '.join(names)} ({slots})"
        return f"{who} claimed {slots}"
    if e.type == "word":
        return f"{who} spelled {d.get('word')} with {slots}"
    if e.type == "invalid":
        return f"{who}: invalid attempt {slots}"
    if e.type in ("penalty", "touch"):
        return f"{who} touched {Slot(*d['slot']) if d.get('slot') else '?'}"
    if e.type == "undo":
        return f"{who} undid event #{e.ref}"
    if e.type == "correction":
        if d.get("void"):
            return f"referee voided event #{e.ref}"
        changes = d.get("changes") if isinstance(d.get("changes"), dict) else {}
        keys = "; ".join(change_words(str(k), v, tiles) for k, v in changes.items())
        return f"referee corrected event #{e.ref}" + (f": {keys}" if keys else "")
    if e.type == "game_ended":
        return f"game over: {d.get('reason')}"
    if e.type == "faces_seen":
        n = len(d.get("faces") or [])
        return f"faces seen on {n} tile{'s' if n != 1 else ''}"
    if e.type == "tiles_back":
        n = len(d.get("slots") or [])
        return f"{n} tile{'s' if n != 1 else ''} put back on the table (item #{d.get('item')})"
    return f"{e.type} by {who}"


def campaign_progress(games: Iterable[Sequence], player: str) -> dict:
    """Scholar's Path progress of ``player`` (Word Mahjong 2.6.1: "Ascend
    through academy ranks"; 2.8 "unlocking the next layout"), saved as the
    ledger's finished games: per level, the best quills and score, and the
    next level unlocked (one past the highest level cleared).  The name is
    matched in any case (the games may spell it differently).

    ``games`` counts the player's Scholar's Path games in the ledger
    (cleared or not) and ``scholars`` names every player of one, so that a
    name typed wrong, or a ledger of other games, can be told apart from a
    scholar at level 1.

    Args:
        games: each game's events.
    """
    levels: dict[int, dict] = {}
    shown = player
    played = 0
    scholars: dict[str, str] = {}       # every Scholar's Path player of the ledger, by folded name
    for evs in games:
        try:
            st = replay(evs)
        except BadInput:
            continue
        if st.setup.variant != "word" or st.mode.kind != "campaign":
            continue
        for n in st.setup.players:
            scholars.setdefault(name_key(n), n)
        if name_key(player) not in {name_key(n) for n in st.setup.players}:
            continue
        played += 1
        if not (st.ended and st.end_reason == "cleared"):
            continue
        shown = st.players[0].name
        lvl = int(st.setup.options.get("level", 1))
        score = st.score(st.players[0])
        q = st.result.get("quills", 0)
        cur = levels.get(lvl)
        if cur is None or (q, score) > (cur["quills"], cur["score"]):
            levels[lvl] = {"level": lvl, "layout": st.layout.name, "quills": q, "score": score,
                           "game_id": st.game_id}
    if shown == player:         # no level cleared: the name as a game spells it, not as typed
        shown = scholars.get(name_key(player), player)
    return {"player": shown, "levels": [levels[k] for k in sorted(levels)],
            "next_level": max(levels, default=0) + 1,
            "quills": sum(v["quills"] for v in levels.values()),
            "games": played, "scholars": sorted(scholars.values(), key=str.casefold)}
