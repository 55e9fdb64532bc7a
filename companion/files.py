"""Checks on input files before they are read.

Every file the command line reads (layouts, deals, camera and mat JSON,
labels, profiles) goes through :func:`check_input_file` first, so that a
pipe, a device such as ``/dev/zero`` or a file far larger than any real input
is refused in one line instead of hanging or filling the memory.  Photos have
their own reader (:mod:`companion.commands.images`).
"""

from __future__ import annotations

import os
import stat

from companion.errors import BadInput

#: the largest text or profile input read (bytes); the largest real inputs
#: (a KMahjongg layout, mah's boards.json with every board, a profile of a
#: few thousand crops) are well under 10 MiB
MAX_INPUT_BYTES = 64 * 2**20


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
