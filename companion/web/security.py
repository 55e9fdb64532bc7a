"""The scoreboard's security: the referee PIN, its rate limit, the signed
session, CSRF tokens and response headers.

Design (docs/SCOREBOARD.md, "Security"):

* The referee PIN is printed on the host's terminal only.  Entering it turns
  Flask's signed cookie session (itsdangerous, keyed by a ``SECRET_KEY``
  drawn afresh at every start unless configured) into a referee session;
  the cookie is ``HttpOnly`` and ``SameSite=Strict``, and names a session id
  the server keeps until logout (:class:`RefereeSessions`).
* Every change is a POST on the referee blueprint and carries a per-session
  CSRF token (a hidden form field, or an ``X-CSRF-Token`` header for fetch
  calls), compared with :func:`hmac.compare_digest`.  The login form has one
  too (drawn before login), so a foreign page cannot log a browser in.
* Wrong PINs are counted per client address and for the whole server in a
  sliding window; past the limit the address (or everybody) is locked out for
  a while and gets 429 with a ``Retry-After`` header and a clear message.
* Every response carries a strict Content-Security-Policy (no inline script,
  no framing), ``nosniff`` and ``no-referrer``.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable

from flask import Flask, abort, current_app, request, session

CSRF_KEY = "csrf"
REFEREE_KEY = "referee"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")


def make_pin(digits: int = 6) -> str:
    """A random PIN of ``digits`` decimal digits (:mod:`secrets`)."""
    return "".join(str(secrets.randbelow(10)) for _ in range(digits))


def pin_matches(given: str | None, pin: str) -> bool:
    """Constant-time comparison of a PIN typed in with the real one; spaces
    anywhere in what was typed are left out ("396 295", as six digits are
    read aloud, was a wrong try: a break-test, session 58)."""
    typed = "".join(str(given or "").split())
    return hmac.compare_digest(typed.encode(), str(pin).encode())


@dataclass(frozen=True)
class Verdict:
    """A rate limiter's answer: ``allowed``, or locked for ``retry_after`` seconds
    (``scope`` ``"client"`` or ``"global"``)."""

    allowed: bool
    retry_after: int = 0
    scope: str = ""


class RateLimiter:
    """Counts failed PIN attempts per client address and in total.

    ``per_client`` failures by one address within ``window`` seconds lock that
    address out for ``lockout`` seconds; ``global_limit`` failures in total
    within the window lock everybody out (a spread-out guessing attempt).
    Memory is bounded: old failures are dropped and at most ``max_clients``
    addresses are remembered.  Thread-safe.

    Args:
        clock: seconds, monotonic (injectable for tests).
    """

    def __init__(self, per_client: int = 5, global_limit: int = 20, window: float = 300.0,
                 lockout: float = 300.0, max_clients: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_client = per_client
        self.global_limit = global_limit
        self.window = window
        self.lockout = lockout
        self.max_clients = max_clients
        self.clock = clock
        self._lock = threading.Lock()
        self._fails: dict[str, deque] = {}
        self._all: deque = deque()
        self._locked: dict[str, float] = {}
        self._global_until = 0.0

    def _prune(self, now: float) -> None:
        cut = now - self.window
        while self._all and self._all[0] < cut:
            self._all.popleft()
        for addr in [a for a, q in self._fails.items() if not q or q[-1] < cut]:
            del self._fails[addr]
        for addr in [a for a, until in self._locked.items() if until <= now]:
            del self._locked[addr]

    def check(self, addr: str) -> Verdict:
        """May ``addr`` try a PIN now?"""
        with self._lock:
            now = self.clock()
            self._prune(now)
            until = self._locked.get(addr, 0.0)
            if until > now:
                return Verdict(False, max(1, int(until - now + 0.999)), "client")
            if self._global_until > now:
                return Verdict(False, max(1, int(self._global_until - now + 0.999)), "global")
            return Verdict(True)

    def fail(self, addr: str) -> Verdict:
        """Record a wrong PIN from ``addr``; returns the verdict for its next try."""
        with self._lock:
            now = self.clock()
            self._prune(now)
            if addr not in self._fails and len(self._fails) >= self.max_clients:
                self._fails.pop(next(iter(self._fails)))
            q = self._fails.setdefault(addr, deque())
            q.append(now)
            self._all.append(now)
            if len(q) >= self.per_client:
                self._locked[addr] = now + self.lockout
                q.clear()
            if len(self._all) >= self.global_limit:
                self._global_until = now + self.lockout
                self._all.clear()
        return self.check(addr)

    def tries_left(self, addr: str) -> int:
        """Wrong PINs ``addr`` may still give before a lock-out (the smaller
        of its own allowance and the server's)."""
        with self._lock:
            self._prune(self.clock())
            own = self.per_client - len(self._fails.get(addr, ()))
            return max(0, min(own, self.global_limit - len(self._all)))

    def succeed(self, addr: str) -> None:
        """Forget ``addr``'s failures after a right PIN."""
        with self._lock:
            self._fails.pop(addr, None)


# --------------------------------------------------------------------------- session and CSRF


def csrf_token() -> str:
    """This session's CSRF token (created on first use)."""
    tok = session.get(CSRF_KEY)
    if not tok:
        tok = secrets.token_urlsafe(32)
        session[CSRF_KEY] = tok
    return tok


def csrf_ok() -> bool:
    """Whether the request carries this session's CSRF token (header or form field)."""
    want = session.get(CSRF_KEY)
    got = request.headers.get(CSRF_HEADER) or request.form.get(CSRF_FIELD) or ""
    if not want or not got:
        return False
    return hmac.compare_digest(str(got).encode(), str(want).encode())


class RefereeSessions:
    """The referee sessions this server started and has not ended: the
    signed cookie names one by a random id, and logging out forgets it, so a
    copy of the cookie (it travels in clear on the LAN) stops working at
    logout, not only at the server's restart.  At most ``limit`` are kept
    (the oldest is forgotten first).  Thread-safe."""

    def __init__(self, limit: int = 1000) -> None:
        self.limit = int(limit)
        self._ids: dict[str, None] = {}
        self._lock = threading.Lock()

    def open(self) -> str:
        sid = secrets.token_urlsafe(24)
        with self._lock:
            self._ids[sid] = None
            while len(self._ids) > self.limit:
                self._ids.pop(next(iter(self._ids)))
        return sid

    def valid(self, sid) -> bool:
        with self._lock:
            return isinstance(sid, str) and sid in self._ids

    def close(self, sid) -> None:
        with self._lock:
            if isinstance(sid, str):
                self._ids.pop(sid, None)


def _sessions() -> RefereeSessions:
    return current_app.extensions["companion.referee_sessions"]


def is_referee() -> bool:
    return _sessions().valid(session.get(REFEREE_KEY))


def log_in() -> None:
    """Start a fresh referee session (a new id and CSRF token: no fixation)."""
    _sessions().close(session.get(REFEREE_KEY))
    session.clear()
    session[REFEREE_KEY] = _sessions().open()
    session[CSRF_KEY] = secrets.token_urlsafe(32)


def log_out() -> None:
    """End the referee session: its cookie, and any copy of it, no longer counts."""
    _sessions().close(session.get(REFEREE_KEY))
    session.clear()


def client_address() -> str:
    """The client's address as the server saw it (no proxy headers are trusted)."""
    return request.remote_addr or "unknown"


def limiter(app: Flask | None = None) -> RateLimiter:
    return (app or current_app).extensions["companion.pin_limiter"]


def add_headers(response):
    """Security headers on every response."""
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    response.headers.setdefault("X-Frame-Options", "DENY")
    return response


def init_app(app: Flask) -> None:
    """Install the PIN limiter, the headers and the template helper ``csrf_token``."""
    app.extensions["companion.pin_limiter"] = RateLimiter(
        per_client=app.config["PIN_LIMIT_PER_CLIENT"], global_limit=app.config["PIN_LIMIT_GLOBAL"],
        window=app.config["PIN_WINDOW_S"], lockout=app.config["PIN_LOCKOUT_S"])
    app.extensions["companion.referee_sessions"] = RefereeSessions()
    app.after_request(add_headers)
    app.jinja_env.globals["csrf_token"] = csrf_token
    app.jinja_env.globals["is_referee"] = is_referee


def require(condition: bool, code: int, message: str) -> None:
    """Abort with ``code`` and ``message`` unless ``condition``."""
    if not condition:
        abort(code, description=message)
