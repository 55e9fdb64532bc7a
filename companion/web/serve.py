"""Running the scoreboard under waitress: in the foreground (``companion
serve``) or on a background thread (``companion demo``, the tests, the
bench), with the join address, its QR code and the referee PIN announced on
the host's terminal.

Waitress runs one thread per open request; every live page holds one for its
event stream, so the pool is sized for that (:data:`THREADS`, well above 50
phones plus their other requests) and so is the connection limit.
"""

from __future__ import annotations

import io
import os
import socket
import sys
import threading
from dataclasses import dataclass
from typing import IO, Any, Mapping, Sequence

from flask import Flask

THREADS = 128
CONNECTION_LIMIT = 400
CHANNEL_TIMEOUT = 60          # seconds without traffic (streams send keep-alives every 15 s)


def lan_address() -> str:
    """This host's LAN (IPv4) address, found without sending any packet.

    First the address the kernel would send from towards a private-network
    destination: ``connect`` on a UDP socket only picks a route and a source
    address, nothing leaves the machine (the usual way, since a host's own
    name often resolves to 127.0.1.1 on Debian and Ubuntu).  Then the
    addresses ``getaddrinfo`` gives for the host's name.  The first that is
    not a loopback one; ``127.0.0.1`` when there is none.
    """
    for probe in ("10.255.255.255", "192.168.255.255", "172.31.255.255"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect((probe, 9))
                ip = s.getsockname()[0]
        except OSError:
            continue
        if ip and not ip.startswith("127.") and ip != "0.0.0.0":
            return ip
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return "127.0.0.1"
    for info in infos:
        ip = info[4][0]
        if not ip.startswith("127."):
            return ip
    return "127.0.0.1"


def join_url(host: str, port: int) -> str:
    """The address players open: the LAN address when the server listens on
    every interface, else the host as given."""
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = lan_address()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}/"


def qr_text(url: str) -> str:
    """The QR code of ``url`` drawn with block characters for a terminal (segno)."""
    import segno
    buf = io.StringIO()
    segno.make(url, error="m").terminal(out=buf, compact=True, border=2)
    return buf.getvalue()


def qr_svg(url: str) -> bytes:
    """The QR code of ``url`` as an SVG image (segno), dark on white."""
    import segno
    buf = io.BytesIO()
    segno.make(url, error="m").save(buf, kind="svg", scale=8, border=2, dark="#000", light="#fff",
                                    xmldecl=False, svgclass="qr", title=f"Join: {url}")
    return buf.getvalue()


def _read_only_reason(value) -> str:
    """Why the served ledger is read-only: the reason
    (:func:`companion.ledger.read_only_why`) the config carries, or the usual
    one where it carries only True."""
    return value if isinstance(value, str) else "its file or folder cannot be written"


def print_announcement(app: Flask, url: str, host: str, out: IO[str] | None = None) -> None:
    """Print the join address, its QR code and the referee PIN (on stderr
    where stdout is closed: ``serve >&-`` had lost the PIN, and the console
    could not be opened)."""
    if out is None:
        out = sys.stderr if getattr(sys.stdout, "lost", False) else sys.stdout
    lines = ["", "Companion scoreboard", f"  players, open: {url}   (or scan the code below)"]
    if host in ("127.0.0.1", "localhost", "::1"):
        lines.append("  (listening on this computer only: phones cannot reach it; use --host 0.0.0.0)")
    elif "//127." in url:
        lines.append("  (this computer has no network address phones could use: join the players' Wi-Fi, "
                     "then start again)")
    out.write("\n".join(lines) + "\n")
    out.write(qr_text(url))
    out.write(f"  referee console: {url}referee/   PIN {app.config['REFEREE_PIN']}\n"
              f"  ledger: {app.config['LEDGER']}"
              + ("   (new: there was no file, so an empty ledger was made)" if app.config.get("LEDGER_NEW") else "")
              + (f"   (read-only: {_read_only_reason(app.config.get('LEDGER_READ_ONLY'))}, so the console cannot "
                 "record moves)" if app.config.get("LEDGER_READ_ONLY") else "")
              + "\n  stop with Ctrl+C\n\n")
    out.flush()


