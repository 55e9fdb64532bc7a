"""The scoreboard and referee console: a Flask app served by waitress.

Application factory :func:`create_app` (the Flask tutorial's pattern: no app
object at module level); one blueprint per area:

* ``board`` (:mod:`companion.web.board`): the players' phone page and the
  evidence page of one event, GET only;
* ``api`` (:mod:`companion.web.api`): ``/api/state``, ``/api/events`` (SSE),
  ``/api/board``, ``/api/check``, ``/api/games``, the join QR code; GET only;
* ``evidence`` (:mod:`companion.web.evidence`): the camera referee's evidence
  files, served safely; GET only;
* ``referee`` (:mod:`companion.web.referee`): the PIN-locked console, the only
  place that changes anything.

:func:`companion.web.serve.serve` runs an app (or a config for one) under
waitress; :func:`companion.web.serve.start_background` does it on a
background thread (for ``companion demo``, the tests and the bench).  Routes and the security design: docs/SCOREBOARD.md.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from typing import Any, Mapping

from flask import Flask, jsonify, render_template, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import IntegerConverter, ValidationError

from companion.errors import CompanionError

__all__ = ["create_app"]

DEFAULTS: dict[str, Any] = {
    "SSE_POLL_S": 0.05,            # how often the hub looks at the ledger
    "SSE_KEEPALIVE_S": 15.0,       # keep-alive comment on idle streams
    "SSE_STREAMS_PER_ADDRESS": 8,  # live streams one address keeps (a newer one ends the oldest)
    "PIN_LIMIT_PER_CLIENT": 5,     # wrong PINs from one address ...
    "PIN_LIMIT_GLOBAL": 20,        # ... or from everybody ...
    "PIN_WINDOW_S": 300.0,         # ... within this many seconds ...
    "PIN_LOCKOUT_S": 300.0,        # ... lock out for this long
    "EVIDENCE_DIRS": [],           # folders evidence may be served from, besides the ledger's
    "JOIN_URL": None,              # the URL the QR code shows (default: the request's host)
    "LEDGER_READ_ONLY": False,     # the ledger can only be read (the announcement says so)
    "LEDGER_NEW": False,           # the ledger was made for this run (the announcement says so)
    "REFEREE_PIN": None,           # drawn at random when not given
    "WORDS_LOADER": None,          # () -> (words, index) for Word Mahjong moves
    "SESSION_COOKIE_NAME": "companion_session",
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Strict",
    "MAX_CONTENT_LENGTH": 64 * 1024,
}


class EventIdConverter(IntegerConverter):
    """Werkzeug's ``int`` route converter for ids SQLite can hold: at most
    19 digits, else no such page (404).  Python refuses to read a number of
    over 4,300 digits (``int``'s limit), and ``/event/999...9`` was a 500 (a
    break-test, session 55)."""

    def to_python(self, value: str) -> int:
        if len(value) > 19:
            raise ValidationError()
        return super().to_python(value)


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the scoreboard app.

    Defaults (:data:`DEFAULTS`), then ``instance/config.py`` if present, or
    ``test_config`` when given.  ``LEDGER`` is the ledger file (default
    ``instance/companion.db``); ``SECRET_KEY`` and ``REFEREE_PIN`` are drawn
    at random unless given.
    """
    app = Flask(__name__, instance_relative_config=True)
    app.config.from_mapping(DEFAULTS, SECRET_KEY=secrets.token_hex(32),
                            LEDGER=os.path.join(app.instance_path, "companion.db"))
    if test_config is None:
        app.config.from_pyfile("config.py", silent=True)
    else:
        app.config.from_mapping(test_config)
    if not app.config.get("REFEREE_PIN"):
        from companion.web.security import make_pin
        app.config["REFEREE_PIN"] = make_pin()
    app.config["REFEREE_PIN"] = str(app.config["REFEREE_PIN"])
    app.config["LEDGER"] = os.path.abspath(str(app.config["LEDGER"]))
    if os.path.dirname(app.config["LEDGER"]) == os.path.abspath(app.instance_path):
        os.makedirs(app.instance_path, exist_ok=True)

    from companion.web import api, board, db, evidence, referee, security
    # (before the blueprints bind their routes' converters)
    app.url_map.converters["int"] = EventIdConverter
    db.init_app(app)
    security.init_app(app)
    app.register_blueprint(board.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(evidence.bp)
    app.register_blueprint(referee.bp)
    _errors(app)
    return app


def wants_json() -> bool:
    """Whether to answer an error as JSON (API routes and fetch calls)."""
    return (request.path.startswith("/api/") or request.headers.get("X-CSRF-Token") is not None
            or request.accept_mimetypes.best == "application/json")


def _errors(app: Flask) -> None:
    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        headers = {}
        if exc.code == 429 and getattr(exc, "retry_after", None):
            headers["Retry-After"] = str(exc.retry_after)
        if wants_json():
            return jsonify(error=exc.description, status=exc.code), exc.code, headers
        return render_template("error.html", code=exc.code, name=getattr(exc, "title", exc.name),
                               message=exc.description), \
            exc.code, headers

    @app.errorhandler(sqlite3.Error)
    def ledger_error(exc: sqlite3.Error):
        # a ledger SQLite cannot read (a disk fault, a file changed under
        # the server): the server's fault, told in words, details logged
        from companion.web.db import ledger_unavailable
        try:
            ledger_unavailable(exc)
        except HTTPException as http:
            return http_error(http)

    @app.errorhandler(CompanionError)
    def companion_error(exc: CompanionError):
        from companion.cli import curbed
        text = curbed(str(exc))        # one line, an over-long value cut (as on the command line)
        if wants_json():
            return jsonify(error=text, status=400), 400
        return render_template("error.html", code=400, name="Bad request", message=text), 400

