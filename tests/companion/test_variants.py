"""Scoring tables of the four games against the rule books (../shared/seeds/,
sections 2.5-2.7) and our documented readings (docs/RULES.md)."""

from __future__ import annotations

import pytest

from companion.errors import BadInput
from companion.tiles import tileset
from companion.variants import (CandyRules, LoveRules, MindfulRules, WordRules, base_layout_points,
                                countdown_seconds, find_variant, solo_stars, solo_turn_limit,
                                target_seconds)


def face(variant, fid):
    return tileset(variant).face(fid)


def pts(lines):
    return sum(p for _, p in lines)


def test_registry_and_modes():
    assert [find_variant(v).title for v in ("love", "candy", "mindful", "word")] == [
        "Love Mahjong", "Candy Mahjong", "Mindful Mahjong", "Word Mahjong"]
    assert [m.title for m in find_variant("love").modes] == [
        "Master Harmony Hand Builder", "Affinity Sprint", "Sanctuary Solo Quest"]
    assert [m.title for m in find_variant("candy").modes] == [
        "Master Confectioner Hand Builder", "Sugar Rush Sprint", "Sugarlandia Solo Quest"]
    assert [m.title for m in find_variant("mindful").modes] == [
        "Zen Solitaire", "Cooperative Garden Restoration", "Harmony Duels"]
    assert [m.title for m in find_variant("word").modes] == [
        "Scholar's Path", "Word Sprint", "Zen Archives"]
    # players per mode (Love 2.6: "2 to 4", "1 to 4", "1 Player")
    love = find_variant("love")
    assert [(m.min_players, m.max_players) for m in love.modes] == [(2, 4), (1, 4), (1, 1)]
    # tiles leave in matching pairs (Love/Candy 2.1 Law 2, Mindful 2.1 Law 2);
    # Word Mahjong also clears words of 3+ letters at once (2.1 Rule 2)
    assert [find_variant(v).removes_in_pairs for v in ("love", "candy", "mindful", "word")] == [
        True, True, True, False]
    with pytest.raises(BadInput, match="unknown variant"):
        find_variant("chess")
    with pytest.raises(BadInput, match="unknown mode"):
        love.mode("zen-archives")


@pytest.mark.parametrize("fid,value", [
    ("hearts-5", 100), ("roses-2", 100), ("letters-8", 100),        # Simple Suits (2-8)
    ("hearts-1", 200), ("letters-9", 200),                          # Terminal Suits (1 & 9)
    ("season-winter", 300), ("cupid-wings", 400), ("emotion-1", 600)])
def test_love_pair_values(fid, value):
    f = face("love", fid)
    r = LoveRules()
    assert pts(r.pair_lines(f, f, mode=r.modes[1], chain=1, streak=0, seat=0)) == value
    # "+200 Bonus Points for every extra turn chained together"
    assert pts(r.pair_lines(f, f, mode=r.modes[1], chain=3, streak=0, seat=0)) == value + 200


def test_love_meld_bonuses_and_payment():
    r = LoveRules()
    F = lambda fid: face("love", fid)  # noqa: E731
    assert r.meld_points("chow", [F("roses-1"), F("roses-2"), F("roses-3")], 0) == 300
    assert r.meld_points("pong", [F("roses-5")] * 3, 0) == 300
    assert r.meld_points("pong", [F("roses-9")] * 3, 0) == 500
    assert r.meld_points("pong", [F("season-spring")] * 3, 0) == 800
    assert r.meld_points("pong", [F("cupid-bow")] * 3, 0) == 1000
    hand = [("pong", [F("cupid-bow")] * 3), ("pong", [F("season-spring")] * 3),
            ("chow", [F("hearts-4"), F("hearts-5"), F("hearts-6")]), ("pong", [F("letters-1")] * 3)]
    assert r.hand_payment(hand, F("cupid-arrow"), 0) == 1000 + 800 + 300 + 500 + 400
    assert (r.start_tokens, r.win_bonus, r.blocked_penalty) == (10_000, 5_000, -100)


