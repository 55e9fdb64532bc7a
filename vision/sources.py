"""Frame sources for the referee: a folder of frames, a video file or a camera.

``open_source(spec)`` picks the kind from the spec: digits name a camera index,
a folder is read in name order (image files only, hidden ones skipped; digits
read as numbers: :func:`frame_order_key`), anything else is opened as
a video with OpenCV's VideoCapture (FFmpeg backend).  Errors are
:class:`BadInput` with one line; OpenCV's and FFmpeg's own log lines are kept
off the terminal (they would break the one-line error rule): while a source
is opened, by sending file descriptor 2 to /dev/null, and while a video is
decoded (on a background thread, while the referee writes its status line),
by FFmpeg's log level, which this module sets to quiet through
``OPENCV_FFMPEG_LOGLEVEL`` before OpenCV opens any video, unless that
variable is set already.

A video file that ends clearly before the frame count its container
declares is cut short (a copy that stopped, a recording whose writer died):
the frames read are yielded and then :class:`VideoCutShort` is raised
(:func:`cut_short`).

Frames are decoded on a background thread (OpenCV releases the GIL while it
decodes), a few frames ahead of the referee, so decoding and judging share
the two cores.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import queue
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

# FFmpeg's messages on a damaged video ("[mjpeg @ 0x...] overread 8") come
# from its decoding thread: quiet them at the source.  OpenCV reads the
# variable once, when its FFmpeg backend first opens a video (-8 is
# AV_LOG_QUIET); a value the user set is kept.
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from companion.errors import BadInput  # noqa: E402

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}
#: frames per second assumed for a folder of frames (and a video declaring
#: no usable rate).  A folder has no rate of its own, and the referee's
#: timings count frames: read too fast, a tile held off the board for a
#: second is never confirmed; read too slowly, a hand pausing over a tile
#: may be judged as a still board.  Measured (session 54, bench games judged
#: at a rate they were not taken at): frames taken at 10 a second read as
#: 30, 0 of 9 ledgers right (16 of 16 at 10), as 15, 8 of 8 from
#: vision.synth but 0 of 8 from the independent renderer; frames taken at
#: 30 a second read as 10, 16 of 20 right, as 15, 15 of 16.  The slowest
#: video rate loses least when it is wrong (it was 30 until then).
FOLDER_FPS = 10.0
MIN_FPS = 0.01           # the slowest frame rate given (a time-lapse of a frame every 100 s)
PREFETCH = 4             # frames decoded ahead
CUT_SHORT_FRAMES = 3     # a video is cut short when more than this many frames
CUT_SHORT_FRACTION = 0.05  # ... and more than this fraction of its declared count are missing


class VideoCutShort(BadInput):
    """A video file ended clearly before its container's declared frame
    count (:func:`cut_short`).  Exit code 2, like any unreadable input."""


class CameraLost(BadInput):
    """A camera stopped giving frames in the middle of a game (unplugged,
    or taken by another program): a live game ends with Ctrl+C, never by
    itself.  Exit code 2, like any unreadable input."""


CAMERA_RETRIES = 5       # failed reads in a row before a camera counts as lost
DAMAGED_RUN = 300        # a video's frames that fail to decode in a row, at most, read past as damaged
#: a video whose slowest and fastest stretches (10th and 90th percentiles of
#: the gaps between frames) differ by more than this factor has a variable
#: frame rate, and a note says so (:class:`_FrameClock`)
VARIABLE_RATE = 1.5


def cut_short(read: int, declared: int | None) -> bool:
    """Whether a video that gave ``read`` frames before it ended is cut
    short of the ``declared`` frame count its container states.

    Some containers only estimate the count (from the duration and the frame
    rate, for a file without a frame index), so a few frames' difference is
    not taken as a cut: the video is cut short only when more than
    :data:`CUT_SHORT_FRAMES` frames and more than :data:`CUT_SHORT_FRACTION`
    of the declared count are missing.  A source without a count (a camera,
    a stream) is never cut short.

    Args:
        read: frames decoded, 0 or more.
        declared: the container's frame count, or None / 0 when unknown.
    """
    if not declared or declared <= 0:
        return False
    missing = declared - read
    return missing > CUT_SHORT_FRAMES and missing > CUT_SHORT_FRACTION * declared


def decoder_refusal(exc: Exception) -> str:
    """The reason, in words, that OpenCV's image reader raised ``exc``
    (``cv2.error``): a header claiming more pixels than OpenCV is set to read
    (``OPENCV_IO_MAX_IMAGE_PIXELS`` in the environment when cv2 was loaded,
    as the command line sets it, else 2^30), or whatever else its assertion
    says."""
    import os
    text = str(exc)
    if "CV_IO_MAX_IMAGE_PIXELS" in text or "validateInputImageSize" in text:
        limit = os.environ.get("OPENCV_IO_MAX_IMAGE_PIXELS", "")
        most = f"{int(limit) / 1e6:g} million" if limit.isdigit() else "2^30"
        return f"its header claims a picture larger than the companion reads (at most {most} pixels): scale it down"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return "OpenCV cannot decode it (" + (lines[-1] if lines else "no reason given") + ")"


def max_frame_pixels() -> int:
    """The most pixels a frame may hold: OpenCV's image reader's limit,
    ``OPENCV_IO_MAX_IMAGE_PIXELS`` in the environment (the command line sets
    it to 100 million: :data:`companion.commands.images.MAX_IMAGE_PIXELS`),
    else OpenCV's own default, 2^30.  A folder's frames meet it in OpenCV's
    decoder; a video's are checked against it when it is opened
    (:func:`open_source`), as OpenCV's video reader has no such limit."""
    limit = os.environ.get("OPENCV_IO_MAX_IMAGE_PIXELS", "")
    return int(limit) if limit.isdigit() and int(limit) > 0 else 2 ** 30


