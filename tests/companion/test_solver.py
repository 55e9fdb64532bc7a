"""The exact solver: hand-checked small positions, a brute-force cross-check on
random tiny layouts, winning lines replayed on a Board, and the C core against
the pure-Python core (same verdicts, moves and node counts)."""

import random

import pytest

from companion import solver
from companion.deals import Deal, random_deal
from companion.errors import BadInput
from companion.layouts import Layout, Slot
from companion.rules import Board, Geometry
from companion.solver import hint, solve, solve_keys
from companion.tiles import tileset
from positions import mid_game

needs_c = pytest.mark.skipif(not solver.HAVE_C, reason="companion._solvercore not built "
                             "(python setup.py build_ext --inplace)")
CORES = [pytest.param(False, id="python"), pytest.param(True, id="C", marks=needs_c)]


def lay(*slots, name="t"):
    return Layout(name, tuple(Slot(*s) for s in slots), "test")


def deal(faces, *slots, variant="mindful"):
    return Deal(variant, lay(*slots), tuple(faces))


def row(n, y=0, z=0, x0=0):
    return [(x0 + 2 * i, y, z) for i in range(n)]


A, B, C = "bamboo-1", "bamboo-2", "circles-9"


def replay(layout, keys, moves, present=None):
    """Play the moves on a Board: each pair free and matching at its turn, board emptied."""
    b = Board(layout)
    for i, p in enumerate(present or [True] * len(layout)):
        if not p:
            b.remove(i)
    for a, c in moves:
        assert a != c
        assert b.is_free(a) and b.is_free(c), (a, c)
        assert keys[a] == keys[c]
        b.remove(a)
        b.remove(c)
    assert b.n_present == 0


# --------------------------------------------------------------------------- hand-checked

@pytest.mark.parametrize("use_c", CORES)
def test_two_tiles_stacked_cannot_be_won(use_c):
    # A on A in one stack: the lower one is never free while the upper one is there.
    res = solve_keys(lay((0, 0, 0), (0, 0, 1)), [0, 0], use_c=use_c)
    assert res.solvable is False and res.moves == [] and not res.exhausted


@pytest.mark.parametrize("use_c", CORES)
def test_row_abba_is_won_ends_first(use_c):
    # Only the ends are free: A..A first, then the two Bs become the ends.
    d = deal([A, B, B, A], *row(4))
    res = solve_keys(d.layout, solver.match_keys("mindful", d.faces), use_c=use_c)
    assert res.solvable is True
    assert res.moves == [(0, 3), (1, 2)]


@pytest.mark.parametrize("use_c", CORES)
def test_row_abab_cannot_be_won(use_c):
    assert solve_keys(lay(*row(4)), [0, 1, 0, 1], use_c=use_c).solvable is False


@pytest.mark.parametrize("use_c", CORES)
def test_crossed_stacks_x_on_y_and_y_on_x_cannot_be_won(use_c):
    # stack 1: X over Y; stack 2: Y over X.  X needs stack 2's Y gone, which
    # needs stack 1's X gone: the classic blocked-pair cycle.
    layout = lay((0, 0, 0), (0, 0, 1), (4, 0, 0), (4, 0, 1))
    keys = [1, 0, 0, 1]  # Y, X, X, Y
    res = solve_keys(layout, keys, use_c=use_c)
    assert res.solvable is False
    assert res.nodes <= 1  # found by reasoning, without search


@pytest.mark.parametrize("use_c", CORES)
def test_parallel_stacks_x_on_y_twice_is_won(use_c):
    layout = lay((0, 0, 0), (0, 0, 1), (4, 0, 0), (4, 0, 1))
    keys = [1, 0, 1, 0]
    res = solve_keys(layout, keys, use_c=use_c)
    assert res.solvable is True
    assert res.moves == [(1, 3), (0, 2)]


def test_three_of_a_group_in_one_stack_cannot_be_won():
    # A/A/A stacked and a fourth A beside: the top may pair with the loner,
    # but the two lower ones lie in one stack.
    layout = lay((0, 0, 0), (0, 0, 1), (0, 0, 2), (4, 0, 0))
    assert solve_keys(layout, [0, 0, 0, 0]).solvable is False


