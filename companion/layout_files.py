"""Loading layouts by name or from files: the I/O shell over the pure parsers
of :mod:`companion.layouts` and the built-in :mod:`companion.codex`.

Anywhere a layout is asked for (``--layout L``), ``L`` is a built-in name or a
path to a KMahjongg ``.layout``, a GNOME Mahjongg ``.map`` (``--map-name`` when
it holds several maps) or a JSON file: the contract's ``{"name", "slots"}``
form, or a list of boards in the mah project's ``boards.json`` form (then
``--map-name`` picks the board).  See ../shared/CONTRACT.md, "Layout".
Slots read from a file keep that file's coordinates.
"""

from __future__ import annotations

import os
from pathlib import Path

from companion import codex
from companion.errors import BadInput
from companion.files import check_input_file, read_input_bytes
from companion.layouts import (Layout, normalise_name, printable_name, without_the, parse_gnome_map,
                               parse_kmahjongg, parse_layout_json, parse_mah_boards)

LAYOUT_SUFFIXES = (".layout", ".map", ".json")
"""File name endings :func:`load_layout` reads (others are sniffed by content)."""


def _looks_like_path(spec: str) -> bool:
    return (spec.lower().endswith(LAYOUT_SUFFIXES) or "/" in spec or os.sep in spec
            or (os.altsep is not None and os.altsep in spec))


def load_layout(spec: str, map_name: str | None = None) -> Layout:
    """The layout named by ``spec``: a built-in name (see
    :func:`companion.codex.builtin`; case, every character that is not a
    letter or a digit, and a leading "The" are ignored) or a path to a layout file.

    A spec that ends in ``.layout``/``.map``/``.json`` or holds a path
    separator is always read as a file; otherwise a built-in name wins over a
    file of the same name in the working directory.

    Args:
        spec: built-in name or file path.
        map_name: which map of a GNOME ``.map`` file (or board of a mah
            ``boards.json``) holding several.

    Raises:
        BadInput: one line: an unknown name (with the closest built-in names),
            an unreadable file, a malformed file (``"FILE:LINE: fault"``), a
            file holding several maps and no ``map_name``, or a ``map_name``
            given for a file that holds a single layout.
    """
    # blanks around a built-in name do not matter; a file is read by its
    # name as given (a break-test's "twin.json " read the file twin.json)
    name = spec.strip()
    if not name:
        raise BadInput("empty layout name")
    if not _looks_like_path(name):
        if codex.is_builtin(name):
            if map_name is not None:
                raise BadInput(f"--map-name applies to .map and boards.json files, not to the "
                               f"built-in layout {name!r}")
            return codex.builtin(name)
        check_input_file(spec, "layout file")
        if not Path(spec).is_file():
            codex.builtin(name)  # raises BadInput with the closest names
    return read_layout_file(spec, map_name)


def read_layout_file(path: str | os.PathLike, map_name: str | None = None) -> Layout:
    """Read one layout from a ``.layout``, ``.map`` or ``.json`` file (the kind is
    taken from the name's ending, else sniffed from the text).

    Raises:
        BadInput: as for :func:`load_layout`.
    """
    source = os.fspath(path)
    raw = read_input_bytes(source, "layout file")
    try:
        if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
            # UTF-16 with its byte order mark, as Windows Notepad saves
            # "Unicode" (a break-test's such .layout was refused as "first
            # line '\xff\xfek\x00m\x00...' is not 'kmahjongg-layout-v1.0'")
            text = raw.decode("utf-16").lstrip("\ufeff")
        else:
            text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        # an older file in a one-byte encoding (a Latin-1 comment or name): the
        # layout itself is ASCII, and a file that is no layout at all is still
        # refused by its parser
        text = raw.decode("latin-1")
    kind = _kind(source, text)
    if kind == "map":
        return parse_gnome_map(text, source, map_name)
    if map_name is not None and kind != "boards":
        raise BadInput(f"{source}: --map-name {map_name!r} applies to .map and boards.json "
                       "files; this file holds one layout")
    if kind == "kmahjongg":
        return parse_kmahjongg(text, source)
    if kind == "boards":
        return _pick_board(parse_mah_boards(text, source), source, map_name)
    return parse_layout_json(text, source)


def _kind(source: str, text: str) -> str:
    low = source.lower()
    head = text.lstrip()
    if low.endswith(".layout"):
        return "kmahjongg"
    if low.endswith(".map"):
        return "map"
    if low.endswith(".json"):
        return "boards" if head.startswith("[") else "json"
    if head.startswith("kmahjongg-layout"):
        return "kmahjongg"
    if head.startswith("<"):
        return "map"
    if head.startswith("[") and head[1:].lstrip()[:1] in ("{", "[", "]"):
        return "boards"             # a JSON list (an INI "[Section]" header is not)
    if head.startswith("{"):
        return "json"
    raise BadInput(f"{source}:1: not a layout file (expected a KMahjongg .layout, a GNOME "
                   ".map or a layout .json)")


def _pick_board(boards: list[Layout], source: str, map_name: str | None) -> Layout:
    if not boards:
        raise BadInput(f"{source}: holds no boards")
    if map_name is None:
        if len(boards) == 1:
            return boards[0]
        names = ", ".join(repr(b.name) for b in boards[:12])
        more = f" and {len(boards) - 12} more" if len(boards) > 12 else ""
        raise BadInput(f"{source}: holds {len(boards)} boards, choose one with --map-name: "
                       f"{names}{more}")
    # a board's name is kept printable (companion.layouts.printable_name: at
    # most NAME_MAX characters); the name asked for is made so too, or a
    # board named in over 80 characters could not be chosen by its name
    want = normalise_name(printable_name(map_name))
    found = [b for b in boards if normalise_name(b.name) == want]
    if not found:
        # a leading "The" does not matter, as in built-in names ("Fly" or
        # "The Fly" for a board named "The Fly")
        found = [b for b in boards if without_the(normalise_name(b.name)) == without_the(want)]
    if len(found) > 1:
        names = ", ".join(dict.fromkeys(repr(b.name) for b in found))
        raise BadInput(f"{source}: holds {len(found)} boards named {names}, so --map-name {map_name!r} cannot "
                       "tell them apart; give each board its own name")
    if found:
        return found[0]
    raise BadInput(f"{source}: no board named {map_name!r}")
