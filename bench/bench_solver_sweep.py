"""How many seeded deals the exact solver decides within a time cap, per variant and layout.

Usage::

    python bench/bench_solver_sweep.py [--variants word mindful love]
        [--layouts turtle sprint-flat sprint-2layer] [--seeds 0 100] [--cap 30]
        [--jobs 2] [--out results.jsonl] [--only previous.jsonl:STATUS]

Each deal ``random_deal(variant, layout, seed)`` is solved by
``companion.solver.solve`` in a forked child process that is killed at ``--cap``
seconds (``undecided``).  Every winning line returned is replayed on a
``companion.rules.Board`` (each pair free and matching at its turn, the board
emptied); a line that fails is reported as ``INVALID`` and makes the script exit 1.
One JSON line per deal goes to ``--out`` (``variant``, ``layout``, ``seed``,
``status``: ``solvable`` / ``unsolvable`` / ``undecided`` / ``INVALID``, ``ms``),
so that two runs (two versions of the solver) can be compared verdict by
verdict; the summary counts the deals decided within 1 s, 10 s and the cap.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from companion import codex, solver  # noqa: E402
from companion.deals import random_deal  # noqa: E402
from companion.rules import Board  # noqa: E402


def check_line(deal, moves) -> bool:
    """True when ``moves`` is a legal winning line of ``deal``."""
    keys = solver.match_keys(deal.variant, deal.faces)
    b = Board(deal.layout)
    for a, c in moves:
        if a == c or keys[a] != keys[c] or not b.is_free(a) or not b.is_free(c):
            return False
        b.remove(a)
        b.remove(c)
    return b.n_present == 0


def _child(conn, variant: str, layout: str, seed: int) -> None:
    deal = random_deal(variant, codex.builtin(layout), seed)
    t0 = time.perf_counter()
    res = solver.solve(deal)
    ms = (time.perf_counter() - t0) * 1000.0
    if res.solvable:
        status = "solvable" if check_line(deal, res.moves) else "INVALID"
    else:
        status = "unsolvable"
    conn.send((status, ms, res.nodes))
    conn.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants", nargs="+", default=["word", "mindful", "love"])
    ap.add_argument("--layouts", nargs="+", default=["turtle", "sprint-flat", "sprint-2layer"])
    ap.add_argument("--seeds", nargs=2, type=int, default=[0, 100], metavar=("FIRST", "END"))
    ap.add_argument("--cap", type=float, default=30.0, help="seconds per deal (default 30)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", help="JSON lines, one per deal")
    ap.add_argument("--only", help="FILE:STATUS - only the deals FILE lists with that status")
    args = ap.parse_args(argv)

    todo = [(v, lay, s) for v in args.variants for lay in args.layouts
            for s in range(args.seeds[0], args.seeds[1])]
    if args.only:
        path, want = args.only.rsplit(":", 1)
        keep = set()
        for line in Path(path).read_text().splitlines():
            r = json.loads(line)
            if r["status"] == want:
                keep.add((r["variant"], r["layout"], r["seed"]))
        todo = [t for t in todo if t in keep]
    solver.solve(random_deal("love", codex.builtin("turtle"), 0))  # warm the caches before forking
    ctx = mp.get_context("fork")
    out = open(args.out, "w") if args.out else None
    results: dict[tuple, dict] = {}
    running: list = []
    pending = list(reversed(todo))
    while pending or running:
        while pending and len(running) < args.jobs:
            t = pending.pop()
            rd, wr = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_child, args=(wr, *t), daemon=True)
            p.start()
            wr.close()
            running.append((t, p, rd, time.monotonic()))
        time.sleep(0.005)
        still = []
        for t, p, rd, t0 in running:
            alive = p.is_alive()  # read before polling: a child that sent and exited is seen by the poll
            if rd.poll():
                try:
                    status, ms, nodes = rd.recv()
                except EOFError:
                    status, ms, nodes = "ERROR", 0.0, 0
                p.join()
            elif not alive:
                status, ms, nodes = "ERROR", 0.0, 0
            elif time.monotonic() - t0 > args.cap:
                p.kill()
                p.join()
                status, ms, nodes = "undecided", args.cap * 1000.0, 0
            else:
                still.append((t, p, rd, t0))
                continue
            rd.close()
            r = {"variant": t[0], "layout": t[1], "seed": t[2], "status": status,
                 "ms": round(ms, 1), "nodes": nodes}
            results[t] = r
            if out:
                out.write(json.dumps(r) + "\n")
                out.flush()
        running = still
    if out:
        out.close()
    bad = 0
    print(f"cap {args.cap:g} s; seeds {args.seeds[0]}..{args.seeds[1] - 1}")
    print(f"{'variant':8} {'layout':14} {'deals':>5} {'<=1s':>5} {'<=10s':>6} {'<=cap':>6} "
          f"{'undecided':>9} {'unsolvable':>10} {'worst decided ms':>16}")
    for v in args.variants:
        for lay in args.layouts:
            rs = [r for t, r in results.items() if t[0] == v and t[1] == lay]
            if not rs:
                continue
            dec = [r for r in rs if r["status"] in ("solvable", "unsolvable")]
            bad += sum(r["status"] in ("INVALID", "ERROR") for r in rs)
            print(f"{v:8} {lay:14} {len(rs):5} {sum(r['ms'] <= 1000 for r in dec):5} "
                  f"{sum(r['ms'] <= 10000 for r in dec):6} {len(dec):6} "
                  f"{sum(r['status'] == 'undecided' for r in rs):9} "
                  f"{sum(r['status'] == 'unsolvable' for r in rs):10} "
                  f"{max((r['ms'] for r in dec), default=0):16.1f}")
    if bad:
        print(f"{bad} deals gave an invalid line or an error", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
