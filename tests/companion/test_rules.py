"""The free rule (companion/rules.py): hand-worked cases of covered and pinched,
perft-style data cases (a layout and its free set), and properties over every
real layout: the incremental free flags equal a full recomputation after any
removals, and restoring in reverse order gives the starting board back.

Rule (CONTRACT.md "Free"; Love 2.1 Law 1, Candy 2.1 Law 1, Mindful 2.1 Law 1,
Word 2.1 Rule 1): covered when a tile on ANY higher layer overlaps it at all
(|dx| < 2 and |dy| < 2); pinched when the same layer holds a tile at x-2 with
|dy| < 2 AND one at x+2 with |dy| < 2; free = not covered and not pinched.
"""

from __future__ import annotations

import random
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion import codex
from companion.errors import BadInput, IllegalMove
from companion.layouts import (Layout, Slot, gnome_map_names, parse_gnome_map, parse_kmahjongg,
                               parse_mah_boards)
from companion.rules import Board, Geometry, board_after, unreachable

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CORPUS = SHARED / "corpus" / "layouts"


def lay(*slots: tuple[int, int, int]) -> Layout:
    return Layout("hand", tuple(Slot(*s) for s in slots))


def free_set(board: Board) -> set[Slot]:
    return {board.layout.slots[i] for i in board.free_indices()}


# --------------------------------------------------------------------------- covered

class TestCovered:
    def test_half_offset_tile_two_layers_up_covers(self):
        # |dx| = 1, |dy| = 1 and two layers higher: still covered ("ANY higher layer")
        b = Board(lay((0, 0, 0), (1, 1, 2)))
        assert not b.is_free(0)
        r = b.reason(0)
        assert r.covered_by == (Slot(1, 1, 2),) and not r.pinched
        assert r.describe() == "0,0,0 is blocked: covered by 1,1,2"
        assert r.plain() == "under another tile"

    def test_touching_edges_do_not_cover(self):
        # dx = 2 (or dy = 2): the footprints only touch
        b = Board(lay((0, 0, 0), (2, 0, 1), (0, 2, 1), (-2, -2, 1)))
        assert b.is_free(0)

    def test_plain_words_count_the_covers_and_name_both_blocks(self):
        # two tiles straddle (2,0,0) from above, and it lies between (0,0,0) and (4,0,0)
        b = Board(lay((0, 0, 0), (2, 0, 0), (4, 0, 0), (1, 0, 1), (3, 0, 1)))
        assert b.reason(1).plain() == "under 2 tiles and between tiles on its left and right"

    def test_every_overlap_offset_covers(self):
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                assert not Board(lay((0, 0, 0), (dx, dy, 1))).is_free(0), (dx, dy)

    def test_tile_below_never_blocks(self):
        b = Board(lay((0, 0, 1), (1, 1, 0)))
        assert b.is_free(0) and not b.is_free(1)

    def test_uncovered_when_cover_removed(self):
        # (1,0,1) straddles (0,0,0) and (2,0,0); (3,0,1) covers only (2,0,0)
        b = Board(lay((0, 0, 0), (2, 0, 0), (1, 0, 1), (3, 0, 1)))
        assert free_set(b) == {Slot(1, 0, 1), Slot(3, 0, 1)}
        b.remove(2)
        assert free_set(b) == {Slot(0, 0, 0), Slot(3, 0, 1)}
        b.remove(3)
        assert free_set(b) == {Slot(0, 0, 0), Slot(2, 0, 0)}


# --------------------------------------------------------------------------- pinched

class TestPinched:
    ROW = ((0, 0, 0), (2, 0, 0), (4, 0, 0))

    def test_middle_of_a_row_is_pinched_only_with_both_sides(self):
        b = Board(lay(*self.ROW))
        assert free_set(b) == {Slot(0, 0, 0), Slot(4, 0, 0)}
        r = b.reason(1)
        assert r.left == (Slot(0, 0, 0),) and r.right == (Slot(4, 0, 0),) and r.pinched
        assert "pinched between 0,0,0 (left) and 4,0,0 (right)" in r.describe()
        assert r.plain() == "between tiles on its left and right"
        assert b.reason(0).plain() == "nothing on top and one side open"
        b.remove(0)
        assert b.reason(0).plain() == "no tile there"
        assert b.is_free(1)                     # left open
        b.restore(0)
        b.remove(2)
        assert b.is_free(1)                     # right open

    def test_neighbours_half_a_tile_up_or_down_count(self):
        # |dy| = 1 counts on both sides
        b = Board(lay((0, 1, 0), (2, 0, 0), (4, -1, 0)))
        assert not b.is_free(1)
        assert b.reason(1).left == (Slot(0, 1, 0),) and b.reason(1).right == (Slot(4, -1, 0),)

    def test_neighbours_a_whole_tile_off_do_not_count(self):
        b = Board(lay((0, 2, 0), (2, 0, 0), (4, 0, 0)))
        assert b.is_free(1)
        b = Board(lay((0, 0, 0), (2, 0, 0), (4, -2, 0)))
        assert b.is_free(1)

    def test_gap_of_half_a_tile_does_not_pinch(self):
        # x - 3 and x + 3 are not neighbours (x +- 2 only)
        assert Board(lay((0, 0, 0), (3, 0, 0), (6, 0, 0))).is_free(1)

    def test_one_side_only_is_free(self):
        b = Board(lay((0, 0, 0), (2, 0, 0), (2, 2, 0), (4, 2, 0)))
        assert free_set(b) == set(b.layout.slots)

    def test_neighbours_on_another_layer_do_not_pinch(self):
        b = Board(lay((2, 0, 0), (0, 0, 1), (4, 0, 1), (0, 4, 0), (4, 4, 0)))
        assert b.is_free(0)

    def test_two_left_neighbours_both_must_go(self):
        # left side holds (0,-1) and (0,1); the right side (4,0)
        b = Board(lay((0, -1, 0), (0, 1, 0), (2, 0, 0), (4, 0, 0)))
        assert not b.is_free(2)
        b.remove(0)
        assert not b.is_free(2)
        b.remove(1)
        assert b.is_free(2)

    def test_covered_and_pinched_reason(self):
        b = Board(lay((0, 0, 0), (2, 0, 0), (4, 0, 0), (2, 0, 1)))
        r = b.reason(1)
        assert r.covered_by == (Slot(2, 0, 1),) and r.pinched and r.free is False
        assert r.to_json() == {"slot": [2, 0, 0], "present": True, "free": False,
                               "covered_by": [[2, 0, 1]], "left": [[0, 0, 0]], "right": [[4, 0, 0]]}


