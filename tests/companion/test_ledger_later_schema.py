"""A ledger a later companion made (user_version above LEDGER_VERSION) is
read without a byte of it changing: not switched to WAL, no index or
trigger of this companion's schema added back."""
import hashlib
import sqlite3
import subprocess
import sys

from companion.ledger import LEDGER_VERSION, Ledger


def _later_ledger(path):
    subprocess.run([sys.executable, "-m", "companion", "game", "start", "--ledger", str(path), "--variant", "love",
                    "--mode", "hand-builder", "--players", "Ada,Bo", "--layout", "turtle", "--seed", "3"],
                   check=True, capture_output=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("DROP INDEX events_by_game")          # (a later schema without it)
    conn.execute(f"PRAGMA user_version={LEDGER_VERSION + 1}")
    conn.commit()
    conn.close()


def test_a_later_ledger_is_read_without_being_written(tmp_path):
    path = tmp_path / "later.db"
    _later_ledger(path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    r = subprocess.run([sys.executable, "-m", "companion", "game", "show", "--ledger", str(path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name='events_by_game'").fetchone()[0] == 0
    conn.close()


def test_a_later_version_database_without_events_is_named_as_such(tmp_path):
    """An SQLite file marked with a later version but holding no events table
    (another program's, or an empty one) is refused as not a ledger, not as
    a file that "cannot be written" (it can), and is left untouched."""
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version={LEDGER_VERSION + 4}")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    for args in (["show"], ["start", "--variant", "love", "--mode", "sprint", "--players", "Ada,Bo",
                            "--layout", "turtle", "--seed", "3"]):
        r = subprocess.run([sys.executable, "-m", "companion", "game", *args, "--ledger", str(path)],
                           capture_output=True, text=True)
        assert r.returncode == 2
        assert r.stderr.strip().splitlines() == [
            f"companion game: not a companion ledger: {path} is an SQLite database marked version "
            f"{LEDGER_VERSION + 4} (this companion writes version {LEDGER_VERSION}) that holds no events"]
    assert path.read_bytes() == before
