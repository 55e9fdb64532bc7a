"""Deals: which face lies in which slot of a layout, seeded shuffles, solvable deals
and solvable reshuffles of a game in progress.

A :class:`Deal` is the contract's ``deal`` object (../shared/CONTRACT.md,
``companion deal`` / ``companion solve``)::

    {"variant": "mindful", "layout": "turtle",
     "tiles": [{"slot": [x, y, z], "face": "circles-5"}, ...]}

Drawing rules (ours):

* A layout of 144 slots gets the whole set (:meth:`companion.tiles.TileSet.tiles`)
  in a uniform shuffle made with ``random.Random(seed)``.
* A smaller layout (an even number ``n`` of slots) gets ``n / 2`` whole match
  pairs: every match group of the set is shuffled and cut into pairs of
  matching tiles, the 72 pairs are shuffled, the first ``n / 2`` are kept and
  their tiles shuffled over the slots.  Every deal is therefore pair-complete
  (each match key an even number of times).  An odd ``n``, or more than 144
  slots (one set holds 144 tiles), is refused.
* ``solvable_deal`` draws deals from the same random stream until the exact
  solver (:mod:`companion.solver`) proves one winnable, each draw within
  :data:`TRY_NODE_LIMIT` search nodes (so it equals ``random_deal`` whenever
  that one is proved winnable, which is almost always the case for a winnable
  deal); after :data:`SOLVABLE_TRIES` draws it builds one by playing the empty
  layout backwards (remove two free slots at a time until the layout is empty,
  then put a matching pair on each removed couple of slots): winnable by
  construction.
* ``solvable_reshuffle`` (Mindful Mahjong 2.1 Law 4, Zen Reshuffle; Word
  Mahjong 2.5, Lexicon Fan) lays the remaining tiles over the same occupied slots in an
  order the solver proves winnable, with the same two-stage method.

Everything here is pure: randomness only from ``random.Random(seed)``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence, Union

from companion.errors import BadInput, IllegalMove
from companion.layouts import COORD_MAX, Layout, Slot
from companion.rules import Board, Geometry
from companion.tiles import TILES_PER_SET, VARIANTS, tileset

#: random draws tried by solvable_deal / solvable_reshuffle before building one
SOLVABLE_TRIES = 40
#: search nodes allowed to the solver per draw (a draw that needs more is skipped;
#: fewer than 1 % of random Turtle deals need over 500)
TRY_NODE_LIMIT = 2000
#: random backward plays tried when building a solvable arrangement
BUILD_TRIES = 200
#: search nodes for the exact fallback that looks for a removal order of the slots
ORDER_NODE_LIMIT = 2000


Seed = Union[int, str]


def _rng(seed: Seed) -> random.Random:
    """``random.Random(seed)``; the engine takes no unseeded randomness.

    Raises:
        BadInput: seed is not an int or a str.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, str)):
        raise BadInput(f"seed must be an integer or a string, not {seed!r}")
    return random.Random(seed)


