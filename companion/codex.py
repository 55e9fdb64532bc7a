"""The built-in layout codex: the layouts ``--layout NAME`` accepts.

Every entry holds 144 tiles, fits the 18 x 8 tile mat (its slots lie in
``[0, 36) x [0, 16)`` half-units, CONTRACT.md "Physical standard"), rests each
tile above layer 0 fully on tiles below, and has no two tiles overlapping on
one layer: :func:`companion.layouts.check_layout` calls each buildable.

Sources:

* ``turtle``: the classic Mahjong-solitaire arrangement, slot for slot
  KMahjongg's ``layouts/default.layout`` moved 2 half-units right so it sits
  centred on the mat.
* ``sprint-flat`` / ``sprint-2layer``: the "flat or 2-layer 144-tile layout"
  of Love Mahjong 2.6.2 (Affinity Sprint) and Candy Mahjong 2.6.2 (Sugar Rush
  Sprint).  The flat one fills the mat, so each row is a line of 18 opened
  only from its ends: random deals on it are almost never winnable (none of
  the first 100 seeds), so deal it with ``--solvable``.
* The rest are this project's own designs for the layouts the rule books
  name but do not draw (../shared/seeds/): Love Mahjong 2.2 step 1 (The Twin
  Hearts, Cupid's Citadel, The Eternal Garden); Candy Mahjong 2.2 step 1 (The
  Gingerbread Castle, Sugar Pyramid, Sundae Mountain); Mindful Mahjong 1.2 and
  2.2 (The Twin Peaks, The Dragon's Tail, The Imperial Palace, and the 5-tier
  Turtle of Longevity and Pagoda of Peace; its tiles stack at most 5 layers
  deep); Word Mahjong 2.2 (The Alphabet Tower, The Monogram Pyramid, The
  Scholar's Bookrest, The Typewriter Key).  Their upper tiers mostly stand
  square on the tiers below (such a tile covers one tile, a half-shifted one
  up to four), so each tier leaves tiles below it to open: random deals on
  them are won about as often as on the Turtle (tests/companion/test_codex.py).

Blueprint notation (:func:`parse_blueprint`): a part starts with a header
``z<layer> +<dx>+<dy>`` and is followed by rows, one per tile row, of ``#``
(a tile) and ``.`` (none), one character per tile.  The tile in row ``r``,
column ``c`` of the part sits at ``(dx + 2c, dy + 2r, layer)`` in half-tile
units, so odd offsets give the half-tile shifts of stacked tiers.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache

from companion.errors import BadInput
from companion.layouts import Layout, Slot, normalise_name


@dataclass(frozen=True)
class CodexEntry:
    """One built-in layout's catalogue card.

    Attributes:
        id: kebab-case id, the name ``--layout`` takes (``"cupids-citadel"``).
        title: display name as the rule book prints it (``"Cupid's Citadel"``).
        games: the variants whose rule book names it (empty for ``turtle``,
            which no book names but every table knows).
        about: one line on what the shape shows.
    """

    id: str
    title: str
    games: tuple[str, ...]
    about: str


def parse_blueprint(text: str) -> tuple[Slot, ...]:
    """Slots of a blueprint in the notation of this module's docstring.

    Slots come part by part, row by row, left to right.

    Raises:
        ValueError: a row before any header, a bad header, or a character
            other than ``#`` and ``.`` (a bug in a built-in blueprint).
    """
    slots: list[Slot] = []
    part: tuple[int, int, int] | None = None
    row = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("z"):
            head, _, off = line.partition(" ")
            nums = off.strip().lstrip("+").split("+")
            if len(nums) != 2:
                raise ValueError(f"bad blueprint header {line!r}")
            part = (int(head[1:]), int(nums[0]), int(nums[1]))
            row = 0
            continue
        if part is None:
            raise ValueError(f"blueprint row {line!r} before any part header")
        z, dx, dy = part
        for c, ch in enumerate(line):
            if ch == "#":
                slots.append(Slot(dx + 2 * c, dy + 2 * row, z))
            elif ch != ".":
                raise ValueError(f"bad blueprint character {ch!r} in {line!r}")
        row += 1
    return tuple(slots)


# --- the blueprints ---------------------------------------------------------
# Each layout: (title, games, about, blueprint).  Layer 0 is drawn over the
# whole mat (18 x 8 tiles) where that helps to read it.

_CODEX: dict[str, tuple[str, tuple[str, ...], str, str]] = {}


def _add(id_: str, title: str, games: tuple[str, ...], about: str, blueprint: str) -> None:
    _CODEX[id_] = (title, games, about, blueprint)


_add("turtle", "Turtle", (), "the classic five-layer turtle (KMahjongg's default layout)", """
z0 +5+0
############
..########..
.##########.
############
############
.##########.
..########..
############
z0 +3+7
#
z0 +29+7
##
z1 +11+2
######
######
######
######
######
######
z2 +13+4
####
####
####
####
z3 +15+6
##
##
z4 +16+7
#
""")

_add("sprint-flat", "Sprint (flat)", ("love", "candy"),
     "one layer filling the mat: 8 rows of 18 (the books' sprint modes, 2.6.2)", """
