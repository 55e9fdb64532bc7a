"""``companion serve``: the players' scoreboard and the referee console
(../shared/CONTRACT.md, ``serve``; docs/SCOREBOARD.md).

Thin shell: check the options, open the ledger once (a clear error if it is
not one), build the app (:func:`companion.web.create_app`) and serve it with
waitress (:func:`companion.web.serve`), which prints the join address, its QR
code and the referee PIN.  Ctrl+C stops it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from companion.errors import BadInput

DEFAULT_LEDGER = "companion.db"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve the phone scoreboard and the referee console")
    p.add_argument("--host", default="0.0.0.0",
                   help="address to listen on (default 0.0.0.0: every interface, so phones on the LAN can join)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port)")
    p.add_argument("--ledger", default=DEFAULT_LEDGER, help=f"the ledger file (SQLite; default {DEFAULT_LEDGER})")
    p.add_argument("--evidence", action="append", default=[], metavar="DIR",
                   help="another folder evidence files may be served from (the ledger's folder always is)")
    p.set_defaults(func=_serve)


def app_config(ledger: str, evidence: list[str] | None = None) -> dict:
    """The app config ``companion serve`` uses (also for ``companion demo``).

    Raises:
        BadInput: the ledger cannot be opened, or an evidence folder is missing.
    """
    from companion.ledger import Ledger
    Ledger(ledger).close()
    dirs = []
    for d in evidence or []:
        if not Path(d).is_dir():
            raise BadInput(f"evidence folder {d} does not exist")
        dirs.append(str(Path(d).resolve()))
    return {"LEDGER": str(Path(ledger).resolve()), "EVIDENCE_DIRS": dirs}


def _serve(args) -> int:
    if not 0 <= args.port <= 65535:
        raise BadInput(f"bad --port {args.port}: expected 0 to 65535")
    from companion.web.serve import serve
    if not (args.ledger or "").strip():
        raise BadInput("--ledger needs a file name")
    if not Path(args.ledger).exists():      # a typo would otherwise serve an empty ledger without a word
        sys.stderr.write(f"companion serve: note: {args.ledger} does not exist yet: a new, empty ledger is "
                         f"made there\n")
    serve(app_config(args.ledger, args.evidence), args.host, args.port)
    return 0
