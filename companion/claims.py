"""Pair claims: validate two tiles against a board, give the verdict and its
reason, apply and undo.

A pair claim is valid when both slots are in the layout and distinct, both
hold a tile, both tiles are free at that moment (companion.rules), and their
faces match under the variant's relation (companion.tiles).  Sources: Love
Mahjong 2.1 Law 2 "The Two-Tile Matching Rule"; Candy Mahjong 2.1 Law 2;
Mindful Mahjong 2.1 Law 2 "Standard and Special Matching Protocols"; Word
Mahjong 2.1 Rule 2 "Classic Pair Matching".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from companion.errors import BadInput, IllegalMove
from companion.layouts import Slot
from companion.rules import Board, BlockReason
from companion.tiles import TileSet

# Verdict codes (stable strings used in ledger events and the referee's output).
OK = None
NOT_IN_LAYOUT = "not-in-layout"
SAME_TILE = "same-tile"
MISSING = "missing"
BLOCKED = "blocked"
NO_MATCH = "no-match"
UNKNOWN_FACE = "unknown-face"


@dataclass(frozen=True)
class Verdict:
    """The engine's answer to a pair claim.

    Attributes:
        valid: True when the pair may be removed.
        code: None when valid, else one of the module's codes
            (``"blocked"``, ``"no-match"``, ``"missing"`` ...).
        reason: one sentence a referee can read out.
        slots: the two claimed slots.
        faces: their faces (None where unknown).
        blocks: for each slot, why it is free or blocked (covering and pinching
            tiles), None for slots not in the layout.
    """

    valid: bool
    code: str | None
    reason: str
    slots: tuple[Slot, Slot]
    faces: tuple[str | None, str | None]
    blocks: tuple[BlockReason | None, BlockReason | None]

    @property
    def blocked_slots(self) -> tuple[Slot, ...]:
        """Claimed slots that hold a tile that is not free (penalty candidates)."""
        return tuple(b.slot for b in self.blocks if b is not None and b.present and not b.free)


def check_claim(board: Board, faces: Sequence[str | None], tileset: TileSet,
                a: Sequence[int], b: Sequence[int]) -> Verdict:
    """Validate the claim of the tiles at slots ``a`` and ``b``.

    Args:
        board: the current board (not changed).
        faces: face id per layout slot index (None where unknown).
        tileset: the variant's tile set (matching relation).
        a, b: the two slots as ``(x, y, z)``.

    The checks run in the order: in layout, distinct, present, free,
    matching; the first failure gives the code.  Never raises for a bad claim:
    it returns an invalid verdict.
    """
    sa, sb = Slot(*a), Slot(*b)
    layout = board.layout
    ia = layout.index.get(sa)
    ib = layout.index.get(sb)
    ra = board.reason(ia) if ia is not None else None
    rb = board.reason(ib) if ib is not None else None
    fa = faces[ia] if ia is not None else None
    fb = faces[ib] if ib is not None else None

    def verdict(code: str | None, reason: str) -> Verdict:
        return Verdict(code is None, code, reason, (sa, sb), (fa, fb), (ra, rb))

    for s, i in ((sa, ia), (sb, ib)):
        if i is None:
            return verdict(NOT_IN_LAYOUT, f"slot {s} is not in layout {layout.name!r}")
    if sa == sb:
        return verdict(SAME_TILE, f"both picks are the same tile {sa}")
    for r in (ra, rb):
        if not r.present:
            return verdict(MISSING, f"slot {r.slot} holds no tile")
    blocked = [r for r in (ra, rb) if not r.free]
    if blocked:
        return verdict(BLOCKED, "; ".join(r.describe() for r in blocked))
    if fa is None or fb is None:
        return verdict(UNKNOWN_FACE, f"the face at {sa if fa is None else sb} is not known")
    if not tileset.matches(fa, fb):
        return verdict(NO_MATCH, f"{tileset.face(fa).name} does not match {tileset.face(fb).name}")
    return verdict(OK, f"{tileset.face(fa).name} matches {tileset.face(fb).name}; both free")


def apply_claim(board: Board, verdict: Verdict) -> tuple[int, int]:
    """Remove a valid claim's two tiles from ``board``; returns their indices.

    Raises:
        IllegalMove: the verdict is not valid.
    """
    if not verdict.valid:
        raise IllegalMove(f"cannot apply an invalid claim: {verdict.reason}")
    ia = board.layout.slot_index(verdict.slots[0])
    ib = board.layout.slot_index(verdict.slots[1])
    board.remove(ia)
    board.remove(ib)
    return ia, ib


def undo_claim(board: Board, indices: tuple[int, int]) -> None:
    """Put back the two tiles removed by :func:`apply_claim`.

    Raises:
        IllegalMove: a slot already holds a tile.
    """
    ia, ib = indices
    board.restore(ib)
    board.restore(ia)


def parse_pair(text: str) -> tuple[Slot, Slot]:
    """Parse ``"x,y,z x,y,z"`` or ``"x,y,z;x,y,z"`` into two slots.

    Raises:
        BadInput: not two slots.
    """
    parts = text.replace(";", " ").split()
    if len(parts) != 2:
        raise BadInput(f"bad pair {text!r}: expected two slots 'x,y,z x,y,z'")
    return Slot.parse(parts[0]), Slot.parse(parts[1])
