"""Fixtures of the scoreboard tests (the Flask tutorial's ``tests/conftest.py``):
an app on a temporary ledger, its test client and CLI runner, a referee
login helper, and the small game of ``webgame.py`` whose free and blocked
tiles are worked out by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from companion.ledger import Ledger

_HERE = str(Path(__file__).resolve().parent)   # webgame.py, under pytest's importlib import mode
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from webgame import PIN, RefereeActions, small_words, start_mini  # noqa: E402


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


@pytest.fixture
def referee(client):
    return RefereeActions(client)
