"""The scoreboard's one way to the ledger (the Flask tutorial's ``db.py``):
:func:`get_db` opens a :class:`companion.ledger.Ledger` for the request and
keeps it on :data:`flask.g`, a teardown hook closes it, and the
``flask init-ledger`` command creates the file.  Views never write SQL: they
call the ledger's methods.

The live streams do not use this: they read through the app's
:class:`companion.web.hub.EventHub` (:func:`get_hub`), which holds its own
connection for as long as the app runs.
"""

from __future__ import annotations

import time

import click
from flask import Flask, current_app, g
from flask.cli import with_appcontext

from companion.errors import BadInput
from companion.ledger import Ledger, file_key
from companion.web.hub import EventHub

HUB_KEY = "companion.hub"


def get_db() -> Ledger:
    """The ledger of this request (opened on first use).

    Raises:
        BadInput: the configured file cannot be opened or is not a ledger.
    """
    if "ledger" not in g:
        path = current_app.config["LEDGER"]
        served = current_app.extensions.get(LEDGER_FILE_KEY)
        lost = current_app.extensions[HUB_KEY].lost
        if lost is not None:
            # e.g. an older copy put in its place (the same file): the phones
            # hold events it no longer has, and new ones would reuse their ids
            ledger_unavailable(BadInput(f"{path} {lost}: restart companion serve on the ledger to use"))
        if served is not None and file_key(path) != served:
            # deleted or replaced under the running server: a new empty file
            # made here would take the games off every phone, and a copy
            # moved in beside the old WAL is not safe to read
            ledger_unavailable(BadInput(f"{path} was deleted or replaced while the scoreboard ran: put it back, "
                                        "or restart companion serve on the ledger to use"))
        try:
            # a ledger there when the app was made is never made again here
            g.ledger = Ledger(path, create=served is None)
        except BadInput as exc:
            ledger_unavailable(exc)
        if served is None:
            current_app.extensions[LEDGER_FILE_KEY] = file_key(path)
    return g.ledger


#: the app's extensions key of the (device, inode) of the ledger file it
#: serves, taken at its first opening
LEDGER_FILE_KEY = "companion.ledger-file"


#: what players are told when the server cannot read its ledger (the
#: details, a file path among them, go to the server's terminal)
UNAVAILABLE = ("The scoreboard cannot read the game just now: ask whoever runs it to look at the "
               "message on its terminal.")


#: the app's extensions key of ``(line, monotonic s)``: the last line
#: :func:`ledger_unavailable` printed, and when
UNAVAILABLE_LOGGED_KEY = "companion.unavailable-logged"
#: the same line is printed again only after this many seconds (one phone
#: page asks every few seconds: a break-test's terminal got 4 alike lines in
#: 6 s, and one open page would fill it)
UNAVAILABLE_REPEAT_S = 60.0
#: the clock those seconds are read on (a test replaces it)
_clock = time.monotonic


def ledger_unavailable(exc: BaseException):
    """Log why the ledger cannot be read (one line on the server's stderr,
    the same line at most once in :data:`UNAVAILABLE_REPEAT_S` seconds) and
    answer 503 with :data:`UNAVAILABLE`: a fault of the server, not of the
    request.

    Raises:
        werkzeug.exceptions.ServiceUnavailable: always.
    """
    from flask import abort
    import sys
    line = f"companion serve: cannot read the ledger: {' '.join(str(exc).split())}"
    now = _clock()
    last = current_app.extensions.get(UNAVAILABLE_LOGGED_KEY)
    if last is None or last[0] != line or now - last[1] >= UNAVAILABLE_REPEAT_S:
        current_app.extensions[UNAVAILABLE_LOGGED_KEY] = (line, now)
        print(line, file=sys.stderr, flush=True)
    abort(503, description=UNAVAILABLE)


def close_db(exc: BaseException | None = None) -> None:
    led = g.pop("ledger", None)
    if led is not None:
        led.close()


def get_hub(app: Flask | None = None) -> EventHub:
    """The app's event hub, started on first use."""
    app = app or current_app
    return app.extensions[HUB_KEY].start()


def notify(app: Flask | None = None) -> None:
    """Tell the hub this process wrote to the ledger (streams wake at once)."""
    hub = (app or current_app).extensions[HUB_KEY]
    if hub.running:
        hub.notify()


@click.command("init-ledger")
@with_appcontext
def init_ledger_command() -> None:
    """Create the configured ledger file (with its schema) if it is absent."""
    Ledger(current_app.config["LEDGER"]).close()
    click.echo(f"Ledger ready: {current_app.config['LEDGER']}")


def init_app(app: Flask) -> None:
    """Give ``app`` its event hub, the teardown hook and ``init-ledger``, and
    note the (device, inode) of a ledger file already there (one deleted
    before the first request is then answered 503 like one deleted later,
    not replaced by a new empty ledger)."""
    key = file_key(app.config["LEDGER"])
    if key is not None:
        app.extensions[LEDGER_FILE_KEY] = key
    app.extensions[HUB_KEY] = EventHub(app.config["LEDGER"], poll_interval=app.config["SSE_POLL_S"],
                                       keepalive=app.config["SSE_KEEPALIVE_S"],
                                       max_streams_per_client=app.config["SSE_STREAMS_PER_ADDRESS"])
    app.teardown_appcontext(close_db)
    app.cli.add_command(init_ledger_command)


def shown_game_id(game_id: str) -> str:
    """A game id as an answer quotes it: its first 80 characters, quoted
    and escaped as Python's ``repr`` does (a NUL or a newline as ``\\x00``,
    ``\\n``), the length named when it was cut (a 200 KB id was sent back
    whole)."""
    cut = game_id[:80]
    return repr(cut) + (f" ({len(game_id)} characters)" if len(game_id) > len(cut) else "")


def game_arg() -> str | None:
    """The request's ``game`` argument as the ledger spells it: the game of
    that id, else the one game whose id it names folded as players' names
    are (:meth:`companion.ledger.Ledger.find_game_id`: ``friday`` is the
    game ``Friday``, as on the command line; a break-test, session 58),
    else the argument as given (None where it is absent or empty)."""
    from flask import request
    raw = request.args.get("game") or None
    if raw is None:
        return None
    return get_db().find_game_id(raw) or raw


def get_game(game_id: str | None = None) -> list:
    """The events of a game (the latest game when ``game_id`` is None or empty);
    aborts with 404 when there is no such game."""
    from flask import abort
    led = get_db()
    gid = game_id or led.latest_game_id()
    evs = led.events(gid) if gid else []
    if not evs:
        abort(404, description=f"no game {shown_game_id(game_id)} in the ledger" if game_id
              else "no game yet: the referee has not started one")
    return evs
