"""companion.web.serve and ``companion serve``: waitress on a loopback port in
a thread, real HTTP and a real SSE stream over a socket, the join address and
its QR code, clean stops, and the command's exit codes."""

from __future__ import annotations

import http.client
import io
import ipaddress
import json
import urllib.request

import pytest

from companion.cli import main
from companion.ledger import Ledger
from companion.web import create_app
from companion.web.serve import join_url, lan_address, print_announcement, qr_text, start_server
from webgame import start_mini


def test_lan_address_is_an_ipv4_address():
    ip = ipaddress.ip_address(lan_address())
    assert ip.version == 4


def test_lan_address_prefers_the_routed_address_to_the_host_name(monkeypatch):
    # Debian and Ubuntu map the host's name to 127.0.1.1: the address phones
    # can reach is the one the kernel routes from (no packet is sent)
    import socket as _socket

    class Routed:
        def __init__(self, *a):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def connect(self, addr):
            pass

        def getsockname(self):
            return ("192.168.1.20", 40000)

    monkeypatch.setattr(_socket, "socket", Routed)
    monkeypatch.setattr(_socket, "getaddrinfo", lambda *a, **k: [(0, 0, 0, "", ("127.0.1.1", 0))])
    assert lan_address() == "192.168.1.20"

    class Offline(Routed):
        def connect(self, addr):
            raise OSError("Network is unreachable")

    monkeypatch.setattr(_socket, "socket", Offline)
    assert lan_address() == "127.0.0.1"                      # 127.0.1.1 is loopback too


def test_join_url():
    assert join_url("127.0.0.1", 8000) == "http://127.0.0.1:8000/"
    assert join_url("0.0.0.0", 81) == f"http://{lan_address()}:81/"
    assert join_url("::1", 80) == "http://[::1]:80/"


def test_local_url_reaches_every_interface_through_loopback():
    # the demo's closing line once read "http://:::45339/" for --host ::
    from companion.web.serve import local_url
    assert local_url("0.0.0.0", 8000) == "http://127.0.0.1:8000/"
    assert local_url("", 8000) == "http://127.0.0.1:8000/"
    assert local_url("::", 45339) == "http://[::1]:45339/"
    assert local_url("fe80::1", 80) == "http://[fe80::1]:80/"
    assert local_url("192.0.2.7", 80) == "http://192.0.2.7:80/"


def test_a_background_server_knows_where_players_open_it(tmp_path):
    srv = start_server(str(tmp_path / "l.db"), host="0.0.0.0", port=0)
    try:
        assert srv.url == f"http://127.0.0.1:{srv.port}/"
        assert srv.join_url == join_url("0.0.0.0", srv.port)      # the LAN address the banner shows
    finally:
        srv.stop()


def test_announcement_shows_url_qr_and_pin(tmp_path):
    app = create_app({"LEDGER": str(tmp_path / "l.db"), "REFEREE_PIN": "424242"})
    out = io.StringIO()
    print_announcement(app, "http://192.0.2.1:8000/", "0.0.0.0", out)
    text = out.getvalue()
    assert "http://192.0.2.1:8000/" in text and "PIN 424242" in text and "\u2588" in text
    assert qr_text("http://x/").count("\n") > 10


def test_the_pin_goes_to_stderr_where_stdout_is_closed(tmp_path, monkeypatch, capsys):
    # a break-test, session 56: "serve >&-" served with its PIN lost, so the
    # referee console could not be opened and nothing said so
    import sys
    from companion.cli import _ClosedStdout
    app = create_app({"LEDGER": str(tmp_path / "l.db"), "REFEREE_PIN": "424242"})
    monkeypatch.setattr(sys, "stdout", _ClosedStdout())
    print_announcement(app, "http://192.0.2.1:8000/", "0.0.0.0")
    assert "PIN 424242" in capsys.readouterr().err


