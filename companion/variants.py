"""Scoring rules of the four games and their modes, one class per game, found
through one registry (:func:`find_variant`).

Every number below comes from a rule book in ../shared/seeds/ (the section is
named beside it) or, where the book gives none, from docs/RULES.md, which
quotes the words it resolves.  The game model (:mod:`companion.game`) owns the
flow of play (turns, racks, board); this module owns the points.

Vocabulary:

* a *line* is one scored item ``(label, points)``; a player's score is the sum
  of their lines (plus the starting tokens in Love and Candy Mahjong);
* *chain* (Love/Candy) counts the valid matches made in the current turn, the
  one being scored included; *streak* (Mindful) counts the scorer's
  consecutive matches of one suit family, the one being scored included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from companion.errors import BadInput
from companion.tiles import Face, TileSet, tileset, VOWELS

Line = tuple[str, int]

# --------------------------------------------------------------------------- modes


@dataclass(frozen=True)
class Mode:
    """One game mode of a variant.

    Attributes:
        id: stable id used on the command line and in the ledger.
        title: the book's name for it.
        min_players / max_players: seats allowed.
        kind: what the model does: ``"hand"`` (hand building), ``"sprint"``,
            ``"solo"`` (turn limit and stars), ``"zen"`` (Mindful solitaire),
            ``"coop"``, ``"duel"``, ``"campaign"``, ``"timed"``, ``"endless"``.
        source: rule book section.
    """

    id: str
    title: str
    min_players: int
    max_players: int
    kind: str
    source: str


# --------------------------------------------------------------------------- base


class Variant:
    """Hooks every game answers; subclasses fill in the numbers.

    Attributes:
        name: variant id (:data:`companion.tiles.VARIANTS`).
        title: the book's title.
        modes: the book's modes.
        extra_turn: a valid match grants another turn to the same player.
        blocked_penalty: points for touching a blocked tile (<= 0).
        start_tokens: tokens each player starts with (0 where the game has none).
        removes_in_pairs: tiles leave the board two at a time only (so the
            number on the board keeps the parity it was dealt with; the
            recognizer uses it, :func:`vision.reconstruct.reconstruct`).
        scored: whether the game keeps a score at all in ``mode``.
    """

    name: str = ""
    title: str = ""
    modes: tuple[Mode, ...] = ()
    extra_turn: bool = False
    blocked_penalty: int = 0
    start_tokens: int = 0
    removes_in_pairs: bool = True       # Love/Candy 2.1 Law 2, Mindful 1.4 and 2.1 Law 2: matching pairs leave

    @property
    def tiles(self) -> TileSet:
        return tileset(self.name)

    def mode(self, mode_id: str) -> Mode:
        """The mode with that id.

        Raises:
            BadInput: unknown mode for this variant.
        """
        for m in self.modes:
            if m.id == mode_id:
                return m
        raise BadInput(f"unknown mode {mode_id!r} for {self.name} "
                       f"(expected one of {', '.join(m.id for m in self.modes)})")

    def scored(self, mode: Mode) -> bool:
        return True

    def default_options(self, mode: Mode, n_tiles: int) -> dict:
        """Mode options filled in at game start (stored in ``game_started``)."""
        return {}

    def pair_lines(self, face: Face, other: Face, *, mode: Mode, chain: int, streak: int,
                   seat: int) -> list[Line]:
        """Points for one valid pair claim."""
        return []


# --------------------------------------------------------------------------- Love / Candy


class LoveRules(Variant):
    """Love Mahjong.  Sources: 2.1 Law 2 (extra turn), Law 3 (melds, "Passion
    Pong!" steal), 2.2 (10,000 tokens), 2.5 (scoring matrix), 2.6 (modes),
    2.7 (+5,000 hand, +200 Harmony Streak, -100 Blocked Tile Penalty), 2.8 (end)."""

    name = "love"
    title = "Love Mahjong"
    steal_call = "Passion Pong!"
    mahjong_call = "Love Mahjong!"
    modes = (
        Mode("hand-builder", "Master Harmony Hand Builder", 2, 4, "hand", "Love Mahjong 2.6.1"),
        Mode("sprint", "Affinity Sprint", 1, 4, "sprint", "Love Mahjong 2.6.2"),
        Mode("solo-quest", "Sanctuary Solo Quest", 1, 1, "solo", "Love Mahjong 2.6.3"),
    )
    extra_turn = True                   # 2.1 Law 2 "immediately gains an extra action turn"
    blocked_penalty = -100              # 2.7 "Blocked Tile Penalty: Subtract 100 Points"
    start_tokens = 10_000               # 2.2 step 3
    streak_bonus = 200                  # 2.7 "Harmony Streak: +200 ... for every extra turn chained"
    win_bonus = 5_000                   # 2.5 / 2.7 "Hand Completion Base: +5,000"
    #: 2.5 "Match Base Value" per tile class; glass: "+600 Instant Bonus Points" (docs/RULES.md).
    pair_values = {"simple": 100, "terminal": 200, "season": 300, "cupid": 400, "glass": 600}
    #: 2.5 "Completed Meld Bonus" for pongs by class.
    pong_bonus = {"simple": 300, "terminal": 500, "season": 800, "cupid": 1_000}
    chow_bonus = 300                    # 2.5 "+300 Points for Completed Chow/Pong" (simple row)
    bonus_class = "glass"               # single-copy bonus tiles, set aside (docs/RULES.md)
    honour_classes = ("season", "cupid")

    def default_options(self, mode: Mode, n_tiles: int) -> dict:
        if mode.kind == "solo":
            return {"turn_limit": solo_turn_limit(n_tiles)}
        return {}

    def pair_lines(self, face: Face, other: Face, *, mode: Mode, chain: int, streak: int,
                   seat: int) -> list[Line]:
        """Base value of the pair's class (2.5), glass pairs +600, and +200 for
        every chained extra turn: the 2nd, 3rd ... valid match of one turn (2.7)."""
        if face.cls == self.bonus_class:
            lines: list[Line] = [("instant bonus pair", self.pair_values[face.cls])]
        else:
            lines = [(f"{face.cls} pair", self.pair_values[face.cls])]
        if chain >= 2:
            lines.append(("chained extra turn", self.streak_bonus))
        return lines

    def pong_points(self, face: Face, seat: int) -> int:
        """Completed Meld Bonus of a pong of ``face`` for the player in ``seat`` (0-based)."""
        return self.pong_bonus[face.cls]

    def meld_points(self, kind: str, faces: Sequence[Face], seat: int) -> int:
        """Completed Meld Bonus (2.5) of a ``"pong"`` or ``"chow"``."""
        if kind == "chow":
            return self.chow_bonus
        return self.pong_points(faces[0], seat)

    def hand_payment(self, melds: Iterable[tuple[str, Sequence[Face]]], pair: Face, seat: int) -> int:
        """What every opponent pays the declarer "based on hand difficulty"
        (2.6.1): the Completed Meld Bonus of each of the hand's four melds plus
        the Match Base Value of its pair (our definition, docs/RULES.md)."""
        return sum(self.meld_points(k, fs, seat) for k, fs in melds) + self.pair_values[pair.cls]


class CandyRules(LoveRules):
    """Candy Mahjong: Love Mahjong's rule family with its own names.  Sources as
    for Love; 2.5 "+800 Points for Seat Flavor Pong" (docs/RULES.md)."""

    name = "candy"
    title = "Candy Mahjong"
    steal_call = "Sugar Pong!"
    mahjong_call = "Candy Mahjong!"
    modes = (
        Mode("hand-builder", "Master Confectioner Hand Builder", 2, 4, "hand", "Candy Mahjong 2.6.1"),
        Mode("sprint", "Sugar Rush Sprint", 1, 4, "sprint", "Candy Mahjong 2.6.2"),
        Mode("solo-quest", "Sugarlandia Solo Quest", 1, 1, "solo", "Candy Mahjong 2.6.3"),
    )
    pair_values = {"simple": 100, "terminal": 200, "wind": 300, "cupcake": 400, "bonus": 600}
    pong_bonus = {"simple": 300, "terminal": 500, "wind": 800, "cupcake": 1_000}
    bonus_class = "bonus"
    honour_classes = ("wind", "cupcake")
    #: Seat flavours in the order the book lists the Dessert Winds (1.2), seat 1 first.
    seat_flavors = ("wind-strawberry", "wind-vanilla", "wind-chocolate", "wind-mint")

    def pong_points(self, face: Face, seat: int) -> int:
        """+800 for a pong of the player's own seat flavour ("+800 Points for
        Seat Flavor Pong"); another flavour wind pong earns the terminal
        pong's +500, since an honour pong never earns less than a terminal
        one (Technique 3: "Honor tiles yield massive bonus points when
        completed as Pongs"; docs/RULES.md 2.1)."""
        if face.cls == "wind":
            return self.pong_bonus["wind"] if self.seat_flavors[seat % 4] == face.id else self.pong_bonus["terminal"]
        return self.pong_bonus[face.cls]


def solo_turn_limit(n_tiles: int) -> int:
    """Solo Quest turn limit: the pairs needed to clear plus a quarter of them,
    rounded up (``ceil(n/2 * 5/4)``; 144 tiles -> 90 turns).  docs/RULES.md."""
    return math.ceil(n_tiles * 5 / 8)


def solo_stars(cleared_fraction: float, cleared: bool) -> int:
    """Solo Quest rating (Love/Candy 2.6.3): 3 stars for a 100% clear within the
    turn limit, 2 for at least 75% of the tiles cleared, else 1."""
    if cleared:
        return 3
    return 2 if cleared_fraction >= 0.75 else 1


# --------------------------------------------------------------------------- Mindful


class MindfulRules(Variant):
    """Mindful Mahjong.  Sources: 2.1 Law 2 (wild seasons/flowers), Law 4 (Zen
    Reshuffle), 2.2 (2 Zen Focus Tokens), 2.4 Phase 4 (play passes after a
    match), 2.5 (harmony table, suit family streak), 2.7 (end scoring), 2.8."""

    name = "mindful"
    title = "Mindful Mahjong"
    modes = (
        Mode("zen-solitaire", "Zen Solitaire", 1, 1, "zen", "Mindful Mahjong 2.6.1"),
        Mode("garden-restoration", "Cooperative Garden Restoration", 2, 4, "coop", "Mindful Mahjong 2.6.2"),
        Mode("harmony-duels", "Harmony Duels", 2, 4, "duel", "Mindful Mahjong 2.6.3"),
    )
    extra_turn = False
    blocked_penalty = 0                 # the book has no penalty (docs/RULES.md)
    pair_values = {"suit": 100, "wind": 150, "dragon": 200, "season": 300, "flower": 300}
    streak_min = 3                      # 2.5 "3+ Consecutive Matches"
    streak_bonus = 150                  # 2.5 "+150 Multiplier Bonus"
    focus_tokens = 2                    # 2.2 "2 Zen Focus Tokens (Hints/Reshuffles)"
    token_bonus = 500                   # 2.7 "+500 Points for each unspent Zen Focus Token"
    flawless_bonus = 2_000              # 2.7 "+2,000 ... with zero reshuffles"
    tile_penalty = -50                  # 2.7 "Subtract 50 Points for every tile remaining"
    #: Law 4 "a limited number of Zen Reshuffles based on selected difficulty" (our table).
    reshuffles_by_difficulty = {"easy": 3, "normal": 2, "hard": 1, "expert": 0}

    def default_options(self, mode: Mode, n_tiles: int) -> dict:
        return {"difficulty": "normal", "reshuffles": self.reshuffles_by_difficulty["normal"]}

    def pair_lines(self, face: Face, other: Face, *, mode: Mode, chain: int, streak: int,
                   seat: int) -> list[Line]:
        """2.5 base harmony points of the class, +150 for the 3rd and every later
        consecutive match of one suit family (flat, per match)."""
        lines: list[Line] = [(f"{face.suit} pair", self.pair_values[face.cls])]
        if streak >= self.streak_min:
            lines.append((f"suit family streak x{streak}", self.streak_bonus))
        return lines

    @staticmethod
    def family(face: Face) -> str:
        """The suit family a streak follows: the face's suit (bamboo, characters,
        circles, wind, dragon, season, flower)."""
        return face.suit


# --------------------------------------------------------------------------- Word


class WordRules(Variant):
    """Word Mahjong.  Sources: 2.1 Rule 2 (pairs and words), Rule 3 (wildcards,
    vowel boosters), 2.5 (tools), 2.6 (modes), 2.7 (score formula, Pure
    Scholar Bonus, quills), 2.8 (end)."""

    name = "word"
    title = "Word Mahjong"
    modes = (
        Mode("scholars-path", "Scholar's Path", 1, 1, "campaign", "Word Mahjong 2.6.1"),
        Mode("word-sprint", "Word Sprint", 1, 1, "timed", "Word Mahjong 2.6.2"),
        Mode("zen-archives", "Zen Archives", 1, 4, "endless", "Word Mahjong 2.6.3"),  # several: docs/RULES.md 4.6
    )
    extra_turn = True
    blocked_penalty = 0                 # a HUD cannot select locked tiles; no penalty in the book
    removes_in_pairs = False            # 2.1 Rule 2: a word of 3 or more letters leaves the board at once
    min_word = 3                        # 2.1 Rule 2 "Word Length >= 3"
    word_points = 200                   # 2.7 "(Words Submitted x 200)"
    vowel_booster = 200                 # 2.1 Rule 3 "+200 bonus points"
    booster_min_len = 5                 # 2.1 Rule 3 "words of 5 letters or longer"
    base_multiplier = 1_000             # 2.7 "(Base Layout Points x 1000)"
    second_cost = 10                    # 2.7 "(Focus Seconds x 10)"
    pure_scholar = 2_500                # 2.7 "Pure Scholar Bonus: 2,500 Points"
    pure_scholar_tiles = 144            # 2.7 "for clearing a complete 144-tile layout"
    sprint_word_seconds = 5             # 2.6.2 "+5 seconds back to your clock"
    #: Boosters per game outside Zen Archives (our numbers, docs/RULES.md).
    booster_limits = {"hints": 3, "reshuffles": 2, "undos": 3}

    def scored(self, mode: Mode) -> bool:
        return mode.kind != "endless"   # 2.6.3 "zero timers or score counters"

    def default_options(self, mode: Mode, n_tiles: int) -> dict:
        opts: dict = {"base_points": base_layout_points(n_tiles),
                      "target_seconds": target_seconds(n_tiles)}
        if mode.kind == "endless":
            return {"limits": {"hints": None, "reshuffles": None, "undos": None}}
        opts["limits"] = dict(self.booster_limits)
        if mode.kind == "timed":
            opts["countdown_seconds"] = countdown_seconds(n_tiles)
        if mode.kind == "campaign":
            opts["level"] = 1
        return opts

    def word_lines(self, word: str, faces: Sequence[Face]) -> list[Line]:
        """+200 for the word (2.7's "Words Submitted x 200", paid as it is
        submitted) and +200 for each glowing vowel tile (A E I O U, not a
        wildcard standing for one) in a word of 5 or more letters."""
        lines: list[Line] = [(f"word {word}", self.word_points)]
        if len(word) >= self.booster_min_len:
            vowels = sum(1 for f in faces if f.id in VOWELS)
            if vowels:
                lines.append((f"vowel boosters x{vowels}", self.vowel_booster * vowels))
        return lines

    def settlement_lines(self, *, base_points: int, focus_seconds: int, hints: int,
                         reshuffles: int, tiles: int = 144) -> list[Line]:
        """Stage settlement on a clear (2.7): base layout points x 1000, minus
        focus seconds x 10, plus the Pure Scholar Bonus when no hint and no
        reshuffle was used on a layout of at least 144 ``tiles`` ("clearing a
        complete 144-tile layout"; docs/RULES.md 4.3).  (Words x 200 and vowel
        boosters were paid live.)"""
        lines: list[Line] = [("base layout points", base_points * self.base_multiplier),
                             ("focus seconds", -focus_seconds * self.second_cost)]
        if hints == 0 and reshuffles == 0 and tiles >= self.pure_scholar_tiles:
            lines.append(("Pure Scholar Bonus", self.pure_scholar))
        return lines

    @staticmethod
    def quills(*, cleared: bool, focus_seconds: int, target: int, boosters: int,
               longest_word: int) -> int:
        """Quill rating (2.7): 0 without a clear; 1 Bronze for a clear; 2 Silver
        within the target time with fewer than 2 boosters; 3 Golden within the
        target time with zero boosters and at least one word of 5+ letters."""
        if not cleared:
            return 0
        if focus_seconds <= target and boosters == 0 and longest_word >= 5:
            return 3
        if focus_seconds <= target and boosters < 2:
            return 2
        return 1


def base_layout_points(n_tiles: int) -> int:
    """Word "Base Layout Points" (2.7): one point per 8 tiles, rounded up
    (144 tiles -> 18, i.e. 18,000 points).  docs/RULES.md."""
    return math.ceil(n_tiles / 8)


def target_seconds(n_tiles: int) -> int:
    """Word quill target time: 5 seconds per tile (144 tiles -> 720 s)."""
    return 5 * n_tiles


def countdown_seconds(n_tiles: int) -> int:
    """Word Sprint starting clock: 3 seconds per tile (144 tiles -> 432 s)."""
    return 3 * n_tiles


# --------------------------------------------------------------------------- registry

VARIANT_CLASSES: tuple[type[Variant], ...] = (LoveRules, CandyRules, MindfulRules, WordRules)
_REGISTRY = {cls.name: cls() for cls in VARIANT_CLASSES}


def find_variant(name: str) -> Variant:
    """The rules object of variant ``name``.

    Raises:
        BadInput: unknown variant.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise BadInput(f"unknown variant {name!r} (expected one of {', '.join(_REGISTRY)})") from None
