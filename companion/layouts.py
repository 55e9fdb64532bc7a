"""Slots and layouts on the half-tile grid.

A slot is ``(x, y, z)`` on the half-tile grid used by KMahjongg and GNOME
Mahjongg (../shared/CONTRACT.md, "Physical standard"): a tile there covers
``[x, x+2) x [y, y+2)`` half-units on layer ``z``; ``z = 0`` lies on the mat.

The mat holds 18 x 8 tile cells, i.e. 36 x 16 half-units.

This module also owns the pure parsers of layout files (they take text, never
paths; :mod:`companion.layout_files` opens files): KMahjongg ``.layout``
(:func:`parse_kmahjongg`), GNOME Mahjongg ``.map`` (:func:`parse_gnome_map`,
:func:`gnome_map_names`), the mah project's ``boards.json``
(:func:`parse_mah_boards`) and the contract's layout JSON
(:func:`parse_layout_json`).  A malformed file raises
:class:`companion.errors.BadInput` with one line ``"FILE:LINE: fault"``.
"""

from __future__ import annotations

import re
import unicodedata

from dataclasses import dataclass, field
from typing import NamedTuple, Iterable

from companion import jsontext
from companion.errors import BadInput
from companion.wording import count
from companion.tiles import TILES_PER_SET

MAT_HALF_UNITS = (36, 16)  # (width, height) of the mat grid in half-tile units
#: layers a camera reads above the mat: 16 layers are a 320 mm stack, far
#: above any layout of the rule books or of KMahjongg and GNOME Mahjongg (at
#: most 5); a slot higher up is a broken layout file, not a game
MAT_MAX_LAYERS = 16


#: largest slot coordinate accepted from a file or the command line (half-units
#: and layers far beyond any table; keeps every coordinate a 32-bit integer)
COORD_MAX = 2**31 - 1
#: a layout file may hold at most this many slots (the rule books' layouts
#: hold 144 tiles, the largest KMahjongg, GNOME and mah layouts under 400):
#: a file with more is refused before it is expanded, so a run length of a
#: billion cannot fill the memory
MAX_SLOTS = 2048
#: and a file of several layouts (a boards.json, a .map of many maps) at most
#: this many in all (mah's boards.json holds a few hundred boards)
MAX_FILE_SLOTS = 200_000
_INT = re.compile(r"[+-]?[0-9]+")


class Slot(NamedTuple):
    """A tile position: ``x``, ``y`` in half-tile units, ``z`` the layer (0 = on the mat)."""

    x: int
    y: int
    z: int

    def __str__(self) -> str:
        return f"{self.x},{self.y},{self.z}"

    @classmethod
    def parse(cls, text: str) -> "Slot":
        """Parse ``"x,y,z"``.

        Raises:
            BadInput: not three comma-separated integers.
        """
        parts = text.replace(" ", "").split(",")
        try:
            if len(parts) != 3 or not all(_INT.fullmatch(p) for p in parts):
                raise ValueError          # (int() would also take "５", "٣" or "1_0")
            x, y, z = (int(p) for p in parts)
        except ValueError:
            raise BadInput(f"bad slot {text!r}: expected x,y,z integers") from None
        if max(abs(x), abs(y), abs(z)) > COORD_MAX:
            raise BadInput(f"bad slot {text!r}: coordinates must lie within +-{COORD_MAX}")
        return cls(x, y, z)


def overlaps(a: Slot, b: Slot) -> bool:
    """True when the footprints of ``a`` and ``b`` overlap (layers ignored)."""
    return abs(a.x - b.x) < 2 and abs(a.y - b.y) < 2


#: the longest layout name kept, in characters; a longer one (read from a
#: file) is cut to this length, ending in "..."
NAME_MAX = 80

#: format characters a name may keep: the zero-width non-joiner and joiner
#: that some scripts and emoji sequences need
_JOINERS = frozenset("\u200c\u200d")


def printable_name(name: str) -> str:
    """A layout name fit to print on one line of a terminal, a ledger or the
    scoreboard: control characters (an escape sequence's ESC, a bell, a
    newline, a tab), line and paragraph separators and format characters
    (a right-to-left override; the joiners ``U+200C`` and ``U+200D`` are
    kept) become spaces, runs of white space one space, the ends are
    stripped, and a name over :data:`NAME_MAX` characters is cut to that
    length, ending in ``"..."``.  The bytes of a file name that are not
    UTF-8 (held by Python as lone surrogates, ``"\\udcff"``) become the text
    ``\\xff``, so the name can be written anywhere (a ledger, a web page).
    A letter keeps at most 2 combining marks (accents).  A name with no
    letter, digit, punctuation or symbol left (only spaces, joiners or
    combining marks) is ``"layout"``.  Names read from files keep their words: ``"Cupid's
    Citadel"`` is unchanged.

    Args:
        name: the name as given (a file's own name, or its stem).

    Returns:
        The cleaned name (``str``).
    """
    def one(ch: str) -> str:
        cat = unicodedata.category(ch)
        if cat == "Cs":      # a byte of a file name that is not UTF-8 (Python's surrogateescape), or a lone half
            return f"\\x{ord(ch) - 0xdc00:02x}" if 0xdc80 <= ord(ch) <= 0xdcff else f"\\u{ord(ch):04x}"
        if cat in ("Cc", "Zl", "Zp") or (cat == "Cf" and ch not in _JOINERS):
            return " "
        return ch

    kept, marks = [], 0
    for ch in name:                      # at most 2 combining marks on a letter ("Zalgo" text stacks hundreds)
        marks = marks + 1 if unicodedata.combining(ch) else 0
        if marks <= 2:
            kept.append(one(ch))
    kept = " ".join("".join(kept).split())
    if len(kept) > NAME_MAX:
        kept = kept[:NAME_MAX - 3].rstrip() + "..."
    if not any(unicodedata.category(ch)[0] in "LNPS" for ch in kept):
        return "layout"                  # nothing a reader could see (joiners, accents alone)
    return kept


