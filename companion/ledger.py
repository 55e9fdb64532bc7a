"""The Crystal Harmony ledger: an append-only log of game events in SQLite.

One table (``schema.sql``) holds every event of every game; triggers refuse
UPDATE and DELETE.  The database runs in WAL mode with ``synchronous=FULL``
(SQLite docs, "Write-Ahead Logging" and "PRAGMA synchronous": a transaction
is durable once COMMIT returns), and each :meth:`Ledger.append` is one
``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction, so a crash leaves every
committed event and never half of one.

Scores are not stored: :func:`companion.game.replay` derives them from the
events.  Undo and corrections are new events whose ``ref`` points at the one
they change.  Time comes in as data (``t``): this module never reads a clock.

Style follows the Flask tutorial's ``db.py``: :func:`get_db` opens a
connection, :func:`init_db` runs ``schema.sql``; callers use :class:`Ledger`
and never write SQL.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sqlite3
import stat
import threading
from importlib import resources
from pathlib import Path
from typing import IO, Any

from companion.errors import BadInput
from companion.game import UNREADABLE_DATA, Event, brief, name_key, replay, state_json

__all__ = ["Event", "Ledger", "get_db", "init_db"]

MAX_TYPE_LEN = 40


#: the first bytes of every SQLite database file (SQLite's "Database File
#: Format", 1.3: the header string)
SQLITE_HEADER = b"SQLite format 3\x00"

#: the columns the ledger's table starts with (``schema.sql``)
LEDGER_COLUMNS = ["id", "game_id", "type", "data", "ref", "t"]

#: the database files this process holds connections to, by (device, inode),
#: with how many: such a file is never opened outside SQLite again, since
#: closing any descriptor of it drops every POSIX lock the process holds on
#: it, its connections' included (SQLite, "How To Corrupt An SQLite Database
#: File", 2.2); another process could then take itself for the last user,
#: fold the WAL in and delete it under the live connections' feet
_HELD: dict[tuple[int, int], int] = {}
_HELD_LOCK = threading.Lock()


def file_key(path) -> tuple[int, int] | None:
    """``(device, inode)`` of the file at ``path``, or None when there is none:
    the same file, whatever name or link it is reached by."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def get_db(path: str | Path, create: bool = True) -> sqlite3.Connection:
    """Open the ledger database at ``path`` in WAL mode with
    ``synchronous=FULL``, autocommit (explicit transactions), rows as tuples.

    An existing file is looked at before SQLite opens it: one that is not an
    SQLite database, or an SQLite database holding other tables than a
    ledger's, is refused and left exactly as it was (SQLite would otherwise
    switch it to WAL mode, or write a new database over an empty file).
    A file this process already holds a connection to is not looked at again
    (:data:`_HELD`): reading it outside SQLite would drop that connection's
    locks.  Close the connection with :func:`release`.

    Args:
        path: the database file.
        create: make a new ledger where there is no file yet, or only an
            empty one (SQLite's own behaviour); False: the file must already
            be a ledger (an empty file is refused, untouched).

    Raises:
        BadInput: the file cannot be opened, is missing or empty (with
            ``create`` False) or is not a ledger.
    """
    with _HELD_LOCK:          # (no other thread's connection takes a lock while the header is read)
        conn = _open(path, create)
        key = file_key(path) if str(path) != ":memory:" else None
        if key is not None:
            _HELD[key] = _HELD.get(key, 0) + 1
            _KEYS[id(conn)] = key
    return conn


#: connection id -> the file key it was counted under in :data:`_HELD`
_KEYS: dict[int, tuple[int, int]] = {}


def release(conn: sqlite3.Connection) -> None:
    """Close a connection from :func:`get_db` and stop counting it as one
    this process holds on its file."""
    with _HELD_LOCK:
        key = _KEYS.pop(id(conn), None)
        if key is not None:
            left = _HELD.get(key, 1) - 1
            if left > 0:
                _HELD[key] = left
            else:
                _HELD.pop(key, None)
    conn.close()


#: the files SQLite keeps beside a database ``X``: ``X-wal``, ``X-shm``, ``X-journal``
SQLITE_SIDECARS = ("-wal", "-shm", "-journal")


