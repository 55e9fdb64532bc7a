"""The free-tile rule: covered, pinched, free, with reasons.  The only home of
that rule in the project.

Rule (../shared/CONTRACT.md "Free"; Love Mahjong 2.1 Law 1, Candy Mahjong 2.1
Law 1, Mindful Mahjong 2.1 Law 1, Word Mahjong 2.1 Rule 1):

* covered: some present tile on ANY higher layer overlaps it at all
  (``|dx| < 2 and |dy| < 2``);
* pinched: the same layer holds a present tile at ``x - 2`` with ``|dy| < 2``
  AND one at ``x + 2`` with ``|dy| < 2``;
* free = present and not covered and not pinched.

:class:`Board` keeps, for every slot, how many present tiles cover it and how
many sit on its left and right, so a removal or an undo updates the free flags
of the few affected slots only (O(neighbours), no full recomputation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from companion.errors import IllegalMove, BadInput
from companion.layouts import Layout, Slot


@dataclass(frozen=True)
class Geometry:
    """Static neighbourhood of every slot of a layout (indices into ``layout.slots``).

    Attributes:
        covers: ``covers[i]`` = slots on lower layers that slot ``i`` overlaps
            (the tiles it covers).
        covered_by: ``covered_by[i]`` = slots on higher layers overlapping ``i``.
        left / right: same-layer slots at ``x -/+ 2`` with ``|dy| < 2``.
    """

    layout: Layout
    covers: tuple[tuple[int, ...], ...]
    covered_by: tuple[tuple[int, ...], ...]
    left: tuple[tuple[int, ...], ...]
    right: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, layout: Layout) -> "Geometry":
        """Build the neighbourhood tables; O(n) with a cell hash."""
        slots = layout.slots
        n = len(slots)
        at: dict[tuple[int, int], list[int]] = {}
        for i, s in enumerate(slots):
            at.setdefault((s.x, s.y), []).append(i)
        covers: list[list[int]] = [[] for _ in range(n)]
        covered_by: list[list[int]] = [[] for _ in range(n)]
        left: list[list[int]] = [[] for _ in range(n)]
        right: list[list[int]] = [[] for _ in range(n)]
        for i, s in enumerate(slots):
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    for j in at.get((s.x + dx, s.y + dy), ()):
                        if slots[j].z > s.z:
                            covered_by[i].append(j)
                            covers[j].append(i)
            for dy in (-1, 0, 1):
                for j in at.get((s.x - 2, s.y + dy), ()):
                    if slots[j].z == s.z:
                        left[i].append(j)
                for j in at.get((s.x + 2, s.y + dy), ()):
                    if slots[j].z == s.z:
                        right[i].append(j)
        tup = lambda ll: tuple(tuple(sorted(l)) for l in ll)  # noqa: E731
        return cls(layout, tup(covers), tup(covered_by), tup(left), tup(right))


@dataclass(frozen=True)
class BlockReason:
    """Why a slot is (not) free: the present tiles that cover it and those
    pinching it from the left and the right.

    ``free`` is None for a removed slot.
    """

    slot: Slot
    present: bool
    free: bool | None
    covered_by: tuple[Slot, ...]
    left: tuple[Slot, ...]
    right: tuple[Slot, ...]

    @property
    def covered(self) -> bool:
        return bool(self.covered_by)

    @property
    def pinched(self) -> bool:
        return bool(self.left) and bool(self.right)

    def describe(self) -> str:
        """One sentence a referee can read out, e.g.
        ``"12,6,0 is blocked: covered by 12,6,1"``."""
        if not self.present:
            return f"{self.slot} is not on the board"
        if self.free:
            side = "left" if not self.left else "right"
            return f"{self.slot} is free: nothing on top and its {side} side is open"
        parts = []
        if self.covered_by:
            parts.append("covered by " + ", ".join(map(str, self.covered_by)))
        if self.pinched:
            parts.append("pinched between " + ", ".join(map(str, self.left)) + " (left) and "
                         + ", ".join(map(str, self.right)) + " (right)")
        return f"{self.slot} is blocked: " + "; ".join(parts)

    def plain(self) -> str:
        """Why, in words a player at the table follows without coordinates
        (the event lines the phones show): ``"under another tile and between
        tiles on its left and right"``, ``"under 2 tiles"``, ``"between tiles
        on its left and right"``; for a free tile ``"nothing on top and one
        side open"``, for an empty slot ``"no tile there"``.  The rule: a tile
        is blocked when covered or pinched (rule books 2.1, Law 1; CONTRACT.md
        "Free")."""
        if not self.present:
            return "no tile there"
        if self.free:
            return "nothing on top and one side open"
        parts = []
        if self.covered_by:
            n = len(self.covered_by)
            parts.append("under another tile" if n == 1 else f"under {n} tiles")
        if self.pinched:
            parts.append("between tiles on its left and right")
        return " and ".join(parts)

    def to_json(self) -> dict:
        """The contract's ``free`` entry for this slot."""
        return {"slot": list(self.slot), "present": self.present, "free": self.free,
                "covered_by": [list(s) for s in self.covered_by],
                "left": [list(s) for s in self.left], "right": [list(s) for s in self.right]}