@dataclass(frozen=True)
class Layout:
    """A named set of slots.

    Attributes:
        name: layout name (``"turtle"``) or the file it came from, made
            printable on one line by :func:`printable_name` (no control
            characters, at most :data:`NAME_MAX` characters).
        slots: the slots in the layout's order (the order of ``recognize``'s
            output and of deals).
        source: where it came from (``"builtin"``, a file path), for messages.
    """

    name: str
    slots: tuple[Slot, ...]
    source: str = "builtin"
    index: dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", printable_name(self.name))
        object.__setattr__(self, "slots", tuple(Slot(*s) for s in self.slots))
        self.index.update({s: i for i, s in enumerate(self.slots)})

    def __len__(self) -> int:
        return len(self.slots)

    def slot_index(self, slot: Slot | Iterable[int]) -> int:
        """Index of ``slot`` in :attr:`slots`.

        Raises:
            BadInput: the slot is not part of this layout.
        """
        s = Slot(*slot)
        try:
            return self.index[s]
        except KeyError:
            raise BadInput(f"slot {s} is not in layout {self.name!r}") from None

    def to_json(self) -> dict:
        """The contract's layout JSON: ``{"name": ..., "slots": [[x, y, z], ...]}``."""
        return {"name": self.name, "slots": [list(s) for s in self.slots]}

    @property
    def depth(self) -> int:
        """Number of layers (max z + 1)."""
        return max((s.z for s in self.slots), default=-1) + 1

    def bounds(self) -> tuple[int, int, int, int]:
        """``(min_x, min_y, max_x + 2, max_y + 2)`` in half-units: the footprint's box
        (``(0, 0, 0, 0)`` for a layout without slots)."""
        if not self.slots:
            return 0, 0, 0, 0
        xs = [s.x for s in self.slots]
        ys = [s.y for s in self.slots]
        return min(xs), min(ys), max(xs) + 2, max(ys) + 2


@dataclass(frozen=True)
class LayoutReport:
    """What :func:`check_layout` found.

    Attributes:
        playable: even tile count and no overlap on a layer (the engine can play it).
        buildable: also every tile above layer 0 rests on tiles below
            (:func:`floating_slots`), the
            footprint fits the 36 x 16 half-unit mat and one set's 144 tiles
            suffice: it can be built on the mat.
        problems: one line per problem found.
    """

    playable: bool
    buildable: bool
    problems: tuple[str, ...]


def floating_slots(slots: Iterable[Slot]) -> list[Slot]:
    """Slots above layer 0 whose tile would not rest on the layer below.

    A tile at ``(x, y, z)`` covers four quarter cells ``(x+i, y+j)``, i, j in
    {0, 1}; it rests when the centre of its footprint lies inside the convex
    hull of the quarters that lie on some tile of layer ``z - 1``, its centre
    of mass then over its support: all four, any three (the quarter-overhangs
    of GNOME's Taipei, Red Dragon and Confounding Cross), or two diagonal ones.
    Two side by side hold it on an edge (it tips), one or none not at all.
    Before session 39 every quarter had to be supported, and those three
    layouts were called not buildable.
    """
    slots = list(slots)
    cells: set[tuple[int, int, int]] = set()
    for s in slots:
        for i in (0, 1):
            for j in (0, 1):
                cells.add((s.x + i, s.y + j, s.z))
    out = []
    for s in slots:
        if s.z == 0:
            continue
        held = [(i, j) for i in (0, 1) for j in (0, 1) if (s.x + i, s.y + j, s.z - 1) in cells]
        if len(held) >= 3 or (len(held) == 2 and held[0][0] != held[1][0] and held[0][1] != held[1][1]):
            continue
        out.append(s)
    return out


def check_layout(layout: Layout) -> LayoutReport:
    """Validate a layout: playable (even count, no overlap on one layer, no
    duplicate slot) and buildable on the mat (supported tiles, fits the mat,
    at most :data:`companion.tiles.TILES_PER_SET` tiles).

    The footprint is judged after shifting it to the mat's origin, so a layout
    fits when its box is at most 36 x 16 half-units.
    """
    problems: list[str] = []
    slots = layout.slots
    if len(slots) == 0:
        problems.append("layout has no tiles")
    if len(slots) % 2:
        problems.append(f"odd number of tiles ({len(slots)})")
    if len(set(slots)) != len(slots):
        problems.append("a slot appears twice")
    if any(s.z < 0 for s in slots):
        problems.append("negative layer")
    clash = _overlap_in(slots)
    if clash:
        problems.append(f"tiles {clash[0]} and {clash[1]} overlap on layer {clash[0].z}")
    playable = not problems
    build_problems: list[str] = []
    if slots:
        floating = floating_slots(slots)
        if floating:
            build_problems.append(f"{count(len(floating), 'tile')} not resting on tiles below, e.g. {floating[0]}")
        x0, y0, x1, y1 = layout.bounds()
        if x1 - x0 > MAT_HALF_UNITS[0] or y1 - y0 > MAT_HALF_UNITS[1]:
            build_problems.append(
                f"footprint {x1 - x0}x{y1 - y0} half-units is larger than the mat's "
                f"{MAT_HALF_UNITS[0]}x{MAT_HALF_UNITS[1]}")
        if len(slots) > TILES_PER_SET:
            build_problems.append(f"needs {len(slots)} tiles; one set holds {TILES_PER_SET}")
    return LayoutReport(playable, playable and not build_problems, tuple(problems + build_problems))


