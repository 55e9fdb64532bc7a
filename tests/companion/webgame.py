"""A small game for the scoreboard tests, its layout worked out by hand.

The mini layout (half-tile units, CONTRACT.md "Free"):

    layer 1:            B2=(2,0,1)
    layer 0:  A=(0,0,0) B=(2,0,0) C=(4,0,0)      D=(8,0,0)      E=(12,0,0)

B lies under B2 (covered) and between A and C (pinched): blocked.
A, C, B2, D and E are free.  Faces: A, C = hearts-1 (a free pair);
B, B2 = hearts-2; D, E = roses-3 (a free pair): 2 free pairs.
"""

from __future__ import annotations

import re

from companion import game as G
from companion.layouts import Layout, Slot
from companion.ledger import Ledger

PIN = "123456"

MINI_SLOTS = (Slot(0, 0, 0), Slot(2, 0, 0), Slot(4, 0, 0), Slot(2, 0, 1), Slot(8, 0, 0), Slot(12, 0, 0))
MINI_FACES = ("hearts-1", "hearts-2", "hearts-1", "hearts-2", "roses-3", "roses-3")
A, B, C, B2, D, E = ([*s] for s in MINI_SLOTS)


def mini_layout() -> Layout:
    return Layout("mini", MINI_SLOTS, "test")


def start_mini(ledger: Ledger, variant: str = "love", mode: str = "hand-builder",
               players=("Ann", "Ben"), gid: str = "g1", t: float = 1000.0, faces=MINI_FACES):
    data = G.start_data(variant, mode, mini_layout(), list(faces), list(players), 7, {})
    return ledger.append(gid, "game_started", data, None, t)


def small_words():
    from companion.words import WordIndex
    words = frozenset({"cat", "act", "tac", "dog", "god"})
    return words, WordIndex(words)


CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')


class RefereeActions:
    """Log the test client in and out of the referee console."""

    def __init__(self, client):
        self.client = client

    def form_token(self) -> str:
        html = self.client.get("/referee/").get_data(as_text=True)
        m = CSRF_RE.search(html)
        assert m, "no CSRF token in the page"
        return m.group(1)

    def login(self, pin: str = PIN, **kw):
        return self.client.post("/referee/login", data={"pin": pin, "csrf_token": self.form_token()}, **kw)

    def token(self) -> str:
        with self.client.session_transaction() as s:
            return s["csrf"]

    def post(self, url: str, data: dict | None = None, json_api: bool = True):
        """POST as the logged-in referee: the token in the header (fetch) or the form."""
        data = dict(data or {})
        if json_api:
            return self.client.post(url, data=data, headers={"X-CSRF-Token": self.token()})
        data["csrf_token"] = self.token()
        return self.client.post(url, data=data)

    def logout(self):
        return self.client.post("/referee/logout", data={"csrf_token": self.token()})
