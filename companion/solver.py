"""Exact solver of mahjong-solitaire deals with full knowledge of every face.

``solve`` decides whether every tile of a deal (or of a position in progress)
can be removed, pair by pair, under the free rule of :mod:`companion.rules`
(its ``Geometry`` tables: covers, covered_by, left, right) and the variant's
matching relation (equal ``Face.match`` keys, :mod:`companion.tiles`), and
returns a complete winning sequence when one exists.  The verdict is exact:
without a node limit the search is exhaustive, never a heuristic guess.

Algorithm (ours, in the spirit of Michiel de Bondt's solver, "Solving Mahjong
Solitaire boards with peeking", arXiv:1203.6559, 2012).  The search branches on
*pairings* (who leaves with whom), not on move orders:

* Once it is fixed which tile pairs with which, the order of the moves does not
  matter: removing a free pair never blocks another tile, so a fixed pairing is
  played greedily.  A tile given its partner (a *commitment*) leaves as soon as
  both are free.
* Safe rule: when every uncommitted tile left of a match group is free, any
  pairing of them is as good as any other; they leave at once.
* Propagation: a tile never pairs with a tile in its own stack (one covers the
  other, directly or through tiles between: they are never free together).  A
  tile with one possible partner is committed to it; with none, dead end.
  Committed pairs that must each leave before the other (X over Y here, Y over
  X there: the classic blocked-pair cycle) are a dead end.
* Relaxed look-ahead: every free tile that has a possible partner free or
  already gone leaves, round after round (partners may be reused).  No real
  line removes a tile earlier, so a tile that never leaves proves a dead end;
  the rounds give a score (small = easy).
* Branching: for one tile of every undecided group, each possible partner is
  tried with propagation and look-ahead (a failed one is remembered as a dead
  pair below this node and dropped from the partner sets; a group left with one
  is forced).  The search branches on the group with the fewest viable partners
  per unit of *weight* (how often the group's tiles were starved in dead ends:
  dom/wdeg, Boussemart et al. 2004), ties to the largest score gap, partners in
  score order.  Every winning line pairs that tile with one of its partners, so
  the search is complete.
* A first run uses a lazy look-ahead (only the best-ranked group is evaluated
  afresh) for ``LAZY_BUDGET`` nodes: most deals are won there cheaply.  Then
  full runs restart from the root with node budgets ``RESTART_BUDGET``, twice
  that, ... keeping the weights and the table of dead positions; the budgets
  grow without bound, so the search stays exhaustive.
* A transposition table keyed by the position (present tiles and commitments,
  stored in full: no hash collision can give a wrong verdict) remembers dead
  positions.

The search lives in the C extension :mod:`companion._solvercore` (built by
``setup.py``); :class:`_PyCore` is the same algorithm in pure Python, used when
the extension is not built.  Both give the same moves and node counts.

A second search takes turns with it when the verdict must be exact (no node
limit): a depth-first search over positions (which tiles still stand) that
removes free matching pairs, plays safe groups at once (every standing tile of
a group free: any pairing of them is as good as another, since removing a tile
never blocks one and the group's tiles all match each other, wild groups
included), prunes every position the relaxed look-ahead above proves dead
(with no commitments: a tile whose possible partners all lie in its own stack
never leaves, nor one that waits for itself), tries the pairs easiest first
(by the look-ahead's score of the position each leaves) and remembers dead
positions in full (:func:`_position_search`; in C, ``pos_run``, which keeps
its table from one turn to the next).  The pairing search can drown where
many copies of a face make pairings multiply (Word Mahjong: 14 copies of one
letter; Word on sprint-2layer, seed 48, was undecided after 15 minutes) and
the position search where stacks interlock (Mindful on the Turtle).  Each
runs for a budget, then the other, budgets growing four-fold
(``ALTERNATE_BUDGETS_C[_STACKED]`` with the C core, ``ALTERNATE_BUDGETS`` and
``ALTERNATE_BUDGETS_STACKED`` without), so a deal takes at most a few times
what the better of the two needs, and both stay exact.

``max_seconds`` stops either search after about that long: the result then
has no verdict (``solvable`` None, ``timed_out`` True), never a guess.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Sequence

from companion.errors import BadInput
from companion.layouts import Layout
from companion.rules import Geometry
from companion.tiles import tileset

if TYPE_CHECKING:  # pragma: no cover
    from companion.deals import Deal

try:  # the compiled core; see setup.py
    from companion import _solvercore as _c
except ImportError:  # pragma: no cover - depends on the build
    _c = None

HAVE_C = _c is not None

#: nodes of the first, lazy-lookahead run (enough for most deals; see bench/bench_solver.py)
LAZY_BUDGET = 60
#: node budget of the first full-lookahead run; each further run doubles it
RESTART_BUDGET = 200
#: first budgets when the two searches take turns in pure Python (no C core):
#: pairing-search nodes (about 8 ms each) and positions (about 4 ms each, with
#: the look-ahead's pruning); both grow four-fold a turn.  Until session 16
#: the pairing search ran 200,000 nodes first on a stacked layout, and Word on
#: sprint-2layer seed 48, which the position search wins in 44 positions,
#: drowned in it
ALTERNATE_BUDGETS = (500, 1_000)
ALTERNATE_BUDGETS_STACKED = (2_000, 1_000)     # three layers or more
#: the same with the C cores, whose turns resume where they stopped: pairing-
#: search nodes (100-400 us each on a 2-core machine) and positions (10-40 us
#: each).  The C position search, pruned by the relaxed look-ahead and trying
#: the easiest pairs first, is often the faster of the two on layouts of one
#: or two layers and sometimes on deeper ones, so both start small and take
#: turns from the first; it is given more on the flatter layouts (chosen by
#: replaying each search's measured cost alone on 630 Word, Mindful and Love
#: deals, then checked on 100 seeds of each variant on every built-in layout:
#: bench/bench_solver_sweep.py)
ALTERNATE_BUDGETS_C = (1_000, 20_000)
ALTERNATE_BUDGETS_C_STACKED = (2_000, 4_000)   # three layers or more
ALTERNATE_GROWTH = 4
#: dead positions kept by the position search (about 100 bytes each); beyond
#: it the table starts afresh (a cache only: verdicts stay exact)
DEAD_POSITIONS_MAX = 4_000_000
#: the position search recurses once per pair: larger layouts use the pairing search alone
POSITION_SEARCH_MAX_SLOTS = 1200


@dataclass
class SolveResult:
    """What :func:`solve` found.

    Attributes:
        solvable: True / False, or None when the node limit stopped the search.
        moves: a complete winning sequence of slot-index pairs (indices into
            ``deal.layout.slots``) when solvable, else empty.  Each pair is free
            and matching at its turn.
        nodes: search nodes visited.
        exhausted: True only when ``node_limit`` was hit (then ``solvable`` is None).
        timed_out: True only when ``max_seconds`` ran out (then ``solvable`` is None).
    """

    solvable: bool | None
    moves: list[tuple[int, int]] = field(default_factory=list)
    nodes: int = 0
    exhausted: bool = False
    timed_out: bool = False


class _Exhausted(Exception):
    pass


class _TimeUp(Exception):
    pass


# --------------------------------------------------------------------------- tables

@dataclass(frozen=True)
class _Tables:
    """Geometry tables as plain tuples (what the C core receives)."""

    n: int
    z: tuple[int, ...]
    covers: tuple[tuple[int, ...], ...]
    covered_by: tuple[tuple[int, ...], ...]
    left: tuple[tuple[int, ...], ...]
    right: tuple[tuple[int, ...], ...]
    handle: object = None  # the C core's prepared copy, when built


@lru_cache(maxsize=64)
def _tables(layout: Layout) -> _Tables:
    g = Geometry.of(layout)
    z = tuple(s.z for s in layout.slots)
    handle = None
    if _c is not None:
        try:
            handle = _c.prepare(z, g.covers, g.covered_by, g.left, g.right)
        except ValueError:  # more slots than the C core takes: the Python core does it
            handle = None
    return _Tables(len(layout), z, g.covers, g.covered_by, g.left, g.right, handle)


@lru_cache(maxsize=16)
def _key_map(variant: str) -> dict[str, int]:
    """Face id -> small int match key (equal ints <=> faces match)."""
    ts = tileset(variant)
    keys: dict[str, int] = {}
    out = {}
    for f in ts.faces:
        out[f.id] = keys.setdefault(f.match, len(keys))
    return out


def match_keys(variant: str, faces: Sequence[str | None],
               present: Sequence[bool] | None = None) -> list[int]:
    """Small-int match keys of ``faces`` (equal ints <=> faces match; -1 for
    an absent slot), in the order of ``tileset(variant).faces``.

    Raises:
        BadInput: unknown variant; a present slot (index i) with no face or an
            unknown face id.
    """
    km = _key_map(variant)
    out = []
    for i, f in enumerate(faces):
        if present is not None and not present[i]:
            out.append(-1)
            continue
        try:
            out.append(km[f])  # type: ignore[index]
        except (KeyError, TypeError):
            if f is None:
                raise BadInput(f"slot index {i} holds a tile of unknown face") from None
            raise BadInput(f"unknown face {f!r} for variant {variant!r}") from None
    return out


# --------------------------------------------------------------------------- public API

def solve(deal: "Deal", present: Sequence[bool] | None = None,
          node_limit: int | None = None, max_seconds: float | None = None) -> SolveResult:
    """Decide a deal (or a position of it) exactly.

    Args:
        deal: the deal (every face known).
        present: per slot of ``deal.layout``, whether a tile stands there now;
            None means the full deal.
        node_limit: stop after this many search nodes (then ``solvable`` is
            None and ``exhausted`` True).  None: no limit, exact verdict.
        max_seconds: stop after about this many seconds (then ``solvable``
            is None and ``timed_out`` True: no verdict, never a guess).  None:
            no time limit.

    Returns:
        :class:`SolveResult`; ``moves`` index ``deal.layout.slots``.

    Raises:
        BadInput: ``present`` has the wrong length.
    """
    n = len(deal.layout)
    if present is not None and len(present) != n:
        raise BadInput(f"present has {len(present)} entries for {n} slots of {deal.layout.name!r}")
    return _solve(deal.layout, match_keys(deal.variant, deal.faces, present), present,
                  node_limit, use_c=None, max_seconds=max_seconds)


def solve_keys(layout: Layout, keys: Sequence[int], present: Sequence[bool] | None = None,
               node_limit: int | None = None, use_c: bool | None = None,
               max_seconds: float | None = None) -> SolveResult:
    """Same as :func:`solve` with small-int match keys per slot (equal keys match;
    ignored where ``present`` is False).  ``use_c``: None = the C core when built,
    False = the pure-Python core, True = the C core (ImportError if not built).

    Raises:
        BadInput: ``keys`` or ``present`` of the wrong length, a negative key
            at a present slot, a negative ``node_limit`` or ``max_seconds``.
    """
    return _solve(layout, list(keys), present, node_limit, use_c, max_seconds)


def hint(deal: "Deal", present: Sequence[bool] | None = None) -> tuple[int, int] | None:
    """A free matching pair (slot indices) after whose removal the position stays
    solvable, or None when the position cannot be won (or is already empty)."""
    res = solve(deal, present)
    if res.solvable and res.moves:
        return res.moves[0]
    return None


@contextmanager
def _ctrl_c_stops_the_c_core():
    """Around C-core searches on the main thread: Ctrl+C stops a search at
    its next node and raises KeyboardInterrupt once it has returned (the
    searches run without the GIL, so Python would see Ctrl+C only between
    two turns of the searches: over 10 s late on a hard deal, minutes on a
    harder one).  Elsewhere (a web server's worker thread) nothing changes:
    a signal handler belongs to the main thread."""
    import signal
    if (_c is None or not hasattr(_c, "watch_sigint")         # (a C core built from older sources)
            or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is signal.SIG_IGN):   # (ignored, as for a background job: left so)
        yield
        return
    _c.watch_sigint()
    try:
        yield
    finally:
        if _c.unwatch_sigint():
            raise KeyboardInterrupt


def _solve(layout: Layout, keys: list[int], present: Sequence[bool] | None,
           node_limit: int | None, use_c: bool | None, max_seconds: float | None = None) -> SolveResult:
    n = len(layout)
    if present is None:
        pres = [True] * n
    else:
        if len(present) != n:
            raise BadInput(f"present has {len(present)} entries for {n} slots of {layout.name!r}")
        pres = [bool(p) for p in present]
    if len(keys) != n:
        raise BadInput(f"{len(keys)} faces for {n} slots of {layout.name!r}")
    if any(k < 0 for k, p in zip(keys, pres) if p):
        raise BadInput("match keys of present tiles must be >= 0")
    if node_limit is not None and node_limit < 0:
        raise BadInput("node_limit must be >= 0")
    if max_seconds is not None and not max_seconds >= 0:
        raise BadInput("max_seconds must be >= 0")
    tabs = _tables(layout)
    if use_c is None:
        use_c = tabs.handle is not None
    if use_c and tabs.handle is None:
        raise ImportError("companion._solvercore is not built (python setup.py build_ext --inplace)"
                          if _c is None else f"layout {layout.name!r} is too large for the C core")

    deadline = None if max_seconds is None else time.monotonic() + max_seconds

    def seconds_left() -> float:
        return -1.0 if deadline is None else max(0.0, deadline - time.monotonic())

    def pairing(limit: int | None) -> SolveResult:
        if use_c:
            with _ctrl_c_stops_the_c_core():
                code, moves, nodes = _c.solve(tabs.handle, keys, pres, -1 if limit is None else limit,
                                              LAZY_BUDGET, RESTART_BUDGET, seconds_left())
            if code == -2:
                return SolveResult(None, [], nodes, False, True)
            if code < 0:
                return SolveResult(None, [], nodes, True)
            return SolveResult(bool(code), [tuple(m) for m in moves] if code else [], nodes, False)
        return _PyCore(tabs, keys, pres, limit, deadline).run(LAZY_BUDGET, RESTART_BUDGET)

    if node_limit is not None or tabs.n > POSITION_SEARCH_MAX_SLOTS:
        return pairing(node_limit)
    if use_c:
        with _ctrl_c_stops_the_c_core():
            return _alternate_c(tabs, keys, pres, seconds_left,
                                ALTERNATE_BUDGETS_C if layout.depth <= 2 else ALTERNATE_BUDGETS_C_STACKED)
    budget, positions = ALTERNATE_BUDGETS if layout.depth <= 2 else ALTERNATE_BUDGETS_STACKED
    dead: set[int] = set()

    def position(limit: int) -> SolveResult:
        return _position_search(tabs, keys, pres, limit, dead, deadline)

    nodes = 0
    while True:
        res = pairing(budget)
        nodes += res.nodes
        if not res.exhausted:
            return replace(res, nodes=nodes)
        res = position(positions)
        nodes += res.nodes
        if not res.exhausted:
            return replace(res, nodes=nodes)
        budget *= 4
        positions *= 4


def _alternate_c(tabs: _Tables, keys: list[int], pres: list[bool], seconds_left,
                 budgets: tuple[int, int]) -> SolveResult:
    """The two C searches taking turns, each resuming where its last turn
    stopped (the pairing search from its current restart, the position
    search with its table of dead positions): ``budgets`` nodes first, then
    ``ALTERNATE_GROWTH`` times more each turn."""
    pq = _c.pair_new(tabs.handle, keys, pres, LAZY_BUDGET, RESTART_BUDGET)
    ps = _c.pos_new(tabs.handle, keys, pres)
    budget, positions = budgets
    pair_cap = pos_nodes = 0
    while True:
        pair_cap += budget
        code, moves, pair_nodes = _c.pair_run(pq, pair_cap, seconds_left())
        if code >= 0 or code == -2:
            break
        code, moves, n = _c.pos_run(ps, positions, seconds_left())
        pos_nodes += n
        if code >= 0 or code == -2:
            break
        budget *= ALTERNATE_GROWTH
        positions *= ALTERNATE_GROWTH
    nodes = pair_nodes + pos_nodes
    if code == -2:
        return SolveResult(None, [], nodes, False, True)
    return SolveResult(bool(code), [tuple(m) for m in moves] if code else [], nodes, False)


# --------------------------------------------------------------------------- position search

def _position_search(tabs: _Tables, keys: list[int], present: list[bool], budget: int,
                     dead: set[int], deadline: float | None = None) -> SolveResult:
    """Depth-first search over positions: is every standing tile removable?

    A position is the bit mask of standing tiles.  In each one:

    * a group (equal match keys) whose standing tiles are all free leaves at
      once (the lowest key first), paired in slot order: any pairing of free
      tiles of one group is as good as another, and removing tiles never
      blocks one (the group's count is even: the root checks every group, and
      tiles leave in pairs);
    * the relaxed look-ahead (:func:`_pos_relax`) proves some positions dead;
    * every free matching pair (groups in key order, pairs in slot order) is
      scored by the look-ahead of the position it leaves; pairs after which
      the look-ahead proves a dead end are dropped, the others tried easiest
      first (smallest score; ties in the order above).

    A position found dead is remembered in ``dead`` (shared between calls,
    emptied past :data:`DEAD_POSITIONS_MAX`), so the search is exhaustive:
    ``False`` is a proof.  The C core's ``pos_run`` takes the same steps in the
    same order (same moves and node counts).

    Args:
        tabs: the layout's geometry tables.
        keys: match key per slot (equal keys match).
        present: per slot, whether a tile stands there.
        budget: positions to expand before giving up (then ``exhausted``).
        dead: dead positions found so far (updated).
        deadline: a ``time.monotonic()`` instant past which the search stops
            (then ``timed_out``); None: none.

    Returns:
        :class:`SolveResult` (``nodes``: positions expanded).
    """
    n = tabs.n
    cov = [sum(1 << j for j in tabs.covered_by[i]) for i in range(n)]
    lm = [sum(1 << j for j in tabs.left[i]) for i in range(n)]
    rm = [sum(1 << j for j in tabs.right[i]) for i in range(n)]
    near = [tuple(set(tabs.covers[i]) | set(tabs.left[i]) | set(tabs.right[i])) for i in range(n)]
    gmask: dict[int, int] = {}
    for i in range(n):
        if present[i]:
            gmask[keys[i]] = gmask.get(keys[i], 0) | (1 << i)
    if any(m.bit_count() % 2 for m in gmask.values()):
        return SolveResult(False, [], 0, False)
    groups = [gmask[k] for k in sorted(gmask)]
    cand, _ = _stack_free_partners(tabs, keys, present, gmask)

    def free_at(i: int, p: int) -> bool:
        return not (cov[i] & p) and (not (lm[i] & p) or not (rm[i] & p))

    def take(p: int, free: int, a: int, b: int) -> tuple[int, int]:
        p &= ~((1 << a) | (1 << b))
        free &= ~((1 << a) | (1 << b))
        for i in near[a] + near[b]:
            if (p >> i) & 1:
                if free_at(i, p):
                    free |= 1 << i
                else:
                    free &= ~(1 << i)
        return p, free

    moves: list[tuple[int, int]] = []
    count = [0]

    def search(p: int, free: int) -> bool:
        start = len(moves)
        while True:                                   # safe groups leave at once
            if p == 0:
                return True
            safe = next((g & p for g in groups if g & p and not (g & p & ~free)), 0)
            if not safe:
                break
            it = _bits(safe)
            for a in it:
                b = next(it)
                p, free = take(p, free, a, b)
                moves.append((a, b))
        if p not in dead:
            count[0] += 1
            if count[0] > budget:
                raise _Exhausted
            if deadline is not None and count[0] % 256 == 0 and time.monotonic() > deadline:
                raise _TimeUp
            if _pos_relax(tabs, cand, p, free, keys) is not None:
                scored = []
                for g in groups:
                    f = g & free
                    if f & (f - 1):
                        fl = list(_bits(f))
                        for x, a in enumerate(fl):
                            for b in fl[x + 1:]:
                                p2, f2 = take(p, free, a, b)
                                sc = _pos_relax(tabs, cand, p2, f2, keys)
                                if sc is not None:
                                    scored.append((sc, len(scored), a, b, p2, f2))
                scored.sort()
                for _, _, a, b, p2, f2 in scored:
                    moves.append((a, b))
                    if search(p2, f2):
                        return True
                    moves.pop()
            if len(dead) >= DEAD_POSITIONS_MAX:
                dead.clear()
            dead.add(p)
        del moves[start:]
        return False

    p0 = sum(1 << i for i in range(n) if present[i])
    free0 = sum(1 << i for i in range(n) if present[i] and free_at(i, p0))
    try:
        ok = search(p0, free0)
    except _Exhausted:
        return SolveResult(None, [], count[0], True)
    except _TimeUp:
        return SolveResult(None, [], count[0], False, timed_out=True)
    return SolveResult(ok, list(moves) if ok else [], count[0], False)


def _stacks(tabs: _Tables, present: list[bool]) -> tuple[list[int], list[int]]:
    """Transitive covering among present tiles: per tile, ``above`` = the
    present tiles that must leave before it can be free (over it, directly or
    through present tiles between), ``below`` = those that can only be free
    after it has left (0 for an absent tile)."""
    n = tabs.n
    order = sorted(range(n), key=lambda i: tabs.z[i])

    def closure(rows: tuple[tuple[int, ...], ...], slots) -> list[int]:
        out = [0] * n
        for i in slots:       # every row used is complete by then
            if present[i]:
                m = 0
                for j in rows[i]:
                    if present[j]:
                        m |= (1 << j) | out[j]
                out[i] = m
        return out

    return closure(tabs.covered_by, reversed(order)), closure(tabs.covers, order)


def _stack_free_partners(tabs: _Tables, keys: list[int], present: list[bool],
                         gmask: dict[int, int] | list[int]) -> tuple[list[int], list[int]]:
    """Per present tile, the present tiles it could ever leave with: same
    group (``gmask``: the tiles of each match key), not in its stack (one
    above the other, directly or through present tiles between: a tile stays
    standing until every tile above it has left, so the two are never free
    together).  Returns them and ``above`` (:func:`_stacks`)."""
    above, below = _stacks(tabs, present)
    return [gmask[keys[i]] & ~above[i] & ~below[i] & ~(1 << i) if present[i] else 0
            for i in range(tabs.n)], above


def _pos_relax(tabs: _Tables, cand: list[int], P: int, F: int, keys: list[int]) -> int | None:
    """The relaxed look-ahead of a position (standing tiles ``P``, free ``F``):
    every free tile with a possible partner (``cand``, standing) that is free
    or already gone leaves, round after round, partners reused.  A real line
    removes no tile earlier (by induction on its moves), so a tile that never
    leaves proves the position dead: None.  Otherwise the sum over tiles of
    the round each one leaves in (small = easy)."""
    covers, left, right, covered_by = tabs.covers, tabs.left, tabs.right, tabs.covered_by

    def leave(Fr: int, R: int) -> int:
        avail = Fr | R
        rem = 0
        for t in _bits(Fr):
            if cand[t] & P & avail:
                rem |= 1 << t
        return rem

    def unblock(rem: int, Fr: int, R: int) -> int:
        gone = ~P | R
        for t in _bits(rem):
            for j in covers[t] + left[t] + right[t]:
                if (P >> j) & 1 and not (R >> j) & 1 and not (Fr >> j) & 1:
                    if all((gone >> c) & 1 for c in covered_by[j]) and (
                            all((gone >> c) & 1 for c in left[j]) or all((gone >> c) & 1 for c in right[j])):
                        Fr |= 1 << j
        return Fr

    total, _, R = _relax_rounds(F, leave, unblock)
    return total if R == P else None


def _relax_rounds(F: int, leave, unblock) -> tuple[int, int, int]:
    """The rounds of a relaxed look-ahead from the free tiles ``F``: in each,
    the free tiles ``leave(Fr, R)`` picks (those with a partner available)
    leave, into ``R``, and the free tiles become ``unblock(rem, Fr, R)``
    (``Fr`` less the tiles ``rem`` that just left, plus those they uncover),
    until no tile leaves.  Returns ``(total, Fr, R)``: ``total`` is the sum
    over the tiles that left of the round each one left in."""
    R = 0
    Fr = F
    rnd = total = 0
    while True:
        rem = leave(Fr, R)
        if not rem:
            return total, Fr, R
        rnd += 1
        total += rnd * rem.bit_count()
        R |= rem
        Fr = unblock(rem, Fr & ~rem, R)


# --------------------------------------------------------------------------- pure-Python core

def _bits(x: int):
    """Indices of the set bits of ``x``, lowest first."""
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


_DEAD, _DONE = "dead", "done"
_LAZY_UNKNOWN_NV = 2  # viable partners assumed for a group never evaluated (lazy mode)


class _PyCore:
    """The search in pure Python: the reference for the C core in
    ``_solvercore.c``, which takes the same steps in the same order (same
    moves, same node counts).  Sets of tiles are Python ints used as bitsets."""

    def __init__(self, tabs: _Tables, keys: list[int], present: list[bool],
                 node_limit: int | None, deadline: float | None = None) -> None:
        n = tabs.n
        self.n = n
        self.covers, self.left, self.right = tabs.covers, tabs.left, tabs.right
        self.node_limit = node_limit
        self.deadline = deadline
        P = 0
        for i in range(n):
            if present[i]:
                P |= 1 << i
        self.P = P
        self.ncov = [sum(1 for j in tabs.covered_by[i] if present[j]) for i in range(n)]
        self.nl = [sum(1 for j in tabs.left[i] if present[j]) for i in range(n)]
        self.nr = [sum(1 for j in tabs.right[i] if present[j]) for i in range(n)]
        F = 0
        for i in range(n):
            if present[i] and self.ncov[i] == 0 and (self.nl[i] == 0 or self.nr[i] == 0):
                F |= 1 << i
        self.F = F
        self.U = P
        self.partner = [-1] * n
        nk = max((k for i, k in enumerate(keys) if present[i]), default=-1) + 1
        gm = [0] * nk
        for i in range(n):
            if present[i]:
                gm[keys[i]] |= 1 << i
        self.gmask = gm
        self.key = [keys[i] if present[i] else -1 for i in range(n)]
        # possible partners: same group, not in the same stack; above[i]: the
        # present tiles that must leave before i can be free
        self.candmask, self.above = _stack_free_partners(tabs, keys, present, gm)
        self.log: list[tuple[int, int, int]] = []
        self.tt: set = set()
        self.nodes = 0
        self.limit = -1
        self.wt = [1] * nk          # per group: how often it took part in a dead end
        self.lazy = False
        self.la_id = 0
        self.cache: list[tuple | None] = [None] * nk  # lazy mode's last evaluation per group

    # -- board updates ------------------------------------------------------
    def _refresh(self, j: int) -> None:
        b = 1 << j
        if self.P & b and self.ncov[j] == 0 and (self.nl[j] == 0 or self.nr[j] == 0):
            self.F |= b
        else:
            self.F &= ~b

    def _take(self, i: int) -> None:
        self.P &= ~(1 << i)
        self.F &= ~(1 << i)
        for j in self.covers[i]:
            self.ncov[j] -= 1
            self._refresh(j)
        for j in self.left[i]:      # i is the right neighbour of its left neighbours
            self.nr[j] -= 1
            self._refresh(j)
        for j in self.right[i]:
            self.nl[j] -= 1
            self._refresh(j)

    def _put(self, i: int) -> None:
        self.P |= 1 << i
        for j in self.covers[i]:
            self.ncov[j] += 1
            self._refresh(j)
        for j in self.left[i]:
            self.nr[j] += 1
            self._refresh(j)
        for j in self.right[i]:
            self.nl[j] += 1
            self._refresh(j)
        self._refresh(i)

    def _remove(self, a: int, b: int) -> None:
        committed = self.partner[a] == b
        self._take(a)
        self._take(b)
        self.U &= ~((1 << a) | (1 << b))
        self.log.append((2 if committed else 0, a, b))

    def _commit(self, a: int, b: int) -> None:
        self.partner[a] = b
        self.partner[b] = a
        self.U &= ~((1 << a) | (1 << b))
        self.log.append((1, a, b))

    def _mark_dead(self, a: int, b: int) -> None:
        """The pair (a, b) can no longer be part of a win from here on: drop
        it from both tiles' possible partners (undone on backtracking)."""
        if not (self.candmask[a] >> b) & 1:
            return
        self.candmask[a] &= ~(1 << b)
        self.candmask[b] &= ~(1 << a)
        self.log.append((3, a, b))

    def _undo(self, mark: int) -> None:
        log = self.log
        while len(log) > mark:
            kind, a, b = log.pop()
            if kind == 3:
                self.candmask[a] |= 1 << b
                self.candmask[b] |= 1 << a
            elif kind == 1:
                self.partner[a] = self.partner[b] = -1
                self.U |= (1 << a) | (1 << b)
            else:
                self._put(b)
                self._put(a)
                if kind == 0:
                    self.U |= (1 << a) | (1 << b)

    # -- reasoning ----------------------------------------------------------
    def _cycle(self, a: int, b: int) -> bool:
        """True when the committed pair (a, b) must leave before itself: some
        tile above a or b is committed to a tile that lies (through further
        commitments) under a or b again."""
        above, partner, P = self.above, self.partner, self.P
        S = (above[a] | above[b]) & P
        done = 0
        while True:
            todo = S & ~self.U & ~done
            if not todo:
                break
            for x in _bits(todo):
                done |= 1 << x
                y = partner[x]
                S |= ((1 << y) | above[y]) & P
        if S & ((1 << a) | (1 << b)):
            self.wt[self.key[a]] += 1
            return True
        return False

    def _relax(self) -> int | None:
        """Optimistic look-ahead in rounds: every free tile with a possible
        partner that is free or already gone leaves (partners may be reused).
        A real winning line removes no tile earlier than this, so a tile left
        over proves a dead end: returns None, and the groups of the starved
        tiles (free but never given a partner) gain weight.  Otherwise returns
        the sum over tiles of the round each one leaves in (small = easy)."""
        P, U = self.P, self.U
        covers, left, right = self.covers, self.left, self.right
        ncov, nl, nr = self.ncov[:], self.nl[:], self.nr[:]
        partner, gmask, key, candmask = self.partner, self.gmask, self.key, self.candmask
        check = self.F

        def leave(Fr: int, R: int) -> int:
            avail = Fr | R
            ua = avail & U
            rem = 0
            for t in _bits(check & Fr):
                if (U >> t) & 1:
                    if candmask[t] & ua:
                        rem |= 1 << t
                elif (avail >> partner[t]) & 1:
                    rem |= 1 << t
            return rem

        def unblock(rem: int, Fr: int, R: int) -> int:
            nonlocal check
            new = 0
            for t in _bits(rem):
                for j in covers[t]:
                    ncov[j] -= 1
                    if ncov[j] == 0 and (nl[j] == 0 or nr[j] == 0) and (P >> j) & 1 and not (R >> j) & 1:
                        new |= 1 << j
                for j in left[t]:
                    nr[j] -= 1
                    if nr[j] == 0 and ncov[j] == 0 and (P >> j) & 1 and not (R >> j) & 1:
                        new |= 1 << j
                for j in right[t]:
                    nl[j] -= 1
                    if nl[j] == 0 and ncov[j] == 0 and (P >> j) & 1 and not (R >> j) & 1:
                        new |= 1 << j
            new &= ~Fr & ~R
            # only tiles of groups that gained an available tile can change
            check = 0
            for t in _bits(new):
                check |= gmask[key[t]]
            return Fr | new

        total, Fr, R = _relax_rounds(self.F, leave, unblock)
        if R == P:
            return total
        for t in _bits(Fr & ~R):
            self.wt[key[t]] += 1
        return None

    def _propagate(self) -> int | None:
        """Forced steps until none is left, then the relaxed look-ahead.
        Returns None on a dead end, else the look-ahead's score."""
        while True:
            progress = False
            # A: committed pairs whose tiles are both free leave
            for t in _bits(self.F & ~self.U):
                p = self.partner[t]
                if t < p and (self.F >> p) & 1 and (self.F >> t) & 1:
                    self._remove(t, p)
                    progress = True
            # B: a group whose uncommitted tiles are all free leaves (safe rule)
            for g in self.gmask:
                G = g & self.U
                if G and not (G & ~self.F):
                    it = _bits(G)
                    for a in it:
                        self._remove(a, next(it))
                    progress = True
            # C: a tile with one possible partner is committed; with none, dead
            for t in _bits(self.U):
                if not (self.U >> t) & 1:
                    continue
                cand = self.candmask[t] & self.U
                if not cand:
                    self.wt[self.key[t]] += 1
                    return None
                if not cand & (cand - 1):
                    u = cand.bit_length() - 1
                    self._commit(t, u)
                    if self._cycle(t, u):
                        return None
                    progress = True
            if not progress:
                return self._relax()

    def _state(self) -> tuple:
        C = self.P & ~self.U
        return (self.P, tuple(self.partner[t] for t in _bits(C)))

    def _eval_group(self, k: int):
        """Group k's branching tile and its viable partners, best first, as
        ``(tile, [(score, partner), ...])``; None when the group is decided."""
        G = self.gmask[k] & self.U
        if not G:
            return None
        FU = G & self.F
        a = (FU & -FU).bit_length() - 1 if FU else (G & -G).bit_length() - 1
        viable = []
        four = G.bit_count() == 4
        for c in _bits(self.candmask[a] & self.U):
            m = len(self.log)
            self._commit(a, c)
            sc = None if self._cycle(a, c) else self._propagate()
            self._undo(m)
            if sc is not None:
                viable.append((sc, c))
                continue
            # remember the dead pairing below this node (both of its pairs)
            self._mark_dead(a, c)
            if four:
                b, d = _bits(G & ~(1 << a) & ~(1 << c))
                self._mark_dead(b, d)
        viable.sort()
        return a, viable

    @staticmethod
    def _better(nv: int, reg: int, wk: int, best: tuple[int, int, int]) -> bool:
        """Fewest viable partners per unit of weight first (dom/wdeg), then
        the largest gap between the best and second-best partner's score."""
        bnv, breg, bw = best
        lhs, rhs = nv * bw, bnv * wk
        return lhs < rhs or (lhs == rhs and reg < breg)

    def _force(self, a: int, c: int) -> bool:
        self._commit(a, c)
        return not (self._cycle(a, c) or self._propagate() is None)

    def _lookahead(self):
        """Choose the branching tile.  Full mode tries one tile of every
        undecided group with each possible partner; lazy mode ranks groups by
        their last evaluation and evaluates only the best until the best is
        fresh.  A group with one viable partner is forced.  Returns _DEAD,
        _DONE or (tile, partners best first)."""
        while True:
            self.la_id += 1
            forced = False
            if not self.lazy:
                best = None
                bkey = (0, 0, 1)
                for k in range(len(self.gmask)):
                    ev = self._eval_group(k)
                    if ev is None:
                        continue
                    a, viable = ev
                    if not viable:
                        return _DEAD
                    if len(viable) == 1:
                        if not self._force(a, viable[0][1]):
                            return _DEAD
                        forced = True
                        break
                    reg = viable[0][0] - viable[1][0]
                    if best is None or self._better(len(viable), reg, self.wt[k], bkey):
                        best = (a, [c for _, c in viable])
                        bkey = (len(viable), reg, self.wt[k])
                if not forced:
                    if best is None:
                        return _DONE if not self.P else _DEAD
                    return best
            else:
                cache = self.cache
                while True:
                    bk = -1
                    bkey = (0, 0, 1)
                    for k, g in enumerate(self.gmask):
                        if not g & self.U:
                            continue
                        c = cache[k]
                        nv, reg = (c[1], c[2]) if c is not None else (_LAZY_UNKNOWN_NV, 0)
                        if bk < 0 or self._better(nv, reg, self.wt[k], bkey):
                            bk, bkey = k, (nv, reg, self.wt[k])
                    if bk < 0:
                        return _DONE if not self.P else _DEAD
                    c = cache[bk]
                    if c is not None and c[0] == self.la_id:
                        return c[3], list(c[4])
                    a, viable = self._eval_group(bk)  # type: ignore[misc]
                    if not viable:
                        return _DEAD
                    if len(viable) == 1:
                        if not self._force(a, viable[0][1]):
                            return _DEAD
                        forced = True
                        break
                    cache[bk] = (self.la_id, len(viable), viable[0][0] - viable[1][0], a,
                                 [c for _, c in viable])
            if not self.P:
                return _DONE

    def _search(self) -> bool:
        self.nodes += 1
        if self.limit >= 0 and self.nodes > self.limit:
            raise _Exhausted
        if self.deadline is not None and self.nodes % 64 == 0 and time.monotonic() > self.deadline:
            raise _TimeUp
        mark = len(self.log)
        if self._propagate() is None:
            self._undo(mark)
            return False
        if not self.P:
            return True
        st = self._state()
        if st in self.tt:
            self._undo(mark)
            return False
        r = self._lookahead()
        if r is _DONE:
            return True
        if r is not _DEAD:
            a, opts = r
            for c in opts:
                m2 = len(self.log)
                self._commit(a, c)
                if not self._cycle(a, c) and self._search():
                    return True
                self._undo(m2)
        self.tt.add(st)
        self._undo(mark)
        return False

    def _run(self, limit: int) -> bool | None:
        """One search from the root with a node limit (-1: none); None when hit."""
        self.limit = limit
        try:
            return self._search()
        except _Exhausted:
            self._undo(0)
            return None

    def run(self, lazy_budget: int, restart0: int) -> SolveResult:
        """:meth:`_runs`; past the deadline, ``timed_out`` (no verdict)."""
        try:
            return self._runs(lazy_budget, restart0)
        except _TimeUp:
            return SolveResult(None, [], self.nodes, False, True)

    def _runs(self, lazy_budget: int, restart0: int) -> SolveResult:
        """Run 0: lazy lookahead for ``lazy_budget`` nodes (0: skip it); then
        full lookahead from the root with node budgets ``restart0``,
        ``2 restart0``, ... (0: one unbounded run).  The table of dead
        positions and the weights carry over from run to run, so every run is
        better informed than the last; the budgets grow without bound, so the
        search is exhaustive in the end."""
        for g in self.gmask:
            if g.bit_count() % 2:
                return SolveResult(False, [], 0, False)
        limit = -1 if self.node_limit is None else self.node_limit
        ok = None
        if lazy_budget > 0:
            self.lazy = True
            ok = self._run(limit if 0 <= limit < lazy_budget else lazy_budget)
        self.lazy = False
        budget = restart0
        while ok is None and not (limit >= 0 and self.nodes >= limit):
            lim = self.nodes + budget if budget > 0 else -1
            if limit >= 0 and (lim < 0 or lim > limit):
                lim = limit
            ok = self._run(lim)
            if ok is not None or lim < 0 or (limit >= 0 and lim == limit):
                break
            budget *= 2
        if ok is None:
            return SolveResult(None, [], self.nodes, True)
        if not ok:
            return SolveResult(False, [], self.nodes, False)
        moves = [(a, b) for kind, a, b in self.log if kind in (0, 2)]
        return SolveResult(True, moves, self.nodes, False)
