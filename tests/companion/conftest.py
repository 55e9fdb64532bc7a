"""Fixtures of the scoreboard tests (the Flask tutorial's ``tests/conftest.py``):
an app on a temporary ledger, its test client and CLI runner, a referee
login helper, and the small game of ``webgame.py`` whose free and blocked
tiles are worked out by hand.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from companion.ledger import Ledger

_HERE = str(Path(__file__).resolve().parent)   # webgame.py, under pytest's importlib import mode
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from webgame import PIN, small_words, start_mini  # noqa: E402


@pytest.fixture
def app(tmp_path):
    from companion.web import create_app
    app = create_app({"TESTING": True, "LEDGER": str(tmp_path / "ledger.db"), "SECRET_KEY": "test-secret",
                      "REFEREE_PIN": PIN, "SSE_POLL_S": 0.02, "SSE_KEEPALIVE_S": 0.2,
                      "WORDS_LOADER": small_words})
    yield app
    app.extensions["companion.hub"].stop()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def web_ledger(app):
    led = Ledger(app.config["LEDGER"])
    yield led
    led.close()


@pytest.fixture
def mini_game(web_ledger):
    """The mini game (Love Mahjong, hand builder, Ann and Ben) in the app's ledger."""
    start_mini(web_ledger)
    return web_ledger


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


@pytest.fixture
def referee(client):
    return RefereeActions(client)