def jpeg_complete(data: np.ndarray) -> bool:
    """Whether JPEG bytes end with the end-of-image marker ``FF D9`` (after
    any trailing padding): a file cut short lacks it.  ``cv2.imread`` fills
    the missing rows with grey and says so only through libjpeg's message
    on stderr, so a cut frame would be judged as a board half hidden."""
    tail = bytes(data[-64:].tobytes()).rstrip(b"\x00\r\n\t ")
    return tail.endswith(b"\xff\xd9")


def png_complete(data: np.ndarray) -> bool:
    """Whether PNG bytes end with the IEND chunk (``IEND`` and its CRC
    ``AE 42 60 82``, after any trailing padding): a file cut short lacks it,
    and libpng would say so on stderr itself, a second line beside ours."""
    tail = bytes(data[-64:].tobytes()).rstrip(b"\x00\r\n\t ")
    return tail.endswith(b"IEND\xaeB`\x82")


#: video files a folder of frames may hold by mistake (named in messages)
VIDEO_SUFFIXES = frozenset({".mp4", ".m4v", ".mov", ".avi", ".mkv", ".webm", ".mjpeg", ".mjpg", ".mpg", ".mpeg",
                            ".wmv", ".3gp", ".ts", ".mts"})

#: a phone's picture formats OpenCV does not read (named in messages)
HEIC_SUFFIXES = frozenset({".heic", ".heif", ".avif"})


def _frames_folder_inside(path: Path) -> Path | None:
    """The first folder (name order) right inside ``path`` that holds image
    frames, or None: a recording's folder given in place of its frames
    folder (``demo-v2`` for ``demo-v2/frames``)."""
    try:
        subs = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
        for sub in subs[:50]:
            if any(q.suffix.lower() in IMAGE_SUFFIXES and not q.name.startswith(".") for q in sub.iterdir()):
                return sub
    except OSError:
        pass
    return None


def _decode_frame(path: Path) -> np.ndarray | None:
    """One frame file as ``(H, W, 3) uint8`` BGR, or None where OpenCV
    cannot decode it.

    Raises:
        BadInput: a JPEG (starting with its marker ``FF D8``) or PNG cut
            short (:func:`jpeg_complete`,
            :func:`png_complete`), or a picture OpenCV refuses outright
            (:func:`decoder_refusal`).
    """
    try:
        data = np.fromfile(str(path), np.uint8)
    except OSError as exc:
        raise BadInput(f"cannot read frame {path}: {exc.strerror or exc}") from None
    if data.size == 0:
        raise BadInput(f"cannot read frame {path}: the file is empty (0 bytes)")
    if path.suffix.lower() in (".jpg", ".jpeg") and bytes(data[:2].tobytes()) == b"\xff\xd8" \
            and not jpeg_complete(data):      # (a file named .jpg that is no JPEG: said below)
        raise BadInput(f"cannot read frame {path}: the JPEG file is cut short (no end-of-image marker)")
    if path.suffix.lower() == ".png" and bytes(data[:8].tobytes()) == b"\x89PNG\r\n\x1a\n" and not png_complete(data):
        raise BadInput(f"cannot read frame {path}: the PNG file is cut short (no IEND chunk)")
    try:
        return cv2.imdecode(data, cv2.IMREAD_COLOR)
    except cv2.error as exc:
        raise BadInput(f"cannot read frame {path}: {decoder_refusal(exc)}") from None