def test_served_over_real_http_with_a_live_stream(tmp_path):
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        start_mini(led)
    srv = start_server({"LEDGER": str(path), "SSE_KEEPALIVE_S": 5.0}, "127.0.0.1", 0)
    try:
        with urllib.request.urlopen(srv.url + "api/state", timeout=10) as r:
            assert json.loads(r.read())["game_id"] == "g1"
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        conn.request("GET", "/api/events", headers={"Last-Event-ID": "0"})
        resp = conn.getresponse()
        assert resp.status == 200 and resp.getheader("Content-Type").startswith("text/event-stream")
        with Ledger(path) as led:
            led.append("g1", "pass", {"player": "Ann"}, None, 1.0)
        got = b""
        for _ in range(50):
            got += resp.fp.readline()
            if b"id: 2" in got:
                break
        assert b"id: 1\nevent: ledger\n" in got and b"id: 2" in got
        conn.close()
    finally:
        srv.stop()
    assert not srv.thread.is_alive()


def test_start_background_with_a_ledger_path(tmp_path, capsys):
    from companion.web.serve import start_background
    srv = start_background(str(tmp_path / "l.db"), "127.0.0.1", 0, evidence_roots=[str(tmp_path)])
    try:
        assert str(tmp_path) in srv.app.config["EVIDENCE_DIRS"]
        assert "referee console" in capsys.readouterr().out
    finally:
        srv.stop()


def test_serve_command_bad_port(capsys):
    assert main(["serve", "--port", "70000"]) == 2
    assert "bad --port" in capsys.readouterr().err


