"""The game model: one scripted game per variant and mode, from set-up to its
end condition, whose replayed ledger equals scores worked out by hand from the
rule books' tables (../shared/seeds/, section 2.5 and 2.7 of each book, and
docs/RULES.md for our readings); replay, undo, corrections, referee items and
bad commands.

Layouts are small and flat (tiles 4 half-units apart: all free) with a few
two-high stacks where a blocked tile is needed.
"""

from __future__ import annotations

import json

import pytest

from companion import game as G
from companion.errors import BadInput, IllegalMove
from companion.layouts import Layout, Slot
from companion.ledger import Ledger
from companion.words import WordIndex


def free_row(n: int, y: int = 0) -> list[Slot]:
    """``n`` tiles on layer 0, 4 half-units apart: every one free."""
    return [Slot(4 * i, y, 0) for i in range(n)]


class Table:
    """A game on a real ledger, driven like the CLI: resolve -> commit."""

    def __init__(self, tmp_path, variant, mode, players, slots, faces, options=None, t=0.0,
                 words=None, shuffler=None, name="test"):
        self.ledger = Ledger(tmp_path / f"{name}.db")
        self.gid = name
        self.words = words
        self.index = WordIndex(words) if words is not None else None
        self.shuffler = shuffler
        self.slots = list(slots)
        data = G.start_data(variant, mode, Layout(name, tuple(slots)), faces, players, 7, options)
        self.ledger.append(self.gid, "game_started", data, None, t)

    def close(self):
        self.ledger.close()

    @property
    def events(self):
        return self.ledger.events(self.gid)

    @property
    def state(self) -> G.GameState:
        return G.replay(self.events, words=self.words)

    def json(self) -> dict:
        return G.state_json(self.events, words=self.words)

    def s(self, i: int) -> Slot:
        return self.slots[i]

    def run(self, outcome: G.Outcome, t=None):
        st = self.state
        st, _ = G.commit(st, G.tick(st, t), self._append, t)
        if st.ended and outcome is None:
            return []
        st, written = G.commit(st, outcome.events, self._append, t, self.index, self.shuffler)
        return written

    def _append(self, type_, data, ref, t):
        return self.ledger.append(self.gid, type_, data, ref, t)

    # commands
    def claim(self, who, a, b, t=None):
        return self.run(G.resolve_claim(self.state, who, [self.s(a), self.s(b)]), t)

    def touch(self, who, a, t=None):
        return self.run(G.resolve_touch(self.state, who, self.s(a)), t)

    def word(self, who, word, idx, t=None):
        return self.run(G.resolve_word(self.state, who, [self.s(i) for i in idx], word, self.words), t)

    def simple(self, etype, who, t=None, **data):
        return self.run(G.resolve_simple(self.state, etype, who, **data), t)

    def hint(self, who, t=None):
        return self.run(G.resolve_hint(self.state, who, self.index), t)

    def reshuffle(self, who, t=None):
        return self.run(G.resolve_reshuffle(self.state, who, shuffler=self.shuffler), t)

    def undo(self, who=None, t=None):
        return self.run(G.resolve_undo(self.state, who), t)

    def scores(self) -> dict:
        return {p["name"]: p["score"] for p in self.json()["players"]}


@pytest.fixture
def table_factory(tmp_path):
    made = []

    def make(*args, **kw):
        t = Table(tmp_path, *args, **kw)
        made.append(t)
        return t
    yield make
    for t in made:
        t.close()


def fixed_shuffler(new_faces_by_index):
    """A reshuffle that puts the given faces in the given slots (for exact scripts)."""
    def shuffle(state, seed):
        faces = list(state.faces)
        for i, f in new_faces_by_index.items():
            faces[i] = f
        return faces
    return shuffle


# --------------------------------------------------------------------------- Love Mahjong


LOVE_HAND_FACES = (["hearts-1"] * 2 + ["hearts-2"] * 2 + ["hearts-3"] * 2 + ["roses-4"] * 2
                   + ["roses-5"] * 2 + ["roses-6"] * 2 + ["letters-9"] * 2 + ["letters-5"] * 4
                   + ["cupid-arrow"] * 2 + ["emotion-1", "passion-3"]
                   + ["season-spring", "season-summer"] + ["hearts-7"] * 2)


def love_hand_slots():
    # 22 under 23: a stack; 24, 25 keep a pair on the board to the end
    return free_row(22) + [Slot(88, 0, 0), Slot(88, 0, 1), Slot(120, 0, 0), Slot(124, 0, 0)]


def test_love_hand_builder_scripted_game(table_factory):
    # Love Mahjong 2.5 (pairs: simple 100, terminal 200, cupid 400, glass +600;
    # melds: chow +300, simple pong +300), 2.7 (+200 chained extra turn, -100
    # blocked touch, +5,000 hand), 2.6.1 + docs/RULES.md (payment = the four
    # melds' bonuses + the pair's base value, from each opponent).
    g = table_factory("love", "hand-builder", ["Ann", "Ben"], love_hand_slots(), LOVE_HAND_FACES)
    g.claim("Ann", 0, 1)          # hearts-1, terminal: +200
    g.claim("Ann", 2, 3)          # hearts-2: +100 +200 chained
    g.claim("Ann", 4, 6)          # hearts-3 / roses-4: invalid, Ben's turn
    assert g.state.whose_turn() == "Ben"
    out = G.resolve_touch(g.state, "Ben", g.s(22))   # covered: -100, even if put back
    assert "22" not in out.error and "88,0,0 is blocked: covered by 88,0,1" in out.error
    g.run(out)
    g.claim("Ben", 14, 15)        # letters-5: +100
    g.claim("Ben", 18, 19)        # cupid: +400 +200
    g.simple("pass", "Ben")
    g.claim("Ann", 4, 5)          # hearts-3: +100
    g.claim("Ann", 16, 17)        # letters-5: +100 +200; Ben holds a letters-5 pair
    g.simple("steal", "Ben")      # "Passion Pong!": simple pong +300, Ben to play
    assert g.state.whose_turn() == "Ben"
    g.claim("Ben", 20, 21)        # glass: +600 (first match of the turn)
    g.claim("Ben", 6, 8)          # roses-4 / roses-5: invalid, Ann's turn
    g.claim("Ann", 6, 7)          # roses-4 +100
    g.claim("Ann", 8, 9)          # roses-5 +100 +200
    g.claim("Ann", 10, 11)        # roses-6 +100 +200
    g.simple("meld", "Ann", kind="chow", faces=["hearts-1", "hearts-2", "hearts-3"])   # +300
    g.claim("Ann", 12, 13)        # letters-9 terminal +200 +200
    g.simple("declare", "Ann")    # 3 more chows +900, +5,000, payment 4x300 + 200 = 1,400
    ann = 200 + 300 + 100 + 300 + 100 + 300 + 300 + 300 + 400 + 900 + 5000 + 1400
    ben = -100 + 100 + 600 + 300 + 600 - 1400
    st = g.json()
    assert (ann, ben) == (9600, 100)
    assert g.scores() == {"Ann": 10_000 + ann, "Ben": 10_000 + ben}
    assert st["ended"] and st["end_reason"] == "declared" and st["winner"] == "Ann"
    assert [m["kind"] for m in st["players"][0]["melds"]] == ["chow"] * 4
    assert st["players"][0]["rack"] == ["letters-5", "letters-9", "letters-9"]  # pair + leftover
    assert st["result"]["hand"]["pair"] == ["letters-9"] * 2 and st["result"]["hand"]["payment"] == 1400
    assert st["players"][1]["melds"] == [{"kind": "pong", "faces": ["letters-5"] * 3}]
    assert st["players"][1]["bonus"] == ["emotion-1", "passion-3"]
    assert st["last_events"][-1]["type"] == "game_ended"


def test_love_sprint_scripted_game(table_factory):
    faces = ["hearts-5"] * 2 + ["roses-9"] * 2 + ["season-summer"] * 2 + ["emotion-2", "passion-4"]
    g = table_factory("love", "sprint", ["Ann", "Ben"], free_row(8), faces)
    g.claim("Ann", 0, 1)          # +100
    g.claim("Ann", 4, 5)          # season +300 +200
    g.claim("Ann", 2, 6)          # invalid
    g.claim("Ben", 2, 3)          # terminal +200
    g.claim("Ben", 6, 7)          # glass +600 +200 -> layout cleared
    st = g.json()
    assert g.scores() == {"Ann": 10_600, "Ben": 11_000}
    assert st["ended"] and st["end_reason"] == "cleared" and st["winner"] == "Ben"
    with pytest.raises(IllegalMove, match="Master Harmony Hand Builder only"):
        G.resolve_simple(G.replay(g.events[:2]), "meld", "Ann", kind="pong", faces=["hearts-5"] * 3)


def test_love_solo_quest_three_stars(table_factory):
    faces = ["hearts-2"] * 2 + ["cupid-wings"] * 2 + ["letters-1"] * 2 + ["season-autumn"] * 2
    g = table_factory("love", "solo-quest", ["Ann"], free_row(8), faces, options={"turn_limit": 5})
    g.claim("Ann", 0, 1)          # +100
    g.claim("Ann", 2, 3)          # +400 +200
    g.claim("Ann", 4, 6)          # invalid: a turn used, chain broken
    g.claim("Ann", 4, 5)          # +200
    g.claim("Ann", 6, 7)          # +300 +200, cleared in 5 turns
    st = g.json()
    assert g.scores() == {"Ann": 10_000 + 100 + 600 + 200 + 500}
    assert st["result"]["stars"] == 3 and st["result"]["turns_used"] == 5
    assert st["winner"] == "Ann"


# --------------------------------------------------------------------------- Candy Mahjong


def test_candy_hand_builder_seat_flavor_scripted_game(table_factory):
    # Candy 2.5: flavor wind pair 300, "+800 Points for Seat Flavor Pong" (seat 1
    # strawberry, 2 vanilla, 3 chocolate; another flavour: +500, as a terminal
    # pong, RULES.md 2.1), cupcake 400,
    # terminal pong +500, bonus pair +600.
    faces = (["wind-strawberry"] * 4 + ["chocolate-2"] * 2 + ["chocolate-3"] * 2 + ["chocolate-4"] * 2
             + ["hardcandy-9"] * 4 + ["gummy-5"] * 2 + ["wind-chocolate"] * 4
             + ["cupcake-redvelvet"] * 2 + ["sprinkles-1", "sugarglass-2"] + ["gummy-7"] * 2)
    g = table_factory("candy", "hand-builder", ["Cat", "Dan", "Eve"], free_row(26), faces)
    g.claim("Cat", 0, 1)          # +300
    g.claim("Cat", 2, 3)          # +300 +200
    g.simple("meld", "Cat", kind="pong", faces=["wind-strawberry"] * 3)   # seat flavor +800
    g.claim("Cat", 4, 6)          # chocolate-2 / chocolate-3: invalid -> Dan
    g.claim("Dan", 16, 17)        # +300
    g.claim("Dan", 18, 19)        # +300 +200
    g.simple("meld", "Dan", kind="pong", faces=["wind-chocolate"] * 3)    # not Dan's flavour: +500
    g.simple("pass", "Dan")
    g.claim("Eve", 20, 21)        # cupcake +400
    g.claim("Eve", 22, 23)        # bonus +600 +200
    g.simple("pass", "Eve")
    g.claim("Cat", 4, 5)          # +100
    g.claim("Cat", 6, 7)          # +100 +200
    g.claim("Cat", 8, 9)          # +100 +200
    g.claim("Cat", 10, 11)        # terminal +200 +200
    g.claim("Cat", 12, 13)        # terminal +200 +200
    g.claim("Cat", 14, 15)        # +100 +200
    g.simple("declare", "Cat")    # chow, chow, terminal pong: +1,100; +5,000; pay 800+300+300+500+100
    pay = 800 + 300 + 300 + 500 + 100
    cat = 300 + 500 + 800 + 100 + 300 + 300 + 400 + 400 + 300 + 1100 + 5000 + 2 * pay
    assert pay == 2000 and cat == 13_500
    assert g.scores() == {"Cat": 23_500, "Dan": 10_000 + 300 + 500 + 500 - pay,
                          "Eve": 10_000 + 400 + 800 - pay}
    st = g.json()
    assert st["winner"] == "Cat" and st["end_reason"] == "declared"
    assert "Sugar Pong" not in json.dumps(st) and "Candy Mahjong!" in st["last_events"][-2]["text"]
    # the line says who pays (the ledger and its export showed the winner's side only)
    assert st["last_events"][-2]["text"].endswith("; Dan pays 2,000; Eve pays 2,000")


def test_candy_sprint_single_player(table_factory):
    faces = ["gummy-1"] * 2 + ["cupcake-goldenvanilla"] * 2 + ["wind-mint"] * 2
    g = table_factory("candy", "sprint", ["Cat"], free_row(6), faces)
    g.claim("Cat", 0, 1)          # terminal +200
    g.claim("Cat", 2, 3)          # +400 +200
    g.simple("pass", "Cat")       # the chain ends
    g.claim("Cat", 4, 5)          # +300, cleared
    assert g.scores() == {"Cat": 11_100}
    assert g.json()["winner"] == "Cat"