# --------------------------------------------------------------------------- boards

class TestBoard:
    def test_removed_slot_reason(self):
        b = board_after(lay((0, 0, 0), (2, 0, 0)), [(0, 0, 0)])
        r = b.reason(0)
        assert r.free is None and not r.present
        assert r.to_json()["free"] is None
        assert b.free_flags() == [None, True]

    def test_bad_removals(self):
        L = lay((0, 0, 0), (2, 0, 0))
        with pytest.raises(BadInput, match="removed twice"):
            board_after(L, [(0, 0, 0), (0, 0, 0)])
        with pytest.raises(BadInput, match="not in layout"):
            board_after(L, [(1, 0, 0)])
        b = Board(L)
        b.remove(0)
        with pytest.raises(IllegalMove):
            b.remove(0)
        with pytest.raises(IllegalMove):
            b.restore(1)

    def test_copy_is_independent(self):
        b = Board(lay((0, 0, 0), (2, 0, 0), (4, 0, 0)))
        c = b.copy()
        c.remove(0)
        assert b.snapshot() != c.snapshot() and b.free_flags() == [True, False, True]


# --------------------------------------------------------------------------- perft-style data

TURTLE_FREE_AT_START = {
    # by layer: layer 4 cap; layer 3 none (all under the cap); layer 2 the left and
    # right columns; layer 1 its left and right columns; layer 0 the row ends not
    # under anything, the three wing tiles' neighbours being pinched
    4: {Slot(16, 7, 4)},
    3: set(),
    2: {Slot(13, y, 2) for y in (4, 6, 8, 10)} | {Slot(19, y, 2) for y in (4, 6, 8, 10)},
    1: {Slot(11, y, 1) for y in (2, 4, 6, 8, 10, 12)} | {Slot(21, y, 1) for y in (2, 4, 6, 8, 10, 12)},
}


def test_turtle_free_set_at_start():
    t = codex.builtin("turtle")
    free = free_set(Board(t))
    for z, want in TURTLE_FREE_AT_START.items():
        assert {s for s in free if s.z == z} == want, z
    ground = sorted((s.x, s.y) for s in free if s.z == 0)
    # row ends of the 8 rows, but rows y=6 and y=8 are closed on the left by the
    # wing tile (3,7) and on the right by (29,7); the wings (3,7) and (31,7) are free
    assert ground == [(3, 7), (5, 0), (5, 14), (7, 4), (7, 10), (9, 2), (9, 12),
                      (23, 2), (23, 12), (25, 4), (25, 10), (27, 0), (27, 14), (31, 7)]
    assert len(free) == 1 + 8 + 12 + 14 == 35


def test_turtle_after_removing_the_cap_and_wings():
    t = codex.builtin("turtle")
    b = board_after(t, [(16, 7, 4), (3, 7, 0), (31, 7, 0)])
    free = free_set(b)
    assert {s for s in free if s.z == 3} == {Slot(15, 6, 3), Slot(17, 6, 3), Slot(15, 8, 3), Slot(17, 8, 3)}
    assert {Slot(5, 6, 0), Slot(5, 8, 0), Slot(29, 7, 0)} <= free
    assert Slot(27, 6, 0) not in free  # still pinched: (25,6) and (29,7)


# --------------------------------------------------------------------------- properties over real layouts

