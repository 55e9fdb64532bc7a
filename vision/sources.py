"""Frame sources for the referee: a folder of frames, a video file or a camera.

``open_source(spec)`` picks the kind from the spec: digits name a camera index,
a folder is read in name order (image files only), anything else is opened as
a video with OpenCV's VideoCapture.  Errors are :class:`BadInput` with one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import cv2
import numpy as np

from companion.errors import BadInput

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}


@dataclass
class FrameSource:
    """An opened source.

    Attributes:
        kind: ``"folder"``, ``"video"`` or ``"camera"``.
        name: what was asked for.
        length: number of frames when known (None for a camera).
        fps: frames per second the source claims (folder: 30 by convention).
    """

    kind: str
    name: str
    length: int | None
    fps: float
    _files: list[Path] | None = None
    _cap: "cv2.VideoCapture | None" = None

    def frames(self) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(index, frame)`` with frames as (H, W, 3) uint8 BGR.

        Raises:
            BadInput: a frame file in the folder cannot be read.
        """
        if self._files is not None:
            for i, path in enumerate(self._files):
                img = cv2.imread(str(path), cv2.IMREAD_COLOR)
                if img is None:
                    raise BadInput(f"cannot read frame {path}")
                yield i, img
            return
        cap = self._cap
        i = 0
        try:
            while True:
                ok, img = cap.read()
                if not ok:
                    break
                yield i, img
                i += 1
        finally:
            cap.release()


def open_source(spec: str) -> FrameSource:
    """Open a folder of frames, a video file or a camera index.

    Raises:
        BadInput: missing path, empty folder, unreadable video, camera not present.
    """
    if spec.isdigit():
        cap = cv2.VideoCapture(int(spec))
        if not cap.isOpened():
            raise BadInput(f"camera {spec} is not present or cannot be opened")
        ok, _ = cap.read()
        if not ok:
            cap.release()
            raise BadInput(f"camera {spec} gives no frames")
        return FrameSource("camera", spec, None, float(cap.get(cv2.CAP_PROP_FPS) or 30.0), _cap=cap)
    path = Path(spec)
    if not path.exists():
        raise BadInput(f"source {spec} does not exist")
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
        if not files:
            raise BadInput(f"folder {spec} holds no image frames")
        return FrameSource("folder", spec, len(files), 30.0, _files=files)
    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        raise BadInput(f"cannot open video {spec}: not a readable video file")
    n = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
    fps = float(cap.get(cv2.CAP_PROP_FPS) or 30.0)
    ok, _ = cap.read()
    cap.release()
    if not ok:
        raise BadInput(f"cannot read video {spec}: no frames decoded")
    cap = cv2.VideoCapture(str(path))  # reopened: seeking back is unreliable for some codecs
    return FrameSource("video", spec, n if n > 0 else None, fps, _cap=cap)