@contextlib.contextmanager
def quiet_stderr():
    """Send file descriptor 2 to /dev/null for the block (OpenCV and FFmpeg
    write warnings there from C code; Python's ``sys.stderr`` is untouched)."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@dataclass
class FrameSource:
    """An opened source.

    Attributes:
        kind: ``"folder"``, ``"video"`` or ``"camera"``.
        name: what was asked for.
        length: number of frames when known (None for a camera).
        fps: frames per second the source claims (folder: :data:`FOLDER_FPS`
            unless given).
        fps_assumed: the rate is :data:`FOLDER_FPS` because none was given
            for a folder (which has no rate of its own), or for a video
            whose container declares no usable rate (:func:`declared_rate`);
            or the rate is the video's own but may be FFmpeg's guess, the
            video stating no frame count (a raw stream).
        fps_declared: the rate a video's container declares, frames per
            second as OpenCV reads it (0.0 when none, and for a folder or
            a camera).
        dropped: frames of a live camera skipped because the reader fell
            behind (:meth:`frames`); always 0 for a folder or a video file.
        damaged: the numbers of a video's frames that could not be decoded
            and were read past (:func:`_next_video_frame`), or of a folder's
            frame files that could not be read (cut short, empty, not an
            image: skipped, each keeping its number), once :meth:`frames`
            has read them.
        damaged_why: why the first of a folder's ``damaged`` frames could
            not be read (``"frame_00200.jpg: the JPEG file is cut short
            ..."``), else "".
        fps_from: the name of the JSON file in a folder whose ``"fps"``
            gave the rate (:func:`folder_rate`), else "".
        timed: a video's frames are numbered by their timestamps at
            :attr:`fps` (:meth:`_decode`): its own rate, not ``--fps``, and
            one its container declares with a frame count.
        rates: ``(slowest, fastest)`` frames per second between a timed
            video's frames, where they differ by more than
            :data:`VARIABLE_RATE` (a phone's variable frame rate), once
            :meth:`frames` has read them; else None.
        skipped: frames of a timed video left out because they came faster
            than :attr:`fps` (two in one frame's time).
        pixel_aspect: a video's pixel width over height (its sample aspect
            ratio, as the container gives it), 1.0 for square pixels: each
            frame is stretched to square pixels as a player shows it
            (:func:`square_pixels`).
    """

    kind: str
    name: str
    length: int | None
    fps: float
    _files: list[Path] | None = None
    fps_assumed: bool = False
    fps_declared: float = 0.0
    damaged: list[int] = field(default_factory=list)
    damaged_why: str = ""
    fps_from: str = ""
    _cap: "cv2.VideoCapture | None" = None
    _open: object = field(default=None, repr=False)
    dropped: int = 0
    timed: bool = False
    pixel_aspect: float = 1.0
    rates: tuple[float, float] | None = None
    skipped: int = 0
    _file_of: dict = field(default_factory=dict, repr=False)

    def file_frame(self, index: int) -> int:
        """The number in the file (0-based, in decoding order) of the frame
        yielded as ``index``: the same but for a timed video whose frames
        do not come at one rate (:meth:`_decode`)."""
        return self._file_of.get(index, index)

    def frames(self, prefetch: int = PREFETCH) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(index, frame)`` with frames as ``(H, W, 3)`` uint8 BGR,
        decoded ``prefetch`` frames ahead on a background thread (0: inline).

        A live camera does not wait for the reader: when ``prefetch`` frames
        are waiting, the oldest is dropped for the newest (counted in
        :attr:`dropped`), and indices go on counting every frame the camera
        gave, so an index stays a time (index / fps seconds).  Otherwise a
        reader slower than the camera (a 1080p camera at 60 frames a second
        on a 2-core machine) would read the table later and later, and the
        camera driver would drop frames unseen, its index no longer a time.

        Raises:
            BadInput: a frame file in the folder cannot be read, or its
                size differs from the first frame's.
            VideoCutShort: a video file ended clearly before the frame count
                its container declares (after its frames were yielded).
            CameraLost: a camera stopped giving frames (after its frames
                were yielded).
        """
        if prefetch <= 0:
            yield from self._decode()
            return
        q: queue.Queue = queue.Queue(maxsize=prefetch)
        stop = threading.Event()
        done = object()

        live = self.kind == "camera"

        def work() -> None:
            try:
                for item in self._decode():
                    if live:
                        while not stop.is_set():
                            try:
                                q.put_nowait(item)
                                break
                            except queue.Full:
                                try:
                                    q.get_nowait()      # the oldest waiting frame gives way
                                    self.dropped += 1
                                except queue.Empty:
                                    pass
                        if stop.is_set():
                            return
                        continue
                    while not stop.is_set():
                        try:
                            q.put(item, timeout=0.1)
                            break
                        except queue.Full:
                            continue
                    if stop.is_set():
                        return
                q.put(done)
            except BaseException as exc:  # handed to the consumer, raised there
                q.put(exc)

        th = threading.Thread(target=work, name="frame-decoder", daemon=True)
        th.start()
        try:
            while True:
                item = q.get()
                if item is done:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()
            th.join(timeout=2.0)

    def _decode(self) -> Iterator[tuple[int, np.ndarray]]:
        if self._files is not None:
            size = None
            first_refusal = None
            for i, path in enumerate(self._files):
                try:
                    if not path.is_file():      # (never opened: a pipe would wait for ever)
                        what = "a link to no file" if path.is_symlink() and not path.exists() else \
                            "a folder" if path.is_dir() else "not a regular file (a pipe or a device)"
                        raise BadInput(f"cannot read frame {path}: {what}")
                    img = _decode_frame(path)
                    if img is None:
                        raise BadInput(f"cannot read frame {path}: not an image OpenCV can decode")
                except BadInput as exc:
                    # one frame file cut short or damaged (a camera's write
                    # interrupted) is skipped, as a video's damaged frame is,
                    # and named in a note: it ended the whole game at that
                    # frame (a break-test, session 54); a folder with no
                    # readable frame at all still says why
                    first_refusal = first_refusal or exc
                    if not self.damaged:
                        self.damaged_why = str(exc).removeprefix("cannot read frame ")
                    self.damaged.append(i)
                    continue
                if size is None:
                    size = img.shape[:2]
                elif img.shape[:2] != size:
                    # one camera, one size: the pose, the settled boards and
                    # the evidence compare frames pixel for pixel; the
                    # first frame named, as it may be the odd one out (a
                    # cover picture sorting first, a break-test, session 50)
                    before = (f"the frame{'s' if i > 1 else ''} before it ({self._files[0].name}"
                              f"{' on' if i > 1 else ''}) {size[1]}x{size[0]}")
                    raise BadInput(f"frame {path} is {img.shape[1]}x{img.shape[0]} px, {before}: a game's "
                                   "frames come from one camera at one size")
                yield i, img
            if size is None and first_refusal is not None:
                raise first_refusal
            return
        cap = self._cap if self._cap is not None else self._open()
        self._cap = None
        i = 0
        clock = _FrameClock(self.fps) if self.timed else None
        try:
            while True:
                if self.kind == "video":
                    img, failed = _next_video_frame(cap, i, self.length)
                    if img is not None and failed:
                        self.damaged.extend(range(i, i + failed))
                        i += failed     # (a damaged frame keeps its number: the next ones keep theirs)
                else:
                    img = _read_frame(cap, CAMERA_RETRIES if self.kind == "camera" else 1)
                if img is None:
                    break
                if self.pixel_aspect != 1.0:
                    img = square_pixels(img, self.pixel_aspect)
                index = i if clock is None else clock.index(i, float(cap.get(cv2.CAP_PROP_POS_MSEC) or 0.0))
                if index is not None:
                    if index != i:
                        self._file_of[index] = i
                    yield index, img
                i += 1
        finally:
            cap.release()
            if clock is not None:
                self.skipped, self.rates = clock.skipped, clock.rates()
        if self.kind == "camera":
            # (a camera's game ends with Ctrl+C: an end of its frames is a
            # camera lost, not a game over; it was judged as a normal end)
            raise CameraLost(f"camera {self.name} stopped giving frames after {i} "
                             f"{'frame' if i == 1 else 'frames'} (unplugged, or taken by another program?)")
        if self.kind == "video" and cut_short(i, self.length) and container_whole(Path(self.name)) is not True:
            # (a file whose container is whole ends where it ends: its count
            # is an estimate from an audio track running longer (MKV, TS),
            # or counts frames an edit list hides (an MP4 trimmed with
            # ``ffmpeg -ss ... -c copy``): exit 2 "cut short" for whole files,
            # a break-test, session 57)
            raise VideoCutShort(f"video {self.name} is cut short: it ended after {i} of the "
                                f"{self.length} frames its container declares")


def container_whole(path: Path) -> bool | None:
    """Whether a video file's container says the file is whole: the
    top-level boxes of an MP4 or MOV (ISO/IEC 14496-12, 4.2), the chunks of
    an AVI's RIFF lists, or the top-level elements of a Matroska or WebM
    Segment (RFC 9559, 4-6), followed one after the other, end exactly at
    the file's end (a Segment's at its own end), and the file does not end
    in zeros.  False where one runs past it or the chain breaks (the file
    was cut, or holds something else past the cut), None where the
    container does not tell (an element of unknown size, a file ending in
    zeros: a copy whose space was taken before its bytes came) or the file
    cannot be read.  An MPEG transport stream, which has no sizes, is
    whole where it is a whole number of packets still in step at its end
    (:func:`_transport_whole`)."""
    import struct
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(12)
            if len(head) < 12:
                return None
            fh.seek(max(0, size - 64))
            if not any(fh.read(64)):
                return None                     # (a file padded with zeros to its size: a break-test, session 57)
            if head[:4] == b"\x1a\x45\xdf\xa3":
                return _matroska_whole(fh, size)
            if head[:4] == b"RIFF":
                return _riff_whole(fh, size)
            if head[4:8] in (b"ftyp", b"moov", b"mdat", b"free", b"wide", b"skip"):
                pos = 0
                while pos + 8 <= size:
                    fh.seek(pos)
                    n, kind = struct.unpack(">I4s", fh.read(8))
                    if n == 1:
                        n = struct.unpack(">Q", fh.read(8))[0]
                    elif n == 0:
                        return None             # (a box to the file's end: nothing to check it by)
                    if n < 8 or not _fourcc(kind):
                        return False
                    pos += n
                return pos == size
            for packet, sync in ((188, 0), (192, 4)):       # MPEG-TS, and M2TS's timestamped packets
                if head[sync] == 0x47:
                    return _transport_whole(fh, size, packet, sync)
    except (OSError, struct.error):
        return None
    return None


def _transport_whole(fh, size: int, packet: int, sync: int) -> bool | None:
    """:func:`container_whole` for an MPEG transport stream ``fh`` of
    ``packet``-byte packets whose sync byte (0x47, ISO/IEC 13818-1, 2.4.3.2)
    lies at ``sync``: whole where the file is a whole number of packets and
    its first and last ten packets start in step; None where the first do
    not (another format), False where the last do not (a copy stopped in
    the middle of a packet, or other bytes past a cut)."""
    def in_step(start: int) -> bool:
        fh.seek(start)
        block = fh.read(10 * packet)
        return len(block) == 10 * packet and all(block[k * packet + sync] == 0x47 for k in range(10))
    if size < 20 * packet or not in_step(0):
        return None
    return size % packet == 0 and in_step(size - 10 * packet)


def _fourcc(code: bytes) -> bool:
    """A box's or chunk's four-character code: printable ASCII (a cut
    file's zeros or another file's bytes are not)."""
    return len(code) == 4 and all(32 <= c < 127 for c in code)


def _riff_whole(fh, size: int) -> bool | None:
    """:func:`container_whole` for an AVI ``fh``: each RIFF (``AVI `` and
    OpenDML's ``AVIX``) and the chunks inside it, one after the other."""
    import struct
    pos = 0
    while pos + 12 <= size:
        fh.seek(pos)
        tag, n, form = struct.unpack("<4sI4s", fh.read(12))
        if tag != b"RIFF" or not _fourcc(form):
            return False
        end = pos + 8 + n
        if end > size + 1:
            return False
        inner = pos + 12
        while inner + 8 <= end:
            fh.seek(inner)
            ctag, m = struct.unpack("<4sI", fh.read(8))
            if not _fourcc(ctag):
                return False
            inner += 8 + m + (m & 1)
        if inner > end + 1:
            return False
        pos = end + (n & 1)
    return pos >= size


def _ebml_number(fh, keep_marker: bool) -> int | None:
    """One EBML variable-size integer read from ``fh`` (RFC 8794, 4): an
    element ID (``keep_marker``) or a data size; None for a size of all
    ones (unknown) or a malformed one."""
    first = fh.read(1)
    if not first:
        return None
    b = first[0]
    length = next((k for k in range(8) if b & (0x80 >> k)), None)
    if length is None:
        return None
    rest = fh.read(length)
    if len(rest) < length:
        return None
    value = b if keep_marker else b & (0xFF >> (length + 1))
    for c in rest:
        value = (value << 8) | c
    if not keep_marker and value == (1 << (7 * (length + 1))) - 1:
        return None
    return value


#: the elements a Matroska Segment holds at its top level (RFC 9559, 5.1):
#: SeekHead, Info, Tracks, Cluster, Cues, Attachments, Chapters, Tags, and
#: EBML's Void and CRC-32
MATROSKA_TOP = frozenset({0x114D9B74, 0x1549A966, 0x1654AE6B, 0x1F43B675, 0x1C53BB6B, 0x1941A469, 0x1043A770,
                          0x1254C367, 0xEC, 0xBF})


def _matroska_whole(fh, size: int) -> bool | None:
    """:func:`container_whole` for a Matroska or WebM file ``fh``: the
    EBML header, then the Segment's top-level elements one after the
    other to its end."""
    fh.seek(0)
    ident = _ebml_number(fh, True)
    n = _ebml_number(fh, False)
    if ident != 0x1A45DFA3 or n is None:
        return None
    fh.seek(n, 1)
    if _ebml_number(fh, True) != 0x18538067:
        return None
    n = _ebml_number(fh, False)
    if n is None:
        return None                 # (a Segment of unknown size: a live recording)
    start = fh.tell()
    end = start + n
    if end > size:
        return False
    pos = start
    while pos < end:
        fh.seek(pos)
        ident = _ebml_number(fh, True)
        m = _ebml_number(fh, False)
        if ident not in MATROSKA_TOP:
            return False
        if m is None:
            return None             # (an element of unknown size: a live recording's Cluster)
        pos = fh.tell() + m
    return pos == end


def square_pixels(img: np.ndarray, aspect: float) -> np.ndarray:
    """``img`` ``(H, W, 3)`` uint8 with pixels ``aspect`` times as wide as
    tall (an anamorphic video's sample aspect ratio) stretched to square
    ones, as a player shows it: widened where ``aspect`` > 1, made taller
    where < 1, so no pixel is lost (OpenCV's decoder gives the stored
    pixels: a break-test's video stored at 480 x 360 and shown at 640 x 360
    was read squeezed, and gave no event at all; session 57)."""
    h, w = img.shape[:2]
    size = (int(round(w * aspect)), h) if aspect > 1.0 else (w, int(round(h / aspect)))
    return cv2.resize(img, size, interpolation=cv2.INTER_LINEAR)


def _pixel_aspect(cap) -> float:
    """The opened video's sample aspect ratio (pixel width over height),
    1.0 where it gives none or one outside 1/4 to 4."""
    try:
        num = float(cap.get(cv2.CAP_PROP_SAR_NUM) or 0.0)
        den = float(cap.get(cv2.CAP_PROP_SAR_DEN) or 0.0)
    except cv2.error:
        return 1.0
    if num <= 0 or den <= 0 or not 0.25 <= num / den <= 4.0 or abs(num / den - 1.0) < 0.01:
        return 1.0
    return num / den


class _FrameClock:
    """Numbers a video's frames by their timestamps at its average rate
    ``fps``: frame ``k`` is the one shown ``k / fps`` seconds after the
    first, as FFmpeg's constant-rate output would number it (``-fps_mode
    cfr``).  A phone records at a variable rate (slower in dim light), and
    the referee's timings count frames at one rate: a break-test's video, 30
    s at 5 frames a second then 30 s at 30, read frame by frame at its
    average of 14.8, lost a penalty and an attempt, and every later claim
    went to the other player (session 57).  Numbered by time, a slow stretch
    leaves numbers out (as frames a live camera dropped) and a fast one
    gives two frames one number (the second is left out).  Timestamps that
    do not rise (a stream without them) number the frames one after the
    other from there on.  At a constant rate the numbers are the frames'
    own."""

    def __init__(self, fps: float) -> None:
        self.fps = float(fps)
        self.first: float | None = None
        self.base = 0
        self.last_ms: float | None = None
        self.last = -1
        self.plain = False           # timestamps gave out: one after the other
        self.skipped = 0
        self.slow = math.inf         # the longest and shortest gaps between frames, ms
        self.fast = 0.0
        self.gaps: list[float] = []

    def index(self, read: int, ms: float) -> int | None:
        """The number of the frame read as the file's ``read``-th (damaged
        frames counted), shown at ``ms`` milliseconds; None for a frame to
        leave out."""
        if not self.plain and self.last_ms is not None and not ms > self.last_ms:
            self.plain = True
        if self.plain or self.first is None:
            if self.first is None:
                self.first, self.base = ms, read     # (frames before it damaged: it keeps its number)
            k = self.last + 1 if self.last >= 0 else read
        else:
            self.gaps.append(ms - self.last_ms)
            k = self.base + int(round((ms - self.first) * self.fps / 1000.0))
            if k <= self.last:
                self.skipped += 1
                self.last_ms = ms
                return None
        self.last_ms = ms
        self.last = k
        return k

    def rates(self) -> tuple[float, float] | None:
        """``(slowest, fastest)`` frames per second between frames (the
        10th and 90th percentiles of the gaps), where they differ by more
        than :data:`VARIABLE_RATE`; else None."""
        if len(self.gaps) < 10:
            return None
        long_, short = np.percentile(self.gaps, [90, 10])
        if short <= 0 or long_ / short <= VARIABLE_RATE:
            return None
        return 1000.0 / long_, 1000.0 / short


def _next_video_frame(cap, at: int, declared: int | None) -> tuple[np.ndarray | None, int]:
    """The next frame of a video that decodes, read past frames that do
    not (a damaged packet in the middle of a file: OpenCV's read fails on
    it and gives the frame after it on the next read).

    A read that fails is taken as a damaged frame only while the container
    declares frames after it, and for at most :data:`DAMAGED_RUN` failures
    in a row: a file cut short fails on every read from its cut on, and a
    video without a frame count ends at its first failed read.  (Before,
    every video ended at its first failed read: a break-test's one damaged
    frame in the middle of a recording stopped the run there as "cut
    short", losing the 6 events after it.)

    Args:
        cap: an opened ``cv2.VideoCapture``.
        at: the number of the frame the next read gives (frames read and
            damaged frames so far).
        declared: the container's frame count, or None.

    Returns:
        ``(frame, failed)``: the frame, or None at the end, and the reads
        that failed before it (damaged frames when a frame came after them).
    """
    most = max(0, min(DAMAGED_RUN, declared - at - 1)) if declared else 0
    failed = 0
    while True:
        ok, img = cap.read()
        if ok and img is not None:
            return img, failed
        if failed >= most:
            return None, failed
        failed += 1


def _video_hint(path: Path) -> str:
    """For a video OpenCV cannot open: a hint when it is an MP4 or MOV
    (an ISO ``ftyp`` box first) whose top-level boxes hold no ``moov`` box,
    the index such a file is read by, which its writer adds when it
    finishes: a recording stopped before that (a phone that died, a copy
    cut short) has its frames but no index.  Else "" (an empty file, or
    one no box walk can tell about).

    Raises nothing: a file it cannot read gets no hint."""
    import struct
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(8)
            if len(head) < 8 or head[4:8] != b"ftyp":
                return ""
            if fh.read(4) in (b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1", b"avif", b"avis"):
                return " (a HEIC or AVIF photo, not a video: for one photo use companion recognize)"
            at = 0
            while at + 8 <= size:
                fh.seek(at)
                box = fh.read(16)
                n, kind = struct.unpack(">I4s", box[:8])
                if n == 1 and len(box) == 16:
                    n = struct.unpack(">Q", box[8:16])[0]
                if kind == b"moov":
                    # (its end cut off: a break-test, session 56, got no hint
                    # for an MP4 short of its last 2000 bytes)
                    return "" if n == 0 or at + n <= size else (
                        " (an MP4 whose index, the moov box at its end, is cut short: a copy or a download that "
                        "stopped before the end)")
                if n == 0:              # the last box, to the end of the file
                    break
                if n < 8:
                    return ""
                at += n
    except OSError:
        return ""
    return (" (an MP4 without its index, the moov box: a recording stopped before its file was finished, or a copy "
            "cut short)")


def _frame_size(cap) -> tuple[int, int]:
    """``(width, height)`` in pixels of an opened ``cv2.VideoCapture``'s
    frames as its container states them ((0, 0) when it states none)."""
    try:
        return (max(0, int(cap.get(cv2.CAP_PROP_FRAME_WIDTH) or 0)),
                max(0, int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT) or 0)))
    except (ValueError, OverflowError):       # (NaN or infinite)
        return 0, 0


def _read_frame(cap, tries: int = 1) -> np.ndarray | None:
    """The next frame of an opened ``cv2.VideoCapture``, or None when
    ``tries`` reads in a row give none (the end of a video; for a camera,
    a few dropped frames are read past: a USB camera's read can fail once
    and give the next frame)."""
    for _ in range(max(1, tries)):
        ok, img = cap.read()
        if ok and img is not None:
            return img
    return None


def _camera(index: int) -> FrameSource:
    if sys.platform.startswith("linux") and not Path(f"/dev/video{index}").exists():
        raise BadInput(f"camera {index} is not present (no /dev/video{index})")
    with quiet_stderr():
        cap = cv2.VideoCapture(index)
        opened = cap.isOpened()
        ok = opened and cap.read()[0]
    if not opened:
        raise BadInput(f"camera {index} is not present or cannot be opened")
    if not ok:
        cap.release()
        raise BadInput(f"camera {index} gives no frames")
    fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
    return FrameSource("camera", str(index), None, fps if 1.0 <= fps <= 240.0 else 30.0, _cap=cap)


#: JSON files beside the frames looked at for a rate, at most
RATE_FILES_MAX = 8
RATE_FILE_BYTES_MAX = 50_000_000


def folder_rate(folder: Path) -> tuple[float, str] | None:
    """The frame rate a folder of frames states for itself: a JSON file
    directly in it (name order, at most :data:`RATE_FILES_MAX` looked at)
    whose top level is an object with a number ``"fps"`` the referee can
    count with (:func:`declared_rate`), as the recordings of
    :func:`vision.synth.recording.write_recording` carry (``truth.json``
    beside their frames).  Returns ``(fps, file name)``, or None; files
    that cannot be read or parsed are passed over."""
    try:
        names = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".json" and p.is_file()
                       and not p.name.startswith("."))[:RATE_FILES_MAX]
    except OSError:
        return None
    for p in names:
        try:
            if p.stat().st_size > RATE_FILE_BYTES_MAX:
                continue
            obj = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        rate = obj.get("fps") if isinstance(obj, dict) else None
        if isinstance(rate, (int, float)) and not isinstance(rate, bool):
            usable = declared_rate(float(rate))
            if usable is not None:
                return usable, p.name
    return None