class Board:
    """Which slots of a layout hold a tile, with incrementally kept free flags.

    ``remove``/``restore`` are the mutating pair (``restore`` is the undo of a
    removal); ``copy`` gives an independent board.  Indices are positions in
    ``layout.slots``.
    """

    __slots__ = ("geometry", "present", "n_cover", "n_left", "n_right", "n_present")

    def __init__(self, layout: Layout | Geometry, removed: Iterable[Slot] = ()) -> None:
        g = layout if isinstance(layout, Geometry) else Geometry.of(layout)
        self.geometry = g
        n = len(g.layout.slots)
        self.present = [True] * n
        self.n_cover = [len(c) for c in g.covered_by]
        self.n_left = [len(c) for c in g.left]
        self.n_right = [len(c) for c in g.right]
        self.n_present = n
        for s in removed:
            self.remove(g.layout.slot_index(s))

    @property
    def layout(self) -> Layout:
        return self.geometry.layout

    def copy(self) -> "Board":
        b = Board.__new__(Board)
        b.geometry = self.geometry
        b.present = self.present[:]
        b.n_cover = self.n_cover[:]
        b.n_left = self.n_left[:]
        b.n_right = self.n_right[:]
        b.n_present = self.n_present
        return b

    def is_free(self, i: int) -> bool:
        """True when slot ``i`` holds a tile that is neither covered nor pinched."""
        return self.present[i] and self.n_cover[i] == 0 and (self.n_left[i] == 0 or self.n_right[i] == 0)

    def free_indices(self) -> list[int]:
        """Indices of all free tiles, in layout order."""
        return [i for i in range(len(self.present)) if self.is_free(i)]

    def present_indices(self) -> list[int]:
        return [i for i, p in enumerate(self.present) if p]

    def remove(self, i: int) -> None:
        """Take the tile out of slot ``i`` and update neighbours' counts.

        Raises:
            IllegalMove: slot ``i`` is already empty.
        """
        if not self.present[i]:
            raise IllegalMove(f"slot {self.layout.slots[i]} is already empty")
        g = self.geometry
        self.present[i] = False
        self.n_present -= 1
        for j in g.covers[i]:
            self.n_cover[j] -= 1
        for j in g.left[i]:      # i is the right neighbour of its left neighbours
            self.n_right[j] -= 1
        for j in g.right[i]:
            self.n_left[j] -= 1

    def restore(self, i: int) -> None:
        """Put a tile back into slot ``i`` (undo of :meth:`remove`).

        Raises:
            IllegalMove: slot ``i`` already holds a tile.
        """
        if self.present[i]:
            raise IllegalMove(f"slot {self.layout.slots[i]} already holds a tile")
        g = self.geometry
        self.present[i] = True
        self.n_present += 1
        for j in g.covers[i]:
            self.n_cover[j] += 1
        for j in g.left[i]:
            self.n_right[j] += 1
        for j in g.right[i]:
            self.n_left[j] += 1

    def remove_slot(self, slot: Slot | Sequence[int]) -> int:
        """Remove by slot coordinates; returns the index.

        Raises:
            BadInput: slot not in the layout.  IllegalMove: already removed.
        """
        i = self.layout.slot_index(slot)
        self.remove(i)
        return i

    def reason(self, i: int) -> BlockReason:
        """Why slot ``i`` is free or blocked (present covering and pinching tiles)."""
        g = self.geometry
        slots = self.layout.slots
        pres = self.present
        cov = tuple(slots[j] for j in g.covered_by[i] if pres[j])
        left = tuple(slots[j] for j in g.left[i] if pres[j])
        right = tuple(slots[j] for j in g.right[i] if pres[j])
        if not pres[i]:
            return BlockReason(slots[i], False, None, cov, left, right)
        return BlockReason(slots[i], True, self.is_free(i), cov, left, right)

    def free_flags_full(self) -> list[bool | None]:
        """Free flags recomputed from scratch from the rule (for checks):
        None for empty slots."""
        g = self.geometry
        pres = self.present
        out: list[bool | None] = []
        for i in range(len(pres)):
            if not pres[i]:
                out.append(None)
                continue
            covered = any(pres[j] for j in g.covered_by[i])
            pinched = any(pres[j] for j in g.left[i]) and any(pres[j] for j in g.right[i])
            out.append(not covered and not pinched)
        return out

    def free_flags(self) -> list[bool | None]:
        """Free flags from the incremental counts: None for empty slots."""
        return [self.is_free(i) if self.present[i] else None for i in range(len(self.present))]

    def snapshot(self) -> tuple:
        """A hashable value equal for boards in the same state."""
        return (tuple(self.present), tuple(self.n_cover), tuple(self.n_left), tuple(self.n_right))


