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

#: the largest picture file (bytes) a command reads: 1 GiB, more than a
#: picture of :data:`MAX_IMAGE_PIXELS` holds uncompressed at 16 bits in 4
#: channels (800 MB).  A larger file is no picture the companion reads (a
#: video given as a photo): refused from its size, before it is read into
#: memory (a 6 GB video was read whole, and with less memory free than that
#: ended in a MemoryError's traceback; :func:`file_too_large`).
MAX_IMAGE_FILE_BYTES = 1 << 30


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
    if not p.exists() and _is_pattern(str(path)):
        # a pattern the shell passed on as typed (Windows' cmd, PowerShell)
        # that names one file is that file, as a POSIX shell would give it
        found = _glob(str(path))
        if len(found) == 1:
            p = Path(found[0])
    if p.is_dir():
        raise BadInput(f"cannot read image {path}: it is a folder; give the image files (e.g. {p}/*.png)")
    if not p.exists():
        if p.is_symlink():          # (a link to nothing, or a loop of links: "no such file" misled)
            raise BadInput(f"cannot read image {path}: a link to no file (its target is missing, or links "
                           "loop)")
        raise BadInput(f"cannot read image {path}: no such file{_pattern_hint(str(path))}")
    if not p.is_file():
        raise BadInput(f"cannot read image {path}: not a regular file (a pipe or a device)")
    if file_too_large(p):
        raise BadInput(f"cannot read image {path}: the file holds {p.stat().st_size / 2**30:.1f} GB, more than "
                       f"a picture of at most {MAX_IMAGE_PIXELS // 1_000_000} million pixels does"
                       f"{_format_hint(_head(p)) or ' (a video, or another kind of file?)'}")
    try:
        data = np.fromfile(str(p), np.uint8)
    except OSError as exc:
        raise BadInput(f"cannot read image {path}: {exc.strerror or exc}") from None
    except MemoryError:
        raise BadInput(f"cannot read image {path}: not enough memory to read it") from None
    if not data.size:
        raise BadInput(f"cannot read image {path}: the file is empty (0 bytes); copy the photo again")
    try:
        img = imdecode_quiet(data)
    except ValueError as exc:
        raise BadInput(f"cannot read image {path}: {exc}") from None
    except MemoryError:
        raise BadInput(f"cannot read image {path}: not enough memory to decode it") from None
    if img is None or img.size == 0:
        hint = _format_hint(data) or " (a JPEG or PNG cut short, or another format?)"
        raise BadInput(f"cannot read image {path}: not an image file OpenCV can decode{hint}")
    if _wholly_transparent(data):
        raise BadInput(f"cannot read image {path}: the picture is wholly transparent (its alpha channel is 0 "
                       "everywhere), so nothing in it shows; give the photo as the camera took it")
    return img


def _wholly_transparent(data) -> bool:
    """Whether ``data`` (the file's bytes, (n,) uint8) is a PNG with an alpha
    channel (IHDR colour type 4 or 6, PNG specification section 11.2.2) that
    is 0 at every pixel: OpenCV's colour decode drops the alpha channel and
    returns the colours under it, which an image viewer never shows (a
    break-test, session 56: such a picture was read as opaque)."""
    import cv2

    head = bytes(memoryview(data[:26]))
    if len(head) < 26 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR" or head[25] not in (4, 6):
        return False
    try:
        full = cv2.imdecode(data, cv2.IMREAD_UNCHANGED)
    except cv2.error:
        return False
    return full is not None and full.ndim == 3 and full.shape[2] in (2, 4) and not full[..., -1].any()


