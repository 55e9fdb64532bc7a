"""Tile sets: counts and matching relations from the rule books' inventories."""

import pytest

from companion.errors import BadInput
from companion.tiles import TILES_PER_SET, VARIANTS, WORD_LETTER_COUNTS, tileset


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_set_holds_144_tiles(variant):
    ts = tileset(variant)
    assert len(ts.tiles()) == TILES_PER_SET == 144


def test_love_inventory_section_1_2():
    ts = tileset("love")
    count = lambda suit: sum(f.copies for f in ts.faces if f.suit == suit)  # noqa: E731
    assert [count(s) for s in ("hearts", "roses", "letters", "season", "cupid", "emotion", "passion")] \
        == [36, 36, 36, 16, 12, 4, 4]
    # 2.5: simple suits 2-8 (108 minus terminals) and terminals 1 & 9 (24 tiles)
    assert sum(f.copies for f in ts.faces if f.cls == "terminal") == 24
    assert ts.face("hearts-5").name == "5 Crystal Hearts"
    assert ts.face("letters-4").name == "4 Wax Stamp"


def test_love_glass_tiles_match_any_glass_but_not_suits():
    ts = tileset("love")
    assert ts.matches("emotion-1", "passion-4")
    assert ts.matches("emotion-2", "emotion-3")
    assert not ts.matches("emotion-1", "hearts-1")
    assert ts.matches("cupid-bow", "cupid-bow")
    assert not ts.matches("cupid-bow", "cupid-arrow")


def test_candy_inventory_and_bonus_relation():
    ts = tileset("candy")
    assert sum(f.copies for f in ts.faces if f.suit == "wind") == 16
    assert sum(f.copies for f in ts.faces if f.suit == "cupcake") == 12
    assert ts.matches("sprinkles-1", "sugarglass-4")
    assert not ts.matches("hardcandy-1", "chocolate-1")
    assert ts.face("gummy-9").name == "9 Jellybean"


def test_mindful_wild_seasons_and_flowers_law_2():
    ts = tileset("mindful")
    assert ts.matches("season-spring", "season-autumn")      # "Spring matches Autumn"
    assert ts.matches("flower-orchid", "flower-plum")        # "Orchid matches Plum"
    assert not ts.matches("season-spring", "flower-plum")
    assert not ts.matches("bamboo-4", "circles-4")
    assert ts.face("season-winter").copies == 1
    assert sum(f.copies for f in ts.faces if f.suit == "dragon") == 12


def test_word_distribution_even_and_wildcards():
    ts = tileset("word")
    assert all(n % 2 == 0 for n in WORD_LETTER_COUNTS.values())
    assert sum(WORD_LETTER_COUNTS.values()) == 140
    assert ts.face("wild").copies == 4
    assert ts.matches("wild", "wild") and not ts.matches("wild", "E")
    assert {f.id for f in ts.faces if f.cls == "vowel"} == set("AEIOU")


def test_unknown_variant_and_face():
    with pytest.raises(BadInput, match="unknown variant 'chess'"):
        tileset("chess")
    with pytest.raises(BadInput, match="unknown face"):
        tileset("love").face("hearts-10")


def test_a_mistyped_face_gets_the_nearest_id_suggested():
    from companion.errors import BadInput
    from companion.tiles import tileset
    with pytest.raises(BadInput, match=r"^unknown face 'bambo-3' for variant 'mindful' \(did you mean 'bamboo-3'\?\)$"):
        tileset("mindful").face("bambo-3")
    with pytest.raises(BadInput, match=r"^unknown face 'xyz' for variant 'mindful'$"):
        tileset("mindful").face("xyz")