def test_candy_solo_quest_turn_limit_two_stars(table_factory):
    # slot 8 (gummy-9) lies under slot 9 (cupcake-doublefudge)
    slots = free_row(8) + [Slot(100, 0, 0), Slot(100, 0, 1)]
    faces = (["chocolate-5"] * 2 + ["chocolate-6"] * 2 + ["gummy-9", "cupcake-doublefudge"]
             + ["hardcandy-2"] * 2 + ["gummy-9", "cupcake-doublefudge"])
    g = table_factory("candy", "solo-quest", ["Cat"], slots, faces, options={"turn_limit": 4})
    out = G.resolve_touch(g.state, "Cat", g.s(8))   # blocked: -100
    assert out.error and "covered by 100,0,1" in out.error
    g.run(out)
    g.claim("Cat", 0, 1)          # +100
    g.claim("Cat", 2, 4)          # invalid
    g.claim("Cat", 2, 3)          # +100
    g.claim("Cat", 5, 9)          # cupcake +400 +200; 4 turns used: limit
    st = g.json()
    assert g.scores() == {"Cat": 10_700}
    assert st["end_reason"] == "turn-limit" and st["tiles_left"] == 4
    assert st["result"]["stars"] == 1          # 6 of 10 cleared (60% < 75%)
    assert st["winner"] is None


# --------------------------------------------------------------------------- Mindful Mahjong


def mindful_stack_slots(n_free: int):
    """``n_free`` free tiles, then A (x=100) under B, C (x=104) under D."""
    return free_row(n_free) + [Slot(100, 0, 0), Slot(100, 0, 1), Slot(104, 0, 0), Slot(104, 0, 1)]


def test_a_claim_with_a_blocked_tile_says_what_it_costs(table_factory):
    # Mindful records a blocked tile at 0 points (RULES.md 1.2); the words
    # read "blocked tile no points in this game" before
    slots = [Slot(0, 0, 0), Slot(0, 0, 1), Slot(4, 0, 0), Slot(8, 0, 0)]
    m = table_factory("mindful", "zen-solitaire", ["Ann"], slots, ["bamboo-1", "bamboo-1", "wind-east", "wind-east"])
    assert G.resolve_claim(m.state, "Ann", [slots[0], slots[1]]).error == \
        "0,0,0 is blocked: covered by 0,0,1; a blocked tile costs no points in this game"
    g = table_factory("love", "sprint", ["Ann"], slots, ["hearts-1", "hearts-1", "roses-2", "roses-2"], name="love")
    assert G.resolve_claim(g.state, "Ann", [slots[0], slots[1]]).error == \
        "0,0,0 is blocked: covered by 0,0,1; blocked tile penalty -100 each"


def test_an_out_of_turn_claim_naming_a_blocked_tile_costs_its_penalty_as_a_touch_does(table_factory):
    # Love 2.7 "Subtract 100 Points if a player attempts to touch or select a
    # tile that is blocked"; RULES.md 1.2 "The penalty applies to whoever
    # touched the tile, in turn or not".  A fuzz run found a blocked touch out
    # of turn charged -100 while the same tile selected in an out-of-turn
    # claim was refused as "out of turn" and cost nothing.
    slots = [Slot(0, 0, 0), Slot(0, 0, 1), Slot(4, 0, 0), Slot(8, 0, 0)]
    g = table_factory("love", "sprint", ["Ann", "Ben"], slots, ["hearts-1", "hearts-1", "roses-2", "roses-2"])
    out = G.resolve_claim(g.state, "Ben", [slots[0], slots[1]])
    assert out.error.startswith("0,0,0 is blocked")
    g.run(out)
    assert [e.type for e in g.events[1:]] == ["penalty"] and g.events[-1].data["player"] == "Ben"
    assert g.scores() == {"Ann": 10_000, "Ben": 9_900}
    assert g.state.whose_turn() == "Ann"         # no move: the turn stays where it was
    g.touch("Ben", 0)                            # the same tile touched out of turn: the same cost
    assert g.scores() == {"Ann": 10_000, "Ben": 9_800}
    # a free pair out of turn is still refused, with nothing recorded
    with pytest.raises(IllegalMove, match="it is Ann's turn, not Ben's"):
        G.resolve_claim(g.state, "Ben", [slots[2], slots[3]])


def test_mindful_dealt_with_no_match_any_reshuffle_could_make_ends_at_once(table_factory):
    # RULES.md 3.2: "When no arrangement of the tiles left can leave a match
    # free ... no reshuffle is needed before the board stagnates: it would
    # spend a token for nothing".  After a move the engine ends such a board;
    # dealt so, it stayed open and a Zen Reshuffle was accepted, costing its
    # player a token (+500 at the end) and the duel.
    slots = free_row(4)
    g = table_factory("mindful", "harmony-duels", ["Ann", "Ben"], slots,
                      ["flower-plum", "season-summer", "bamboo-5", "wind-west"])
    st = g.state
    assert st.ended and st.end_reason == "stalemate"
    assert g.scores() == {"Ann": 1_000 - 200, "Ben": 1_000 - 200}
    with pytest.raises(IllegalMove, match="the game has ended"):
        G.resolve_reshuffle(st, "Ann", 1)


def test_melds_steals_and_declarations_outside_love_and_candy_name_the_right_mode(table_factory):
    # the refusal named the variant's first mode ("laying melds belongs to
    # Zen Solitaire only, not Harmony Duels"; Word: "Scholar's Path only,
    # not Scholar's Path"), a mode that has no melds either
    m = table_factory("mindful", "harmony-duels", ["Ann", "Ben"], free_row(2), ["bamboo-1", "bamboo-1"])
    for etype, data, what in (("meld", {"kind": "pong", "faces": ["bamboo-1"] * 3}, "laying melds"),
                              ("steal", {}, "stealing"), ("declare", {}, "declaring a hand")):
        with pytest.raises(IllegalMove) as exc:
            G.resolve_simple(m.state, etype, "Ann", **data)
        assert str(exc.value) == (f"{what} belongs to the Hand Builder of Love and Candy Mahjong only, "
                                  "not Mindful Mahjong")
    g = table_factory("love", "sprint", ["Ann"], free_row(2), ["hearts-1", "hearts-1"], name="love")
    with pytest.raises(IllegalMove, match="^stealing belongs to Master Harmony Hand Builder only, not "
                                          "Affinity Sprint$"):
        G.resolve_simple(g.state, "steal", "Ann")


def test_mindful_zen_solitaire_with_hint_and_reshuffle(table_factory):
    # Mindful 2.5: suits 100, dragon 200, season/flower 300 (wild), +150 from the
    # 3rd consecutive match of a suit family; Law 4 reshuffle with a Zen Focus
    # token; 2.7: no flawless bonus after a reshuffle, +500 per unused token.
    faces = (["bamboo-3"] * 2 + ["bamboo-7"] * 2 + ["bamboo-9"] * 2 + ["dragon-red"] * 2
             + ["season-spring", "season-winter", "flower-plum", "flower-orchid"]
             + ["circles-2", "bamboo-1", "bamboo-1", "circles-2"])
    slots = mindful_stack_slots(12)
    g = table_factory("mindful", "zen-solitaire", ["Mia"], slots, faces,
                      shuffler=fixed_shuffler({12: "circles-2", 13: "bamboo-1", 14: "circles-2",
                                               15: "bamboo-1"}))
    g.claim("Mia", 0, 1)          # +100
    g.claim("Mia", 2, 3)          # +100
    g.claim("Mia", 4, 5)          # +100 +150 (3rd bamboo in a row)
    g.hint("Mia")                 # token 2 -> 1
    g.claim("Mia", 8, 9)          # spring + winter: +300
    g.claim("Mia", 10, 11)        # plum + orchid: +300
    with pytest.raises(IllegalMove, match="no free match"):
        G.resolve_reshuffle(g.state, "Mia", shuffler=g.shuffler)
    g.claim("Mia", 6, 7)          # +200; now only 13 (bamboo-1) and 15 (circles-2) are free
    st = g.json()
    assert st["stuck"] and not st["ended"]
    g.reshuffle("Mia")            # token 1 -> 0
    g.claim("Mia", 13, 15)        # +100
    g.claim("Mia", 12, 14)        # +100, cleared
    st = g.json()
    assert g.scores() == {"Mia": 100 + 100 + 250 + 300 + 300 + 200 + 100 + 100}
    assert st["end_reason"] == "cleared" and st["winner"] == "Mia"
    assert st["players"][0]["tokens"] == 0 and st["reshuffles"] == 1
    hint = next(e for e in st["last_events"] if e["type"] == "hint")
    assert "match" in hint["text"]


def test_mindful_cooperative_clear_after_a_reshuffle_is_no_win(table_factory):
    # Mindful 2.6.2: "The team works as a unified council to clear the entire
    # board without requiring a single Zen Reshuffle": cleared after one, the
    # team scores but does not win (RULES.md 3.3).
    faces = ["bamboo-3", "bamboo-3", "circles-2", "bamboo-1", "bamboo-1", "circles-2"]
    g = table_factory("mindful", "garden-restoration", ["Ann", "Ben"], mindful_stack_slots(2), faces,
                      shuffler=fixed_shuffler({2: "circles-2", 3: "bamboo-1", 4: "circles-2", 5: "bamboo-1"}))
    g.claim("Ann", 0, 1)          # +100; only 3 (bamboo-1) and 5 (circles-2) are free
    assert g.json()["stuck"]
    g.reshuffle("Ben")            # Ben's token 2 -> 1
    g.claim("Ben", 3, 5)          # +100
    g.claim("Ann", 2, 4)          # +100, cleared
    st = g.json()
    assert st["ended"] and st["end_reason"] == "cleared" and st["reshuffles"] == 1
    assert st["winners"] == [] and st["winner"] is None
    assert st["team"] == {"score": 300 + 3 * 500}        # no flawless bonus either


def test_mindful_cooperative_flawless_clear(table_factory):
    faces = (["characters-1"] * 2 + ["characters-2"] * 2 + ["characters-3"] * 2 + ["wind-east"] * 2
             + ["circles-5"] * 2)
    g = table_factory("mindful", "garden-restoration", ["Ann", "Ben"], free_row(10), faces,
                      options={"difficulty": "hard"})
    g.claim("Ann", 0, 1)          # +100, turn passes (2.4 Phase 4)
    assert g.state.whose_turn() == "Ben"
    g.hint("Ben")                 # Ben 2 -> 1 token
    g.claim("Ben", 2, 3)          # +100 (team streak 2)
    g.claim("Ann", 4, 5)          # +100 +150 (team streak 3)
    g.claim("Ben", 6, 7)          # wind +150
    g.claim("Ann", 8, 9)          # +100, cleared
    team = 100 + 100 + 250 + 150 + 100 + 3 * 500 + 2000
    st = g.json()
    assert team == 4200
    assert g.scores() == {"Ann": team, "Ben": team}
    assert st["team"] == {"score": team} and st["winner"] == "team"
    assert st["options"]["reshuffles"] == 1
    # the end's points are said on the game_ended line, so the lines add up to
    # the score (they were in no line's text)
    assert st["last_events"][-1]["text"] == ("game over: cleared; the team +1,000 unused Zen Focus tokens x2 "
                                             "(Ann's); the team +500 unused Zen Focus tokens x1 (Ben's); "
                                             "the team +2,000 flawless board clear")


def test_mindful_harmony_duels_stagnation(table_factory):
    # expert: no Zen Reshuffle, so a board with no free match ends the game
    # (2.8 Grid Stagnation); -50 per tile left, +500 per unused token (2.7).
    faces = (["bamboo-2"] * 2 + ["dragon-green"] * 2 + ["circles-8"] * 2
             + ["circles-9", "bamboo-4", "bamboo-4", "circles-9"])
    g = table_factory("mindful", "harmony-duels", ["Ann", "Ben"], mindful_stack_slots(6), faces,
                      options={"difficulty": "expert"})
    with pytest.raises(IllegalMove, match="Ann's turn, not Ben's"):
        G.resolve_hint(g.state, "Ben")    # a hint on another's turn (RULES.md 3.2)
    g.claim("Ann", 0, 1)          # +100
    g.hint("Ben")
    g.claim("Ben", 2, 3)          # +200
    out = G.resolve_touch(g.state, "Ann", g.s(6))   # blocked: recorded, no points in Mindful
    assert out.events[0].data["points"] == 0
    g.run(out)
    g.claim("Ann", 4, 5)          # +100 -> stagnation, 4 tiles left
    st = g.json()
    assert st["end_reason"] == "stalemate"
    assert g.scores() == {"Ann": 100 + 100 + 1000 - 200, "Ben": 200 + 500 - 200}
    assert st["winner"] == "Ann"
    assert st["players"][0]["penalties"] == 1


