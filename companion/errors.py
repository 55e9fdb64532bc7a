"""Typed failures of the companion.

Only :mod:`companion.cli` maps these to exit codes and a one-line message on
stderr (see ../shared/CONTRACT.md, "Exit codes"): ``BadInput`` -> 2,
``MatNotFound`` -> 3, ``Interrupted`` -> 130 (as a Ctrl+C anywhere else).
Everything else raised inside the engine is a bug.
"""

from __future__ import annotations


class CompanionError(ValueError):
    """Base class of every error the companion raises on purpose."""

    exit_code = 2


class BadInput(CompanionError):
    """Malformed or unreadable input, an unknown name, or an illegal request.

    Exit code 2.  The message is one line and names the input (file, line,
    slot, player) and the fault.
    """

    exit_code = 2


class IllegalMove(BadInput):
    """A request that is well formed but breaks a rule (e.g. removing a slot
    that is not on the board, claiming a covered tile).  Exit code 2."""


class CameraMisfit(BadInput):
    """The mat is in the picture, but the camera file's intrinsics do not fit
    it (another camera, or another resolution).  Exit code 2.  The referee
    stops on it only before the mat was ever seen with that file; after,
    one such frame counts as a frame without the mat."""


class WrongTileSet(BadInput):
    """The board's faces look like another tile set's than the one asked
    for (``--variant``), or no tile stands surely on the slots of the layout
    asked for (``--layout``): the referee stops before recording a game
    (exit 2)."""


class Interrupted(CompanionError):
    """Ctrl+C stopped a command before its work was done, and what it had
    done so far is kept (the referee's events on a file source).  Exit code
    130, as for any Ctrl+C (128 + SIGINT); the message starts with
    "interrupted"."""

    exit_code = 130


class MatNotFound(CompanionError):
    """No mat could be found in the image(s).  Exit code 3."""

    exit_code = 3
