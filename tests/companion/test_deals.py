"""Deals: seeded draws, the contract's JSON both ways, solvable deals and solvable
reshuffles of a game in progress."""

from collections import Counter

import pytest

from companion import deals
from companion.deals import Deal, random_deal, solvable_deal, solvable_reshuffle
from companion.errors import BadInput, IllegalMove
from companion.layouts import Layout, Slot
from companion.solver import solve
from companion.tiles import VARIANTS, tileset
from positions import mid_game


def lay(*slots, name="t"):
    return Layout(name, tuple(Slot(*s) for s in slots), "test")


def row(n, y=0, z=0):
    return [(2 * i, y, z) for i in range(n)]


def turtle():
    from companion import codex
    return codex.builtin("turtle")


def pyramid():
    """20 slots: a 4 x 3 base, a 2 x 2 layer on it, half a tile in, and 4 side tiles."""
    base = [(2 * i, 2 * j, 0) for i in range(4) for j in range(3)]
    mid = [(1 + 2 * i, 1 + 2 * j, 1) for i in range(2) for j in range(2)]
    top = [(3, 2, 2)]
    side = [(-2, 2, 0), (8, 2, 0), (-4, 2, 0)]
    return lay(*(base + mid + top + side), name="pyramid")


# --------------------------------------------------------------------------- random_deal

@pytest.mark.parametrize("variant", VARIANTS)
def test_full_layout_gets_the_whole_set_shuffled_by_seed(variant):
    t = turtle()
    d = random_deal(variant, t, 5)
    assert Counter(d.faces) == Counter(tileset(variant).tiles())
    assert d == random_deal(variant, t, 5)          # same seed, same deal
    assert d.faces != random_deal(variant, t, 6).faces
    assert d.layout is t and d.variant == variant


@pytest.mark.parametrize("variant", VARIANTS)
def test_small_layout_gets_whole_match_pairs(variant):
    p = pyramid()
    ts = tileset(variant)
    for seed in range(5):
        d = random_deal(variant, p, seed)
        assert len(d.faces) == len(p) == 20
        keys = Counter(ts.face(f).match for f in d.faces)
        assert all(c % 2 == 0 for c in keys.values())
        for f, c in Counter(d.faces).items():
            assert c <= ts.face(f).copies


def test_layout_sizes_that_cannot_be_dealt():
    with pytest.raises(BadInput, match="odd"):
        random_deal("mindful", lay(*row(3)), 1)
    with pytest.raises(BadInput, match="144"):
        random_deal("mindful", lay(*row(73), *row(73, y=2)), 1)
    with pytest.raises(BadInput, match="no slots"):
        random_deal("mindful", lay(), 1)
    with pytest.raises(BadInput, match="variant"):
        random_deal("chess", lay(*row(2)), 1)
    with pytest.raises(BadInput, match="seed"):
        random_deal("mindful", lay(*row(2)), None)  # no unseeded randomness in the engine


# --------------------------------------------------------------------------- JSON

def test_json_round_trip_matches_the_contract():
    d = random_deal("love", pyramid(), 3)
    obj = d.to_json()
    assert set(obj) == {"variant", "layout", "tiles"}
    assert obj["variant"] == "love" and obj["layout"] == "pyramid"
    assert obj["tiles"][0] == {"slot": [0, 0, 0], "face": d.faces[0]}
    back = Deal.from_json(obj, source="x.json")
    assert back.faces == d.faces and back.layout.slots == d.layout.slots
    assert back.layout.name == "pyramid" and back.layout.source == "x.json"


def test_deal_json_variant_is_read_in_any_case_as_the_command_line_reads_it():
    # `--variant LOVE` works on the command line; a deal file saying "LOVE"
    # means the same set, and the deal carries the canonical lower-case name.
    obj = random_deal("love", pyramid(), 3).to_json()
    obj["variant"] = "LOVE"
    back = Deal.from_json(obj, source="x.json")
    assert back.variant == "love"
    assert back.to_json()["variant"] == "love"
    obj["variant"] = "Lovely"
    with pytest.raises(BadInput, match="unknown variant 'Lovely'"):
        Deal.from_json(obj, source="x.json")