def _open(path, create: bool) -> sqlite3.Connection:
    p = Path(path)
    existing = False
    if str(path) != ":memory:":
        if p.name.endswith(SQLITE_SIDECARS):
            # SQLite keeps a database's journal and shared memory under those
            # names beside it, and deletes or replays them when it opens the
            # database: a ledger named "x.db-wal" is lost the next time
            # "x.db" is opened
            raise BadInput(f"cannot use {path} as a ledger: a ledger's name may not end in "
                           f"{', '.join(SQLITE_SIDECARS[:-1])} or {SQLITE_SIDECARS[-1]} (SQLite's own files beside "
                           "a database have those names); give another name")
        if p.is_dir():
            raise BadInput(f"cannot open ledger {path}: it is a folder, not a ledger file")
        if not p.parent.is_dir():
            raise BadInput(f"cannot open ledger {path}: its folder {p.parent} does not exist")
        key = file_key(p)
        # a file this process already holds a connection to was looked at
        # when that one was opened (and must not be opened outside SQLite)
        existing = True if key is not None and key in _HELD else _look_at_file(p, create)
    if existing and str(path) != ":memory:":
        _refuse_foreign_wal(p)
    if existing and read_only_why(p, version=False) is not None:     # (under _HELD_LOCK: no version read)
        return _open_read_only(p)
    if existing and (version := _file_version(p)) > LEDGER_VERSION:
        # a later companion's ledger is opened read-only: the WAL switch and
        # this companion's schema (an index or trigger it no longer has)
        # would otherwise be written into it
        return _open_read_only(p, later=version)
    def setup(conn):
        if existing:
            _refuse_other_tables(conn, path, create)
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=10000")
        return mode

    # (an absolute name: SQLite reads a name starting "file:" as a URI, so
    # --ledger file:club.db wrote club.db; a break-test, session 57)
    conn, mode = _connect(str(path) if str(path) == ":memory:" else os.path.abspath(path), path, setup)
    if str(mode).lower() != "wal" and str(path) != ":memory:":
        conn.close()
        raise BadInput(f"ledger {path}: cannot switch to WAL mode (got {mode})")
    return conn


#: how many of the main file's newest events :func:`_refuse_foreign_wal` looks for through the WAL
WAL_CHECK_ROWS = 50


def _refuse_foreign_wal(p: Path) -> None:
    """Refuse a ledger whose ``-wal`` beside it belongs to another
    database, before SQLite replays it into the file: a WAL does not name
    its database, so one left by another ledger's crash and copied beside
    this one replaced this one's events when it was opened (the first
    command that read it folded them in for good; a break-test, session
    57).  A ledger only grows, so its own WAL shows every event the main
    file holds, as the file holds it; the newest :data:`WAL_CHECK_ROWS`
    are compared.  Only where the ``-wal`` holds frames and no ``-shm``
    is there: then no program has the ledger open, and the main file may
    be read alone (``immutable``, SQLite "URI filenames", 3.1).  The look
    through the WAL leaves a ``-shm`` beside it, as any reader does.

    Raises:
        BadInput: the ``-wal`` shows this file's events otherwise, or not at all.
    """
    from urllib.parse import quote
    wal, shm = Path(str(p) + "-wal"), Path(str(p) + "-shm")
    try:
        if not wal.is_file() or wal.stat().st_size == 0 or os.path.lexists(shm) \
                or not os.access(p.parent, os.W_OK):
            return
    except OSError:
        return
    uri = "file:" + quote(os.fsencode(p.resolve()))
    query = "SELECT id, game_id, type, data, ref, t FROM events ORDER BY id DESC LIMIT ?"
    try:
        alone = sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True)
        try:
            mine = alone.execute(query, (WAL_CHECK_ROWS,)).fetchall()
        finally:
            alone.close()
    except sqlite3.Error:
        return                  # (no events table in the file alone, or not readable: the opening says why)
    if not mine:
        return
    try:
        through = sqlite3.connect(uri + "?mode=ro", uri=True)
        try:
            ids = [r[0] for r in mine]
            seen = through.execute(f"SELECT id, game_id, type, data, ref, t FROM events WHERE id IN "
                                   f"({','.join('?' * len(ids))}) ORDER BY id DESC", ids).fetchall()
        finally:
            through.close()
    except sqlite3.Error:
        seen = []
    if seen != mine:
        raise BadInput(f"cannot open ledger {p}: the {wal.name} beside it does not hold its events (another "
                       f"database's, left by a crash and copied or restored beside it?), and SQLite would write "
                       f"it into the ledger: move {wal.name} away (keep it for the database it came from)")


def writable(p: str | Path) -> bool:
    """Whether this process may write the ledger file ``p`` and the folder
    beside it, where SQLite keeps the ``-wal`` and ``-shm`` files of a WAL
    database (``os.access``: a read-only mount says no even to root)."""
    return read_only_why(p) is None