# --------------------------------------------------------------------------- Word Mahjong


def test_word_scholars_path_settlement_and_campaign(table_factory):
    # Word 2.7: (base 2 x 1000) + words 2 x 200 - 40 s x 10, vowel boosters
    # (O, E in STONE: +400); no Pure Scholar Bonus on a 12-tile layout ("for
    # clearing a complete 144-tile layout"); 3 Golden Quills.
    faces = list("STONE") + list("TEA") + ["Q", "Q", "wild", "wild"]
    words = frozenset({"stone", "tea", "notes"})
    g = table_factory("word", "scholars-path", ["Sam"], free_row(12), faces, t=1000.0, words=words)
    g.word("Sam", "stone", [0, 1, 2, 3, 4], t=1010)
    g.claim("Sam", 8, 9, t=1020)
    g.word("Sam", "tea", [5, 6, 7], t=1030)
    g.claim("Sam", 10, 11, t=1040)
    st = g.json()
    assert st["options"]["base_points"] == 2 and st["options"]["target_seconds"] == 60
    assert g.scores() == {"Sam": 600 + 200 + 2000 - 400}
    assert st["result"] == {"reason": "cleared", "tiles_left": 0, "focus_seconds": 40, "boosters": 0,
                            "quills": 3}
    assert st["timer"]["elapsed"] == 40 and not st["timer"]["running"]
    prog = G.campaign_progress([g.events], "Sam")
    assert prog["next_level"] == 2 and prog["levels"][0]["quills"] == 3
    # the scholar's name in another case is the same scholar; another name is not
    assert G.campaign_progress([g.events], "sam")["next_level"] == 2
    assert G.campaign_progress([g.events], "sam")["player"] == "Sam"         # as the games spell it
    assert G.campaign_progress([g.events], "Samuel")["next_level"] == 1


def test_word_sprint_countdown_hint_undo_time_up(table_factory):
    faces = list("CAT") + ["E", "E"] + list("DOG") + ["wild", "wild"]
    words = frozenset({"cat", "dog"})
    g = table_factory("word", "word-sprint", ["Sam"], free_row(10), faces, t=0.0, words=words,
                      options={"countdown_seconds": 30})
    g.word("Sam", "CAT", [0, 1, 2], t=10)         # +200, clock +5 s: deadline 35
    assert g.json()["timer"]["remaining"] == 25
    g.hint("Sam", t=20)
    assert "match" in g.json()["last_events"][-1]["text"]
    g.claim("Sam", 3, 4, t=25)
    g.undo("Sam", t=30)                           # the Ink Eraser: the E pair is back
    assert g.json()["tiles_left"] == 7
    with pytest.raises(IllegalMove, match="ended"):
        g.claim("Sam", 3, 4, t=40)                # 40 > 35: time-up is recorded first
    st = g.json()
    assert st["ended"] and st["end_reason"] == "time-up"
    assert g.scores() == {"Sam": 200}
    assert st["result"]["quills"] == 0 and st["result"]["boosters"] == 2
    assert [e["type"] for e in st["last_events"]][-2:] == ["undo", "game_ended"]


def test_word_zen_archives_auto_reshuffle(table_factory):
    # R U N S free, K and J on top of J and K: after RUNS no pair and no word ->
    # an automatic reshuffle (2.6.3); no score (zero score counters).
    slots = free_row(4) + [Slot(100, 0, 0), Slot(100, 0, 1), Slot(104, 0, 0), Slot(104, 0, 1)]
    faces = ["R", "U", "N", "S", "J", "K", "K", "J"]
    words = frozenset({"runs", "sun"})
    g = table_factory("word", "zen-archives", ["Sam"], slots, faces, words=words,
                      shuffler=fixed_shuffler({4: "J", 5: "K", 6: "J", 7: "K"}))
    g.hint("Sam")
    assert "spell RUNS with 0,0,0 4,0,0 8,0,0 12,0,0" in g.json()["last_events"][-1]["text"]
    g.word("Sam", "runs", [0, 1, 2, 3])
    st = g.json()
    assert [e["type"] for e in st["last_events"]][-2:] == ["word", "reshuffle"]
    g.claim("Sam", 5, 7)
    g.undo("Sam")
    g.claim("Sam", 5, 7)
    g.claim("Sam", 4, 6)
    st = g.json()
    assert st["ended"] and st["end_reason"] == "cleared" and g.scores() == {"Sam": 0}
    assert st["timer"] is None
    p = st["players"][0]
    assert (p["hints"], p["undos"], st["reshuffles"]) == (1, 1, 1)


def test_a_zen_archives_automatic_reshuffle_is_named_for_the_player_who_left_the_board_stuck(table_factory):
    # two players: Ann passes, Bob spells RUNS and leaves no pair and no word;
    # the reshuffle was named for Ann, the first seat (a rules audit, session 50)
    slots = free_row(4) + [Slot(100, 0, 0), Slot(100, 0, 1), Slot(104, 0, 0), Slot(104, 0, 1)]
    g = table_factory("word", "zen-archives", ["Ann", "Bob"], slots, ["R", "U", "N", "S", "J", "K", "K", "J"],
                      words=frozenset({"runs"}), shuffler=fixed_shuffler({4: "J", 5: "K", 6: "J", 7: "K"}))
    g.simple("pass", "Ann")
    g.word("Bob", "runs", [0, 1, 2, 3])
    assert g.json()["last_events"][-1]["text"] == "Bob: automatic reshuffle of the 4 tiles left"


def test_a_lexicon_fan_after_a_word_leaves_a_pair_free(table_factory):
    # Word 2.5: the Fan "Rearranges all remaining tiles on the board to
    # guarantee at least one valid match".  After CAT, Q on J, J on Q and V
    # are left: letters the pair solver cannot all pair (V once), so the Fan
    # was refused, and with a Fan "left" the game could not end either (a
    # rules audit, session 35)
    slots = [Slot(0, 0, 0), Slot(0, 0, 1), Slot(4, 0, 0), Slot(4, 0, 1), Slot(8, 0, 0),
             Slot(12, 0, 0), Slot(16, 0, 0), Slot(20, 0, 0)]
    faces = ["Q", "J", "J", "Q", "V", "C", "A", "T"]
    words = frozenset({"cat"})
    g = table_factory("word", "scholars-path", ["Ann"], slots, faces, words=words)
    g.word("Ann", "cat", [5, 6, 7])
    assert g.state.stuck()
    g.reshuffle("Ann")
    st = g.state
    assert not st.stuck() and st.players[0].reshuffles == 1
    assert sorted(f for i, f in enumerate(st.faces) if st.board.present[i]) == ["J", "J", "Q", "Q", "V"]
    # in Zen Archives the automatic reshuffle does the same (before: the game ended)
    z = table_factory("word", "zen-archives", ["Ann"], slots, faces, words=words, name="zen")
    z.word("Ann", "cat", [5, 6, 7])
    st = z.json()
    assert [e["type"] for e in st["last_events"]][-2:] == ["word", "reshuffle"] and not st["ended"]
    assert z.state.free_pairs()


def test_a_zen_reshuffle_of_tiles_that_cannot_all_be_paired_is_made(table_factory):
    # Mindful 2.1 Law 4: the tiles are "gathered, gently shuffled, and
    # re-laid".  A buried bamboo-1 and three faces once each (a board set by
    # hand): the solver cannot pair them all, and the reshuffle was refused,
    # so Grid Stagnation (-50 a tile) could never be reached; now it lays the
    # two bamboo-1 on free slots
    slots = [Slot(0, 0, 0), Slot(0, 0, 1), Slot(4, 0, 0), Slot(4, 0, 1), Slot(8, 0, 0), Slot(12, 0, 0)]
    g = table_factory("mindful", "zen-solitaire", ["Ann"], slots,
                      ["bamboo-1", "bamboo-2", "bamboo-3", "bamboo-1", "bamboo-4", "bamboo-5"])
    assert g.state.stuck() and g.state.reshuffle_can_help()
    g.reshuffle("Ann")
    assert not g.state.stuck() and g.state.players[0].focus_tokens == 1
    # its player cannot take it back for another roll (the layout was seen); the referee can
    with pytest.raises(IllegalMove, match=r"Ann cannot take back their own Zen Reshuffle \(#\d+\): its new layout "
                                          r"has been seen"):
        G.resolve_undo(g.state, "Ann")
    # four faces once each: no reshuffle can leave a match, so none need be
    # spent before the board stagnates (2.8; tokens kept: +500 each)
    h = table_factory("mindful", "zen-solitaire", ["Ann"], free_row(4),
                      ["bamboo-1", "bamboo-2", "bamboo-3", "bamboo-4"], name="four")
    # (dealt so, it has stagnated from the start, as it would after a move)
    st = h.json()
    assert st["ended"] and st["end_reason"] == "stalemate" and h.scores() == {"Ann": 2 * 500 - 4 * 50}
    assert not h.state.reshuffle_can_help()


def test_a_lexicon_fan_that_cannot_help_is_not_spent(table_factory):
    # C A T S, then Q and Z: no pair, no word, and no arrangement of Q and Z
    # makes one, so the Fan "may help" was false and both Fans had to be
    # burnt (boosters, costing quills) before the game could end
    words = frozenset({"cats"})
    g = table_factory("word", "scholars-path", ["Sam"], free_row(6), list("CATSQZ"), words=words)
    g.word("Sam", "cats", [0, 1, 2, 3])
    st = g.json()
    assert st["ended"] and st["end_reason"] == "no-moves" and st["players"][0]["reshuffles"] == 0


# --------------------------------------------------------------------------- replay, undo, corrections


def test_replay_reproduces_every_score_exactly(table_factory):
    faces = ["hearts-5"] * 2 + ["roses-9"] * 2 + ["season-summer"] * 2 + ["emotion-2", "passion-4"]
    g = table_factory("love", "sprint", ["Ann", "Ben"], free_row(8), faces)
    g.claim("Ann", 0, 1)
    g.claim("Ann", 4, 5)
    g.claim("Ann", 2, 6)
    g.claim("Ben", 2, 3)
    evs = g.events
    # replay in any order, from JSON, and event by event: same scores at every step
    once = G.replay(list(reversed(evs))).scores()
    again = G.replay([json.loads(json.dumps(e.to_json())) for e in evs]).scores()
    assert once == again == {"Ann": 10_600, "Ben": 10_200}
    st = G.replay(evs[:1])
    for i, e in enumerate(evs[1:], start=2):
        st = st.apply(e)
        assert st.scores() == G.replay(evs[:i]).scores()
    export = g.ledger.export_json(g.gid)
    assert [e["id"] for e in export["events"]] == [e.id for e in evs]
    assert {p["name"]: p["score"] for p in export["state"]["players"]} == once


def test_correction_changes_score_and_keeps_original(table_factory):
    slots = free_row(4) + [Slot(100, 0, 0), Slot(100, 0, 1)]
    faces = ["hearts-5"] * 2 + ["roses-3"] * 2 + ["cupid-bow", "cupid-bow"]
    g = table_factory("love", "sprint", ["Ann", "Ben"], slots, faces)
    pen = G.resolve_touch(g.state, "Ann", g.s(4))
    (pev,) = g.run(pen)
    assert g.scores() == {"Ann": 9_900, "Ben": 10_000}
    assert pev.data["block"]["covered_by"] == [[100, 0, 1]] and pev.data["block"]["free"] is False
    # the camera saw the wrong hand: it was Ben
    g.run(G.resolve_correction(g.state, pev.id, {"player": "Ben"}, reason="Ben's hand"))
    assert g.scores() == {"Ann": 10_000, "Ben": 9_900}
    assert g.ledger.event(pev.id).data["player"] == "Ann"        # the original is kept
    # then voided altogether
    g.run(G.resolve_correction(g.state, pev.id, void=True, reason="no touch"))
    assert g.scores() == {"Ann": 10_000, "Ben": 10_000}
    st = g.json()
    statuses = {e["id"]: e["status"] for e in st["last_events"]}
    assert statuses[pev.id] == "voided"
    assert [e.type for e in g.events] == ["game_started", "penalty", "correction", "correction"]
    # voiding the void brings the corrected penalty back
    last = g.events[-1].id
    g.run(G.resolve_correction(g.state, last, void=True))
    assert g.scores() == {"Ann": 10_000, "Ben": 9_900}