@pytest.mark.parametrize("obj, fault", [
    ([], "JSON object"),
    ({"variant": "chess", "layout": "t", "tiles": [{"slot": [0, 0, 0], "face": "A"}]}, "variant"),
    ({"variant": "word", "tiles": [{"slot": [0, 0, 0], "face": "A"}]}, "layout"),
    ({"variant": "word", "layout": "t", "tiles": []}, "tiles"),
    ({"variant": "word", "layout": "t", "tiles": [{"slot": [0, 0], "face": "A"}]}, "slot"),
    ({"variant": "word", "layout": "t", "tiles": [{"slot": [0, 0, True], "face": "A"}]}, "slot"),
    ({"variant": "word", "layout": "t", "tiles": [{"slot": [0, 0, 0], "face": 7}]}, "face"),
    ({"variant": "word", "layout": "t", "tiles": [{"slot": [0, 0, 0], "face": "a"}]}, "unknown face"),
    ({"variant": "word", "layout": "t",
      "tiles": [{"slot": [0, 0, 0], "face": "A"}, {"slot": [0, 0, 0], "face": "A"}]}, "twice"),
    ({"variant": "word", "layout": "t",
      "tiles": [{"slot": [2 * i, 0, 0], "face": "Q"} for i in range(3)]}, "holds 2"),
    ({"variant": "mindful", "layout": "t", "tiles": ["bamboo-1"]}, "tiles\\[0\\]"),
])
def test_bad_deal_json_is_one_line_bad_input_naming_the_source(obj, fault):
    with pytest.raises(BadInput, match=fault) as exc:
        Deal.from_json(obj, source="deal.json")
    msg = str(exc.value)
    assert msg.startswith("deal.json: ") and "\n" not in msg


def test_deal_checks_its_own_fields():
    with pytest.raises(BadInput):
        Deal("mindful", lay(*row(2)), ("bamboo-1",))
    with pytest.raises(BadInput):
        Deal("mindful", lay(*row(2)), ("bamboo-1", "bamboo-10"))


# --------------------------------------------------------------------------- solvable_deal

@pytest.mark.parametrize("variant", VARIANTS)
def test_solvable_deal_is_solvable_and_seeded(variant):
    t = turtle()
    d = solvable_deal(variant, t, 11)
    assert solve(d).solvable is True
    assert d == solvable_deal(variant, t, 11)
    assert Counter(d.faces) == Counter(tileset(variant).tiles())


def test_solvable_deal_is_the_random_deal_when_that_one_is_winnable():
    t = turtle()
    verdicts = {}
    for seed in range(8):
        d = random_deal("mindful", t, seed)
        verdicts[seed] = solve(d).solvable
        s = solvable_deal("mindful", t, seed)
        assert (s == d) is verdicts[seed]
    assert True in verdicts.values() and False in verdicts.values()


def test_solvable_deal_built_backwards_when_draws_fail(monkeypatch):
    monkeypatch.setattr(deals, "SOLVABLE_TRIES", 0)  # skip the draws: build one
    for layout in (pyramid(), turtle()):
        for seed in range(3):
            d = solvable_deal("candy", layout, seed)
            assert solve(d).solvable is True
            ts = tileset("candy")
            keys = Counter(ts.face(f).match for f in d.faces)
            assert all(c % 2 == 0 for c in keys.values())


def test_stacks_that_admit_no_winnable_deal():
    # two slots in one stack: the lower tile is never free while the upper is there
    with pytest.raises(BadInput, match="no winnable deal"):
        solvable_deal("mindful", lay((0, 0, 0), (0, 0, 1)), 1)
    # a stack of three and a loner: after the top and the loner, one tile is alone
    with pytest.raises(BadInput, match="no winnable deal"):
        solvable_deal("mindful", lay((0, 0, 0), (0, 0, 1), (0, 0, 2), (4, 0, 0)), 1)


def test_rows_where_random_draws_often_fail_still_get_a_deal():
    # a row of 8: only the two ends are free, so a random draw is rarely winnable
    layout = lay(*row(8))
    for seed in range(4):
        d = solvable_deal("word", layout, seed)
        assert solve(d).solvable is True


# --------------------------------------------------------------------------- solvable_reshuffle

def test_reshuffle_keeps_tiles_and_slots_and_is_winnable():
    t = turtle()
    d, present = mid_game("mindful", t, 8, 30)
    faces = [f if p else None for f, p in zip(d.faces, present)]
    new = solvable_reshuffle("mindful", t, present, faces, seed=2)
    assert [f is not None for f in new] == present
    assert Counter(f for f in new if f) == Counter(f for f in faces if f)
    deal2 = Deal("mindful", t, tuple(f if f else d.faces[i] for i, f in enumerate(new)))
    assert solve(deal2, present).solvable is True
    assert new == solvable_reshuffle("mindful", t, present, faces, seed=2)


