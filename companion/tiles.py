"""Tile sets of the four games: face ids, display names, copies, scoring classes
and each variant's matching relation.

Sources (../shared/seeds/):

* Love Mahjong, section 1.2 "Component Inventory" and 2.5 "Point Scoring Matrix".
* Candy Mahjong, sections 1.2 and 2.5.
* Mindful Mahjong, sections 1.2 and 2.1 Law 2 (wild seasons and flowers).
* Word Mahjong, sections 1.2 and 2.1 Rule 3 (wildcards).  The book names no
  letter distribution; ours is documented in docs/RULES.md and below.

Every set holds 144 tiles.  Two faces match when their ``match`` keys are
equal (CONTRACT.md, ``tiles.json``): the face id itself for identical-only
faces, one shared key for a wild group.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from companion.errors import BadInput

VARIANTS: tuple[str, ...] = ("love", "candy", "mindful", "word")

TILES_PER_SET = 144


@dataclass(frozen=True)
class Face:
    """One distinct tile face.

    Attributes:
        id: stable face id, unique within its variant (e.g. ``"hearts-1"``).
        name: display name from the rule book (e.g. ``"1 Single Heart"``).
        suit: suit or family id (``"hearts"``, ``"seasons"``, ``"vowel"`` ...).
        rank: 1-9 for numbered suits, else None.
        cls: scoring class used by the variant's tables (``"simple"``,
            ``"terminal"``, ``"season"``, ``"glass"`` ...).
        copies: how many tiles of this face a set holds.
        match: the matching key; faces with equal keys match.
        short: a short label for overlays and art (``"1"``, ``"E"``, ``"Spr"``).
    """

    id: str
    name: str
    suit: str
    rank: int | None
    cls: str
    copies: int
    match: str
    short: str

    def matches(self, other: "Face") -> bool:
        """True when the two faces may be removed together as a pair."""
        return self.match == other.match


def _fold(text: str) -> str:
    """A face as typed, for looking it up: NFKC (a full-width letter), one
    space between words, a typographic apostrophe as ``'``, no case."""
    import unicodedata
    return " ".join(unicodedata.normalize("NFKC", str(text)).replace("\u2019", "'").split()).casefold()


@dataclass(frozen=True)
class TileSet:
    """The 144-tile set of one variant.

    Attributes:
        variant: one of :data:`VARIANTS`.
        faces: the distinct faces in a fixed order (that order is the class
            order used by deals and art).
    """

    variant: str
    faces: tuple[Face, ...]

    def __post_init__(self) -> None:
        ids = [f.id for f in self.faces]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate face ids in {self.variant}")
        if sum(f.copies for f in self.faces) != TILES_PER_SET:
            raise ValueError(f"{self.variant} set does not hold {TILES_PER_SET} tiles")
        # id -> Face, kept on the instance (a frozen dataclass: set once here)
        object.__setattr__(self, "_by_id", {f.id: f for f in self.faces})

    @property
    def by_id(self) -> dict[str, Face]:
        return self._by_id  # type: ignore[attr-defined]

    def face(self, face_id: str) -> Face:
        """The face with that id.

        Raises:
            BadInput: unknown face id for this variant.
        """
        try:
            return self.by_id[face_id]
        except (KeyError, TypeError):
            pass
        import difflib
        close = difflib.get_close_matches(str(face_id), list(self.by_id), n=1, cutoff=0.75)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise BadInput(f"unknown face {face_id!r} for variant {self.variant!r}{hint}") from None

    def typed_id(self, text: str) -> str:
        """The id of the face typed as ``text``: its id or the name the
        scoreboard shows (``3 Stemmed Rose``, ``Cupid's Wings``), in any
        case, NFKC-folded, spaces and a typographic apostrophe as typed
        anywhere; ``text`` itself where it names no face (for
        :meth:`face` to refuse, naming it)."""
        known = self.__dict__.get("_typed")
        if known is None:
            known = {_fold(k): f.id for f in self.faces for k in (f.id, f.name)}
            object.__setattr__(self, "_typed", known)
        return known.get(_fold(text), text)

    def matches(self, a: str, b: str) -> bool:
        """True when faces ``a`` and ``b`` (ids) match under this variant's relation."""
        return self.face(a).match == self.face(b).match

    def tiles(self) -> list[str]:
        """All 144 tiles as face ids, each face repeated by its copies, in face order."""
        return [f.id for f in self.faces for _ in range(f.copies)]

    def match_groups(self) -> dict[str, list[str]]:
        """Match key -> face ids sharing it."""
        groups: dict[str, list[str]] = {}
        for f in self.faces:
            groups.setdefault(f.match, []).append(f.id)
        return groups


