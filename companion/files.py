"""Checks on input files before they are read, and output files written
all together or not at all.

Every file the command line reads (layouts, deals, camera and mat JSON,
labels, profiles) goes through :func:`check_input_file` first, so that a
pipe, a device such as ``/dev/zero`` or a file far larger than any real input
is refused in one line instead of hanging or filling the memory.  Photos have
their own reader (:mod:`companion.commands.images`).

A set of files a command writes (``print-mat``'s mat.png, mat.json and PDFs,
``print-board``'s, ``print-tiles``', ``calibrate``'s camera file) goes through
:class:`OutputFiles`, so a command that fails leaves no file half-written, no
new file and no old one changed.
"""

from __future__ import annotations

import os
import secrets
from glob import escape as glob_escape
import stat
from pathlib import Path

from companion.errors import BadInput

#: the largest text or profile input read (bytes); the largest real inputs
#: (a KMahjongg layout, mah's boards.json with every board, a profile of a
#: few thousand crops) are well under 10 MiB
MAX_INPUT_BYTES = 64 * 2**20


def not_a_folder(path: str | os.PathLike) -> str:
    """``"is a file, not a folder"`` for an existing ``path`` that is no
    folder, naming what it is instead where it is no file: ``"is a device,
    not a folder"`` (``--evidence /dev/null`` was called a file: a
    break-test, session 56), a pipe, a socket, or a link to nothing."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return "is a link to nothing, not a folder"
    kind = ("a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a pipe" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a file")
    return f"is {kind}, not a folder"


def check_input_file(path: str | os.PathLike, what: str, limit: int = MAX_INPUT_BYTES) -> None:
    """Refuse ``path`` before reading it when it is not a regular file or is
    larger than ``limit`` bytes.  A missing file or a folder is left to the
    caller, whose message names what was expected.

    Args:
        path: the file.
        what: what it should be, for the message (``"layout file"``).
        limit: the most bytes accepted.

    Raises:
        BadInput: a pipe, a device or a socket; a file over ``limit`` bytes.
    """
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    if stat.S_ISDIR(st.st_mode):
        return
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(f"cannot read {what} {os.fspath(path)}: not a regular file (a pipe or a device)")
    if st.st_size > limit:
        raise BadInput(f"cannot read {what} {os.fspath(path)}: {st.st_size:,} bytes, more than any "
                       f"{what} holds ({limit // 2**20} MiB at most)")



def read_input_bytes(path: str | os.PathLike, what: str) -> bytes:
    """The bytes of the input file ``path`` after :func:`check_input_file`.

    Args:
        path: the file.
        what: what it should be, for messages (``"deal file"``).

    Raises:
        BadInput: one line naming ``path``: missing, a folder or unreadable.
    """
    name = os.fspath(path)
    check_input_file(path, what)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise BadInput(f"{what} {name} not found") from None
    except IsADirectoryError:
        raise BadInput(f"{what} {name} is a folder, not a {what}") from None
    except OSError as exc:
        raise BadInput(f"cannot read {what} {name}: {exc.strerror or 'unreadable'}") from None


def read_json_file(path: str | os.PathLike, what: str):
    """The JSON object in the text file ``path`` (UTF-8, a byte order mark
    allowed: :func:`companion.jsontext.loads`), read by
    :func:`read_input_bytes`.

    Args:
        path: the file.
        what: what it should be, for messages (``"deal file"``).

    Raises:
        BadInput: one line naming ``path``: missing, a folder, unreadable, not
            UTF-8, or not JSON.
    """
    import json

    from companion import jsontext
    name = os.fspath(path)
    raw = read_input_bytes(path, what)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"cannot read {what} {name}: not UTF-8 text (byte {exc.start})") from None
    try:
        return jsontext.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{name}: not JSON (line {exc.lineno}: {exc.msg})") from None


class OutputFiles:
    """Files written into one folder all together or not at all.

    Entering the ``with`` block checks every file named (and creates the
    folder, and the folders above it, where missing), before any work: each
    gets an empty temporary file beside it.  :meth:`write` fills a file's
    temporary; leaving the block normally renames the temporaries into
    place, and leaving it by an exception (a refusal, a full disk, Ctrl-C)
    removes them, and the folders the set created, so the folder is left as
    it was::

        with OutputFiles(out, ["mat.png", "mat.json"]) as files:
            png = render(...)                # the work, after the checks
            files.write("mat.png", png)
            files.write("mat.json", text.encode())

    A file that exists is replaced keeping its permissions; a symbolic link
    is followed (the file it names is replaced).  Where the folder itself
    cannot be written but the existing file can, that file is written in
    place, as a plain write would.

    Args:
        folder: the folder written into.
        names: the files' names in ``folder`` (``sheets/a.png`` for one in a
            folder below it), checked on entering; :meth:`write` takes other
            names too, checked then.
        create: create ``folder`` where missing; when False a missing folder
            is refused.
        what: what ``folder`` is, for the messages (``"the --out folder"``).

    Raises:
        BadInput: (one line naming the file or folder) a name on the way is
            a file, a folder cannot be created, a target is a folder, a pipe
            or a device, or cannot be written (the system's reason).
    """

    def __init__(self, folder: str | os.PathLike, names=(), create: bool = True, what: str = "the folder"):
        self.folder = Path(folder)
        self.names = list(names)
        self.create = create
        self.what = what
        self._made: list[Path] = []                  # folders created, outermost first
        self._temps: dict[str, tuple[Path, Path | None]] = {}   # name -> (target, temporary or None: in place)
        self._written: set[str] = set()              # the names given their contents
        self._in_place: dict[str, bytes] = {}        # contents of the files written in place at the end

    def __enter__(self) -> "OutputFiles":
        from companion.stopping import stop_signals
        # SIGTERM and SIGHUP (a closed terminal) clean up as Ctrl+C does:
        # they had left the folder made and every hidden temporary file
        # (a break-test, session 58)
        self._stops = stop_signals()
        self._stops.__enter__()
        try:
            self._make_folder(self.folder)
            for name in self.names:
                self._reserve(name)
        except BaseException:
            self._discard_held()
            self._stops.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        try:
            if kind is not None:
                self._discard_held()
                return False
            try:
                self._commit()
            except BaseException:
                self._discard_held()
                raise
            self._sweep_stale()
            return False
        finally:
            self._stops.__exit__(None, None, None)

    def _discard(self, folders: bool = True) -> None:
        self._remove(folders)

    def _discard_held(self) -> None:
        """:meth:`_discard` with stop signals and Ctrl+C held until it is
        done: a second signal during the clean-up (systemd's SIGTERM then
        SIGHUP) stopped it half way, leaving the temporaries (a break-test,
        session 58); the held signal is raised after, as the first was."""
        from companion.stopping import deferred_sigint
        with deferred_sigint():
            self._remove(True)

    def path(self, name: str) -> Path:
        """Where ``name`` ends up (``folder / name``)."""
        return self.folder / name

    def reserve(self, name: str) -> Path:
        """Check the file ``name`` now (as entering the block checks those
        named then), before its contents are made.

        Returns:
            ``folder / name``.

        Raises:
            BadInput: as entering the block.
        """
        if name not in self._temps:
            self._reserve(name)
        return self.path(name)

    def write(self, name: str, data: bytes) -> Path:
        """Give the file ``name`` its contents (in place when the block ends).

        Returns:
            ``folder / name``.

        Raises:
            BadInput: the file cannot be written (a full disk: the system's reason).
        """
        self.reserve(name)
        target, temp = self._temps[name]
        if temp is None:
            self._in_place[name] = bytes(data)
        else:
            try:
                with open(temp, "wb") as fh:
                    fh.write(data)
            except OSError as exc:
                raise BadInput(f"cannot write {self.path(name)}: {exc.strerror or exc}") from None
        self._written.add(name)
        return self.path(name)

    def _make_folder(self, folder: Path) -> None:
        missing = []
        for p in (folder, *folder.parents):
            if os.path.lexists(p) and not p.is_dir():
                raise BadInput(f"cannot write to {folder}: {p} {not_a_folder(p)}")
            if p.is_dir():
                break
            missing.append(p)
        if missing and not self.create:
            raise BadInput(f"cannot write to {folder}: the folder {missing[-1]} does not exist")
        for p in reversed(missing):
            try:
                os.mkdir(p)
            except FileExistsError:
                if p.is_dir():       # "new/..": there once new/ is made (a break-test, session 54)
                    continue
                raise BadInput(f"cannot write to {folder}: {p} {not_a_folder(p)}") from None
            except OSError as exc:
                what = self.what if folder == self.folder else "the folder"
                # ("the folder of OUT.png" names the file: the folder that failed follows it)
                where = f"{what} ({p})" if what.startswith("the folder of ") else f"{what} {folder}"
                raise BadInput(f"cannot create {where}: {exc.strerror or exc}") from None
            self._made.append(p)

    def _reserve(self, name: str) -> None:
        shown = self.path(name)
        self._make_folder(shown.parent)
        if os.path.isdir(shown):
            raise BadInput(f"cannot write {shown}: it is a folder")
        target = Path(os.path.realpath(shown))
        existing = None
        try:
            existing = os.stat(target)
        except FileNotFoundError:
            try:
                # a link that only the kernel resolves (/dev/stdout ->
                # /proc/self/fd/1 -> "pipe:[...]"): what it reaches decides
                reached = os.stat(shown)
            except OSError:
                reached = None
            if reached is not None and not stat.S_ISREG(reached.st_mode):
                raise BadInput(f"cannot write {shown}: it is not a plain file (a pipe or a device)") from None
        except OSError as exc:
            raise BadInput(f"cannot write {shown}: {exc.strerror or exc}") from None
        if existing is not None:
            if not stat.S_ISREG(existing.st_mode):
                raise BadInput(f"cannot write {shown}: it is not a plain file (a pipe or a device)")
            try:
                open(target, "ab").close()          # writes nothing, changes nothing
            except OSError as exc:
                raise BadInput(f"cannot write {shown}: {exc.strerror or exc}") from None
        for _ in range(100):
            temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                continue
            except OSError as exc:
                if existing is not None:            # a folder that cannot be written: the file in place
                    self._temps[name] = (target, None)
                    return
                raise BadInput(f"cannot write {shown}: {exc.strerror or exc}") from None
            os.close(fd)
            self._temps[name] = (target, temp)
            if existing is not None:
                try:
                    os.chmod(temp, stat.S_IMODE(existing.st_mode))
                except OSError:
                    pass
            return
        raise BadInput(f"cannot write {shown}: no free name for a temporary file beside it")  # pragma: no cover

    def _commit(self) -> None:
        for name, data in self._in_place.items():
            try:
                with open(self._temps[name][0], "wb") as fh:
                    fh.write(data)
            except OSError as exc:
                raise BadInput(f"cannot write {self.path(name)}: {exc.strerror or exc}") from None
        for name, (target, temp) in list(self._temps.items()):
            if temp is None or name not in self._written:     # (reserved, never written: no empty file left)
                continue
            try:
                os.replace(temp, target)
            except OSError as exc:
                raise BadInput(f"cannot write {self.path(name)}: {exc.strerror or exc}") from None
            self._temps[name] = (target, None)
        self._discard(folders=False)

    #: a temporary file this old (seconds) beside a file of the set is an
    #: earlier run's, killed outright (SIGKILL, a power cut): removed once
    #: the set is written (a run writing the same folder now has younger ones)
    STALE_TEMP_S = 3600.0

    def _sweep_stale(self) -> None:
        import time
        now = time.time()
        for name in self._written:
            target = Path(os.path.realpath(self.path(name)))
            try:
                stale = list(target.parent.glob(f".{glob_escape(target.name)}.*.tmp"))
            except OSError:
                continue
            for temp in stale:
                rest = temp.name[len(target.name) + 2:-4]
                if len(rest) != 8 or any(c not in "0123456789abcdef" for c in rest):
                    continue            # (only names this class makes: ".NAME.<8 hex>.tmp")
                try:
                    if now - os.lstat(temp).st_mtime > self.STALE_TEMP_S:
                        os.unlink(temp)
                except OSError:
                    pass

    def _remove(self, folders: bool = True) -> None:
        for target, temp in self._temps.values():
            if temp is not None:
                try:
                    os.unlink(temp)
                except OSError:
                    pass
        self._temps = {}
        if folders:
            for p in reversed(self._made):
                try:
                    os.rmdir(p)
                except OSError:
                    pass
        self._made = []


def write_whole(path: str | os.PathLike, data: bytes, create: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it renamed
    into place (:class:`OutputFiles` of one file), so a full disk or a
    file-size limit met half way leaves an old file as it was; a pipe or a
    device is refused (a pipe without a reader would block for ever).

    Args:
        create: make the folder (and those above it) when it is missing.

    Raises:
        BadInput: the folder is missing (without ``create``), or the file
            cannot be written (one line, the system's reason).
    """
    p = Path(path)
    with OutputFiles(p.parent, [p.name], create=create, what=f"the folder of {path}") as files:
        files.write(p.name, data)
