"""JSON text as the commands read and write it: Python's ``json`` with its
gaps closed.

Reading, three gaps:

* ``json.loads`` raises ``RecursionError``, not ``json.JSONDecodeError``, on
  arrays or objects nested deeper than the interpreter's recursion limit
  (about 1000 levels; ``[[[[...]]]]``);
* and a plain ``ValueError`` on an integer of more than 4300 digits (Python's
  limit on integer string conversion, ``sys.set_int_max_str_digits``).
  These wrappers report both as a ``JSONDecodeError``, so every reader's one
  existing "not JSON" message covers them (no traceback on such a file);
* a text starting with a UTF-8 byte order mark (as Windows tools write
  files) is read without it (``json.loads`` refuses it).

Writing (:func:`dumps`), two more: ``json.dumps`` writes ``NaN`` and
``Infinity``, which are not JSON, and a file name whose bytes are not UTF-8
(held by Python as lone surrogates, PEP 383) as a ``"\\udcff"`` escape,
which strict parsers refuse.  :func:`dumps` refuses the first and writes
each such byte as the text ``\\xff`` (:func:`name_text`).
"""

from __future__ import annotations

import json
import math
import os
import re

__all__ = ["dumps", "loads", "name_text", "raw_decode", "show"]

_TOO_DEEP = "nested too deeply"
_TOO_LONG = "an integer of more than 4300 digits"


def loads(text: str):
    """``json.loads(text)``, a leading byte order mark skipped.

    Raises:
        json.JSONDecodeError: malformed JSON, nested too deeply to parse, or
            an integer too long to convert.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(_TOO_DEEP, text, 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError:                  # an integer too long to convert
        raise json.JSONDecodeError(_TOO_LONG, text, 0) from None


def raw_decode(decoder: json.JSONDecoder, text: str, pos: int):
    """``decoder.raw_decode(text, pos)`` (one value and where it ends); a
    byte order mark at the start of ``text`` is skipped.

    Raises:
        json.JSONDecodeError: as :func:`loads`, located at ``pos``.
    """
    if pos == 0 and text.startswith("\ufeff"):
        pos = 1
    try:
        return decoder.raw_decode(text, pos)
    except RecursionError:
        raise json.JSONDecodeError(_TOO_DEEP, text, pos) from None
    except json.JSONDecodeError:
        raise
    except ValueError:
        raise json.JSONDecodeError(_TOO_LONG, text, pos) from None


def show(value, limit: int = 60) -> str:
    """A decoded JSON value as its file wrote it, for one-line messages:
    ``true``, ``null``, ``"1000"`` and ``[1, 2]`` rather than Python's
    ``True``, ``None``, ``'1000'``; a missing value (None) is ``nothing``.
    Cut to ``limit`` characters with ``...``."""
    if value is None:
        return "nothing"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


#: half of a UTF-16 surrogate pair: never valid in a text a strict JSON
#: parser reads, alone (Python keeps a file name's non-UTF-8 bytes this way)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(m: re.Match) -> str:
    code = ord(m.group())
    if 0xDC80 <= code <= 0xDCFF:          # a byte that is not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def name_text(name) -> str:
    """A file name (``str``, ``bytes`` or path) as text any strict reader
    accepts: each byte that is not UTF-8 becomes the four characters
    ``\\xNN`` (``bad\\xff.png`` for the bytes ``bad<FF>.png``), the way
    Python's ``backslashreplace`` shows it; a name that is UTF-8 is
    unchanged."""
    text = os.fsdecode(name)
    return _LONE_SURROGATE.sub(_escape_surrogate, text) if _LONE_SURROGATE.search(text) else text


def _strict(value):
    """``value`` with :func:`name_text` applied to every string in it."""
    if isinstance(value, str):
        return name_text(value)
    if isinstance(value, dict):
        return {_strict(k) if isinstance(k, str) else k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    return value


def _not_finite(value, where: str = "") -> str | None:
    """Where in ``value`` the first NaN or infinite number lies
    (``[0].confidence``), or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (where or "the value")
    if isinstance(value, dict):
        items = ((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{where}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for at, v in items:
        found = _not_finite(v, at)
        if found is not None:
            return found
    return None


def dumps(value) -> str:
    """``value`` as one line of strict JSON (RFC 8259), ASCII only: no
    ``NaN`` or ``Infinity``, and file names that are not UTF-8 written by
    :func:`name_text`.

    Raises:
        ValueError: ``value`` holds a NaN or infinite number (the message
            says where, e.g. ``[0].confidence``); TypeError: it holds
            something JSON has no form for.
    """
    try:
        text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    except ValueError:
        where = _not_finite(value)
        if where is None:
            raise
        raise ValueError(f"{where} is not a finite number (NaN or infinity), which JSON cannot hold") from None
    if "\\ud" in text:                   # (ensure_ascii writes any surrogate as \udXXX)
        text = json.dumps(_strict(value), separators=(",", ":"), allow_nan=False)
    return text