def test_serve_command_bad_ledger(tmp_path, capsys):
    bad = tmp_path / "not.db"
    bad.write_text("hello, I am not a database" * 100)
    assert main(["serve", "--ledger", str(bad), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("companion serve: ") and len(err.strip().splitlines()) == 1


def test_serve_command_port_in_use(tmp_path, capsys):
    # the address is bound before a new ledger is made: one line naming it,
    # and no ledger file left behind (nor a note about one)
    srv = start_server({"LEDGER": str(tmp_path / "a.db")}, "127.0.0.1", 0)
    try:
        assert main(["serve", "--ledger", str(tmp_path / "b.db"), "--host", "127.0.0.1",
                     "--port", str(srv.port)]) == 2
        err = capsys.readouterr().err
        assert err == f"companion serve: cannot serve on 127.0.0.1:{srv.port}: Address already in use\n"
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("b.db")) == []
    finally:
        srv.stop()


def test_serve_command_refuses_a_bad_ledger_before_making_or_changing_a_file(tmp_path, capsys):
    missing = tmp_path / "nodir" / "x.sqlite"
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    text = tmp_path / "notes.txt"
    text.write_text("hello, I am not a database\n")
    for ledger, why in ((missing, f"the folder {missing.parent} does not exist"),
                        (empty, "it is an empty file, not a ledger"),
                        (text, "not an SQLite database")):
        assert main(["serve", "--ledger", str(ledger), "--host", "127.0.0.1", "--port", "0"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("companion serve: ") and err.count("\n") == 1 and why in err, err
    assert not missing.parent.exists()
    assert empty.read_bytes() == b"" and text.read_text() == "hello, I am not a database\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.json", "notes.txt"]


def test_serve_command_refuses_a_damaged_ledger_untouched(tmp_path, capsys):
    # a ledger with a page of random bytes inside (its header whole) was
    # served, and then every page answered 503
    import random
    from companion.ledger import Ledger
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        for k in range(400):
            led.append("g1", "note", {"text": "x" * 200, "k": k}, None, float(k))
    data = bytearray(path.read_bytes())
    rng = random.Random(1)
    data[4096 * 3:4096 * 4] = bytes(rng.getrandbits(8) for _ in range(4096))
    path.write_bytes(bytes(data))
    assert main(["serve", "--ledger", str(path), "--host", "127.0.0.1", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"companion serve: cannot use ledger {path}: SQLite finds it damaged (")
    assert err.count("\n") == 1 and path.read_bytes() == bytes(data)


def test_serve_command_refuses_a_ledger_in_a_read_only_folder(tmp_path, unprivileged):
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        proc = subprocess.run([*unprivileged, sys.executable, "-m", "companion", "serve", "--host", "127.0.0.1",
                               "--port", "0", "--ledger", str(folder / "x.sqlite")], cwd=root,
                              env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2
        assert proc.stderr == f"companion serve: cannot write --ledger {folder / 'x.sqlite'}: Permission denied\n"
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


def test_serve_command_makes_a_new_ledger_once_bound_and_says_so_in_the_banner(tmp_path, capsys, monkeypatch):
    import companion.web.serve as web_serve
    ledger = tmp_path / "new.sqlite"
    seen = {}

    def fake_serve(app, host, port, sock=None):
        seen.update(app=app, port=sock.getsockname()[1], made=ledger.is_file())
        out = io.StringIO()
        print_announcement(app, "http://192.0.2.1:8000/", host, out)
        seen["banner"] = out.getvalue()
        sock.close()

    monkeypatch.setattr(web_serve, "serve", fake_serve)
    assert main(["serve", "--ledger", str(ledger), "--host", "127.0.0.1", "--port", "0"]) == 0
    assert capsys.readouterr().err == ""
    assert seen["made"] and seen["port"] > 0 and seen["app"].config["LEDGER_NEW"] is True
    assert f"ledger: {ledger}   (new: there was no file, so an empty ledger was made)" in seen["banner"]
    with Ledger(ledger, create=False) as led:
        assert led.events() == []
    # served again, the ledger is no longer new
    assert main(["serve", "--ledger", str(ledger), "--host", "127.0.0.1", "--port", "0"]) == 0
    assert seen["app"].config["LEDGER_NEW"] is False and "(new:" not in seen["banner"]


def test_one_form_posted_six_times_at_once_is_recorded_once(tmp_path):
    # waitress answers on several threads: the console's freshness check
    # (``after``) and the write it guards are one step, so of six posts of
    # one form sent together exactly one is written
    import http.cookiejar
    import re
    import threading
    path = tmp_path / "l.db"
    with Ledger(path) as led:
        start_mini(led)
    srv = start_server({"LEDGER": str(path), "REFEREE_PIN": "123456"}, "127.0.0.1", 0)
    try:
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        page = opener.open(srv.url + "referee/", timeout=10).read().decode()
        token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
        data = urllib.parse.urlencode({"pin": "123456", "csrf_token": token}).encode()
        page = opener.open(srv.url + "referee/login", data=data, timeout=10).read().decode()
        token = re.search(r'data-csrf="([^"]+)"', page).group(1)
        last = re.search(r'data-last="(\d+)"', page).group(1)
        form = urllib.parse.urlencode({"game": "g1", "kind": "pass", "player": "Ann", "after": last}).encode()
        codes: list[int] = []

        def post():
            req = urllib.request.Request(srv.url + "referee/move", data=form,
                                         headers={"X-CSRF-Token": token, "Accept": "application/json"})
            try:
                codes.append(opener.open(req, timeout=20).status)
            except urllib.error.HTTPError as exc:
                codes.append(exc.code)
        threads = [threading.Thread(target=post) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [200, 400, 400, 400, 400, 400], codes
        with Ledger(path) as led:
            assert [e.type for e in led.events("g1")].count("pass") == 1
    finally:
        srv.stop()


def _served_once(monkeypatch, ledger, console: bool = False) -> dict:
    """Run ``companion serve --ledger LEDGER`` with waitress replaced: what
    it announces (``banner``), ``/api/state`` (``state``) and, logged in,
    the console page (``console``)."""
    import companion.web.serve as web_serve
    seen: dict = {}

    def fake_serve(app, host, port, sock=None):
        out = io.StringIO()
        print_announcement(app, "http://192.0.2.1:8000/", host, out)
        seen["banner"] = out.getvalue()
        with app.test_client() as client:
            seen["state"] = client.get("/api/state").get_json()
            if console:
                from webgame import RefereeActions
                RefereeActions(client).login(app.config["REFEREE_PIN"])
                seen["console"] = client.get("/referee/").get_data(as_text=True)
        sock.close()

    monkeypatch.setattr(web_serve, "serve", fake_serve)
    assert main(["serve", "--ledger", str(ledger), "--host", "127.0.0.1", "--port", "0"]) == 0
    return seen


def test_serve_reads_a_ledger_on_read_only_media_and_says_so_in_the_banner(tmp_path, capsys, monkeypatch):
    import os
    from pathlib import Path

    import companion.ledger as L
    ledger = tmp_path / "archive.sqlite"
    with Ledger(ledger) as led:
        start_mini(led)
    real = os.access
    monkeypatch.setattr(L.os, "access", lambda p, mode, *a, **kw: False if mode & os.W_OK and
                        Path(p).resolve() in (tmp_path.resolve(), ledger.resolve()) else real(p, mode, *a, **kw))
    seen = _served_once(monkeypatch, ledger)
    assert (f"ledger: {ledger}   (read-only: its file or its folder cannot be written, so the console cannot "
            "record moves)") in seen["banner"]
    assert [p["name"] for p in seen["state"]["players"]] == ["Ann", "Ben"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["archive.sqlite"]


def test_serve_names_a_later_companions_ledger_in_the_banner_and_console(tmp_path, monkeypatch):
    # a ledger a later companion made is served read-only, and the banner
    # and the console name that reason (they said its file or folder could
    # not be written, sending the user to fix permissions that were fine)
    import sqlite3

    from companion.ledger import LEDGER_VERSION
    ledger = tmp_path / "later.sqlite"
    with Ledger(ledger) as led:
        start_mini(led)
    conn = sqlite3.connect(ledger)
    conn.execute(f"PRAGMA user_version={LEDGER_VERSION + 1}")
    conn.close()
    seen = _served_once(monkeypatch, ledger, console=True)
    assert "(read-only: a later companion made it (ledger version 2" in seen["banner"]
    assert "This ledger is read-only (a later companion made it (ledger version 2" in seen["console"]
    assert "cannot be written" not in seen["banner"] + seen["console"]


def test_ctrl_c_ends_serve_at_once_with_a_live_stream_open(tmp_path):
    # waitress met Ctrl+C by waiting 5 s for a worker that held a phone's
    # stream, then printed "1 thread(s) still running"
    import os
    import re
    import signal
    import socket
    import subprocess
    import sys
    import time
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    ledger = tmp_path / "l.db"
    with Ledger(ledger) as led:
        start_mini(led)
    proc = subprocess.Popen([sys.executable, "-m", "companion", "serve", "--host", "127.0.0.1", "--port", "0",
                             "--ledger", str(ledger)], cwd=root, env=dict(os.environ, PYTHONPATH=str(root)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        port = None
        for _ in range(200):
            line = proc.stdout.readline()
            m = re.search(r"referee console: http://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
                break
        assert port is not None
        stream = socket.create_connection(("127.0.0.1", port), timeout=10)
        stream.sendall(b"GET /api/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
        assert stream.recv(100).startswith(b"HTTP/1.1 200")
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
        stream.close()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and err == ""
    assert took < 3.0, took


def test_a_phone_gone_from_the_network_is_noticed_by_the_socket():
    # a break-test (session 59): 99 phones dropped off the Wi-Fi held their
    # live streams' places for 15.5 minutes (the kernel retried the
    # keep-alives written into dead connections), so new phones were refused
    import socket
    from companion.web.serve import DEAD_PEER_OPTIONS, bind_socket
    if not hasattr(socket, "TCP_USER_TIMEOUT"):
        pytest.skip("TCP_USER_TIMEOUT is a Linux socket option; this system has not got it")
    listener = bind_socket("127.0.0.1", 0)
    try:
        listener.listen()
        client = socket.create_connection(listener.getsockname()[:2])
        accepted, _ = listener.accept()
        with client, accepted:        # what the server's connections inherit
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 45_000
            assert accepted.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 30
    finally:
        listener.close()
    assert len(DEAD_PEER_OPTIONS) == 5