def read_only_why(p: str | Path, version: bool = True) -> str | None:
    """Why this process may not write the ledger ``p`` (None: it may): its
    file, its folder, or SQLite's ``-wal`` / ``-shm`` file beside it.  A
    reader without write access (another user, an archive's owner) leaves
    those two behind read-only, and SQLite then refuses every write to a
    file and folder that can be written.  With ``version``, also a ledger a
    later companion made (:func:`ledger_version`, read through SQLite)."""
    p = Path(p)
    if not (os.access(p, os.W_OK) and os.access(p.parent, os.W_OK)):
        return "its file or its folder cannot be written"
    for side in ("-wal", "-shm"):
        q = Path(str(p) + side)
        if q.exists() and not os.access(q, os.W_OK):
            return (f"SQLite's {q.name} beside it cannot be written (a reader without write access left it: "
                    f"remove it while no program has the ledger open)")
    if _disk_full(p.parent):
        return "the disk is full"
    found = ledger_version(p) if version else None
    if found is not None and found > LEDGER_VERSION:
        return f"a later companion made it (ledger version {found}; this one writes version {LEDGER_VERSION})"
    return None


def _disk_full(folder: Path) -> bool:
    """Whether the file system holding ``folder`` has no block left for
    this process (``os.statvfs``'s ``f_bavail``): SQLite can then neither
    write a ledger there nor make the ``-shm`` file it needs to read one in
    WAL mode, so the ledger is read as a read-only one is (a break-test's
    ledger on a full disk could not be read at all)."""
    try:
        return os.statvfs(folder).f_bavail == 0
    except (OSError, AttributeError):          # (no statvfs on Windows)
        return False


def _file_version(p: Path) -> int:
    """SQLite's ``user_version`` of the database file ``p``, read through a
    read-only connection of its own (0 where it cannot be read: the opening
    that follows says why)."""
    from urllib.parse import quote
    try:
        conn = sqlite3.connect("file:" + quote(os.fsencode(p.resolve())) + "?mode=ro", uri=True)
    except sqlite3.Error:
        return 0
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def ledger_version(p: str | Path) -> int | None:
    """The version (:data:`LEDGER_VERSION`) of the ledger file ``p``, read
    through SQLite; None where there is no ledger to read (missing, not a
    ledger, unreadable: the command that opens it says why)."""
    if not Path(p).is_file():
        return None
    try:
        conn = get_db(p, create=False)
    except BadInput:
        return None
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0]) or LEDGER_VERSION
    except sqlite3.Error:
        return None
    finally:
        release(conn)


#: how a read-only connection shows itself: the ``immutable`` or ``ro``
#: URI parameter it was opened with (see :func:`_open_read_only`)
READ_ONLY_MODES = ("ro", "immutable")


def _open_read_only(p: Path, later: int | None = None) -> sqlite3.Connection:
    """A read-only connection to the ledger ``p``, whose file or folder this
    process may not write (an archive on a read-only mount, a CD, another
    user's file), or whose ``user_version`` ``later`` is above
    :data:`LEDGER_VERSION` (a later companion's ledger: read, never written).

    A WAL database needs its ``-shm`` file even to be read.  Where that can
    be made or is there, SQLite opens the file ``mode=ro`` and reads its WAL
    as well; in a folder that cannot be written and with no ``-shm``,
    ``immutable=1`` (SQLite, "URI filenames", 3.1; "WAL mode", 8) reads the
    main file alone, which is whole when no ``-wal`` holds anything: a
    ledger closed cleanly folds its WAL in and deletes it.  A ledger with a
    non-empty ``-wal`` and no way to make its ``-shm`` is refused rather
    than read without its newest events.

    Raises:
        BadInput: as above, or the file cannot be read or is not a ledger.
    """
    from urllib.parse import quote
    uri = "file:" + quote(os.fsencode(p.resolve()))       # (bytes: a name that is not UTF-8 too)
    wal, shm = Path(str(p) + "-wal"), Path(str(p) + "-shm")
    folder_ok = os.access(p.parent, os.W_OK)
    if folder_ok or shm.exists():
        params = "?mode=ro"
    elif wal.exists() and wal.stat().st_size > 0:
        raise BadInput(f"cannot read ledger {p}: its folder cannot be written and its {wal.name} holds events "
                       f"not yet in the file (SQLite needs a {shm.name} beside it to read them): copy {p.name} "
                       f"and {wal.name} to a folder that can be written and read the copy")
    else:
        params = "?mode=ro&immutable=1"
    def setup(conn):
        _refuse_other_tables(conn, p)
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").fetchone():
            if later is not None:
                # (an SQLite file marked with a later version but no events
                # table was called "cannot be written": session 58)
                raise BadInput(f"not a companion ledger: {p} is an SQLite database marked version {later} "
                               f"(this companion writes version {LEDGER_VERSION}) that holds no events")
            raise BadInput(f"cannot open ledger {p}: it cannot be written, and holds no ledger yet")
        conn.execute("PRAGMA busy_timeout=10000")

    try:
        return _connect(uri + params, p, setup, uri=True, note=" (read-only)")[0]
    except BadInput:
        # a full disk: SQLite cannot make the -shm it reads a WAL through;
        # the main file alone is whole when no -wal holds anything
        if params != "?mode=ro" or not _disk_full(p.parent) or (wal.exists() and wal.stat().st_size > 0):
            raise
    return _connect(uri + "?mode=ro&immutable=1", p, setup, uri=True, note=" (read-only)")[0]


