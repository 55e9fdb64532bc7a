"""Engine sub-commands of the contract: ``layouts list|show``, ``free``, ``deal``, ``solve``.

Thin shells: parse arguments, read files, call the engine, print JSON
(../shared/CONTRACT.md, "Commands that outside checks run").
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from companion.cli import seed_value, word_arg
from companion.errors import BadInput
from companion.layouts import MAT_HALF_UNITS, Slot, check_layout
from companion.tiles import VARIANTS
from companion.wording import count


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("layouts", help="list or show layouts")
    lsub = p.add_subparsers(dest="layouts_command", metavar="list|show")
    lsub.required = True
    pl = lsub.add_parser("list", help="name the built-in layouts")
    pl.add_argument("--json", action="store_true", help="print JSON")
    pl.set_defaults(func=_layouts_list)
    ps = lsub.add_parser("show", help="print a layout's slots")
    ps.add_argument("name", help="built-in name or a .layout/.map/.json path")
    ps.add_argument("--map-name", help="map to read from a GNOME .map file holding several")
    ps.add_argument("--json", action="store_true", help="print the contract's layout JSON")
    ps.set_defaults(func=_layouts_show)

    p = sub.add_parser("free", help="free flags of a layout after removing slots")
    _layout_args(p)
    p.add_argument("--removed", nargs="+", action="extend", default=[], metavar="x,y,z",
                   help="slots removed (several after one --removed, or --removed repeated)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_free)

    p = sub.add_parser("deal", help="a seeded deal of a variant's tiles on a layout")
    p.add_argument("--variant", required=True, type=word_arg, choices=VARIANTS)
    _layout_args(p)
    p.add_argument("--seed", required=True, type=seed_value)
    p.add_argument("--solvable", action="store_true", help="guarantee a winnable deal (the deal `game start --seed N` plays: without --random it deals the --solvable one)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_deal)

    p = sub.add_parser("solve", help="decide deals exactly, with a winning sequence")
    p.add_argument("deals", nargs="+", metavar="DEAL.json")
    p.add_argument("--json", action="store_true", help="print one JSON object per deal")
    p.add_argument("--max-seconds", type=_seconds, metavar="S",
                   help="give up on a deal after about S seconds (default: no limit, every verdict exact); "
                        "a deal left undecided prints \"solvable\": null, \"decided\": false and is "
                        "named on stderr after the last deal (exit 0: the contract's codes are 0, 2 and 3)")
    p.set_defaults(func=_solve)


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (v > 0 and v < float("inf")):
        raise argparse.ArgumentTypeError(f"--max-seconds must be a positive number, not {text!r}")
    return v


def _layout_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--layout", required=True, help="built-in name or a .layout/.map/.json path")
    p.add_argument("--map-name", help="map to read from a GNOME .map file holding several")


def _load(args):
    from companion.layout_files import load_layout
    return load_layout(args.layout, getattr(args, "map_name", None))


def _layouts_list(args) -> int:
    from companion import codex
    rows = []
    for name in codex.BUILTIN_NAMES:
        lay = codex.builtin(name)
        rows.append({"name": name, "title": codex.title(name), "tiles": len(lay),
                     "layers": lay.depth, "books": list(codex.books(name))})
    if args.json:
        from companion.cli import print_json
        print_json({"layouts": rows})
    else:
        for r in rows:
            books = ", ".join(r["books"])
            print(f"{r['name']:<22} {r['title']:<26} {r['tiles']:>3} tiles {count(r['layers'], 'layer')}"
                  + (f"  ({books})" if books else ""))
    return 0


def _layouts_show(args) -> int:
    from companion.layout_files import load_layout
    lay = load_layout(args.name, args.map_name)
    if args.json:
        from companion.cli import print_json
        print_json(lay.to_json())
        return 0
    rep = check_layout(lay)
    x0, y0, x1, y1 = lay.bounds()
    # where on the mat: slots keep their file's coordinates (CONTRACT.md), so
    # the same Turtle from two files may stand a tile apart; the top view
    # below starts at the layout's own corner (a break-test built a file's
    # Turtle where the built-in one stands)
    where = (f" at half-tile columns {x0}-{x1 - 1} and rows {y0}-{y1 - 1} of its {MAT_HALF_UNITS[0]} x "
             f"{MAT_HALF_UNITS[1]} grid (from its top-left cell)") if len(lay) and rep.buildable else ""
    off = off_grid_problem(lay) if len(lay) and rep.buildable else None
    if off:
        # a break-test's file Turtle moved to x 1003-1032 was "buildable on
        # the mat at half-tile columns 1003-1032 ... of its 36 x 16 grid",
        # and recognize then refused it as off the mat
        where, off = off
    print(f"{lay.name}: {count(len(lay), 'tile')}, {count(lay.depth, 'layer')}, "
          f"{'buildable on the mat' + where if rep.buildable else 'NOT buildable on the mat'}"
          + ("" if rep.playable else " and NOT playable"))
    for problem in rep.problems + ((off,) if off else ()):
        print(f"  - {problem}")
    print(_ascii(lay))
    return 0


def off_grid_problem(lay) -> tuple[str, str] | None:
    """Why a layout buildable on the mat (:func:`check_layout`, which judges
    its box wherever it lies) still cannot be read as it is
    (``recognize`` and ``referee`` read a file's slots where the file puts
    them: :func:`companion.layouts.check_on_mat`), for ``layouts show``: the
    end of its first line and one problem line; None when every slot lies on
    the mat's :data:`MAT_HALF_UNITS` grid, layers 0 to ``MAT_MAX_LAYERS - 1``.

    Args:
        lay: a layout with at least one slot.
    """
    from companion.layouts import MAT_MAX_LAYERS
    x0, y0, x1, y1 = lay.bounds()
    w, h = MAT_HALF_UNITS
    if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
        return ", but not where its coordinates put it", (f"its slots lie at half-tile columns {x0} to {x1 - 1} and rows {y0} to {y1 - 1}, off the mat's "
                f"{w} x {h} grid (columns 0-{w - 1}, rows 0-{h - 1}), where recognize and referee look for "
                f"them: move its coordinates into the grid (x 0-{w - 2}, y 0-{h - 2})")
    if lay.depth > MAT_MAX_LAYERS:
        return ", but too tall for the camera", (f"it stands {lay.depth} layers high, and a camera reads layers 0-{MAT_MAX_LAYERS - 1} only "
                "(recognize and referee refuse it)")
    return None


#: the widest top view ``layouts show`` draws (half-tile cells a side)
ASCII_MAX = 400


def _ascii(lay) -> str:
    """Top view: each cell shows the height of the stack (number of tiles
    over it) in one character: 1-9, then a-z for 10-35 and ``+`` above (a
    stack of 12 once printed "12", two characters, and shifted its row)."""
    x0, y0, x1, y1 = lay.bounds()
    if x1 - x0 > ASCII_MAX or y1 - y0 > ASCII_MAX:
        return (f"(no top view: the layout spans {x1 - x0:,} x {y1 - y0:,} half-tiles, more than "
                f"{ASCII_MAX} x {ASCII_MAX})")
    grid = [[0] * (x1 - x0) for _ in range(y1 - y0)]
    for s in lay.slots:
        for i in (0, 1):
            for j in (0, 1):
                grid[s.y - y0 + j][s.x - x0 + i] = max(grid[s.y - y0 + j][s.x - x0 + i], s.z + 1)
    def cell(c: int) -> str:
        return "." if c == 0 else str(c) if c < 10 else chr(ord("a") + c - 10) if c < 36 else "+"
    return "\n".join("".join(cell(c) for c in row) for row in grid)


def _free(args) -> int:
    from companion.rules import board_after
    from companion.layouts import refuse_overlap
    lay = _load(args)
    refuse_overlap(lay)
    removed = [Slot.parse(t) for t in args.removed]
    board = board_after(lay, removed)
    rows = [board.reason(i).to_json() for i in range(len(lay))]
    if args.json:
        from companion.cli import print_json
        print_json({"slots": rows})
    else:
        for i in range(len(lay)):
            print(board.reason(i).describe())
    return 0


def refuse_unplayable(lay, where: str = "") -> None:
    """Refuse a layout the engine cannot play (:func:`companion.layouts.check_layout`:
    no tiles, an odd number, a slot twice, tiles overlapping on a layer):
    ``deal`` would deal it and ``solve`` would decide it as if it were a board.

    Args:
        lay: the layout.
        where: a prefix for the message (``"d.json: "``), or "".

    Raises:
        BadInput: ``"layout 'NAME' is not playable: PROBLEM"`` (the first
            problem; ``layouts show`` lists them all).
    """
    report = check_layout(lay)
    if not report.playable:
        raise BadInput(f"{where}layout {lay.name!r} is not playable: {report.problems[0]}")


#: a search in the pure-Python core longer than this earns the note of
#: :func:`slow_core_note`
SLOW_CORE_NOTE_S = 2.0


def slow_core_note(prog: str, seconds: float) -> None:
    """One stderr line when the solver ran ``seconds`` in its pure-Python
    core (the C core was not built: no C compiler at install time), which is
    hundreds of times slower; nothing when the C core is there or the
    search was short.  (A newcomer's install without a compiler gave no sign
    of it: deals that take 2 s took minutes.)"""
    from companion.solver import HAVE_C
    if HAVE_C or seconds < SLOW_CORE_NOTE_S:
        return
    print(f"companion {prog}: note: the solver ran in pure Python, hundreds of times slower than its C core, "
          "which was not built at install (no C compiler?): install one (e.g. apt install gcc) and run "
          "pip install -e . again", file=sys.stderr)


def _deal(args) -> int:
    from companion import deals
    lay = _load(args)
    # a file's own name for its layout may be another's ("turtle"): the
    # file is named too
    refuse_unplayable(lay, f"{args.layout}: " if os.path.isfile(args.layout) else "")
    if args.solvable:
        t0 = time.perf_counter()
        deal = deals.solvable_deal(args.variant, lay, args.seed)
        slow_core_note("deal", time.perf_counter() - t0)
    else:
        deal = deals.random_deal(args.variant, lay, args.seed)
    from companion.cli import print_json
    if args.json:
        print_json(deal.to_json())
    else:
        for s, f in zip(deal.layout.slots, deal.faces):
            print(f"{s}\t{f}")
    return 0


def _read_deal(path: str):
    """The deal in the JSON file ``path`` (``companion deal``'s output), its
    layout checked as ``deal`` checks it (:func:`refuse_unplayable`).

    Raises:
        BadInput: one line naming ``path``: missing, a folder, unreadable,
            not UTF-8, not JSON, a layout file or other JSON that is no deal,
            a malformed deal (:meth:`companion.deals.Deal.from_json`), or an
            unplayable layout.
    """
    from companion.deals import Deal
    from companion.files import read_json_file
    make = f"make a deal from it with companion deal --layout {path} --variant V --seed N --json"
    if Path(path).suffix.lower() in (".layout", ".map"):
        raise BadInput(f"{path} is a layout file, not a deal; {make}")
    obj = read_json_file(path, "deal file")
    if isinstance(obj, list):
        raise BadInput(f"{path} holds a list, not a deal (mah's boards.json is a list of layouts: {make} "
                       "--map-name NAME)")
    if isinstance(obj, dict) and "variant" not in obj:
        slots = obj.get("slots")
        if isinstance(slots, list) and all(isinstance(v, list) for v in slots[:1]):
            raise BadInput(f"{path} is a layout, not a deal (it has \"slots\" and no \"variant\"); {make}")
        raise BadInput(f"{path} is not a deal: it has no \"variant\" (a deal is what companion deal --json "
                       "prints: \"variant\", \"layout\", \"tiles\")")
    deal = Deal.from_json(obj, source=path)
    refuse_unplayable(deal.layout, f"{path}: ")
    return deal


def _solve(args) -> int:
    from companion.solver import solve
    from companion.cli import print_json
    deals_read = [(p, _read_deal(p)) for p in args.deals]  # all read first: bad input loses nothing
    limit = getattr(args, "max_seconds", None)
    undecided = []
    started = time.perf_counter()
    for path, deal in deals_read:
        t0 = time.perf_counter()
        result = solve(deal, max_seconds=limit)
        ms = (time.perf_counter() - t0) * 1000.0
        slots = deal.layout.slots
        moves = [[list(slots[i]), list(slots[j])] for i, j in result.moves]
        decided = result.solvable is not None
        obj = {"deal": path, "solvable": bool(result.solvable) if decided else None, "moves": moves,
               "ms": round(ms, 3)}
        if limit is not None:  # an extra field, only with --max-seconds
            obj["decided"] = decided
        if not decided:
            undecided.append(path)
        if args.json:
            print_json(obj)
        else:
            verdict = ("solvable" if result.solvable else "not solvable") if decided else \
                f"undecided after {limit:g} s"
            print(f"{path}: {verdict} ({count(len(moves), 'move')}, {ms:.2f} ms)")
    if undecided:
        print(f"companion solve: no verdict within --max-seconds {limit:g} for {count(len(undecided), 'deal')}: "
              + ", ".join(undecided), file=sys.stderr)
    slow_core_note("solve", time.perf_counter() - started)
    return 0