@dataclass(frozen=True)
class Deal:
    """A layout with a face in every slot.

    Attributes:
        variant: one of :data:`companion.tiles.VARIANTS`.
        layout: the layout dealt on.
        faces: ``faces[i]`` is the face id lying at ``layout.slots[i]``.

    Raises:
        BadInput: unknown variant or face id, a face count that differs from
            the layout's slot count, or more copies of a face than the set holds.
    """

    variant: str
    layout: Layout
    faces: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "faces", tuple(self.faces))
        check_faces(self.variant, self.faces, len(self.layout), self.layout.name)

    def to_json(self) -> dict:
        """The contract's deal object."""
        return {"variant": self.variant, "layout": self.layout.name,
                "tiles": [{"slot": list(s), "face": f} for s, f in zip(self.layout.slots, self.faces)]}

    @classmethod
    def from_json(cls, obj: object, source: str = "deal") -> "Deal":
        """Parse the contract's deal object (already decoded from JSON).

        The layout is built from the tiles' slots, in their order, named by
        ``obj["layout"]``; ``source`` names the input in error messages.

        Raises:
            BadInput: one line naming ``source`` and the fault (not an object,
                missing or mistyped field, bad slot (coordinates beyond
                :data:`companion.layouts.COORD_MAX`, a layer below 0),
                repeated slot, unknown variant or face, too many copies of a
                face).
        """
        if not isinstance(obj, dict):
            raise BadInput(f"{source}: a deal must be a JSON object, not {type(obj).__name__}")
        given = obj.get("variant")
        variant = given.lower() if isinstance(given, str) else given    # as the command line's --variant LOVE
        if not isinstance(variant, str) or variant not in VARIANTS:
            shown = repr(given) if isinstance(given, str) else json.dumps(given)[:80]    # (null, not None)
            raise BadInput(f"{source}: unknown variant {shown} (expected one of {', '.join(VARIANTS)})")
        name = obj.get("layout")
        if not isinstance(name, str) or not name:
            raise BadInput(f"{source}: \"layout\" must be a non-empty string")
        tiles = obj.get("tiles")
        if not isinstance(tiles, list) or not tiles:
            raise BadInput(f"{source}: \"tiles\" must be a non-empty list")
        slots: list[Slot] = []
        faces: list[str] = []
        seen: set[Slot] = set()
        for k, t in enumerate(tiles):
            if not isinstance(t, dict):
                raise BadInput(f"{source}: tiles[{k}] must be an object with \"slot\" and \"face\"")
            slot = slot_from_json(t.get("slot"), f"{source}: tiles[{k}].slot")
            if slot in seen:
                raise BadInput(f"{source}: slot {slot} appears twice")
            seen.add(slot)
            f = t.get("face")
            if not isinstance(f, str):
                raise BadInput(f"{source}: tiles[{k}].face must be a face id string, got {json.dumps(f)[:40]}")
            slots.append(slot)
            faces.append(f)
        layout = Layout(name, tuple(slots), source)
        try:
            return cls(variant, layout, tuple(faces))
        except BadInput as exc:
            raise BadInput(f"{source}: {exc}") from None


