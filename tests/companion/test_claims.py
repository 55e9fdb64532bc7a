"""Pair claims on a small hand-drawn board.

Layout (half-tile units), layer 0 is a row of three tiles, one tile on layer 1
over the middle one, and a lone tile to the far right:

    layer 0:  A(0,0)  B(2,0)  C(4,0)        E(10,0)
    layer 1:          D(2,0)

A: left side open -> free.  B: covered by D.  C: right side open -> free.
D: free (nothing above, no neighbours on layer 1).  E: free.
"""

import pytest

from companion.claims import (BLOCKED, MISSING, NO_MATCH, NOT_IN_LAYOUT, SAME_TILE,
                              apply_claim, check_claim, parse_pair, undo_claim)
from companion.errors import BadInput, IllegalMove
from companion.layouts import Layout
from companion.rules import Board
from companion.tiles import tileset

A, B, C, D, E = (0, 0, 0), (2, 0, 0), (4, 0, 0), (2, 0, 1), (10, 0, 0)
LAYOUT = Layout("row", (A, B, C, D, E))
FACES = ["bamboo-1", "bamboo-1", "season-spring", "season-winter", "bamboo-2"]
MINDFUL = tileset("mindful")


def claim(board, a, b):
    return check_claim(board, FACES, MINDFUL, a, b)


def test_free_matching_pair_is_valid_with_wild_seasons():
    v = claim(Board(LAYOUT), C, D)
    assert v.valid and v.code is None
    assert v.faces == ("season-spring", "season-winter")


def test_covered_tile_is_blocked_and_names_the_cover():
    v = claim(Board(LAYOUT), A, B)
    assert not v.valid and v.code == BLOCKED
    assert v.blocked_slots == (B,)
    assert "covered by 2,0,1" in v.reason


def test_pinched_tile_names_both_neighbours():
    board = Board(LAYOUT)
    board.remove(LAYOUT.slot_index(D))
    # B is now uncovered but pinched between A and C.
    v = claim(board, B, E)
    assert v.code == BLOCKED
    assert "pinched between 0,0,0 (left) and 4,0,0 (right)" in v.reason


def test_non_matching_free_pair():
    v = claim(Board(LAYOUT), A, E)
    assert v.code == NO_MATCH and "1 of Bamboo does not match 2 of Bamboo" == v.reason


def test_missing_same_and_unknown_slots():
    board = Board(LAYOUT)
    board.remove(LAYOUT.slot_index(E))
    assert claim(board, A, E).code == MISSING
    assert claim(board, A, A).code == SAME_TILE
    assert claim(board, A, (40, 0, 0)).code == NOT_IN_LAYOUT


def test_apply_then_undo_restores_the_board():
    board = Board(LAYOUT)
    before = board.snapshot()
    v = claim(board, C, D)
    idx = apply_claim(board, v)
    assert board.is_free(LAYOUT.slot_index(B)) is True  # D gone and C gone: B's right is open
    undo_claim(board, idx)
    assert board.snapshot() == before
    with pytest.raises(IllegalMove):
        apply_claim(board, claim(board, A, B))


def test_parse_pair():
    assert parse_pair("1,2,0 3,4,1") == ((1, 2, 0), (3, 4, 1))
    with pytest.raises(BadInput):
        parse_pair("1,2,0")
