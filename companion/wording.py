"""Words for the command line's output: counts with the right plural.

"1 layer", "2 layers": every count a command prints goes through
:func:`count`, so no output says "1 layers" or "2 move(s)".
"""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is 1 (``count(1, "layer")``
    -> ``"1 layer"``, ``count(3, "layer")`` -> ``"3 layers"``).

    Args:
        n: how many (an int, or anything ``str`` prints).
        noun: the singular.
        plural: the plural when it is not ``noun + "s"`` (``"penalties"``).
    """
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