def test_corrections_that_say_nothing_or_nonsense_are_refused(table_factory):
    slots = free_row(4) + [Slot(100, 0, 0), Slot(100, 0, 1)]
    faces = ["hearts-5"] * 2 + ["roses-3"] * 2 + ["cupid-bow", "cupid-bow"]
    g = table_factory("love", "sprint", ["Ann", "Ben"], slots, faces)
    (pev,) = g.run(G.resolve_touch(g.state, "Ann", g.s(4)))
    start = g.events[0].id
    with pytest.raises(BadInput, match="not in|unknown"):                 # not a Love face
        G.resolve_correction(g.state, pev.id, {"type": "claim", "slots": [list(g.s(0)), list(g.s(1))],
                                               "faces": ["nonsense-face", "hearts-5"]})
    with pytest.raises(BadInput, match="cannot change 'faces' on a penalty event: it can change player, slot"):
        G.resolve_correction(g.state, pev.id, {"faces": ["hearts-5"]})      # a penalty reads no faces
    with pytest.raises(BadInput, match="cannot be corrected"):
        G.resolve_correction(g.state, start, {"player": "Ben"})
    with pytest.raises(BadInput, match="nothing to change"):
        G.resolve_correction(g.state, pev.id, {"player": "Ann"})      # it already says Ann
    with pytest.raises(BadInput, match="cannot change 'word' on a penalty event"):
        G.resolve_correction(g.state, pev.id, {"word": "x" * 5000})
    (cev,) = g.run(G.resolve_correction(g.state, pev.id, {"player": "Ben"}))
    with pytest.raises(BadInput, match="itself a correction"):
        G.resolve_correction(g.state, cev.id, {"player": "Ann"})
    assert g.scores() == {"Ann": 10_000, "Ben": 9_900}              # nothing refused was written
    with pytest.raises(BadInput, match="nothing to change"):          # it says Ben now, as corrected
        G.resolve_correction(g.state, pev.id, {"player": "Ben"})
    g.run(G.resolve_correction(g.state, pev.id, {"player": "Ann"}))   # back to Ann: a change
    assert g.scores() == {"Ann": 9_900, "Ben": 10_000}
    (vev,) = g.run(G.resolve_correction(g.state, pev.id, void=True))
    with pytest.raises(BadInput, match="already voided"):            # a second void would do nothing
        G.resolve_correction(g.state, pev.id, void=True)
    g.run(G.resolve_correction(g.state, vev.id, void=True))          # voiding the void brings it back
    assert g.scores() == {"Ann": 9_900, "Ben": 10_000}


def test_a_correction_with_another_count_of_faces_than_tiles_is_refused(table_factory):
    """A claim is two tiles (Love 2.1 Law 2: "selects one Unblocked tile ...
    then selects a second"): a correction naming one or three faces for it
    was written, and replay then refused the claim ("1 faces for 2 slots"),
    so the pair's points left the game with no line naming the claim.
    Refused in one line now, nothing written; the right count is taken."""
    faces = ["hearts-5"] * 2 + ["roses-3"] * 2 + ["letters-4"] * 2
    g = table_factory("love", "sprint", ["Ann", "Ben"], free_row(6), faces)
    g.claim("Ann", 0, 1)
    (cev,) = g.claim("Ann", 2, 3)
    # 2.5: simple pairs 100 each, the 2nd of the turn +200 (2.7 Harmony Streak)
    assert g.scores() == {"Ann": 10_400, "Ben": 10_000}
    n = len(g.events)
    for bad in (["roses-3"], ["roses-3"] * 3):
        with pytest.raises(BadInput, match=f"a claim of 2 tiles takes 2 face ids, not {len(bad)}"):
            G.resolve_correction(g.state, cev.id, {"faces": bad})
    with pytest.raises(BadInput, match="takes 2 face ids, not 3"):
        G.resolve_correction(g.state, cev.id, {"slots": [list(g.s(2)), list(g.s(3))], "faces": ["roses-3"] * 3})
    assert len(g.events) == n and g.scores() == {"Ann": 10_400, "Ben": 10_000}
    # two faces, one per tile, are a correction as before: the pair is cupids
    # now (2.5 "Celestial Cupids ... 400 Points per Pair"), +200 chained still
    g.run(G.resolve_correction(g.state, cev.id, {"faces": ["cupid-bow", "cupid-bow"]}))
    assert g.scores() == {"Ann": 10_700, "Ben": 10_000}


def test_a_semicolon_in_a_name_is_refused_with_the_comma_hint():
    # `--players "Ann;Ben"` meant two players: one player "Ann;Ben" is refused
    # in a new game, and a ledger that holds such a name still replays.
    from companion.layouts import Layout
    layout = Layout("row", tuple(free_row(2)), "test")
    for name in ("Ann;Ben", "Ann\uff0cBen", "Ann\u3001Ben"):
        with pytest.raises(BadInput, match="bad player name .*: no semicolon or other comma .*--players Ada,Bo"):
            G.new_setup("love", "solo-quest", layout, ["hearts-5", "hearts-5"], [name], 1)
    s = G.new_setup("love", "solo-quest", layout, ["hearts-5", "hearts-5"], ["Ann;Ben"], 1, new_game=False)
    assert s.players == ("Ann;Ben",)


@pytest.mark.parametrize("name", ["\u200b\u200b", "\u202eevil", "Ann\tB", "Ann\nB", "\u200dAnn", "\u3164",
                                  "Ann\u034fB"])
def test_names_that_do_not_show_as_themselves_are_refused(name):
    from companion.layouts import Layout
    layout = Layout("row", tuple(free_row(2)), "test")
    with pytest.raises(BadInput, match="bad player name"):
        G.new_setup("love", "sprint", layout, ["hearts-5", "hearts-5"], ["Ann", name], 1)
    # a ledger written before the check still replays
    G.new_setup("love", "sprint", layout, ["hearts-5", "hearts-5"], ["Ann", name], 1, new_game=False)
    # joiners inside a name (Persian, emoji) are letters' business, not tricks
    G.new_setup("love", "sprint", layout, ["hearts-5", "hearts-5"], ["Ann", "\u0645\u06cc\u200c\u062e"], 1)


def test_names_that_differ_only_in_case_are_refused_for_a_new_game():
    # session 24's break-test: "Ada,ada" started a game; `--player ada` and
    # `--player Ada` then named two players a table calls the same
    from companion.layouts import Layout
    layout = Layout("row", tuple(free_row(2)), "test")
    with pytest.raises(BadInput, match="player names must differ in more than upper and lower case or the letters. width: Ada, ada"):
        G.new_setup("love", "sprint", layout, ["hearts-5", "hearts-5"], ["Ada", "ada"], 1)
    G.new_setup("love", "sprint", layout, ["hearts-5", "hearts-5"], ["Ada", "ada"], 1, new_game=False)
    with pytest.raises(BadInput, match="Sanctuary Solo Quest is for 1 player, got 2"):
        G.new_setup("love", "solo-quest", layout, ["hearts-5", "hearts-5"], ["Ada", "Bo"], 1)


@pytest.mark.parametrize("variant,mode,option,where", [
    ("love", "sprint", {"difficulty": "hard"}, "Mindful Mahjong only"),
    ("love", "sprint", {"level": 999}, "Word Mahjong only"),
    ("mindful", "harmony-duels", {"turn_limit": 5}, "the Solo Quest modes of Love and Candy Mahjong only"),
    ("word", "zen-archives", {"countdown_seconds": 60}, "timed mode only"),
])
def test_an_option_the_mode_never_reads_is_refused_at_start(variant, mode, option, where):
    from companion.codex import builtin
    layout = builtin("turtle")
    faces = [None] * len(layout)
    with pytest.raises(BadInput, match=where):
        G.new_setup(variant, mode, layout, faces, ["Ann", "Ben"], 1, option)
    G.new_setup(variant, mode, layout, faces, ["Ann", "Ben"], 1, option, new_game=False)   # replays as written


@pytest.mark.parametrize("variant, mode, key, fine", [
    ("word", "scholars-path", "level", 2),      # Scholar's Path starts at level 1
    ("love", "solo-quest", "turn_limit", 1),    # a limit of 0 turns ended the game on its first move
])
def test_options_that_start_at_1(variant, mode, key, fine):
    from companion.codex import builtin
    layout = builtin("turtle")
    with pytest.raises(BadInput, match=f"{key} must be 1 or more"):
        G.new_setup(variant, mode, layout, [None] * len(layout), ["Ann"], 1, {key: 0})
    assert G.new_setup(variant, mode, layout, [None] * len(layout), ["Ann"], 1, {key: fine}).options[key] == fine


def test_options_the_mode_reads_are_taken():
    from companion.codex import builtin
    layout = builtin("turtle")
    faces = [None] * len(layout)
    assert G.new_setup("love", "solo-quest", layout, faces, ["Ann"], 1, {"turn_limit": 50}).options["turn_limit"] == 50
    assert G.new_setup("mindful", "zen-solitaire", layout, faces, ["Ann"], 1,
                       {"difficulty": "hard"}).options["difficulty"] == "hard"
    assert G.new_setup("word", "word-sprint", layout, faces, ["Ann"], 1,
                       {"countdown_seconds": 90}).options["countdown_seconds"] == 90


def test_an_overlong_bad_name_is_not_echoed_whole():
    from companion.layouts import Layout
    layout = Layout("row", tuple(free_row(2)), "test")
    with pytest.raises(BadInput) as err:
        G.new_setup("love", "sprint", layout, ["hearts-5", "hearts-5"], ["Ann", "x" * 60_000], 1)
    assert len(str(err.value)) < 120


def test_undo_reverses_the_last_claim_and_the_end_it_caused(table_factory):
    faces = ["hearts-5"] * 2 + ["roses-3"] * 2
    g = table_factory("love", "sprint", ["Ann", "Ben"], free_row(4), faces)
    g.claim("Ann", 0, 1)
    g.claim("Ann", 2, 3)
    assert g.json()["ended"]
    g.undo()
    st = g.json()
    assert not st["ended"] and st["tiles_left"] == 2 and g.scores()["Ann"] == 10_100
    assert [e["status"] for e in st["last_events"]] == ["ok", "ok", "voided", "voided", "ok"]
    g.claim("Ann", 2, 3)
    assert g.json()["ended"] and g.scores()["Ann"] == 10_400


def test_claim_event_with_a_blocked_tile_is_rejected_and_listed_for_the_referee(table_factory):
    slots = free_row(2) + [Slot(100, 0, 0), Slot(100, 0, 1)]
    faces = ["hearts-5", "hearts-6", "hearts-5", "hearts-6"]
    g = table_factory("love", "sprint", ["Ann"], slots, faces)
    # the camera referee writes through the ledger API directly
    bad = g.ledger.append(g.gid, "claim", {"player": "Ann", "slots": [[0, 0, 0], [100, 0, 0]],
                                            "faces": ["hearts-5", "hearts-5"],
                                            "evidence": {"before": "b.png", "after": "a.png",
                                                         "overlay": "o.png"}})
    note = g.ledger.append(g.gid, "needs-referee", {"reason": "hand over the board", "evidence": {"x": 1}})
    st = g.json()
    ids = [n["id"] for n in st["needs_referee"]]
    assert ids == [bad.id, note.id]
    assert st["needs_referee"][0]["rejected"] and "covered by 100,0,1" in st["needs_referee"][0]["reason"]
    rej = next(e for e in st["last_events"] if e["id"] == bad.id)
    assert rej["status"] == "rejected" and rej["evidence"]["overlay"] == "o.png"
    g.run(G.resolve_correction(g.state, bad.id, void=True, reason="misread"))
    g.run(G.resolve_correction(g.state, note.id, {"resolved": True}))
    assert g.json()["needs_referee"] == []
    assert g.scores() == {"Ann": 10_000}


def test_referee_claim_of_non_matching_pair_counts_as_invalid_attempt(table_factory):
    g = table_factory("candy", "sprint", ["Cat", "Dan"], free_row(4),
                      ["gummy-2", "gummy-3", "gummy-2", "gummy-3"])
    g.ledger.append(g.gid, "claim", {"player": "Cat", "slots": [[0, 0, 0], [4, 0, 0]]})
    st = g.json()
    assert st["turn"] == "Dan" and st["tiles_left"] == 4
    assert st["players"][0]["invalid"] == 1


# --------------------------------------------------------------------------- bad commands


