"""Time to update the free flags after one removal, on the Turtle.

Prints the median and 99th percentile, in microseconds, of:

* ``incremental``: ``Board.remove(i)`` plus reading the free flag of every slot
  whose counts that removal changed (the tiles it covered and its left and right
  neighbours): what a referee does after each tile leaves the board.
  Target: median < 50 us.
* ``free_flags()``: listing all 144 flags from the incremental counts.
* ``free_flags_full()``: recomputing all 144 flags from the rule, for comparison.

Removals follow random games (a random free tile each time, seeded), so the
boards measured are the ones play produces.  Usage::

    python bench/bench_free.py [--games 200] [--layout turtle]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.layout_files import load_layout  # noqa: E402
from companion.rules import Board, Geometry  # noqa: E402


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200, help="random games to play (default 200)")
    ap.add_argument("--layout", default="turtle", help="layout name or file (default turtle)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    layout = load_layout(args.layout)
    g = Geometry.of(layout)
    rng = random.Random(args.seed)
    clock = time.perf_counter_ns
    inc: list[float] = []
    listing: list[float] = []
    full: list[float] = []
    sink = 0
    for _ in range(args.games):
        b = Board(g)
        while b.n_present:
            free = b.free_indices()
            if not free:
                break
            i = rng.choice(free)
            affected = g.covers[i] + g.left[i] + g.right[i]
            t0 = clock()
            b.remove(i)
            flags = [b.is_free(j) for j in affected]
            t1 = clock()
            inc.append((t1 - t0) / 1000)
            sink += len(flags)
            t0 = clock()
            all_flags = b.free_flags()
            t1 = clock()
            listing.append((t1 - t0) / 1000)
            t0 = clock()
            ref = b.free_flags_full()
            t1 = clock()
            full.append((t1 - t0) / 1000)
            if all_flags != ref:  # pragma: no cover - a rules bug
                print("MISMATCH between incremental and full free flags", file=sys.stderr)
                return 1
    print(f"layout {layout.name}: {len(layout)} tiles, {args.games} random games, "
          f"{len(inc)} removals")
    for label, vals in (("incremental (remove + affected flags)", inc),
                        ("free_flags() listing, all slots", listing),
                        ("free_flags_full() recomputation", full)):
        print(f"  {label:40s} median {statistics.median(vals):8.2f} us   "
              f"p99 {_pct(vals, 0.99):8.2f} us")
    med = statistics.median(inc)
    print(f"target: incremental median < 50 us: {'met' if med < 50 else 'NOT met'} ({med:.2f} us)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