def declared_rate(own: float) -> float | None:
    """The frame rate a video's container declares, when it is one the
    referee can count with: :data:`MIN_FPS` (a time-lapse's frame every
    100 s) to 1000 frames per second, the range ``--fps`` takes; None for
    a missing or nonsensical rate (0, NaN, a time base read as a rate).

    A time-lapse recorded as a video may declare 0.5 or 0.2 frames a
    second: its rate counts (taken as 30 a second, as it then was, a
    break-test's 0.5 fps time-lapse of the demo lost all 11 events, the
    hands' timings counting 60 times too few seconds).

    Args:
        own: ``CAP_PROP_FPS`` as OpenCV reads it (frames per second).
    """
    own = float(own or 0.0)
    return own if MIN_FPS <= own <= 1000.0 else None


def frame_order_key(name: str) -> tuple:
    """The order of a folder's frames: by name, runs of digits read as
    numbers, so ``9.jpg`` comes before ``10.jpg`` (ffmpeg's ``%d.jpg``
    writes such names) and zero-padded names keep their order; names equal
    but for their padding (``01.jpg``, ``1.jpg``) in plain name order.

    Returns:
        A sort key: ``(parts, name)`` where ``parts`` alternates text and
        ``(0, number)`` tuples.
    """
    parts = tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.findall(r"[0-9]+|[^0-9]+", name)
                  if t.isascii())
    return parts, name