CHINESE_NUMERALS = ("一", "二", "三", "四", "五", "六", "七", "八", "九")


def _numbered(suit: str, names: list[str], copies: int = 4) -> list[Face]:
    out = []
    for rank, name in enumerate(names, start=1):
        cls = "terminal" if rank in (1, 9) else "simple"
        fid = f"{suit}-{rank}"
        out.append(Face(fid, f"{rank} {name}", suit, rank, cls, copies, fid, str(rank)))
    return out


def _honours(suit: str, cls: str, items: list[tuple[str, str, str]], copies: int,
             match: str | None = None) -> list[Face]:
    out = []
    for key, name, short in items:
        fid = f"{suit}-{key}"
        out.append(Face(fid, name, suit, None, cls, copies, match or fid, short))
    return out


def _love() -> TileSet:
    # Love Mahjong 1.2: hearts, roses, letters 1-9 (x4), Seasons of Love (x4),
    # Celestial Cupids (x4), 4 Emotion + 4 Passion glass tiles (x1).
    faces = []
    faces += _numbered("hearts", ["Single Heart", "Twin Hearts", "Triple Hearts", "Heart Lockets",
                                  "Crystal Hearts", "Flaming Hearts", "Floating Hearts",
                                  "Diamond Hearts", "Sacred Hearts"])
    faces += _numbered("roses", ["Rosebud", "Wild Rose", "Stemmed Rose", "Crimson Rose",
                                 "Golden Rose", "White Rose", "Rose Bouquet", "Rose Wreath",
                                 "Regal Rose"])
    faces += _numbered("letters", ["Love Note", "Sealed Envelope", "Ribboned Letter", "Wax Stamp",
                                   "Calligraphy Scroll", "Postcard", "Keepsake Letter",
                                   "Golden Scroll", "Eternal Letter"])
    faces += _honours("season", "season", [("spring", "Spring Bloom", "Spr"),
                                           ("summer", "Summer Sun", "Sum"),
                                           ("autumn", "Autumn Sunset", "Aut"),
                                           ("winter", "Winter Spark", "Win")], 4)
    faces += _honours("cupid", "cupid", [("arrow", "Cupid's Arrow", "Arr"),
                                         ("bow", "Cupid's Bow", "Bow"),
                                         ("wings", "Cupid's Wings", "Wng")], 4)
    faces += _honours("emotion", "glass", [(str(i), f"Emotion Glass {i}", f"E{i}") for i in range(1, 5)],
                      1, match="glass")
    faces += _honours("passion", "glass", [(str(i), f"Passion Glass {i}", f"P{i}") for i in range(1, 5)],
                      1, match="glass")
    return TileSet("love", tuple(faces))


def _candy() -> TileSet:
    # Candy Mahjong 1.2: hard candy, chocolate, gummy 1-9 (x4), dessert winds (x4),
    # royal cupcakes (x4), 4 seasoning sprinkles + 4 flower sugar-glass (x1).
    faces = []
    faces += _numbered("hardcandy", ["Swirl Pop", "Peppermint", "Jawbreaker", "Rock Candy",
                                     "Butterscotch", "Ribbon Candy", "Candy Cane", "Fruit Drop",
                                     "Sour Ball"])
    faces += _numbered("chocolate", ["White Chocolate", "Milk Chocolate", "Dark Chocolate",
                                     "Truffle", "Praline", "Fudge", "Chocolate Coin", "Bonbon",
                                     "Wafer"])
    faces += _numbered("gummy", ["Gummy Bear", "Gummy Worm", "Gummy Ring", "Sour Brite Crawler",
                                 "Gummy Cola Bottle", "Gummy Cherry", "Licorice Twist",
                                 "Marshmallow", "Jellybean"])
    faces += _honours("wind", "wind", [("strawberry", "Strawberry Wind", "Str"),
                                       ("vanilla", "Vanilla Wind", "Van"),
                                       ("chocolate", "Chocolate Wind", "Cho"),
                                       ("mint", "Mint Wind", "Mnt")], 4)
    faces += _honours("cupcake", "cupcake", [("redvelvet", "Red Velvet Cupcake", "RV"),
                                             ("goldenvanilla", "Golden Vanilla Cupcake", "GV"),
                                             ("doublefudge", "Double Fudge Cupcake", "DF")], 4)
    faces += _honours("sprinkles", "bonus", [(str(i), f"Seasoning Sprinkles {i}", f"S{i}") for i in range(1, 5)],
                      1, match="bonus")
    faces += _honours("sugarglass", "bonus", [(str(i), f"Flower Sugar-Glass {i}", f"G{i}") for i in range(1, 5)],
                      1, match="bonus")
    return TileSet("candy", tuple(faces))


