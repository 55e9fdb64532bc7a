"""Live-stream bench: 50 simultaneous SSE clients on loopback must receive
every one of 200 ledger events, in order, each within 1 s of being recorded.

The scoreboard runs under waitress on 127.0.0.1 and a free port (as
``companion serve`` would, same thread pool); the events are appended by a
separate ledger connection, as the camera referee's process does, so the
server learns of them only through its hub's polling.  Latency = the time a
client has read the event's message minus the time its append returned
(one ``time.monotonic`` clock, one process).  Loopback only, bounded loops:
it stops by itself (30 s at most).

    python bench/bench_sse.py [--clients 50] [--events 200] [--interval 0.02]

Prints the 50th and 99th percentile and the worst delivery latency; exits 1
when an event is missing, out of order or later than 1 s.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion import game as G  # noqa: E402
from companion.layouts import Layout, Slot  # noqa: E402
from companion.ledger import Ledger  # noqa: E402
from companion.web.serve import start_server  # noqa: E402

LIMIT_S = 1.0
DEADLINE_S = 30.0


class Client(threading.Thread):
    """One SSE client: reads ``ledger`` messages until it has ``want`` or the deadline."""

    def __init__(self, port: int, after: int, want: int, deadline: float) -> None:
        super().__init__(daemon=True)
        self.port, self.after, self.want, self.deadline = port, after, want, deadline
        self.got: list[tuple[int, float]] = []
        self.ready = threading.Event()
        self.error: str | None = None

    def run(self) -> None:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
            conn.request("GET", "/api/events", headers={"Last-Event-ID": str(self.after)})
            resp = conn.getresponse()
            if resp.status != 200:
                self.error = f"HTTP {resp.status}"
                return
            ident = None
            while len(self.got) < self.want and time.monotonic() < self.deadline:
                line = resp.readline()
                if not line:
                    self.error = "stream closed"
                    return
                if line.startswith(b": connected"):
                    self.ready.set()
                elif line.startswith(b"id: "):
                    ident = int(line[4:])
                elif line.startswith(b"data: ") and ident is not None:
                    self.got.append((ident, time.monotonic()))
                    ident = None
            conn.close()
        except OSError as exc:
            self.error = f"{exc.__class__.__name__}: {exc}"
        finally:
            self.ready.set()


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * len(s) + 0.5)) - 1))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--interval", type=float, default=0.02, help="seconds between two events")
    args = ap.parse_args(argv)

    tmp = tempfile.mkdtemp(prefix="bench-sse-")
    path = os.path.join(tmp, "ledger.db")
    layout = Layout("bench", tuple(Slot(4 * i, 0, 0) for i in range(4)))
    writer = Ledger(path)
    writer.append("bench", "game_started",
                  G.start_data("love", "sprint", layout, ["hearts-1"] * 2 + ["roses-2"] * 2, ["Ann", "Ben"]), None, 0.0)
    # every client here shares one address (loopback): the per-address cap
    # (8, for a phone that reloads its page) is lifted to the clients' count
    srv = start_server({"LEDGER": path, "SSE_STREAMS_PER_ADDRESS": args.clients}, "127.0.0.1", 0)
    deadline = time.monotonic() + DEADLINE_S
    try:
        clients = [Client(srv.port, 1, args.events, deadline) for _ in range(args.clients)]
        for c in clients:
            c.start()
        for c in clients:
            c.ready.wait(max(0.0, deadline - time.monotonic()))
        hub = srv.app.extensions["companion.hub"]
        while hub.streams < args.clients and time.monotonic() < deadline:
            time.sleep(0.01)
        recorded: dict[int, float] = {}
        t0 = time.monotonic()
        for k in range(args.events):
            ev = writer.append("bench", "pass", {"player": ("Ann", "Ben")[k % 2]}, None, float(k))
            recorded[ev.id] = time.monotonic()
            time.sleep(max(0.0, t0 + (k + 1) * args.interval - time.monotonic()))
        for c in clients:
            c.join(max(0.0, deadline - time.monotonic()))
    finally:
        srv.stop()
        writer.close()

    expected = sorted(recorded)
    lat: list[float] = []
    problems: list[str] = []
    for i, c in enumerate(clients):
        ids = [e for e, _ in c.got]
        if c.error:
            problems.append(f"client {i}: {c.error}")
        if ids != expected:
            problems.append(f"client {i}: got {len(ids)} of {len(expected)} events"
                            + ("" if ids == sorted(ids) else " (out of order)"))
        lat += [t - recorded[e] for e, t in c.got if e in recorded]
    late = sum(1 for x in lat if x > LIMIT_S)
    print(f"SSE bench: {args.clients} clients x {len(expected)} events, one every {args.interval * 1000:.0f} ms, "
          f"loopback, hub poll {srv.app.config['SSE_POLL_S'] * 1000:.0f} ms")
    if lat:
        print(f"delivery latency: p50 {pct(lat, 50) * 1000:.1f} ms, p99 {pct(lat, 99) * 1000:.1f} ms, "
              f"worst {max(lat) * 1000:.1f} ms, mean {statistics.fmean(lat) * 1000:.1f} ms "
              f"({len(lat)} deliveries)")
    print(f"complete and in order: {args.clients - len({p.split(':')[0] for p in problems})}/{args.clients} clients; "
          f"later than {LIMIT_S:g} s: {late}")
    for p in problems[:10]:
        print("  " + p)
    ok = not problems and late == 0 and len(lat) == args.clients * len(expected)
    print("PASS" if ok else "FAIL")
    print(json.dumps({"clients": args.clients, "events": len(expected),
                      "p50_ms": round(pct(lat, 50) * 1000, 1) if lat else None,
                      "p99_ms": round(pct(lat, 99) * 1000, 1) if lat else None,
                      "max_ms": round(max(lat) * 1000, 1) if lat else None, "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