z0 +0+0
##################
##################
##################
##################
##################
##################
##################
##################
""")

_add("sprint-2layer", "Sprint (2 layers)", ("love", "candy"),
     "a 12 x 8 slab under an 8 x 6 slab (the books' sprint modes, 2.6.2)", """
z0 +6+0
############
############
############
############
############
############
############
############
z1 +10+2
########
########
########
########
########
########
""")


# Love Mahjong 2.2 step 1 -----------------------------------------------------

_add("twin-hearts", "The Twin Hearts", ("love",),
     "two hearts side by side, each topped by a smaller heart, lobes raised highest", """
z0 +0+0
.##...##.
####.####
#########
#########
.#######.
..#####..
...###...
....#....
z0 +18+0
.##...##.
####.####
#########
#########
.#######.
..#####..
...###...
....#....
z1 +0+2
.##...##.
.#######.
..#####..
...###...
....#....
z1 +18+2
.##...##.
.#######.
..#####..
...###...
....#....
z2 +0+2
.#.....#.
..##.##..
z2 +18+2
.#.....#.
..##.##..
""")

_add("cupids-citadel", "Cupid's Citadel", ("love",),
     "a walled citadel with four corner towers, a gate and a heart-shaped keep", """
z0 +0+0
##################
##..............##
#.....##..##.....#
#....########....#
#.....######.....#
#......####......#
##......##......##
#######....#######
z1 +0+0
##.#.#.#..#.#.#.##
##..............##
z1 +0+12
##..............##
##...##....##...##
z1 +11+5
.#...#.
.#####.
..###..
...#...
z2 +0+0
##..............##
##..............##
z2 +0+12
##..............##
##..............##
z2 +13+6
#...#
z2 +17+8
#
z3 +0+0
##..............##
##..............##
z3 +0+12
##..............##
##..............##
""")

_add("eternal-garden", "The Eternal Garden", ("love",),
     "an infinity loop of hedges round two flower beds, bridged where the loop crosses", """
z0 +0+0
.#####......#####.
##...##....##...##
#..##..#..#..##..#
#.####.####.####.#
#.####.####.####.#
#..##..#..#..##..#
##...##....##...##
.#####......#####.
z1 +0+0
.#####......#####.
z1 +0+14
.#####......#####.
z1 +0+4
#................#
#................#
#................#
#................#
z1 +7+5
#.........#
z1 +5+7
###.......###
z1 +7+9
#.........#
z1 +14+6
####
####
z2 +4+0
###.......###
z2 +4+14
###.......###
z2 +7+7
#.........#
z2 +16+6
##
##
""")

# Candy Mahjong 2.2 step 1 ----------------------------------------------------

_add("gingerbread-castle", "The Gingerbread Castle", ("candy",),
     "a gingerbread castle seen from the front: two turrets and a keep with spires, gumdrops on the wall, a gate", """
z0 +0+0
.#......##......#.
###....####....###
###....####....###
###.#.######.#.###
##################
######......######
######......######
######......######
z1 +0+0
.#..............#.
###....####....###
###....####....###
###....####....###
z1 +8+8
#........#
z2 +1+3
##
##
z2 +31+3
##
##
z2 +15+3
###
###
z3 +2+4
#
z3 +32+4
#
z3 +16+4
##
""")

_add("sugar-pyramid", "Sugar Pyramid", ("candy",),
     "a stepped pyramid of sugar cubes, its cap stone set half a tile in", """
z0 +8+0
##########
##########
##########
##########
##########
##########
##########
##########
z1 +10+2
########
########
########
########
########
########
z2 +13+5
#####
#####
#####
z3 +17+7
#
""")

_add("sundae-mountain", "Sundae Mountain", ("candy",),
     "a sundae glass on its foot, heaped into a five-tier mountain of ice cream", """
z0 +0+0
....##########....
..##############..
.################.
..##############..
....##########....
......######......
........##........
.....########.....
z1 +0+0
......######......
....##########....
...############...
.....########.....
z2 +0+0
.......####.......
.....########.....
.....########.....
z3 +0+2
.......####.......
........##........
z4 +0+2
........##........
""")

# Mindful Mahjong 1.2 and 2.2 (at most 5 layers) --------------------------------

_add("twin-peaks", "The Twin Peaks", ("mindful",),
     "two five-tier mountains with a low saddle between them", """
