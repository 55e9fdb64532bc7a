"""Output paths checked before any work: a command never writes over a file it reads.

A JSONL events file, an overlay or a ledger named like the photo, the
video, a frame of the frame folder, the camera, mat, layout or profile file
would destroy the input (and the evidence a referee may need), so such a
path is refused with one line (exit 2) before anything is opened for
writing.
"""

from __future__ import annotations

import os
from pathlib import Path

from companion.errors import BadInput
from companion.files import not_a_folder
from companion.ledger import SQLITE_SIDECARS  # the files SQLite keeps beside a ledger


def _same(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file: by ``os.path.samefile`` when
    both exist, else by their resolved paths (``new/../video.avi`` names
    ``video.avi`` once ``new/`` is made for it; a break-test, session 54,
    wrote an events file over the video so)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return b.exists() and a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def refuse_overwriting_inputs(option: str, out: str, inputs, frame_folder: str | None = None,
                              frame_suffixes=()) -> None:
    """Refuse an output path that names one of the files being read.

    Args:
        option: the option's name for the message (``--events-out``).
        out: the output path as given.
        inputs: paths of the files being read (None entries, and names that
            are not files, such as a built-in layout's name, are skipped);
            compared with ``os.path.samefile``, so another spelling, a
            symbolic or a hard link of an input is caught too.
        frame_folder: a folder whose frames are read (the referee's SOURCE),
            or None.
        frame_suffixes: the suffixes (lower case, with the dot) of the files
            read from ``frame_folder``: a new file there with such a suffix
            would be read as a frame.

    Raises:
        BadInput: ``out`` is one of ``inputs``, or a frame of ``frame_folder``
            (existing, or new with a frame suffix).
    """
    path = Path(out)
    for other in inputs:
        if other is not None and _same(path, Path(other)):
            raise BadInput(f"{option} {out} would overwrite {other}, which is being read; give another file name")
    if frame_folder is not None and path.suffix.lower() in frame_suffixes and _same(path.parent, Path(frame_folder)):
        raise BadInput(f"{option} {out} lies among the frames of {frame_folder}, which are being read; "
                       "give a file name outside that folder")


def refuse_ledger_files(option: str, out: str, ledger: str | None) -> None:
    """Refuse an output path that names the ledger or one of SQLite's files
    beside it (``LEDGER-wal``, ``-shm``, ``-journal``), whether or not they
    exist now: writing there would corrupt the ledger or be deleted by
    SQLite.  Compared by resolved path, and by ``os.path.samefile`` for
    links to existing files.

    Raises:
        BadInput: ``out`` is one of those files.
    """
    if not out or not ledger:
        return
    names = [str(ledger) + x for x in ("", *SQLITE_SIDECARS)]
    target = Path(out).resolve()
    for name in names:
        if target == Path(name).resolve() or _same(Path(out), Path(name)):
            raise BadInput(f"{option} {out} would overwrite {name}, the ledger's own file; give another file name")


def make_parent_folder(option: str, out: str) -> None:
    """Create the folder an output file goes to (and the folders above it).

    Raises:
        BadInput: a name on the way is a file, not a folder, or the folder
            cannot be created (permission, read-only file system).
    """
    parent = Path(out).parent
    _nearest_folder(parent, f"cannot write {out}")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"cannot write {out}: {exc.strerror or exc}") from None


def remove_new_ledger(path: Path) -> None:
    """Remove a ledger file this run created and wrote no event to, with SQLite's side files."""
    for name in (str(path),) + tuple(str(path) + side for side in SQLITE_SIDECARS):
        try:
            os.unlink(name)
        except OSError:
            pass


def missing_folders(out: str) -> list[Path]:
    """The folders on the way to output file ``out`` that do not exist yet
    (deepest first), which :func:`make_parent_folder` is about to make: a
    run that fails before writing ``out`` removes them again when empty (a break-test's runs that found no mat, or were
    stopped before any event, left ``new/folder/`` behind, empty)."""
    out_path = Path(out)
    missing = []
    for folder in out_path.parents:
        if os.path.lexists(folder) or str(folder) in ("", "."):
            break
        missing.append(folder)
    return missing