def test_bad_commands_give_clear_errors_and_lose_nothing(table_factory):
    slots = free_row(6) + [Slot(100, 0, 0), Slot(100, 0, 1)]
    faces = ["hearts-5"] * 4 + ["roses-2"] * 2 + ["cupid-bow"] * 2
    g = table_factory("love", "hand-builder", ["Ann", "Ben"], slots, faces)
    g.claim("Ann", 0, 1)
    n = len(g.events)
    st = g.state
    with pytest.raises(BadInput, match="unknown player 'Zed'"):
        G.resolve_claim(st, "Zed", [g.s(2), g.s(3)])
    with pytest.raises(IllegalMove, match="Ann's turn, not Ben's"):
        G.resolve_claim(st, "Ben", [g.s(2), g.s(3)])
    with pytest.raises(IllegalMove, match="holds no tile"):
        G.resolve_claim(st, "Ann", [g.s(0), g.s(2)])
    with pytest.raises(BadInput, match="not in layout"):
        G.resolve_claim(st, "Ann", [Slot(1, 1, 1), g.s(2)])
    with pytest.raises(IllegalMove, match="exposed pair"):
        G.resolve_simple(st, "steal", "Ben")
    with pytest.raises(IllegalMove, match="4 melds and a pair"):
        G.resolve_simple(st, "declare", "Ann")
    with pytest.raises(IllegalMove, match="not a chow"):
        G.resolve_simple(st, "meld", "Ann", kind="chow", faces=["hearts-5", "hearts-5", "hearts-6"])
    with pytest.raises(IllegalMove, match="has no hints"):
        G.resolve_hint(st, "Ann")
    with pytest.raises(IllegalMove, match="has no reshuffle"):
        G.resolve_reshuffle(st, "Ann")
    assert len(g.events) == n
    # a blocked tile: the claim is refused AND the penalty is recorded
    out = G.resolve_claim(st, "Ann", [g.s(6), g.s(7)])
    assert out.error and [p.type for p in out.events] == ["penalty"]
    g.run(out)
    assert len(g.events) == n + 1 and g.scores()["Ann"] == 10_000 + 100 - 100
    # the phones' line says why in words; the coordinates of what blocks it
    # stay in the reason, for the referee
    last = g.json()["last_events"][-1]
    assert last["text"] == "Ann touched blocked tile 100,0,0 (under another tile): -100 blocked tile touched"
    assert last["reason"] == "100,0,0 is blocked: covered by 100,0,1"
    # a steal after another event is refused (the window closed)
    g.claim("Ann", 2, 3)
    g.claim("Ann", 4, 6)          # invalid
    with pytest.raises(IllegalMove, match="no claim to steal"):
        G.resolve_simple(g.state, "steal", "Ben")


def test_touch_is_claimed(table_factory):
    g = table_factory("love", "sprint", ["Ann", "Ben"], free_row(4),
                      ["hearts-5", "hearts-5", "roses-1", "roses-1"])
    g.touch("Ann", 0)
    g.claim("Ann", 2, 3)          # leaves out the touched tile: invalid, turn passes
    st = g.json()
    assert st["turn"] == "Ben" and st["tiles_left"] == 4
    assert "touch is claimed" in st["last_events"][-1]["text"]
    with pytest.raises(IllegalMove, match="Ben's turn"):
        G.resolve_touch(g.state, "Ann", g.s(0))


def test_mindful_two_touch_commitment(table_factory):
    g = table_factory("mindful", "harmony-duels", ["Ann", "Ben"], free_row(4),
                      ["bamboo-1", "bamboo-2", "bamboo-1", "bamboo-2"])
    g.touch("Ann", 0)
    g.touch("Ann", 1)             # two touched tiles that do not match: an invalid attempt
    assert g.state.whose_turn() == "Ben"


def test_a_duel_touch_says_what_it_commits_to(table_factory):
    # Mindful 2.9: "touching two free tiles counts as declaring a match
    # attempt": the first touched tile waits for the second (docs/RULES.md 1.2)
    g = table_factory("mindful", "harmony-duels", ["Ann", "Ben"], free_row(4),
                      ["bamboo-1", "bamboo-2", "bamboo-1", "bamboo-2"])
    g.touch("Ann", 0)
    assert g.json()["last_events"][-1]["text"] == (
        f"Ann touched {g.s(0)}: the next tile touched makes the match attempt with it (two-touch commitment)")
    # the refusal names the Mindful book's rule, not Love/Candy's "touch is claimed"
    with pytest.raises(IllegalMove, match="^two-touch commitment: Ann touched") as exc:
        G.resolve_simple(g.state, "pass", "Ann")
    assert "touch is claimed" not in str(exc.value)
    g.touch("Ann", 2)
    assert g.json()["last_events"][-1]["text"] == (
        f"Ann touched {g.s(2)}: {g.s(0)} + {g.s(2)} must be removed (two-touch commitment)")
    g.claim("Ann", 1, 3)          # not the two touched tiles: an invalid attempt
    assert [e.type for e in g.events][-1] == "invalid" and g.state.whose_turn() == "Ben"
    assert g.json()["last_events"][-1]["text"] == (
        f"Ann: invalid attempt (two-touch commitment: the pair must include {g.s(0)}, {g.s(2)}); "
        "the tiles are to go back; turn passes to Ben")
    # two touched tiles that do not match: no "must be removed" (Mindful 2.9:
    # "if valid, those tiles must be removed"; a rules audit, session 50)
    g.touch("Ben", 1)
    g.touch("Ben", 2)             # (the invalid attempt follows at once)
    assert [e["text"] for e in g.json()["last_events"][-2:]] == [
        f"Ben touched {g.s(2)}: {g.s(1)} + {g.s(2)} is the match attempt, and they do not match "
        "(two-touch commitment)",
        "Ben: invalid attempt (2 of Bamboo does not match 1 of Bamboo (two-touch commitment)); the tiles are to "
        "go back; turn passes to Ann"]


def test_a_pass_does_not_get_around_a_touch(table_factory):
    # Love/Candy 2.9: the touched tile "must be chosen as their first
    # selection for the turn"; Mindful 2.9 (Duels): two touched matching
    # tiles "must be removed"
    g = table_factory("love", "sprint", ["Ann", "Ben"], free_row(4),
                      ["hearts-5", "hearts-5", "roses-1", "roses-1"])
    g.touch("Ann", 0)
    with pytest.raises(IllegalMove, match="touch is claimed: Ann touched .*claim before passing"):
        G.resolve_simple(g.state, "pass", "Ann")
    g.claim("Ann", 0, 1)
    g.simple("pass", "Ann")               # nothing touched any more: a pass is fine
    assert g.state.whose_turn() == "Ben"


def test_a_pass_does_not_get_around_two_touches_in_a_duel(table_factory):
    d = table_factory("mindful", "harmony-duels", ["Ann", "Ben"], free_row(4),
                      ["bamboo-1", "bamboo-2", "bamboo-1", "bamboo-2"])
    d.touch("Ann", 0)
    d.touch("Ann", 2)                     # a matching pair touched: it must be removed
    with pytest.raises(IllegalMove, match="two-touch commitment: Ann touched"):
        G.resolve_simple(d.state, "pass", "Ann")


@pytest.mark.parametrize("variant, mode, faces", [
    ("mindful", "zen-solitaire", ["bamboo-1", "bamboo-2", "bamboo-1", "bamboo-2"]),
    ("mindful", "garden-restoration", ["bamboo-1", "bamboo-2", "bamboo-1", "bamboo-2"]),
    ("word", "scholars-path", ["A", "B", "A", "B"]),
])
def test_a_touch_binds_nothing_outside_competitive_play(table_factory, variant, mode, faces):
    # Mindful 2.9 "Two-Touch Commitment" holds "in competitive turn-based
    # play" (Harmony Duels) only; Word Mahjong's book has no touch rule.
    # Touching two tiles that do not match is no attempt, and the next pair
    # may leave them out: no streak is broken
    players = ["Ann", "Ben"] if mode == "garden-restoration" else ["Ann"]
    g = table_factory(variant, mode, players, free_row(4), faces, words=frozenset())
    g.touch("Ann", 0)
    g.touch("Ann", 1)
    st = g.json()
    assert not any(e.type == "invalid" for e in g.events)
    assert "binds nothing" in st["last_events"][-1]["text"]
    g.claim("Ann", 1, 3)                  # leaves out tile 0, touched first: a valid claim
    assert [e.type for e in g.events][-1] == "claim" and g.json()["tiles_left"] == 2


def test_a_hint_in_a_duel_keeps_to_the_touched_tile(table_factory):
    # Harmony Duels: after a binding touch only a pair with the touched tile
    # may be played, so the hint shows such a pair, or nothing (and costs
    # nothing) when the touched tile has no free partner
    g = table_factory("mindful", "harmony-duels", ["Ann", "Ben"], free_row(6),
                      ["bamboo-1", "bamboo-2", "bamboo-3", "bamboo-2", "bamboo-1", "bamboo-4"])
    g.touch("Ann", 3)
    out = G.resolve_hint(g.state, "Ann")
    assert out.events[0].data["pair"] == [list(g.s(1)), list(g.s(3))]
    g.run(out)
    g.claim("Ann", 1, 3)
    assert [e.type for e in g.events][-1] == "claim"
    g.touch("Ben", 5)                     # bamboo-4: no partner anywhere
    tokens = g.json()["players"][1]["tokens"]
    with pytest.raises(IllegalMove, match="must include 20,0,0 .* no free tile matches it; .* nothing is spent"):
        G.resolve_hint(g.state, "Ben")
    assert g.json()["players"][1]["tokens"] == tokens


def test_mindful_reshuffle_needs_a_token(table_factory):
    # a free circles-1 pair, then two stacks whose tops do not match: Mia
    # spends both Zen Focus tokens on hints while a move exists, claims the
    # pair (+100), and is stuck with no token for a Zen Reshuffle
    faces = ["circles-1", "circles-1", "circles-9", "bamboo-4", "bamboo-4", "circles-9"]
    slots = [Slot(0, 0, 0), Slot(4, 0, 0), Slot(100, 0, 0), Slot(100, 0, 1), Slot(104, 0, 0), Slot(104, 0, 1)]
    g = table_factory("mindful", "zen-solitaire", ["Mia"], slots, faces,
                      shuffler=fixed_shuffler({2: "circles-9", 3: "bamboo-4", 4: "circles-9", 5: "bamboo-4"}))
    g.hint("Mia")
    g.hint("Mia")
    assert g.json()["players"][0]["tokens"] == 0 and not g.json()["ended"]
    g.claim("Mia", 0, 1)
    st = g.json()
    assert st["ended"] and st["end_reason"] == "stalemate"     # no token left for a reshuffle
    assert g.scores() == {"Mia": 100 - 4 * 50}                  # the pair, less 50 a tile left
    with pytest.raises(IllegalMove, match="ended"):
        G.resolve_reshuffle(g.state, "Mia")


def test_a_hint_that_shows_nothing_costs_nothing(table_factory):
    # two stacks whose tops do not match: no move to show, so no Zen Focus
    # token is spent; the player can still reshuffle with it
    faces = ["circles-9", "bamboo-4", "bamboo-4", "circles-9"]
    slots = [Slot(100, 0, 0), Slot(100, 0, 1), Slot(104, 0, 0), Slot(104, 0, 1)]
    g = table_factory("mindful", "zen-solitaire", ["Mia"], slots, faces,
                      shuffler=fixed_shuffler({0: "circles-9", 1: "bamboo-4", 2: "circles-9", 3: "bamboo-4"}))
    with pytest.raises(IllegalMove, match="no move to hint.*nothing is spent; a Zen Reshuffle may help"):
        G.resolve_hint(g.state, "Mia")
    assert g.json()["players"][0]["tokens"] == 2 and not any(e.type == "hint" for e in g.events)


def test_a_word_correction_takes_letters_only(table_factory):
    slots = free_row(4) + [Slot(100, 0, 0), Slot(100, 0, 1)]
    g = table_factory("word", "scholars-path", ["Sam"], slots, ["C", "A", "T", "S", "X", "X"],
                      words=frozenset({"cat", "cats"}))
    (wev,) = [e for e in g.word("Sam", "CAT", [0, 1, 2]) if e.type == "word"]
    for bad in ("x" * 5000, "AB1", "c\u0301at"):
        with pytest.raises(BadInput, match="word must be letters A-Z"):
            G.resolve_correction(g.state, wev.id, {"word": bad})
    with pytest.raises(BadInput, match="cannot change 'slot' on a word event: it can change player, slots, "
                                       "faces, word$"):
        G.resolve_correction(g.state, wev.id, {"slot": list(g.s(0))})
    with pytest.raises(BadInput, match="a word event's type cannot be changed"):
        G.resolve_correction(g.state, wev.id, {"type": "claim"})


def test_word_errors(table_factory):
    slots = free_row(4) + [Slot(100, 0, 0), Slot(100, 0, 1)]
    g = table_factory("word", "scholars-path", ["Sam"], slots, ["C", "A", "T", "S", "X", "X"],
                      words=frozenset({"cat", "cats"}))
    st = g.state
    with pytest.raises(IllegalMove, match="not in the dictionary"):
        G.resolve_word(st, "Sam", [g.s(2), g.s(1), g.s(3)], "TAS", g.words)
    with pytest.raises(IllegalMove, match="do not spell"):
        G.resolve_word(st, "Sam", [g.s(1), g.s(0), g.s(2)], "CAT", g.words)
    with pytest.raises(IllegalMove, match="too short"):
        G.resolve_word(st, "Sam", [g.s(0), g.s(1)], "CA", g.words)
    # a blocked tile named: refused with its 0-point penalty to record (below)
    tried = G.resolve_word(st, "Sam", [g.s(0), g.s(1), g.s(4)], "CAX", g.words)
    assert [p.type for p in tried.events] == ["penalty"] and "covered by" in tried.error
    with pytest.raises(BadInput, match="letters A-Z"):
        G.resolve_word(st, "Sam", [g.s(0), g.s(1), g.s(2)], "C4T", g.words)
    with pytest.raises(BadInput, match="unknown player"):
        G.resolve_word(st, "Bob", [g.s(0), g.s(1), g.s(2)], "CAT", g.words)
    assert len(g.events) == 1
    g.word("Sam", "cats", [0, 1, 2, 3])
    assert g.scores() == {"Sam": 200}