@lru_cache(maxsize=1)
def every_layout() -> tuple[Layout, ...]:
    out = [codex.builtin(n) for n in codex.BUILTIN_NAMES]
    if CORPUS.is_dir():
        for p in sorted((CORPUS / "kmahjongg").glob("*.layout")):
            out.append(parse_kmahjongg(p.read_text(encoding="utf-8"), str(p)))
        text = (CORPUS / "gnome-mahjongg" / "mahjongg.map").read_text(encoding="utf-8")
        out += [parse_gnome_map(text, "mahjongg.map", n) for n in gnome_map_names(text)]
        out += parse_mah_boards((CORPUS / "mah" / "boards.json").read_text(encoding="utf-8"))
    return tuple(out)


@lru_cache(maxsize=None)
def geometry(k: int) -> Geometry:
    return Geometry.of(every_layout()[k])


def test_every_layout_is_there():
    if not CORPUS.is_dir():
        pytest.skip(f"../shared/corpus not found: {CORPUS} (only the codex is checked)")
    assert len(every_layout()) == len(codex.BUILTIN_NAMES) + 72 + 10 + 84


def _check_sequence(g: Geometry, order: list[int], checkpoints: set[int]) -> None:
    b = Board(g)
    start = b.snapshot()
    snaps = []
    for step, i in enumerate(order):
        snaps.append(b.snapshot())
        b.remove(i)
        if step in checkpoints:
            assert b.free_flags() == b.free_flags_full(), (g.layout.name, step)
    assert b.free_flags() == b.free_flags_full()
    for step in reversed(range(len(order))):
        b.restore(order[step])
        if step in checkpoints:
            assert b.snapshot() == snaps[step], (g.layout.name, step)
    assert b.snapshot() == start
    assert b.free_flags() == b.free_flags_full()


def test_incremental_flags_on_every_layout():
    """Every codex and corpus layout: random removal order (any present tile,
    free or not), free flags checked against a full recomputation at 12 points,
    then every removal undone in reverse."""
    for k, layout in enumerate(every_layout()):
        rng = random.Random(k)
        n = len(layout)
        order = rng.sample(range(n), n)
        _check_sequence(geometry(k), order, set(rng.sample(range(n), min(n, 12))))


def test_playing_free_tiles_only_on_every_layout():
    """Every layout is cleared by always removing a random free tile, flags
    checked at every step (the path a real game takes)."""
    for k, layout in enumerate(every_layout()):
        rng = random.Random(1000 + k)
        b = Board(geometry(k))
        while b.n_present:
            free = b.free_indices()
            assert free, f"{layout.name}: stuck with {b.n_present} tiles"
            b.remove(rng.choice(free))
            assert b.free_flags() == b.free_flags_full()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_incremental_flags_property(data):
    k = data.draw(st.integers(0, len(every_layout()) - 1), label="layout")
    g = geometry(k)
    n = len(g.layout)
    order = data.draw(st.permutations(range(n)), label="order")
    cut = data.draw(st.integers(0, n), label="removals")
    _check_sequence(g, list(order[:cut]), set(range(cut)))


def test_unreachable_gaps_in_a_row():
    row = Layout("row5", tuple(Slot(2 * i, 0, 0) for i in range(5)), "test")
    g = Geometry.of(row)
    # X . . X X: neither gap was ever free (each had a tile on its far side)
    assert unreachable(g, [True, False, False, True, True]) == [1, 2]
    # . . X X X: taken from the open end, one after the other
    assert unreachable(g, [False, False, True, True, True]) == []
    # X . X . X: both gaps pinched
    assert unreachable(g, [True, False, True, False, True]) == [1, 3]
    # X X X . .  and the empty board
    assert unreachable(g, [True, True, True, False, False]) == []
    assert unreachable(g, [False] * 5) == []
    with pytest.raises(BadInput, match="4 presence flags for a layout of 5 slots"):
        unreachable(g, [True] * 4)


def test_unreachable_under_a_tile_and_after_its_cover_left():
    # A B C on layer 0, T on B: B is covered and pinched
    layout = Layout("row-and-top", (Slot(0, 0, 0), Slot(2, 0, 0), Slot(4, 0, 0), Slot(2, 0, 1)), "test")
    g = Geometry.of(layout)
    assert unreachable(g, [True, False, True, True]) == [1]      # B gone under T
    assert unreachable(g, [True, False, True, False]) == [1]     # T left, but A and C still pinch B
    assert unreachable(g, [False, False, True, False]) == []     # T, A, then B
    assert unreachable(g, [True, True, True, False]) == []


def test_every_board_a_game_reaches_is_reachable():
    """Boards met in random games of free tiles on every layout: each one
    reachable; one tile that a present tile pins taken away: not."""
    for k, layout in enumerate(every_layout()):
        rng = random.Random(2000 + k)
        g = geometry(k)
        b = Board(g)
        for _ in range(rng.randrange(len(layout) // 2 + 1)):
            b.remove(rng.choice(b.free_indices()))
        assert unreachable(g, b.present) == [], layout.name
        pinned = [i for i in range(len(layout)) if b.present[i] and b.n_cover[i] and not b.is_free(i)]
        if pinned:
            i = rng.choice(pinned)
            present = b.present[:]
            present[i] = False
            assert i in unreachable(g, present), layout.name