def remove_if_empty(folder: Path) -> None:
    """Remove ``folder`` if it exists and is empty (no error otherwise)."""
    try:
        folder.rmdir()
    except OSError:
        pass


def refuse_folder_name(option: str, out: str, example: str = "") -> None:
    """Refuse an output file named with a trailing separator (``--out
    profiles/``) where no folder of that name exists: the name says a
    folder, and the file would be written as ``profiles`` (``Path`` drops
    the separator), where the next ``--out profiles/mine.npz`` then finds
    a file on the way.  An existing folder is refused by the write check
    itself (``it is a folder``).

    Raises:
        BadInput: one line naming the option and, with ``example``, a
            file name to give instead (``profiles/tiles.npz``).
    """
    seps = tuple(s for s in (os.sep, os.altsep, "/") if s)
    if str(out).endswith(seps) and not os.path.isdir(out):
        hint = f" (e.g. {option} {out}{example})" if example else ""
        raise BadInput(f"cannot write {option} {out}: a name ending in {out[-1]} names a folder; give the file's "
                       f"name{hint}")


def check_writable(option: str, out: str, plain_file: bool = False) -> None:
    """Refuse an output file that cannot be written, without creating it or
    changing it: an existing file is opened for appending (which writes
    nothing), a new one is created and removed again at once, so a command
    that fails later leaves no file behind and an old one untouched.

    Args:
        option: the option's name for the message (``--out``).
        out: the output file.
        plain_file: refuse a pipe or a device (``/dev/full``, ``/dev/null``)
            too: for a file that is written whole at the end and kept.

    Raises:
        BadInput: the folder it goes in does not exist (or is a file), the
            file cannot be opened for writing (permission, a read-only file
            system, a folder of that name), or, with ``plain_file``, it is
            not a plain file.
    """
    refuse_folder_name(option, out)
    parent = Path(out).parent
    if not parent.is_dir():
        what = not_a_folder(parent) if parent.exists() else "does not exist"
        raise BadInput(f"cannot write {option} {out}: the folder {parent} {what}")
    if plain_file and os.path.exists(out) and not os.path.isdir(out) and not os.path.isfile(out):
        raise BadInput(f"cannot write {option} {out}: it is not a plain file (a pipe or a device); "
                       "give a file name")
    existed = os.path.lexists(out)
    try:
        open(out, "a", encoding="utf-8").close()
    except IsADirectoryError:
        raise BadInput(f"cannot write {option} {out}: it is a folder") from None
    except OSError as exc:
        raise BadInput(f"cannot write {option} {out}: {exc.strerror or exc}") from None
    if not existed:
        try:
            os.unlink(out)
        except OSError:
            pass


def check_can_write(option: str, out: str, plain_file: bool = False, example: str = "") -> None:
    """Refuse an output file that could not be written, before any work and
    creating nothing: :func:`check_writable` when its folder is there, else
    the nearest folder above it that is there must be a folder the missing
    ones can be made in (:func:`make_parent_folder` makes them later, when
    the file is written).

    Args:
        option: the option's name for the message (``--events-out``).
        out: the output file.
        plain_file: as for :func:`check_writable`.
        example: a file name to suggest for a name ending in a separator
            (:func:`refuse_folder_name`), e.g. ``camera.json``.

    Raises:
        BadInput: as :func:`check_writable`; or a name on the way is a file,
            or the folder above the missing ones cannot be written.
    """
    refuse_folder_name(option, out, example)
    parent = Path(out).parent
    p = _nearest_folder(parent, f"cannot write {option} {out}")
    if p == parent:
        check_writable(option, out, plain_file)
    elif not os.access(p, os.W_OK | os.X_OK):
        raise BadInput(f"cannot write {option} {out}: the folder {parent} cannot be made in {p} (not writable)")


def _nearest_folder(folder: Path, message: str) -> Path:
    """``folder`` or the nearest folder above it that exists (the last one
    tried when none does).

    Raises:
        BadInput: ``message``, then the name on the way that is a file.
    """
    for p in (folder, *folder.parents):
        if p.exists():
            if not p.is_dir():
                raise BadInput(f"{message}: {p} {not_a_folder(p)}")
            break
    return p