def test_top_tile_pairs_across_a_row():
    # Row A B B with an A lying across the two Bs (half a tile to the right):
    # the free tiles are the left A and the top A; once they are gone the Bs
    # are the ends of a two-tile row.
    layout = lay((0, 0, 0), (2, 0, 0), (4, 0, 0), (3, 0, 1))
    res = solve_keys(layout, [0, 1, 1, 0])
    assert res.solvable is True and res.moves == [(0, 3), (1, 2)]
    # The same row with the top B over the middle B: the Bs lie in one stack.
    layout = lay((0, 0, 0), (2, 0, 0), (4, 0, 0), (2, 0, 1))
    assert solve_keys(layout, [0, 1, 0, 1]).solvable is False


def test_mindful_seasons_and_flowers_are_wild_within_their_group():
    # Mindful Mahjong 2.1 Law 2: any season matches any season.
    assert solve(deal(["season-spring", "season-winter"], *row(2))).solvable is True
    assert solve(deal(["season-spring", "flower-plum"], *row(2))).solvable is False


def test_love_glass_and_word_wildcards():
    assert solve(deal(["emotion-1", "passion-3"], *row(2), variant="love")).solvable is True
    assert solve(deal(["wild", "wild"], *row(2), variant="word")).solvable is True
    assert solve(deal(["wild", "A"], *row(2), variant="word")).solvable is False
    assert solve(deal(["A", "B", "B", "A"], *row(4), variant="word")).solvable is True


def test_hint_is_a_free_pair_that_keeps_the_game_winnable():
    d = deal([A, B, B, A], *row(4))
    assert hint(d) == (0, 3)
    assert hint(d, [False, True, True, False]) == (1, 2)
    assert hint(deal([A, B, A, B], *row(4))) is None
    assert hint(d, [False] * 4) is None  # nothing left to play


def test_present_mask_and_its_length():
    # Row A B B A C C: the free ends are A and C, no pair, so it is lost; with
    # the two Cs already gone it is row A B B A, won.
    d = deal([A, B, B, A, C, C], *row(6))
    assert solve(d).solvable is False
    assert solve(d, [True, True, True, True, False, False]).solvable is True
    with pytest.raises(BadInput):
        solve(d, [True] * 5)


def test_node_limit_reports_exhausted_not_a_verdict():
    layout = lay(*row(6), *row(6, y=2))
    keys = [0, 1, 2, 2, 1, 0, 1, 0, 2, 0, 1, 2]
    res = solve_keys(layout, keys, node_limit=0)
    assert res.exhausted is True and res.solvable is None and res.moves == []
    full = solve_keys(layout, keys)
    assert full.exhausted is False and full.solvable == brute_force(layout, keys)


def test_odd_group_is_unsolvable_at_once():
    res = solve_keys(lay(*row(4)), [0, 0, 0, 1])
    assert res.solvable is False and res.nodes == 0


# --------------------------------------------------------------------------- brute force

def brute_force(layout, keys, present=None):
    """Every order of every matching free pair, memoised on the set of tiles left."""
    geom = Geometry.of(layout)
    b = Board(geom)
    for i, p in enumerate(present or [True] * len(layout)):
        if not p:
            b.remove(i)
    memo: dict[tuple, bool] = {}

    def rec() -> bool:
        if b.n_present == 0:
            return True
        key = tuple(b.present)
        if key in memo:
            return memo[key]
        free = b.free_indices()
        ok = False
        for x in range(len(free)):
            for y in range(x + 1, len(free)):
                i, j = free[x], free[y]
                if keys[i] != keys[j]:
                    continue
                b.remove(i)
                b.remove(j)
                ok = rec()
                b.restore(j)
                b.restore(i)
                if ok:
                    break
            if ok:
                break
        memo[key] = ok
        return ok

    return rec()