def test_a_typed_word_naming_blocked_tiles_records_their_penalties(table_factory):
    # Word 1.2: locked tiles "cannot be selected"; docs/RULES.md 1.2: each
    # blocked tile selected is a penalty event worth 0 points in Word, as the
    # camera records for a word's blocked letter.  C A T S on a row, X under
    # X at x = 100: CAX names the covered X (100,0,0)
    slots = free_row(4) + [Slot(100, 0, 0), Slot(100, 0, 1)]
    g = table_factory("word", "scholars-path", ["Sam"], slots, ["C", "A", "T", "S", "X", "X"],
                      words=frozenset({"cat", "cats", "cax"}))
    tried = G.resolve_word(g.state, "Sam", [g.s(0), g.s(1), g.s(4)], "CAX", g.words)
    assert tried.error == "100,0,0 is blocked: covered by 100,0,1; a blocked tile costs no points in this game"
    written = g.run(tried)
    assert [(e.type, e.data["slot"], e.data["points"], e.data["claimed"]) for e in written] == [
        ("penalty", [100, 0, 0], 0, [[0, 0, 0], [4, 0, 0], [100, 0, 0]])]
    assert g.scores() == {"Sam": 0} and g.state.board.n_present == 6
    g.word("Sam", "cats", [0, 1, 2, 3])
    assert g.scores() == {"Sam": 200}


def test_undo_limits_in_word(table_factory):
    g = table_factory("word", "scholars-path", ["Sam"], free_row(4), ["E", "E", "O", "O"],
                      options={"limits": {"hints": 0, "reshuffles": 0, "undos": 1}}, words=frozenset())
    with pytest.raises(IllegalMove, match="nothing to undo"):
        G.resolve_undo(g.state)
    g.claim("Sam", 0, 1)
    g.undo()
    g.claim("Sam", 0, 1)
    with pytest.raises(IllegalMove, match="no Ink Eraser left"):
        G.resolve_undo(g.state)
    with pytest.raises(IllegalMove, match="no Wisdom Lantern left"):
        G.resolve_hint(g.state, "Sam")


def test_state_json_shape(table_factory):
    g = table_factory("love", "hand-builder", ["Ann", "Ben"], free_row(4), ["hearts-5"] * 4)
    st = g.json()
    for key in ("game_id", "variant", "mode", "layout", "players", "turn", "tiles_left",
                "free_pairs_left", "timer", "last_events", "needs_referee", "ended", "winner"):
        assert key in st
    assert st["players"][0].keys() >= {"name", "score", "tokens", "rack", "melds"}
    assert st["free_pairs_left"] == 6 and st["turn"] == "Ann" and st["layout"] == "test"
    assert st["last_events"][0].keys() >= {"id", "type", "text", "player", "ref"}


def test_game_started_carries_everything_replay_needs(table_factory):
    g = table_factory("mindful", "zen-solitaire", ["Mia"], free_row(2), ["bamboo-1"] * 2)
    data = g.events[0].data
    assert data.keys() >= {"variant", "mode", "layout", "slots", "faces", "players", "seed", "options"}
    assert data["options"] == {"difficulty": "normal", "reshuffles": 2}


def test_setup_errors():
    lay = Layout("t", tuple(free_row(2)))
    with pytest.raises(BadInput, match="2 to 4 player"):
        G.start_data("love", "hand-builder", lay, ["hearts-1"] * 2, ["Ann"])
    with pytest.raises(BadInput, match="must differ"):
        G.start_data("love", "sprint", lay, ["hearts-1"] * 2, ["Ann", "Ann"])
    with pytest.raises(BadInput, match="unknown mode"):
        G.start_data("love", "zen", lay, ["hearts-1"] * 2, ["Ann"])
    with pytest.raises(BadInput, match="unknown face"):
        G.start_data("love", "sprint", lay, ["bamboo-1"] * 2, ["Ann"])
    with pytest.raises(BadInput, match="unknown difficulty"):
        G.start_data("mindful", "zen-solitaire", lay, ["bamboo-1"] * 2, ["Ann"], options={"difficulty": "x"})
    # a difficulty with spaces at its ends or full-width letters is the
    # difficulty, as --variant and --mode are (a break-test, session 56)
    for typed in (" Hard ", "ＨＡＲＤ"):
        data = G.start_data("mindful", "zen-solitaire", lay, ["bamboo-1"] * 2, ["Ann"], options={"difficulty": typed})
        assert data["options"]["difficulty"] == "hard" and data["options"]["reshuffles"] == 1
    with pytest.raises(BadInput, match="no game_started"):
        G.replay([])
    for limits, words in (([1, 2], "must be an object"), ({"hint": 1}, "unknown tool 'hint'"),
                          ({"hints": -1}, "hints must be a whole number"), ({"undos": "a"}, "undos must be")):
        with pytest.raises(BadInput, match=f"option limits: {words}" if "object" not in words else words):
            G.start_data("word", "scholars-path", lay, ["A"] * 2, ["Ann"], options={"limits": limits})
    G.start_data("word", "scholars-path", lay, ["A"] * 2, ["Ann"], options={"limits": {"hints": 0, "undos": None}})
    with pytest.raises(BadInput, match=r"unknown option turn_limt \(known: .*turn_limit"):
        G.start_data("love", "solo-quest", lay, ["hearts-1"] * 2, ["Ann"], options={"turn_limt": 5})
    # a level outside the campaign means nothing (Word Sprint's was kept and ignored)
    with pytest.raises(BadInput, match=r"option level does not apply to Word Mahjong: Word Sprint \(Word Mahjong's "
                                       r"Scholar's Path only: the campaign's levels\)"):
        G.start_data("word", "word-sprint", lay, ["A"] * 2, ["Ann"], options={"level": 5})
    # a turn limit or level below 1 is refused in the same words, 0 or -3
    for n in (0, -3):
        with pytest.raises(BadInput, match=rf"^option turn_limit must be 1 or more \(a Solo Quest of no turns cannot "
                                           rf"be played\), got {n}$"):
            G.start_data("love", "solo-quest", lay, ["hearts-1"] * 2, ["Ann"], options={"turn_limit": n})
        with pytest.raises(BadInput, match=rf"^option level must be 1 or more .*, got {n}$"):
            G.start_data("word", "scholars-path", lay, ["A"] * 2, ["Ann"], options={"level": n})
        # (an audit's Word Sprint of 0 s was over as it started)
        with pytest.raises(BadInput, match=rf"^option countdown_seconds must be 1 or more \(a Word Sprint with no "
                                           rf"time on its clock is over as it starts\), got {n}$"):
            G.start_data("word", "word-sprint", lay, ["A"] * 2, ["Ann"], options={"countdown_seconds": n})
    G.start_data("word", "word-sprint", lay, ["A"] * 2, ["Ann"], options={"countdown_seconds": 1})
    # an empty name or one with a space is quoted (--option '=5' named nothing)
    with pytest.raises(BadInput, match=r"^unknown options '', 'a b' \(known: "):
        G.start_data("love", "solo-quest", lay, ["hearts-1"] * 2, ["Ann"], options={"": 5, "a b": 1})


def test_a_ledger_with_an_unknown_option_still_replays():
    # ledgers are append-only and must always replay: a game started before
    # unknown options were refused keeps its odd key, and plays as before
    lay = Layout("two", (Slot(0, 0, 0), Slot(2, 0, 0)))
    data = G.start_data("love", "sprint", lay, ["hearts-1"] * 2, ["Ann"])
    data["options"] = dict(data["options"], colour="red")
    st = G.replay([G.Event(1, "g", "game_started", data, None, 0.0)])
    assert st.setup.options["colour"] == "red" and [p.name for p in st.players] == ["Ann"]


def test_engine_reads_no_clock():
    import re
    import companion.game as mod
    import companion.variants as var
    import companion.words as w
    for m in (mod, var, w):
        with open(m.__file__, encoding="utf-8") as f:
            src = f.read()
        for bad in (r"import time", r"import datetime", r"import sqlite3", r"\bopen\("):
            assert not re.search(bad, src), (m.__name__, bad)


def test_default_reshuffle_is_a_winnable_permutation(table_factory):
    from companion import solver
    # B (bamboo-4) on A (circles-9), D (circles-9) on C (bamboo-4): no free match
    faces = ["circles-9", "bamboo-4", "bamboo-4", "circles-9"]
    slots = [Slot(100, 0, 0), Slot(100, 0, 1), Slot(104, 0, 0), Slot(104, 0, 1)]
    g = table_factory("mindful", "zen-solitaire", ["Mia"], slots, faces)
    st = g.state
    assert st.stuck() and not solver.solve(G._deal_like(st)).solvable
    (ev,) = g.reshuffle("Mia")
    assert sorted(ev.data["faces"]) == sorted(faces) and ev.data["seed"] == 7 * 1009 + 1
    st = g.state
    assert solver.solve(G._deal_like(st)).solvable and not st.stuck()


def test_the_claim_that_ends_the_game_can_still_be_declared(table_factory):
    # Love 2.4 Phase 3: "Match Valid: Place the matched pair into your display
    # rack. Check if the claim completes a 14-tile hand. If so, call 'Love
    # Mahjong!'" -- also when that claim cleared the board (RULES.md 2.4).
    faces = ["hearts-1", "hearts-1", "hearts-2", "hearts-2", "hearts-3", "hearts-3", "roses-4", "roses-4",
             "roses-5", "roses-5", "roses-6", "roses-6", "letters-9", "letters-9"]
    g = table_factory("love", "hand-builder", ["Ann", "Ben"], free_row(14), faces)
    for k in range(7):
        g.claim("Ann", 2 * k, 2 * k + 1)
    st = g.json()
    assert st["ended"] and st["end_reason"] == "cleared"
    # two terminal pairs 2 x 200, five simple pairs 5 x 100, six chained extra turns 6 x 200
    assert g.scores() == {"Ann": 10_000 + 400 + 500 + 1_200, "Ben": 10_000}
    with pytest.raises(IllegalMove, match="Ann's turn, not Ben's"):
        G.resolve_simple(g.state, "declare", "Ben")
    with pytest.raises(IllegalMove, match="the game has ended"):
        G.resolve_simple(g.state, "pass", "Ann")
    g.simple("declare", "Ann")
    # four chows 4 x 300, the hand 5,000, Ben pays 4 x 300 + 200 (terminal pair) = 1,400
    st = g.json()
    assert st["end_reason"] == "declared" and st["winner"] == "Ann"
    assert g.scores() == {"Ann": 12_100 + 1_200 + 5_000 + 1_400, "Ben": 10_000 - 1_400}
    assert [e.type for e in g.events][-3:] == ["game_ended", "declare", "game_ended"]
    # undoing the declaration leaves the game as the claim ended it
    g.undo()
    st = g.json()
    assert st["ended"] and st["end_reason"] == "cleared" and g.scores()["Ann"] == 12_100
    # and nothing else than the claimant's declaration, a steal or melds reopens it
    with pytest.raises(IllegalMove, match="the game has ended"):
        G.resolve_simple(g.state, "pass", "Ann")
    # melds may still be laid (they only sort a rack; a break-test lost the
    # +300 of chows completed by the claim that ended the game), and the
    # claimant may still declare after them
    g.simple("meld", "Ann", kind="chow", faces=["hearts-1", "hearts-2", "hearts-3"])
    st = g.json()
    assert st["ended"] and st["end_reason"] == "cleared" and g.scores()["Ann"] == 12_100 + 300
    g.simple("meld", "Ann", kind="chow", faces=["roses-4", "roses-5", "roses-6"])
    g.simple("declare", "Ann")      # two chows formed at the declaration: the same total as before
    assert g.json()["end_reason"] == "declared"
    assert g.scores() == {"Ann": 12_100 + 1_200 + 5_000 + 1_400, "Ben": 10_000 - 1_400}


