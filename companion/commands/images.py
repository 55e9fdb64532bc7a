"""Reading a photo for a command: one reader, so every command refuses a bad
file with the same one line (../shared/CONTRACT.md: exit 2, no traceback).
"""

from __future__ import annotations

import os
from pathlib import Path

from companion.errors import BadInput

#: the largest picture (pixels) a command reads: about 12000 x 8000 px, more
#: than any phone camera's full resolution in 2026 but for 200 MP modes
#: (recognize takes about 23 bytes a pixel at its peak, so 2.3 GB here);
#: :mod:`companion.cli` sets OpenCV's own limit to it
MAX_IMAGE_PIXELS = 100_000_000


def read_image(path: str | os.PathLike):
    """``(H, W, 3) uint8`` BGR image from a file (any format OpenCV decodes;
    grey, 16-bit and alpha pictures come back as 8-bit BGR).

    Raises:
        BadInput: a folder, a missing or unreadable file, or not a picture
            OpenCV decodes (a header claiming more pixels than OpenCV is set
            to read included: :data:`MAX_IMAGE_PIXELS` under the command
            line); the line names the file.
    """
    import numpy as np

    p = Path(path)
    if p.is_dir():
        raise BadInput(f"cannot read image {path}: it is a folder; give the image files (e.g. {p}/*.png)")
    if not p.exists():
        raise BadInput(f"cannot read image {path}: no such file{_pattern_hint(str(path))}")
    if not p.is_file():
        raise BadInput(f"cannot read image {path}: not a regular file (a pipe or a device)")
    try:
        data = np.fromfile(str(p), np.uint8)
    except OSError as exc:
        raise BadInput(f"cannot read image {path}: {exc.strerror or exc}") from None
    try:
        img = imdecode_quiet(data) if data.size else None
    except ValueError as exc:
        raise BadInput(f"cannot read image {path}: {exc}") from None
    if img is None or img.size == 0:
        hint = _format_hint(data) or " (a JPEG or PNG cut short, or another format?)"
        raise BadInput(f"cannot read image {path}: not an image file OpenCV can decode{hint}")
    return img


def _pattern_hint(name: str) -> str:
    """For a missing picture whose name holds ``*``, ``?`` or ``[``: the
    shell passes a pattern that matched no file on as it stands
    (``photos/*.JPG`` where the files end in ``.jpg``), so say so; else ""."""
    if any(c in name for c in "*?["):
        return " (a pattern that matched no file: check the folder and the name's case, e.g. .jpg or .JPG)"
    return ""


def _format_hint(data) -> str:
    """For a picture OpenCV cannot decode: a hint when its bytes name a
    format a phone saves and OpenCV does not read (an iPhone's HEIC, or
    AVIF: an ISO ``ftyp`` box), else ""."""
    head = bytes(memoryview(data[:32]))
    if head[4:8] == b"ftyp" and head[8:12] in (b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1",
                                                b"avif", b"avis"):
        return " (a HEIC or AVIF photo: export it as JPEG, or set the phone's camera to \"Most Compatible\")"
    return ""


def imdecode_quiet(data):
    """``cv2.imdecode(data, IMREAD_COLOR)`` with the decoders' own messages
    (libpng writes "PNG input buffer is incomplete" straight to file
    descriptor 2) kept off stderr, so a bad file gives the one line the
    contract asks for.  Returns None where OpenCV cannot decode ``data``.

    Raises:
        ValueError: OpenCV refuses the picture outright (:func:`vision.sources.decoder_refusal`
            gives the reason in words: a header claiming more pixels than
            OpenCV reads, for one).
    """
    import os
    import sys

    import cv2

    try:
        try:
            fd = sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):   # stderr replaced (tests): nothing to hide
            return cv2.imdecode(data, cv2.IMREAD_COLOR)
        sys.stderr.flush()
        saved = os.dup(fd)
        try:
            with open(os.devnull, "wb") as null:
                os.dup2(null.fileno(), fd)
                return cv2.imdecode(data, cv2.IMREAD_COLOR)
        finally:
            os.dup2(saved, fd)
            os.close(saved)
    except cv2.error as exc:
        from vision.sources import decoder_refusal
        raise ValueError(decoder_refusal(exc)) from None