def _app(app_or_config: Flask | Mapping[str, Any] | str | os.PathLike | None,
         evidence_roots: Sequence[str] | None = None) -> Flask:
    if isinstance(app_or_config, Flask):
        return app_or_config
    from companion.web import create_app
    if isinstance(app_or_config, (str, os.PathLike)):
        config: dict = {"LEDGER": os.fspath(app_or_config)}
    else:
        config = dict(app_or_config or {})
    if evidence_roots:
        config["EVIDENCE_DIRS"] = list(config.get("EVIDENCE_DIRS") or []) + [os.path.abspath(d) for d in evidence_roots]
    return create_app(config)


#: socket options that let the server notice a phone gone from the network:
#: a live stream writes a keep-alive every 15 s, which a dead peer never
#: acknowledges, and without a limit the kernel retries for about 15
#: minutes, the stream's place held all the while (a break-test, session 59:
#: 99 phones dropped off the Wi-Fi kept new phones' streams refused, "too
#: many live pages", for 15.5 minutes).  TCP_USER_TIMEOUT (Linux, RFC 5482)
#: drops a connection whose data goes unacknowledged for 45 s; keep-alive
#: probes find an idle one gone within about a minute.  Each is set where
#: the system has it.
DEAD_PEER_OPTIONS = tuple(
    (level, getattr(socket, name), value) for level, name, value in (
        (socket.SOL_SOCKET, "SO_KEEPALIVE", 1),
        (socket.IPPROTO_TCP, "TCP_KEEPIDLE", 30),
        (socket.IPPROTO_TCP, "TCP_KEEPINTVL", 10),
        (socket.IPPROTO_TCP, "TCP_KEEPCNT", 3),
        (socket.IPPROTO_TCP, "TCP_USER_TIMEOUT", 45_000),
    ) if hasattr(socket, name))


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening-ready socket bound to ``host:port`` (bound here, not by
    waitress, so that a failed bind leaves nothing open, and so that
    ``companion serve`` knows the address is its own before it makes a
    ledger).

    Raises:
        OSError: the address cannot be bound (in use, not this host's ...).
    """
    family, stype, proto, _, addr = socket.getaddrinfo(host or None, port, 0, socket.SOCK_STREAM, 0,
                                                       socket.AI_PASSIVE)[0]
    sock = socket.socket(family, stype, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        for level, name, value in DEAD_PEER_OPTIONS:     # (the connections accepted inherit them)
            try:
                sock.setsockopt(level, name, value)
            except OSError:
                pass
        sock.bind(addr)
    except OSError:
        sock.close()
        raise
    return sock


def _server(app: Flask, host: str, port: int, sock: socket.socket | None = None):
    from waitress import create_server
    if sock is None:
        sock = bind_socket(host, port)
    try:
        return create_server(app, sockets=[sock], threads=THREADS, connection_limit=CONNECTION_LIMIT,
                             channel_timeout=CHANNEL_TIMEOUT, ident="companion",
                             clear_untrusted_proxy_headers=True)
    except BaseException:
        sock.close()
        raise


def serve(app_or_config: Flask | Mapping[str, Any] | str | os.PathLike | None, host: str = "0.0.0.0",
          port: int = 8000, announce: bool = True, evidence_roots: Sequence[str] | None = None,
          sock: socket.socket | None = None) -> None:
    """Serve the scoreboard under waitress until Ctrl+C.

    Args:
        app_or_config: an app from :func:`companion.web.create_app`, a
            config mapping for one (e.g. ``{"LEDGER": "game.db"}``), or the
            path of a ledger file.
        host, port: where to listen (port 0: any free port).
        announce: print the join address, its QR code and the referee PIN.
        sock: a socket already bound to ``host:port`` (:func:`bind_socket`)
            to serve on, instead of binding one here.

    Raises:
        OSError: the address cannot be bound (e.g. the port is in use).
    """
    app = _app(app_or_config, evidence_roots)
    server = _server(app, host, port, sock)
    url = join_url(host, server.effective_port)
    app.config.setdefault("JOIN_URL", None)
    app.config["JOIN_URL"] = app.config["JOIN_URL"] or url
    if announce:
        print_announcement(app, url, host)
    restore = _end_streams_on_ctrl_c(app)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        restore()
        _close(app, server)


def _end_streams_on_ctrl_c(app: Flask):
    """Make Ctrl+C end the live streams at once: waitress's ``run`` meets the
    KeyboardInterrupt by waiting up to 5 s for its workers, and a worker
    holding a stream waits in the hub until its next keep-alive, so the stop
    took 5 s and ended on waitress's "1 thread(s) still running".  The
    handler starts the hub's stop on a thread of its own (its lock is never
    taken inside a signal handler) and raises KeyboardInterrupt as Python's
    own handler does.  Returns the function that puts the old handler back
    (nothing to do off the main thread, where signals cannot be handled, nor
    where SIGINT was ignored from the start)."""
    import signal
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    from companion.web.db import HUB_KEY
    hub = app.extensions[HUB_KEY]
    old = signal.getsignal(signal.SIGINT)
    if old is signal.SIG_IGN:          # (started ignoring it, as nohup does: left so)
        return lambda: None

    def on_ctrl_c(signum, frame):
        threading.Thread(target=hub.stop, name="companion-stop-streams", daemon=True).start()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_ctrl_c)
    return lambda: signal.signal(signal.SIGINT, old)


@dataclass
class RunningServer:
    """A scoreboard served on a background thread; :meth:`stop` ends it."""

    app: Flask
    server: Any
    thread: threading.Thread
    host: str
    port: int
    url: str                  # where this machine reaches it (a loopback address for "every interface")
    join_url: str = ""        # where players open it (:func:`join_url`: the LAN address for "every interface")

    def stop(self, timeout: float = 5.0) -> None:
        """End the live streams, close every connection, stop the workers."""
        _close(self.app, self.server, self.thread)
        self.thread.join(timeout)

    def __enter__(self) -> "RunningServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_background(app_or_config: Flask | Mapping[str, Any] | str | os.PathLike | None,
                     host: str = "127.0.0.1", port: int = 0, announce: bool = True,
                     evidence_roots: Sequence[str] | None = None,
                     sock: socket.socket | None = None) -> RunningServer:
    """Serve on a background (daemon) thread and return at once (``companion
    demo``): as :func:`serve`, but ``stop()`` (or a ``with`` block) ends it.

    Args:
        app_or_config: an app, a config mapping, or a ledger file's path.
        host, port: where to listen; port 0 takes any free port (see
            ``RunningServer.port`` and ``.url``).
        announce: print the join address, its QR code and the referee PIN.
        evidence_roots: more folders evidence files may be served from.
        sock: a socket already bound to ``host:port`` (:func:`bind_socket`)
            to serve on, instead of binding one here.

    Raises:
        OSError: the address cannot be bound.
    """
    app = _app(app_or_config, evidence_roots)
    server = _server(app, host, port, sock)
    eff = server.effective_port
    url = join_url(host, eff)
    app.config["JOIN_URL"] = app.config.get("JOIN_URL") or url
    if announce:
        print_announcement(app, url, host)
    th = threading.Thread(target=server.run, name="companion-waitress", daemon=True)
    th.start()
    return RunningServer(app, server, th, host, eff, local_url(host, eff), url)


def local_url(host: str, port: int) -> str:
    """The address this machine reaches a server listening on ``host:port``
    at: loopback for every interface (``""``, ``0.0.0.0``; ``::`` -> ``[::1]``),
    an IPv6 host in brackets (RFC 3986, 3.2.2)."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host in ("::", "[::]"):
        host = "::1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}/"


def _close(app: Flask, server, loop: threading.Thread | None = None) -> None:
    """End the live streams, let the workers finish, then close every
    connection and the listening socket, so that the loop (ending when its
    map is empty) stops.  When ``loop`` (the thread running it) is alive, the
    sockets are closed from inside it (waitress's trigger runs the closing
    there), never under its feet."""
    from companion.web.db import HUB_KEY
    app.extensions[HUB_KEY].stop()          # live streams end: their workers come free
    server.task_dispatcher.shutdown(cancel_pending=True, timeout=5)

    def close_all() -> None:
        for obj in list(server._map.values()):
            try:
                obj.close()
            except Exception:  # pragma: no cover - a channel closing twice
                pass

    if loop is not None and loop.is_alive():
        try:
            server.trigger.pull_trigger(close_all)
        except (OSError, AttributeError):  # pragma: no cover - no trigger (any more)
            close_all()
        loop.join(5)
    if server._map:
        close_all()

def start_server(app_or_config, host: str = "127.0.0.1", port: int = 0, announce: bool = False,
                 evidence_roots: Sequence[str] | None = None) -> RunningServer:
    """:func:`start_background` without the announcement (tests, the bench)."""
    return start_background(app_or_config, host, port, announce, evidence_roots)
