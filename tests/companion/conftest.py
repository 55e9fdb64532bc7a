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


@pytest.fixture
def unprivileged(tmp_path):
    """A command prefix that runs a program without the power to ignore file
    permissions (root's CAP_DAC_OVERRIDE: ``setpriv`` empties its capability
    sets), so that a folder made read-only with ``chmod`` is read-only to it
    as to any user; the test is skipped where that cannot be had."""
    import os
    import shutil
    import subprocess
    prefix = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: permissions cannot be tested")
        prefix = ["setpriv", "--bounding-set=-all", "--inh-caps=-all"]
    probe = tmp_path / "probe-read-only"
    probe.mkdir()
    probe.chmod(0o555)
    try:
        done = subprocess.run([*prefix, sys.executable, "-c", "import sys; open(sys.argv[1], 'w')",
                               str(probe / "x")], capture_output=True, timeout=60)
    finally:
        probe.chmod(0o755)
    if done.returncode == 0:
        pytest.skip("a read-only folder can be written here (permissions cannot be tested)")
    return prefix