def _overlap_in(slots) -> tuple[Slot, Slot] | None:
    """The first two of ``slots`` whose footprints overlap on one layer, or None."""
    by_layer: dict[int, list[Slot]] = {}
    for s in slots:
        by_layer.setdefault(s.z, []).append(s)
    return _first_overlap(by_layer)


def _first_overlap(by_layer: dict[int, list[Slot]]) -> tuple[Slot, Slot] | None:
    for layer in by_layer.values():
        seen: dict[tuple[int, int], Slot] = {}
        for s in layer:
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    other = seen.get((s.x + dx, s.y + dy))
                    if other is not None and other != s:
                        return other, s
            seen[(s.x, s.y)] = s
    return None


def refuse_overlap(layout: Layout, where: str = "") -> None:
    """Refuse a layout two of whose tiles overlap on one layer: no table
    holds it, and the free rule (which tiles pinch or cover which) means
    nothing there.  An odd count is let through (``free`` answers for any
    board that can stand).

    Raises:
        BadInput: ``"WHERElayout 'NAME' cannot stand: tiles A and B overlap
            on layer Z"``.
    """
    clash = _overlap_in(layout.slots)
    if clash:
        a, b = clash
        raise BadInput(f"{where}layout {layout.name!r} cannot stand: tiles {a} and {b} overlap on layer {a.z}")


def check_on_mat(layout: Layout) -> None:
    """Refuse a layout a camera cannot read on the printed mat: one without
    slots, one with a slot outside the mat's grid of
    :data:`MAT_HALF_UNITS` half-tile units (x from 0 to 34, y from 0 to 14;
    ../shared/CONTRACT.md, "Physical standard"), one with a slot below
    the mat or above layer ``MAT_MAX_LAYERS - 1``, or one no table can
    hold: a slot given twice, or two tiles overlapping on one layer (an odd
    count, or a tile resting on part of the one below, can stand, and some
    KMahjongg and GNOME layouts have the latter).

    Raises:
        BadInput: one line naming the layout and the first slot off the grid
            (or the two slots that overlap).
    """
    if not layout.slots:
        raise BadInput(f"layout {layout.name!r} has no slots")
    w, h = MAT_HALF_UNITS
    for s in layout.slots:
        if not (0 <= s.x <= w - 2 and 0 <= s.y <= h - 2):
            raise BadInput(f"layout {layout.name!r} does not fit the mat: slot ({s.x}, {s.y}, {s.z}) lies outside "
                           f"its {w} x {h} half-tile grid (x 0-{w - 2}, y 0-{h - 2})")
        if not 0 <= s.z < MAT_MAX_LAYERS:
            raise BadInput(f"layout {layout.name!r} does not fit the mat: slot ({s.x}, {s.y}, {s.z}) lies on layer "
                           f"{s.z}, and a camera reads layers 0-{MAT_MAX_LAYERS - 1} only")
    seen: set[Slot] = set()
    for s in layout.slots:
        if s in seen:
            raise BadInput(f"layout {layout.name!r} cannot stand on the mat: slot ({s.x}, {s.y}, {s.z}) "
                           "is given twice")
        seen.add(s)
    clash = _overlap_in(layout.slots)
    if clash:
        a, b = clash
        raise BadInput(f"layout {layout.name!r} cannot stand on the mat: tiles ({a.x}, {a.y}, {a.z}) and "
                       f"({b.x}, {b.y}, {b.z}) overlap on layer {a.z}")