def test_melds_laid_after_a_stalemate_count_and_may_change_the_winner(table_factory):
    # Love 2.8: at a "No Valid Moves Stalemate ... The player with the
    # highest accumulated Crystal Harmony tokens wins"; 2.7 records "At the
    # end of a match ... Honor Set Bonuses: Extra points added for completed
    # ... Pongs": sets completed on a rack count at the end, laid before it
    # or after (RULES.md 2.2, "Melds after the end").  Ann: two Cupid pairs
    # 2 x 400 and a chained turn +200; Ben: hearts 1 (200), 2 and 3 (100
    # each), two chained turns +400; letters 4 and 5 are left, unmatched
    faces = ["cupid-arrow", "cupid-arrow", "cupid-bow", "cupid-bow", "hearts-1", "hearts-1", "hearts-2",
             "hearts-2", "hearts-3", "hearts-3", "letters-4", "letters-5"]
    g = table_factory("love", "hand-builder", ["Ann", "Ben"], free_row(12), faces)
    g.claim("Ann", 0, 1)
    g.claim("Ann", 2, 3)
    g.simple("pass", "Ann")
    for a in (4, 6, 8):
        g.claim("Ben", a, a + 1)
    st = g.json()
    assert st["ended"] and st["end_reason"] == "stalemate" and st["winner"] == "Ann"
    assert g.scores() == {"Ann": 11_000, "Ben": 10_800}
    g.simple("meld", "Ben", kind="chow", faces=["hearts-1", "hearts-2", "hearts-3"])      # +300
    st = g.json()
    assert st["ended"] and st["end_reason"] == "stalemate" and st["winner"] == "Ben"
    assert g.scores() == {"Ann": 11_000, "Ben": 11_100}
    with pytest.raises(IllegalMove, match="the game has ended"):
        G.resolve_simple(g.state, "pass", "Ann")
    g.undo()
    assert g.json()["winner"] == "Ann"


def test_a_declaration_follows_the_declarers_claim_or_steal(table_factory):
    # Phase 3: "Match Valid: Place the matched pair into your display rack.
    # Check if the claim completes a 14-tile hand. If so, call 'Love
    # Mahjong!'" (RULES.md 2.4): a break-test declared a round later, after
    # passing, with no new claim
    faces = ["hearts-1", "hearts-1", "hearts-2", "hearts-2", "hearts-3", "hearts-3", "roses-4", "roses-4",
             "roses-5", "roses-5", "roses-6", "roses-6", "letters-9", "letters-9", "letters-5", "letters-5",
             "letters-7", "letters-7", "letters-8", "letters-8", "roses-9", "roses-9"]
    g = table_factory("love", "hand-builder", ["Ann", "Ben"], free_row(20) + [Slot(200, 0, 0), Slot(200, 0, 1)],
                      faces)
    with pytest.raises(IllegalMove, match='"Love Mahjong!" is called right after the claim or steal that completes '
                                          r"the hand \(Phase 3\); the last move is no claim yet"):
        G.resolve_simple(g.state, "declare", "Ann")
    for k in range(7):
        g.claim("Ann", 2 * k, 2 * k + 1)
    g.simple("pass", "Ann")
    g.simple("pass", "Ben")
    with pytest.raises(IllegalMove, match=r"the last move is #\d+ pass by Ben"):
        G.resolve_simple(g.state, "declare", "Ann")
    g.claim("Ann", 14, 15)          # a claim: the hand may be called now, melds laid first or not
    g.simple("meld", "Ann", kind="chow", faces=["hearts-1", "hearts-2", "hearts-3"])
    g.touch("Ben", 20)              # out of turn, a covered tile: -100, and no move (1.2)
    assert g.events[-1].type == "penalty"
    g.simple("declare", "Ann")
    assert g.json()["end_reason"] == "declared" and g.json()["winner"] == "Ann"
    # the declaration ended the game and the opponents paid: its player cannot take it back
    with pytest.raises(IllegalMove, match=r"Ann cannot take back their own declaration \(#\d+\): it ended the game"):
        G.resolve_undo(g.state, "Ann")


def test_the_claimant_keeps_a_tile_an_opponent_may_steal_loose(table_factory):
    # Law 3: an opponent holding an exposed pair "may declare 'Passion
    # Pong!', steal the tile out of turn"; a break-test's claimant laid the
    # claimed tile into a meld, or undid the claim, first and the steal was
    # refused
    faces = (["hearts-5"] * 2 + ["hearts-4"] * 2 + ["hearts-6"] * 2 + ["hearts-5"] * 2 + ["roses-8"] * 2)
    g = table_factory("love", "hand-builder", ["Ann", "Ben"], free_row(10), faces)
    g.claim("Ann", 0, 1)            # Ann: 5 Crystal Hearts x2, exposed
    g.simple("pass", "Ann")
    g.claim("Ben", 2, 3)
    g.claim("Ben", 4, 5)
    g.claim("Ben", 6, 7)            # Ben claims the other two 5s: Ann may steal one
    with pytest.raises(IllegalMove, match=r'Ben cannot take back #\d+ now: Ann may still call "Passion Pong!" on it; '
                                          "the referee can"):
        G.resolve_undo(g.state, "Ben")
    g.simple("meld", "Ben", kind="chow", faces=["hearts-4", "hearts-5", "hearts-6"])    # one 5 stays loose
    with pytest.raises(IllegalMove, match=r"Ben cannot lay 5 Crystal Hearts into a meld yet: Ann may still call "
                                          r'"Passion Pong!" on it \(lay the meld once that chance has passed\)'):
        G.resolve_simple(g.state, "meld", "Ben", kind="chow", faces=["hearts-4", "hearts-5", "hearts-6"])
    g.simple("steal", "Ann")        # the steal the book gives: Ann's pong of 5s, +300
    assert g.json()["turn"] == "Ann"
    # a call made out of turn that took Ben's tile and turn: Ann cannot take
    # it back herself (Ben's turn would come back, the call be made again)
    score = g.scores()["Ann"]
    with pytest.raises(IllegalMove, match=r'^Ann cannot take back their own "Passion Pong!" \(#\d+\): it took the '
                                          "tile and the turn; the referee can"):
        G.resolve_undo(g.state, "Ann")
    assert g.scores()["Ann"] == score and g.json()["turn"] == "Ann"
    g.undo()                        # the referee can: Ben's claim stands again, his tile back on his rack
    assert g.json()["turn"] == "Ben" and g.scores()["Ann"] == score - 300
    g.simple("steal", "Ann")        # the chance to call stands again
    assert g.json()["turn"] == "Ann" and g.scores()["Ann"] == score
    # the same when the claim ends the game: it can still be stolen (RULES.md
    # 2.3), so its claimant cannot take it back either (a second break-test)
    e = table_factory("love", "hand-builder", ["Ann", "Ben"], free_row(8),
                      ["hearts-4", "hearts-4", "hearts-6", "hearts-6"] + ["hearts-5"] * 4, name="end")
    e.claim("Ann", 0, 1)
    e.claim("Ann", 2, 3)
    e.simple("pass", "Ann")
    e.claim("Ben", 4, 5)
    e.simple("pass", "Ben")
    e.claim("Ann", 6, 7)            # clears the board; Ben holds two loose 5s
    assert e.json()["ended"]
    with pytest.raises(IllegalMove, match=r'Ann cannot take back #\d+ now: Ben may still call "Passion Pong!"'):
        G.resolve_undo(e.state, "Ann")
    e.simple("steal", "Ben")
    # once the window has closed, the meld is Ben's to lay (Ann has no 5 left to steal with)
    g.claim("Ann", 8, 9)
    assert not g.state.stealers()


def test_the_claim_that_ends_the_game_can_still_be_stolen(table_factory):
    # Law 3: "If an opponent unblocks and claims a tile that completes a 3-tile
    # Passion Pong set with a pair already sitting exposed on your display
    # rack, you may declare 'Passion Pong!'" -- also when that claim left the
    # board stuck (RULES.md 2.3).
    faces = ["hearts-7", "roses-8", "letters-5", "letters-5", "letters-5", "letters-5"]
    g = table_factory("love", "hand-builder", ["Ann", "Ben"], free_row(6), faces)
    g.claim("Ann", 0, 1)            # no match: the tiles go back, Ben's turn
    g.claim("Ben", 2, 3)            # Ben's rack: letters-5 x2, exposed
    g.simple("pass", "Ben")
    g.claim("Ann", 4, 5)            # hearts-7 and roses-8 left: a stalemate
    st = g.json()
    assert st["ended"] and st["end_reason"] == "stalemate"
    with pytest.raises(IllegalMove, match="cannot steal from their own claim"):
        G.resolve_simple(g.state, "steal", "Ann")
    g.simple("steal", "Ben")        # simple pong +300
    st = g.json()
    assert st["ended"] and st["end_reason"] == "stalemate" and st["winner"] == "Ben"
    assert g.scores() == {"Ann": 10_000 + 100, "Ben": 10_000 + 100 + 300}
    assert [e.type for e in g.events][-3:] == ["game_ended", "steal", "game_ended"]
    # the steal happened once; nothing more to take
    with pytest.raises(IllegalMove, match="no claim to steal"):
        G.resolve_simple(g.state, "steal", "Ben")


# --------------------------------------------------------------------------- ends by the referee, undo by a player


def stuck_mindful(table_factory, options=None):
    """Mia claims the free circles-1 pair; two stacks with unmatched tops are
    left (4 tiles): stuck, and a Zen Reshuffle is allowed (normal: 2, and Mia
    holds her 2 Zen Focus tokens)."""
    faces = ["circles-1", "circles-1", "circles-9", "bamboo-4", "bamboo-4", "circles-9"]
    slots = [Slot(0, 0, 0), Slot(4, 0, 0), Slot(100, 0, 0), Slot(100, 0, 1), Slot(104, 0, 0), Slot(104, 0, 1)]
    g = table_factory("mindful", "zen-solitaire", ["Mia"], slots, faces, options=options)
    g.claim("Mia", 0, 1)
    return g


def test_mindful_no_moves_is_refused_while_a_zen_reshuffle_is_allowed(table_factory):
    g = stuck_mindful(table_factory)
    assert g.state.stuck() and not g.state.ended
    # 2.8 Grid Stagnation: "... and all Zen Reshuffle tokens have been used"
    with pytest.raises(IllegalMove, match="a Zen Reshuffle is still allowed .2 of the session's left, "
                                          "1 player holding a token.: reshuffle, or end the game as abandoned"):
        G.resolve_end(g.state, "no-moves")


def test_mindful_no_moves_without_reshuffles_is_stagnation_with_its_penalty(table_factory):
    g = stuck_mindful(table_factory, options={"difficulty": "expert"})    # expert: no Zen Reshuffle
    # the claim left the board stuck with none allowed: the engine ended it
    st = g.json()
    assert st["ended"] and st["end_reason"] == "stalemate"
    # the pair +100, 2 unused tokens +1,000, 4 tiles left -200 (2.7)
    assert g.scores() == {"Mia": 100 + 1000 - 200}


def test_an_abandoned_game_has_no_end_scoring_and_no_winner(table_factory):
    g = stuck_mindful(table_factory)
    g.run(G.resolve_end(g.state, "abandoned"))
    st = g.json()
    assert st["ended"] and st["end_reason"] == "abandoned"
    # the pair only: no token bonus (+500 each "at the end"), no penalty
    assert g.scores() == {"Mia": 100}
    assert st["winner"] is None and st["winners"] == []
    duel = table_factory("love", "sprint", ["Ann", "Ben"], free_row(4), ["hearts-2"] * 4, name="duel")
    duel.run(G.resolve_end(duel.state, "abandoned"))
    assert duel.json()["winners"] == [] and duel.scores() == {"Ann": 10_000, "Ben": 10_000}


def test_word_no_moves_needs_no_word_and_no_lexicon_fan(table_factory):
    words = frozenset({"cat", "dog"})
    g = table_factory("word", "scholars-path", ["Sam"], free_row(6), list("CATDOG"), words=words)
    # no pair, but CAT and DOG can be spelled (2.8: "Zero free matching pairs or valid words")
    with pytest.raises(IllegalMove, match="the free tiles still spell (CAT|DOG)"):
        G.resolve_end(g.state, "no-moves", g.index)
    # no free pair, no word, but 2 Lexicon Fans left that could lay the
    # buried X beside the free one (RULES.md 4.4, 4.5)
    stacks = [Slot(0, 0, 0), Slot(0, 0, 1), Slot(4, 0, 0), Slot(4, 0, 1)]
    g2 = table_factory("word", "scholars-path", ["Sam"], stacks, list("XQZX"), words=words, name="xqz")
    assert g2.state.reshuffle_can_help(g2.index)
    with pytest.raises(IllegalMove, match="a Lexicon Fan .reshuffle. is left"):
        G.resolve_end(g2.state, "no-moves", g2.index)
    # X, Q, Z, V once each: no Fan could leave a match, so none need be spent
    g4 = table_factory("word", "scholars-path", ["Sam"], free_row(4), list("XQZV"), words=words, name="xqzv")
    assert not g4.state.reshuffle_can_help(g4.index)
    g4.run(G.resolve_end(g4.state, "no-moves", g4.index))
    assert g4.json()["end_reason"] == "no-moves"
    g3 = table_factory("word", "scholars-path", ["Sam"], free_row(4), list("XQZV"), words=words, name="nofan",
                       options={"limits": {"reshuffles": 0}})
    g3.run(G.resolve_end(g3.state, "no-moves", g3.index))
    assert g3.json()["end_reason"] == "no-moves"