def file_too_large(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a file larger than :data:`MAX_IMAGE_FILE_BYTES`
    (False where it cannot be looked at: the reader names why)."""
    try:
        return os.stat(path).st_size > MAX_IMAGE_FILE_BYTES
    except (OSError, ValueError):
        return False


def _head(path: Path) -> bytes:
    """The first 32 bytes of a file, or b"" where it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read(32)
    except OSError:
        return b""


def _pattern_hint(name: str) -> str:
    """For a missing picture whose name holds ``*`` or ``?``: the
    shell passes a pattern that matched no file on as it stands
    (``photos/*.JPG`` where the files end in ``.jpg``), so say so; a pattern
    that does match files was not expanded by the shell (Windows' cmd and
    PowerShell pass it on as typed), so say that; else ""."""
    if _is_pattern(name):
        found = _glob(name)
        if found:
            return (f" (a pattern the shell did not expand, as Windows' cmd and PowerShell do not: it matches "
                    f"{len(found)} file{'s' if len(found) != 1 else ''}, e.g. {found[0]}; name one file)")
        return " (a pattern that matched no file: check the folder and the name's case, e.g. .jpg or .JPG)"
    return ""


def _is_pattern(name: str) -> bool:
    """Whether a name is a pattern: it holds ``*`` or ``?``.  Brackets alone
    are taken as part of a name (phones and cameras write ``IMG [1].jpg``,
    folders ``views [2024]``; a break-test's folder with brackets matched
    nothing as a pattern)."""
    return any(c in str(name) for c in "*?")


def _glob(pattern: str) -> list[str]:
    """The files ``pattern`` matches, sorted (Python's ``glob``, as a POSIX
    shell expands it: names starting with a dot only when the pattern's
    part does), its brackets taken literally (:func:`_is_pattern`)."""
    import glob

    try:
        return sorted(p for p in glob.glob(str(pattern).replace("[", "[[]")) if os.path.isfile(p))
    except (OSError, ValueError):
        return []


def expand_patterns(paths: list[str]) -> list[str]:
    """The picture names a command was given, with each name that is no file
    but a pattern (``*`` or ``?``; :func:`_is_pattern`) replaced by the files it matches,
    sorted: Windows' cmd and PowerShell pass ``photos\\*.jpg`` on as typed,
    where a POSIX shell expands it.  A pattern that matches nothing stays, so
    the reader names it (:func:`read_image`, "a pattern that matched no
    file").

    Args:
        paths: the names as given, in order.

    Returns:
        The names, each pattern expanded in place.
    """
    out: list[str] = []
    for p in paths:
        if _is_pattern(str(p)) and not os.path.exists(p):
            found = _glob(str(p))
            if found:
                out.extend(found)
                continue
        out.append(p)
    return out


def _format_hint(data) -> str:
    """For a picture OpenCV cannot decode: a hint when its bytes name a
    format a phone saves and OpenCV does not read (an iPhone's HEIC, or
    AVIF: an ISO ``ftyp`` box) or a video (MP4, MOV, AVI, MKV, WebM),
    else ""."""
    head = bytes(memoryview(data[:32]))
    if head[4:8] == b"ftyp" and head[8:12] in (b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1",
                                                b"avif", b"avis"):
        return " (a HEIC or AVIF photo: export it as JPEG, or set the phone's camera to \"Most Compatible\")"
    if head[4:8] == b"ftyp" and head[8:12] in (b"isom", b"iso2", b"mp41", b"mp42", b"avc1", b"qt  ", b"M4V ",
                                                b"3gp4", b"3gp5", b"3g2a", b"mmp4", b"dash"):
        return " (a video (MP4 or MOV): give photos, or frames saved from it as JPEG or PNG)"
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return " (a video (AVI): give photos, or frames saved from it as JPEG or PNG)"
    if head[:4] == b"\x1a\x45\xdf\xa3":          # EBML: Matroska and WebM (a break-test, session 54)
        return " (a video (MKV or WebM): give photos, or frames saved from it as JPEG or PNG)"
    if head[:5] == b"%PDF-":                    # (print-mat's own PDF, given as the photo: session 56)
        return " (a PDF document: give a photo, or export the page as PNG or JPEG)"
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