def shifted_to_origin(layout: Layout) -> Layout:
    """The same layout moved so its footprint's box starts at (0, 0), centred on the mat
    when it fits (whole half-units)."""
    x0, y0, x1, y1 = layout.bounds()
    w, h = x1 - x0, y1 - y0
    ox = max(0, (MAT_HALF_UNITS[0] - w) // 2)
    oy = max(0, (MAT_HALF_UNITS[1] - h) // 2)
    return Layout(layout.name, tuple(Slot(s.x - x0 + ox, s.y - y0 + oy, s.z) for s in layout.slots),
                  layout.source)


# ---------------------------------------------------------------------------
# Parsers.  Pure: they take a file's text and the name to show in messages
# (``source``, usually the path); companion.layout_files opens the files.
# Every fault is a BadInput of one line: "SOURCE:LINE: fault".
# ---------------------------------------------------------------------------

KMAHJONGG_MAGIC = ("kmahjongg-layout-v1.0", "kmahjongg-layout-v1.1")
"""First line of a KMahjongg ``.layout`` file (KMahjongg ``BoardLayout``)."""

KMAHJONGG_V10_SIZE = (32, 16, 5)
"""(width, height, depth) of a v1.0 board, fixed by KMahjongg (no header)."""

_KM_CHARS = frozenset(".1234")  # empty, and a tile's top-left, top-right, bottom-right, bottom-left


def _check_count(n: int, source: str, line: int | None, what: str = "the layout", limit: int = MAX_SLOTS) -> None:
    """Refuse a layout of more than :data:`MAX_SLOTS` slots, or a file of more
    than :data:`MAX_FILE_SLOTS` in all (before expanding them)."""
    if n > limit:
        raise _fault(source, line, f"{what} would hold more than {limit:,} slots ({n:,} at least): "
                                   "not a tile layout")


def _fault(source: str, line: int | None, text: str) -> BadInput:
    where = f"{source}:{line}" if line is not None else source
    return BadInput(f"{where}: {text}")


def _check_name(name: str, source: str, line: int | None, what: str = "\"name\"") -> None:
    """Refuse a layout name holding a lone surrogate (a JSON ``"\\ud800"``
    escape without its pair): it is no character, no output can print it,
    and the layout would fail later wherever its name is shown.

    Raises:
        BadInput: ``"SOURCE:LINE: ... holds \\ud800 ..."``.
    """
    bad = next((ch for ch in name if "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:
        raise _fault(source, line, f"{what} holds \\u{ord(bad):04x}, half of a UTF-16 surrogate pair "
                                   "and no character on its own; give a name of real characters")


def _stem(source: str) -> str:
    base = source.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base else base


def parse_kmahjongg(text: str, source: str = "<layout>", name: str | None = None) -> Layout:
    """Parse a KMahjongg ``.layout`` file (format versions 1.0 and 1.1).

    Format (KMahjongg, ``BoardLayout``; layouts/*.layout): the first line is the
    magic ``kmahjongg-layout-v1.0`` or ``-v1.1``; lines starting with ``#`` are
    comments.  Version 1.1 sets the board size with header lines ``wN``,
    ``hN`` (width, height in half-tile units, KMahjongg calls them "quarter
    tiles") and ``dN`` (layers); version 1.0 has no header and a fixed
    32 x 16 x 5 board.  Then come ``h * d`` rows of ``w`` characters, layer 0
    first: ``.`` empty, and each tile drawn as ``12`` over ``43`` (``1`` its
    top-left half-cell; like KMahjongg, only the ``1`` marks make tiles, the
    other corners are not cross-checked).  Blank lines are ignored.

    Slots keep the file's coordinates: ``x`` = column of the ``1``, ``y`` = its
    row within the layer, ``z`` = the layer.  Slot order: layer, then row,
    then column.

    Args:
        text: the file's text.
        source: the file's name for messages.
        name: layout name; defaults to the file's stem.

    Raises:
        BadInput: ``"SOURCE:LINE: fault"`` for a missing magic line, a bad
            header, a row of the wrong width, a character other than ``.1234``,
            a tile sticking out of the board, or the wrong number of rows.
    """
    lines = text.splitlines()
    if not lines or lines[0].strip().lstrip("\ufeff") not in KMAHJONGG_MAGIC:
        first = lines[0].strip()[:40] if lines else ""
        raise _fault(source, 1, f"not a KMahjongg layout: first line {first!r} is not "
                                f"{KMAHJONGG_MAGIC[0]!r} or {KMAHJONGG_MAGIC[1]!r}")
    v11 = lines[0].strip().lstrip("\ufeff") == KMAHJONGG_MAGIC[1]
    w, h, d = KMAHJONGG_V10_SIZE
    rows: list[tuple[int, str]] = []  # (line number, row text)
    seen_header: set[str] = set()
    for lineno, raw in enumerate(lines[1:], start=2):
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        if v11 and line[0] in "whd" and not rows:
            try:
                value = int(line[1:])
                if value <= 0:
                    raise ValueError
            except ValueError:
                raise _fault(source, lineno, f"bad header line {line[:20]!r}: expected "
                                             f"{line[0]} and a positive integer") from None
            if line[0] == "w":
                w = value
            elif line[0] == "h":
                h = value
            else:
                d = value
            seen_header.add(line[0])
            continue
        rows.append((lineno, line))
    if v11 and seen_header != {"w", "h", "d"}:
        lacking = sorted({"w", "h", "d"} - seen_header)
        raise _fault(source, 1, f"version 1.1 layout without header {'line' if len(lacking) == 1 else 'lines'} "
                                f"{', '.join(lacking)}")
    if len(rows) != h * d:
        at = rows[h * d][0] if len(rows) > h * d else (rows[-1][0] if rows else len(lines))
        raise _fault(source, at, f"{count(len(rows), 'board row')}, expected {h * d} "
                                 f"({count(d, 'layer')} of {count(h, 'row')})")
    grid: list[str] = []
    for lineno, line in rows:
        if len(line) != w:
            raise _fault(source, lineno, f"row has {len(line)} characters, expected {w}")
        for col, ch in enumerate(line):
            if ch not in _KM_CHARS:
                raise _fault(source, lineno, f"unexpected character {ch!r} in column {col + 1}")
        grid.append(line)
    # grid[z * h + y][x].  Like KMahjongg, only the "1" marks make tiles; the
    # "2", "3", "4" corners are drawing aids and are not cross-checked
    # (castle.layout and crab.layout draw one tile as "12" over "32").
    slots: list[Slot] = []
    for z in range(d):
        for y in range(h):
            row = grid[z * h + y]
            for x, ch in enumerate(row):
                if ch != "1":
                    continue
                if x + 1 >= w or y + 1 >= h:
                    raise _fault(source, rows[z * h + y][0],
                                 f"tile at column {x + 1} of layer {z} sticks out of the "
                                 f"{w} x {h} board")
                slots.append(Slot(x, y, z))
                if len(slots) > MAX_SLOTS:
                    _check_count(len(slots), source, rows[z * h + y][0])
    return Layout(name if name is not None else _stem(source), tuple(slots), source)


# --- GNOME Mahjongg .map ----------------------------------------------------

_GNOME_SHAPES = {"row", "column", "col", "block", "tile"}


@dataclass
class _GnomeMap:
    name: str
    line: int
    slots: list[tuple[Slot, int]]  # (slot, line)
    scorename: str = ""            # GNOME's short name ("easy" for "Turtle"), also accepted by --map-name


def _blank_doctype(body: str, source: str) -> str:
    """``body`` with a bare document type declaration in its prolog
    (``<!DOCTYPE mahjongg>``, also with a ``SYSTEM`` or ``PUBLIC`` id, which
    is never fetched) blanked out, newlines kept so line numbers stay true:
    the parser reads the text inside a synthetic root, where a DOCTYPE is not
    allowed.  A DOCTYPE anywhere else stays malformed XML.

    Raises:
        BadInput: the DOCTYPE has an internal subset (``[...]``: entity or
            element declarations), which is not accepted.
    """
    i, n = 0, len(body)
    while True:                     # past blanks, comments and processing instructions
        while i < n and body[i] in " \t\r\n":
            i += 1
        if body.startswith("<!--", i) or body.startswith("<?", i):
            close = "-->" if body.startswith("<!--", i) else "?>"
            end = body.find(close, i + 2)
            if end < 0:
                return body         # unterminated: the parser says so
            i = end + len(close)
        else:
            break
    if not body.startswith("<!DOCTYPE", i):
        return body
    j, quote = i + len("<!DOCTYPE"), None
    while j < n:
        c = body[j]
        if quote is not None:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "[":
            raise _fault(source, body.count("\n", 0, j) + 1,
                         "a DOCTYPE with an internal subset ([...]: entity or element declarations) "
                         "is not accepted; remove the [...] part or the whole DOCTYPE line")
        elif c == ">":
            return body[:i] + "".join(ch if ch == "\n" else " " for ch in body[i:j + 1]) + body[j + 1:]
        j += 1
    return body                     # unterminated: the parser says so


def _gnome_maps(text: str, source: str) -> list[_GnomeMap]:
    """All maps of a GNOME Mahjongg ``.map`` text, slots in half-tile units."""
    import xml.parsers.expat  # stdlib, string parsing only

    body = text.lstrip("\ufeff")
    if body.lstrip().startswith("<?xml"):
        start = body.index("<?xml")
        end = body.find("?>", start)
        if end < 0:
            raise _fault(source, 1, "unterminated XML declaration")
        # blank the declaration out (keeping newlines) so line numbers stay true
        decl = body[start:end + 2]
        body = body[:start] + "".join(c if c == "\n" else " " for c in decl) + body[end + 2:]
    body = _blank_doctype(body, source)
    parser = xml.parsers.expat.ParserCreate()
    maps: list[_GnomeMap] = []
    state = {"map": None, "layer_z": 0, "in_layer": False}

    def num(tag: str, attrs: dict, key: str, line: int, default: float | None = None) -> float:
        raw = attrs.get(key)
        if raw is None:
            if default is not None:
                return default
            raise _fault(source, line, f"<{tag}> needs attribute {key!r}")
        # plain decimal numbers as GNOME writes them ("3", "3.5", "-1"):
        # Python's float() also takes "1_0" and other scripts' digits ("٣")
        if not _GNOME_NUMBER.fullmatch(raw.strip()):
            raise _fault(source, line, f"<{tag}> attribute {key}={raw!r} is not a number")
        try:
            value = float(raw)
        except ValueError:
            raise _fault(source, line, f"<{tag}> attribute {key}={raw!r} is not a number") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise _fault(source, line, f"<{tag}> attribute {key}={raw!r} is not a number")
        return value

    def half(tag: str, attrs: dict, key: str, line: int) -> int:
        value = num(tag, attrs, key, line) * 2
        if abs(value) > COORD_MAX:      # (also 1e308, whose double overflows)
            raise _fault(source, line, f"<{tag}> attribute {key}={attrs[key]!r}: positions must lie "
                                       f"within +-{COORD_MAX // 2} tiles")
        if value != int(value):
            raise _fault(source, line, f"<{tag}> attribute {key}={attrs[key]!r} is not a whole "
                                       "or half tile position")
        return int(value)

    def layer_of(tag: str, attrs: dict, line: int) -> int:
        z = num(tag, attrs, "z", line, default=float(state["layer_z"]))
        if z != int(z) or z < 0:
            raise _fault(source, line, f"<{tag}> layer z={attrs.get('z')!r} is not a whole "
                                       "number >= 0")
        if z > COORD_MAX:
            raise _fault(source, line, f"<{tag}> layer z={attrs.get('z')!r}: layers must lie "
                                       f"within 0-{COORD_MAX}")
        return int(z)

    def start(tag: str, attrs_in: dict) -> None:
        line = parser.CurrentLineNumber
        tag = tag.lower()
        attrs = {k.lower(): v for k, v in attrs_in.items()}
        if tag == "map":
            if state["map"] is not None:
                raise _fault(source, line, "<map> inside another <map>")
            name = attrs.get("name")
            if not name:
                raise _fault(source, line, "<map> needs attribute 'name'")
            state["map"] = _GnomeMap(name, line, [], attrs.get("scorename") or "")
            return
        if tag == "layer":
            if state["map"] is None:
                raise _fault(source, line, "<layer> outside a <map>")
            state["layer_z"] = layer_of(tag, attrs, line) if "z" in attrs else 0
            return
        if tag not in _GNOME_SHAPES:
            return  # <mahjongg> and unknown elements carry no tiles
        m = state["map"]
        if m is None:
            raise _fault(source, line, f"<{tag}> outside a <map>")
        z = layer_of(tag, attrs, line)
        if tag == "tile":
            _check_count(len(m.slots) + 1, source, line)
            xs = [half(tag, attrs, "x", line)]
            ys = [half(tag, attrs, "y", line)]
        elif tag == "row":
            x1, x2 = half(tag, attrs, "left", line), half(tag, attrs, "right", line)
            if x2 < x1:
                raise _fault(source, line, f"<row> left={attrs['left']} is right of "
                                           f"right={attrs['right']}")
            _check_count(len(m.slots) + len(range(x1, x2 + 1, 2)), source, line)
            xs, ys = list(range(x1, x2 + 1, 2)), [half(tag, attrs, "y", line)]
        elif tag in ("column", "col"):
            y1, y2 = half(tag, attrs, "top", line), half(tag, attrs, "bottom", line)
            if y2 < y1:
                raise _fault(source, line, f"<{tag}> top={attrs['top']} is below "
                                           f"bottom={attrs['bottom']}")
            _check_count(len(m.slots) + len(range(y1, y2 + 1, 2)), source, line)
            xs, ys = [half(tag, attrs, "x", line)], list(range(y1, y2 + 1, 2))
        else:  # block
            x1, x2 = half(tag, attrs, "left", line), half(tag, attrs, "right", line)
            y1, y2 = half(tag, attrs, "top", line), half(tag, attrs, "bottom", line)
            if x2 < x1 or y2 < y1:
                raise _fault(source, line, "<block> has left > right or top > bottom")
            _check_count(len(m.slots) + len(range(x1, x2 + 1, 2)) * len(range(y1, y2 + 1, 2)), source, line)
            xs, ys = list(range(x1, x2 + 1, 2)), list(range(y1, y2 + 1, 2))
        state["total"] = state.get("total", 0) + len(xs) * len(ys)
        _check_count(state["total"], source, line, "the file", MAX_FILE_SLOTS)
        for x in xs:
            for y in ys:
                m.slots.append((Slot(x, y, z), line))

    def end(tag: str) -> None:
        tag = tag.lower()
        if tag == "map":
            maps.append(state["map"])
            state["map"] = None
        elif tag == "layer":
            state["layer_z"] = 0

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    # a synthetic root lets several top-level <mahjongg> elements through
    # (GNOME's g_markup accepts them); it adds no line.
    try:
        parser.Parse("<companion-root>", False)
        parser.Parse(body, False)
        parser.Parse("</companion-root>", True)
    except xml.parsers.expat.ExpatError as exc:
        msg = xml.parsers.expat.ErrorString(exc.code)
        raise _fault(source, exc.lineno, f"malformed XML: {msg}") from None
    if not maps:
        raise _fault(source, None, "no <map> element found")
    for m in maps:
        seen: dict[Slot, int] = {}
        for s, line in m.slots:
            if s in seen:
                raise _fault(source, line, f"map {m.name!r}: slot {s} given twice "
                                           f"(first on line {seen[s]})")
            seen[s] = line
    return maps


def gnome_map_names(text: str, source: str = "<map>") -> list[str]:
    """Names of the maps in a GNOME Mahjongg ``.map`` text, in file order.

    Raises:
        BadInput: malformed file (see :func:`parse_gnome_map`).
    """
    return [m.name for m in _gnome_maps(text, source)]


def parse_gnome_map(text: str, source: str = "<map>", map_name: str | None = None) -> Layout:
    """Parse one map of a GNOME Mahjongg ``.map`` file.

    Format (GNOME Mahjongg ``src/map.vala``, ``MapLoader``; data/maps/mahjongg.map):
    g_markup XML; ``<map name=...>`` holds ``<layer z>`` groups and the shapes
    ``<tile x y>``, ``<row y left right>``, ``<column x top bottom>`` (also
    ``<col>``) and ``<block left right top bottom>``, each with an optional
    ``z`` (default: the enclosing layer's, else 0).  Positions are in whole
    tiles and may be halves (``3.5``); ranges include both ends, one tile per
    whole step.  Slots are returned in half-tile units (GNOME coordinate x 2),
    in file order, keeping the file's origin.

    Args:
        text: the file's text.
        source: the file's name for messages.
        map_name: which map when the file holds several, by its ``name`` or
            else its GNOME ``scorename`` ("Turtle" or "easy"; case and
            spacing are ignored); optional when it holds one.

    Raises:
        BadInput: ``"SOURCE:LINE: fault"``: malformed XML, a shape outside a
            map, a missing or non-numeric attribute, a position that is not a
            whole or half tile, a slot given twice; or several maps and no
            (or an unknown) ``map_name``, listing the names; or a
            ``map_name`` that names several maps.
    """
    maps = _gnome_maps(text, source)
    if map_name is None:
        if len(maps) > 1:
            names = ", ".join(repr(m.name) for m in maps)
            raise _fault(source, None, f"holds {len(maps)} maps, choose one with --map-name: {names}")
        m = maps[0]
    else:
        want = normalise_name(map_name)
        found = ([m for m in maps if normalise_name(m.name) == want]
                 or [m for m in maps if m.scorename and normalise_name(m.scorename) == want]
                 or [m for m in maps if without_the(normalise_name(m.name)) == without_the(want)])
        if not found:
            names = ", ".join(repr(m.name) for m in maps)
            raise _fault(source, None, f"no map named {map_name!r}; the maps are: {names}")
        if len(found) > 1:
            names = ", ".join(dict.fromkeys(repr(m.name) for m in found))
            lines = [m.line for m in found]
            where = f" (lines {', '.join(map(str, lines))})" if len(set(lines)) == len(lines) else ""
            raise _fault(source, None, f"holds {len(found)} maps named {names}{where}, so --map-name "
                                       f"{map_name!r} cannot tell them apart; give each map its own name")
        m = found[0]
    return Layout(m.name, tuple(s for s, _ in m.slots), source)


#: a number in a GNOME map's attribute: ASCII digits, an optional sign,
#: point and exponent (``"3"``, ``"3.5"``, ``"-1"``, ``"1e1"``)
_GNOME_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def normalise_name(name: str) -> str:
    """Fold a layout name for lookups: case folded, and every character that
    is not a letter or a digit dropped (spaces, hyphens, underscores,
    apostrophes, brackets, dots ...): ``"Cupid's Citadel"``,
    ``"cupids-citadel"`` and ``"cupidscitadel"`` all give
    ``"cupidscitadel"``; a full-width ``"ＴＵＲＴＬＥ"`` is NFKC-folded to
    ``"turtle"``."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", name).casefold() if ch.isalnum())


def without_the(folded: str) -> str:
    """A :func:`normalise_name` result less a leading "the" (``"theturtle"``
    -> ``"turtle"``): names are compared this way when they do not match as
    they are (README: "a leading 'The' ... do[es] not matter")."""
    return folded[3:] if folded.startswith("the") and len(folded) > 3 else folded


# --- JSON: the contract's layout and mah's boards.json ----------------------

def _json_fault(source: str, exc) -> BadInput:
    return _fault(source, exc.lineno, f"malformed JSON: {exc.msg} (column {exc.colno})")


def _array_items(text: str, pos: int, source: str) -> tuple[list[tuple[object, int]], int]:
    """Decode the JSON array starting at ``text[pos] == '['`` element by element.

    Returns ``([(value, offset), ...], end)``; offsets let messages name lines.
    """
    import json

    dec = json.JSONDecoder()
    ws = " \t\r\n"
    assert text[pos] == "["
    pos += 1
    items: list[tuple[object, int]] = []
    while True:
        while pos < len(text) and text[pos] in ws:
            pos += 1
        if pos < len(text) and text[pos] == "]":
            return items, pos + 1
        if items:
            if pos >= len(text) or text[pos] != ",":
                raise _fault(source, text.count("\n", 0, pos) + 1, "malformed JSON: expected ',' or ']'")
            pos += 1
            while pos < len(text) and text[pos] in ws:
                pos += 1
        try:
            value, end = jsontext.raw_decode(dec, text, pos)
        except json.JSONDecodeError as exc:
            raise _json_fault(source, exc) from None
        items.append((value, pos))
        pos = end


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _member_offset(text: str, key: str) -> int | None:
    """Where the value of the top-level object's member ``key`` starts in
    the JSON ``text`` (its last such member, the one ``json`` keeps), or
    None when the text holds no such member (or is not such an object)."""
    import json

    dec = json.JSONDecoder()
    ws = " \t\r\n"
    pos, n, found = (1 if text.startswith("\ufeff") else 0), len(text), None

    def skip(p: int) -> int:
        while p < n and text[p] in ws:
            p += 1
        return p

    try:
        pos = skip(pos)
        if pos >= n or text[pos] != "{":
            return None
        pos += 1
        while True:
            pos = skip(pos)
            if pos >= n or text[pos] != '"':
                return found
            name, pos = jsontext.raw_decode(dec, text, pos)
            pos = skip(pos)
            if pos >= n or text[pos] != ":":
                return found
            pos = skip(pos + 1)
            if name == key:
                found = pos
            _, pos = jsontext.raw_decode(dec, text, pos)
            pos = skip(pos)
            if pos >= n or text[pos] != ",":
                return found
            pos += 1
    except json.JSONDecodeError:
        return found


def parse_layout_json(text: str, source: str = "<json>") -> Layout:
    """Parse the contract's layout JSON ``{"name": "...", "slots": [[x, y, z], ...]}``
    (../shared/CONTRACT.md, "Layout").  Slots keep their order and coordinates.

    Raises:
        BadInput: ``"SOURCE:LINE: fault"``: malformed JSON, not an object, no
            ``slots`` list, a slot that is not three integers (z >= 0), a slot
            given twice.
    """
    import json

    try:
        doc = jsontext.loads(text)
    except json.JSONDecodeError as exc:
        raise _json_fault(source, exc) from None
    if not isinstance(doc, dict):
        raise _fault(source, 1, "layout JSON must be an object with \"name\" and \"slots\"")
    name = doc.get("name", _stem(source))
    if not isinstance(name, str) or not name:
        raise _fault(source, 1, "\"name\" must be a non-empty string")
    if "name" in doc:
        _check_name(name, source, 1)
    if not isinstance(doc.get("slots"), list):
        if isinstance(doc.get("tiles"), list) and "variant" in doc:
            # what `companion deal --json` prints: its layout is in it, as slots of the tiles
            raise _fault(source, 1, "this is a deal (\"variant\" and \"tiles\"), not a layout: give it as "
                                    "a deal (companion game start --deal FILE, companion solve FILE), or its "
                                    "layout by name (\"layout\" in it)")
        raise _fault(source, 1, "layout JSON needs a \"slots\" list of [x, y, z]")
    _check_count(len(doc["slots"]), source, 1)
    # the slots are the decoded document's (the last "slots" of the top-level
    # object, as json keeps it); the text is searched only for their lines
    # (a first "slots" found anywhere in the text, an extra field's
    # {"slots": [...]} before the real one, once gave the layout its slots)
    slots_at = _member_offset(text, "slots")
    items = [(v, off) for v, (_, off) in zip(doc["slots"], _array_items(text, slots_at, source)[0])] \
        if slots_at is not None else [(v, 0) for v in doc["slots"]]
    slots: list[Slot] = []
    seen: dict[Slot, int] = {}
    for k, (v, off) in enumerate(items):
        line = _line_at(text, off)
        if not (isinstance(v, list) and len(v) == 3 and all(_is_int(c) for c in v)) or v[2] < 0:
            raise _fault(source, line, f"slot {k} is {json.dumps(v)[:40]}, expected [x, y, z] "
                                       "integers with z >= 0")
        if any(abs(c) > COORD_MAX for c in v):
            raise _fault(source, line, f"slot {k} is {json.dumps(v)[:40]}: coordinates must lie "
                                       f"within +-{COORD_MAX}")
        s = Slot(*v)
        if s in seen:
            raise _fault(source, line, f"slot {s} given twice (first on line {seen[s]})")
        seen[s] = line
        slots.append(s)
    return Layout(name, tuple(slots), source)


def parse_mah_boards(text: str, source: str = "boards.json") -> list[Layout]:
    """Parse the mah project's ``boards.json`` (github.com/ffalt/mah,
    src/assets/data/boards.json): a list of ``{"id", "name", "cat", "map"}``.

    ``map`` is ``[[z, [[y, cells], ...]], ...]`` with ``cells`` an ``x`` or a
    list of ``x`` and ``[x0, count]`` (``count`` tiles at ``x0, x0+2, ...``);
    coordinates in half-tile units.  Each board becomes a Layout named by its
    ``name``; slots in file order.

    Raises:
        BadInput: ``"SOURCE:LINE: fault"`` naming the board, for malformed
            JSON or any entry not of that shape, or a slot given twice.
    """
    import json

    start = len(text) - len(text.lstrip(" \t\r\n\ufeff"))
    if start >= len(text) or text[start] != "[":
        try:
            jsontext.loads(text)
        except json.JSONDecodeError as exc:
            raise _json_fault(source, exc) from None
        raise _fault(source, 1, "boards.json must be a list of boards")
    items, end = _array_items(text, start, source)
    if text[end:].strip():
        raise _fault(source, _line_at(text, end), "malformed JSON: extra data after the list")
    out: list[Layout] = []
    total = [0]                   # slots of the boards before this one
    for k, (board, off) in enumerate(items):
        line = _line_at(text, off)
        if not isinstance(board, dict):
            raise _fault(source, line, f"board {k} is not an object")
        label = f"board {k} ({board.get('name', '?')!r})"
        name = board.get("name")
        if not isinstance(name, str) or not name:
            raise _fault(source, line, f"board {k} has no \"name\" string")
        _check_name(name, source, line, f"board {k}'s \"name\"")

        def bad(what: str) -> BadInput:
            return _fault(source, line, f"{label}: {what}")

        layers = board.get("map")
        if not isinstance(layers, list):
            raise bad("no \"map\" list")
        slots: list[Slot] = []
        seen: set[Slot] = set()
        for layer in layers:
            if not (isinstance(layer, list) and len(layer) == 2 and _is_int(layer[0])
                    and layer[0] >= 0 and isinstance(layer[1], list)):
                raise bad(f"layer entry {json.dumps(layer)[:30]} is not [z, rows]")
            z = layer[0]
            for row in layer[1]:
                if not (isinstance(row, list) and len(row) == 2 and _is_int(row[0])):
                    raise bad(f"row entry {json.dumps(row)[:30]} on layer {z} is not [y, cells]")
                y, cells = row
                if abs(y) > COORD_MAX or z > COORD_MAX:
                    raise bad(f"row y={y} on layer {z}: coordinates must lie within +-{COORD_MAX}")
                for cell in ([cells] if _is_int(cells) else cells if isinstance(cells, list) else [None]):
                    if _is_int(cell):
                        _check_count(len(slots) + 1, source, line, label)
                        _check_count(total[0] + len(slots) + 1, source, line, "the file", MAX_FILE_SLOTS)
                        xs = [cell]
                    elif (isinstance(cell, list) and len(cell) == 2 and all(_is_int(c) for c in cell)
                          and cell[1] > 0):
                        _check_count(len(slots) + cell[1], source, line, label)
                        _check_count(total[0] + len(slots) + cell[1], source, line, "the file",
                                     MAX_FILE_SLOTS)
                        xs = [cell[0] + 2 * i for i in range(cell[1])]
                    else:
                        raise bad(f"cell {json.dumps(cell)[:30]} in row y={y} layer {z} is not "
                                  "x or [x0, count]")
                    if abs(xs[0]) > COORD_MAX or abs(xs[-1]) > COORD_MAX:
                        raise bad(f"cell {json.dumps(cell)[:60]} in row y={y} layer {z}: coordinates "
                                  f"must lie within +-{COORD_MAX}")
                    for x in xs:
                        s = Slot(x, y, z)
                        if s in seen:
                            raise bad(f"slot {s} given twice")
                        seen.add(s)
                        slots.append(s)
        total[0] += len(slots)
        _check_count(total[0], source, line, "the file", MAX_FILE_SLOTS)
        out.append(Layout(name, tuple(slots), f"{source}#{name}"))
    return out
