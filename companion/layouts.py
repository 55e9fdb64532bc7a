"""Slots and layouts on the half-tile grid.

A slot is ``(x, y, z)`` on the half-tile grid used by KMahjongg and GNOME
Mahjongg (../shared/CONTRACT.md, "Physical standard"): a tile there covers
``[x, x+2) x [y, y+2)`` half-units on layer ``z``; ``z = 0`` lies on the mat.

The mat holds 18 x 8 tile cells, i.e. 36 x 16 half-units.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Iterable

from companion.errors import BadInput

MAT_HALF_UNITS = (36, 16)  # (width, height) of the mat grid in half-tile units


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
            if len(parts) != 3:
                raise ValueError
            x, y, z = (int(p) for p in parts)
        except ValueError:
            raise BadInput(f"bad slot {text!r}: expected x,y,z integers") from None
        return cls(x, y, z)


def overlaps(a: Slot, b: Slot) -> bool:
    """True when the footprints of ``a`` and ``b`` overlap (layers ignored)."""
    return abs(a.x - b.x) < 2 and abs(a.y - b.y) < 2


@dataclass(frozen=True)
class Layout:
    """A named set of slots.

    Attributes:
        name: layout name (``"turtle"``) or the file it came from.
        slots: the slots in the layout's order (the order of ``recognize``'s
            output and of deals).
        source: where it came from (``"builtin"``, a file path), for messages.
    """

    name: str
    slots: tuple[Slot, ...]
    source: str = "builtin"
    index: dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    def __post_init__(self) -> None:
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
        """``(min_x, min_y, max_x + 2, max_y + 2)`` in half-units: the footprint's box."""
        xs = [s.x for s in self.slots]
        ys = [s.y for s in self.slots]
        return min(xs), min(ys), max(xs) + 2, max(ys) + 2


@dataclass(frozen=True)
class LayoutReport:
    """What :func:`check_layout` found.

    Attributes:
        playable: even tile count and no overlap on a layer (the engine can play it).
        buildable: also every tile above layer 0 rests on tiles below and the
            footprint fits the 36 x 16 half-unit mat: it can be built on the mat.
        problems: one line per problem found.
    """

    playable: bool
    buildable: bool
    problems: tuple[str, ...]


def floating_slots(slots: Iterable[Slot]) -> list[Slot]:
    """Slots above layer 0 whose footprint is not fully supported by the layer below.

    A tile at ``(x, y, z)`` rests when each of its four quarter cells
    ``(x+i, y+j)``, i, j in {0, 1}, lies on some tile of layer ``z - 1``.
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
        if not all((s.x + i, s.y + j, s.z - 1) in cells for i in (0, 1) for j in (0, 1)):
            out.append(s)
    return out


def check_layout(layout: Layout) -> LayoutReport:
    """Validate a layout: playable (even count, no overlap on one layer, no
    duplicate slot) and buildable on the mat (supported tiles, fits the mat).

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
    by_layer: dict[int, list[Slot]] = {}
    for s in slots:
        by_layer.setdefault(s.z, []).append(s)
    if any(s.z < 0 for s in slots):
        problems.append("negative layer")
    clash = _first_overlap(by_layer)
    if clash:
        problems.append(f"tiles {clash[0]} and {clash[1]} overlap on layer {clash[0].z}")
    playable = not problems
    build_problems: list[str] = []
    if slots:
        floating = floating_slots(slots)
        if floating:
            build_problems.append(f"{len(floating)} tile(s) not resting on tiles below, e.g. {floating[0]}")
        x0, y0, x1, y1 = layout.bounds()
        if x1 - x0 > MAT_HALF_UNITS[0] or y1 - y0 > MAT_HALF_UNITS[1]:
            build_problems.append(
                f"footprint {x1 - x0}x{y1 - y0} half-units is larger than the mat's "
                f"{MAT_HALF_UNITS[0]}x{MAT_HALF_UNITS[1]}")
    return LayoutReport(playable, playable and not build_problems, tuple(problems + build_problems))


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


def shifted_to_origin(layout: Layout) -> Layout:
    """The same layout moved so its footprint's box starts at (0, 0), centred on the mat
    when it fits (whole half-units)."""
    x0, y0, x1, y1 = layout.bounds()
    w, h = x1 - x0, y1 - y0
    ox = max(0, (MAT_HALF_UNITS[0] - w) // 2)
    oy = max(0, (MAT_HALF_UNITS[1] - h) // 2)
    return Layout(layout.name, tuple(Slot(s.x - x0 + ox, s.y - y0 + oy, s.z) for s in layout.slots),
                  layout.source)
