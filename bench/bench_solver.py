"""Exact solver bench: seeded random Turtle deals, unsolvable fraction and solve times.

Usage::

    python bench/bench_solver.py [--deals 1000] [--seed 0] [--variant mindful]
                                 [--relation both|variant|identical] [--python]
                                 [--layout turtle]

Deal ``k`` (k = 0 .. N-1) is ``companion.deals.random_deal(variant, turtle,
seed + k)``; Turtle is KMahjongg's default layout (``companion.codex.builtin
("turtle")``, or parsed from ../shared/corpus/layouts/kmahjongg/default.layout
when the codex is missing).

Two relations are measured:

* ``variant``: the variant's own matching (Mindful: the four seasons match each
  other, the four flowers too; every other face matches its identical copies),
  i.e. 36 match groups of 4 tiles;
* ``identical``: identical faces only, on a 36 faces x 4 copies set (Mindful's
  seasons and flowers counted as two faces of 4 copies): the setting of the
  published figure (Michiel de Bondt: 2.95 - 2.96 % of 10,000,000 random
  Turtle deals cannot be won, http://www.math.ru.nl/~debondt/mjsolver.html).
  With four copies of every face the two relations have the same structure, so
  this pass draws its deals from the next seed range (``seed + N ...``) to give
  an independent second sample rather than repeat the first.

Times are for ``companion.solver.solve`` alone (face-to-key mapping included,
start-up, imports and deal drawing excluded), from ``time.perf_counter``.
Targets (issue 2): median < 1.5 ms, p99 < 700 ms, worst < 2 s on a 2-core
machine; unsolvable fraction near 2.95 %.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion import solver  # noqa: E402
from companion.deals import Deal, random_deal  # noqa: E402
from companion.layouts import Layout, Slot  # noqa: E402
from companion.tiles import tileset  # noqa: E402

PUBLISHED = 0.0295


def turtle() -> Layout:
    """The Turtle: the built-in codex layout, else KMahjongg's default.layout."""
    try:
        from companion import codex
        return codex.builtin("turtle")
    except (ImportError, AttributeError):
        pass
    path = ROOT.parent / "shared" / "corpus" / "layouts" / "kmahjongg" / "default.layout"
    return parse_kmahjongg(path.read_text(encoding="utf-8"), "turtle")