def test_candy_seat_flavor_pong():
    r = CandyRules()
    F = lambda fid: face("candy", fid)  # noqa: E731
    # seats in the book's order: Strawberry, Vanilla, Chocolate, Mint
    assert [r.pong_points(F("wind-strawberry"), s) for s in range(4)] == [800, 500, 500, 500]
    assert [r.pong_points(F("wind-mint"), s) for s in range(4)] == [500, 500, 500, 800]
    assert r.pong_points(F("cupcake-doublefudge"), 2) == 1000
    assert r.pong_points(F("gummy-1"), 2) == 500
    f = F("sugarglass-3")
    assert pts(r.pair_lines(f, F("sprinkles-1"), mode=r.modes[0], chain=1, streak=0, seat=0)) == 600
    assert r.steal_call == "Sugar Pong!" and LoveRules.steal_call == "Passion Pong!"


def test_solo_quest_limits_and_stars():
    assert solo_turn_limit(144) == 90 and solo_turn_limit(8) == 5
    assert solo_stars(1.0, True) == 3
    assert solo_stars(0.75, False) == 2
    assert solo_stars(0.74, False) == 1
    assert LoveRules().default_options(LoveRules().mode("solo-quest"), 144) == {"turn_limit": 90}


@pytest.mark.parametrize("fid,value", [
    ("bamboo-1", 100), ("characters-9", 100), ("circles-5", 100), ("wind-north", 150),
    ("dragon-white", 200), ("season-autumn", 300), ("flower-orchid", 300)])
def test_mindful_harmony_table(fid, value):
    r = MindfulRules()
    f = face("mindful", fid)
    assert pts(r.pair_lines(f, f, mode=r.modes[0], chain=1, streak=2, seat=0)) == value
    # "Suit Family Streak ... 3+ Consecutive Matches ... +150"
    assert pts(r.pair_lines(f, f, mode=r.modes[0], chain=1, streak=3, seat=0)) == value + 150
    assert pts(r.pair_lines(f, f, mode=r.modes[0], chain=1, streak=7, seat=0)) == value + 150


def test_mindful_end_numbers_and_difficulty():
    r = MindfulRules()
    assert (r.focus_tokens, r.token_bonus, r.flawless_bonus, r.tile_penalty) == (2, 500, 2000, -50)
    assert r.reshuffles_by_difficulty == {"easy": 3, "normal": 2, "hard": 1, "expert": 0}
    assert tileset("mindful").matches("season-spring", "season-autumn")
    assert tileset("mindful").matches("flower-plum", "flower-chrysanthemum")
    assert not tileset("mindful").matches("season-spring", "flower-plum")


def test_word_scores():
    r = WordRules()
    F = lambda fid: face("word", fid)  # noqa: E731
    assert pts(r.word_lines("TEA", [F("T"), F("E"), F("A")])) == 200                 # < 5 letters
    assert pts(r.word_lines("STONE", [F(c) for c in "STONE"])) == 200 + 2 * 200     # O, E
    # a wildcard standing for a vowel is not a glowing vowel tile
    assert pts(r.word_lines("STONE", [F("S"), F("T"), F("wild"), F("N"), F("E")])) == 200 + 200
    assert pts(r.word_lines("RHYTHM", [F(c) for c in "RHYTHM"])) == 200              # Y is no vowel
    assert base_layout_points(144) == 18 and base_layout_points(12) == 2
    assert target_seconds(144) == 720 and countdown_seconds(144) == 432
    lines = r.settlement_lines(base_points=18, focus_seconds=600, hints=0, reshuffles=0)
    assert pts(lines) == 18_000 - 6_000 + 2_500
    assert pts(r.settlement_lines(base_points=18, focus_seconds=600, hints=1, reshuffles=0)) == 12_000
    # "for clearing a complete 144-tile layout": not on a smaller one
    assert pts(r.settlement_lines(base_points=9, focus_seconds=60, hints=0, reshuffles=0, tiles=72)) == 9_000 - 600
    assert not r.scored(r.mode("zen-archives")) and r.scored(r.mode("word-sprint"))


@pytest.mark.parametrize("kw,quills", [
    (dict(cleared=False, focus_seconds=10, target=60, boosters=0, longest_word=7), 0),
    (dict(cleared=True, focus_seconds=61, target=60, boosters=0, longest_word=7), 1),
    (dict(cleared=True, focus_seconds=60, target=60, boosters=2, longest_word=7), 1),
    (dict(cleared=True, focus_seconds=60, target=60, boosters=1, longest_word=7), 2),
    (dict(cleared=True, focus_seconds=60, target=60, boosters=0, longest_word=4), 2),
    (dict(cleared=True, focus_seconds=60, target=60, boosters=0, longest_word=5), 3),
])
def test_word_quills(kw, quills):
    assert WordRules.quills(**kw) == quills