def disk_trouble(exc: sqlite3.Error) -> str | None:
    """SQLite's error ``exc`` in words when the disk let it down (None for
    any other error): a full disk (``SQLITE_FULL``; on a full disk a WAL
    database's ``-shm`` cannot grow either, ``SQLITE_IOERR_SHMSIZE``, which
    SQLite words only as "disk I/O error"), or another read or write the
    disk refused (``SQLITE_IOERR``).  A break-test's ledger on a full disk
    was called "not a companion ledger: disk I/O error"."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return None
    if code in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR_SHMSIZE):
        return f"the disk is full ({exc})"
    if code & 0xFF == sqlite3.SQLITE_IOERR:
        return f"the disk could not be read or written ({exc})"
    return None


def _connect(target: str, path, setup, uri: bool = False, note: str = ""):
    """``(connection, setup(connection))`` for the SQLite file or URI
    ``target``; an SQLite error on the way, or a :class:`BadInput` from
    ``setup``, closes the connection again.

    Raises:
        BadInput: "cannot open ledger PATH{note}: ..." for SQLite's errors.
    """
    try:
        conn = sqlite3.connect(target, uri=uri, isolation_level=None, timeout=10.0, check_same_thread=False)
    except sqlite3.Error as exc:
        raise BadInput(f"cannot open ledger {path}{note}: {exc}") from None
    try:
        return conn, setup(conn)
    except sqlite3.Error as exc:
        conn.close()
        raise BadInput(f"cannot open ledger {path}{note}: {disk_trouble(exc) or exc}") from None
    except BadInput:
        conn.close()
        raise


def _look_at_file(p: Path, create: bool) -> bool:
    """Whether ``p`` holds an SQLite database already (False: no file, or an
    empty one, which SQLite makes a new database in).

    Raises:
        BadInput: no file or an empty one while ``create`` is False; not a
            regular file; a file that is not an SQLite database.
    """
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if create:
            if not os.access(p.parent, os.W_OK):
                # (SQLite's own words were "unable to open database file":
                # a break-test, session 50)
                raise BadInput(f"cannot create ledger {p}: its folder {p.parent} cannot be written "
                               "(read-only, or not yours)") from None
            return False
        raise BadInput(f"no ledger at {p}") from None
    except OSError as exc:
        raise BadInput(f"cannot open ledger {p}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(f"cannot open ledger {p}: not a regular file (a pipe or a device)")
    if st.st_size == 0:
        if create:
            return False
        raise BadInput(f"cannot open ledger {p}: it is an empty file, not a ledger")
    try:
        with open(p, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise BadInput(f"cannot open ledger {p}: {exc.strerror or exc}") from None
    if head != SQLITE_HEADER:
        raise BadInput(f"cannot open ledger {p}: not an SQLite database, so not a ledger")
    return True


def _refuse_other_tables(conn: sqlite3.Connection, path, create: bool = True) -> None:
    """Refuse an existing SQLite database that is not a ledger (tables, but no
    ``events`` table of the ledger's columns), before anything is written to it.
    Without ``create``, a database without tables is refused too (nothing
    in it, or views only): a command that only
    reads had switched another program's file to WAL mode and written the
    ledger's schema into it (a break-test, session 57).

    Raises:
        BadInput: as above.
    """
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    if not create and not tables:
        views = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'")]
        raise BadInput(f"not a companion ledger: {path} is an SQLite database "
                       + (f"holding {', '.join(sorted(views))}, but no events" if views else "with nothing in it")
                       + " ('companion game start' makes a ledger)")
    if not tables:
        return
    cols = [r[1] for r in conn.execute("PRAGMA table_info(events)")]
    if "events" not in tables:
        raise BadInput(f"not a companion ledger: {path} holds tables {', '.join(sorted(tables))}, "
                       "but no events")
    if cols[:6] != LEDGER_COLUMNS:
        raise BadInput(f"not a companion ledger: table events of {path} has columns {cols}")


#: the ledger format this companion writes, kept in SQLite's
#: ``user_version``: a ledger from a later companion (a higher number) is
#: read, but not written (its new rows and fields would mean what this one
#: cannot know); 0, a ledger made before the number was kept, is version 1
LEDGER_VERSION = 1


def init_db(conn: sqlite3.Connection) -> int:
    """Create the table, index and triggers of ``schema.sql`` if missing,
    and mark a ledger without a version as :data:`LEDGER_VERSION` (where it
    can be written).  Returns the ledger's version.

    Raises:
        BadInput: the database holds something else under those names.
    """
    sql = resources.files("companion").joinpath("schema.sql").read_text(encoding="utf-8")
    try:
        later = int(conn.execute("PRAGMA user_version").fetchone()[0]) > LEDGER_VERSION
    except sqlite3.Error:
        later = False
    try:
        if not later:           # (a later companion's schema is its own: read, never written)
            conn.executescript(sql)
        cols = [r[1] for r in conn.execute("PRAGMA table_info(events)")]
    except sqlite3.Error as exc:
        trouble = disk_trouble(exc)
        if trouble is not None:
            raise BadInput(f"cannot write the ledger: {trouble}") from None
        raise BadInput(f"not a companion ledger: {exc}") from None
    if cols[:6] != LEDGER_COLUMNS:
        raise BadInput(f"not a companion ledger: table events has columns {cols}")
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.Error:
        return LEDGER_VERSION
    if version == 0:
        try:
            conn.execute(f"PRAGMA user_version = {LEDGER_VERSION}")
        except sqlite3.Error:
            pass            # (read-only here: it stays unmarked, and reads as version 1)
        return LEDGER_VERSION
    return version


class LedgerLost(BadInput):
    """The ledger file a running writer holds was deleted or replaced under
    it (what it writes would go to a file no longer there), or can no longer
    be written (locked by another program for long, read-only, a full disk):
    a camera referee stops on it rather than judge on a board its ledger
    does not hold."""


class LedgerUnwritable(BadInput):
    """SQLite refused a write (:meth:`Ledger.append`): a read-only file or
    folder, a full disk, or ``busy``: the ledger locked by another writer
    past the connection's busy timeout.  Nothing was written."""

    def __init__(self, message: str, busy: bool = False) -> None:
        super().__init__(message)
        self.busy = busy


class StaleGame(BadInput):
    """The game changed (another process wrote to it) between the reading
    that decided an event and its writing (:meth:`Ledger.append`'s
    ``after``)."""


def _data_of(text: str) -> dict:
    """An event's ``data`` column as a dict.  The schema's CHECK admits any
    valid JSON, so a row written by another program may hold a list, a
    number or null: that is kept as ``{UNREADABLE_DATA: text}`` (at most 200
    characters), which replay turns into a referee item naming the row
    instead of failing on every read of the game."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict) and _depth(data) > MAX_DATA_DEPTH:
        data = None     # (written again as JSON, it overflowed Python's recursion: a break-test, session 57)
    return data if isinstance(data, dict) else {UNREADABLE_DATA: str(text)[:200]}


#: the deepest nesting of lists and objects an event's ``data`` may hold; the
#: companion's own events hold 4 at most, SQLite's ``json_valid`` admits 1000
MAX_DATA_DEPTH = 32


def _depth(value) -> int:
    """How deeply ``value`` (parsed JSON) nests lists and objects (1 for a
    flat one), counted without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if d <= MAX_DATA_DEPTH:
                todo.extend((w, d + 1) for w in (v.values() if isinstance(v, dict) else v))
    return deepest


def _time_of(value) -> float | None:
    """An event's ``t`` column as seconds, or None: the schema types it REAL
    without a CHECK, so a row another program wrote may hold text (an ISO
    date) or a blob, which broke every read of the game and the scoreboard
    (a break-test, session 57); such a time is taken as not known."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _row(r: tuple) -> Event:
    return Event(r[0], r[1], r[2], _data_of(r[3]), r[4], _time_of(r[5]))


class Ledger:
    """An append-only event ledger in one SQLite file.

    Safe to share between threads (one connection behind a lock); open one
    per process.  Use as a context manager or call :meth:`close`.

    Args:
        path: the database file (created with its schema if absent).
        create: make a new ledger where there is no file, or an empty one;
            False: the file must be a ledger already (:func:`get_db`).

    Raises:
        BadInput: the file cannot be opened or is not a ledger.
    """

    def __init__(self, path: str | Path, create: bool = True) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._conn = get_db(self.path, create)
        try:
            self.version = init_db(self._conn)
        except BadInput:
            release(self._conn)
            raise

    # ------------------------------------------------------------------ life cycle

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                release(self._conn)
                self._conn = None

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise BadInput(f"ledger {self.path} is closed")
        return self._conn

    # ------------------------------------------------------------------ writing

    def append(self, game_id: str | None, type: str, data: dict, ref: int | None = None,
               t: float | None = None, after: int | None = None) -> Event:
        """Append one event in its own transaction; returns it with its id.

        Args:
            game_id: the game (non-empty text); None with ``type``
                ``"game_started"``: a new id (:meth:`new_game_id`), picked in
                the same transaction, so two processes starting games at
                once never share one.
            type: event type (see :mod:`companion.game`).
            data: a JSON-able dict (kept as given; ``evidence`` etc. opaque).
            ref: id of an earlier event of the same game this one changes.
            t: the caller's time in seconds, or None.
            after: the id of the game's newest event when the caller decided
                this one (0: none), or None not to check: a caller that
                replays, judges and then writes (``companion game``, the
                console) must not write on a game another process changed
                in between (two claims of one pair would both pass).

        Raises:
            BadInput: bad game id, type, data, time, or a ref that is not an
            earlier event of the same game; a ``game_started`` for a game
            that exists; or the ledger cannot be written (a read-only file,
            a full disk, locked by another writer).
            StaleGame: the game's newest event is not ``after`` (nothing
            written).
        """
        if self.version > LEDGER_VERSION:
            raise BadInput(f"cannot write to the ledger {self.path}: it can only be read here (a later companion "
                           f"made it: ledger version {self.version}; this one writes version {LEDGER_VERSION}; "
                           "update the companion); nothing was written")
        if game_id is None and type == "game_started":
            game_id = ""        # (picked below, in the transaction)
        elif not isinstance(game_id, str) or not game_id.strip():
            raise BadInput(f"bad game id {game_id!r}")
        if not isinstance(type, str) or not type or len(type) > MAX_TYPE_LEN:
            raise BadInput(f"bad event type {type!r}")
        if not isinstance(data, dict):
            raise BadInput(f"event data must be a JSON object, got {data.__class__.__name__}")
        try:
            text = json.dumps(data, allow_nan=False, separators=(",", ":"), sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise BadInput(f"event data is not JSON-able: {exc}") from None
        if t is not None:
            try:
                t = float(t)
            except (TypeError, ValueError):
                raise BadInput(f"bad time {t!r}") from None
            if not math.isfinite(t):
                raise BadInput(f"bad time {t!r}")
        with self._lock:
            conn = self.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    if not game_id:
                        game_id = self.new_game_id()
                    elif type == "game_started":
                        if conn.execute("SELECT 1 FROM events WHERE game_id = ? LIMIT 1", (game_id,)).fetchone():
                            raise BadInput(f"game {game_id!r} already exists in {self.path}")
                        # ids told apart as names are: "friday" finds "Friday"
                        # (:meth:`find_game_id`), so the two may not both be
                        # games (a session-58 mend: "FRIDAY" started a second game)
                        like = [r[0] for r in conn.execute("SELECT DISTINCT game_id FROM events")
                                if name_key(r[0]) == name_key(game_id)]
                        if like:
                            raise BadInput(f"game {like[0]!r} already exists in {self.path} (ids that differ only "
                                           f"in case or width are one game): give another id")
                    if after is not None:
                        newest = conn.execute("SELECT MAX(id) FROM events WHERE game_id = ?",
                                              (game_id,)).fetchone()[0] or 0
                        if newest != after:
                            raise StaleGame(f"game {game_id!r} changed while this was being decided (event "
                                            f"#{newest} is new): nothing was written; look at the game again, "
                                            "then send it again")
                    if ref is not None:
                        got = conn.execute("SELECT game_id FROM events WHERE id = ?", (int(ref),)).fetchone()
                        if got is None or got[0] != game_id:
                            raise BadInput(f"event #{ref} is not an event of game {game_id!r}")
                    cur = conn.execute("INSERT INTO events (game_id, type, data, ref, t) VALUES (?, ?, ?, ?, ?)",
                                       (game_id, type, text, None if ref is None else int(ref), t))
                    eid = cur.lastrowid
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                # a read-only file or folder, a full disk, a ledger locked too
                # long by another writer: nothing was written
                if "readonly" in str(exc).replace("-", "").replace(" ", ""):
                    why = read_only_why(self.path) or "its file or its folder cannot be written"
                    raise LedgerUnwritable(f"cannot write to the ledger {self.path}: it can only be read here "
                                           f"({why}); nothing was written") from None
                raise LedgerUnwritable(f"cannot write to the ledger {self.path}: {disk_trouble(exc) or exc}",
                                       busy="locked" in str(exc) or "busy" in str(exc)) from None
        return Event(eid, game_id, type, json.loads(text), None if ref is None else int(ref), t)

    # ------------------------------------------------------------------ reading

    def events(self, game_id: str | None = None, after_id: int = 0) -> list[Event]:
        """Events in id order, of one game or all, with ids above ``after_id``
        (none for a ``game_id`` that is not text SQLite can hold: a command
        line's bytes that are not UTF-8, which no game id written is)."""
        after_id = max(-2 ** 63, min(int(after_id), 2 ** 63 - 1))     # (SQLite's integers are 64-bit)
        if game_id is not None and not _utf8(game_id):
            return []
        with self._lock:
            if game_id is None:
                rows = self.conn.execute("SELECT id, game_id, type, data, ref, t FROM events "
                                         "WHERE id > ? ORDER BY id", (int(after_id),)).fetchall()
            else:
                rows = self.conn.execute("SELECT id, game_id, type, data, ref, t FROM events "
                                         "WHERE game_id = ? AND id > ? ORDER BY id",
                                         (game_id, int(after_id))).fetchall()
        return [_row(r) for r in rows]

    def check_intact(self) -> None:
        """Refuse a damaged file before it is served: SQLite's ``PRAGMA
        quick_check`` (https://sqlite.org/pragma.html#pragma_quick_check:
        the pages and records well formed, without the index contents).  A
        break-test's ledger with two pages of random bytes was served and
        then answered every page with 503.

        Raises:
            BadInput: one line naming the file and SQLite's first finding.
        """
        try:
            with self._lock:
                rows = self.conn.execute("PRAGMA quick_check(1)").fetchall()
        except sqlite3.DatabaseError as exc:
            rows = [(str(exc),)]
        first = str(rows[0][0]) if rows else "no answer"
        if first != "ok":
            raise BadInput(f"cannot use ledger {self.path}: SQLite finds it damaged ({' '.join(first.split())}); "
                           "serve a copy made before the damage (sqlite3's .recover command saves what is left)")

    def last_id(self) -> int:
        """The newest event's id (0 for an empty ledger)."""
        with self._lock:
            r = self.conn.execute("SELECT MAX(id) FROM events").fetchone()
        return int(r[0]) if r and r[0] is not None else 0

    def event(self, event_id: int) -> Event | None:
        """The event ``event_id``, or None (also for an id beyond SQLite's
        64-bit integers, which no event has)."""
        if not -2 ** 63 <= int(event_id) < 2 ** 63:
            return None
        with self._lock:
            r = self.conn.execute("SELECT id, game_id, type, data, ref, t FROM events WHERE id = ?",
                                  (int(event_id),)).fetchone()
        return None if r is None else _row(r)

    def games(self) -> list[dict]:
        """One summary per game, oldest first: ``game_id``, ``started`` (event id),
        ``variant``, ``mode``, ``layout``, ``players``, ``t``, ``events``."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT e.game_id, MIN(e.id), COUNT(*), "
                "(SELECT s.data FROM events s WHERE s.game_id = e.game_id AND s.type = 'game_started' "
                " ORDER BY s.id LIMIT 1), "
                "(SELECT s.t FROM events s WHERE s.game_id = e.game_id AND s.type = 'game_started' "
                " ORDER BY s.id LIMIT 1) "
                "FROM events e GROUP BY e.game_id ORDER BY MIN(e.id)").fetchall()
        out = []
        for gid, first, n, start, t in rows:
            d: dict[str, Any] = _data_of(start) if start else {}
            out.append({"game_id": gid, "started": first, "events": n, "variant": d.get("variant"),
                        "mode": d.get("mode"), "layout": d.get("layout"), "players": d.get("players"),
                        "t": _time_of(t)})
        return out

    def game_count(self) -> int:
        """How many games the ledger holds."""
        with self._lock:
            return int(self.conn.execute("SELECT COUNT(DISTINCT game_id) FROM events").fetchone()[0])

    def latest_game_id(self) -> str | None:
        """The game whose ``game_started`` event is the newest, or None."""
        with self._lock:
            r = self.conn.execute("SELECT game_id FROM events WHERE type = 'game_started' "
                                  "ORDER BY id DESC LIMIT 1").fetchone()
        return None if r is None else r[0]

    def find_game_id(self, game_id: str) -> str | None:
        """The id of the ledger's game ``game_id`` names: that id where a game
        has it, else the one game whose id is the same name folded as
        players' names are (:func:`companion.game.name_key`: case, width,
        composed or decomposed letters), else None (none, or several such
        games in a ledger from before ids were folded)."""
        with self._lock:
            ids = [r[0] for r in self.conn.execute("SELECT DISTINCT game_id FROM events")]
        if game_id in ids:
            return game_id
        like = [g for g in ids if name_key(g) == name_key(game_id)]
        return like[0] if len(like) == 1 else None

    def new_game_id(self) -> str:
        """A game id not used yet: ``game-N``."""
        with self._lock:
            used = {r[0] for r in self.conn.execute("SELECT DISTINCT game_id FROM events")}
        n = len(used) + 1
        while f"game-{n}" in used:
            n += 1
        return f"game-{n}"

    def state(self, game_id: str | None = None, words=None) -> dict:
        """:func:`companion.game.state_json` of a game (the latest by default).

        Raises:
            BadInput: no such game.
        """
        gid = game_id or self.latest_game_id()
        evs = self.events(gid) if gid else []
        if not evs:
            raise BadInput(f"no game {game_id!r} in ledger {self.path}" if game_id
                           else f"ledger {self.path} holds no game")
        return state_json(evs, words=words)

    # ------------------------------------------------------------------ export

    CSV_COLUMNS = ("id", "game_id", "type", "player", "ref", "t", "status", "text", "data")

    def export_csv(self, game_id: str, fileobj: IO[str]) -> int:
        """Write a game's events as CSV (columns :attr:`CSV_COLUMNS`; ``status``
        and ``text`` come from replay, ``data`` is the event's JSON); returns
        the number of rows.  Text a spreadsheet would run as a formula is
        quoted (:func:`sheet_text`).

        Raises:
            BadInput: no such game.
        """
        evs = self._game(game_id)
        st = _try_replay(evs)
        w = csv.writer(fileobj, lineterminator="\n")
        w.writerow(self.CSV_COLUMNS)
        for e in evs:
            status, text = _status_text(st, e)
            w.writerow([e.id, sheet_text(e.game_id), sheet_text(e.type), sheet_text(e.data.get("player") or ""),
                        "" if e.ref is None else e.ref, "" if e.t is None else repr(e.t), status, sheet_text(text),
                        json.dumps(e.data, sort_keys=True, separators=(",", ":"))])
        return len(evs)

    def export_json(self, game_id: str) -> dict:
        """A game as one JSON-able dict: ``game_id``, ``events`` (every event,
        with ``status`` and ``text``) and ``state`` (:func:`state_json` with
        all events' texts, scores and result; None if the game cannot be
        replayed).

        Raises:
            BadInput: no such game.
        """
        evs = self._game(game_id)
        st = _try_replay(evs)
        rows = []
        for e in evs:
            status, text = _status_text(st, e)
            rows.append(dict(e.to_json(), status=status, text=text))
        try:
            state = state_json(evs)
        except BadInput:
            state = None
        return {"game_id": game_id, "events": rows, "state": state}

    def _game(self, game_id: str) -> list[Event]:
        evs = self.events(game_id)
        if not evs:
            raise BadInput(f"no game {game_id!r} in ledger {self.path}")
        return evs


#: what makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def sheet_text(value: str) -> str:
    """``value`` for a CSV cell that a spreadsheet opens: text starting with
    ``= + - @``, a tab or a carriage return gets a leading ``'`` so that it
    shows as text and never runs as a formula (a player named
    ``=HYPERLINK(...)``); other text is unchanged."""
    value = str(value)
    return "'" + value if value.startswith(_FORMULA_START) else value


def _try_replay(evs):
    try:
        return replay(evs)
    except BadInput:
        return None


def _status_text(st, e: Event) -> tuple[str, str]:
    if st is None:
        return "unknown", e.type
    ent = st.entries.get(e.id)
    if ent is not None and ent.status == "rejected":
        return "rejected", ent.text
    return st.status.get(e.id, "ok"), ent.text if ent is not None else brief(e, st.tiles)


def _utf8(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (no lone surrogates: the bytes of a
    command-line argument that are not UTF-8 arrive as such)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