def test_a_word_tool_limit_given_keeps_the_other_limits(table_factory):
    g = table_factory("word", "scholars-path", ["Sam"], free_row(2), ["A", "A"], options={"limits": {"reshuffles": 0}})
    assert g.state.setup.options["limits"] == {"hints": 3, "reshuffles": 0, "undos": 3}
    g2 = table_factory("word", "scholars-path", ["Sam"], free_row(2), ["A", "A"], name="nolimit",
                       options={"limits": {"hints": None}})
    assert g2.state.setup.options["limits"] == {"hints": None, "reshuffles": 2, "undos": 3}


def test_time_up_ends_at_the_countdown_not_at_the_late_command(table_factory):
    words = frozenset({"cat"})
    g = table_factory("word", "word-sprint", ["Sam"], free_row(6), list("CATEEX"), t=0.0, words=words,
                      options={"countdown_seconds": 48})
    g.word("Sam", "CAT", [0, 1, 2], t=10)         # deadline 48 + 5 = 53
    with pytest.raises(IllegalMove, match="ended"):
        g.claim("Sam", 3, 4, t=54)
    st = g.json()
    assert st["end_reason"] == "time-up" and st["result"]["focus_seconds"] == 53
    assert st["timer"]["elapsed"] == 53


def test_an_ink_eraser_that_takes_back_a_words_five_seconds_past_the_countdown_ends_it(table_factory):
    # Word 2.6.2 "Every successful word submitted adds +5 seconds back to your
    # clock"; 2.5 Ink Eraser "Reverses the last completed match or word
    # clear": CAT at 20 s moves the end of a 24 s countdown to 29 s; taken
    # back at 27 s, the countdown ends at 24 s, already past: the time is up
    # there and then, at 24 s (a break-test was told "turn: Sam" and its
    # next move refused as "ended")
    words = frozenset({"cat"})
    g = table_factory("word", "word-sprint", ["Sam"], free_row(6), list("CATEEX"), t=0.0, words=words,
                      options={"countdown_seconds": 24})
    g.word("Sam", "CAT", [0, 1, 2], t=20)
    assert g.json()["timer"]["deadline_t"] == 29
    written = g.undo("Sam", t=27)
    assert [e.type for e in written] == ["undo", "game_ended"]
    st = g.json()
    assert st["ended"] and st["end_reason"] == "time-up"
    assert st["result"]["focus_seconds"] == 24 and st["result"]["quills"] == 0
    assert st["timer"]["elapsed"] == 24 and st["timer"]["remaining"] == 0
    assert g.scores() == {"Sam": 0}             # the word's +200 went with it; no settlement
    # an undo within the shorter countdown leaves the game running
    g2 = table_factory("word", "word-sprint", ["Sam"], free_row(6), list("CATEEX"), t=0.0, words=words,
                       options={"countdown_seconds": 24}, name="intime")
    g2.word("Sam", "CAT", [0, 1, 2], t=10)
    assert [e.type for e in g2.undo("Sam", t=12)] == ["undo"]
    assert not g2.json()["ended"]


def test_a_referee_voiding_a_word_past_the_shortened_countdown_ends_it(table_factory):
    # as the Ink Eraser above: a referee's void of CAT at 27 s takes its +5 s
    # back, the 24 s countdown has run out, and the time is up at once (a
    # re-test's void said "turn: Sam", show "countdown 0 s left", and the
    # next move was refused as "ended")
    words = frozenset({"cat"})
    g = table_factory("word", "word-sprint", ["Sam"], free_row(6), list("CATEEX"), t=0.0, words=words,
                      options={"countdown_seconds": 24})
    (wev,) = g.word("Sam", "CAT", [0, 1, 2], t=20)
    written = g.run(G.resolve_correction(g.state, wev.id, void=True, reason="misread"), t=27)
    assert [e.type for e in written] == ["correction", "game_ended"]
    st = g.json()
    assert st["ended"] and st["end_reason"] == "time-up"
    assert st["timer"]["elapsed"] == 24 and st["timer"]["remaining"] == 0
    # a correction within the shorter countdown leaves the game running
    g2 = table_factory("word", "word-sprint", ["Sam"], free_row(6), list("CATEEX"), t=0.0, words=words,
                       options={"countdown_seconds": 24}, name="intime")
    (wev,) = g2.word("Sam", "CAT", [0, 1, 2], t=10)
    assert [e.type for e in g2.run(G.resolve_correction(g2.state, wev.id, void=True), t=12)] == ["correction"]
    assert not g2.json()["ended"]


def test_a_player_undoes_only_their_own_move_and_never_a_penalty_or_a_hint(table_factory):
    faces = ["hearts-2", "hearts-2", "hearts-3", "roses-5", "roses-5", "hearts-3"]
    slots = free_row(4) + [Slot(100, 0, 0), Slot(100, 0, 1)]
    g = table_factory("love", "sprint", ["Ann", "Ben"], slots, faces)
    g.claim("Ann", 0, 1)                          # Ann +100, plays again
    with pytest.raises(IllegalMove, match="Ben cannot take back Ann's move .#2 claim.: the referee takes moves back"):
        G.resolve_undo(g.state, "Ben")
    g.touch("Ann", 4)                             # 100,0,0 is covered: a penalty
    with pytest.raises(IllegalMove, match="Ann cannot take back their own penalty .#3.; the referee can"):
        G.resolve_undo(g.state, "Ann")
    g.undo()                                      # the referee may
    assert g.scores() == {"Ann": 10_100, "Ben": 10_000}
    g.undo("Ann")                                 # her own claim
    assert g.scores() == {"Ann": 10_000, "Ben": 10_000}
    # nor their own touch (the touched tile "*must* be chosen", 2.9) or
    # invalid attempt (it ended the turn, Law 2; in a Solo Quest it used one,
    # 2.6.3); the referee may
    g.touch("Ann", 0)
    with pytest.raises(IllegalMove, match=r"Ann cannot take back their own touch: the touched tile must be chosen "
                                          r"\(#\d+\); the referee can"):
        G.resolve_undo(g.state, "Ann")
    g.claim("Ann", 0, 2)                          # hearts-2 + hearts-3: invalid, Ben's turn
    assert g.json()["turn"] == "Ben"
    with pytest.raises(IllegalMove, match=r"Ann cannot take back their own invalid attempt: it ended the turn"):
        G.resolve_undo(g.state, "Ann")
    g.undo()
    assert g.json()["turn"] == "Ann"
    q = table_factory("love", "solo-quest", ["Ann"], free_row(4), ["hearts-2", "hearts-3"] * 2, name="solo",
                      options={"turn_limit": 4})
    q.claim("Ann", 0, 1)
    with pytest.raises(IllegalMove, match="Ann cannot take back their own invalid attempt"):
        G.resolve_undo(q.state, "Ann")
    assert q.state.turns_used == 1
    # where a touch binds nothing (Mindful Zen Solitaire, 1.2) it may be
    # taken back; an invalid attempt alone at the table broke the streak
    z = table_factory("mindful", "zen-solitaire", ["Mia"], free_row(4), ["circles-1", "circles-2"] * 2, name="zen")
    z.touch("Mia", 0)
    z.undo("Mia")
    z.claim("Mia", 0, 1)
    with pytest.raises(IllegalMove, match=r"Mia cannot take back their own invalid attempt: it broke the streak"):
        G.resolve_undo(z.state, "Mia")
    m = table_factory("mindful", "zen-solitaire", ["Mia"], free_row(2), ["circles-1"] * 2, name="hint")
    m.hint("Mia")
    with pytest.raises(IllegalMove, match="Mia cannot take back their own hint: its pair has been shown"):
        G.resolve_undo(m.state, "Mia")
    assert m.json()["players"][0]["tokens"] == 1


def test_free_pairs_shown_are_the_pairs_that_can_be_taken_together(table_factory):
    # four free 2 Twin Hearts and a free roses-5 pair: 6 + 1 ways to pick a
    # pair, but 2 + 1 pairs to take
    g = table_factory("love", "sprint", ["Ann"], free_row(6), ["hearts-2"] * 4 + ["roses-5"] * 2)
    st = g.json()
    assert st["free_pairs_left"] == 7 and st["free_matches_left"] == 3
    g.claim("Ann", 0, 1)
    st = g.json()
    assert st["free_pairs_left"] == 2 and st["free_matches_left"] == 2


def test_the_wisdom_lantern_suggests_a_word_that_does_not_strand_a_tile(table_factory):
    # C A T D O G, no pair: CAGOT (the longest) leaves a lone D that no pair
    # or word can clear; CAT leaves DOG
    words = frozenset({"cagot", "cat", "dog"})
    g = table_factory("word", "scholars-path", ["Sam"], free_row(6), list("CATDOG"), words=words)
    out = G.resolve_hint(g.state, "Sam", g.index)
    assert out.events[0].data["word"]["word"] == "CAT"
    # when every word strands something, the longest is still suggested
    g2 = table_factory("word", "scholars-path", ["Sam"], free_row(6), list("CATDOG"), words=frozenset({"cagot", "cat"}),
                       name="x")
    assert G.resolve_hint(g2.state, "Sam", g2.index).events[0].data["word"]["word"] == "CAGOT"


def test_clearable_pairs_letters_and_wildcards_and_spells_words():
    from companion.words import clearable
    assert clearable(list("DOG"), ["DOG"]) is True
    assert clearable(list("D"), ["DOG"]) is False
    assert clearable(["D", "wild", "wild"], ["DOG"]) is True        # wildcards stand for O and G
    assert clearable(["A", "wild"], []) is False                    # a wildcard pairs only with a wildcard
    assert clearable(list("AABB") + ["wild", "wild"], []) is True
    assert clearable(list("CATDOG"), ["CAGOT", "CAT", "DOG"]) is True
    assert clearable(list("ABCDEFGHIJ") * 2, [], max_nodes=3) is None   # out of budget: no answer


def test_a_deal_with_no_move_at_all_ends_at_once(table_factory):
    # two stacks whose tops do not match, Mindful expert (no Zen Reshuffle):
    # stuck from the start (2.8 Grid Stagnation)
    faces = ["circles-9", "bamboo-4", "bamboo-4", "circles-9"]
    slots = [Slot(100, 0, 0), Slot(100, 0, 1), Slot(104, 0, 0), Slot(104, 0, 1)]
    g = table_factory("mindful", "zen-solitaire", ["Mia"], slots, faces, options={"difficulty": "expert"})
    st = g.json()
    assert st["ended"] and st["end_reason"] == "stalemate"
    # with a reshuffle allowed it waits for it, and a hint says so
    g2 = table_factory("mindful", "zen-solitaire", ["Mia"], slots, faces, name="normal")
    assert not g2.json()["ended"]
    with pytest.raises(IllegalMove, match="a Zen Reshuffle may help"):
        G.resolve_hint(g2.state, "Mia")


def test_names_are_matched_without_their_spaces_and_may_not_start_with_a_dash(table_factory):
    g = table_factory("love", "sprint", ["Ömer", "Bo"], free_row(2), ["hearts-2"] * 2)
    assert g.state.player(" ömer ").name == "Ömer"
    with pytest.raises(BadInput, match="a name may not start with '-'"):
        G.start_data("love", "sprint", Layout("r", tuple(free_row(2))), ["hearts-2"] * 2, ["-2", "Bo"])


def test_a_camera_reshuffle_may_name_faces_the_ledger_did_not_know_as_far_as_its_unknown_tiles_allow():
    # a camera sees only the top faces of a re-laid board: a tile the ledger
    # knew may go under a cover (unknown now) and one it did not know come up
    from companion.layouts import Layout
    layout = Layout("row", ((0, 0, 0), (2, 0, 0), (4, 0, 0), (8, 0, 0), (4, 4, 0), (4, 4, 1)))
    faces = ["bamboo-1", "bamboo-1", "bamboo-2", "bamboo-3", None, "bamboo-4"]     # (4, 4, 0) covered, unseen
    start = G.Event(1, "g", "game_started", G.start_data("mindful", "harmony-duels", layout, faces, ["Ada", "Bo"],
                                                         None, {"source": "camera"}), None, 0.0)
    st = G.replay([start])
    assert st.stuck() and not st.ended
    ok = ["bamboo-2", "bamboo-1", "bamboo-2", "bamboo-3", None, "bamboo-1"]    # bamboo-4 went under the cover
    G.check_pending(st, G.Pending("reshuffle", {"player": "Ada", "faces": ok, "source": "camera"}))
    after = G.replay([start, G.Event(2, "g", "reshuffle", {"player": "Ada", "faces": ok, "source": "camera"},
                                     None, 1.0)])
    assert after.faces == ok and after.reshuffles == 1 and after.player("Ada").focus_tokens == 1
    # two more bamboo-2 than the one unknown tile could be: not these tiles
    bad = ["bamboo-2", "bamboo-2", "bamboo-2", "bamboo-3", None, "bamboo-1"]
    with pytest.raises(IllegalMove, match="not the tiles on the board"):
        G.check_pending(st, G.Pending("reshuffle", {"player": "Ada", "faces": bad, "source": "camera"}))
