"""``companion serve``: the players' scoreboard and the referee console
(../shared/CONTRACT.md, ``serve``; docs/SCOREBOARD.md).

Thin shell: check the options and the ledger (a clear error if it is not
one), bind the address, make the ledger if there was none, build the app
(:func:`companion.web.create_app`) and serve it with waitress
(:func:`companion.web.serve`), which prints the join address, its QR code and
the referee PIN.  Ctrl+C stops it.
"""

from __future__ import annotations

import argparse
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


def app_config(ledger: str, evidence: list[str] | None = None, make: bool = True) -> dict:
    """The app config ``companion serve`` uses (also for ``companion demo``).

    Args:
        ledger: the ledger file.
        evidence: more folders evidence files may be served from.
        make: open the ledger now, making it when there is no file; False:
            only check a file that is there (it must be a ledger already,
            and is left as it was), leaving a missing one to be made later.

    Raises:
        BadInput: the ledger cannot be opened, or an evidence folder is missing.
    """
    from companion.ledger import Ledger
    if make:
        Ledger(ledger).close()
    elif Path(ledger).exists():
        Ledger(ledger, create=False).close()
    dirs = []
    for d in evidence or []:
        if not Path(d).is_dir():
            raise BadInput(f"evidence folder {d} does not exist")
        dirs.append(str(Path(d).resolve()))
    from companion.ledger import read_only_why
    why = read_only_why(ledger) if Path(ledger).exists() else None
    return {"LEDGER": str(Path(ledger).resolve()), "EVIDENCE_DIRS": dirs,
            "LEDGER_READ_ONLY": why or False}


def _serve(args) -> int:
    """Check everything, bind the address, and only then make a new ledger:
    a start that fails (a bad ledger, a port in use) prints one line and
    leaves no file behind.  A new ledger is announced in the banner (a typo
    would otherwise serve an empty ledger without a word)."""
    if not 0 <= args.port <= 65535:
        raise BadInput(f"bad --port {args.port}: expected 0 to 65535")
    from companion.commands.paths import check_writable
    from companion.web import create_app
    from companion.web.serve import bind_socket, serve
    if not (args.ledger or "").strip():
        raise BadInput("--ledger needs a file name")
    new = not Path(args.ledger).exists()
    if new:
        check_writable("--ledger", args.ledger)
    config = app_config(args.ledger, args.evidence, make=False)
    if not new:
        from companion.ledger import Ledger
        with Ledger(args.ledger, create=False) as led:
            led.check_intact()
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as exc:
        raise BadInput(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}") from None
    try:
        if new:
            from companion.ledger import Ledger
            Ledger(args.ledger).close()
        app = create_app(dict(config, LEDGER_NEW=new))
    except BaseException:
        sock.close()
        raise
    serve(app, args.host, args.port, sock=sock)
    return 0