z0 +0+0
...#...
.#####.
#######
#######
#######
#######
.#####.
...#...
z0 +22+0
...#...
.#####.
#######
#######
#######
#######
.#####.
...#...
z0 +15+6
###
###
z1 +2+4
#####
#####
#####
#####
z1 +24+4
#####
#####
#####
#####
z2 +4+6
###
###
z2 +26+6
###
###
z3 +6+6
#
#
z3 +28+6
#
#
z4 +6+7
#
z4 +28+7
#
""")

_add("dragons-tail", "The Dragon's Tail", ("mindful",),
     "a tail sweeping down and up to a spade tip, with a ridge and spikes along it", """
z0 +0+0
####...........#..
#####.........###.
.#####.......#####
..#####.....#####.
...######..#####..
....###########...
.....#########....
.......#####......
z1 +0+0
.##...............
.###...........#..
..###.........###.
...###.......###..
....####....###...
.....#########....
......#######.....
........###.......
z2 +0+0
..................
..#...............
...#...........#..
....#.........#...
.....##......#....
......#######.....
.......#####......
.........#........
z3 +0+0
..................
..#...............
...............#..
....#.............
.............#....
......#.#.#.#.....
.......#.#........
..................
""")

_add("imperial-palace", "The Imperial Palace", ("mindful",),
     "a hall under a hipped roof between two pavilions, a gate house and steps in front", """
z0 +0+0
....##########....
###.##########.###
###.##########.###
###.##########.###
###............###
###............###
......######......
.....########.....
z1 +10+0
########
########
########
########
z1 +2+4
#
#
#
z1 +32+4
#
#
#
z1 +15+13
#.#
z2 +12+2
######
######
z3 +14+2
####
####
""")

_add("turtle-of-longevity", "Turtle of Longevity", ("mindful",),
     "a turtle swimming right: head, tail, four flippers and a five-tier domed shell", """
z0 +0+0
..##.......##.....
....########......
...##########.....
.#############.##.
.#############.##.
...##########.....
....########......
..##.......##.....
z1 +0+2
......####........
.....######.......
....########......
....########......
.....######.......
......####........
z2 +0+4
......####........
.....######.......
.....######.......
......####........
z3 +0+4
.......##.........
......####........
......####........
z4 +0+6
.......##.........
.......##.........
""")

_add("pagoda-of-peace", "Pagoda of Peace", ("mindful",),
     "a five-tier pagoda seen from above, with upturned eaves, two stone lanterns and a path", """
z0 +8+2
##########
##########
##########
##########
##########
##########
z0 +6+1
#..........#
z0 +6+13
#..........#
z0 +2+6
#..............#
#..............#
z0 +14+14
####
z1 +10+4
########
########
########
########
z1 +2+7
#..............#
z2 +12+4
######
######
######
######
z2 +2+7
#..............#
z3 +14+6
####
####
z4 +16+6
##
##
""")

# Word Mahjong 2.2 ------------------------------------------------------------

_add("alphabet-tower", "The Alphabet Tower", ("word",),
     "a five-tier tower between the letters A and Z", """
z0 +0+0
.###.
#...#
#...#
#####
#...#
#...#
#...#
#...#
z0 +26+0
#####
z0 +33+2
#
z0 +32+4
#
z0 +31+6
#
z0 +29+8
#
z0 +28+10
#
z0 +27+12
#
z0 +26+14
#####
z1 +2+0
###
z1 +28+0
###
z0 +14+0
####
####
####
####
####
####
####
####
z1 +14+0
####
####
####
####
####
####
####
####
z2 +14+2
####
####
####
####
####
####
z3 +16+4
##
##
##
##
z4 +16+4
##
##
##
""")

_add("monogram-pyramid", "The Monogram Pyramid", ("word",),
     "a stepped pyramid crowned with a raised monogram M", """
z0 +9+0
#########
#########
#########
#########
#########
#########
#########
#########
z1 +11+2
#######
#######
#######
#######
#######
#######
z2 +11+2
#.....#
##...##
#.#.#.#
#..#..#
#.....#
z3 +11+2
#.....#
##...##
#.#.#.#
#..#..#
#.....#
""")

_add("scholars-bookrest", "The Scholar's Bookrest", ("word",),
     "an open book on a bookrest: two pages rising to the back, the rest's ledge in front", """
z0 +0+0
..######..######..
.#######..#######.
.#######..#######.
.#######..#######.
.#######..#######.
..######..######..
..................
.################.
z1 +5+1
#####...#####
#####...#####
#####...#####
#####...#####
z2 +8+2
##......##
##......##
""")

_add("typewriter-key", "The Typewriter Key", ("word",),
     "a round typewriter key with a raised rim, the letter K and its lever", """