def _file_url_path(spec: str) -> str | None:
    """The local path a ``file:`` URL names (RFC 8089: ``file:///p``,
    ``file://localhost/p``, ``%20`` for a space), or None for anything
    else."""
    from urllib.parse import unquote, urlsplit
    try:
        url = urlsplit(spec)
    except ValueError:
        return None
    if url.scheme.lower() != "file" or url.netloc.lower() not in ("", "localhost") or not url.path:
        return None
    return unquote(url.path)


def open_source(spec: str, fps: float | None = None) -> FrameSource:
    """Open a folder of frames, a video file or a camera index.

    Args:
        spec: a camera index (digits), a folder, or a video file.
        fps: frames per second to assume (a folder has none of its own; a
            video's or camera's own rate is used when None).

    Raises:
        BadInput: missing path, empty folder, unreadable video, camera not present.
    """
    if fps is not None and not MIN_FPS <= fps <= 1000:
        # (12 digits: a rate just outside, 1000.0001 or 0.0099999, read "1000"
        # and "0.01" with :g, as if the range's own ends were refused)
        raise BadInput(f"bad frame rate {fps:.12g}: expected frames per second from {MIN_FPS:g} "
                       "(a frame every 100 s) to 1000")
    if spec.isascii() and spec.isdigit():        # ("²".isdigit() is true, int("²") fails)
        try:
            src = _camera(int(spec))
        except BadInput as exc:
            if os.path.lexists(spec):     # a video or folder named with digits alone, here
                raise BadInput(f"{exc}; {spec} is read as a camera index: for the "
                               f"{'folder' if os.path.isdir(spec) else 'file'} {spec} here, give ./{spec}") from None
            raise
        if fps:
            src.fps = float(fps)
        return src
    path = Path(spec)
    if not path.exists():
        if spec == "-":
            raise BadInput("source - (standard input) is not read: give a video file, a folder of frames or a "
                           "camera index")
        if re.fullmatch(r"-[0-9]+", spec):
            raise BadInput(f"source {spec} is no camera: camera indices are 0 or more (0 is the first camera)")
        local = _file_url_path(spec)
        if local is not None and Path(local).exists():
            raise BadInput(f"source {spec} is a file: address: give the file's path itself, {local}")
        if "://" in spec:
            raise BadInput(f"source {spec} is a network address: streams are not read directly; record the "
                           "stream to a video file first, or give a camera index")
        named = f"'{spec}'" if spec != spec.strip() else spec     # (a stray space shown)
        stray = f" (the name {'starts' if spec[:1].isspace() else 'ends'} with a space)" \
            if spec != spec.strip() and Path(spec.strip()).exists() else ""
        raise BadInput(f"source {named} does not exist{stray} (expected a folder of frames, a video file or a "
                       "camera index)")
    if path.is_dir():
        try:
            # (a frame's name that is no regular file, a link to no file or a
            # folder, keeps its number as a frame that cannot be read: left
            # out, every later event's frame was 1 too low, with no note; a
            # break-test, session 57)
            files = sorted((p for p in path.iterdir()
                            if p.suffix.lower() in IMAGE_SUFFIXES and not p.name.startswith(".")),
                           key=lambda p: frame_order_key(p.name))
        except OSError as exc:
            raise BadInput(f"cannot list folder {spec}: {exc.strerror}") from None
        if not files:
            try:
                names = sorted(p.name for p in path.iterdir() if not p.name.startswith(".") and p.is_file())
            except OSError:
                names = []
            heic = any(Path(n).suffix.lower() in HEIC_SUFFIXES for n in names)
            inner = _frames_folder_inside(path)
            videos = [n for n in names if Path(n).suffix.lower() in VIDEO_SUFFIXES]
            raise BadInput(f"folder {spec} holds no image frames ({', '.join(sorted(IMAGE_SUFFIXES))})"
                           + ("; its HEIC pictures cannot be read: export them as JPEG" if heic else "")
                           + (f"; it holds {'a video' if len(videos) == 1 else 'videos'}: give the video file "
                              f"itself, e.g. {path / videos[0]}" if videos else "")
                           + (f"; its folder {inner} holds frames: give that folder" if inner and not videos else ""))
        said = None if fps else folder_rate(path)
        if said is not None:
            return FrameSource("folder", spec, len(files), said[0], _files=files, fps_from=said[1])
        return FrameSource("folder", spec, len(files), float(fps or FOLDER_FPS), _files=files, fps_assumed=not fps)
    if not path.is_file():
        # a pipe would be read twice (the look at its first frame, then the
        # game) and a device never ends: a camera is given by its index
        raise BadInput(f"source {spec} is not a regular file (a pipe or a device): give a video file, a folder "
                       "of frames or a camera index")
    if not os.access(path, os.R_OK):
        raise BadInput(f"cannot read video {spec}: permission denied")
    try:
        spec.encode("utf-8")
    except UnicodeEncodeError:      # (OpenCV's VideoCapture crashes the process on such a name)
        raise BadInput(f"cannot open video {spec}: its name holds bytes that are not UTF-8, which OpenCV "
                       "cannot open; rename the file") from None

    def opener() -> "cv2.VideoCapture":
        with quiet_stderr():
            return cv2.VideoCapture(str(path))

    with quiet_stderr():
        cap = cv2.VideoCapture(str(path))
        opened = cap.isOpened()
        size = _frame_size(cap) if opened else (0, 0)
        too_large = size[0] * size[1] > max_frame_pixels()
        n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0) if opened else 0
        # (a damaged first frame is read past, as in the game: frames() sees it again)
        ok = opened and not too_large and _next_video_frame(cap, 0, n if n > 0 else None)[0] is not None
        own = float(cap.get(cv2.CAP_PROP_FPS) or 0.0) if opened else 0.0
        aspect = _pixel_aspect(cap) if opened else 1.0
        cap.release()
    if not opened:
        raise BadInput(f"cannot open video {spec}: not a video file OpenCV can read" + _video_hint(path))
    if too_large:
        # (a break-test's 3 frames of 12000 x 9000 px took 41 s and 3.2 GB
        # to find no mat; a photo that large is refused from its header)
        raise BadInput(f"cannot read video {spec}: its frames are {size[0]}x{size[1]} px, more than the companion "
                       f"reads (at most {max_frame_pixels() / 1e6:g} million pixels a frame): scale it down")
    if not ok:
        raise BadInput(f"cannot read video {spec}: no frame could be decoded")
    usable = declared_rate(own)
    rate = float(fps) if fps else (usable if usable is not None else FOLDER_FPS)
    # a stream without a frame count (raw MJPEG or H.264 from a camera, no
    # container) has no rate of its own either: FFmpeg gives 25, a guess (a
    # break-test's raw 10 fps stream was judged at 25, silently: its two
    # penalties and its attempt lost, every claim given to one player)
    assumed = not fps and (usable is None or n <= 0)
    return FrameSource("video", spec, n if n > 0 else None, rate, _open=opener,
                       fps_assumed=assumed, fps_declared=own if own == own else 0.0, timed=not fps and not assumed,
                       pixel_aspect=aspect)