def test_reshuffle_builds_backwards_when_draws_fail(monkeypatch):
    monkeypatch.setattr(deals, "SOLVABLE_TRIES", 0)
    layout = lay(*row(6), *row(6, y=2), (1, 1, 1), (5, 1, 1))
    faces = ["A", "B", "C", "A", "B", "C", "D", "E", "D", "E", "wild", "wild", "F", "F"]
    present = [True] * len(layout)
    new = solvable_reshuffle("word", layout, present, faces, seed=9)
    assert Counter(new) == Counter(faces)
    assert solve(Deal("word", layout, tuple(new))).solvable is True


def test_reshuffle_refuses_what_cannot_be_won_or_paired():
    stack = lay((0, 0, 0), (0, 0, 1), (4, 0, 0), (4, 0, 1))
    with pytest.raises(IllegalMove, match="no arrangement"):
        solvable_reshuffle("mindful", stack, [True, True, False, False],
                           ["bamboo-1", "bamboo-1", None, None], seed=1)
    with pytest.raises(deals.UnpairableTiles, match="odd"):
        solvable_reshuffle("mindful", stack, [True, True, True, False],
                           ["bamboo-1", "bamboo-1", "bamboo-2", None], seed=1)
    with pytest.raises(BadInput, match="unknown face"):
        solvable_reshuffle("mindful", stack, [True, True, False, False],
                           ["bamboo-1", None, None, None], seed=1)
    with pytest.raises(BadInput):
        solvable_reshuffle("mindful", stack, [True, True], ["bamboo-1", "bamboo-1"], seed=1)
    assert solvable_reshuffle("mindful", stack, [False] * 4, [None] * 4, seed=1) == (None,) * 4


def test_a_shuffle_with_a_free_match_where_no_winnable_one_exists():
    # Word 2.5: the Lexicon Fan "guarantee[s] at least one valid match".  Q on
    # J, J on Q, and V: the tiles cannot all be paired (V once), and the
    # three free slots are the two tops and V's
    stacks = lay((0, 0, 0), (0, 0, 1), (4, 0, 0), (4, 0, 1), (8, 0, 0))
    faces = ["Q", "J", "J", "Q", "V"]
    free = [1, 3, 4]
    ts = tileset("word")
    for seed in range(30):
        out, found = deals.shuffle_with_free_match("word", stacks, [True] * 5, faces, seed)
        assert found and sorted(out) == sorted(faces)
        tops = Counter(ts.face(out[i]).match for i in free)
        assert max(tops.values()) >= 2             # a matching pair free
    assert deals.shuffle_with_free_match("word", stacks, [True] * 5, faces, 4) == \
        deals.shuffle_with_free_match("word", stacks, [True] * 5, faces, 4)         # seeded
    # no two tiles alike: no pair can be laid free; a word only if the free ones spell one
    row = lay((0, 0, 0), (2, 0, 0), (4, 0, 0))         # the middle one pinched: 2 free
    out, found = deals.shuffle_with_free_match("word", row, [True] * 3, ["C", "A", "T"], 1)
    assert not found and sorted(out) == ["A", "C", "T"]
    spaced = lay((0, 0, 0), (4, 0, 0), (8, 0, 0))
    out, found = deals.shuffle_with_free_match("word", spaced, [True] * 3, ["C", "A", "T"], 1,
                                               spells=lambda free: sorted(free) == ["A", "C", "T"])
    assert found
    # a removed slot stays empty, and an unknown face is refused
    out, _ = deals.shuffle_with_free_match("mindful", stacks, [True, True, False, False, True],
                                           ["bamboo-1", "bamboo-2", None, None, "bamboo-1"], 2)
    assert out[2] is out[3] is None
    with pytest.raises(BadInput, match="unknown face"):
        deals.shuffle_with_free_match("word", row, [True] * 3, ["C", None, "T"], 1)


@pytest.mark.parametrize("slot", [[0, 0, 2 ** 70], [2 ** 31, 0, 0], [0, -(2 ** 31), 0], [0, 0, -1]])
def test_a_deal_slot_beyond_32_bits_or_below_the_mat_is_refused(slot):
    # 2**70 as a layer reached the solver's C core (OverflowError) and made a
    # game "with 1180591620717411303425 layers"; layout files were capped already
    d = random_deal("love", Layout("row", tuple(Slot(2 * i, 0, 0) for i in range(4)), "test"), 1).to_json()
    d["tiles"][0]["slot"] = slot
    with pytest.raises(BadInput, match=r"d.json: tiles\[0\].slot .*: coordinates must lie within \+-2147483647, "
                                       r"with z >= 0"):
        Deal.from_json(d, "d.json")