z0 +0+0
......######......
.....########.....
....##########....
....##############
....##############
....##########....
.....########.....
......######......
z1 +0+0
......######......
.....###..###.....
....#..#.#...#....
.......##......###
.......##......###
....#..#.#...#....
.....###..###.....
......######......
z2 +0+0
......######......
.....##....##.....
.......#..........
.......#........#.
.......#........#.
.......#..........
.....##....##.....
......######......
""")

# --- lookups ------------------------------------------------------------------

BUILTIN_NAMES: tuple[str, ...] = tuple(_CODEX)
"""Ids of the built-in layouts, in catalogue order (``layouts list``)."""


def entries() -> tuple[CodexEntry, ...]:
    """Catalogue cards of all built-in layouts, in :data:`BUILTIN_NAMES` order."""
    return tuple(CodexEntry(k, v[0], v[1], v[2]) for k, v in _CODEX.items())


@lru_cache(maxsize=None)
def _lookup_keys() -> dict[str, str]:
    """Every folded spelling (:func:`companion.layouts.normalise_name`) that
    names a built-in layout -> its id: the id, the title, and the title
    without a leading "The".

    Raises:
        AssertionError: two built-in layouts share a spelling (a codex bug).
    """
    keys: dict[str, str] = {}
    for k, (title, *_rest) in _CODEX.items():
        bare = title[4:] if title.lower().startswith("the ") else title
        for spelling in (k, title, bare):
            key = normalise_name(spelling)
            assert keys.setdefault(key, k) == k, f"built-in layouts {keys[key]} and {k} are both {key!r}"
    return keys


def _key(name: str) -> str | None:
    keys = _lookup_keys()
    want = normalise_name(name)
    if want in keys:
        return keys[want]
    if want.startswith("the") and want[3:] in keys:      # "The Turtle", "the cupid's citadel"
        return keys[want[3:]]
    return None


def is_builtin(name: str) -> bool:
    """True when ``name`` names a built-in layout (see :func:`builtin`)."""
    return _key(name) is not None


def suggest(name: str, n: int = 3) -> list[str]:
    """Up to ``n`` built-in ids closest to ``name``: those whose id or title
    holds it whole (4 characters or more: "castle" gives
    gingerbread-castle), then those of difflib ratio at least 0.5, best
    first ("turtel" gives turtle; a name that resembles none, such as
    "nope", gives nothing rather than a far guess)."""
    want = normalise_name(name)
    pool = {k: k for k in _CODEX}
    pool.update({normalise_name(v[0]): k for k, v in _CODEX.items()})
    out: list[str] = []
    if len(want) >= 4:
        out = sorted({k for m, k in pool.items() if want in m and m != want}, key=lambda k: (len(k), k))
    for m in difflib.get_close_matches(want, list(pool), n=2 * n, cutoff=0.5):
        if pool[m] not in out:
            out.append(pool[m])
    if not out:  # a word of the name, e.g. "pagoda"
        words = ["".join(ch for ch in w if ch.isalnum()) for w in name.casefold().split()]
        out = [k for k in _CODEX if any(w in normalise_name(k) for w in words if len(w) > 3)]
    return out[:n]


def entry(name: str) -> CodexEntry:
    """The catalogue card of a built-in layout (name as for :func:`builtin`).

    Raises:
        BadInput: unknown name, suggesting the closest built-in names.
    """
    k = _key(name)
    if k is None:
        raise _unknown(name)
    title, games, about, _ = _CODEX[k]
    return CodexEntry(k, title, games, about)


def title(name: str) -> str:
    """Display name of a built-in layout (``"cupids-citadel"`` -> ``"Cupid's Citadel"``).

    Raises:
        BadInput: unknown name.
    """
    return entry(name).title


def books(name: str) -> tuple[str, ...]:
    """The variants whose rule book names this built-in layout (may be empty).

    Raises:
        BadInput: unknown name.
    """
    return entry(name).games


def _unknown(name: str) -> BadInput:
    close = suggest(name)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return BadInput(f"unknown layout {name!r}{hint} ('companion layouts list' names them all)")


def builtin(name: str) -> Layout:
    """A built-in layout by id or title, ignoring case, every character that
    is not a letter or a digit, and a leading "The" (``"Cupid's Citadel"`` ==
    ``"cupids-citadel"`` == ``"cupidscitadel"``).  The layout's name is its id, its source
    ``"builtin"``.

    Raises:
        BadInput: unknown name, suggesting the closest built-in names.
    """
    k = _key(name)
    if k is None:
        raise _unknown(name)
    return _layout(k)


@lru_cache(maxsize=None)
def _layout(key: str) -> Layout:
    return Layout(key, parse_blueprint(_CODEX[key][3]), "builtin")