def board_after(layout: Layout, removed: Iterable[Sequence[int]]) -> Board:
    """A board of ``layout`` with the given slots removed.

    Raises:
        BadInput: a slot is not in the layout, or named twice.
    """
    b = Board(layout)
    for s in removed:
        i = layout.slot_index(s)
        if not b.present[i]:
            raise BadInput(f"slot {Slot(*s)} is removed twice")
        b.remove(i)
    return b


def unreachable(geometry: Geometry, present: Sequence[bool]) -> list[int]:
    """The empty slots of a board that no game played by the free rule
    leaves empty: starting from the full layout, every empty slot whose tile
    is free is taken away, again and again (a removal only ever frees more
    tiles, so the order does not matter); what stays is returned.

    An empty list means the board can be reached one free tile at a time (a
    necessary condition for a game of pairs, which also takes two free tiles
    at once).  Example: in a row of five, ``X . . X X`` cannot be reached
    (both gaps were pinched), ``. . X X X`` can.

    Args:
        geometry: the layout's :class:`Geometry`.
        present: ``N`` bools in layout order, True where a tile stands.

    Returns:
        Indices (ascending) of the empty slots that could not have left.

    Raises:
        BadInput: ``present`` does not have one entry per slot.

    Rule: only free tiles leave the board (Love/Candy/Mindful Mahjong 2.1
    Law 1, Word Mahjong 2.1 Rule 1).
    """
    n = len(geometry.layout.slots)
    if len(present) != n:
        raise BadInput(f"{len(present)} presence flags for a layout of {n} slots")
    b = Board(geometry)
    todo = [i for i in range(n) if not present[i]]
    gone = set()
    while True:
        freed = [i for i in todo if b.is_free(i)]
        if not freed:
            break
        for i in freed:
            b.remove(i)
            gone.add(i)
        todo = [i for i in todo if i not in gone]
    return sorted(todo)
