"""JSON text as the commands read it: Python's ``json`` with three gaps closed.

* ``json.loads`` raises ``RecursionError``, not ``json.JSONDecodeError``, on
  arrays or objects nested deeper than the interpreter's recursion limit
  (about 1000 levels; ``[[[[...]]]]``);
* and a plain ``ValueError`` on an integer of more than 4300 digits (Python's
  limit on integer string conversion, ``sys.set_int_max_str_digits``).
  These wrappers report both as a ``JSONDecodeError``, so every reader's one
  existing "not JSON" message covers them (no traceback on such a file);
* a text starting with a UTF-8 byte order mark (as Windows tools write
  files) is read without it (``json.loads`` refuses it).
"""

from __future__ import annotations

import json

__all__ = ["loads", "raw_decode", "show"]

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