def parse_kmahjongg(text: str, name: str) -> Layout:
    """KMahjongg ``.layout`` v1.1: per level ``h`` rows of characters; ``1``
    marks a tile's top-left quarter (x, y in half-tile units)."""
    h = 16
    rows: list[str] = []
    for line in text.splitlines():
        line = line.rstrip()
        if not line or line.startswith("#") or line.startswith("kmahjongg-layout"):
            continue
        if line[0] in "whd" and line[1:].isdigit():
            if line[0] == "h":
                h = int(line[1:])
            continue
        rows.append(line)
    slots = [Slot(x, k % h, k // h) for k, line in enumerate(rows) for x, c in enumerate(line) if c == "1"]
    return Layout(name, tuple(slots), "kmahjongg")


def identical_keys(variant: str, faces) -> list[int]:
    """Identical-only matching: each face matches its identical copies; faces of
    a single copy (Mindful's seasons, flowers) keep their group, which then
    plays as one face of 4 copies (36 faces x 4 for Mindful)."""
    ts = tileset(variant)
    ids: dict[str, int] = {}
    out = []
    for f in faces:
        face = ts.face(f)
        k = f if face.copies >= 2 else "group:" + face.match
        out.append(ids.setdefault(k, len(ids)))
    return out


def pct(xs: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of sorted xs."""
    return xs[min(len(xs) - 1, max(0, math.ceil(q * len(xs)) - 1))]


def run(deals: list[Deal], relation: str, use_c: bool) -> dict:
    times, nodes, unsolvable, worst = [], [], 0, (0.0, None)
    for k, d in enumerate(deals):
        t0 = time.perf_counter()
        if relation == "variant" and use_c:
            res = solver.solve(d)
        else:
            keys = (identical_keys(d.variant, d.faces) if relation == "identical"
                    else solver.match_keys(d.variant, d.faces))
            res = solver.solve_keys(d.layout, keys, use_c=use_c)
        ms = (time.perf_counter() - t0) * 1000.0
        assert not res.exhausted and res.solvable is not None
        times.append(ms)
        nodes.append(res.nodes)
        unsolvable += not res.solvable
        if ms > worst[0]:
            worst = (ms, k)
    times.sort()
    nodes.sort()
    return {"n": len(deals), "unsolvable": unsolvable, "median": statistics.median(times),
            "p99": pct(times, 0.99), "worst": worst[0], "worst_k": worst[1],
            "mean": statistics.fmean(times), "nodes_median": statistics.median(nodes),
            "nodes_p99": pct(nodes, 0.99), "nodes_max": nodes[-1]}


def report(title: str, r: dict, seed0: int, turtle_layout: bool = True) -> None:
    n, u = r["n"], r["unsolvable"]
    frac = u / n
    se = math.sqrt(PUBLISHED * (1 - PUBLISHED) / n)
    print(f"{title}")
    published = (f"  (published 2.95 %; +/- {100 * 1.96 * se:.2f} % is the 95 % range for {n} deals)"
                 if turtle_layout else "")
    print(f"  unsolvable fraction : {u}/{n} = {100 * frac:.2f} %{published}")
    print(f"  solve time per deal : median {r['median']:.3f} ms   p99 {r['p99']:.1f} ms   "
          f"worst {r['worst']:.1f} ms (seed {seed0 + r['worst_k']})   mean {r['mean']:.2f} ms")
    print(f"  search nodes        : median {r['nodes_median']:.0f}   p99 {r['nodes_p99']}   max {r['nodes_max']}")
    ok = r["median"] < 1.5 and r["p99"] < 700 and r["worst"] < 2000
    print(f"  targets (median < 1.5 ms, p99 < 700 ms, worst < 2 s): {'met' if ok else 'NOT met'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--deals", type=int, default=1000, help="deals per relation (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first deal (default 0)")
    ap.add_argument("--variant", default="mindful", help="tile set (default mindful)")
    ap.add_argument("--relation", choices=("both", "variant", "identical"), default="both")
    ap.add_argument("--python", action="store_true", help="use the pure-Python core (slow)")
    ap.add_argument("--layout", default="turtle",
                    help="a built-in layout (default turtle; the targets and the published figure are the Turtle's)")
    args = ap.parse_args(argv)
    use_c = not args.python
    if use_c and not solver.HAVE_C:
        print("companion._solvercore is not built: run `python setup.py build_ext --inplace` "
              "(or pass --python to time the pure-Python core)", file=sys.stderr)
        return 2
    if args.layout == "turtle":
        lay = turtle()
    else:
        from companion import codex
        lay = codex.builtin(args.layout)
    print(f"layout {lay.name} ({len(lay)} tiles, {lay.depth} layers), variant {args.variant}, "
          f"{args.deals} deals per relation, core: {'C' if use_c else 'pure Python'}")
    # warm-up (tables, caches): excluded from the figures
    solver.solve(random_deal(args.variant, lay, -1))
    if args.relation in ("both", "variant"):
        deals = [random_deal(args.variant, lay, args.seed + k) for k in range(args.deals)]
        report(f"relation: {args.variant} (seeds {args.seed}..{args.seed + args.deals - 1})",
               run(deals, "variant", use_c), args.seed, args.layout == "turtle")
    if args.relation in ("both", "identical"):
        s0 = args.seed + (args.deals if args.relation == "both" else 0)
        deals = [random_deal(args.variant, lay, s0 + k) for k in range(args.deals)]
        report(f"relation: identical faces only, 36 x 4 (seeds {s0}..{s0 + args.deals - 1})",
               run(deals, "identical", use_c), s0, args.layout == "turtle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