def _mindful() -> TileSet:
    # Mindful Mahjong 1.2 and 2.1 Law 2.
    faces = []
    for suit, noun in (("bamboo", "Bamboo"), ("characters", "Characters"), ("circles", "Circles")):
        for rank in range(1, 10):
            fid = f"{suit}-{rank}"
            faces.append(Face(fid, f"{rank} of {noun}", suit, rank, "suit", 4, fid, str(rank)))
    faces += _honours("wind", "wind", [("east", "East Wind", "E"), ("south", "South Wind", "S"),
                                       ("west", "West Wind", "W"), ("north", "North Wind", "N")], 4)
    faces += _honours("dragon", "dragon", [("red", "Red Dragon", "R"), ("green", "Green Dragon", "G"),
                                           ("white", "White Dragon", "Wh")], 4)
    faces += _honours("season", "season", [("spring", "Spring", "Spr"), ("summer", "Summer", "Sum"),
                                           ("autumn", "Autumn", "Aut"), ("winter", "Winter", "Win")],
                      1, match="season")
    faces += _honours("flower", "flower", [("plum", "Plum", "Plm"), ("orchid", "Orchid", "Orc"),
                                           ("bamboo", "Bamboo Flower", "Bmb"),
                                           ("chrysanthemum", "Chrysanthemum", "Chr")],
                      1, match="flower")
    return TileSet("mindful", tuple(faces))


# Word Mahjong letter distribution (our design; docs/RULES.md): every letter an
# even count, 140 letters plus 4 wildcards.  Loosely follows English letter
# frequency so that words can be spelled from free tiles.
WORD_LETTER_COUNTS: dict[str, int] = {
    "A": 10, "B": 2, "C": 6, "D": 6, "E": 14, "F": 2, "G": 4, "H": 6, "I": 10, "J": 2,
    "K": 2, "L": 8, "M": 4, "N": 8, "O": 10, "P": 4, "Q": 2, "R": 8, "S": 8, "T": 8,
    "U": 6, "V": 2, "W": 2, "X": 2, "Y": 2, "Z": 2,
}
WORD_WILDCARDS = 4
VOWELS = frozenset("AEIOU")
RARE_LETTERS = frozenset("QXZ")


def _word() -> TileSet:
    faces = []
    for letter, n in WORD_LETTER_COUNTS.items():
        if letter in VOWELS:
            cls, suit = "vowel", "vowel"
        elif letter in RARE_LETTERS:
            cls, suit = "rare", "consonant"
        else:
            cls, suit = "consonant", "consonant"
        faces.append(Face(letter, f"Letter {letter}", suit, None, cls, n, letter, letter))
    faces.append(Face("wild", "Wildcard Glyph", "wild", None, "wild", WORD_WILDCARDS, "wild", "*"))
    return TileSet("word", tuple(faces))


_BUILDERS = {"love": _love, "candy": _candy, "mindful": _mindful, "word": _word}


@lru_cache(maxsize=None)
def tileset(variant: str) -> TileSet:
    """The tile set of ``variant`` (one of :data:`VARIANTS`).

    Raises:
        BadInput: unknown variant.
    """
    try:
        return _BUILDERS[variant]()
    except KeyError:
        raise BadInput(f"unknown variant {variant!r} (expected one of {', '.join(VARIANTS)})") from None