def random_small(rng: random.Random, max_tiles: int):
    """A random layout of up to max_tiles slots on three layers (overlapping
    stacks, half-tile offsets, rows) with random match keys, pair-complete."""
    slots: list[Slot] = []
    for z in range(3):
        tries = 0
        while len(slots) < max_tiles and tries < (14 if z == 0 else 6):
            tries += 1
            s = Slot(rng.randrange(0, 10), rng.randrange(0, 4), z)
            if any(t.z == z and abs(t.x - s.x) < 2 and abs(t.y - s.y) < 2 for t in slots):
                continue
            slots.append(s)
    if len(slots) % 2:
        slots.pop()
    n = len(slots)
    nkeys = rng.choice([1, 2, 3, n // 2 or 1])
    keys = []
    for _ in range(n // 2):
        k = rng.randrange(nkeys)
        keys += [k, k]
    rng.shuffle(keys)
    return Layout("rnd", tuple(slots), "test"), keys


def random_smalls(rng: random.Random, count: int, max_tiles: int):
    """``count`` draws of :func:`random_small` from ``rng`` (lazily: the caller
    may draw from ``rng`` between them), the empty layouts left out."""
    for _ in range(count):
        layout, keys = random_small(rng, max_tiles)
        if keys:
            yield layout, keys


def outcome(res: solver.SolveResult):
    """What two searches that take the same steps must agree on."""
    return res.solvable, res.moves, res.nodes


@pytest.mark.parametrize("use_c", CORES + [pytest.param("position", id="position-search"),
                                            pytest.param("position-C", id="position-search-C", marks=needs_c)])
def test_verdicts_equal_brute_force_on_random_tiny_layouts(use_c):
    rng = random.Random(20240601)
    seen = {True: 0, False: 0}
    for layout, keys in random_smalls(rng, 250, 12):
        present = None
        if rng.random() < 0.3:  # a position in progress: drop a few tiles
            present = [rng.random() > 0.2 for _ in keys]
        want = brute_force(layout, keys, present)
        pres_keys = keys
        if present is not None:
            from collections import Counter
            c = Counter(k for k, p in zip(keys, present) if p)
            if any(v % 2 for v in c.values()):
                want = False
        if use_c == "position":         # the second search alone, without a budget
            res = solver._position_search(solver._tables(layout), keys, present or [True] * len(keys), 10**9,
                                          set())
        elif use_c == "position-C":
            res = position_c(layout, keys, present)
        else:
            res = solve_keys(layout, pres_keys, present, use_c=use_c)
        assert res.solvable is want and not res.exhausted, (layout.slots, keys, present)
        seen[want] += 1
        if want:
            replay(layout, keys, res.moves, present)
    assert seen[True] > 30 and seen[False] > 30  # both verdicts exercised


def test_position_search_gives_up_at_its_budget_and_keeps_what_it_learnt():
    # rows 0110 and 1001: neither group is all free, so the root is expanded
    layout, keys = lay(*row(4), *row(4, y=2)), [0, 1, 1, 0, 1, 0, 0, 1]
    tabs = solver._tables(layout)
    res = solver._position_search(tabs, keys, [True] * 8, 0, set())
    assert res.solvable is None and res.exhausted and res.nodes == 1
    res = solver._position_search(tabs, keys, [True] * 8, 10**6, set())
    assert res.solvable is True and res.nodes == 1       # then safe groups finish it
    replay(layout, keys, res.moves)
    dead: set[int] = set()                                # 0101: no free pair at all
    res = solver._position_search(solver._tables(lay(*row(4))), [0, 1, 0, 1], [True] * 4, 10**6, dead)
    assert res.solvable is False and dead == {0b1111}


@needs_c
def test_a_flat_word_deal_the_pairing_search_drowns_in_is_solved_by_turns():
    # Word Mahjong on sprint-flat, seed 107: 27 letters, up to 14 copies of one;
    # the pairing search alone had not decided it after 120 s
    from companion import codex
    d = random_deal("word", codex.builtin("sprint-flat"), 107)
    keys = solver.match_keys("word", d.faces)
    assert solve_keys(d.layout, keys, node_limit=solver.ALTERNATE_BUDGETS[0]).exhausted
    res = solve(d)
    assert res.solvable is True
    replay(d.layout, keys, res.moves)


def position_c(layout, keys, present=None, budget=-1, seconds=-1.0):
    """The C core's position search alone, as a SolveResult."""
    ps = solver._c.pos_new(solver._tables(layout).handle, keys, present or [True] * len(keys))
    code, moves, nodes = solver._c.pos_run(ps, budget, seconds)
    return solver.SolveResult(None if code < 0 else bool(code), [tuple(m) for m in moves], nodes, code == -1,
                              code == -2)


@needs_c
def test_position_search_c_and_python_agree_move_for_move():
    for layout, keys in random_smalls(random.Random(11), 80, 24):
        a = position_c(layout, keys)
        b = solver._position_search(solver._tables(layout), keys, [True] * len(keys), 10**9, set())
        assert outcome(a) == outcome(b)
    # and on full-size deals where both finish quickly
    from companion import codex
    for variant, name, seed in (("word", "sprint-2layer", 48), ("mindful", "sprint-2layer", 80),
                                ("word", "sprint-flat", 18), ("love", "turtle", 3)):
        d = random_deal(variant, codex.builtin(name), seed)
        keys = solver.match_keys(variant, d.faces)
        a = position_c(d.layout, keys, budget=3000)
        b = solver._position_search(solver._tables(d.layout), keys, [True] * len(keys), 3000, set())
        assert (outcome(a), a.exhausted) == (outcome(b), b.exhausted)
        if a.solvable:
            replay(d.layout, keys, a.moves)


@needs_c
def test_c_position_search_keeps_its_dead_positions_between_runs():
    from companion import codex
    d = random_deal("word", codex.builtin("sprint-flat"), 92)   # unwinnable, about 130,000 positions
    keys = solver.match_keys("word", d.faces)
    ps = solver._c.pos_new(solver._tables(d.layout).handle, keys, [True] * len(keys))
    code, moves, first = solver._c.pos_run(ps, 20_000, -1.0)
    assert code == -1 and moves == [] and first == 20_001
    code, moves, second = solver._c.pos_run(ps, 20_000, -1.0)
    assert code == -1 and second == 20_001                       # 20,000 new positions: it went further
    code, _, _ = solver._c.pos_run(ps, -1, 0.0)
    assert code == -2                                            # time up at once


@needs_c
def test_c_pairing_search_resumes_to_the_same_result():
    # cut into turns of a few nodes, the pairing search ends where one unbroken call ends
    rng = random.Random(5)
    from companion import codex
    cases = [random_small(rng, 24) for _ in range(30)]
    d = random_deal("love", codex.builtin("sundae-mountain"), 59)     # unwinnable: about 5,000 nodes
    cases.append((d.layout, solver.match_keys("love", d.faces)))
    for k, (layout, keys) in enumerate(cases):
        if not keys:
            continue
        h, pres = solver._tables(layout).handle, [True] * len(keys)
        whole = solver._c.solve(h, keys, pres, -1, solver.LAZY_BUDGET, solver.RESTART_BUDGET)
        q = solver._c.pair_new(h, keys, pres, solver.LAZY_BUDGET, solver.RESTART_BUDGET)
        cap = 0
        while True:
            cap += 37 if k < 30 else 700
            code, moves, nodes = solver._c.pair_run(q, cap, -1.0)
            if code >= 0:
                break
            assert code == -1 and moves == [] and nodes <= cap + 1
        assert code == whole[0] and code in (0, 1)
        if code:
            replay(layout, keys, moves)
        assert solver._c.pair_run(solver._c.pair_new(h, keys, pres, solver.LAZY_BUDGET, solver.RESTART_BUDGET),
                                  -1, -1.0) == whole


@pytest.mark.parametrize("use_c", CORES)
def test_max_seconds_stops_without_a_verdict(use_c):
    from companion import codex
    d = random_deal("love", codex.builtin("turtle"), 15)        # unwinnable: seconds to prove it
    keys = solver.match_keys("love", d.faces)
    res = solve_keys(d.layout, keys, use_c=use_c, max_seconds=0.2)
    assert res.solvable is None and res.timed_out and not res.exhausted and res.moves == []
    with pytest.raises(BadInput):
        solve_keys(d.layout, keys, max_seconds=-1)


@needs_c
@pytest.mark.parametrize("variant,name,seed", [("word", "sprint-2layer", 48), ("mindful", "sprint-2layer", 80),
                                               ("word", "sprint-flat", 85), ("word", "sprint-flat", 32),
                                               ("love", "sundae-mountain", 12)])
def test_deals_the_alternation_used_to_drown_in(variant, name, seed):
    # the previous solver took 2-28 s on each (word sprint-2layer 48: still undecided
    # after 15 minutes); now each is decided in under a second
    from companion import codex
    d = random_deal(variant, codex.builtin(name), seed)
    res = solve(d, max_seconds=20)
    assert res.solvable is True
    replay(d.layout, solver.match_keys(variant, d.faces), res.moves)


#: verdicts of the previous solver (the pairing search taking turns with the
#: pure-Python position search, before the C position search), seeds 0-29:
#: S winnable, U not
PREVIOUS_VERDICTS = {
    ("word", "sprint-flat"): "SSSUSSUUSSSSSSSSUSSSSSSUSSSSSS",
    ("word", "sprint-2layer"): "SSSSSSSSSSSUSSSUSSSSSSUSSSSSSS",
    ("word", "turtle"): "USSSSSUSSSSSSSSSSSSSSSSSUUSSSS",
    ("mindful", "sprint-flat"): "UUUUUUUUUUUUUUUUUUUUUUUUUUUUUU",
    ("mindful", "sprint-2layer"): "SSSSSSSSSSSSSSSSSSSSSSSSSSSSSS",
    ("mindful", "turtle"): "SSSSUSSSSSSSSSSUSSSSSUSSSSSSSS",
    ("love", "sprint-flat"): "UUUUUUUUUUUUUUUUUSUUUUUUUUUUUU",
    ("love", "sprint-2layer"): "SSSSSSSSSSSSSSSSSSSSSSSSSSSSSS",
    ("love", "turtle"): "SSSSUSSSSSSSSSSUSSSSSUSSSSSSSS",
}


@needs_c
@pytest.mark.parametrize("variant,name", list(PREVIOUS_VERDICTS))
def test_verdicts_equal_the_previous_solvers_and_every_line_is_a_win(variant, name):
    from companion import codex
    layout = codex.builtin(name)
    got = ""
    for seed in range(30):
        d = random_deal(variant, layout, seed)
        res = solve(d, max_seconds=60)
        assert res.solvable is not None, seed
        got += "S" if res.solvable else "U"
        if res.solvable:
            replay(layout, solver.match_keys(variant, d.faces), res.moves)
        else:
            assert res.moves == []
    assert got == PREVIOUS_VERDICTS[variant, name]


@needs_c
def test_c_and_python_cores_agree_move_for_move():
    for layout, keys in random_smalls(random.Random(7), 60, 24):
        a = solve_keys(layout, keys, use_c=True)
        b = solve_keys(layout, keys, use_c=False)
        assert outcome(a) == outcome(b)


# --------------------------------------------------------------------------- a full-size layout

def turtle():
    from companion import codex
    return codex.builtin("turtle")


def test_turtle_deals_are_solved_with_valid_lines():
    t = turtle()
    verdicts = []
    for seed in range(12):
        d = random_deal("mindful", t, seed)
        res = solve(d)
        assert res.exhausted is False
        verdicts.append(res.solvable)
        if res.solvable:
            keys = solver.match_keys("mindful", d.faces)
            replay(t, keys, res.moves)
            assert len(res.moves) == 72
    assert verdicts.count(True) >= 9  # about 97 % of Turtle deals can be won


@needs_c
def test_turtle_c_and_python_agree():
    t = turtle()
    d = random_deal("mindful", t, 1)
    keys = solver.match_keys("mindful", d.faces)
    a = solve_keys(t, keys, use_c=True)
    b = solve_keys(t, keys, use_c=False, node_limit=a.nodes + 10)
    assert outcome(a) == outcome(b)


def test_mid_game_position_and_hint_on_turtle():
    t = turtle()
    d, present = mid_game("mindful", t, 3, 20)
    h = hint(d, present)
    assert h is not None
    b = Board(t)
    for i, p in enumerate(present):
        if not p:
            b.remove(i)
    assert b.is_free(h[0]) and b.is_free(h[1])
    assert tileset("mindful").matches(d.faces[h[0]], d.faces[h[1]])
    present[h[0]] = present[h[1]] = False
    assert solve(d, present).solvable is True


def test_bad_arguments_are_bad_input():
    layout = lay(*row(2))
    with pytest.raises(BadInput):
        solve_keys(layout, [0])            # one key for two slots
    with pytest.raises(BadInput):
        solve_keys(layout, [0, -1])        # negative key at a present slot
    with pytest.raises(BadInput):
        solve_keys(layout, [0, 0], node_limit=-1)
    with pytest.raises(BadInput):
        solve(deal([A, "no-such-face"], *row(2)))
    assert solve_keys(layout, [0, -1], [True, False]).solvable is False  # a lone tile
