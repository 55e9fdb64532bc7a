"""A ledger a later companion made is served read-only, and the banner and
the console name that reason (they said its file or folder could not be
written, sending the user to fix permissions that were fine)."""
import io
import sqlite3

from companion.cli import main
from companion.ledger import LEDGER_VERSION, Ledger
from webgame import start_mini


def test_serve_names_a_later_companions_ledger_in_the_banner_and_console(tmp_path, monkeypatch):
    import companion.web.serve as web_serve
    from companion.web.serve import print_announcement

    ledger = tmp_path / "later.sqlite"
    with Ledger(ledger) as led:
        start_mini(led)
    conn = sqlite3.connect(ledger)
    conn.execute(f"PRAGMA user_version={LEDGER_VERSION + 1}")
    conn.commit()
    conn.close()
    seen = {}

    def fake_serve(app, host, port, sock=None):
        out = io.StringIO()
        print_announcement(app, "http://192.0.2.1:8000/", host, out)
        seen["banner"] = out.getvalue()
        with app.test_client() as client:
            from webgame import RefereeActions
            RefereeActions(client).login(app.config["REFEREE_PIN"])
            seen["console"] = client.get("/referee/").get_data(as_text=True)
        sock.close()

    monkeypatch.setattr(web_serve, "serve", fake_serve)
    assert main(["serve", "--ledger", str(ledger), "--host", "127.0.0.1", "--port", "0"]) == 0
    assert "(read-only: a later companion made it (ledger version 2" in seen["banner"]
    assert "cannot be written" not in seen["banner"]
    assert "This ledger is read-only (a later companion made it (ledger version 2" in seen["console"]
    assert "cannot be written" not in seen["console"]