def slot_from_json(value: object, where: str) -> Slot:
    """A deal's ``[x, y, z]`` slot (half-tile units, layer ``z``), as strict
    as a layout file's: three integers (not booleans, not floats) within
    +-:data:`companion.layouts.COORD_MAX` (the solver's C core holds them in
    32 bits), ``z >= 0``.

    Raises:
        BadInput: ``"WHERE must be ..."``, one line.
    """
    if (not isinstance(value, list) or len(value) != 3
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise BadInput(f"{where} must be [x, y, z] integers, got {json.dumps(value)[:40]}")
    if any(abs(v) > COORD_MAX for v in value) or value[2] < 0:
        raise BadInput(f"{where} {json.dumps(value)[:40]}: coordinates must lie within "
                       f"+-{COORD_MAX}, with z >= 0")
    return Slot(*value)


def check_faces(variant: str, faces: Sequence[str | None], n: int, where: str,
                allow_none: bool = False) -> None:
    """Refuse faces that ``variant``'s set cannot deal on ``n`` slots.

    Args:
        faces: one face id per slot (None: unknown, with ``allow_none``).
        where: the layout or file named in the messages.

    Raises:
        BadInput: not ``n`` faces; a face that is not a face id of the set;
            a face more often than the set holds it (one line).
    """
    ts = tileset(variant)  # BadInput on an unknown variant
    if len(faces) != n:
        raise BadInput(f"{len(faces)} faces for the {n} slots of layout {where!r}")
    counts = Counter(f for f in faces if f is not None or not allow_none)
    for f, c in counts.items():
        if not isinstance(f, str):
            raise BadInput(f"face {f!r} is not a face id")
        face = ts.face(f)  # BadInput on an unknown id
        if c > face.copies:
            raise BadInput(f"face {f!r} appears {c} times; a {variant} set holds {face.copies}")


# --------------------------------------------------------------------------- drawing

def _check_size(layout: Layout) -> int:
    n = len(layout)
    if n == 0:
        raise BadInput(f"layout {layout.name!r} has no slots")
    if n % 2:
        raise BadInput(f"layout {layout.name!r} has an odd number of slots ({n}): tiles go in pairs")
    if n > TILES_PER_SET:
        raise BadInput(f"layout {layout.name!r} has {n} slots; a set holds {TILES_PER_SET} tiles")
    return n


def _pairs(variant: str, rng: random.Random) -> list[tuple[str, str]]:
    """All 72 match pairs of a set: each match group shuffled and cut in pairs,
    then the pairs shuffled."""
    ts = tileset(variant)
    out: list[tuple[str, str]] = []
    for ids in ts.match_groups().values():
        group = [fid for fid in ids for _ in range(ts.face(fid).copies)]
        rng.shuffle(group)
        out += [(group[i], group[i + 1]) for i in range(0, len(group), 2)]
    rng.shuffle(out)
    return out


def _draw(variant: str, n: int, rng: random.Random) -> list[str]:
    if n == TILES_PER_SET:
        faces = tileset(variant).tiles()
        rng.shuffle(faces)
        return faces
    faces = [f for pair in _pairs(variant, rng)[: n // 2] for f in pair]
    rng.shuffle(faces)
    return faces


def random_deal(variant: str, layout: Layout, seed: Seed) -> Deal:
    """A seeded deal of ``variant``'s tiles on ``layout`` (see the module's drawing rules).

    Raises:
        BadInput: unknown variant; a layout with no, an odd number of, or more
            than 144 slots.
    """
    tileset(variant)
    n = _check_size(layout)
    return Deal(variant, layout, tuple(_draw(variant, n, _rng(seed))))


def solvable_deal(variant: str, layout: Layout, seed: Seed) -> Deal:
    """A seeded deal that the exact solver proves winnable.

    Draws deals as :func:`random_deal` does, from one ``random.Random(seed)``
    stream, until one is proved winnable (at most :data:`SOLVABLE_TRIES`
    draws); then builds one by backward play (module docstring).

    Raises:
        BadInput: as :func:`random_deal`, or the layout admits no winnable deal
            at all (e.g. two slots stacked on each other only).
    """
    from companion.solver import solve

    tileset(variant)
    n = _check_size(layout)
    rng = _rng(seed)
    for _ in range(SOLVABLE_TRIES):
        deal = Deal(variant, layout, tuple(_draw(variant, n, rng)))
        if solve(deal, node_limit=TRY_NODE_LIMIT).solvable:
            return deal
    present = [True] * n
    order = _removal_order(layout, present, rng)
    if order is None:
        raise BadInput(f"layout {layout.name!r} admits no winnable deal: its slots cannot be "
                       f"emptied two free tiles at a time")
    pairs = _pairs(variant, rng)[: n // 2]
    faces = _lay_pairs(order, pairs, n, rng)
    _check_line(variant, layout, present, order, faces)
    return Deal(variant, layout, tuple(faces))


def _standing_tiles(variant: str, layout: Layout, present: Sequence[bool],
                    faces: Sequence[str | None]) -> tuple[list[bool], list[int], list[str]]:
    """``(present per slot, indices of the standing tiles, their faces)`` for
    a reshuffle.

    Raises:
        BadInput: lengths differ, a standing tile has no or an unknown face.
    """
    ts = tileset(variant)
    n = len(layout)
    if len(present) != n or len(faces) != n:
        raise BadInput(f"present ({len(present)}) and faces ({len(faces)}) must both give "
                       f"the {n} slots of layout {layout.name!r}")
    pres = [bool(p) for p in present]
    idx = [i for i in range(n) if pres[i]]
    remaining: list[str] = []
    for i in idx:
        f = faces[i]
        if f is None:
            raise BadInput(f"slot {layout.slots[i]} holds a tile of unknown face")
        ts.face(f)  # BadInput on an unknown id
        remaining.append(f)
    return pres, idx, remaining


class UnpairableTiles(BadInput):
    """The remaining tiles hold a match key an odd number of times, so no
    arrangement of them is cleared by pairs alone (Word Mahjong after a word
    of letters once each; a Mindful board set by hand)."""


def shuffle_with_free_match(variant: str, layout: Layout, present: Sequence[bool],
                            faces: Sequence[str | None], seed: Seed,
                            spells: "Callable[[list[str]], bool] | None" = None
                            ) -> tuple[tuple[str | None, ...], bool]:
    """Lay the remaining tiles again over the occupied slots so that at least
    one valid match stands free, where the exact solver cannot prove a
    winnable arrangement (:func:`solvable_reshuffle`: tiles that cannot all
    be paired, or slots that cannot be emptied two at a time).  Word Mahjong
    2.5, Lexicon Fan: "Rearranges all remaining tiles on the board to
    guarantee at least one valid match"; Mindful 2.1 Law 4: the tiles
    "gathered, gently shuffled, and re-laid".

    A seeded shuffle; when it leaves no matching pair free and the tiles hold
    one (two tiles of one match key) and at least two slots stand free, two
    such tiles are laid on two free slots chosen at random and the rest
    shuffled around them.  When the tiles hold no pair at all, up to
    :data:`SOLVABLE_TRIES` shuffles are tried for one whose free tiles
    ``spells`` accepts (Word Mahjong: they spell a word).

    Args:
        present, faces, seed: as :func:`solvable_reshuffle`.
        spells: given the faces of the free tiles, whether they make a word.

    Returns:
        ``(faces per slot, found)``: None where no tile stands; ``found`` says
        whether a match (a free pair, or a word ``spells`` accepts) stands
        free.

    Raises:
        BadInput: lengths differ, a present slot has no or an unknown face.
    """
    ts = tileset(variant)
    n = len(layout)
    pres, idx, remaining = _standing_tiles(variant, layout, present, faces)
    board = Board(layout)
    for i in range(n):
        if not pres[i]:
            board.remove(i)
    free = board.free_indices()
    rng = _rng(seed)

    def lay(first: dict[int, str], rest: list[str]) -> list[str | None]:
        out: list[str | None] = [None] * n
        it = iter(rest)
        for i in idx:
            out[i] = first[i] if i in first else next(it)
        return out

    def free_pair(out: list[str | None]) -> bool:
        keys = Counter(ts.face(out[i]).match for i in free)   # type: ignore[arg-type]
        return any(c >= 2 for c in keys.values())

    perm = remaining[:]
    rng.shuffle(perm)
    out = lay({}, perm)
    if free_pair(out) or (spells is not None and spells([out[i] for i in free])):   # type: ignore[misc]
        return tuple(out), True
    keys = Counter(ts.face(f).match for f in remaining)
    doubled = sorted(k for k, c in keys.items() if c >= 2)
    if doubled and len(free) >= 2:
        k = rng.choice(doubled)
        pick = [f for f in remaining if ts.face(f).match == k]
        rng.shuffle(pick)
        f1, f2 = pick[:2]
        rest = remaining[:]
        rest.remove(f1)
        rest.remove(f2)
        rng.shuffle(rest)
        a, b = rng.sample(free, 2)
        return tuple(lay({a: f1, b: f2}, rest)), True
    if spells is not None:
        for _ in range(SOLVABLE_TRIES):
            rng.shuffle(perm)
            out = lay({}, perm)
            if spells([out[i] for i in free]):     # type: ignore[misc]
                return tuple(out), True
    return tuple(out), False


def solvable_reshuffle(variant: str, layout: Layout, present: Sequence[bool],
                       faces: Sequence[str | None], seed: Seed) -> tuple[str | None, ...]:
    """Lay the remaining tiles again over the occupied slots, in a winnable order.

    Args:
        present: per slot of ``layout``, whether a tile stands there.
        faces: per slot, the face there (read where ``present``; None elsewhere).
        seed: seed of the shuffle.

    Returns:
        Per slot, the new face (None where no tile stands); the multiset of
        faces and the occupied slots are unchanged, and the solver proves the
        position winnable.  Mindful Mahjong 2.1 Law 4 (Zen Reshuffle: the
        remaining tiles "re-laid onto the current layout footprint without
        changing layer heights"); Word Mahjong 1.x Cadmus's Literary Dock and
        2.5 (Lexicon Fan: "a guaranteed solvable arrangement").

    Raises:
        BadInput: lengths differ, a present slot has no or an unknown face;
            :class:`UnpairableTiles` (a BadInput) when the remaining tiles
            cannot be paired (a match key an odd number of times).
        IllegalMove: no arrangement of these tiles on these slots can be won
            (e.g. two tiles stacked on each other only).
    """
    from companion.solver import match_keys, solve_keys

    ts = tileset(variant)
    n = len(layout)
    pres, idx, remaining = _standing_tiles(variant, layout, present, faces)
    keys = Counter(ts.face(f).match for f in remaining)
    odd = sorted(k for k, c in keys.items() if c % 2)
    if odd:
        raise UnpairableTiles(f"the remaining tiles cannot all be paired: match key(s) {', '.join(odd)} "
                              f"appear an odd number of times")
    if not idx:
        return tuple([None] * n)
    rng = _rng(seed)
    out: list[str | None] = [None] * n
    for _ in range(SOLVABLE_TRIES):
        perm = remaining[:]
        rng.shuffle(perm)
        for i, f in zip(idx, perm):
            out[i] = f
        if solve_keys(layout, match_keys(variant, out, pres), pres, node_limit=TRY_NODE_LIMIT).solvable:
            return tuple(out)
    order = _removal_order(layout, pres, rng)
    if order is None:
        raise IllegalMove(f"no arrangement of the {len(idx)} remaining tiles can be won: "
                          f"the occupied slots cannot be emptied two free tiles at a time")
    by_key: dict[str, list[str]] = {}
    for f in remaining:
        by_key.setdefault(ts.face(f).match, []).append(f)
    pairs: list[tuple[str, str]] = []
    for k in sorted(by_key):
        group = by_key[k]
        rng.shuffle(group)
        pairs += [(group[i], group[i + 1]) for i in range(0, len(group), 2)]
    rng.shuffle(pairs)
    laid = _lay_pairs(order, pairs, n, rng)
    _check_line(variant, layout, pres, order, laid)
    return tuple(laid[i] if pres[i] else None for i in range(n))


# --------------------------------------------------------------------------- backward play

def _lay_pairs(order: list[tuple[int, int]], pairs: list[tuple[str, str]], n: int,
               rng: random.Random) -> list[str]:
    """Put pair k on the k-th removed couple of slots (random orientation)."""
    out: list[str] = [""] * n
    for (i, j), (f, g) in zip(order, pairs):
        if rng.random() < 0.5:
            f, g = g, f
        out[i], out[j] = f, g
    return out


def _check_line(variant: str, layout: Layout, present: list[bool],
                order: list[tuple[int, int]], faces: list[str]) -> None:
    """Replay the winning line of a built arrangement on a Board: every pair
    free and matching at its turn, the board emptied (a proof of
    winnability, checked rather than trusted)."""
    ts = tileset(variant)
    b = Board(layout)
    for i in range(len(layout)):
        if not present[i]:
            b.remove(i)
    for i, j in order:
        if not (b.is_free(i) and b.is_free(j) and ts.matches(faces[i], faces[j])):
            raise AssertionError(f"built line breaks at {layout.slots[i]}, {layout.slots[j]}")  # a bug
        b.remove(i)
        b.remove(j)
    if b.n_present:
        raise AssertionError("built line does not empty the board")  # a bug


def _removal_order(layout: Layout, present: list[bool],
                   rng: random.Random) -> list[tuple[int, int]] | None:
    """A way to empty the occupied slots two free tiles at a time (faces
    ignored), or None when there is none.

    Random backward plays first (free tiles with many tiles under them are
    taken first more often); then the exact solver with every tile matching
    every other (node-limited: None also when that bound is hit).
    """
    geom = Geometry.of(layout)
    n = len(layout)
    base = Board(geom)
    for i in range(n):
        if not present[i]:
            base.remove(i)
    if base.n_present == 0:
        return []
    depth = [len(_below(geom, i, present)) for i in range(n)]
    for _ in range(BUILD_TRIES):
        b = base.copy()
        order: list[tuple[int, int]] = []
        while b.n_present:
            free = b.free_indices()
            if len(free) < 2:
                break
            weights = [(1 + depth[i]) ** 2 for i in free]
            x = rng.choices(free, weights)[0]
            k = free.index(x)
            rest = free[:k] + free[k + 1:]
            y = rng.choices(rest, weights[:k] + weights[k + 1:])[0]
            b.remove(x)
            b.remove(y)
            order.append((x, y))
        if not b.n_present:
            return order
    from companion.solver import solve_keys

    res = solve_keys(layout, [0] * n, present, node_limit=ORDER_NODE_LIMIT)
    if res.solvable:
        return list(res.moves)
    return None


def _below(geom: Geometry, i: int, present: list[bool]) -> set[int]:
    """Present slots that slot ``i`` covers, directly or through other tiles."""
    seen: set[int] = set()
    todo = [j for j in geom.covers[i] if present[j]]
    while todo:
        j = todo.pop()
        if j in seen:
            continue
        seen.add(j)
        todo += [k for k in geom.covers[j] if present[k]]
    return seen
