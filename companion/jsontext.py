"""JSON text as the commands read it: Python's ``json`` with one gap closed.

``json.loads`` raises ``RecursionError``, not ``json.JSONDecodeError``, on
arrays or objects nested deeper than the interpreter's recursion limit (about
1000 levels; ``[[[[...]]]]``).  These wrappers report that as a
``JSONDecodeError`` at the first character, so every reader's one existing
"not JSON" message covers it (no traceback on such a file).
"""

from __future__ import annotations

import json

__all__ = ["loads", "raw_decode"]

_TOO_DEEP = "nested too deeply"


def loads(text: str):
    """``json.loads(text)``.

    Raises:
        json.JSONDecodeError: malformed JSON, or nested too deeply to parse.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(_TOO_DEEP, text, 0) from None


def raw_decode(decoder: json.JSONDecoder, text: str, pos: int):
    """``decoder.raw_decode(text, pos)`` (one value and where it ends).

    Raises:
        json.JSONDecodeError: as :func:`loads`, located at ``pos``.
    """
    try:
        return decoder.raw_decode(text, pos)
    except RecursionError:
        raise json.JSONDecodeError(_TOO_DEEP, text, pos) from None
